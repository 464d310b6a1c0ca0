package server

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The class view of a shared scenario: runs of it and of copies edited from
// it (POST /api/scenarios?parent=), with the students' labels; the
// instructor sees everyone's, a student their own.
func TestClassViewOfScenario(t *testing.T) {
	const instructor = "teach-cv"
	s := newTestServer(t, Config{InstructorToken: instructor, Concurrency: 2})
	ada, grace, instr, _ := requesters(t, s, instructor)

	var base, cp struct{ ID string }
	s.must(http.StatusCreated, "POST", "/api/scenarios", smallScenario("class base", "dcqcn", "2ms"), &base, instr.headers...)
	edited := smallScenario("class base", "dcqcn", "3ms")
	s.must(http.StatusCreated, "POST", "/api/scenarios?parent="+base.ID, edited, &cp, ada.headers...)
	if code, body := s.do("POST", "/api/scenarios?parent=nope", smallScenario("x", "dcqcn", "4ms"), ada.headers...); code != 422 || !strings.Contains(string(body), `"parent"`) {
		t.Errorf("unknown parent: %d %s", code, body)
	}
	var got struct{ Parent string }
	s.must(200, "GET", "/api/scenarios/"+cp.ID, nil, &got)
	if got.Parent != base.ID {
		t.Errorf("the copy's parent: %q", got.Parent)
	}
	// storing the base again "edited from" its copy makes no cycle
	s.must(200, "POST", "/api/scenarios?parent="+cp.ID, smallScenario("class base", "dcqcn", "2ms"), nil, instr.headers...)
	got.Parent = ""
	s.must(200, "GET", "/api/scenarios/"+base.ID, nil, &got)
	if got.Parent != "" {
		t.Errorf("the base's parent: %q", got.Parent)
	}
	r1 := s.startRun(map[string]any{"scenarioId": cp.ID, "label": "  Ada  "})
	_ = r1
	var created struct{ ID string }
	s.must(http.StatusCreated, "POST", "/api/runs", map[string]any{"scenarioId": base.ID, "label": "Grace"}, &created, grace.headers...)
	s.must(http.StatusCreated, "POST", "/api/runs", map[string]any{"scenarioId": cp.ID, "label": "Ada"}, &created, ada.headers...)
	adaRun := created.ID
	// a run of another scenario is not in the view
	s.must(http.StatusCreated, "POST", "/api/runs", map[string]any{"scenario": smallScenario("other", "dcqcn", "2ms")}, nil, ada.headers...)
	if code, body := s.do("POST", "/api/runs", map[string]any{"scenarioId": base.ID, "label": strings.Repeat("x", 61)}, ada.headers...); code != 422 || !strings.Contains(string(body), `"label"`) {
		t.Errorf("long label: %d %s", code, body)
	}

	var view struct {
		All  bool
		Sort string
		Runs []struct {
			ID, ScenarioID, Label, Status string
			Edited, Mine                  bool
			Metrics                       map[string]*float64
			CDF                           [][2]float64
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		s.must(200, "GET", "/api/scenarios/"+base.ID+"/class", nil, &view, instr.headers...)
		done := len(view.Runs) == 3
		for _, r := range view.Runs {
			done = done && r.Status == "done"
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("class view never finished: %+v", view)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !view.All || view.Sort != "newest" {
		t.Errorf("instructor view: all %v sort %q", view.All, view.Sort)
	}
	if view.Runs[0].ID != adaRun || view.Runs[0].Label != "Ada" || !view.Runs[0].Edited || view.Runs[1].Label != "Grace" || view.Runs[1].Edited || view.Runs[2].Label != "Ada" {
		t.Errorf("runs (newest first): %+v", view.Runs)
	}
	for _, r := range view.Runs {
		if r.Metrics["p99"] == nil || r.Metrics["p50"] == nil || r.Metrics["goodput"] == nil || len(r.CDF) == 0 || r.CDF[len(r.CDF)-1][1] != 1 {
			t.Errorf("run %s: metrics %v cdf %v", r.ID, r.Metrics, r.CDF)
		}
	}
	// sorted by p99, lowest first
	s.must(200, "GET", "/api/scenarios/"+base.ID+"/class?sort=p99", nil, &view, instr.headers...)
	for i := 1; i < len(view.Runs); i++ {
		if *view.Runs[i-1].Metrics["p99"] > *view.Runs[i].Metrics["p99"] {
			t.Errorf("not sorted by p99: %v then %v", *view.Runs[i-1].Metrics["p99"], *view.Runs[i].Metrics["p99"])
		}
	}
	if code, _ := s.do("GET", "/api/scenarios/"+base.ID+"/class?sort=bogus", nil); code != 400 {
		t.Errorf("unknown sort: %d", code)
	}
	// a student sees their own runs only
	s.must(200, "GET", "/api/scenarios/"+base.ID+"/class", nil, &view, grace.headers...)
	if view.All || len(view.Runs) != 1 || view.Runs[0].Label != "Grace" || !view.Runs[0].Mine {
		t.Errorf("grace's view: %+v", view)
	}
	// the page
	code, page := s.do("GET", "/s/"+base.ID+"/class?sort=p99", nil, instr.headers...)
	if code != 200 || !strings.Contains(string(page), "Grace") || !strings.Contains(string(page), `id="classview-cdf"`) || !strings.Contains(string(page), `aria-sort="ascending"`) {
		t.Errorf("page: %d", code)
	}
	code, page = s.do("GET", "/s/"+base.ID+"/class", nil, grace.headers...)
	if code != 200 || strings.Contains(string(page), ">Ada<") {
		t.Errorf("grace's page shows Ada's run (%d)", code)
	}
}

// A pinned exercise: only an instructor pins it; runs of the scenario, or
// of copies edited from it, that change a locked field are refused, naming
// the field.
func TestExerciseLocksFields(t *testing.T) {
	const instructor = "teach-ex"
	s := newTestServer(t, Config{InstructorToken: instructor})
	student, _, instr, _ := requesters(t, s, instructor)

	var base struct{ ID string }
	s.must(http.StatusCreated, "POST", "/api/scenarios", smallScenario("exercise", "dcqcn", "2ms"), &base, instr.headers...)
	pin := map[string]any{"locked": []string{"topology", "cc.algorithm"}, "task": "Tune DCQCN for the lowest p99."}
	if code, _ := s.do("PUT", "/api/scenarios/"+base.ID+"/exercise", pin, student.headers...); code != 401 {
		t.Errorf("a student pins: %d", code)
	}
	var e apiErr
	if code, body := s.do("PUT", "/api/scenarios/"+base.ID+"/exercise", map[string]any{"locked": []string{"topology", "nothing.here"}}, instr.headers...); code != 422 {
		t.Errorf("unknown field: %d %s", code, body)
	} else if decodeTo(t, body, &e); e.Field != "locked[1]" {
		t.Errorf("unknown field named %q", e.Field)
	}
	var ex struct {
		ScenarioID, Task string
		Locked           []string
	}
	s.must(200, "PUT", "/api/scenarios/"+base.ID+"/exercise", pin, &ex, instr.headers...)

	// a copy that changes a locked field: stored, but its runs are refused
	changed := smallScenario("exercise", "dcqcn", "2ms")
	changed["topology"].(map[string]any)["hostLink"].(map[string]any)["rate"] = "25Gbps"
	var cp struct{ ID string }
	s.must(http.StatusCreated, "POST", "/api/scenarios?parent="+base.ID, changed, &cp, student.headers...)
	s.must(200, "GET", "/api/scenarios/"+cp.ID+"/exercise", nil, &ex, student.headers...)
	if ex.ScenarioID != base.ID || ex.Task != pin["task"] || len(ex.Locked) != 2 {
		t.Errorf("inherited exercise: %+v", ex)
	}
	code, body := s.do("POST", "/api/runs", map[string]any{"scenarioId": cp.ID}, student.headers...)
	if code != 422 {
		t.Fatalf("run of a copy changing the topology: %d %s", code, body)
	}
	if decodeTo(t, body, &e); e.Field != "topology" || !strings.Contains(e.Error, "locked") {
		t.Errorf("refusal: %s", body)
	}
	// the algorithm, through the run's own cc override
	code, body = s.do("POST", "/api/runs", map[string]any{"scenarioId": base.ID, "cc": map[string]any{"algorithm": "hpcc"}}, student.headers...)
	if decodeTo(t, body, &e); code != 422 || e.Field != "cc.algorithm" {
		t.Errorf("cc override: %d %s", code, body)
	}
	// a sweep of the exercise over a locked field is refused, naming the
	// field and the point; over a free field it starts
	code, body = s.do("POST", "/api/sweeps", map[string]any{"scenarioId": base.ID, "grid": []string{"topology.hostLink.rate=10Gbps,25Gbps"}}, student.headers...)
	if decodeTo(t, body, &e); code != 422 || e.Field != "topology" || !strings.Contains(e.Error, "point topology.hostLink.rate=25Gbps") {
		t.Errorf("sweep over a locked field: %d %s", code, body)
	}
	s.must(http.StatusCreated, "POST", "/api/sweeps", map[string]any{"scenarioId": base.ID, "grid": []string{"cc.params.g=0.01,0.02"}}, nil, student.headers...)
	// a copy that changes only what the exercise is about runs
	free := smallScenario("exercise", "dcqcn", "3ms")
	free["cc"].(map[string]any)["params"] = map[string]any{"g": 0.01}
	var ok struct{ ID string }
	s.must(http.StatusCreated, "POST", "/api/scenarios?parent="+base.ID, free, &ok, student.headers...)
	freeRun := s.startRun(map[string]any{"scenarioId": ok.ID})
	// a live change of a locked parameter is refused too
	s.must(200, "PUT", "/api/scenarios/"+ok.ID+"/exercise", map[string]any{"locked": []string{"cc.params.g"}}, nil, instr.headers...)
	code, body = s.do("POST", "/api/runs/"+freeRun+"/params", map[string]any{"g": 0.5}, instr.headers...)
	if decodeTo(t, body, &e); code != 422 || e.Field != "g" {
		t.Errorf("live change of a locked parameter: %d %s", code, body)
	}
	s.must(http.StatusNoContent, "DELETE", "/api/scenarios/"+ok.ID+"/exercise", nil, nil, instr.headers...)
	// unpinned: the copy runs
	s.must(http.StatusNoContent, "DELETE", "/api/scenarios/"+base.ID+"/exercise", nil, nil, instr.headers...)
	s.must(http.StatusCreated, "POST", "/api/runs", map[string]any{"scenarioId": cp.ID}, nil, student.headers...)
	if code, _ := s.do("GET", "/api/scenarios/"+cp.ID+"/exercise", nil); code != 404 {
		t.Errorf("exercise after unpinning: %d", code)
	}
}

func decodeTo(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("%v in %s", err, data)
	}
}
