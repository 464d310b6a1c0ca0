package server

import (
	"encoding/csv"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"cclab/scenarios"
	"cclab/sim/report"
)

func TestAlgorithmsAndLibrary(t *testing.T) {
	s := newTestServer(t, Config{})
	var algos []struct {
		Name    string `json:"name"`
		Presets []struct {
			Name string `json:"name"`
			Help string `json:"help"`
		} `json:"presets"`
		Params []struct {
			Name string  `json:"name"`
			Unit string  `json:"unit"`
			Min  float64 `json:"min"`
			Max  float64 `json:"max"`
		} `json:"params"`
	}
	s.must(200, "GET", "/api/algorithms", nil, &algos)
	names := map[string]int{}
	presets := map[string]bool{}
	for _, a := range algos {
		names[a.Name] = len(a.Params)
		for _, p := range a.Presets {
			presets[a.Name+"/"+p.Name] = p.Help != ""
		}
	}
	// MPCC and HPCC have presets from their papers, as the others do
	for _, want := range []string{"mpcc/wq1_wr1", "mpcc/wq1_wr100", "mpcc/horizon3", "mpcc/every4", "mpcc/literal",
		"hpcc/maxstage5", "hpcc/eta90", "hpcc/hpai50", "hpcc/per_rtt", "dcqcn/dcqcn_paper"} {
		if !presets[want] {
			t.Errorf("preset %s missing or without help", want)
		}
	}
	for _, want := range []string{"none", "dcqcn", "timely", "dctcp", "hpcc", "qcn", "mpcc"} {
		if names[want] == 0 {
			t.Errorf("algorithm %s missing or without parameters: %v", want, names)
		}
	}

	var list []scenarioJSON
	s.must(200, "GET", "/api/scenarios", nil, &list)
	lib := scenarios.Library()
	if len(list) != len(lib) {
		t.Fatalf("%d scenarios listed on a fresh server, want the %d built-ins", len(list), len(lib))
	}
	hexID := regexp.MustCompile(`^[0-9a-f]{24}$`)
	for _, sc := range list {
		if !sc.Builtin || sc.Library == "" || !hexID.MatchString(sc.ID) {
			t.Errorf("built-in listed as %+v", sc)
		}
	}
	// a built-in by its short name and by its id give the same scenario
	var byName, byID scenarioJSON
	s.must(200, "GET", "/api/scenarios/incast-8to1", nil, &byName)
	s.must(200, "GET", "/api/scenarios/"+byName.ID, nil, &byID)
	if byName.ID != byID.ID || string(byName.Scenario) != string(byID.Scenario) || len(byID.Scenario) == 0 {
		t.Fatalf("by name %s, by id %s", byName.ID, byID.ID)
	}
	// restarting on the same database keeps the ids (content addressing)
	srv2, err := New(t.Context(), s.db, Config{Log: s.srv.log})
	if err != nil {
		t.Fatal(err)
	}
	if srv2.library["incast-8to1"] != byID.ID {
		t.Fatalf("id changed across restarts: %s, %s", srv2.library["incast-8to1"], byID.ID)
	}
}

func TestScenarioRoutes(t *testing.T) {
	s := newTestServer(t, Config{MaxBody: 64 << 10})
	sc := smallScenario("mine", "dcqcn", "200us")
	var created struct {
		ID      string `json:"id"`
		Created bool   `json:"created"`
	}
	s.must(201, "POST", "/api/scenarios", sc, &created)
	if !created.Created {
		t.Fatal("not created")
	}
	// the same scenario again, written differently (units, key order), is the same id
	sc2 := smallScenario("mine", "dcqcn", "0.2ms")
	sc2["seed"] = 1
	var again struct {
		ID      string `json:"id"`
		Created bool   `json:"created"`
	}
	s.must(200, "POST", "/api/scenarios", sc2, &again)
	if again.ID != created.ID || again.Created {
		t.Fatalf("equal scenario: %+v, first %+v", again, created)
	}
	var got scenarioJSON
	s.must(200, "GET", "/api/scenarios/"+created.ID, nil, &got)
	if got.Name != "mine" || got.Builtin || got.Links["share"] != "/s/"+created.ID {
		t.Fatalf("got %+v", got)
	}
	var v validation
	s.must(200, "POST", "/api/scenarios/validate", sc, &v)
	if !v.OK || v.ID != created.ID || v.Cost.Hosts != 5 || v.Cost.Flows != 3 || v.Cost.Packets != 300 || len(v.Ports) == 0 {
		t.Fatalf("validate: %+v", v)
	}

	big := smallScenario(strings.Repeat("x", 70<<10), "dcqcn", "")
	tests := []struct {
		name, method, path string
		body               any
		status             int
		field, limit       string
	}{
		{"bad JSON", "POST", "/api/scenarios", `{"name": `, 400, "", ""},
		{"not an object", "POST", "/api/scenarios", `[1,2]`, 422, "", ""},
		{"unknown algorithm", "POST", "/api/scenarios", withCC(sc, map[string]any{"algorithm": "tcp-reno"}), 422, "cc.algorithm", ""},
		{"parameter out of range", "POST", "/api/scenarios", withCC(sc, map[string]any{"algorithm": "dcqcn", "params": map[string]any{"g": 2}}), 422, "cc.params.g", ""},
		{"unknown parameter", "POST", "/api/scenarios", withCC(sc, map[string]any{"algorithm": "dcqcn", "params": map[string]any{"nope": 2}}), 422, "cc.params.nope", ""},
		{"oversized body", "POST", "/api/scenarios", big, 413, "", "max-body"},
		{"validate bad JSON", "POST", "/api/scenarios/validate", `{`, 400, "", ""},
		{"validate unknown algorithm", "POST", "/api/scenarios/validate", withCC(sc, map[string]any{"algorithm": "x"}), 422, "cc.algorithm", ""},
		{"validate oversized", "POST", "/api/scenarios/validate", big, 413, "", "max-body"},
		{"get unknown", "GET", "/api/scenarios/0123456789abcdef01234567", nil, 404, "id", ""},
		{"delete unknown", "DELETE", "/api/scenarios/nope", nil, 404, "id", ""},
		{"delete built-in", "DELETE", "/api/scenarios/incast-8to1", nil, 403, "id", ""},
		{"unknown route", "GET", "/api/nope", nil, 404, "", ""},
		{"wrong method", "PUT", "/api/scenarios", nil, 405, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, data := s.do(tc.method, tc.path, tc.body)
			checkError(t, code, data, tc.status, tc.field, tc.limit)
		})
	}

	// all problems come back at once, the first also at the top level
	bad := smallScenario("bad", "dcqcn", "-1ms")
	bad["topology"].(map[string]any)["senders"] = 0
	code, data := s.do("POST", "/api/scenarios/validate", bad)
	var e apiErr
	if err := json.Unmarshal(data, &e); err != nil || code != 422 || len(e.Errors) < 2 || e.Field != e.Errors[0].Field {
		t.Fatalf("two problems: %d %s", code, data)
	}

	// a scenario with runs cannot be deleted; without, it can, once
	id := s.startRun(map[string]any{"scenarioId": created.ID})
	s.waitStatus(id, 30*time.Second, "done")
	code, data = s.do("DELETE", "/api/scenarios/"+created.ID, nil)
	checkError(t, code, data, 409, "id", "")
	s.must(204, "DELETE", "/api/runs/"+id, nil, nil)
	s.must(204, "DELETE", "/api/scenarios/"+created.ID, nil, nil)
	code, data = s.do("DELETE", "/api/scenarios/"+created.ID, nil)
	checkError(t, code, data, 404, "id", "")
}

func withCC(sc map[string]any, c map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range sc {
		out[k] = v
	}
	out["cc"] = c
	return out
}

// checkError checks a 4xx answer has the contract's shape.
func checkError(t *testing.T, code int, data []byte, status int, field, limit string) {
	t.Helper()
	if code != status {
		t.Fatalf("status %d, want %d: %s", code, status, data)
	}
	var e apiErr
	if err := json.Unmarshal(data, &e); err != nil {
		t.Fatalf("error body is not JSON: %v: %s", err, data)
	}
	if e.Error == "" || len(e.Errors) == 0 || e.Errors[0].Error != e.Error || e.Errors[0].Field != e.Field {
		t.Fatalf("error shape: %s", data)
	}
	if field != "" && e.Field != field {
		t.Fatalf("field %q, want %q: %s", e.Field, field, data)
	}
	if e.Limit != limit {
		t.Fatalf("limit %q, want %q: %s", e.Limit, limit, data)
	}
}

func TestRunRequestErrors(t *testing.T) {
	lim := DefaultLimits()
	lim.MaxFlows = 10
	s := newTestServer(t, Config{Limits: lim, MaxBody: 64 << 10})
	sc := smallScenario("req", "dcqcn", "100us")
	manyFlows := smallScenario("many", "dcqcn", "100us")
	manyFlows["workload"] = []any{map[string]any{"kind": "incast", "senders": []string{"h0", "h1", "h2"},
		"receiver": "r0", "size": "10KB", "start": "0s", "repeat": map[string]any{"every": "10us", "count": 5}}}
	long := smallScenario("long", "dcqcn", "20s")
	ring := smallScenario("ring", "dcqcn", "")
	ring["topology"] = map[string]any{"kind": "ring"}
	tests := []struct {
		name         string
		body         any
		status       int
		field, limit string
	}{
		{"bad JSON", `{"scenarioId": `, 400, "", ""},
		{"empty body", ``, 400, "", ""},
		{"neither", map[string]any{}, 422, "scenarioId", ""},
		{"both", map[string]any{"scenarioId": "incast-8to1", "scenario": sc}, 422, "scenario", ""},
		{"unknown scenario id", map[string]any{"scenarioId": "nope"}, 422, "scenarioId", ""},
		{"unknown field", map[string]any{"scenarioId": "incast-8to1", "colour": "red"}, 422, "colour", ""},
		{"seed of the wrong type", map[string]any{"scenarioId": "incast-8to1", "seed": "x"}, 422, "seed", ""},
		{"negative seed", map[string]any{"scenarioId": "incast-8to1", "seed": -1}, 422, "seed", ""},
		{"bad speed", map[string]any{"scenarioId": "incast-8to1", "speed": "fast"}, 422, "speed", ""},
		{"zero speed", map[string]any{"scenarioId": "incast-8to1", "speed": 0}, 422, "speed", ""},
		{"unknown algorithm override", map[string]any{"scenarioId": "incast-8to1", "cc": map[string]any{"algorithm": "bbr"}}, 422, "cc.algorithm", ""},
		{"override out of range", map[string]any{"scenarioId": "incast-8to1", "cc": map[string]any{"algorithm": "hpcc", "params": map[string]any{"eta": 5}}}, 422, "cc.params.eta", ""},
		{"inline scenario field named under scenario", map[string]any{"scenario": withCC(sc, map[string]any{"algorithm": "nope"})}, 422, "scenario.cc.algorithm", ""},
		{"inline invalid topology", map[string]any{"scenario": ring}, 422, "scenario.topology.kind", ""},
		{"over the flow limit", map[string]any{"scenario": manyFlows}, 422, "workload", "max-flows"},
		{"over the simulated time limit", map[string]any{"scenario": long}, 422, "duration", "max-sim-time"},
		{"oversized", map[string]any{"scenario": smallScenario(strings.Repeat("y", 70<<10), "dcqcn", "")}, 413, "", "max-body"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, data := s.do("POST", "/api/runs", tc.body)
			checkError(t, code, data, tc.status, tc.field, tc.limit)
		})
	}
	var list struct{ Total int }
	s.must(200, "GET", "/api/runs", nil, &list)
	if list.Total != 0 {
		t.Fatalf("refused requests left %d runs", list.Total)
	}
}

func TestRunLifecycleAndExports(t *testing.T) {
	s := newTestServer(t, Config{})
	sc := smallScenario("life", "dcqcn", "300us")
	a := s.startRun(map[string]any{"scenario": sc, "seed": 7})
	b := s.startRun(map[string]any{"scenario": sc, "cc": map[string]any{"algorithm": "hpcc"}})
	ra := s.waitStatus(a, 30*time.Second, "done")
	rb := s.waitStatus(b, 30*time.Second, "done")
	if ra.Algorithm != "dcqcn" || rb.Algorithm != "hpcc" || ra.Seed != 7 || rb.Seed != 1 || ra.ScenarioID != rb.ScenarioID {
		t.Fatalf("runs: %+v / %+v", ra, rb)
	}
	if ra.Progress != 1 || ra.SimNs != 300000 || ra.Events == 0 || ra.StartedAt == nil || ra.FinishedAt == nil || len(ra.Summary) == 0 {
		t.Fatalf("finished run: %+v", ra)
	}
	var params map[string]float64
	if err := json.Unmarshal(rb.Params, &params); err != nil || params["eta"] != 0.95 {
		t.Fatalf("hpcc params %s", rb.Params)
	}

	// list and filters
	var list struct {
		Runs  []runJSON
		Total int
	}
	s.must(200, "GET", "/api/runs", nil, &list)
	if list.Total != 2 || len(list.Runs) != 2 || list.Runs[0].ID != b {
		t.Fatalf("list: %+v", list)
	}
	for _, f := range []struct {
		query string
		want  int
	}{
		{"?algorithm=hpcc", 1}, {"?algorithm=dcqcn", 1}, {"?algorithm=mpcc", 0},
		{"?status=done", 2}, {"?status=running", 0}, {"?scenario=" + ra.ScenarioID, 2},
		{"?scenario=incast-8to1", 0}, {"?limit=1", 2},
	} {
		s.must(200, "GET", "/api/runs"+f.query, nil, &list)
		if list.Total != f.want {
			t.Errorf("%s: %d runs, want %d", f.query, list.Total, f.want)
		}
	}
	for _, q := range []string{"?status=great", "?limit=0", "?limit=x", "?offset=-1"} {
		code, data := s.do("GET", "/api/runs"+q, nil)
		checkError(t, code, data, 400, "", "")
	}

	// exports
	code, flows := s.do("GET", "/api/runs/"+a+"/flows.csv", nil)
	rows, err := csv.NewReader(strings.NewReader(string(flows))).ReadAll()
	if code != 200 || err != nil || strings.Join(rows[0], ",") != report.FlowsHeader || len(rows) != 4 {
		t.Fatalf("flows.csv: %d %v\n%s", code, err, flows)
	}
	code, series := s.do("GET", "/api/runs/"+a+"/series.csv", nil)
	lines := strings.Split(strings.TrimSpace(string(series)), "\n")
	if code != 200 || lines[0] != report.SeriesHeader || len(lines) < 100 {
		t.Fatalf("series.csv: %d, %d lines", code, len(lines))
	}
	code, q := s.do("GET", "/api/runs/"+a+"/series.csv?metric=queue_bytes&entity=s0->r0", nil)
	qlines := strings.Split(strings.TrimSpace(string(q)), "\n")
	if code != 200 || len(qlines) != 31 { // 300 µs at 10 µs: 30 samples
		t.Fatalf("filtered series.csv: %d, %d lines:\n%s", code, len(qlines), q)
	}
	for _, l := range qlines[1:] {
		if !strings.Contains(l, ",queue_bytes,s0->r0,") {
			t.Fatalf("filter let through %q", l)
		}
	}
	code, data := s.do("GET", "/api/runs/"+a+"/series.csv?level=7", nil)
	checkError(t, code, data, 400, "level", "")
	var chart struct {
		Level    int
		BucketNs float64
		Series   []chartSeries
	}
	s.must(200, "GET", "/api/runs/"+a+"/series", nil, &chart)
	if chart.Level != 1 || chart.BucketNs != 10000 || len(chart.Series) == 0 {
		t.Fatalf("chart: level %d bucket %g, %d series", chart.Level, chart.BucketNs, len(chart.Series))
	}
	var sum map[string]any
	s.must(200, "GET", "/api/runs/"+a+"/summary.json", nil, &sum)
	if sum["flows_total"] != 3.0 || sum["scenario"] == nil {
		t.Fatalf("summary: %v", sum["flows_total"])
	}
	var exp struct {
		Run     runJSON
		Summary map[string]any
		Flows   []flowJSON
		Series  []chartSeries
	}
	s.must(200, "GET", "/api/runs/"+a+"/export.json", nil, &exp)
	if exp.Run.ID != a || len(exp.Flows) != 3 || exp.Summary["flows_total"] != 3.0 || len(exp.Series) != len(chart.Series) {
		t.Fatalf("export: run %s, %d flows, %d series", exp.Run.ID, len(exp.Flows), len(exp.Series))
	}
	points := 0
	for _, sr := range exp.Series {
		points += len(sr.T)
	}
	if points != len(lines)-1 {
		t.Fatalf("export.json has %d points, series.csv %d rows", points, len(lines)-1)
	}

	// comparison
	var cmp struct {
		Runs    []runJSON
		Metrics []compareRow
	}
	s.must(200, "GET", "/api/compare?runs="+a+","+b, nil, &cmp)
	if len(cmp.Runs) != 2 || len(cmp.Metrics) < 5 {
		t.Fatalf("compare: %d runs, %d metrics", len(cmp.Runs), len(cmp.Metrics))
	}
	for _, m := range cmp.Metrics {
		// a score marks its best run(s); a fact (simulated seconds) none
		if len(m.Values) != 2 || (m.Better != "") != (len(m.Best) > 0) {
			t.Fatalf("metric %+v", m)
		}
		for _, i := range m.Best {
			for _, v := range m.Values {
				if v != nil && ((m.Better == "lower" && *v < *m.Values[i]) || (m.Better == "higher" && *v > *m.Values[i])) {
					t.Fatalf("metric %s: best %v, but %v is better", m.Name, *m.Values[i], *v)
				}
			}
		}
	}
	code, data = s.do("GET", "/api/compare?runs="+a+",nope", nil)
	checkError(t, code, data, 404, "runs", "")
	code, data = s.do("GET", "/api/compare", nil)
	checkError(t, code, data, 400, "runs", "")

	// pin, control of an ended run, delete
	var pinned runJSON
	s.must(200, "POST", "/api/runs/"+a+"/pin", nil, &pinned)
	if !pinned.Pinned {
		t.Fatal("not pinned")
	}
	s.must(200, "POST", "/api/runs/"+a+"/unpin", nil, &pinned)
	if pinned.Pinned {
		t.Fatal("still pinned")
	}
	for _, p := range []string{"pause", "resume", "cancel"} {
		code, data := s.do("POST", "/api/runs/"+a+"/"+p, nil)
		checkError(t, code, data, 409, "status", "")
	}
	code, data = s.do("POST", "/api/runs/"+a+"/params", `{"ai": 5}`)
	checkError(t, code, data, 409, "status", "")
	s.must(204, "DELETE", "/api/runs/"+a, nil, nil)
	for _, p := range []string{"", "/flows.csv", "/series.csv", "/summary.json", "/export.json", "/series"} {
		code, data := s.do("GET", "/api/runs/"+a+p, nil)
		checkError(t, code, data, 404, "id", "")
	}
	for _, p := range []string{"pause", "resume", "cancel", "pin", "unpin"} {
		code, data := s.do("POST", "/api/runs/"+a+"/"+p, nil)
		checkError(t, code, data, 404, "id", "")
	}
	code, data = s.do("DELETE", "/api/runs/"+a, nil)
	checkError(t, code, data, 404, "id", "")
}

func TestRunControl(t *testing.T) {
	s := newTestServer(t, Config{})
	sc := smallScenario("paced", "dcqcn", "2ms")
	// 1 ms of simulated time per wall second: the run takes 2 s unless cancelled
	id := s.startRun(map[string]any{"scenario": sc, "speed": 1000})
	s.waitStatus(id, 10*time.Second, "running")

	// results are not there yet; the run cannot be deleted
	code, data := s.do("GET", "/api/runs/"+id+"/flows.csv", nil)
	checkError(t, code, data, 409, "status", "")
	code, data = s.do("DELETE", "/api/runs/"+id, nil)
	checkError(t, code, data, 409, "status", "")

	var r runJSON
	s.must(200, "POST", "/api/runs/"+id+"/pause", nil, &r)
	if r.Status != "paused" {
		t.Fatalf("after pause: %s", r.Status)
	}
	s.must(200, "GET", "/api/runs/"+id, nil, &r)
	at := r.SimNs
	time.Sleep(150 * time.Millisecond)
	s.must(200, "GET", "/api/runs/"+id, nil, &r)
	if r.SimNs != at || r.Status != "paused" {
		t.Fatalf("paused run moved from %g to %g ns (%s)", at, r.SimNs, r.Status)
	}
	// a change while paused takes effect at the paused instant
	var ch changeMsg
	s.must(200, "POST", "/api/runs/"+id+"/params", map[string]any{"ai": 40, "increaseTimer": "100us"}, &ch)
	if ch.AtNs != at || ch.Params["ai"] != 40 || ch.Params["increaseTimer"] != 100 || ch.Seq != 1 {
		t.Fatalf("change %+v at %g", ch, at)
	}
	for _, tc := range []struct {
		name, body, field string
		status            int
	}{
		{"unknown parameter", `{"wr": 1}`, "wr", 422},
		{"out of range", `{"g": 3}`, "g", 422},
		{"not live", `{"window": 1}`, "window", 422},
		{"empty", `{}`, "", 422},
		{"bad JSON", `{"g":`, "", 400},
		{"not an object", `[1]`, "", 422},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, data := s.do("POST", "/api/runs/"+id+"/params", tc.body)
			checkError(t, code, data, tc.status, tc.field, "")
		})
	}
	s.must(200, "POST", "/api/runs/"+id+"/resume", nil, &r)
	if r.Status != "running" {
		t.Fatalf("after resume: %s", r.Status)
	}
	var sp map[string]any
	s.must(200, "POST", "/api/runs/"+id+"/speed", map[string]any{"speed": 500}, &sp)
	code, data = s.do("POST", "/api/runs/"+id+"/speed", map[string]any{"speed": -1})
	checkError(t, code, data, 422, "speed", "")
	s.must(200, "POST", "/api/runs/"+id+"/cancel", nil, &r)
	if r.Status != "cancelled" || r.SimNs >= 2e6 || r.SimNs < at {
		t.Fatalf("after cancel: %s at %g ns", r.Status, r.SimNs)
	}
	// a cancelled run keeps what it measured, and its recorded change
	s.must(200, "GET", "/api/runs/"+id, nil, &r)
	if len(r.Summary) == 0 || len(r.Changes) != 1 || r.Changes[0].AtNs != at {
		t.Fatalf("cancelled run: summary %d bytes, changes %+v", len(r.Summary), r.Changes)
	}
	var scen struct {
		Events []struct {
			At     string             `json:"at"`
			Params map[string]float64 `json:"params"`
		} `json:"events"`
	}
	if err := json.Unmarshal(r.Scenario, &scen); err != nil || len(scen.Events) != 1 || scen.Events[0].Params["ai"] != 40 {
		t.Fatalf("the change is not a scenario event: %v %s", err, r.Scenario)
	}
	s.must(200, "GET", "/api/runs/"+id+"/flows.csv", nil, nil)
}

func TestQueueAndClientLimits(t *testing.T) {
	s := newTestServer(t, Config{Concurrency: 1, ClientRuns: 2, MaxQueue: 5})
	sc := smallScenario("slow", "dcqcn", "2ms")
	// a run at full speed holds the one slot (a paced one would lend it
	// while it sleeps): a second of Poisson traffic takes many seconds
	busy := map[string]any{"name": "busy", "duration": "1s",
		"topology": map[string]any{"kind": "dumbbell", "senders": 4, "hostLink": map[string]any{"rate": "100Gbps", "delay": "1us"}},
		"cc":       map[string]any{"algorithm": "dcqcn"},
		"workload": []any{map[string]any{"kind": "poisson", "load": 0.5, "cdf": "websearch",
			"hosts": []string{"h0", "h1", "h2", "h3", "r0"}, "from": "0s", "until": "1s"}}}
	first := s.startRun(map[string]any{"scenario": busy})
	second := s.startRun(map[string]any{"scenario": sc})
	s.waitStatus(first, 10*time.Second, "running")
	var r runJSON
	s.must(200, "GET", "/api/runs/"+second, nil, &r)
	if r.Status != "queued" {
		t.Fatalf("second run with one slot: %s", r.Status)
	}
	// a queued run can only be cancelled
	code, data := s.do("POST", "/api/runs/"+second+"/pause", nil)
	checkError(t, code, data, 409, "status", "")
	// the owner (this address: no token) has 2 runs: a third is refused,
	// also under a new X-Cclab-Client label (a label is no new quota);
	// another owner's (a token of its own) is not
	code, data = s.do("POST", "/api/runs", map[string]any{"scenario": sc})
	checkError(t, code, data, 429, "", "max-client-runs")
	code, data = s.do("POST", "/api/runs", map[string]any{"scenario": sc}, "X-Cclab-Client", "student-2")
	checkError(t, code, data, 429, "", "max-client-runs")
	var tok struct{ Token string }
	s.must(201, "POST", "/api/token", nil, &tok)
	code, data = s.do("POST", "/api/runs", map[string]any{"scenario": sc}, "X-Cclab-Token", tok.Token)
	if code != 201 {
		t.Fatalf("another owner: %d %s", code, data)
	}
	s.must(200, "POST", "/api/runs/"+second+"/cancel", nil, &r)
	if r.Status != "cancelled" {
		t.Fatalf("cancelled queued run: %s", r.Status)
	}
	s.must(200, "POST", "/api/runs/"+first+"/cancel", nil, &r)
	var other struct{ ID string }
	json.Unmarshal(data, &other)
	s.waitStatus(other.ID, 30*time.Second, "done")
	var h map[string]any
	s.must(200, "GET", "/api/health", nil, &h)
	if h["ok"] != true {
		t.Fatalf("health %v", h)
	}
	code, _ = s.do("GET", "/", nil)
	if code != http.StatusOK {
		t.Fatalf("index: %d", code)
	}
}
