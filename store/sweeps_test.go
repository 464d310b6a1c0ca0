package store

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestSweeps(t *testing.T) {
	db := openTest(t)
	ctx := context.Background()
	sc := putScenario(t, db, "base", `{"name":"base"}`)
	sw := &Sweep{Name: "wr sweep", ScenarioID: sc.ID, Scenario: sc.JSON, Spec: []byte(`{"axes":[{"path":"cc.params.wr","values":["1","10"]}],"seeds":[1,2,3]}`),
		Owner: "alice", Created: t0}
	if err := db.CreateSweep(ctx, sw, 2, 3); err != nil {
		t.Fatal(err)
	}
	other := &Sweep{Name: "later", ScenarioID: sc.ID, Scenario: sc.JSON, Spec: []byte(`{}`), Owner: "bob", Created: t0.Add(time.Second)}
	if err := db.CreateSweep(ctx, other, 1, 1); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetSweep(ctx, sw.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Name != sw.Name || got.Status != SweepRunning || string(got.Spec) != string(sw.Spec) || got.Owner != "alice" ||
		!got.Created.Equal(t0) || !got.Finished.IsZero() || string(got.Scenario) != string(sc.JSON) {
		t.Errorf("got %+v", got)
	}
	if _, err := db.GetSweep(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing sweep: %v", err)
	}
	list, err := db.ListSweeps(ctx, "")
	if err != nil || len(list) != 2 || list[0].ID != other.ID {
		t.Fatalf("list: %v %+v", err, list)
	}

	// six rows, none submitted; link two runs, finish one of them
	rows, err := db.SweepRuns(ctx, sw.ID, true)
	if err != nil || len(rows) != 6 {
		t.Fatalf("rows: %v %d", err, len(rows))
	}
	for i, x := range rows {
		if x.Point != i/3 || x.Seed != i%3 || x.Run != "" || x.Status != "" || x.Summary != nil {
			t.Errorf("row %d: %+v", i, x)
		}
	}
	r1 := createRun(t, db, sc, 1, nil)
	r2 := createRun(t, db, sc, 2, nil)
	if err := db.SetSweepRun(ctx, sw.ID, 0, 1, r1.ID); err != nil {
		t.Fatal(err)
	}
	if err := db.SetSweepRun(ctx, sw.ID, 1, 2, r2.ID); err != nil {
		t.Fatal(err)
	}
	if err := db.SetSweepRun(ctx, sw.ID, 5, 0, r2.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("a point the sweep lacks: %v", err)
	}
	if err := db.FinishRun(ctx, r1.ID, Finish{Status: StatusDone, At: t0, Summary: []byte(`{"jain":1}`)}); err != nil {
		t.Fatal(err)
	}
	rows, _ = db.SweepRuns(ctx, sw.ID, true)
	if x := rows[1]; x.Run != r1.ID || x.Status != StatusDone || string(x.Summary) != `{"jain":1}` {
		t.Errorf("finished run: %+v", x)
	}
	if x := rows[5]; x.Run != r2.ID || x.Status != StatusQueued || x.Summary != nil {
		t.Errorf("queued run: %+v", x)
	}
	if light, _ := db.SweepRuns(ctx, sw.ID, false); light[1].Status != StatusDone || light[1].Summary != nil {
		t.Errorf("without summaries: %+v", light[1])
	}
	if sum, err := db.RunSummary(ctx, r1.ID); err != nil || string(sum) != `{"jain":1}` {
		t.Errorf("RunSummary: %q %v", sum, err)
	}
	if sum, err := db.RunSummary(ctx, r2.ID); err != nil || sum != nil {
		t.Errorf("RunSummary of an unfinished run: %q %v", sum, err)
	}
	if id, err := db.SweepOfRun(ctx, r2.ID); err != nil || id != sw.ID {
		t.Errorf("sweep of run: %q %v", id, err)
	}
	// a run deleted by retention leaves its row, as missing
	if err := db.DeleteRun(ctx, r2.ID); err != nil {
		t.Fatal(err)
	}
	rows, _ = db.SweepRuns(ctx, sw.ID, true)
	if x := rows[5]; x.Run != r2.ID || x.Status != "" {
		t.Errorf("deleted run: %+v", x)
	}

	if ok, err := db.FinishSweep(ctx, sw.ID, SweepCancelled, t0.Add(time.Minute)); !ok || err != nil {
		t.Fatalf("finish: %v %v", ok, err)
	}
	if ok, _ := db.FinishSweep(ctx, sw.ID, SweepDone, t0); ok {
		t.Error("a finished sweep finished again")
	}
	if got, _ := db.GetSweep(ctx, sw.ID); got.Status != SweepCancelled || !got.Finished.Equal(t0.Add(time.Minute)) {
		t.Errorf("after finish: %+v", got)
	}
	if list, _ := db.ListSweeps(ctx, SweepRunning); len(list) != 1 || list[0].ID != other.ID {
		t.Errorf("running sweeps: %+v", list)
	}

	// deleting a sweep deletes its runs and links, nothing else
	keep := createRun(t, db, sc, 3, nil)
	if err := db.DeleteSweep(ctx, sw.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.GetRun(ctx, r1.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("the sweep's run survived: %v", err)
	}
	if _, err := db.GetRun(ctx, keep.ID); err != nil {
		t.Errorf("another run went: %v", err)
	}
	if n := count(t, db, `SELECT count(*) FROM sweep_runs WHERE sweep = ?`, sw.ID); n != 0 {
		t.Errorf("%d links left", n)
	}
	if err := db.DeleteSweep(ctx, sw.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("delete twice: %v", err)
	}
}

// ResetRun leaves a run as if it had just been queued: a redelivered
// remote run starts again without what its first attempt stored.
func TestResetRun(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	sc := putScenario(t, db, "s", `{"a":1}`)
	r := createRun(t, db, sc, 1, nil)
	keep := createRun(t, db, sc, 2, nil)
	for _, run := range []*Run{r, keep} {
		rec := NewRecorder(100_000_000)
		if err := db.StartRun(ctx, run.ID, t0); err != nil {
			t.Fatal(err)
		}
		if err := db.AppendSeries(ctx, run.ID, recordSome(rec, 2, 100, false), Progress{Fraction: 0.5, SimPS: 7}); err != nil {
			t.Fatal(err)
		}
		if err := db.AddRunEvent(ctx, run.ID, RunEvent{AtPS: 1, Params: map[string]float64{"wr": 2}}, []byte(`{"changed":true}`), []byte(`{"wr":2}`)); err != nil {
			t.Fatal(err)
		}
		if err := db.FinishRun(ctx, run.ID, Finish{Status: StatusDone, Chunks: rec.Flush(true), Flows: testFlows, Summary: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.ResetRun(ctx, r.ID, sc.JSON, []byte(`{"wr":1}`)); err != nil {
		t.Fatal(err)
	}
	g, err := db.GetRun(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if g.Status != StatusQueued || g.Summary != nil || !g.StartedAt.IsZero() || !g.FinishedAt.IsZero() || g.Progress != (Progress{}) ||
		string(g.Scenario) != string(sc.JSON) || string(g.Params) != `{"wr":1}` {
		t.Errorf("after reset: %+v", g)
	}
	for _, table := range []string{"chunks", "series", "flows", "run_events"} {
		q := `SELECT count(*) FROM ` + table + ` WHERE run = (SELECT rid FROM runs WHERE id = ?)`
		if n := count(t, db, q, r.ID); n != 0 {
			t.Errorf("%s: %d rows left", table, n)
		}
		if n := count(t, db, q, keep.ID); n == 0 {
			t.Errorf("%s: the other run lost its rows", table)
		}
	}
	if err := db.ResetRun(ctx, "nope", nil, nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing run: %v", err)
	}
}
