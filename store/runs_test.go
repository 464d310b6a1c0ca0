package store

import (
	"context"
	"errors"
	"math"
	"reflect"
	"regexp"
	"slices"
	"testing"
	"time"

	"cclab/sim"
)

func TestNewRunID(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		id := NewRunID()
		if !regexp.MustCompile(`^[0-9a-f]{16}$`).MatchString(id) {
			t.Fatalf("id %q", id)
		}
		if seen[id] {
			t.Fatalf("id %s twice", id)
		}
		seen[id] = true
	}
}

func TestTerminal(t *testing.T) {
	for status, want := range map[string]bool{
		StatusQueued: false, StatusRunning: false, StatusPaused: false,
		StatusDone: true, StatusFailed: true, StatusCancelled: true, StatusInterrupted: true, "": false, "bogus": false,
	} {
		if Terminal(status) != want {
			t.Errorf("Terminal(%q) = %v", status, !want)
		}
	}
}

// sameRun compares every field, times with Equal.
func sameRun(t *testing.T, got, want *Run) {
	t.Helper()
	g, w := *got, *want
	for _, p := range []struct{ g, w *time.Time }{{&g.CreatedAt, &w.CreatedAt}, {&g.StartedAt, &w.StartedAt}, {&g.FinishedAt, &w.FinishedAt}} {
		if !p.g.Equal(*p.w) {
			t.Errorf("time %v, want %v", *p.g, *p.w)
		}
		*p.g, *p.w = time.Time{}, time.Time{}
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("run\n%+v\nwant\n%+v", g, w)
	}
}

func TestRunRoundTrip(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	sc := putScenario(t, db, "s", `{"s":1}`)
	tests := []struct {
		name string
		run  Run
	}{
		{"everything", Run{
			ID: "0123456789abcdef", ScenarioID: sc.ID, Name: "n", Algorithm: "hpcc",
			Params: []byte(`{"eta":0.95}`), Seed: math.MaxUint64, CodeVersion: "v1.2.3",
			Scenario: []byte("{\"s\": 1, \"é\": \"\\n\"}"), Status: StatusRunning, Error: "e", Client: "c",
			Pinned: true, Speed: 12.5, BucketPS: 1 << 40,
			CreatedAt: t0, StartedAt: t0.Add(time.Nanosecond), FinishedAt: t0.Add(time.Hour + 7),
			Progress: Progress{Fraction: 0.25, SimPS: math.MaxInt64, Events: math.MaxUint64, WallSeconds: 1.5},
			Summary:  []byte(`{"flows":3}` + "\n"),
		}},
		{"defaults", Run{ScenarioID: sc.ID, Algorithm: "none"}},
		{"high bit seed", Run{ScenarioID: sc.ID, Seed: 1 << 63, Params: []byte{}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.run
			if err := db.CreateRun(ctx, &r); err != nil {
				t.Fatal(err)
			}
			if tt.run.ID == "" && len(r.ID) != 16 || r.CreatedAt.IsZero() || r.Status == "" {
				t.Errorf("CreateRun did not fill ID/CreatedAt/Status: %+v", r)
			}
			got, err := db.GetRun(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			sameRun(t, got, &r)
			list, err := db.ListRuns(ctx, RunFilter{})
			if err != nil {
				t.Fatal(err)
			}
			i := slices.IndexFunc(list, func(x Run) bool { return x.ID == r.ID })
			if i < 0 {
				t.Fatal("not listed")
			}
			want := r
			want.Scenario, want.Summary = nil, nil
			sameRun(t, &list[i], &want)
		})
	}

	if _, err := db.GetRun(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("GetRun of a missing run: %v", err)
	}
	if err := db.CreateRun(ctx, &Run{ScenarioID: "nope"}); !errors.Is(err, ErrNotFound) {
		t.Errorf("CreateRun of a missing scenario: %v", err)
	}
	if err := db.CreateRun(ctx, &Run{ScenarioID: sc.ID, Status: "bogus"}); err == nil {
		t.Error("CreateRun with a bogus status")
	}
	if err := db.CreateRun(ctx, &Run{ID: "0123456789abcdef", ScenarioID: sc.ID}); err == nil {
		t.Error("CreateRun with a duplicate id")
	}
}

func TestListAndCountRuns(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	a := putScenario(t, db, "a", `{"a":1}`)
	b := putScenario(t, db, "b", `{"b":1}`)
	// 12 runs; i%2 picks the scenario, i%3 the algorithm, i%4 the status.
	algos := []string{"dcqcn", "hpcc", "timely"}
	statuses := []string{StatusQueued, StatusRunning, StatusDone, StatusFailed}
	var ids []string // oldest first
	for i := range 12 {
		sc := a
		if i%2 == 1 {
			sc = b
		}
		r := createRun(t, db, sc, i, func(r *Run) {
			r.Algorithm = algos[i%3]
			r.Status = statuses[i%4]
			r.Client = []string{"alice", "bob"}[i/6]
		})
		ids = append(ids, r.ID)
	}
	// Two runs created at the same time are ordered by id, descending.
	same := createRun(t, db, a, 11, func(r *Run) { r.ID = "ffffffffffffffff"; r.Algorithm = "same" })
	_ = same

	pick := func(keep func(i int) bool) []string {
		var out []string
		for i := 11; i >= 0; i-- {
			if keep(i) {
				out = append(out, ids[i])
			}
		}
		return out
	}
	tests := []struct {
		name string
		f    RunFilter
		want []string
	}{
		{"scenario a", RunFilter{ScenarioID: b.ID}, pick(func(i int) bool { return i%2 == 1 })},
		{"algorithm", RunFilter{Algorithm: "hpcc"}, pick(func(i int) bool { return i%3 == 1 })},
		{"status", RunFilter{Status: StatusDone}, pick(func(i int) bool { return i%4 == 2 })},
		{"client", RunFilter{Client: "bob"}, pick(func(i int) bool { return i >= 6 })},
		{"combined", RunFilter{ScenarioID: a.ID, Algorithm: "dcqcn", Client: "alice"}, pick(func(i int) bool { return i%2 == 0 && i%3 == 0 && i < 6 })},
		{"limit", RunFilter{Algorithm: "hpcc", Limit: 2}, pick(func(i int) bool { return i%3 == 1 })[:2]},
		{"offset", RunFilter{Algorithm: "hpcc", Limit: 2, Offset: 3}, pick(func(i int) bool { return i%3 == 1 })[3:]},
		{"none", RunFilter{Client: "carol"}, nil},
		{"all", RunFilter{}, append([]string{"ffffffffffffffff"}, pick(func(int) bool { return true })...)},
	}
	// ids[11] and "ffff..." share created_at: the larger id comes first.
	if ids[11] > "ffffffffffffffff" {
		t.Fatal("unlikely id")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			runs, err := db.ListRuns(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range runs {
				got = append(got, r.ID)
				if r.Scenario != nil || r.Summary != nil {
					t.Errorf("%s: scenario or summary filled in a list", r.ID)
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v\nwant %v", got, tt.want)
			}
			n, err := db.CountRuns(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			all := tt.f
			all.Limit, all.Offset = 1000, 0
			wantN, _ := db.ListRuns(ctx, all)
			if n != len(wantN) {
				t.Errorf("count %d, want %d", n, len(wantN))
			}
		})
	}
	// The default limit is 100.
	for i := range 100 {
		createRun(t, db, a, 100+i, nil)
	}
	runs, err := db.ListRuns(ctx, RunFilter{})
	if err != nil || len(runs) != 100 {
		t.Errorf("default limit: %d runs, %v", len(runs), err)
	}
}

func TestRunStatusTransitions(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	sc := putScenario(t, db, "s", `{}`)
	r := createRun(t, db, sc, 1, nil)
	get := func() *Run {
		t.Helper()
		g, err := db.GetRun(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	if g := get(); g.Status != StatusQueued || !g.StartedAt.IsZero() || !g.FinishedAt.IsZero() {
		t.Fatalf("new run %+v", g)
	}
	start := t0.Add(5 * time.Second)
	if err := db.StartRun(ctx, r.ID, start); err != nil {
		t.Fatal(err)
	}
	if g := get(); g.Status != StatusRunning || !g.StartedAt.Equal(start) {
		t.Fatalf("started run %+v", g)
	}
	steps := []struct{ status, msg string }{
		{StatusPaused, ""}, {StatusRunning, ""}, {StatusPaused, "held"}, {StatusRunning, ""},
	}
	for _, s := range steps {
		if err := db.SetStatus(ctx, r.ID, s.status, s.msg); err != nil {
			t.Fatal(err)
		}
		if g := get(); g.Status != s.status || g.Error != s.msg || !g.FinishedAt.IsZero() {
			t.Fatalf("after %s: %+v", s.status, g)
		}
	}
	if err := db.SetStatus(ctx, r.ID, StatusCancelled, "by the user"); err != nil {
		t.Fatal(err)
	}
	g := get()
	if g.Status != StatusCancelled || g.Error != "by the user" || g.FinishedAt.IsZero() {
		t.Fatalf("cancelled: %+v", g)
	}
	if err := db.SetStatus(ctx, r.ID, "bogus", ""); err == nil {
		t.Error("SetStatus accepted a bogus status")
	}
	for name, err := range map[string]error{
		"StartRun":  db.StartRun(ctx, "nope", start),
		"SetStatus": db.SetStatus(ctx, "nope", StatusPaused, ""),
		"SetPinned": db.SetPinned(ctx, "nope", true),
		"DeleteRun": db.DeleteRun(ctx, "nope"),
	} {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("%s of a missing run: %v", name, err)
		}
	}
	for _, pin := range []bool{true, false, true} {
		if err := db.SetPinned(ctx, r.ID, pin); err != nil {
			t.Fatal(err)
		}
		if get().Pinned != pin {
			t.Errorf("pinned %v", !pin)
		}
	}
}

func TestRunEvents(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	sc := putScenario(t, db, "s", `{}`)
	r := createRun(t, db, sc, 1, nil)
	other := createRun(t, db, sc, 2, nil)
	if evs, err := db.RunEvents(ctx, r.ID); err != nil || len(evs) != 0 {
		t.Fatalf("no events: %v %v", evs, err)
	}
	in := []struct {
		ev       RunEvent
		scenario string
		params   string
	}{
		{RunEvent{AtPS: 1000, Params: map[string]float64{"wq": 2}, Wall: t0}, `{"v":1}`, `{"wq":2,"wr":10}`},
		{RunEvent{Seq: 77, AtPS: 5000, Params: map[string]float64{"wr": 0.125, "wq": -1e300}, Wall: t0.Add(time.Second + 1)}, `{"v":2}`, `{"wq":-1e300,"wr":0.125}`},
		{RunEvent{AtPS: 9000, Params: nil, Wall: t0.Add(2 * time.Second)}, "", ""}, // nil: unchanged
	}
	for i, x := range in {
		var scen, params []byte
		if x.scenario != "" {
			scen, params = []byte(x.scenario), []byte(x.params)
		}
		if err := db.AddRunEvent(ctx, r.ID, x.ev, scen, params); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if err := db.AddRunEvent(ctx, other.ID, x.ev, nil, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	evs, err := db.RunEvents(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != len(in) {
		t.Fatalf("%d events, want %d", len(evs), len(in))
	}
	for i, ev := range evs {
		want := in[i].ev
		if ev.Seq != i+1 || ev.AtPS != want.AtPS || !ev.Wall.Equal(want.Wall) || len(ev.Params) != len(want.Params) {
			t.Errorf("event %d: %+v, want %+v with seq %d", i, ev, want, i+1)
		}
		for k, v := range want.Params {
			if ev.Params[k] != v {
				t.Errorf("event %d: %s = %v, want %v", i, k, ev.Params[k], v)
			}
		}
	}
	g, err := db.GetRun(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if string(g.Scenario) != `{"v":2}` || string(g.Params) != `{"wq":-1e300,"wr":0.125}` {
		t.Errorf("run scenario %s params %s, want the last event's", g.Scenario, g.Params)
	}
	if evs, err := db.RunEvents(ctx, other.ID); err != nil || len(evs) != 1 || evs[0].Seq != 1 {
		t.Errorf("other run: %v %v", evs, err)
	}
	if err := db.AddRunEvent(ctx, "nope", RunEvent{}, nil, nil); !errors.Is(err, ErrNotFound) {
		t.Errorf("AddRunEvent of a missing run: %v", err)
	}
	if _, err := db.RunEvents(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("RunEvents of a missing run: %v", err)
	}
	if err := db.AddRunEvent(ctx, r.ID, RunEvent{Params: map[string]float64{"x": math.NaN()}}, nil, nil); err == nil {
		t.Error("stored a NaN parameter, which JSON cannot hold")
	}
}

// testFlows are flows with every field set, extremes included.
var testFlows = []sim.FlowResult{
	{ID: 0, Src: "h0", Dst: "h1", Size: 1 << 20, Start: 0, Finish: 123456789, FCT: 123456789, IdealFCT: 100000000, Started: true, Finished: true, Algorithm: "dcqcn", Tag: "incast", Retx: 4096, Timeouts: 2},
	{ID: 1, Src: "h2", Dst: "h1", Size: math.MaxInt64, Start: -5, Finish: math.MinInt64, FCT: 0, IdealFCT: 1, Started: true, Finished: false, Algorithm: "hpcc", Retx: math.MaxInt64, Timeouts: math.MaxInt32},
	{ID: 7, Src: "", Dst: "é", Size: 0, Started: false, Finished: false, Algorithm: ""},
}

// recordSome returns the chunks of a few series of n points each.
func recordSome(rec *Recorder, series, n int, flush bool) []Chunk {
	for s := range series {
		idx := rec.Series("queue_bytes", string(rune('a'+s)), AggMax)
		for i := range n {
			rec.Add(idx, int64(i)*10_000_000, float64((i*s)%7*1000))
		}
	}
	return rec.Flush(flush)
}

func TestFinishRunAndCascade(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	sc := putScenario(t, db, "s", `{}`)
	r := createRun(t, db, sc, 1, nil)
	keep := createRun(t, db, sc, 2, nil)
	for _, run := range []*Run{r, keep} {
		rec := NewRecorder(100_000_000)
		if err := db.AppendSeries(ctx, run.ID, recordSome(rec, 3, 5000, false), Progress{Fraction: 0.5, SimPS: 7, Events: 9, WallSeconds: 0.25}); err != nil {
			t.Fatal(err)
		}
		g, err := db.GetRun(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if g.Progress != (Progress{Fraction: 0.5, SimPS: 7, Events: 9, WallSeconds: 0.25}) || g.Summary != nil {
			t.Errorf("after AppendSeries: %+v", g)
		}
		if err := db.AddRunEvent(ctx, run.ID, RunEvent{AtPS: 1}, nil, nil); err != nil {
			t.Fatal(err)
		}
		fin := Finish{
			Status: StatusDone, Error: "", At: t0.Add(time.Minute),
			Progress: Progress{Fraction: 1, SimPS: 50_000_000_000, Events: 1 << 40, WallSeconds: 3},
			Chunks:   rec.Flush(true), Flows: testFlows, Summary: []byte("{\n  \"x\": 1.50\n}\n"),
		}
		if err := db.FinishRun(ctx, run.ID, fin); err != nil {
			t.Fatal(err)
		}
		g, err = db.GetRun(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if g.Status != StatusDone || !g.FinishedAt.Equal(fin.At) || g.Progress != fin.Progress || string(g.Summary) != string(fin.Summary) {
			t.Errorf("finished run %+v", g)
		}
		flows, err := db.Flows(ctx, run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(flows, testFlows) {
			t.Errorf("flows\n%+v\nwant\n%+v", flows, testFlows)
		}
		ss, err := db.Series(ctx, run.ID, SeriesQuery{})
		if err != nil || len(ss) != 3 || len(ss[2].T) != 5000 {
			t.Errorf("series after finish: %d, %v", len(ss), err)
		}
	}

	rows := func(rid any) map[string]int {
		out := map[string]int{}
		for _, table := range []string{"chunks", "series", "flows", "run_events"} {
			out[table] = count(t, db, `SELECT count(*) FROM `+table+` WHERE run = (SELECT rid FROM runs WHERE id = ?)`, rid)
		}
		return out
	}
	var rid int64
	if err := db.sql.QueryRow(`SELECT rid FROM runs WHERE id = ?`, r.ID).Scan(&rid); err != nil {
		t.Fatal(err)
	}
	before := rows(r.ID)
	for table, n := range before {
		if n == 0 {
			t.Errorf("no %s rows before the delete", table)
		}
	}
	if err := db.DeleteRun(ctx, r.ID); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"chunks", "series", "flows", "run_events"} {
		if n := count(t, db, `SELECT count(*) FROM `+table+` WHERE run = ?`, rid); n != 0 {
			t.Errorf("%d %s rows left after the delete", n, table)
		}
	}
	if got := rows(keep.ID); !reflect.DeepEqual(got, before) {
		t.Errorf("the other run's rows %v, want %v", got, before)
	}
	if _, err := db.GetRun(ctx, r.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted run: %v", err)
	}
	if err := db.DeleteRun(ctx, r.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted twice: %v", err)
	}
	for name, err := range map[string]error{
		"FinishRun":    db.FinishRun(ctx, r.ID, Finish{Status: StatusDone}),
		"AppendSeries": db.AppendSeries(ctx, r.ID, nil, Progress{}),
	} {
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("%s of a missing run: %v", name, err)
		}
	}
	if _, err := db.Flows(ctx, r.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("Flows of a missing run: %v", err)
	}
	if err := db.FinishRun(ctx, keep.ID, Finish{Status: StatusRunning}); err == nil {
		t.Error("FinishRun with a non-terminal status")
	}
	if s, err := db.IntegrityCheck(ctx); err != nil || s != "ok" {
		t.Errorf("integrity %q %v", s, err)
	}
}

func TestFinishRunIsOneTransaction(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	sc := putScenario(t, db, "s", `{}`)
	r := createRun(t, db, sc, 1, nil)
	rec := NewRecorder(1000)
	chunks := recordSome(rec, 2, 100, true)
	// Two flows with the same id: the second insert fails, and nothing of
	// the finish may stay.
	err := db.FinishRun(ctx, r.ID, Finish{Status: StatusDone, Chunks: chunks, Flows: []sim.FlowResult{{ID: 1}, {ID: 1}}, Summary: []byte("{}")})
	if err == nil {
		t.Fatal("FinishRun stored a duplicate flow")
	}
	g, err := db.GetRun(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if g.Status != StatusQueued || g.Summary != nil || !g.FinishedAt.IsZero() {
		t.Errorf("a failed finish left %+v", g)
	}
	for _, table := range []string{"chunks", "series", "flows"} {
		if n := count(t, db, `SELECT count(*) FROM `+table); n != 0 {
			t.Errorf("a failed finish left %d %s rows", n, table)
		}
	}
	// Chunks that do not decode are refused before anything is written.
	bad := []Chunk{{Series: 0, Level: 0, N: 5, Data: []byte{1, 0, 0}}}
	if err := db.AppendSeries(ctx, r.ID, bad, Progress{}); err == nil {
		t.Error("AppendSeries took a chunk whose data has 1 point, N 5")
	}
	bad = []Chunk{{Series: 0, Level: 2, N: 1, Data: chunks[0].Data}}
	if err := db.AppendSeries(ctx, r.ID, bad, Progress{}); err == nil {
		t.Error("AppendSeries took level 2")
	}
}

func TestMarkInterrupted(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	sc := putScenario(t, db, "s", `{}`)
	var want []string
	was := map[string]string{} // id -> status
	statuses := []string{StatusDone, StatusPaused, StatusQueued, StatusFailed, StatusRunning, StatusCancelled, StatusInterrupted}
	for i, st := range statuses {
		r := createRun(t, db, sc, i, func(r *Run) { r.Status = st; r.Error = "before" })
		was[r.ID] = st
		if !Terminal(st) {
			want = append(want, r.ID)
		}
	}
	before := time.Now()
	ids, err := db.MarkInterrupted(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids, want) {
		t.Errorf("ids %v, want %v", ids, want)
	}
	runs, err := db.ListRuns(ctx, RunFilter{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		if !Terminal(was[r.ID]) {
			if r.Status != StatusInterrupted || r.Error != interruptedError || r.FinishedAt.Before(before.Add(-time.Second)) {
				t.Errorf("interrupted run %+v", r)
			}
		} else if r.Status != was[r.ID] || r.Error != "before" || !r.FinishedAt.IsZero() {
			t.Errorf("finished run changed: %+v, was %s", r, was[r.ID])
		}
	}
	if ids, err := db.MarkInterrupted(ctx); err != nil || len(ids) != 0 {
		t.Errorf("second MarkInterrupted: %v %v", ids, err)
	}
}

func TestPruneByCount(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	sc := putScenario(t, db, "s", `{}`)
	// Oldest first: done, pinned done, running, failed, done, cancelled,
	// queued, interrupted.
	type spec struct {
		status string
		pinned bool
	}
	specs := []spec{{StatusDone, false}, {StatusDone, true}, {StatusRunning, false}, {StatusFailed, false},
		{StatusDone, false}, {StatusCancelled, false}, {StatusQueued, false}, {StatusInterrupted, false}}
	var ids []string
	for i, s := range specs {
		ids = append(ids, createRun(t, db, sc, i, func(r *Run) { r.Status = s.status; r.Pinned = s.pinned }).ID)
	}
	tests := []struct {
		maxRuns int
		want    []string
		left    int
	}{
		{0, nil, 8},                              // no limit
		{8, nil, 8},                              // at the limit
		{6, []string{ids[0], ids[3]}, 6},         // the two oldest prunable
		{6, nil, 6},                              // again: nothing
		{1, []string{ids[4], ids[5], ids[7]}, 3}, // the rest that may go; pinned, running and queued stay
	}
	for _, tt := range tests {
		got, err := db.Prune(ctx, tt.maxRuns, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, tt.want) {
			t.Errorf("Prune(%d): %v, want %v", tt.maxRuns, got, tt.want)
		}
		if n, _ := db.CountRuns(ctx, RunFilter{}); n != tt.left {
			t.Errorf("Prune(%d): %d runs left, want %d", tt.maxRuns, n, tt.left)
		}
	}
	for _, i := range []int{1, 2, 6} {
		if _, err := db.GetRun(ctx, ids[i]); err != nil {
			t.Errorf("run %d (%v) was pruned: %v", i, specs[i], err)
		}
	}
}

func TestPruneBySize(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	sc := putScenario(t, db, "s", `{}`)
	// Ten finished runs of ~100 k points of noise each (~800 kB), one of
	// them pinned and one still running.
	var ids []string
	for i := range 10 {
		r := createRun(t, db, sc, i, func(r *Run) {
			r.Status = StatusDone
			r.Pinned = i == 1
			if i == 2 {
				r.Status = StatusRunning
			}
		})
		ids = append(ids, r.ID)
		rec := NewRecorder(1_000_000)
		idx := rec.Series("noise", "x", AggMean)
		for k := range 100_000 {
			rec.Add(idx, int64(k)*1000, math.Float64frombits(uint64(k)*0x9E3779B97F4A7C15))
		}
		if err := db.AppendSeries(ctx, r.ID, rec.Flush(true), Progress{}); err != nil {
			t.Fatal(err)
		}
	}
	pages := func() int { return count(t, db, `PRAGMA page_count`) }
	size0, err := db.SizeBytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pages0 := pages()
	limit := size0 / 2
	deleted, err := db.Prune(ctx, 0, limit)
	if err != nil {
		t.Fatal(err)
	}
	size1, err := db.SizeBytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pages1 := pages()
	t.Logf("size %d -> %d bytes (limit %d), pages %d -> %d, deleted %d runs", size0, size1, limit, pages0, pages1, len(deleted))
	if size1 > limit {
		t.Errorf("size %d over the limit %d", size1, limit)
	}
	if len(deleted) < 4 || len(deleted) > 6 {
		t.Errorf("deleted %d runs, want about half", len(deleted))
	}
	// Oldest first, skipping the pinned and the running one.
	want := slices.DeleteFunc(slices.Clone(ids), func(id string) bool { return id == ids[1] || id == ids[2] })[:len(deleted)]
	if !slices.Equal(deleted, want) {
		t.Errorf("deleted %v, want %v", deleted, want)
	}
	// The file gives the space back: the pages are gone, not free.
	if free := count(t, db, `PRAGMA freelist_count`); free != 0 {
		t.Errorf("%d free pages after the incremental vacuum", free)
	}
	if float64(pages1) > 0.6*float64(pages0) {
		t.Errorf("pages %d -> %d: the file did not shrink", pages0, pages1)
	}
	// A limit below what pinned and unfinished runs take deletes every other
	// run and stops.
	deleted, err = db.Prune(ctx, 0, 1)
	if err != nil {
		t.Fatal(err)
	}
	if n, _ := db.CountRuns(ctx, RunFilter{}); n != 2 {
		t.Errorf("%d runs left (deleted %v), want the pinned and the running one", n, deleted)
	}
	if s, err := db.IntegrityCheck(ctx); err != nil || s != "ok" {
		t.Errorf("integrity %q %v", s, err)
	}
}
