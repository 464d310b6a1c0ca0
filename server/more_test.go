package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestFatTreeStorage: a 20 ms run of the 16-host fat-tree stores in well
// under the 50 MB, with HPCC and with MPCC (whose per-ACK solve
// times are an event series of their own). Measured: about 1 MB and 2 MB;
// the bound leaves room for workload changes without hiding a regression
// of an order of magnitude.
func TestFatTreeStorage(t *testing.T) {
	s := newTestServer(t, Config{})
	sc := fatTreeScenario(t, s)
	var prev int64
	for _, algo := range []string{"hpcc", "mpcc"} {
		id := s.startRun(map[string]any{"scenario": sc, "cc": map[string]any{"algorithm": algo}})
		s.waitStatus(id, 5*time.Minute, "done")
		size, err := s.db.SizeBytes(t.Context())
		if err != nil {
			t.Fatal(err)
		}
		var chart struct{ Series []chartSeries }
		s.must(http.StatusOK, "GET", "/api/runs/"+id+"/series?level=0", nil, &chart)
		points := 0
		for _, sr := range chart.Series {
			points += len(sr.T)
		}
		run := size - prev
		prev = size
		t.Logf("%s: %d level-0 points, run stored in %.2f MB (%.2f bytes/point)", algo, points, float64(run)/1e6, float64(run)/float64(points))
		if run > 10<<20 {
			t.Fatalf("%s: the run takes %d bytes", algo, run)
		}
	}
}

// TestLiveChangeReplays: a run changed live, replayed from its recorded
// scenario, gives the same flows and series.
func TestLiveChangeReplays(t *testing.T) {
	s := newTestServer(t, Config{})
	sc := smallScenario("replay", "dcqcn", "1ms")
	sc["workload"] = []any{map[string]any{"kind": "incast", "senders": []string{"h0", "h1", "h2", "h3"},
		"receiver": "r0", "size": "400KB", "start": "0s"}}
	// 1 ms of simulated time per wall second
	id := s.startRun(map[string]any{"scenario": sc, "speed": 1000})
	s.waitStatus(id, 10*time.Second, "running")
	var changes []changeMsg
	for _, p := range []map[string]any{{"ai": 200}, {"g": 0.5, "increaseTimer": "20us"}} {
		time.Sleep(200 * time.Millisecond)
		var ch changeMsg
		s.must(http.StatusOK, "POST", "/api/runs/"+id+"/params", p, &ch)
		changes = append(changes, ch)
	}
	s.must(http.StatusOK, "POST", "/api/runs/"+id+"/speed", map[string]any{"speed": "max"}, nil)
	r := s.waitStatus(id, 10*time.Second, "done")
	if len(r.Changes) != 2 || r.Changes[1].AtNs <= r.Changes[0].AtNs || r.Changes[0].AtNs != changes[0].AtNs {
		t.Fatalf("changes %+v", r.Changes)
	}
	var params map[string]float64
	json.Unmarshal(r.Params, &params)
	if params["ai"] != 200 || params["g"] != 0.5 || params["increaseTimer"] != 20 {
		t.Fatalf("params after the changes: %v", params)
	}
	_, flows := s.do("GET", "/api/runs/"+id+"/flows.csv", nil)
	_, series := s.do("GET", "/api/runs/"+id+"/series.csv", nil)
	wantFlows, wantSeries := headless(t, r.Scenario)
	if !bytes.Equal(flows, wantFlows) {
		t.Fatalf("the replay's flows differ:\nlive:\n%s\nreplay:\n%s", flows, wantFlows)
	}
	if sortedRows(series) != sortedRows(wantSeries) {
		t.Fatal("the replay's series differ")
	}
	// and the changes mattered: without them the run is different
	var plain struct{ Scenario json.RawMessage }
	s.must(http.StatusOK, "GET", "/api/scenarios/"+r.ScenarioID, nil, &plain)
	if _, ser := headless(t, plain.Scenario); sortedRows(ser) == sortedRows(series) {
		t.Fatal("the live changes made no difference to the run; the test proves nothing")
	}
	// the replay through the API is the same run too
	id2 := s.startRun(map[string]any{"scenario": json.RawMessage(r.Scenario)})
	s.waitStatus(id2, 10*time.Second, "done")
	if _, f2 := s.do("GET", "/api/runs/"+id2+"/flows.csv", nil); !bytes.Equal(f2, flows) {
		t.Fatal("replaying through the API differs")
	}
}

// TestRetention: with --max-runs 2, the oldest unpinned finished runs go
// when a run ends; a pinned one stays.
func TestRetention(t *testing.T) {
	s := newTestServer(t, Config{MaxRuns: 2})
	sc := smallScenario("keep", "dcqcn", "100us")
	var ids []string
	for i := range 4 {
		id := s.startRun(map[string]any{"scenario": sc, "seed": i + 1})
		s.waitStatus(id, 10*time.Second, "done")
		if i == 0 {
			s.must(http.StatusOK, "POST", "/api/runs/"+id+"/pin", nil, nil)
		}
		ids = append(ids, id)
	}
	time.Sleep(50 * time.Millisecond) // pruning follows the run's end
	var list struct {
		Runs  []runJSON
		Total int
	}
	s.must(http.StatusOK, "GET", "/api/runs", nil, &list)
	var kept []string
	for _, r := range list.Runs {
		kept = append(kept, r.ID)
	}
	// newest first: the last run, and the pinned first one
	if len(kept) != 2 || kept[0] != ids[3] || kept[1] != ids[0] {
		t.Fatalf("kept %v of %v", kept, ids)
	}
}

// TestGarbageNeverFails500 sends malformed bodies of every shape to every
// route that reads one: always a 4xx in the contract's error shape.
func TestGarbageNeverFails500(t *testing.T) {
	s := newTestServer(t, Config{})
	id := s.startRun(map[string]any{"scenario": smallScenario("g", "dcqcn", "2ms"), "speed": 100})
	s.waitStatus(id, 10*time.Second, "running")
	bodies := []string{"", "null", "1", `"x"`, "[]", "{}", `{"a":`, "\x00\xff", `{"scenario": 5}`,
		`{"scenarioId": 5}`, `{"scenarioId": "incast-8to1", "cc": []}`, `{"scenarioId": "incast-8to1", "cc": "hpcc"}`,
		`{"scenarioId": "incast-8to1", "seed": 1.5}`, `{"scenarioId": "incast-8to1", "speed": {}}`,
		`{"scenarioId": "incast-8to1", "speed": "1e400"}`, `{"speed": null}`, `{"g": "fast"}`, `{"g": 1e999}`,
		`{"increaseTimer": "-5us"}`, `{"g": null}`, `{"g": [1]}`, strings.Repeat("[", 10000),
		`{"name": "x", "topology": {"kind": "fattree", "pods": 1e9}}`}
	for _, path := range []string{"/api/scenarios", "/api/scenarios/validate", "/api/runs",
		"/api/runs/" + id + "/params", "/api/runs/" + id + "/speed"} {
		for _, b := range bodies {
			code, data := s.do("POST", path, b)
			if code >= 500 || code < 400 {
				t.Errorf("POST %s %q: %d %s", path, b, code, data)
				continue
			}
			var e apiErr
			if json.Unmarshal(data, &e) != nil || e.Error == "" || len(e.Errors) == 0 {
				t.Errorf("POST %s %q: %d, not the error shape: %s", path, b, code, data)
			}
		}
	}
	s.must(http.StatusOK, "POST", "/api/runs/"+id+"/cancel", nil, nil)
}

// TestWebSocketPing: the server pings an idle viewer and keeps it while it
// answers.
func TestWebSocketPing(t *testing.T) {
	// a 150 ms period (a 450 ms pong deadline) leaves room for a loaded
	// machine's scheduling pauses: 30 ms (90 ms) and 60 ms (180 ms) each
	// failed under a full suite running beside other CPU-bound work
	s := newTestServer(t, Config{PingEvery: 150 * time.Millisecond})
	id := s.startRun(map[string]any{"scenario": smallScenario("ping", "dcqcn", "100us")})
	s.waitStatus(id, 10*time.Second, "done")
	c := s.dial(id)
	pings := make(chan struct{}, 100)
	c.conn.SetPingHandler(func(data string) error {
		pings <- struct{}{}
		return c.conn.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
	})
	// read (and so answer pings) for well past the 450 ms pong deadline
	deadline := time.Now().Add(2 * time.Second)
	for time.Now().Before(deadline) {
		c.conn.SetReadDeadline(deadline)
		if _, _, err := c.conn.ReadMessage(); err != nil {
			if ne, ok := err.(interface{ Timeout() bool }); ok && ne.Timeout() {
				break
			}
			t.Fatalf("the server dropped a viewer that answers pings: %v", err)
		}
	}
	if len(pings) < 5 {
		t.Fatalf("%d pings in 2 s at a 150 ms period", len(pings))
	}
}

func TestNumbersJSON(t *testing.T) {
	tests := []struct {
		in   []float64
		want string
	}{
		{nil, `[]`},
		{[]float64{0, 1, -2, 20000, 1.5, 20.96, 1e20, 1e-7}, `[0,1,-2,20000,1.5,20.96,1e+20,1e-07]`},
		{[]float64{math.NaN(), math.Inf(1), math.Inf(-1), 3}, `[null,null,null,3]`},
		{[]float64{math.Copysign(0, -1), 123456789012345.6}, `[0,1.234567890123456e+14]`},
	}
	for _, tc := range tests {
		got := string(appendNumbers(nil, tc.in))
		if got != tc.want {
			t.Errorf("%v: %s, want %s", tc.in, got, tc.want)
		}
		var back []*float64
		if err := json.Unmarshal([]byte(got), &back); err != nil || len(back) != len(tc.in) {
			t.Errorf("%s does not decode: %v", got, err)
		}
		for i, v := range tc.in {
			if !math.IsNaN(v) && !math.IsInf(v, 0) && (back[i] == nil || *back[i] != v) {
				t.Errorf("%v: element %d decodes to %v", tc.in, i, back[i])
			}
		}
	}
	c := []chartSeries{{I: 3, Metric: "queue_bytes", Entity: `s0->"x"`, T: []float64{10}, V: []float64{math.NaN()}}}
	if b := appendChart(nil, c); string(b) != `[{"i":3,"metric":"queue_bytes","entity":"s0->\"x\"","t":[10],"v":[null]}]` {
		t.Fatalf("%s", b)
	}
	sm := &samplesMsg{Keys: []seriesKey{{Index: 1, Metric: "m", Entity: "e"}}, Series: []seriesData{{I: 1, T: []float64{1.5}, V: []float64{2}}}, Points: 1}
	var back samplesMsg
	if err := json.Unmarshal(appendSamples(nil, sm), &back); err != nil || back.Points != 1 || back.Keys[0] != sm.Keys[0] || back.Series[0].T[0] != 1.5 {
		t.Fatalf("samples round trip: %+v %v", back, err)
	}
}

// TestControlNeverHangs fires control requests at runs as they end: each
// answers (200, or 409 once the run has ended) and none waits forever.
func TestControlNeverHangs(t *testing.T) {
	s := newTestServer(t, Config{})
	client := &http.Client{Timeout: 10 * time.Second}
	for range 10 {
		id := s.startRun(map[string]any{"scenario": smallScenario("race", "dcqcn", "100us")})
		var wg sync.WaitGroup
		for j := range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				path := []string{"/pause", "/resume", "/params", "/speed"}[j%4]
				body := map[string]string{"/params": `{"ai": 30}`, "/speed": `{"speed": "max"}`}[path]
				resp, err := client.Post(s.ts.URL+"/api/runs/"+id+path, "application/json", strings.NewReader(body))
				if err != nil {
					t.Errorf("%s: %v", path, err)
					return
				}
				resp.Body.Close()
				if resp.StatusCode != 200 && resp.StatusCode != 409 {
					t.Errorf("%s: %d", path, resp.StatusCode)
				}
			}()
		}
		wg.Wait()
		if code, data := s.do("POST", "/api/runs/"+id+"/resume", nil); code != 200 && code != 409 { // if a pause came last
			t.Fatalf("resume: %d %s", code, data)
		}
		s.waitStatus(id, 10*time.Second, "done")
	}
}

// TestSpeedWhilePaused: a speed change during a pause does not count the
// pause against the pacing; the run moves on as soon as it resumes.
func TestSpeedWhilePaused(t *testing.T) {
	s := newTestServer(t, Config{})
	t0 := time.Now()
	id := s.startRun(map[string]any{"scenario": smallScenario("pace", "dcqcn", "5ms"), "speed": 1000})
	s.waitStatus(id, 10*time.Second, "running")
	var r runJSON
	s.must(http.StatusOK, "POST", "/api/runs/"+id+"/pause", nil, &r)
	const pause = 1500 * time.Millisecond
	time.Sleep(pause)
	s.must(http.StatusOK, "POST", "/api/runs/"+id+"/speed", map[string]any{"speed": 1000}, nil)
	s.must(http.StatusOK, "POST", "/api/runs/"+id+"/resume", nil, &r)
	at, resumed := r.SimNs, time.Now()
	// a run whose pacing counted the pause would stand still for 1.5 s;
	// one that did not moves within a few scheduling delays (1 s allowed
	// for a loaded machine)
	for {
		s.must(http.StatusOK, "GET", "/api/runs/"+id, nil, &r)
		if r.SimNs-at >= 50e3 {
			break
		}
		if time.Since(resumed) > time.Second {
			t.Fatalf("the run moved %g ns in %v after resuming", r.SimNs-at, time.Since(resumed))
		}
		time.Sleep(10 * time.Millisecond)
	}
	if limit := time.Since(t0) - pause + 200*time.Millisecond; r.WallSeconds > limit.Seconds() {
		t.Fatalf("wall time %g s counts the %v pause (%v since the start)", r.WallSeconds, pause, time.Since(t0))
	}
	var stored runJSON
	s.must(http.StatusOK, "POST", "/api/runs/"+id+"/cancel", nil, &stored)
	if stored.Speed != 1000.0 {
		t.Fatalf("stored speed %v", stored.Speed)
	}
}

// TestServerLimitsWhileRunning: a run without a duration whose estimate
// was under --max-sim-time is stopped there; exports over the point limit
// and oversized filters are refused; viewers over the limit are refused.
func TestServerLimitsWhileRunning(t *testing.T) {
	s := newTestServer(t, Config{Limits: Limits{MaxSimTime: 100 * 1000 * 1000}, MaxExportPoints: 100, MaxViewers: 1})
	// 3 × 100 KB into one 10 Gbps port: estimated 80 µs, takes about 250 µs
	id := s.startRun(map[string]any{"scenario": smallScenario("long", "dcqcn", "")})
	r := s.waitStatus(id, 10*time.Second, "cancelled", "done")
	if r.Status != "cancelled" || !strings.Contains(r.Error, "max-sim-time") || r.SimNs != 100e3 {
		t.Fatalf("run: %s at %g ns: %q", r.Status, r.SimNs, r.Error)
	}
	code, data := s.do("GET", "/api/runs/"+id+"/series.csv", nil)
	checkError(t, code, data, 422, "level", "max-export-points")
	code, data = s.do("GET", "/api/runs/"+id+"/export.json", nil)
	checkError(t, code, data, 422, "level", "max-export-points")
	s.must(http.StatusOK, "GET", "/api/runs/"+id+"/series.csv?metric=queue_bytes&entity=s0->r0", nil, nil)
	var names []string
	for i := range 1001 {
		names = append(names, fmt.Sprint("m", i))
	}
	many := strings.Join(names, ",")
	code, data = s.do("GET", "/api/runs/"+id+"/series.csv?metric="+many, nil)
	checkError(t, code, data, 400, "metric", "")
	for _, q := range []string{"from=NaN", "to=-1", "from=5&to=1", "to=Inf"} {
		code, data = s.do("GET", "/api/runs/"+id+"/series?"+q, nil)
		checkError(t, code, data, 400, "", "")
	}
	// one viewer at a time; a finished run's history is built once
	c := s.dial(id)
	c.read(5 * time.Second)
	code, data = s.do("GET", "/ws/runs/"+id, nil)
	checkError(t, code, data, 503, "", "max-viewers")
	hubs := s.srv.mgr.WatchedHubs()
	if hubs != 1 {
		t.Fatalf("%d finished hubs with one viewer", hubs)
	}
	c.conn.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		hubs = s.srv.mgr.WatchedHubs()
		if hubs == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the finished run's hub outlived its last viewer")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
