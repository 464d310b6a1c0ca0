package store

import "math"

// Agg is how a level-1 point summarises the level-0 points of its bucket.
type Agg uint8

// Aggregations of a level-1 bucket.
const (
	AggMean Agg = iota // the mean of the bucket's values
	AggMax             // the largest of the bucket's values (math.Max)
)

// Chunk is the encoded points of one series at one level, as Recorder.Flush
// makes them and AppendSeries and FinishRun store them.
type Chunk struct {
	Series         int    // the series index (Recorder.Series)
	Metric, Entity string // the series' name
	Level          int    // 0: every point; 1: one point per bucket
	N              int    // number of points
	T0, T1         int64  // the earliest and latest time of the points, ps
	Data           []byte // the encoded points (encoding.go)
}

// Recorder buffers the series of one run in memory and encodes them into
// chunks. Level 0 keeps every point; level 1 has one point per bucket of
// bucketPS picoseconds: bucket b = floor(t / bucketPS) has its point at
// t = b*bucketPS with the mean or max (Agg) of the bucket's level-0 values.
// A bucket is finalised when a point of a later bucket arrives, or by
// Flush(true).
//
// A Recorder is not safe for concurrent use.
type Recorder struct {
	bucketPS int64
	series   []recSeries
	byName   map[seriesName]int
	pending  int
	onPoint  func(idx int, tPS int64, v float64)
}

type seriesName struct{ metric, entity string }

// recSeries is the buffered state of one series.
type recSeries struct {
	metric, entity string
	agg            Agg
	t              []int64   // level-0 points not yet flushed
	v              []float64 //
	lt             []int64   // finalised level-1 points not yet flushed
	lv             []float64 //
	// The open level-1 bucket.
	open   bool
	bucket int64
	sum    float64
	max    float64
	count  int
}

// NewRecorder returns a Recorder whose level-1 buckets are bucketPS
// picoseconds wide (at least 1).
func NewRecorder(bucketPS int64) *Recorder {
	if bucketPS <= 0 {
		bucketPS = 1
	}
	return &Recorder{bucketPS: bucketPS, byName: make(map[seriesName]int)}
}

// Series returns the index of the series (metric, entity), adding it if it
// is new: 0, 1, 2, ... in the order of first calls. agg is the level-1
// aggregation of a new series; it is ignored for an existing one.
func (r *Recorder) Series(metric, entity string, agg Agg) int {
	key := seriesName{metric, entity}
	if i, ok := r.byName[key]; ok {
		return i
	}
	i := len(r.series)
	r.series = append(r.series, recSeries{metric: metric, entity: entity, agg: agg})
	r.byName[key] = i
	return i
}

// Add adds a point to series idx. The points of one series must come in
// non-decreasing time; an unknown idx is ignored.
func (r *Recorder) Add(idx int, tPS int64, v float64) {
	if idx < 0 || idx >= len(r.series) {
		return
	}
	s := &r.series[idx]
	s.t = append(s.t, tPS)
	s.v = append(s.v, v)
	r.pending++
	b := floorDiv(tPS, r.bucketPS)
	if s.open && b != s.bucket {
		r.closeBucket(idx)
	}
	if !s.open {
		s.open, s.bucket, s.sum, s.max, s.count = true, b, v, v, 1
		return
	}
	s.sum += v
	s.max = math.Max(s.max, v)
	s.count++
}

// floorDiv returns floor(a / b) for b > 0.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// closeBucket finalises the open bucket of series idx.
func (r *Recorder) closeBucket(idx int) {
	s := &r.series[idx]
	t := s.bucket * r.bucketPS
	v := s.max
	if s.agg != AggMax {
		v = s.sum / float64(s.count)
	}
	s.lt = append(s.lt, t)
	s.lv = append(s.lv, v)
	s.open = false
	if r.onPoint != nil {
		r.onPoint(idx, t, v)
	}
}

// SetOnPoint sets a function called once for each finalised level-1 point,
// in order: when a point of a later bucket arrives (from Add) or when
// Flush(true) closes the open buckets.
func (r *Recorder) SetOnPoint(f func(idx int, tPS int64, v float64)) {
	r.onPoint = f
}

// Pending returns the number of level-0 points not yet flushed.
func (r *Recorder) Pending() int {
	return r.pending
}

// Flush encodes the buffered points into chunks: for each series with any,
// its level-0 points, then its finalised level-1 points, at most
// maxChunkPoints (4096) points a chunk. final also finalises the open
// buckets (do it at the end of a run). The chunks own their data.
func (r *Recorder) Flush(final bool) []Chunk {
	var out []Chunk
	var ends []int // end offset in buf of each chunk's data
	var buf []byte
	for i := range r.series {
		s := &r.series[i]
		if final && s.open {
			r.closeBucket(i)
		}
		for level, pts := range [2]struct {
			t []int64
			v []float64
		}{{s.t, s.v}, {s.lt, s.lv}} {
			for lo := 0; lo < len(pts.t); lo += maxChunkPoints {
				hi := min(lo+maxChunkPoints, len(pts.t))
				t, v := pts.t[lo:hi], pts.v[lo:hi]
				t0, t1 := t[0], t[0]
				for _, x := range t {
					t0, t1 = min(t0, x), max(t1, x)
				}
				buf = appendChunk(buf, t, v)
				ends = append(ends, len(buf))
				out = append(out, Chunk{Series: i, Metric: s.metric, Entity: s.entity,
					Level: level, N: len(t), T0: t0, T1: t1})
			}
		}
		s.t, s.v, s.lt, s.lv = s.t[:0], s.v[:0], s.lt[:0], s.lv[:0]
	}
	r.pending = 0
	start := 0
	for k := range out {
		out[k].Data = buf[start:ends[k]:ends[k]]
		start = ends[k]
	}
	return out
}
