package store

import (
	"context"
	"math"
	"slices"
	"testing"
	"time"
)

// levelStats counts the points and encoded bytes of chunks.
type levelStats struct {
	points, bytes, chunks int
}

func (s levelStats) perPoint() float64 { return float64(s.bytes) / float64(max(s.points, 1)) }

// TestSizeFatTree stores 20 ms of a 16-host fat-tree's telemetry (288 ports
// x 2 metrics, 700 flows x 3 metrics, every 10 µs) through a Recorder and
// AppendSeries every ~50 k points, as the server does, and checks the bytes
// a point takes and the database's size.
func TestSizeFatTree(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	sc := putScenario(t, db, "fat-tree", `{"topology":"fattree"}`)
	const ticks = 2000                 // 20 ms
	const bucketPS = 2 * synthInterval // what the server picks for 20 ms
	run := createRun(t, db, sc, 1, func(r *Run) { r.BucketPS = bucketPS })
	syn := newSynth(42, 288, 700, ticks)
	rec := NewRecorder(bucketPS)

	stats := map[string]*[2]levelStats{} // metric -> by level
	var sum [2]levelStats
	// check: per series, the number of points and a hash of them.
	type check struct {
		n    int
		hash uint64
	}
	var want []check
	tally := func(chunks []Chunk) {
		for _, c := range chunks {
			st := stats[c.Metric]
			if st == nil {
				st = new([2]levelStats)
				stats[c.Metric] = st
			}
			for _, s := range []*levelStats{&st[c.Level], &sum[c.Level]} {
				s.points += c.N
				s.bytes += len(c.Data)
				s.chunks++
			}
			if c.Level == 0 {
				for len(want) <= c.Series {
					want = append(want, check{})
				}
				ts, vs, err := decodeChunk(c.Data, nil, nil)
				if err != nil {
					t.Fatal(err)
				}
				w := &want[c.Series]
				for i := range ts {
					w.n++
					w.hash = w.hash*31 + uint64(ts[i]) ^ math.Float64bits(vs[i])
				}
			}
		}
	}
	points, flushes := 0, 0
	for range ticks {
		points += syn.step(rec)
		if rec.Pending() >= 50_000 {
			chunks := rec.Flush(false)
			tally(chunks)
			if err := db.AppendSeries(ctx, run.ID, chunks, Progress{}); err != nil {
				t.Fatal(err)
			}
			flushes++
		}
	}
	chunks := rec.Flush(true)
	tally(chunks)
	before, err := db.SizeBytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := db.FinishRun(ctx, run.ID, Finish{Status: StatusDone, Chunks: chunks, Summary: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	t.Logf("FinishRun (with compaction) took %v; size %.2f MB before it", time.Since(start), float64(before)/1e6)
	if sum[0].points != points {
		t.Fatalf("level 0 has %d points, %d were added", sum[0].points, points)
	}

	size, err := db.SizeBytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	metrics := make([]string, 0, len(stats))
	for m := range stats {
		metrics = append(metrics, m)
	}
	slices.Sort(metrics)
	for _, m := range metrics {
		st := stats[m]
		t.Logf("%-15s level 0: %8d points %5.2f bytes/point; level 1: %7d points %5.2f bytes/point",
			m, st[0].points, st[0].perPoint(), st[1].points, st[1].perPoint())
	}
	t.Logf("all             level 0: %8d points %5.2f bytes/point in %d chunks; level 1: %7d points %5.2f bytes/point in %d chunks",
		sum[0].points, sum[0].perPoint(), sum[0].chunks, sum[1].points, sum[1].perPoint(), sum[1].chunks)
	t.Logf("%d flushes; database %.2f MB: %.2f bytes per level-0 point, %.2f per point of both levels",
		flushes, float64(size)/1e6, float64(size)/float64(sum[0].points), float64(size)/float64(sum[0].points+sum[1].points))
	logTableSizes(t, db)

	if size > 25e6 {
		t.Errorf("database %d bytes, want at most 25 MB", size)
	}
	for _, c := range []struct {
		metric string
		max    float64
	}{{"queue_bytes", 4}, {"pfc_pause", 1}, {"throughput_bps", 4}, {"rate_bps", 4}, {"cwnd_bytes", 4}} {
		if bpp := stats[c.metric][0].perPoint(); bpp > c.max {
			t.Errorf("%s: %.2f bytes/point at level 0, want at most %.1f", c.metric, bpp, c.max)
		}
	}
	if bpp := float64(size) / float64(sum[0].points); bpp > 8 {
		t.Errorf("%.2f database bytes per point, want at most 8", bpp)
	}

	// Everything reads back.
	ss, err := db.Series(ctx, run.ID, SeriesQuery{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ss) != len(want) {
		t.Fatalf("%d series read, %d written", len(ss), len(want))
	}
	for i, s := range ss {
		var h uint64
		for k := range s.T {
			h = h*31 + uint64(s.T[k]) ^ math.Float64bits(s.V[k])
		}
		if s.Index != i || len(s.T) != want[i].n || h != want[i].hash {
			t.Fatalf("series %d (%s %s) reads back %d points, %d were written, or different ones", i, s.Metric, s.Entity, len(s.T), want[i].n)
		}
	}
}

// logTableSizes logs the bytes of each table and index (dbstat).
func logTableSizes(t testing.TB, db *DB) {
	rows, err := db.sql.Query(`SELECT name, sum(pgsize), sum(payload), sum(ncell) FROM dbstat GROUP BY name ORDER BY 2 DESC`)
	if err != nil {
		t.Logf("dbstat: %v", err)
		return
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var size, payload, cells int64
		if err := rows.Scan(&name, &size, &payload, &cells); err != nil {
			t.Fatal(err)
		}
		if size >= 100_000 {
			t.Logf("  %-18s %6.2f MB in pages, %6.2f MB payload, %d cells", name, float64(size)/1e6, float64(payload)/1e6, cells)
		}
	}
}
