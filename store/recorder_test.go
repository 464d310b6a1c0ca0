package store

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// decodeAll decodes the chunks of one series and level, in order.
func decodeAll(t *testing.T, chunks []Chunk, idx, level int) ([]int64, []float64) {
	t.Helper()
	var ts []int64
	var vs []float64
	for _, c := range chunks {
		if c.Series != idx || c.Level != level {
			continue
		}
		start := len(ts)
		var err error
		ts, vs, err = decodeChunk(c.Data, ts, vs)
		if err != nil {
			t.Fatal(err)
		}
		if got := ts[start:]; len(got) != c.N || slices.Min(got) != c.T0 || slices.Max(got) != c.T1 {
			t.Fatalf("chunk N %d T0 %d T1 %d, points %d from %d to %d", c.N, c.T0, c.T1, len(got), slices.Min(got), slices.Max(got))
		}
	}
	return ts, vs
}

// decimate is the direct computation of level 1: bucket starts and the mean
// or max of each bucket's values.
func decimate(ts []int64, vs []float64, bucketPS int64, agg Agg) ([]int64, []float64) {
	var bt []int64
	var bv []float64
	for i := 0; i < len(ts); {
		b := ts[i] / bucketPS
		if ts[i]%bucketPS != 0 && ts[i] < 0 {
			b--
		}
		j := i + 1
		sum, mx := vs[i], vs[i]
		for j < len(ts) && ts[j] >= b*bucketPS && ts[j] < (b+1)*bucketPS {
			sum += vs[j]
			mx = math.Max(mx, vs[j])
			j++
		}
		v := mx
		if agg == AggMean {
			v = sum / float64(j-i)
		}
		bt, bv = append(bt, b*bucketPS), append(bv, v)
		i = j
	}
	return bt, bv
}

func sameBits(a, b []float64) bool {
	return slices.EqualFunc(a, b, func(x, y float64) bool { return math.Float64bits(x) == math.Float64bits(y) })
}

func TestRecorderLevels(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	tests := []struct {
		name     string
		bucketPS int64
		agg      Agg
		times    func(i int) int64
		value    func(i int) float64
	}{
		{"mean, regular", 100, AggMean, func(i int) int64 { return int64(i) * 10 }, func(int) float64 { return rng.NormFloat64() }},
		{"max, regular", 100, AggMax, func(i int) int64 { return int64(i) * 10 }, func(int) float64 { return float64(rng.IntN(1000)) }},
		{"mean, irregular with gaps", 1000, AggMean, func(i int) int64 { return int64(i)*37 + int64(i/50)*5000 }, func(int) float64 { return rng.Float64() }},
		{"max, negative times", 64, AggMax, func(i int) int64 { return int64(i)*7 - 5000 }, func(int) float64 { return -rng.Float64() }},
		{"max with -0 and +0", 3, AggMax, func(i int) int64 { return int64(i) }, func(i int) float64 { return []float64{math.Copysign(0, -1), 0}[rng.IntN(2)] }},
		{"mean with Inf", 50, AggMean, func(i int) int64 { return int64(i) * 5 }, func(i int) float64 {
			if i%97 == 0 {
				return math.Inf(1)
			}
			return float64(i)
		}},
		{"bucket width 0 is 1", 0, AggMean, func(i int) int64 { return int64(i / 3) }, func(i int) float64 { return float64(i) }},
		{"one bucket", 1 << 62, AggMean, func(i int) int64 { return int64(i) * 1e9 }, func(i int) float64 { return float64(i % 10) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			const n = 10_000
			ts, vs := make([]int64, n), make([]float64, n)
			for i := range n {
				ts[i], vs[i] = tt.times(i), tt.value(i)
			}
			rec := NewRecorder(tt.bucketPS)
			other := rec.Series("other", "x", AggMax)
			idx := rec.Series("m", "e", tt.agg)
			if idx != 1 || other != 0 {
				t.Fatalf("indexes %d %d", other, idx)
			}
			var chunks []Chunk
			for i := range n {
				rec.Add(idx, ts[i], vs[i])
				if i%3000 == 2999 {
					chunks = append(chunks, rec.Flush(false)...)
				}
			}
			chunks = append(chunks, rec.Flush(true)...)
			gt, gv := decodeAll(t, chunks, idx, 0)
			if !slices.Equal(gt, ts) || !sameBits(gv, vs) {
				t.Error("level 0 is not every point")
			}
			bw := max(tt.bucketPS, 1)
			wt, wv := decimate(ts, vs, bw, tt.agg)
			gt, gv = decodeAll(t, chunks, idx, 1)
			if !slices.Equal(gt, wt) || !sameBits(gv, wv) {
				t.Errorf("level 1: %d points, want %d", len(gt), len(wt))
				for i := range min(len(gt), len(wt)) {
					if gt[i] != wt[i] || math.Float64bits(gv[i]) != math.Float64bits(wv[i]) {
						t.Fatalf("point %d: (%d, %v), want (%d, %v)", i, gt[i], gv[i], wt[i], wv[i])
					}
				}
			}
			for _, c := range chunks {
				if c.Series != idx || c.Metric != "m" || c.Entity != "e" {
					t.Fatalf("chunk of series %d %s %s", c.Series, c.Metric, c.Entity)
				}
			}
		})
	}
}

func TestRecorderChunkSplitting(t *testing.T) {
	rec := NewRecorder(1 << 40)
	a := rec.Series("m", "a", AggMean)
	b := rec.Series("m", "b", AggMean)
	for i := range 10_000 {
		rec.Add(a, int64(i), float64(i))
		if i < 4096 {
			rec.Add(b, int64(i), 1)
		}
	}
	if rec.Pending() != 14096 {
		t.Errorf("pending %d", rec.Pending())
	}
	chunks := rec.Flush(false)
	if rec.Pending() != 0 {
		t.Errorf("pending %d after a flush", rec.Pending())
	}
	type shape struct{ series, level, n int }
	var got []shape
	for _, c := range chunks {
		got = append(got, shape{c.Series, c.Level, c.N})
	}
	want := []shape{{a, 0, 4096}, {a, 0, 4096}, {a, 0, 1808}, {b, 0, 4096}}
	if !slices.Equal(got, want) {
		t.Errorf("chunks %v, want %v", got, want)
	}
	ts, _ := decodeAll(t, chunks, a, 0)
	if len(ts) != 10_000 || ts[4096] != 4096 || chunks[1].T0 != 4096 || chunks[1].T1 != 8191 {
		t.Error("split chunks do not continue each other")
	}
	if more := rec.Flush(false); len(more) != 0 {
		t.Errorf("a flush with nothing new gave %d chunks", len(more))
	}
	// The open buckets close on the final flush: one point each.
	final := rec.Flush(true)
	if len(final) != 2 || final[0].Level != 1 || final[0].N != 1 || final[1].N != 1 {
		t.Errorf("final flush %+v", final)
	}
	// The chunks own their data: later flushes do not change it.
	keep := slices.Clone(chunks[0].Data)
	for i := range 5000 {
		rec.Add(a, 20_000+int64(i), -1)
	}
	rec.Flush(true)
	if !slices.Equal(keep, chunks[0].Data) {
		t.Error("a later flush changed an earlier chunk's data")
	}
	// Unknown series are ignored.
	rec.Add(-1, 0, 0)
	rec.Add(99, 0, 0)
	if rec.Pending() != 0 {
		t.Error("points of unknown series were kept")
	}
}

func TestRecorderSeriesIndex(t *testing.T) {
	rec := NewRecorder(10)
	for i, c := range []struct {
		metric, entity string
		want           int
	}{{"q", "p0", 0}, {"q", "p1", 1}, {"t", "p0", 2}, {"q", "p0", 0}, {"t", "p0", 2}, {"q\x00p", "0", 3}, {"q", "\x00p0", 4}} {
		if got := rec.Series(c.metric, c.entity, AggMean); got != c.want {
			t.Errorf("call %d: Series(%q, %q) = %d, want %d", i, c.metric, c.entity, got, c.want)
		}
	}
}

func TestRecorderOnPoint(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const bucket = 1000
	rec := NewRecorder(bucket)
	type point struct {
		t int64
		v float64
	}
	got := map[int][]point{}
	var order []int // series index of each call
	rec.SetOnPoint(func(idx int, tPS int64, v float64) {
		got[idx] = append(got[idx], point{tPS, v})
		order = append(order, idx)
	})
	const nSeries = 5
	var ts [nSeries][]int64
	var vs [nSeries][]float64
	for s := range nSeries {
		rec.Series("m", string(rune('a'+s)), Agg(s%2))
	}
	var chunks []Chunk
	tt := int64(0)
	for step := range 3000 {
		tt += rng.Int64N(300)
		s := rng.IntN(nSeries)
		v := rng.Float64()
		before := len(order)
		rec.Add(s, tt, v)
		// A point of a later bucket finalises exactly the previous one.
		want := 0
		if len(ts[s]) > 0 && ts[s][len(ts[s])-1]/bucket != tt/bucket {
			want = 1
		}
		if closed := len(order) - before; closed != want {
			t.Fatalf("step %d: %d points finalised, want %d", step, closed, want)
		}
		ts[s], vs[s] = append(ts[s], tt), append(vs[s], v)
		if step%700 == 0 {
			n := len(order)
			chunks = append(chunks, rec.Flush(false)...)
			if len(order) != n {
				t.Fatal("Flush(false) finalised a bucket")
			}
		}
	}
	chunks = append(chunks, rec.Flush(true)...)
	total := 0
	for s := range nSeries {
		wt, wv := decimate(ts[s], vs[s], bucket, Agg(s%2))
		var gt []int64
		var gv []float64
		for _, p := range got[s] {
			gt, gv = append(gt, p.t), append(gv, p.v)
		}
		if !slices.Equal(gt, wt) || !sameBits(gv, wv) {
			t.Errorf("series %d: OnPoint got %d points, want %d (one per bucket, in order)", s, len(gt), len(wt))
		}
		ct, cv := decodeAll(t, chunks, s, 1)
		if !slices.Equal(ct, wt) || !sameBits(cv, wv) {
			t.Errorf("series %d: level-1 chunks differ from the OnPoint calls", s)
		}
		total += len(wt)
	}
	if len(order) != total {
		t.Errorf("%d calls, want %d", len(order), total)
	}
	// Nothing is left open: another final flush calls nothing.
	n := len(order)
	rec.Flush(true)
	if len(order) != n {
		t.Error("a second Flush(true) finalised buckets again")
	}
}
