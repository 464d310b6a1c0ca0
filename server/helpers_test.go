package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"cclab/store"
)

// testServer is a server on a temporary database behind httptest.
type testServer struct {
	t   testing.TB
	srv *Server
	db  *store.DB
	ts  *httptest.Server
	// lastHeader is the headers of the latest answer to do or doRaw
	lastHeader http.Header
}

// testLog sends the server's logs to the test log (shown on failure).
type testLog struct{ t testing.TB }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Helper()
	l.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

func newTestServer(t testing.TB, cfg Config) *testServer {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "lab.db"))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	if cfg.FlushEvery == 0 {
		cfg.FlushEvery = 100 * time.Millisecond
	}
	if cfg.Class == nil {
		// only the per-owner run count, as before owners had rate limits
		// (tests of those set Class)
		n := cfg.ClientRuns
		if n == 0 {
			n = 8
		}
		cfg.Class = &ClassLimits{ClientRuns: n}
	}
	srv, err := New(ctx, db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ts.Close()
		sctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
		if err := db.Close(); err != nil {
			t.Errorf("closing the database: %v", err)
		}
	})
	return &testServer{t: t, srv: srv, db: db, ts: ts}
}

// do sends a request and returns the status and body.
func (s *testServer) do(method, path string, body any, header ...string) (int, []byte) {
	s.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			s.t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, s.ts.URL+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json") // a header below may replace it
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return s.send(req)
}

// doRaw sends body as it is with exactly the given headers (no
// Content-Type unless given).
func (s *testServer) doRaw(method, path, body string, header ...string) (int, []byte) {
	s.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.ts.URL+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return s.send(req)
}

func (s *testServer) send(req *http.Request) (int, []byte) {
	s.t.Helper()
	resp, err := s.ts.Client().Do(req)
	if err != nil {
		s.t.Fatalf("%s %s: %v", req.Method, req.URL.Path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		s.t.Fatal(err)
	}
	s.lastHeader = resp.Header
	return resp.StatusCode, data
}

// must sends a request that must answer want, and decodes the JSON answer
// into out (when not nil).
func (s *testServer) must(want int, method, path string, body any, out any, header ...string) []byte {
	s.t.Helper()
	code, data := s.do(method, path, body, header...)
	if code != want {
		s.t.Fatalf("%s %s: status %d, want %d: %s", method, path, code, want, data)
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			s.t.Fatalf("%s %s: %v in %s", method, path, err, data)
		}
	}
	return data
}

// startRun starts a run and returns its id.
func (s *testServer) startRun(req map[string]any) string {
	s.t.Helper()
	var out struct{ ID string }
	s.must(http.StatusCreated, "POST", "/api/runs", req, &out)
	if out.ID == "" {
		s.t.Fatal("no run id")
	}
	return out.ID
}

// waitStatus polls a run until its status is one of want.
func (s *testServer) waitStatus(id string, timeout time.Duration, want ...string) runJSON {
	s.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		var r runJSON
		s.must(http.StatusOK, "GET", "/api/runs/"+id, nil, &r)
		for _, w := range want {
			if r.Status == w {
				return r
			}
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("run %s is %s after %v, want %v (error %q)", id, r.Status, timeout, want, r.Error)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// apiErr is the contract's error shape.
type apiErr struct {
	Error  string `json:"error"`
	Field  string `json:"field"`
	Limit  string `json:"limit"`
	Errors []struct {
		Field string `json:"field"`
		Error string `json:"error"`
	} `json:"errors"`
}

// smallScenario is a 3-to-1 incast on a 10 Gbps star that simulates in a
// few milliseconds of wall time.
func smallScenario(name, algo string, duration string) map[string]any {
	sc := map[string]any{
		"name": name,
		"topology": map[string]any{"kind": "dumbbell", "senders": 4,
			"hostLink": map[string]any{"rate": "10Gbps", "delay": "1us"}},
		"cc": map[string]any{"algorithm": algo},
		"workload": []any{map[string]any{"kind": "incast", "senders": []string{"h0", "h1", "h2"},
			"receiver": "r0", "size": "100KB", "start": "0s"}},
	}
	if duration != "" {
		sc["duration"] = duration
	}
	return sc
}
