package report

import (
	"bytes"
	"errors"
	"io"
	"math"
	"os"
	"strconv"
	"testing"

	"cclab/scenarios"
	"cclab/sim"
)

// literalRow is series.csv's row as the contract states it, formatted the
// plain way (the writer caches text, and must print exactly this).
func literalRow(s *sim.Sim, x sim.Sample) string {
	entity := strconv.Itoa(int(x.Entity))
	if s.PortMetric(x.Metric) {
		entity = s.PortName(x.Entity)
	}
	return string(AppendNanos(nil, x.T)) + "," + s.MetricName(x.Metric) + "," + entity + "," +
		strconv.FormatFloat(x.Value, 'f', -1, 64) + "\n"
}

// The series writer prints what the literal formatting does, for a whole
// run's samples (ports, flows, several algorithms' metrics) and for values
// at the edges of its integer path (negative zero, 2^53, fractions, NaN,
// infinities, huge and tiny numbers), across many flushes of its buffer;
// the edge values repeat, one after another, so that a port's cached row
// is reused and redone (0 then -0 differ only in their sign bit).
func TestSeriesWriterMatchesLiteral(t *testing.T) {
	s := websearch16(t)
	var got, want bytes.Buffer
	sw := NewSeriesWriter(&got, s)
	want.WriteString(SeriesHeader + "\n")
	rows := 0
	s.Subscribe(observerFunc(func(batch []sim.Sample) {
		for _, x := range batch {
			want.WriteString(literalRow(s, x))
			rows++
		}
	}))
	s.Subscribe(sw)
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	var edge []sim.Sample
	for i, v := range []float64{0, 0, math.Copysign(0, -1), math.Copysign(0, -1), 0, 1, 1, -1, 0.5, -2.25, 1 << 53, -(1 << 53), 1<<53 + 2, 1e21, 1e300, 5e-324,
		math.NaN(), math.NaN(), math.Inf(1), math.Inf(-1), math.Inf(-1), 123456789.000001, 8e9, 3.0000000000000004} {
		edge = append(edge, sim.Sample{T: sim.Time(1000*i + 7), Metric: 0, Entity: 0, Value: v},
			sim.Sample{T: sim.Time(1000*i + 7), Metric: 1, Entity: int32(i), Value: v})
	}
	sw.Observe(edge)
	for _, x := range edge {
		want.WriteString(literalRow(s, x))
	}
	if err := sw.Flush(); err != nil {
		t.Fatal(err)
	}
	if rows < 10_000 {
		t.Fatalf("only %d rows: the run does not exercise the writer's buffer", rows)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		g, w := got.Bytes(), want.Bytes()
		i := 0
		for i < len(g) && i < len(w) && g[i] == w[i] {
			i++
		}
		lo := max(0, i-80)
		t.Fatalf("series.csv differs at byte %d:\ngot  %q\nwant %q", i, g[lo:min(len(g), i+80)], w[lo:min(len(w), i+80)])
	}
}

// A batch with the rows and values of the one before, all at one time, is
// written as that batch's text with its times replaced: the writer must
// still print what the literal formatting does when the times' text
// changes length, when a value, an entity or a metric changes, when a row
// is added or dropped, and when a batch has rows of two times.
func TestSeriesWriterRepeats(t *testing.T) {
	s := websearch16(t)
	rows := func(at sim.Time, vals ...float64) []sim.Sample {
		var b []sim.Sample
		for i, v := range vals {
			b = append(b, sim.Sample{T: at, Metric: sim.Metric(i % 2), Entity: int32(i), Value: v})
		}
		return b
	}
	negZero := math.Copysign(0, -1)
	type seq [][]sim.Sample
	for _, tc := range []struct {
		name    string
		batches seq
	}{
		{"idle, times of one length", seq{rows(10_000_000, 0, 0, 5), rows(20_000_000, 0, 0, 5), rows(30_000_000, 0, 0, 5)}},
		{"idle, times growing a digit", seq{rows(999_999, 1, 2), rows(1_000_000, 1, 2), rows(1_000_001, 1, 2), rows(99_999_000, 1, 2), rows(100_000_000, 1, 2)}},
		{"idle, times shrinking (fractions)", seq{rows(1_000_500, 1), rows(1_001_000, 1), rows(1_001_250, 1), rows(1_001_251, 1)}},
		{"a value changes", seq{rows(1000, 0, 0, 0), rows(2000, 0, 7, 0), rows(3000, 0, 7, 0), rows(4000, 0, 0, 0)}},
		{"zero's sign, NaN", seq{rows(1000, 0), rows(2000, negZero), rows(3000, negZero), rows(4000, 0), rows(5000, math.NaN()), rows(6000, math.NaN())}},
		{"a row more, a row less", seq{rows(1000, 1, 2), rows(2000, 1, 2, 3), rows(3000, 1, 2), rows(4000, 1, 2)}},
		{"another entity", seq{rows(1000, 4, 4), {{T: 2000, Metric: 0, Entity: 0, Value: 4}, {T: 2000, Metric: 1, Entity: 3, Value: 4}}, rows(3000, 4, 4)}},
		{"another metric", seq{rows(1000, 4, 4), {{T: 2000, Metric: 1, Entity: 0, Value: 4}, {T: 2000, Metric: 1, Entity: 1, Value: 4}}, rows(3000, 4, 4)}},
		{"two times in a batch", seq{{{T: 1000, Entity: 0, Value: 1}, {T: 1500, Entity: 1, Value: 1}}, {{T: 2000, Entity: 0, Value: 1}, {T: 2500, Entity: 1, Value: 1}}, {{T: 3000, Entity: 0, Value: 1}, {T: 3000, Entity: 1, Value: 1}}, {{T: 4000, Entity: 0, Value: 1}, {T: 4000, Entity: 1, Value: 1}},
			{{T: 5000, Entity: 0, Value: 1}, {T: 5500, Entity: 1, Value: 1}}, {{T: 6500, Entity: 0, Value: 1}, {T: 6000, Entity: 1, Value: 1}}, {{T: 7000, Entity: 0, Value: 1}, {T: 7000, Entity: 1, Value: 1}}}},
		{"the same time again", seq{rows(1000, 3), rows(1000, 3), rows(1000, 3)}},
		{"an empty batch between", seq{rows(1000, 3), nil, rows(2000, 3)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got, want bytes.Buffer
			sw := NewSeriesWriter(&got, s)
			want.WriteString(SeriesHeader + "\n")
			for _, b := range tc.batches {
				for _, x := range b {
					want.WriteString(literalRow(s, x))
				}
				sw.Observe(b)
			}
			if err := sw.Flush(); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Fatalf("got\n%s\nwant\n%s", got.String(), want.String())
			}
		})
	}
}

// websearch16 is the 16-host WebSearch scenario under DCQCN, its load
// cut at 500 µs.
func websearch16(t *testing.T) *sim.Sim {
	t.Helper()
	data, err := os.ReadFile("../../scenarios/library/fattree16-websearch30.json")
	if err != nil {
		t.Fatal(err)
	}
	if data, err = scenarios.ApplySets(data, []string{"workload[0].until=500us"}); err != nil {
		t.Fatal(err)
	}
	if data, err = scenarios.SetAlgorithm(data, "dcqcn"); err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := scenarios.Build(sc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// The rows are written by the writer's goroutine: a write that fails is
// reported by Flush, whether it is the first or a later one, and stops
// the formatting (no more is written after it); a writer flushed without
// an error takes rows again, which the next Flush writes after the others.
func TestSeriesWriterFlush(t *testing.T) {
	s := websearch16(t)
	batch := make([]sim.Sample, 1000) // about 12 kB of rows
	for i := range batch {
		batch[i] = sim.Sample{T: sim.Time(i), Metric: 0, Entity: int32(i % 100), Value: float64(i)}
	}
	boom := errors.New("disk full")
	for _, tc := range []struct {
		name     string
		okWrites int // writes that succeed before one fails (-1: none fails)
		batches  int
	}{
		{"no write fails", -1, 40},
		{"the first fails", 0, 40},
		{"the third fails", 2, 40},
		{"rows fit the first buffer", -1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := &failingWriter{okWrites: tc.okWrites, err: boom}
			sw := NewSeriesWriter(w, s)
			var want bytes.Buffer
			want.WriteString(SeriesHeader + "\n")
			for range tc.batches {
				sw.Observe(batch)
				for _, x := range batch {
					want.WriteString(literalRow(s, x))
				}
			}
			err := sw.Flush()
			if tc.okWrites < 0 {
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(w.buf.Bytes(), want.Bytes()) {
					t.Fatalf("wrote %d bytes, want %d", w.buf.Len(), want.Len())
				}
				// used again after a Flush
				sw.Observe(batch[:1])
				want.WriteString(literalRow(s, batch[0]))
				if err := sw.Flush(); err != nil || !bytes.Equal(w.buf.Bytes(), want.Bytes()) {
					t.Fatalf("after a second Flush: err %v, wrote %d bytes, want %d", err, w.buf.Len(), want.Len())
				}
				// a Flush with nothing new (runToDir's deferred one) writes nothing
				if err := sw.Flush(); err != nil || !bytes.Equal(w.buf.Bytes(), want.Bytes()) {
					t.Fatalf("after a Flush with nothing new: err %v, wrote %d bytes, want %d", err, w.buf.Len(), want.Len())
				}
				return
			}
			if !errors.Is(err, boom) {
				t.Fatalf("Flush: %v, want %v", err, boom)
			}
			if w.writes != tc.okWrites+1 {
				t.Errorf("%d writes, want %d: the writer went on after the failure", w.writes, tc.okWrites+1)
			}
			if !bytes.HasPrefix(want.Bytes(), w.buf.Bytes()) || w.buf.Len() == 0 && tc.okWrites > 0 {
				t.Errorf("wrote %d bytes that are not the start of the rows", w.buf.Len())
			}
			if err := sw.Flush(); !errors.Is(err, boom) {
				t.Errorf("a second Flush: %v, want %v", err, boom)
			}
		})
	}
}

// failingWriter keeps what it is given until okWrites writes have
// succeeded, then fails every write with err (okWrites < 0: never).
type failingWriter struct {
	buf      bytes.Buffer
	okWrites int
	writes   int
	err      error
}

func (w *failingWriter) Write(p []byte) (int, error) {
	w.writes++
	if w.okWrites >= 0 && w.writes > w.okWrites {
		return 0, w.err
	}
	return w.buf.Write(p)
}

type observerFunc func([]sim.Sample)

func (f observerFunc) Observe(b []sim.Sample) { f(b) }

// BenchmarkSeriesWriter formats samples of 176 port rows, as the 16-host
// replay's: busy (every value changes from one sample to the next) and
// idle (none does, as after the last flow ends).
func BenchmarkSeriesWriter(b *testing.B) {
	s := websearch16(&testing.T{})
	for _, idle := range []bool{false, true} {
		name := "busy"
		if idle {
			name = "idle"
		}
		b.Run(name, func(b *testing.B) {
			batch := make([]sim.Sample, 176)
			sw := NewSeriesWriter(io.Discard, s)
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				for k := range batch {
					v := float64(k % 7)
					if !idle {
						v = float64(i*31 + k)
					}
					batch[k] = sim.Sample{T: sim.Time(12_840_000_000 + i*10_000_000), Metric: sim.Metric(k / 64), Entity: int32(k % 64), Value: v}
				}
				sw.Observe(batch)
			}
			if err := sw.Flush(); err != nil {
				b.Fatal(err)
			}
		})
	}
}
