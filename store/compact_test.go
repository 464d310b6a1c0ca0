package store

import (
	"context"
	"slices"
	"testing"
)

// TestFinishRunCompacts: FinishRun rewrites a run's short chunks as full
// ones, and every query answers the same before and after; with
// DeferCompaction it leaves them, and CompactRun (in batches) does the same
// rewrite after.
func TestFinishRunCompacts(t *testing.T) {
	t.Run("in FinishRun", func(t *testing.T) { testCompaction(t, false) })
	t.Run("deferred", func(t *testing.T) { testCompaction(t, true) })
}

func testCompaction(t *testing.T, deferred bool) {
	ctx := context.Background()
	db := openTest(t)
	sc := putScenario(t, db, "s", `{}`)
	run := createRun(t, db, sc, 1, nil)
	rec := NewRecorder(70_000)
	const nSeries = 7
	for s := range nSeries {
		rec.Series("m", string(rune('a'+s)), Agg(s%2))
	}
	short := rec.Series("short", "", AggMean)
	// Series s has 1500*s points (series 0 none), flushed every 1000 ticks;
	// the short one has one chunk.
	for tick := range 9000 {
		for s := range nSeries {
			if tick < 1500*s {
				rec.Add(s, int64(tick)*10_000, float64((tick*s)%1000))
			}
		}
		if tick < 1000 {
			rec.Add(short, int64(tick)*10_000, 1)
		}
		if tick%1000 == 999 {
			if err := db.AppendSeries(ctx, run.ID, rec.Flush(tick == 8999), Progress{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	queries := []SeriesQuery{{}, {Level: 1}, {FromPS: 12_345_678, ToPS: 45_000_000}, {Level: 1, FromPS: 20_000_000}}
	var before [][]Series
	for _, q := range queries {
		ss, err := db.Series(ctx, run.ID, q)
		if err != nil {
			t.Fatal(err)
		}
		before = append(before, ss)
	}
	if n := count(t, db, `SELECT count(*) FROM chunks WHERE idx = ? AND level = 0`, short); n != 1 {
		t.Fatalf("the short series has %d chunks before the finish, want 1", n)
	}
	seqShort := count(t, db, `SELECT seq FROM chunks WHERE idx = ? AND level = 0`, short)
	if n := count(t, db, `SELECT count(*) FROM chunks WHERE idx = 6 AND level = 0`); n != 9 {
		t.Fatalf("series 6 has %d chunks before the finish, want 9", n)
	}
	if err := db.FinishRun(ctx, run.ID, Finish{Status: StatusDone, DeferCompaction: deferred}); err != nil {
		t.Fatal(err)
	}
	if deferred {
		if n := count(t, db, `SELECT count(*) FROM chunks WHERE idx = 6 AND level = 0`); n != 9 {
			t.Fatalf("series 6 has %d chunks after a finish that defers the compaction, want 9", n)
		}
		if err := db.CompactRun(ctx, run.ID); err != nil {
			t.Fatal(err)
		}
	}
	for i, q := range queries {
		ss, err := db.Series(ctx, run.ID, q)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(ss, before[i], func(a, b Series) bool {
			return a.Index == b.Index && a.Metric == b.Metric && a.Entity == b.Entity && slices.Equal(a.T, b.T) && sameBits(a.V, b.V)
		}) {
			t.Errorf("query %+v answers differently after the compaction", q)
		}
	}
	for s := 1; s < nSeries; s++ {
		for level, points := range []int{1500 * s, 0} {
			if level == 1 {
				points = count(t, db, `SELECT sum(n) FROM chunks WHERE idx = ? AND level = 1`, s)
			}
			want := (points + maxChunkPoints - 1) / maxChunkPoints
			if n := count(t, db, `SELECT count(*) FROM chunks WHERE idx = ? AND level = ?`, s, level); n != want {
				t.Errorf("series %d level %d: %d chunks of %d points, want %d", s, level, n, points, want)
			}
		}
	}
	if got := count(t, db, `SELECT seq FROM chunks WHERE idx = ? AND level = 0`, short); got != seqShort {
		t.Error("a series with one chunk was rewritten")
	}
}
