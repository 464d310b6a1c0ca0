package server

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"cclab/scenarios"
	"cclab/scenarios/repro"
	"cclab/sim"
)

// The fuzz targets of the server's request decoding: every body and query
// parameter a handler reads. Each feeds fuzzed bytes through the real
// handler (through the router, without a socket) where a request does
// bounded work, or through the decoding functions where the handler would
// start runs, training jobs or reproductions; and checks the contract:
// never a 5xx, a 4xx in the error shape naming its field, a 2xx that is
// what the route answers.

// fuzzLimits keep a fuzzed scenario small: compiling one is bounded work.
var fuzzLimits = Limits{MaxHosts: 64, MaxFlows: 2000, MaxPackets: 1e6, MaxSimTime: 100 * sim.Millisecond, MaxSamples: 1e6}

// newFuzzServer is a test server for a fuzz target: small limits and a
// small body limit, logs discarded (a 5xx is reported from its answer; the
// test log cannot be written from inside the fuzz function).
func newFuzzServer(f *testing.F) *testServer {
	f.Helper()
	return newTestServer(f, Config{Limits: fuzzLimits, MaxBody: 64 << 10,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
}

// serve sends one request through the server's router: query is the raw
// query string (any bytes), contentType "" for none.
func (s *testServer) serve(method, path, query, contentType string, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, bytes.NewReader(body))
	req.URL.RawQuery = query
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	rec := httptest.NewRecorder()
	s.srv.Handler().ServeHTTP(rec, req)
	return rec
}

// bodyLevel tells an error about the request body as a whole (not JSON,
// empty, too large, not an object, an empty object of run parameters),
// which has no field to name.
func bodyLevel(e *apiErr) bool {
	for _, p := range []string{"invalid JSON", "empty request body", "request body over", "reading the request body",
		"want a JSON object", "want an object, got", "want an object of parameter values"} {
		if strings.HasPrefix(e.Error, p) {
			return true
		}
	}
	return false
}

// checkAnswer checks an answer against the contract: never a 5xx; a 4xx is
// JSON in the error shape, naming a field unless it is about the body as a
// whole. It returns the decoded error of a 4xx (nil otherwise).
func checkAnswer(t *testing.T, what string, rec *httptest.ResponseRecorder) *apiErr {
	t.Helper()
	code, data := rec.Code, rec.Body.Bytes()
	if code >= 500 {
		t.Fatalf("%s: status %d: %s", what, code, data)
	}
	if code < 400 {
		return nil
	}
	var e apiErr
	if err := json.Unmarshal(data, &e); err != nil {
		t.Fatalf("%s: status %d, the error is not JSON: %v: %s", what, code, err, data)
	}
	if e.Error == "" || len(e.Errors) == 0 || e.Errors[0].Error != e.Error || e.Errors[0].Field != e.Field {
		t.Fatalf("%s: status %d, error shape: %s", what, code, data)
	}
	if e.Field == "" && !bodyLevel(&e) {
		t.Fatalf("%s: status %d names no field: %s", what, code, data)
	}
	return &e
}

// checkJSONAnswer checks a 2xx answer is one JSON document.
func checkJSONAnswer(t *testing.T, what string, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code < 300 && !json.Valid(rec.Body.Bytes()) {
		t.Fatalf("%s: status %d, the answer is not JSON: %.500s", what, rec.Code, rec.Body.Bytes())
	}
}

// libSource is a library scenario's document.
func libSource(f *testing.F, id string) []byte {
	f.Helper()
	for _, e := range scenarios.Library() {
		if e.ID == id {
			return e.Source
		}
	}
	f.Fatalf("no library scenario %s", id)
	return nil
}

// FuzzScenarioBody: POST /api/scenarios/validate and POST /api/scenarios
// take any body.
func FuzzScenarioBody(f *testing.F) {
	s := newFuzzServer(f)
	small := mustJSON(f, smallScenario("small", "dcqcn", "1ms"))
	f.Add(uint8(0), small)
	f.Add(uint8(1), small)
	f.Add(uint8(0), libSource(f, "incast-8to1"))
	f.Add(uint8(0), mustJSON(f, withCC(smallScenario("x", "dcqcn", ""), map[string]any{"algorithm": "dcqcn", "params": map[string]any{"g": 2}})))
	f.Add(uint8(1), mustJSON(f, withCC(smallScenario("x", "hpcc", ""), map[string]any{"algorithm": "hpcc", "params": map[string]any{"nope": 2}})))
	f.Add(uint8(0), []byte(`{"topology": {"kind": "fattree", "k": 64}}`))
	f.Add(uint8(0), []byte(`{"cc": {"algorithm": "fdcc", "policy": "nobody"}}`))
	f.Add(uint8(1), []byte(`{}`))
	f.Add(uint8(1), []byte(`{"name": 1}`))
	f.Add(uint8(0), []byte(`[`))
	f.Add(uint8(1), []byte(``))
	f.Add(uint8(0), []byte(`{} {}`))
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		path := []string{"/api/scenarios/validate", "/api/scenarios"}[which%2]
		rec := s.serve("POST", path, "", "application/json", body)
		checkAnswer(t, "POST "+path, rec)
		checkJSONAnswer(t, "POST "+path, rec)
	})
}

// FuzzRunRequest: the body of POST /api/runs, decoded and prepared as the
// handler does (the scenario, the overrides, the speed) without
// submitting the run.
func FuzzRunRequest(f *testing.F) {
	s := newFuzzServer(f)
	small := smallScenario("small", "dcqcn", "1ms")
	f.Add(mustJSON(f, map[string]any{"scenarioId": "incast-8to1"}))
	f.Add(mustJSON(f, map[string]any{"scenario": small, "speed": "max"}))
	f.Add(mustJSON(f, map[string]any{"scenario": small, "speed": 1000, "seed": 7,
		"cc": map[string]any{"algorithm": "hpcc", "params": map[string]any{"eta": 0.9}}}))
	f.Add(mustJSON(f, map[string]any{"scenario": small, "cc": map[string]any{"algorithm": "hpcc", "params": map[string]any{"eta": 5}}}))
	f.Add(mustJSON(f, map[string]any{"scenarioId": "incast-8to1", "scenario": small}))
	f.Add([]byte(`{"scenarioId": "incast-8to1", "speed": "fast"}`))
	f.Add([]byte(`{"scenarioId": "incast-8to1", "speed": "1e400"}`))
	f.Add([]byte(`{"scenarioId": "incast-8to1", "speed": "NaN"}`))
	f.Add([]byte(`{"scenarioId": "incast-8to1", "speed": 0}`))
	f.Add([]byte(`{"scenarioId": "nope", "seed": -1}`))
	f.Add([]byte(`{"scenario": "not an object"}`))
	f.Add([]byte(`{"scenario": {"topology": `))
	f.Add([]byte(`{"cc": "dcqcn"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req := httptest.NewRequest("POST", "/api/runs", bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		var rr runRequest
		err := decodeBody(rec, req, s.srv.cfg.MaxBody, &rr)
		if err == nil {
			// parseSpeed on its own: 0 ("max") or a speed in (0, 1e12]
			if v, err := parseSpeed(rr.Speed); err == nil && !(v == 0 || v > 0 && v <= 1e12) {
				t.Fatalf("speed %s parsed as %g", rr.Speed, v)
			} else if err != nil && !isStatus(err, http.StatusUnprocessableEntity) {
				t.Fatalf("speed %s: %v", rr.Speed, err)
			}
			sb, perr := s.srv.prepareRun(req, &rr)
			if perr == nil {
				if sb.Compiled == nil {
					t.Fatalf("prepared a run without its compiled scenario")
				}
				sb.Compiled.Release()
			}
			err = perr
		}
		if err != nil {
			s.srv.writeError(rec, req, err)
			checkAnswer(t, "POST /api/runs", rec)
		}
	})
}

// FuzzRunControl: the bodies of POST /api/runs/{id}/speed and /params, on
// a paused run and on a finished one.
func FuzzRunControl(f *testing.F) {
	s := newFuzzServer(f)
	done := s.startRun(map[string]any{"scenario": smallScenario("done", "dcqcn", ""), "speed": "max"})
	s.waitStatus(done, 20*time.Second, "done")
	// 1 ms of simulated time per wall second: paused long before its end
	paused := s.startRun(map[string]any{"scenario": smallScenario("paused", "dcqcn", "50ms"), "speed": 1000})
	s.must(http.StatusOK, "POST", "/api/runs/"+paused+"/pause", nil, nil)
	f.Cleanup(func() { s.serve("POST", "/api/runs/"+paused+"/cancel", "", "", nil) })
	f.Add(uint8(0), []byte(`{"speed": 500}`))
	f.Add(uint8(0), []byte(`{"speed": "max"}`))
	f.Add(uint8(0), []byte(`{"speed": "2.5e3"}`))
	f.Add(uint8(2), []byte(`{"speed": -1}`))
	f.Add(uint8(0), []byte(`{"speed": null}`))
	f.Add(uint8(1), []byte(`{"ai": 40, "increaseTimer": "100us"}`))
	f.Add(uint8(1), []byte(`{"wr": 1}`))
	f.Add(uint8(1), []byte(`{"g": 3}`))
	f.Add(uint8(1), []byte(`{"window": 1}`))
	f.Add(uint8(3), []byte(`{"g": 0.5}`))
	f.Add(uint8(1), []byte(`{}`))
	f.Add(uint8(1), []byte(`{"g":`))
	f.Add(uint8(1), []byte(`[1]`))
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		id := []string{paused, paused, done, done}[which%4]
		path := "/api/runs/" + id + []string{"/speed", "/params"}[which%2]
		rec := s.serve("POST", path, "", "application/json", body)
		checkAnswer(t, "POST "+path, rec)
		checkJSONAnswer(t, "POST "+path, rec)
	})
}

// FuzzStability: the bodies of the stability lab's six routes.
func FuzzStability(f *testing.F) {
	s := newFuzzServer(f)
	routes := []string{"qcn", "margins", "sweep", "dcqcn", "ap", "rcp"}
	for _, seed := range []struct {
		route int
		body  string
	}{
		{0, `{"points": 100}`},
		{0, `{"params": {"rtt": 100e-6}, "fluid": {"duration": 0.001, "start": "fixed"}}`},
		{0, `{"params": {"rtt": -1}}`},
		{0, `{"params": {"n": "ten"}}`},
		{0, `{"fluid": {"duration": 10, "dt": 1e-7}}`},
		{0, `{"fluid": {"start": "middle"}}`},
		{1, `{"params": {"c": 40e9}}`},
		{1, `{"params": {"colour": 1}}`},
		{1, `{"params": 5}`},
		{3, `{"params": {"delay": 100}, "fluid": {"duration": 0.001}}`},
		{2, `{"param": "n", "from": 5, "to": 20, "points": 4}`},
		{2, `{"param": "ps", "from": 0.01, "to": 2, "points": 3}`},
		{2, `{"param": "rtt", "from": 1e-5, "to": 1e-3, "points": 5, "log": true}`},
		{2, `{"param": "buffer", "from": 1, "to": 2}`},
		{3, `{}`},
		{3, `{"params": {"kmin": 300000}, "fluid": {"duration": 0.001, "every": 1e-5}}`},
		{4, `{"step": {"delay": 8, "duration": 40, "every": 0.5}}`},
		{4, `{"config": {"delayAt": "middle"}}`},
		{5, `{"trace": {"rtt": 0.1, "duration": 10}}`},
		{5, `{"config": {"flows": 0}, "maxRttMs": -5}`},
		{0, `{"params": `},
	} {
		f.Add(uint8(seed.route), []byte(seed.body))
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		path := "/api/stability/" + routes[int(which)%len(routes)]
		rec := s.serve("POST", path, "", "application/json", body)
		checkAnswer(t, "POST "+path, rec)
		checkJSONAnswer(t, "POST "+path, rec)
	})
}

// FuzzTrainRequest: the body of POST /api/train, decoded and checked
// against the caps as the handler does, without queueing a job.
func FuzzTrainRequest(f *testing.F) {
	f.Add([]byte(`{"algo": "fdcc", "name": "mine"}`))
	f.Add([]byte(`{"algo": "rlcc", "name": "r", "episodes": 10, "hidden": 8, "seed": 3, "stageEpisodes": 2, "stages": "2,4,8", "size": "2MB", "updates": 4, "evalEvery": 5}`))
	f.Add([]byte(`{"algo": "fdcc", "name": "a", "stages": [1, 32], "size": 20000}`))
	f.Add([]byte(`{"algo": "fdcc", "name": "a", "stages": "2,,x"}`))
	f.Add([]byte(`{"algo": "fdcc", "name": "a", "stages": []}`))
	f.Add([]byte(`{"algo": "fdcc", "name": "a", "size": 1.5e3}`))
	f.Add([]byte(`{"algo": "fdcc", "name": "a", "size": "huge"}`))
	f.Add([]byte(`{"algo": "fdcc", "name": "a", "episodes": 0}`))
	f.Add([]byte(`{"algo": "dcqcn", "name": "default"}`))
	f.Add([]byte(`{"algo": "fdcc", "name": "a/b"}`))
	f.Add([]byte(`{"algo": "fdcc", "hidden": "big"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var req trainRequest
		err := decodeStrict(body, &req)
		if err == nil {
			c, cerr := req.config()
			if cerr == nil {
				switch {
				case c.Episodes < 1 || c.Episodes > maxTrainEpisodes, c.Hidden < 1 || c.Hidden > maxTrainHidden,
					len(c.Stages) < 1 || len(c.Stages) > maxTrainStages, c.Size < 1000 || c.Size > maxTrainSize,
					c.Updates < 0 || c.Updates > maxTrainUpdates:
					t.Fatalf("accepted outside the caps: %+v", c)
				}
				for _, n := range c.Stages {
					if n < 1 || n > maxTrainFanIn {
						t.Fatalf("accepted fan-in %d", n)
					}
				}
				return
			}
			if !isStatus(cerr, http.StatusUnprocessableEntity) {
				t.Fatalf("config: %T %v, want a 422", cerr, cerr)
			}
			err = cerr
		}
		rec := httptest.NewRecorder()
		(&Server{}).writeError(rec, httptest.NewRequest("POST", "/api/train", nil), err)
		checkAnswer(t, "POST /api/train", rec)
	})
}

// FuzzReproRequest: the body of POST /api/reproductions through the
// handler, except a request for an experiment that has runs (which would
// queue them all).
func FuzzReproRequest(f *testing.F) {
	s := newFuzzServer(f)
	var computed string
	for _, e := range repro.Experiments() {
		if computedOnly(e) {
			computed = e.ID
		}
	}
	if computed != "" {
		f.Add([]byte(`{"experiment": "` + computed + `"}`))
	}
	f.Add([]byte(`{"experiment": "nope", "quick": true}`))
	f.Add([]byte(`{"experiment": 2}`))
	f.Add([]byte(`{"quick": "yes"}`))
	f.Add([]byte(`{"experiment": "x", "extra": 1}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var req reproRequest
		if json.Unmarshal(body, &req) == nil {
			if e := repro.Lookup(req.Experiment); e != nil && !computedOnly(e) {
				return
			}
		}
		rec := s.serve("POST", "/api/reproductions", "", "application/json", body)
		checkAnswer(t, "POST /api/reproductions", rec)
		checkJSONAnswer(t, "POST /api/reproductions", rec)
	})
}

// FuzzPolicyUpload: POST /api/policies with any query string and body, as
// the raw body or a multipart form.
func FuzzPolicyUpload(f *testing.F) {
	s := newFuzzServer(f)
	fd, rl := policyFile(f, 8), policyFile(f, 2)
	form := func(name, algo string, file []byte) []byte {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		if err := mw.SetBoundary(fuzzBoundary); err != nil {
			f.Fatal(err)
		}
		mw.WriteField("name", name)
		mw.WriteField("algorithm", algo)
		fw, _ := mw.CreateFormFile("file", "p.safetensors")
		fw.Write(file)
		mw.Close()
		return b.Bytes()
	}
	f.Add("name=mine&algorithm=fdcc", false, fd)
	f.Add("name=r1&algorithm=rlcc", false, rl)
	f.Add("name=r1", false, rl)
	f.Add("name=x&algorithm=fdcc", false, rl)
	f.Add("name=x&algorithm=fdcc", false, fd[:len(fd)-3])
	f.Add("name=x&algorithm=fdcc", false, []byte("hello"))
	f.Add("name=a/b&algorithm=fdcc", false, fd)
	f.Add("name=default", false, fd)
	f.Add("", true, form("from-form", "fdcc", fd))
	f.Add("algorithm=rlcc", true, form("f2", "", rl))
	f.Add("", true, []byte("--"+fuzzBoundary+"\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nxx"))
	f.Fuzz(func(t *testing.T, query string, isForm bool, body []byte) {
		ct := "application/octet-stream"
		if isForm {
			ct = "multipart/form-data; boundary=" + fuzzBoundary
		}
		rec := s.serve("POST", "/api/policies", query, ct, body)
		checkAnswer(t, "POST /api/policies", rec)
		checkJSONAnswer(t, "POST /api/policies", rec)
	})
}

const fuzzBoundary = "cclabfuzzboundary"

// FuzzPages: the page routes' inputs: the topology fragment's body, the
// lab's ?run= and ?from=, the parameters fragment's ?algo=.
func FuzzPages(f *testing.F) {
	s := newFuzzServer(f)
	f.Add(uint8(0), "", []byte(`{"hosts": ["h0", "h1", "r0"], "ports": ["h0:0", "sw0:1"]}`))
	f.Add(uint8(0), "", []byte(`{"hosts": [], "ports": ["", ":", "a:b:c"]}`))
	f.Add(uint8(0), "", []byte(`{"hosts": "h0"}`))
	f.Add(uint8(1), "run=abc", []byte(nil))
	f.Add(uint8(1), "from=nope", []byte(nil))
	f.Add(uint8(2), "algo=dcqcn", []byte(nil))
	f.Add(uint8(2), "algo=%3Cb%3E", []byte(nil))
	f.Fuzz(func(t *testing.T, which uint8, query string, body []byte) {
		switch which % 3 {
		case 0:
			rec := s.serve("POST", "/ui/topology", query, "application/json", body)
			checkAnswer(t, "POST /ui/topology", rec)
		case 1:
			if rec := s.serve("GET", "/lab", query, "", nil); rec.Code >= 500 {
				t.Fatalf("GET /lab?%s: status %d: %.500s", query, rec.Code, rec.Body.Bytes())
			}
		case 2:
			if rec := s.serve("GET", "/ui/params", query, "", nil); rec.Code >= 500 {
				t.Fatalf("GET /ui/params?%s: status %d: %.500s", query, rec.Code, rec.Body.Bytes())
			}
		}
	})
}

// FuzzQueries: the query strings of GET /api/runs, /api/compare and a
// run's series, series.csv and export.json.
func FuzzQueries(f *testing.F) {
	s := newFuzzServer(f)
	a := s.startRun(map[string]any{"scenario": smallScenario("a", "dcqcn", ""), "speed": "max"})
	b := s.startRun(map[string]any{"scenario": smallScenario("b", "hpcc", ""), "speed": "max"})
	s.waitStatus(a, 20*time.Second, "done")
	s.waitStatus(b, 20*time.Second, "done")
	paths := []string{"/api/runs", "/api/compare", "/api/runs/" + a + "/series",
		"/api/runs/" + a + "/series.csv", "/api/runs/" + b + "/export.json"}
	f.Add(uint8(0), "scenario=incast-8to1&algorithm=dcqcn&status=done&limit=10&offset=0")
	f.Add(uint8(0), "status=sleeping")
	f.Add(uint8(0), "limit=0&offset=-1")
	f.Add(uint8(0), "limit=99999999999999999999")
	f.Add(uint8(1), "runs="+a+","+b)
	f.Add(uint8(1), "runs="+a+"&runs=nope")
	f.Add(uint8(1), "runs=,,")
	f.Add(uint8(2), "level=1")
	f.Add(uint8(2), "metric=queue_bytes,fct_ns&entity=sw0:0&level=0&from=0&to=1e6")
	f.Add(uint8(3), "from=10&to=5")
	f.Add(uint8(3), "from=-1")
	f.Add(uint8(3), "to=NaN")
	f.Add(uint8(4), "level=2")
	f.Add(uint8(4), "metric=a&metric=b&entity=%zz")
	f.Fuzz(func(t *testing.T, which uint8, query string) {
		path := paths[int(which)%len(paths)]
		rec := s.serve("GET", path, query, "", nil)
		checkAnswer(t, "GET "+path+"?"+query, rec)
		if !strings.HasSuffix(path, ".csv") {
			checkJSONAnswer(t, "GET "+path+"?"+query, rec)
		}
	})
}

// FuzzClass: the instructor's PUT /api/class/limits body, the sign-in's
// query (GET /instructor?token=), and an owner token as a client sends it
// (X-Cclab-Token on GET /api/whoami): never a 5xx, a refused limit names
// its field, and no token the server did not issue is taken.
func FuzzClass(f *testing.F) {
	s := newTestServer(f, Config{Limits: fuzzLimits, MaxBody: 64 << 10, InstructorToken: "fuzz-teacher",
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	f.Add(uint8(0), []byte(`{"runsPerMinute": 10, "workPerHour": 1e8}`))
	f.Add(uint8(0), []byte(`{"runsPerMinute": -1}`))
	f.Add(uint8(0), []byte(`{"runsBurst": 1e12}`))
	f.Add(uint8(0), []byte(`{"clientRuns": "8"}`))
	f.Add(uint8(0), []byte(`{"nope": 1}`))
	f.Add(uint8(0), []byte(`[]`))
	f.Add(uint8(1), []byte(`token=fuzz-teacher`))
	f.Add(uint8(1), []byte(`token=%zz&token=`))
	f.Add(uint8(2), []byte(strings.Repeat("A", 22)+"."+strings.Repeat("B", 22)))
	f.Add(uint8(2), []byte("x.y"))
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		switch which % 3 {
		case 0:
			req := httptest.NewRequest("PUT", "/api/class/limits", bytes.NewReader(data))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer fuzz-teacher")
			rec := httptest.NewRecorder()
			s.srv.Handler().ServeHTTP(rec, req)
			checkAnswer(t, "PUT /api/class/limits", rec)
			checkJSONAnswer(t, "PUT /api/class/limits", rec)
			if rec.Code == 200 {
				var c ClassLimits
				if json.Unmarshal(rec.Body.Bytes(), &c) != nil || c.RunsPerMinute < 0 || c.WorkPerHour < 0 || c.RunsBurst < 0 {
					t.Fatalf("accepted limits %s", rec.Body.Bytes())
				}
			}
		case 1:
			rec := s.serve("GET", "/instructor", string(data), "", nil)
			if rec.Code == http.StatusSeeOther {
				if !strings.Contains(string(data), "fuzz-teacher") {
					t.Fatalf("GET /instructor?%s signed in without the token", data)
				}
				return
			}
			checkAnswer(t, "GET /instructor", rec)
		case 2:
			if bytes.ContainsAny(data, "\r\n\x00") {
				return // not a header value
			}
			req := httptest.NewRequest("GET", "/api/whoami", nil)
			req.Header.Set(tokenHeader, string(data))
			rec := httptest.NewRecorder()
			s.srv.Handler().ServeHTTP(rec, req)
			var me struct{ Anonymous bool }
			if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &me) != nil || !me.Anonymous {
				t.Fatalf("token %q: %d %s (a token the server did not issue must own nothing)", data, rec.Code, rec.Body.Bytes())
			}
		}
	})
}
