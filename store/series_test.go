package store

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// seriesFixture is a run with stored series and the points it should have.
type seriesFixture struct {
	db   *DB
	run  *Run
	want [2][]Series // by level, by index
}

// newSeriesFixture stores 6 series (3 metrics x 2 entities, two of them
// starting late) over several AppendSeries calls, then a FinishRun if
// finish (which compacts the chunks) or another AppendSeries.
func newSeriesFixture(t *testing.T, finish bool) *seriesFixture {
	ctx := context.Background()
	db := openTest(t)
	sc := putScenario(t, db, "s", `{}`)
	run := createRun(t, db, sc, 1, func(r *Run) { r.BucketPS = 50_000 })
	rng := rand.New(rand.NewPCG(11, 12))
	rec := NewRecorder(run.BucketPS)
	f := &seriesFixture{db: db, run: run}
	type key struct{ m, e string }
	keys := []key{{"queue_bytes", "s0.p1"}, {"queue_bytes", "s1.p0"}, {"rate_bps", "3"}, {"rate_bps", "4"}, {"cwnd_bytes", "3"}, {"cwnd_bytes", "4"}}
	for i, k := range keys {
		agg := AggMean
		if k.m == "queue_bytes" {
			agg = AggMax
		}
		if idx := rec.Series(k.m, k.e, agg); idx != i {
			t.Fatal(idx)
		}
		f.want[0] = append(f.want[0], Series{Index: i, Metric: k.m, Entity: k.e})
	}
	onPoint := make([]Series, len(keys))
	rec.SetOnPoint(func(idx int, tPS int64, v float64) {
		onPoint[idx].T = append(onPoint[idx].T, tPS)
		onPoint[idx].V = append(onPoint[idx].V, v)
	})
	for step := range 9000 {
		tt := int64(step) * 10_000
		for i := range keys {
			if i >= 4 && step < 5000 { // the cwnd series start late
				continue
			}
			v := math.Round(rng.Float64() * 1e6)
			rec.Add(i, tt, v)
			w := &f.want[0][i]
			w.T, w.V = append(w.T, tt), append(w.V, v)
		}
		if rec.Pending() >= 10_000 {
			if err := db.AppendSeries(ctx, run.ID, rec.Flush(false), Progress{SimPS: tt}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var err error
	if finish {
		err = db.FinishRun(ctx, run.ID, Finish{Status: StatusDone, Chunks: rec.Flush(true)})
	} else {
		err = db.AppendSeries(ctx, run.ID, rec.Flush(true), Progress{})
	}
	if err != nil {
		t.Fatal(err)
	}
	for i, k := range keys {
		f.want[1] = append(f.want[1], Series{Index: i, Metric: k.m, Entity: k.e, T: onPoint[i].T, V: onPoint[i].V})
	}
	return f
}

// filter returns the expected answer to q.
func (f *seriesFixture) filter(q SeriesQuery) []Series {
	var out []Series
	if q.Level < 0 || q.Level >= len(f.want) {
		return nil
	}
	for _, s := range f.want[q.Level] {
		if len(q.Metrics) > 0 && !slices.Contains(q.Metrics, s.Metric) || len(q.Entities) > 0 && !slices.Contains(q.Entities, s.Entity) {
			continue
		}
		r := Series{Index: s.Index, Metric: s.Metric, Entity: s.Entity}
		for i, t := range s.T {
			if t >= q.FromPS && (q.ToPS == 0 || t <= q.ToPS) {
				r.T, r.V = append(r.T, t), append(r.V, s.V[i])
			}
		}
		if len(r.T) > 0 {
			out = append(out, r)
		}
	}
	return out
}

func TestSeriesQuery(t *testing.T) {
	for _, finish := range []bool{false, true} {
		t.Run(map[bool]string{false: "live", true: "finished"}[finish], func(t *testing.T) {
			testSeriesQuery(t, finish)
		})
	}
}

func testSeriesQuery(t *testing.T, finish bool) {
	ctx := context.Background()
	f := newSeriesFixture(t, finish)
	if n := count(t, f.db, `SELECT count(*) FROM chunks WHERE idx = 0 AND level = 0`); n < 3 {
		t.Fatalf("series 0 has %d chunks; the test wants several", n)
	}
	tests := []struct {
		name string
		q    SeriesQuery
	}{
		{"level 0, everything", SeriesQuery{}},
		{"level 1, everything", SeriesQuery{Level: 1}},
		{"one metric", SeriesQuery{Metrics: []string{"rate_bps"}}},
		{"two metrics", SeriesQuery{Level: 1, Metrics: []string{"rate_bps", "cwnd_bytes"}}},
		{"entities", SeriesQuery{Entities: []string{"3", "s1.p0"}}},
		{"metric and entity", SeriesQuery{Metrics: []string{"cwnd_bytes"}, Entities: []string{"4"}}},
		{"unknown metric", SeriesQuery{Metrics: []string{"nope"}}},
		{"from", SeriesQuery{FromPS: 33_333_333}},
		{"to", SeriesQuery{ToPS: 12_345_678}},
		{"inside one chunk", SeriesQuery{FromPS: 1_000_001, ToPS: 1_100_000}},
		{"across chunks", SeriesQuery{Level: 1, FromPS: 10_000_000, ToPS: 70_000_000}},
		{"exact bounds", SeriesQuery{FromPS: 20_000_000, ToPS: 20_000_000}},
		{"before the late series", SeriesQuery{ToPS: 49_990_000}},
		{"after the end", SeriesQuery{FromPS: 1 << 50}},
		{"empty range", SeriesQuery{FromPS: 5, ToPS: 9_999}},
		{"level 2", SeriesQuery{Level: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := f.db.Series(ctx, f.run.ID, tt.q)
			if err != nil {
				t.Fatal(err)
			}
			want := f.filter(tt.q)
			if len(got) != len(want) {
				t.Fatalf("%d series, want %d", len(got), len(want))
			}
			for i := range want {
				g, w := got[i], want[i]
				if g.Index != w.Index || g.Metric != w.Metric || g.Entity != w.Entity {
					t.Errorf("series %d is %d %s %s, want %d %s %s", i, g.Index, g.Metric, g.Entity, w.Index, w.Metric, w.Entity)
				}
				if !slices.Equal(g.T, w.T) || !sameBits(g.V, w.V) {
					t.Errorf("series %d (%s %s): %d points, want %d", i, w.Metric, w.Entity, len(g.T), len(w.T))
				}
			}
		})
	}
	if _, err := f.db.Series(ctx, "nope", SeriesQuery{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("Series of a missing run: %v", err)
	}
}

func TestSeriesKeys(t *testing.T) {
	ctx := context.Background()
	f := newSeriesFixture(t, true)
	keys, err := f.db.SeriesKeys(ctx, f.run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != len(f.want[0]) {
		t.Fatalf("%d keys, want %d", len(keys), len(f.want[0]))
	}
	for i, k := range keys {
		w := f.want[0][i]
		if k.Index != w.Index || k.Metric != w.Metric || k.Entity != w.Entity || k.T != nil || k.V != nil {
			t.Errorf("key %d: %+v, want %d %s %s", i, k, w.Index, w.Metric, w.Entity)
		}
	}
	// A run without series has none; a missing run is not found.
	other := createRun(t, f.db, &Scenario{ID: f.run.ScenarioID}, 2, nil)
	if keys, err := f.db.SeriesKeys(ctx, other.ID); err != nil || len(keys) != 0 {
		t.Errorf("run without series: %v %v", keys, err)
	}
	if ss, err := f.db.Series(ctx, other.ID, SeriesQuery{}); err != nil || len(ss) != 0 {
		t.Errorf("run without series: %v %v", ss, err)
	}
	if _, err := f.db.SeriesKeys(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("SeriesKeys of a missing run: %v", err)
	}
}

// TestSeriesQueryPlan: the chunk query walks the index in order, without a
// sort or a scan of the table.
func TestSeriesQueryPlan(t *testing.T) {
	db := openTest(t)
	rows, err := db.sql.Query(`EXPLAIN QUERY PLAN SELECT c.idx, s.metric, s.entity, c.t0, c.t1, c.data
		FROM runs r JOIN chunks c ON c.run = r.rid JOIN series s ON s.run = c.run AND s.idx = c.idx
		WHERE r.id = ? AND c.level = ? AND c.t1 >= ? AND s.metric IN (?, ?) ORDER BY c.idx, c.seq`, "x", 0, 0, "a", "b")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, notused int
		var detail string
		if err := rows.Scan(&id, &parent, &notused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	text := strings.Join(plan, "\n")
	t.Log(text)
	if strings.Contains(text, "TEMP B-TREE") || !strings.Contains(text, "chunks_by_series") || strings.Contains(text, "SCAN c") {
		t.Errorf("the series query does not use chunks_by_series in order:\n%s", text)
	}
}

func TestSeriesPointsAndSpeed(t *testing.T) {
	db := openTest(t)
	ctx := t.Context()
	r := createRun(t, db, putScenario(t, db, "s", `{"name":"s"}`), 0, nil)
	rec := NewRecorder(100)
	a := rec.Series("queue_bytes", "p0", AggMax)
	b := rec.Series("cwnd_bytes", "0", AggMean)
	for i := range 1000 {
		rec.Add(a, int64(i*10), float64(i))
		if i%2 == 0 {
			rec.Add(b, int64(i*10), 1)
		}
	}
	if err := db.AppendSeries(ctx, r.ID, rec.Flush(true), Progress{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		q    SeriesQuery
		want int64
	}{
		{SeriesQuery{}, 1500},
		{SeriesQuery{Metrics: []string{"queue_bytes"}}, 1000},
		{SeriesQuery{Entities: []string{"0"}}, 500},
		{SeriesQuery{Level: 1}, 200},
		{SeriesQuery{Metrics: []string{"nope"}}, 0},
	} {
		n, err := db.SeriesPoints(ctx, r.ID, tc.q)
		if err != nil || n != tc.want {
			t.Errorf("%+v: %d points (%v), want %d", tc.q, n, err, tc.want)
		}
	}
	if err := db.SetSpeed(ctx, r.ID, 250); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.GetRun(ctx, r.ID); got.Speed != 250 {
		t.Fatalf("speed %g", got.Speed)
	}
	if err := db.SetSpeed(ctx, "nope", 1); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown run: %v", err)
	}
}
