package server

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cclab/store"
)

// waitSweep polls a sweep until its status is want.
func (s *testServer) waitSweep(id, want string, timeout time.Duration) sweepJSON {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var v sweepJSON
		s.must(http.StatusOK, "GET", "/api/sweeps/"+id, nil, &v)
		if v.Status == want {
			return v
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("sweep %s is %s after %v (%d of %d runs done), want %s", id, v.Status, timeout, v.RunsDone, v.RunsTotal, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A 2 × 2 grid with 2 seeds runs 8 ordinary runs, each with its point's
// values and its seed; the sweep's points carry every metric's mean and
// confidence interval over their seeds; sweep.csv has a header and one
// row per point; the runs are the sweep's (linked) and their owner's.
func TestSweepRuns(t *testing.T) {
	s := newTestServer(t, Config{Concurrency: 2})
	sc := smallScenario("sw", "dcqcn", "")
	var created struct {
		ID    string
		Links map[string]string
	}
	s.must(http.StatusCreated, "POST", "/api/sweeps", map[string]any{"scenario": sc,
		"grid": []string{"cc.params.ai=5,40", "workload[0].size=50KB,200KB"}, "seeds": "1-2"}, &created)
	if created.Links["page"] != "/sweeps/"+created.ID {
		t.Errorf("links %v", created.Links)
	}
	v := s.waitSweep(created.ID, store.SweepDone, 60*time.Second)
	if v.RunsTotal != 8 || v.RunsDone != 8 || v.RunsFailed != 0 || len(v.Points) != 4 || len(v.Metrics) == 0 || !v.Mine {
		t.Fatalf("sweep %+v", v)
	}
	wantValues := [][]string{{"5", "50KB"}, {"5", "200KB"}, {"40", "50KB"}, {"40", "200KB"}}
	for i, p := range v.Points {
		if fmt.Sprint(p.Values) != fmt.Sprint(wantValues[i]) || p.Done != 2 || len(p.Runs) != 2 {
			t.Errorf("point %d: %+v", i, p.PointResult)
		}
		fct, ok := p.Metrics["fct_p99"]
		if !ok || fct.N != 2 || !(fct.Lo <= fct.Mean && fct.Mean <= fct.Hi) || fct.Mean < 1 {
			t.Errorf("point %d fct_p99 %+v", i, fct)
		}
		for k, id := range p.Runs {
			var r runJSON
			s.must(http.StatusOK, "GET", "/api/runs/"+id, nil, &r)
			if r.Seed != uint64(k+1) || r.Status != store.StatusDone || !r.Mine {
				t.Errorf("point %d seed %d: run %+v", i, k+1, r)
			}
			var params map[string]float64
			if err := json.Unmarshal(r.Params, &params); err != nil || fmt.Sprint(params["ai"]) != p.Values[0] {
				t.Errorf("point %d: run params %s, want ai %s", i, r.Params, p.Values[0])
			}
			if r.Sweep != created.ID || r.Links["sweep"] != "/api/sweeps/"+created.ID {
				t.Errorf("run %s is of sweep %q (%v)", id, r.Sweep, r.Links)
			}
		}
	}
	// bigger messages take longer: the FCT p99's mean grows with the size
	if a, b := v.Points[0].Metrics["fct_mean"].Mean, v.Points[1].Metrics["fct_mean"].Mean; !(a > 0 && b > 0) {
		t.Errorf("fct_mean %v %v", a, b)
	}
	code, data := s.do("GET", "/api/sweeps/"+created.ID+"/sweep.csv", nil)
	rows, err := csv.NewReader(strings.NewReader(string(data))).ReadAll()
	if code != 200 || err != nil || len(rows) != 5 {
		t.Fatalf("sweep.csv: %d %v %d rows\n%s", code, err, len(rows), data)
	}
	if rows[0][0] != "cc.params.ai" || rows[0][1] != "workload[0].size" || rows[1][0] != "5" || rows[4][1] != "200KB" {
		t.Errorf("sweep.csv header %v, rows %v", rows[0], rows[1:])
	}
	var js struct {
		Points []struct{ Runs []string }
		Spec   struct{ Seeds []int }
	}
	s.must(200, "GET", "/api/sweeps/"+created.ID+"/sweep.json", nil, &js)
	if len(js.Points) != 4 || len(js.Points[3].Runs) != 2 || fmt.Sprint(js.Spec.Seeds) != "[1 2]" {
		t.Errorf("sweep.json %+v", js)
	}
	var list struct{ Sweeps []sweepJSON }
	s.must(200, "GET", "/api/sweeps", nil, &list)
	if len(list.Sweeps) != 1 || list.Sweeps[0].ID != created.ID || list.Sweeps[0].Points != nil || list.Sweeps[0].RunsDone != 8 {
		t.Errorf("list %+v", list)
	}
}

// Everything is checked before anything runs: a bad grid, seeds or value
// is a 422 naming the field; a grid over max-sweep-runs names the limit;
// an owner's running sweeps are bounded; nothing was stored.
func TestSweepRefusals(t *testing.T) {
	s := newTestServer(t, Config{Concurrency: 1, MaxSweepRuns: 6, MaxOwnerSweeps: 1})
	sc := smallScenario("sw", "dcqcn", "")
	for _, tc := range []struct {
		name  string
		body  map[string]any
		field string
		limit string
	}{
		{"no grid", map[string]any{"scenario": sc}, "axes", ""},
		{"grid without =", map[string]any{"scenario": sc, "grid": []string{"cc.params.ai"}}, "grid[0]", ""},
		{"bad range", map[string]any{"scenario": sc, "grid": []string{"cc.params.ai=5:1:1"}}, "grid[0]", ""},
		{"bad seeds", map[string]any{"scenario": sc, "grid": []string{"cc.params.ai=5"}, "seeds": "3-1"}, "seeds", ""},
		{"bad seed list", map[string]any{"scenario": sc, "grid": []string{"cc.params.ai=5"}, "seeds": []int{0}}, "seeds", ""},
		{"a value the scenario refuses", map[string]any{"scenario": sc, "grid": []string{"cc.params.ai=5,-3"}}, "axes[0].values", ""},
		{"a path the scenario refuses", map[string]any{"scenario": sc, "grid": []string{"cc.params.nosuch=1"}}, "axes[0].values", ""},
		{"too many runs", map[string]any{"scenario": sc, "grid": []string{"cc.params.ai=1,2,3,4"}, "seeds": "1-2"}, "axes", "max-sweep-runs"},
		{"no scenario", map[string]any{"grid": []string{"cc.params.ai=1"}}, "scenarioId", ""},
		{"unknown scenario", map[string]any{"scenarioId": "nope", "grid": []string{"cc.params.ai=1"}}, "scenarioId", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, data := s.do("POST", "/api/sweeps", tc.body)
			var e apiErr
			_ = json.Unmarshal(data, &e)
			if code != http.StatusUnprocessableEntity || e.Field != tc.field || e.Limit != tc.limit {
				t.Errorf("%d field %q limit %q, want 422 %q %q: %s", code, e.Field, e.Limit, tc.field, tc.limit, data)
			}
		})
	}
	if list, _ := s.db.ListSweeps(context.Background(), ""); len(list) != 0 {
		t.Fatalf("refused sweeps were stored: %d", len(list))
	}
	// one running sweep per owner here; a second waits for the first
	slow := smallScenario("slow", "dcqcn", "")
	s.must(http.StatusCreated, "POST", "/api/sweeps", map[string]any{"scenario": slow, "grid": []string{"cc.params.ai=1,2,3"}, "seeds": "1-2"}, nil)
	code, data := s.do("POST", "/api/sweeps", map[string]any{"scenario": slow, "grid": []string{"cc.params.ai=4"}})
	var e apiErr
	_ = json.Unmarshal(data, &e)
	if code != http.StatusTooManyRequests || e.Limit != "max-owner-sweeps" {
		t.Errorf("second sweep: %d %s", code, data)
	}
}

// Only the owner (or an instructor) cancels or deletes a sweep; cancelling
// stops new runs and cancels live ones but keeps finished points; deleting
// takes the runs with it.
func TestSweepCancelAndDelete(t *testing.T) {
	const instructor = "teach"
	s := newTestServer(t, Config{Concurrency: 1, InstructorToken: instructor})
	var alice, bob struct{ Token string }
	s.must(201, "POST", "/api/token", nil, &alice)
	s.must(201, "POST", "/api/token", nil, &bob)
	// slow runs (paced) so that the sweep is still going when cancelled
	sc := smallScenario("long", "dcqcn", "")
	sc["workload"].([]any)[0].(map[string]any)["size"] = "20MB"
	var created struct{ ID string }
	s.must(201, "POST", "/api/sweeps", map[string]any{"scenario": sc, "grid": []string{"cc.params.ai=5,10,20,40"}, "seeds": "1-2"},
		&created, "X-Cclab-Token", alice.Token)
	id := created.ID
	if code, _ := s.do("POST", "/api/sweeps/"+id+"/cancel", nil, "X-Cclab-Token", bob.Token); code != http.StatusForbidden {
		t.Errorf("bob cancels alice's sweep: %d", code)
	}
	if code, _ := s.do("DELETE", "/api/sweeps/"+id, nil, "X-Cclab-Token", bob.Token); code != http.StatusForbidden {
		t.Errorf("bob deletes alice's sweep: %d", code)
	}
	// wait for the first run to finish, then cancel
	deadline := time.Now().Add(60 * time.Second)
	for {
		var v sweepJSON
		s.must(200, "GET", "/api/sweeps/"+id, nil, &v, "X-Cclab-Token", bob.Token)
		if v.Mine {
			t.Fatal("bob's view says the sweep is his")
		}
		if v.RunsDone >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no run finished")
		}
		time.Sleep(20 * time.Millisecond)
	}
	var v sweepJSON
	s.must(200, "POST", "/api/sweeps/"+id+"/cancel", nil, &v, "X-Cclab-Token", alice.Token)
	if v.Status != store.SweepCancelled || v.RunsDone < 1 || v.RunsLive != 0 || v.RunsDone+v.RunsFailed+countPending(v) != 8 {
		t.Fatalf("after cancel: %+v", v)
	}
	time.Sleep(3 * sweepTick)
	var again sweepJSON
	s.must(200, "GET", "/api/sweeps/"+id, nil, &again)
	if again.RunsDone+again.RunsFailed != v.RunsDone+v.RunsFailed || again.RunsLive != 0 {
		t.Errorf("runs went on after cancel: %+v then %+v", v, again)
	}
	var runIDs []string
	for _, p := range again.Points {
		for _, r := range p.Runs {
			if r != "" {
				runIDs = append(runIDs, r)
			}
		}
	}
	s.must(http.StatusNoContent, "DELETE", "/api/sweeps/"+id, nil, nil, "Authorization", "Bearer "+instructor)
	if code, _ := s.do("GET", "/api/sweeps/"+id, nil); code != http.StatusNotFound {
		t.Errorf("deleted sweep: %d", code)
	}
	for _, r := range runIDs {
		if code, _ := s.do("GET", "/api/runs/"+r, nil); code != http.StatusNotFound {
			t.Errorf("a deleted sweep's run %s: %d", r, code)
		}
	}
}

func countPending(v sweepJSON) int {
	n := 0
	for _, p := range v.Points {
		for _, st := range p.Statuses {
			if st == "pending" {
				n++
			}
		}
	}
	return n
}

// A server stopped mid-sweep leaves it running; the next start resumes it:
// the runs the stop interrupted run again (their interrupted records
// deleted), and the sweep completes with one done run per point and seed.
func TestSweepResumesAfterRestart(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "lab.db")
	open := func() (*Server, *store.DB, *testServer) {
		db, err := store.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		srv, err := New(ctx, db, Config{Concurrency: 1, Class: &ClassLimits{ClientRuns: 8}, FlushEvery: 50 * time.Millisecond,
			Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err != nil {
			t.Fatal(err)
		}
		return srv, db, &testServer{t: t, srv: srv, db: db}
	}
	srv, db, _ := open()
	sc := smallScenario("resume", "dcqcn", "")
	sc["workload"].([]any)[0].(map[string]any)["size"] = "20MB"
	req := &runSweepRequest{Grid: []string{"cc.params.ai=5,10,20"}, Seeds: []byte(`"1-2"`)}
	doc, _ := json.Marshal(sc)
	req.Scenario = doc
	hr, _ := http.NewRequest("POST", "/api/sweeps", nil)
	sw, err := srv.createSweep(hr, req)
	if err != nil {
		t.Fatal(err)
	}
	// stop as soon as one run is done and the next is under way
	deadline := time.Now().Add(60 * time.Second)
	for {
		rows, err := db.SweepRuns(ctx, sw.ID, false)
		if err != nil {
			t.Fatal(err)
		}
		done, live := 0, 0
		for _, x := range rows {
			switch x.Status {
			case store.StatusDone:
				done++
			case store.StatusQueued, store.StatusRunning:
				live++
			}
		}
		if done >= 1 && live >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no run finished")
		}
		time.Sleep(10 * time.Millisecond)
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	srv.Shutdown(sctx) // no grace: the running run is interrupted
	cancel()
	before, _ := db.SweepRuns(ctx, sw.ID, false)
	interrupted := map[string]bool{}
	for _, x := range before {
		if x.Status == store.StatusInterrupted {
			interrupted[x.Run] = true
		}
	}
	if got, _ := db.GetSweep(ctx, sw.ID); got.Status != store.SweepRunning {
		t.Fatalf("a stopped server's sweep is %s", got.Status)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	srv, db, _ = open()
	defer func() {
		srv.Shutdown(ctx)
		db.Close()
	}()
	deadline = time.Now().Add(90 * time.Second)
	for {
		got, err := db.GetSweep(ctx, sw.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status == store.SweepDone {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the resumed sweep is still %s", got.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
	rows, _ := db.SweepRuns(ctx, sw.ID, false)
	if len(rows) != 6 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, x := range rows {
		if x.Status != store.StatusDone || interrupted[x.Run] {
			t.Errorf("point %d seed %d: run %s %s", x.Point, x.Seed, x.Run, x.Status)
		}
	}
	for id := range interrupted {
		if _, err := db.GetRun(ctx, id); err == nil {
			t.Errorf("the interrupted run %s is still stored beside its replacement", id)
		}
	}
	if len(interrupted) == 0 {
		t.Error("the stop interrupted no run: the test did not exercise the resume")
	}
	t.Logf("%d runs were interrupted by the stop and ran again", len(interrupted))
}
