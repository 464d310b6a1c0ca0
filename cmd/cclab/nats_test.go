package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// Real processes on loopback: `cclab serve --nats embedded`, `cclab worker`s
// (this test binary acting as the command), the REST API.

var natsURLRe = regexp.MustCompile(`embedded NATS server with JetStream" url=(nats://[0-9.]+:[0-9]+)`)

// natsURL is the embedded NATS server's URL, from the lab's logs.
func (s *serveProc) natsURL() string {
	s.t.Helper()
	m := natsURLRe.FindStringSubmatch(s.logs.String())
	if m == nil {
		s.t.Fatalf("no NATS URL in the lab's logs:\n%s", s.logs)
	}
	return m[1]
}

// workerProc is a `cclab worker` subprocess.
type workerProc struct {
	cmd  *exec.Cmd
	logs *syncBuffer
}

func startWorker(t testing.TB, url string, extra ...string) *workerProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"worker", "--nats", url}, extra...)...)
	cmd.Env = append(os.Environ(), "CCLAB_AS_MAIN=1")
	w := &workerProc{cmd: cmd, logs: &syncBuffer{}}
	cmd.Stderr = w.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	return w
}

// kill9 kills the worker with SIGKILL.
func (w *workerProc) kill9() {
	w.cmd.Process.Signal(syscall.SIGKILL)
	w.cmd.Wait()
}

// started counts the runs the worker started.
func (w *workerProc) started() int { return strings.Count(w.logs.String(), `msg="run started"`) }

// freePort is a loopback port nothing listens on now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// sweepScenario is the 16-host fat-tree with WebSearch arrivals for d.
func sweepScenario(t testing.TB, d string) map[string]any {
	t.Helper()
	var sc map[string]any
	if err := json.Unmarshal([]byte(readFile(t, library+"fattree16-websearch30.json")), &sc); err != nil {
		t.Fatal(err)
	}
	sc["workload"].([]any)[0].(map[string]any)["until"] = d
	sc["name"] = "nats sweep"
	return sc
}

type sweepInfo struct {
	ID        string `json:"id"`
	Status    string `json:"status"`
	RunsTotal int    `json:"runsTotal"`
	RunsDone  int    `json:"runsDone"`
	Points    []struct {
		Runs     []string `json:"runs"`
		Statuses []string `json:"statuses"`
	} `json:"points"`
}

func (s *serveProc) startSweep(body map[string]any) string {
	s.t.Helper()
	var out struct{ ID string }
	var raw []byte
	if code := s.call("POST", "/api/sweeps", body, &raw); code != 201 {
		s.t.Fatalf("POST /api/sweeps: %d %s", code, raw)
	}
	if err := json.Unmarshal(raw, &out); err != nil || out.ID == "" {
		s.t.Fatalf("POST /api/sweeps: %v %s", err, raw)
	}
	return out.ID
}

func (s *serveProc) waitSweep(id string, timeout time.Duration) sweepInfo {
	s.t.Helper()
	return s.waitSweepEvery(id, timeout, 50*time.Millisecond)
}

// waitSweepEvery polls the sweep every poll until it has ended.
func (s *serveProc) waitSweepEvery(id string, timeout, poll time.Duration) sweepInfo {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var v sweepInfo
		s.call("GET", "/api/sweeps/"+id, nil, &v)
		if v.Status == "done" || v.Status == "cancelled" {
			return v
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("sweep %s is %s with %d of %d runs done after %v; logs:\n%s", id, v.Status, v.RunsDone, v.RunsTotal, timeout, s.logs)
		}
		time.Sleep(poll)
	}
}

// sameAsLocal runs a stored run's own scenario with `cclab run` here and
// requires byte-identical flows.csv and the same deterministic series rows
// as the lab stored from its worker.
func (s *serveProc) sameAsLocal(t testing.TB, id string) {
	t.Helper()
	var r struct {
		Scenario json.RawMessage `json:"scenario"`
		Status   string          `json:"status"`
	}
	s.call("GET", "/api/runs/"+id, nil, &r)
	if r.Status != "done" || len(r.Scenario) == 0 {
		t.Fatalf("run %s: %s, scenario %d bytes", id, r.Status, len(r.Scenario))
	}
	dir := t.TempDir()
	file := filepath.Join(dir, "scenario.json")
	if err := os.WriteFile(file, r.Scenario, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out")
	if code, _, stderr := runCLI(t, context.Background(), "run", file, "--out", out, "--quiet"); code != 0 {
		t.Fatalf("cclab run: %d %s", code, stderr)
	}
	api := s.get("/api/runs/" + id + "/flows.csv")
	cli := []byte(readFile(t, filepath.Join(out, "flows.csv")))
	if !bytes.Equal(api, cli) {
		t.Fatalf("run %s: flows.csv from the worker differs from a local run:\nlab:\n%s\nlocal:\n%s", id, head(api), head(cli))
	}
	if a, c := deterministicRows(s.get("/api/runs/"+id+"/series.csv")), deterministicRows([]byte(readFile(t, filepath.Join(out, "series.csv")))); a != c {
		t.Fatalf("run %s: series.csv from the worker differs from a local run (%d and %d bytes): lost or stored twice", id, len(a), len(c))
	}
}

// An embedded NATS server, two worker processes and the lab: a 12-run
// sweep completes on the workers (the lab simulates nothing), both workers
// take part, and every run's results are byte-identical to the same run
// done locally.
func TestNATSSweepOnTwoWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	s := startServe(t, filepath.Join(t.TempDir(), "lab.db"), "--nats", "embedded:0", "--nats-ack-wait", "5s")
	url := s.natsURL()
	w1 := startWorker(t, url, "--concurrency", "1")
	w2 := startWorker(t, url, "--concurrency", "1")
	id := s.startSweep(map[string]any{"scenario": sweepScenario(t, "300us"),
		"grid": []string{"cc.algorithm=dcqcn,hpcc,timely", "workload[0].load=0.3,0.5"}, "seeds": "1-2"})
	v := s.waitSweep(id, 3*time.Minute)
	if v.Status != "done" || v.RunsTotal != 12 || v.RunsDone != 12 {
		t.Fatalf("sweep %+v; logs:\n%s", v, s.logs)
	}
	if a, b := w1.started(), w2.started(); a+b != 12 || a == 0 || b == 0 {
		t.Errorf("workers started %d and %d runs, want 12 between them, some each", a, b)
	}
	if strings.Contains(s.logs.String(), `msg="run started" `) {
		t.Error("the lab simulated a run itself")
	}
	for _, p := range v.Points {
		for _, id := range p.Runs {
			s.sameAsLocal(t, id)
		}
	}
}

// A worker killed (SIGKILL) in the middle of a run: its work is delivered
// again once the queue's ack wait passes, another worker runs it from the
// start, and the lab stores that attempt's results alone.
func TestNATSWorkerKilledMidRun(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	s := startServe(t, filepath.Join(t.TempDir(), "lab.db"), "--nats", "embedded:0", "--nats-ack-wait", "2s")
	url := s.natsURL()
	w1 := startWorker(t, url, "--concurrency", "1")
	// paced: 0.67 ms of simulated time at 150 µs per second takes 4.5 s
	var r runInfo
	var raw []byte
	if code := s.call("POST", "/api/runs", map[string]any{"scenarioId": "incast-8to1", "speed": 150}, &raw); code != 201 {
		t.Fatalf("POST /api/runs: %d %s", code, raw)
	}
	json.Unmarshal(raw, &r)
	deadline := time.Now().Add(30 * time.Second)
	for {
		var cur struct {
			runInfo
			SimNs float64 `json:"simNs"`
		}
		s.call("GET", "/api/runs/"+r.ID, nil, &cur)
		if cur.Status == "running" && cur.SimNs > 100_000 { // 100 µs of 667
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run did not get going on the worker: %+v; worker logs:\n%s", cur, w1.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	w1.kill9()
	w2 := startWorker(t, url, "--concurrency", "1")
	s.waitRun(r.ID, 60*time.Second, "done")
	if !strings.Contains(w2.logs.String(), `msg="run started" run=`+r.ID+" attempt=2") {
		t.Errorf("the second worker did not run the second attempt; its logs:\n%s", w2.logs)
	}
	if !strings.Contains(s.logs.String(), "starts again on another attempt") {
		t.Errorf("the lab did not see a new attempt; logs:\n%s", s.logs)
	}
	s.sameAsLocal(t, r.ID)
}

// The lab restarted (SIGKILL, then started again on the same database and
// NATS port) in the middle of a sweep on a worker: the sweep resumes and
// completes, one done run per point and seed, each identical to a local
// run, and no run is stored twice.
func TestNATSSweepSurvivesLabRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	db := filepath.Join(t.TempDir(), "lab.db")
	nats := "embedded:" + strconv.Itoa(freePort(t))
	s := startServe(t, db, "--nats", nats, "--nats-ack-wait", "2s")
	url := s.natsURL()
	w := startWorker(t, url, "--concurrency", "1")
	id := s.startSweep(map[string]any{"scenario": sweepScenario(t, "1ms"),
		"grid": []string{"cc.algorithm=dcqcn,hpcc,timely"}, "seeds": "1-2"})
	deadline := time.Now().Add(60 * time.Second)
	for {
		var v sweepInfo
		s.call("GET", "/api/sweeps/"+id, nil, &v)
		if v.RunsDone >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no run done; logs:\n%s\nworker:\n%s", s.logs, w.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.cmd.Process.Signal(syscall.SIGKILL)
	s.cmd.Wait()
	s = startServe(t, db, "--nats", nats, "--nats-ack-wait", "2s")
	v := s.waitSweep(id, 3*time.Minute)
	if v.Status != "done" || v.RunsDone != 6 {
		t.Fatalf("after the restart: %+v; logs:\n%s\nworker:\n%s", v, s.logs, w.logs)
	}
	seen := map[string]bool{}
	for _, p := range v.Points {
		for _, id := range p.Runs {
			if seen[id] {
				t.Errorf("run %s twice", id)
			}
			seen[id] = true
			s.sameAsLocal(t, id)
		}
	}
	var list struct {
		Runs  []runInfo `json:"runs"`
		Total int       `json:"total"`
	}
	s.call("GET", "/api/runs?limit=100", nil, &list)
	if list.Total != 6 {
		ids := []string{}
		for _, r := range list.Runs {
			ids = append(ids, r.ID+" "+r.Status)
		}
		t.Errorf("%d runs stored, want the sweep's 6: %v", list.Total, ids)
	}
}

// BenchmarkNATSWorkers measures the runs per minute one and two worker
// processes (concurrency 1 each) deliver on a sweep of 48 short runs, with
// the lab and its embedded NATS server on the same machine, and the ratio:
// runs of 2 ms of WebSearch on the 16-host fat-tree (about 0.15 s each on
// a worker) and of 5 ms (about 0.4 s).
//
//	go test ./cmd/cclab -run XXX -bench NATSWorkers -benchtime 1x
func BenchmarkNATSWorkers(b *testing.B) {
	for _, d := range []string{"2ms", "5ms"} {
		b.Run("runs="+d, func(b *testing.B) {
			for b.Loop() {
				one := natsThroughput(b, 1, 1, sweepBody(b, 48, d))
				two := natsThroughput(b, 2, 1, sweepBody(b, 48, d))
				b.ReportMetric(one, "runs/min(1)")
				b.ReportMetric(two, "runs/min(2)")
				b.ReportMetric(two/one, "speedup")
			}
		})
	}
}

// BenchmarkNATSIngest measures how many runs per second the lab ingests
// when the workers are not the limit: 96 tiny runs, two workers of 4 runs
// at once each.
func BenchmarkNATSIngest(b *testing.B) {
	for b.Loop() {
		b.ReportMetric(natsThroughput(b, 2, 4, sweepBody(b, 96, "20us"))/60, "runs/s")
	}
}

// sweepBody is a sweep of runs runs (loads × 2 seeds) of the 16-host
// fat-tree with arrivals for d.
func sweepBody(tb testing.TB, runs int, d string) map[string]any {
	var loads []string
	for i := 0; i < runs/2; i++ {
		loads = append(loads, fmt.Sprintf("0.%02d", 20+i))
	}
	return map[string]any{"scenario": sweepScenario(tb, d), "grid": []string{"workload[0].load=" + strings.Join(loads, ",")}, "seeds": "1-2"}
}

// natsThroughput starts a lab and n workers of c runs at once each, runs
// the sweep and returns its runs per minute of wall time (from the request
// to the last run stored).
func natsThroughput(b *testing.B, n, c int, body map[string]any) float64 {
	b.Helper()
	s := startServe(b, filepath.Join(b.TempDir(), "lab.db"), "--nats", "embedded:0")
	url := s.natsURL()
	for i := 0; i < n; i++ {
		startWorker(b, url, "--concurrency", strconv.Itoa(c))
	}
	time.Sleep(500 * time.Millisecond) // the workers connect
	start := time.Now()
	id := s.startSweep(body)
	v := s.waitSweepEvery(id, 10*time.Minute, 100*time.Millisecond)
	wall := time.Since(start)
	if v.RunsDone != v.RunsTotal {
		b.Fatalf("%d of %d runs done", v.RunsDone, v.RunsTotal)
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	s.cmd.Wait()
	return float64(v.RunsTotal) / wall.Minutes()
}

// --local-workers: with --nats and no worker elsewhere, the lab's own
// process runs the work through the same queue; without --nats it is a
// usage error.
func TestNATSLocalWorkers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	s := startServe(t, filepath.Join(t.TempDir(), "lab.db"), "--nats", "embedded:0", "--local-workers", "1")
	var r runInfo
	var raw []byte
	if code := s.call("POST", "/api/runs", map[string]any{"scenarioId": "incast-8to1"}, &raw); code != 201 {
		t.Fatalf("POST /api/runs: %d %s", code, raw)
	}
	json.Unmarshal(raw, &r)
	s.waitRun(r.ID, 60*time.Second, "done")
	if !strings.Contains(s.logs.String(), `worker=local`) || !strings.Contains(s.logs.String(), "run started on a worker") {
		t.Errorf("the run did not go through the local worker; logs:\n%s", s.logs)
	}
	s.sameAsLocal(t, r.ID)
	for _, args := range [][]string{
		{"serve", "--local-workers", "2"},
		{"serve", "--nats", "nowhere"},
		{"serve", "--nats", "embedded:x"},
		{"worker"},
		{"worker", "--nats", "localhost:4222"},
		{"worker", "--nats", "nats://127.0.0.1:1", "--concurrency", "0"},
	} {
		code, _, stderr := runCLI(t, context.Background(), args...)
		if code != 2 || !strings.Contains(stderr, "--") {
			t.Errorf("%v: exit %d, stderr %q", args, code, stderr)
		}
	}
}

// A browser watching a run on a worker sees it live: the WebSocket stream
// carries series keys, decimated points and progress while the run goes
// on the worker, then the final message with the summary.
func TestNATSLiveStream(t *testing.T) {
	if testing.Short() {
		t.Skip("starts processes")
	}
	s := startServe(t, filepath.Join(t.TempDir(), "lab.db"), "--nats", "embedded:0")
	startWorker(t, s.natsURL(), "--concurrency", "1")
	var raw []byte
	// paced: about 1.3 s on the worker
	if code := s.call("POST", "/api/runs", map[string]any{"scenarioId": "incast-8to1", "speed": 500}, &raw); code != 201 {
		t.Fatalf("POST /api/runs: %d %s", code, raw)
	}
	var r runInfo
	json.Unmarshal(raw, &r)
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(s.url, "http")+"/ws/runs/"+r.ID, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	var keys, points, running int
	for {
		var m struct {
			Type    string          `json:"type"`
			Status  string          `json:"status"`
			Keys    []any           `json:"keys"`
			Points  int             `json:"points"`
			Summary json.RawMessage `json:"summary"`
		}
		if err := conn.ReadJSON(&m); err != nil {
			t.Fatalf("after %d keys, %d points: %v", keys, points, err)
		}
		switch m.Type {
		case "samples":
			keys += len(m.Keys)
			points += m.Points
		case "progress":
			if m.Status == "running" {
				running++
			}
		}
		if m.Type == "done" || m.Type == "failed" {
			if m.Status != "done" || len(m.Summary) == 0 {
				t.Fatalf("final %s %s, summary %d bytes", m.Type, m.Status, len(m.Summary))
			}
			break
		}
	}
	if keys == 0 || points == 0 || running < 2 {
		t.Errorf("the stream carried %d series, %d points, %d running progress messages", keys, points, running)
	}
}
