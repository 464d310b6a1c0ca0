package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"cclab/store"
)

// TestMain lets the test binary act as the cclab command, so a test can
// start `cclab serve` as a real subprocess (and kill it) without building
// anything: CCLAB_AS_MAIN=1 runs main with the given arguments.
func TestMain(m *testing.M) {
	if os.Getenv("CCLAB_AS_MAIN") == "1" {
		main()
		return
	}
	os.Exit(m.Run())
}

// serveProc is a `cclab serve` subprocess.
type serveProc struct {
	t     testing.TB
	cmd   *exec.Cmd
	url   string
	logs  *syncBuffer
	lines chan string // stdout after the first line (the latest unread one)
}

// syncBuffer is the subprocess's stderr, safe to read while it writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// startServe runs `cclab serve` on a free loopback port with db.
func startServe(t testing.TB, db string, extra ...string) *serveProc {
	t.Helper()
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--db", db}, extra...)
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "CCLAB_AS_MAIN=1")
	logs := &syncBuffer{}
	cmd.Stderr = logs
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &serveProc{t: t, cmd: cmd, logs: logs}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
	})
	lines := make(chan string, 1)
	s.lines = lines
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			select {
			case lines <- sc.Text():
			default:
			}
		}
	}()
	re := regexp.MustCompile(`serving on (http://\S+)`)
	select {
	case l := <-lines:
		m := re.FindStringSubmatch(l)
		if m == nil {
			t.Fatalf("unexpected first line %q; logs:\n%s", l, logs)
		}
		s.url = m[1]
	case <-time.After(30 * time.Second):
		t.Fatalf("cclab serve did not start; logs:\n%s", logs)
	}
	return s
}

func (s *serveProc) call(method, path string, body any, out any) int {
	s.t.Helper()
	var rd io.Reader
	if body != nil {
		data, _ := json.Marshal(body)
		rd = bytes.NewReader(data)
	}
	req, _ := http.NewRequest(method, s.url+path, rd)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if b, ok := out.(*[]byte); ok {
		*b = data
	} else if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			s.t.Fatalf("%s %s: %d %v: %s", method, path, resp.StatusCode, err, data)
		}
	}
	return resp.StatusCode
}

func (s *serveProc) get(path string) []byte {
	s.t.Helper()
	resp, err := http.Get(s.url + path)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		s.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, data)
	}
	return data
}

type runInfo struct {
	ID       string  `json:"id"`
	Status   string  `json:"status"`
	Progress float64 `json:"progress"`
	Error    string  `json:"error"`
}

func (s *serveProc) waitRun(id string, timeout time.Duration, want ...string) runInfo {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var r runInfo
		s.call("GET", "/api/runs/"+id, nil, &r)
		for _, w := range want {
			if r.Status == w {
				return r
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("run %s is %s, want %v; logs:\n%s", id, r.Status, want, s.logs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCrashRecovery kills `cclab serve` with SIGKILL while runs are
// running and restarts it on the same database: finished runs are intact,
// the running ones are interrupted, and the database passes
// integrity_check.
func TestCrashRecovery(t *testing.T) {
	db := filepath.Join(t.TempDir(), "lab.db")
	s := startServe(t, db, "--concurrency", "2")
	var done []string
	for i := range 2 {
		var r runInfo
		if code := s.call("POST", "/api/runs", map[string]any{"scenarioId": "incast-8to1", "seed": i + 1}, &r); code != 201 {
			t.Fatalf("start: %d", code)
		}
		done = append(done, r.ID)
	}
	flows := map[string][]byte{}
	for _, id := range done {
		s.waitRun(id, 60*time.Second, "done")
		flows[id] = s.get("/api/runs/" + id + "/flows.csv")
	}
	// two slow runs, mid-way (paced at 1 ms per wall second, series being
	// written), and one queued behind them
	var live []string
	for range 3 {
		var r runInfo
		s.call("POST", "/api/runs", map[string]any{"scenarioId": "fattree16-websearch30", "speed": 1000}, &r)
		live = append(live, r.ID)
	}
	s.waitRun(live[0], 30*time.Second, "running")
	s.waitRun(live[1], 30*time.Second, "running")
	time.Sleep(1500 * time.Millisecond)
	if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	s.cmd.Wait()

	// the database is consistent before anything reopens it for writing
	ctx := context.Background()
	sdb, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := sdb.IntegrityCheck(ctx); err != nil || res != "ok" {
		t.Fatalf("integrity_check after kill -9: %q %v", res, err)
	}
	for _, id := range live {
		r, err := sdb.GetRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != store.StatusRunning && r.Status != store.StatusQueued {
			t.Fatalf("run %s is %s after the crash, before the restart", id, r.Status)
		}
	}
	series, err := sdb.Series(ctx, live[0], store.SeriesQuery{})
	if err != nil || len(series) == 0 {
		t.Fatalf("the running run's flushed series: %d, %v", len(series), err)
	}
	sdb.Close()

	s2 := startServe(t, db)
	for _, id := range live {
		var r runInfo
		s2.call("GET", "/api/runs/"+id, nil, &r)
		if r.Status != "interrupted" || r.Error == "" {
			t.Fatalf("run %s after the restart: %+v", id, r)
		}
	}
	for _, id := range done {
		var r runInfo
		s2.call("GET", "/api/runs/"+id, nil, &r)
		if r.Status != "done" {
			t.Fatalf("finished run %s is now %s", id, r.Status)
		}
		if got := s2.get("/api/runs/" + id + "/flows.csv"); !bytes.Equal(got, flows[id]) {
			t.Fatalf("flows.csv of %s changed across the crash", id)
		}
	}
	// the restarted server works: a new run completes
	var r runInfo
	s2.call("POST", "/api/runs", map[string]any{"scenarioId": "incast-8to1"}, &r)
	s2.waitRun(r.ID, 60*time.Second, "done")
	// and a graceful stop (SIGTERM) leaves nothing running
	s2.cmd.Process.Signal(syscall.SIGTERM)
	if err := s2.cmd.Wait(); err != nil {
		t.Fatalf("cclab serve after SIGTERM: %v; logs:\n%s", err, s2.logs)
	}
}

// TestGracefulShutdownMarksRuns stops a server with SIGTERM while a long
// paced run is running: with a short grace the run is stopped, its results
// so far are stored, and it is marked interrupted.
func TestGracefulShutdownMarksRuns(t *testing.T) {
	db := filepath.Join(t.TempDir(), "lab.db")
	s := startServe(t, db, "--grace", "200ms")
	var r runInfo
	s.call("POST", "/api/runs", map[string]any{"scenarioId": "fattree16-websearch30", "speed": 1000}, &r)
	s.waitRun(r.ID, 30*time.Second, "running")
	time.Sleep(300 * time.Millisecond)
	s.cmd.Process.Signal(syscall.SIGTERM)
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("exit: %v; logs:\n%s", err, s.logs)
	}
	ctx := context.Background()
	sdb, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer sdb.Close()
	run, err := sdb.GetRun(ctx, r.ID)
	if err != nil {
		t.Fatal(err)
	}
	flows, err := sdb.Flows(ctx, r.ID)
	if run.Status != store.StatusInterrupted || len(run.Summary) == 0 || err != nil || len(flows) == 0 {
		t.Fatalf("after a graceful stop: status %s, summary %d bytes, %d flows, %v", run.Status, len(run.Summary), len(flows), err)
	}
}

// TestExportRoundTrip: a run's flows.csv from the API is byte-identical to
// `cclab run` on the same scenario and seed, for every algorithm family.
func TestExportRoundTrip(t *testing.T) {
	s := startServe(t, filepath.Join(t.TempDir(), "lab.db"))
	for _, tc := range []struct{ scenario, algo string }{
		{"incast-8to1", ""},
		{"incast-8to1", "dcqcn"},
		{"fairness-2flows-hpcc", ""},
		{"mpcc-exp1-1ms", ""},
	} {
		t.Run(tc.scenario+"/"+tc.algo, func(t *testing.T) {
			req := map[string]any{"scenarioId": tc.scenario, "seed": 3}
			args := []string{"run", filepath.Join("..", "..", "scenarios", "library", tc.scenario+".json"), "--seed", "3", "--quiet"}
			if tc.algo != "" {
				req["cc"] = map[string]any{"algorithm": tc.algo}
				args = append(args, "--algo", tc.algo)
			}
			var r runInfo
			if code := s.call("POST", "/api/runs", req, &r); code != 201 {
				t.Fatalf("start: %d", code)
			}
			dir := t.TempDir()
			code, _, stderr := runCLI(t, context.Background(), append(args, "--out", dir)...)
			if code != 0 {
				t.Fatalf("cclab run: %d %s", code, stderr)
			}
			s.waitRun(r.ID, 60*time.Second, "done")
			api := s.get("/api/runs/" + r.ID + "/flows.csv")
			cli := []byte(readFile(t, filepath.Join(dir, "flows.csv")))
			if !bytes.Equal(api, cli) {
				t.Fatalf("flows.csv differs:\nAPI:\n%s\nCLI:\n%s", head(api), head(cli))
			}
			// series.csv carries the same rows too, where the engine is
			// deterministic (everything but wall-clock solve times)
			apiSeries := s.get("/api/runs/" + r.ID + "/series.csv")
			cliSeries := []byte(readFile(t, filepath.Join(dir, "series.csv")))
			a, c := deterministicRows(apiSeries), deterministicRows(cliSeries)
			if a != c {
				t.Fatalf("series.csv differs (%d and %d bytes)", len(a), len(c))
			}
		})
	}
}

// deterministicRows drops the rows of wall-clock series and sorts the rest
// (the API orders rows by time, then series; the CLI as the engine emits).
func deterministicRows(csv []byte) string {
	lines := strings.Split(strings.TrimSpace(string(csv)), "\n")
	out := lines[:0]
	for _, l := range lines {
		if !strings.Contains(l, ",qp_solve_ns,") {
			out = append(out, l)
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

func head(b []byte) string {
	lines := strings.SplitN(string(b), "\n", 6)
	return fmt.Sprint(strings.Join(lines[:min(5, len(lines))], "\n"))
}

// Beyond loopback without --instructor-token, serve warns and makes a
// token, which it prints with the sign-in link and which then works as the
// instructor's; a given token is used as it is.
func TestServeInstructorToken(t *testing.T) {
	s := startServe(t, filepath.Join(t.TempDir(), "lab.db"), "--addr", "0.0.0.0:0")
	var line string
	select {
	case line = <-s.lines:
	case <-time.After(10 * time.Second):
		t.Fatal("no instructor line after the serving line")
	}
	m := regexp.MustCompile(`instructor: open (\S+)/instructor\?token=(\S+) once`).FindStringSubmatch(line)
	if m == nil {
		t.Fatalf("second line %q, want the instructor's sign-in link", line)
	}
	if !strings.Contains(s.logs.String(), "reachable beyond this machine and no --instructor-token was given") {
		t.Errorf("no warning on a non-loopback address; stderr:\n%s", s.logs)
	}
	req, _ := http.NewRequest("GET", s.url+"/api/class", nil)
	req.Header.Set("Authorization", "Bearer "+m[2])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("GET /api/class with the printed token: %d", resp.StatusCode)
	}

	given := startServe(t, filepath.Join(t.TempDir(), "lab.db"), "--instructor-token", "my-class-token")
	select {
	case line = <-given.lines:
	case <-time.After(10 * time.Second):
		t.Fatal("no instructor line")
	}
	if !strings.HasSuffix(strings.Fields(line)[2], "token=my-class-token") || strings.Contains(given.logs.String(), "warning:") {
		t.Errorf("a given token on loopback: %q, stderr %q", line, given.logs)
	}
}
