package store

import (
	"math"
	"math/rand/v2"
	"testing"
)

// nan returns the NaN with the given bits.
func nan(b uint64) float64 { return math.Float64frombits(b) }

// checkRoundTrip encodes and decodes the points and requires the exact
// times and value bits back.
func checkRoundTrip(t *testing.T, ts []int64, vs []float64) []byte {
	t.Helper()
	prefix := []byte("prefix")
	data := appendChunk(prefix, ts, vs)[len(prefix):]
	gt, gv, err := decodeChunk(data, nil, nil)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	if len(gt) != len(ts) || len(gv) != len(vs) {
		t.Fatalf("decoded %d/%d points, want %d", len(gt), len(gv), len(ts))
	}
	for i := range ts {
		if gt[i] != ts[i] || math.Float64bits(gv[i]) != math.Float64bits(vs[i]) {
			t.Fatalf("point %d: (%d, %x), want (%d, %x)", i, gt[i], math.Float64bits(gv[i]), ts[i], math.Float64bits(vs[i]))
		}
	}
	// Appending to existing slices keeps what they had.
	gt, gv, err = decodeChunk(data, []int64{42}, []float64{-1})
	if err != nil || len(gt) != len(ts)+1 || gt[0] != 42 || gv[0] != -1 {
		t.Fatalf("decode appending: %v", err)
	}
	return data
}

func TestChunkRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	regular := func(n int, v func(i int) float64) ([]int64, []float64) {
		ts, vs := make([]int64, n), make([]float64, n)
		for i := range n {
			ts[i], vs[i] = 5_000_000+int64(i)*10_000_000, v(i)
		}
		return ts, vs
	}
	special := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(),
		nan(0x7FF0000000000001), nan(0xFFF8000000000ABC), nan(0x7FF7FFFFFFFFFFFF), nan(0xFFFFFFFFFFFFFFFF),
		math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 1, -1, 1e-300}
	tests := []struct {
		name string
		gen  func() ([]int64, []float64)
	}{
		{"single point", func() ([]int64, []float64) { return []int64{123}, []float64{4.5} }},
		{"single zero at time zero", func() ([]int64, []float64) { return []int64{0}, []float64{0} }},
		{"single NaN at MinInt64", func() ([]int64, []float64) { return []int64{math.MinInt64}, []float64{nan(0x7FF4000000000001)} }},
		{"constant", func() ([]int64, []float64) { return regular(1000, func(int) float64 { return 7 }) }},
		{"all zero", func() ([]int64, []float64) { return regular(1000, func(int) float64 { return 0 }) }},
		{"random walk of integers", func() ([]int64, []float64) {
			q := 0.0
			return regular(4096, func(int) float64 { q = math.Max(0, q+float64(rng.IntN(21)-10)*1048); return q })
		}},
		{"random bits", func() ([]int64, []float64) {
			return regular(3000, func(int) float64 { return math.Float64frombits(rng.Uint64()) })
		}},
		{"random floats", func() ([]int64, []float64) {
			return regular(3000, func(int) float64 { return rng.NormFloat64() * 1e9 })
		}},
		{"special values in turn", func() ([]int64, []float64) {
			return regular(300, func(i int) float64 { return special[i%len(special)] })
		}},
		{"special values at random", func() ([]int64, []float64) {
			return regular(1000, func(int) float64 { return special[rng.IntN(len(special))] })
		}},
		{"equal times", func() ([]int64, []float64) {
			ts, vs := regular(500, func(i int) float64 { return float64(i) })
			for i := range ts {
				ts[i] = 77
			}
			return ts, vs
		}},
		{"huge time jumps", func() ([]int64, []float64) {
			ts := []int64{math.MinInt64, math.MinInt64, -1, 0, 0, 1, math.MaxInt64 / 2, math.MaxInt64 - 1, math.MaxInt64, math.MaxInt64}
			vs := make([]float64, len(ts))
			for i := range vs {
				vs[i] = float64(i)
			}
			return ts, vs
		}},
		{"decreasing and wrapping times", func() ([]int64, []float64) {
			ts := []int64{math.MaxInt64, math.MinInt64, math.MaxInt64, 5, -5, 1 << 62, -(1 << 62), 0}
			return ts, make([]float64, len(ts))
		}},
		{"irregular times", func() ([]int64, []float64) {
			ts, vs := make([]int64, 2000), make([]float64, 2000)
			tt := int64(0)
			for i := range ts {
				switch rng.IntN(5) {
				case 0: // same time
				case 1:
					tt += rng.Int64N(1 << 11)
				case 2:
					tt += rng.Int64N(1 << 27)
				case 3:
					tt += rng.Int64N(1 << 43)
				default:
					tt += rng.Int64N(1 << 50)
				}
				ts[i], vs[i] = tt, float64(rng.IntN(3))
			}
			return ts, vs
		}},
		{"random times", func() ([]int64, []float64) {
			ts, vs := make([]int64, 1000), make([]float64, 1000)
			for i := range ts {
				ts[i], vs[i] = int64(rng.Uint64()), math.Float64frombits(rng.Uint64())
			}
			return ts, vs
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ts, vs := tt.gen()
			data := checkRoundTrip(t, ts, vs)
			t.Logf("%d points, %d bytes, %.2f bytes/point", len(ts), len(data), float64(len(data))/float64(len(ts)))
		})
	}
}

func TestChunkCompactness(t *testing.T) {
	// Regular sampling of a constant: one bit for the time and one for the
	// value, a point; of a queue that moves by packets: a few bytes.
	rng := rand.New(rand.NewPCG(3, 4))
	n := 4096
	ts, zero, queue := make([]int64, n), make([]float64, n), make([]float64, n)
	q := 0.0
	for i := range n {
		ts[i] = int64(i) * 10_000_000
		if rng.IntN(3) == 0 {
			q = math.Max(0, q+float64(rng.IntN(9)-4)*1048)
		}
		queue[i] = q
	}
	for _, c := range []struct {
		name string
		vs   []float64
		max  float64
	}{{"zero", zero, 0.3}, {"queue", queue, 3}} {
		data := appendChunk(nil, ts, c.vs)
		bpp := float64(len(data)) / float64(n)
		t.Logf("%s: %.3f bytes/point", c.name, bpp)
		if bpp > c.max {
			t.Errorf("%s: %.3f bytes/point, want at most %.1f", c.name, bpp, c.max)
		}
	}
}

func TestChunkCorruptDoesNotPanic(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	ts, vs := make([]int64, 300), make([]float64, 300)
	for i := range ts {
		ts[i], vs[i] = int64(i)*rng.Int64N(1<<30), math.Float64frombits(rng.Uint64())
	}
	data := appendChunk(nil, ts, vs)
	// Every truncation fails (the header's n is more than is left).
	for k := range len(data) - 1 {
		if _, _, err := decodeChunk(data[:k], nil, nil); err == nil {
			t.Errorf("truncated to %d of %d bytes: no error", k, len(data))
		}
	}
	// Flipped bits and random bytes decode to something or fail, but
	// never panic or read past the data.
	for range 2000 {
		bad := append([]byte(nil), data...)
		bad[rng.IntN(len(bad))] ^= 1 << rng.IntN(8)
		decodeChunk(bad, nil, nil)
		junk := make([]byte, rng.IntN(64))
		for i := range junk {
			junk[i] = byte(rng.Uint32())
		}
		decodeChunk(junk, nil, nil)
	}
	for _, bad := range [][]byte{nil, {}, {0}, {0x80}, {1}, {1, 0}, {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 0}} {
		if _, _, err := decodeChunk(bad, nil, nil); err == nil {
			t.Errorf("decoded %x", bad)
		}
	}
}

// FuzzChunk: any data decodes or fails without a panic, and what decodes
// round-trips.
func FuzzChunk(f *testing.F) {
	f.Add(appendChunk(nil, []int64{1, 2, 3}, []float64{1, math.NaN(), math.Inf(-1)}))
	f.Add([]byte{1, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		ts, vs, err := decodeChunk(data, nil, nil)
		if err != nil {
			return
		}
		checkRoundTrip(t, ts, vs)
	})
}
