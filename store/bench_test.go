package store

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkAppendSeries measures points a second through Recorder.Add,
// Recorder.Flush and AppendSeries, flushing every ~50 k points, on the
// fat-tree workload (pre-generated, so its generation is not measured).
// One op is one flush.
func BenchmarkAppendSeries(b *testing.B) {
	ctx := context.Background()
	db := openTest(b)
	sc := putScenario(b, db, "fat-tree", `{}`)
	c := captureSynth(1, 2000)
	const bucketPS = 2 * synthInterval
	var (
		run  *Run
		rec  *Recorder
		next int // next sample to replay
		runs int
	)
	newRun := func() {
		runs++
		run = createRun(b, db, sc, runs, func(r *Run) { r.BucketPS = bucketPS })
		rec = NewRecorder(bucketPS)
		for i, k := range c.names {
			rec.Series(k.metric, k.entity, c.aggs[i])
		}
		next = 0
	}
	newRun()
	points := 0
	b.ResetTimer()
	for range b.N {
		if next == len(c.samples) {
			b.StopTimer()
			if err := db.FinishRun(ctx, run.ID, Finish{Status: StatusDone, Chunks: rec.Flush(true)}); err != nil {
				b.Fatal(err)
			}
			newRun()
			b.StartTimer()
		}
		for next < len(c.samples) && rec.Pending() < 50_000 {
			s := c.samples[next]
			rec.Add(int(s.idx), s.t, s.v)
			next++
		}
		points += rec.Pending()
		if err := db.AppendSeries(ctx, run.ID, rec.Flush(false), Progress{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(points)/b.Elapsed().Seconds(), "points/s")
	b.ReportMetric(float64(points)/float64(b.N), "points/op")
}

// BenchmarkSeriesRead measures reading a whole chart of a stored 10 ms
// fat-tree run (flushed every ~50 k points): every series at level 1, then
// at level 0, of a finished run (compacted chunks) and of a live one.
func BenchmarkSeriesRead(b *testing.B) {
	ctx := context.Background()
	db := openTest(b)
	sc := putScenario(b, db, "fat-tree", `{}`)
	const bucketPS = 2 * synthInterval
	c := captureSynth(2, 1000)
	var ids [2]string
	for k, state := range []string{"finished", "live"} {
		run := createRun(b, db, sc, k, func(r *Run) { r.BucketPS = bucketPS })
		ids[k] = run.ID
		rec := NewRecorder(bucketPS)
		for i, k := range c.names {
			rec.Series(k.metric, k.entity, c.aggs[i])
		}
		for _, s := range c.samples {
			rec.Add(int(s.idx), s.t, s.v)
			if rec.Pending() >= 50_000 {
				if err := db.AppendSeries(ctx, run.ID, rec.Flush(false), Progress{}); err != nil {
					b.Fatal(err)
				}
			}
		}
		chunks := rec.Flush(true)
		var err error
		if state == "finished" {
			err = db.FinishRun(ctx, run.ID, Finish{Status: StatusDone, Chunks: chunks})
		} else {
			err = db.AppendSeries(ctx, run.ID, chunks, Progress{})
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	for k, state := range []string{"finished", "live"} {
		for _, level := range []int{1, 0} {
			b.Run(fmt.Sprintf("%s/level%d", state, level), func(b *testing.B) {
				points := 0
				for range b.N {
					ss, err := db.Series(ctx, ids[k], SeriesQuery{Level: level})
					if err != nil {
						b.Fatal(err)
					}
					points = 0
					for _, s := range ss {
						points += len(s.T)
					}
				}
				b.ReportMetric(float64(points), "points")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(points), "ns/point")
			})
		}
	}
}

// BenchmarkDecodeChunk measures decoding alone: 1 M points of the
// fat-tree workload in full chunks.
func BenchmarkDecodeChunk(b *testing.B) {
	c := captureSynth(3, 1000)
	rec := NewRecorder(1 << 62)
	for i, k := range c.names {
		rec.Series(k.metric, k.entity, c.aggs[i])
	}
	for _, s := range c.samples {
		rec.Add(int(s.idx), s.t, s.v)
	}
	var chunks []Chunk
	points := 0
	for _, ch := range rec.Flush(false) {
		if ch.Level == 0 {
			chunks = append(chunks, ch)
			points += ch.N
		}
	}
	ts, vs := make([]int64, 0, points), make([]float64, 0, points)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		ts, vs = ts[:0], vs[:0]
		for _, ch := range chunks {
			var err error
			if ts, vs, err = decodeChunk(ch.Data, ts, vs); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N)/float64(points), "ns/point")
	b.ReportMetric(float64(points), "points")
}
