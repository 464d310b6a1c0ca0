package server

import (
	"context"
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"cclab/scenarios/repro"
)

// A reproduction run in the lab: its runs are ordinary runs, and the rows
// evaluated from what the store holds of them are the rows the CLI's
// report has for the same experiment (the store keeps every sample).
func TestReproductionInTheLab(t *testing.T) {
	s := newTestServer(t, Config{ClientRuns: 1, Concurrency: 1})
	// bad input: the valid experiments are listed
	code, data := s.do("POST", "/api/reproductions", map[string]any{"experiment": "mpcc-exp9"})
	checkError(t, code, data, http.StatusUnprocessableEntity, "experiment", "")
	if !strings.Contains(string(data), "mpcc-exp1, mpcc-horizon") && !strings.Contains(string(data), "mpcc-exp1") {
		t.Errorf("the error does not list the experiments: %s", data)
	}
	code, data = s.do("POST", "/api/reproductions", `{"experiment": 3}`)
	checkError(t, code, data, http.StatusUnprocessableEntity, "experiment", "")

	type reproJSON struct {
		ID           string
		Reproduction *struct {
			ID, Status  string
			Done, Total int
			Runs        []struct{ Key, Run, Status string }
			Rows        []json.RawMessage
			Figures     []string
		}
	}
	var first, again reproJSON
	// a run at full speed holds the server's one slot, so the
	// reproduction's runs (0.03 s each) are still queued when it is
	// pressed again (without it they could all finish in between, and the
	// second press rightly start a new one)
	busy := map[string]any{"name": "busy", "duration": "1s",
		"topology": map[string]any{"kind": "dumbbell", "senders": 4, "hostLink": map[string]any{"rate": "100Gbps", "delay": "1us"}},
		"cc":       map[string]any{"algorithm": "dcqcn"},
		"workload": []any{map[string]any{"kind": "poisson", "load": 0.5, "cdf": "websearch",
			"hosts": []string{"h0", "h1", "h2", "h3", "r0"}, "from": "0s", "until": "1s"}}}
	blocker := s.startRun(map[string]any{"scenario": busy})
	s.waitStatus(blocker, 10*time.Second, "running")
	// three runs, more than this server's per-client limit of one (which
	// the busy run already uses): a reproduction is not counted against it
	s.must(http.StatusCreated, "POST", "/api/reproductions", map[string]any{"experiment": "mpcc-exp1", "quick": true}, &first)
	if first.Reproduction == nil || first.Reproduction.Total != 3 {
		t.Fatalf("reproduction %+v", first.Reproduction)
	}
	// pressed again while it runs: the same one
	s.must(http.StatusOK, "POST", "/api/reproductions", map[string]any{"experiment": "mpcc-exp1", "quick": true}, &again)
	if again.Reproduction.ID != first.Reproduction.ID {
		t.Errorf("a second start made %s beside %s", again.Reproduction.ID, first.Reproduction.ID)
	}
	s.must(http.StatusOK, "POST", "/api/runs/"+blocker+"/cancel", nil, nil)
	for _, r := range first.Reproduction.Runs {
		s.waitStatus(r.Run, time.Minute, "done")
	}
	var got reproJSON
	s.must(http.StatusOK, "GET", "/api/reproductions/"+first.Reproduction.ID, nil, &got)
	if got.Reproduction.Status != "done" || got.Reproduction.Done != 3 {
		t.Fatalf("after the runs: %+v", got.Reproduction)
	}
	// the same rows as the CLI's
	rep, err := repro.Execute(context.Background(), []*repro.Experiment{repro.Lookup("mpcc-exp1")}, repro.Options{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	var want []json.RawMessage
	for _, r := range rep.Rows() {
		b, _ := json.Marshal(r)
		want = append(want, b)
	}
	if len(got.Reproduction.Rows) != len(want) {
		t.Fatalf("%d rows from the lab, %d from the CLI", len(got.Reproduction.Rows), len(want))
	}
	for i := range want {
		var a, b any
		json.Unmarshal(got.Reproduction.Rows[i], &a)
		json.Unmarshal(want[i], &b)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("row %d:\n  lab %s\n  cli %s", i, got.Reproduction.Rows[i], want[i])
		}
	}
	// its figure, and the list
	if len(got.Reproduction.Figures) != 1 {
		t.Fatalf("figures %v", got.Reproduction.Figures)
	}
	code, svg := s.do("GET", got.Reproduction.Figures[0], nil)
	if code != http.StatusOK || !strings.HasPrefix(string(svg), "<svg") {
		t.Errorf("figure: %d %.60s", code, svg)
	}
	code, _ = s.do("GET", "/api/reproductions/"+first.Reproduction.ID+"/figures/nope.svg", nil)
	if code != http.StatusNotFound {
		t.Errorf("unknown figure: %d", code)
	}
	var list struct{ Experiments []reproJSON }
	s.must(http.StatusOK, "GET", "/api/reproductions", nil, &list)
	found := false
	for _, e := range list.Experiments {
		if e.ID == "mpcc-exp1" {
			found = e.Reproduction != nil && e.Reproduction.ID == first.Reproduction.ID
		}
	}
	if !found || len(list.Experiments) != len(repro.Experiments()) {
		t.Errorf("list: %d experiments, mpcc-exp1's latest found %v", len(list.Experiments), found)
	}
	// the page shows the section with its rows and run links
	code, page := s.do("GET", "/reproductions", nil)
	if code != http.StatusOK || !strings.Contains(string(page), `id="repro-mpcc-exp1"`) ||
		!strings.Contains(string(page), "/r/"+first.Reproduction.Runs[0].Run) || !strings.Contains(string(page), "not reproduced") {
		t.Errorf("page: %d, section or rows missing", code)
	}
	// a model's rows need no runs: always there, and nothing to start
	var computed struct {
		Experiments []struct {
			ID       string
			Computed bool
			Rows     []struct{ Metric, Verdict string }
		}
	}
	s.must(http.StatusOK, "GET", "/api/reproductions", nil, &computed)
	for _, e := range computed.Experiments {
		if e.ID == "qcn-margins" && (!e.Computed || len(e.Rows) != 4 || e.Rows[0].Verdict != "reproduced") {
			t.Errorf("qcn-margins: %+v", e)
		}
	}
	code, data = s.do("POST", "/api/reproductions", map[string]any{"experiment": "qcn-margins"})
	checkError(t, code, data, http.StatusUnprocessableEntity, "experiment", "")
	code, _ = s.do("GET", "/api/reproductions/nope", nil)
	if code != http.StatusNotFound {
		t.Errorf("unknown reproduction: %d", code)
	}
}
