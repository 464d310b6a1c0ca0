package server

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"cclab/store"
)

// trainMsg is any message of a training job's stream.
type trainMsg struct {
	Type        string   `json:"type"`
	Job         trainJob `json:"job"`
	Episode     int      `json:"episode"`
	Episodes    int      `json:"episodes"`
	FanIn       int      `json:"fanIn"`
	Stage       int      `json:"stage"`
	Reward      *float64 `json:"reward"`
	Status      string   `json:"status"`
	Error       string   `json:"error"`
	Policy      string   `json:"policy"`
	Interrupted bool     `json:"interrupted"`
	Resumable   bool     `json:"resumable"`
}

func dialTraining(t *testing.T, base, id string) *websocket.Conn {
	t.Helper()
	url := "ws" + strings.TrimPrefix(base, "http") + "/ws/train/" + id
	conn, resp, err := websocket.DefaultDialer.Dial(url, nil)
	if err != nil {
		t.Fatalf("dial %s: %v (%v)", url, err, resp)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// readTraining reads a training stream until stop says so (or "done").
func readTraining(t *testing.T, conn *websocket.Conn, stop func(trainMsg) bool) []trainMsg {
	t.Helper()
	var out []trainMsg
	deadline := time.Now().Add(60 * time.Second)
	for {
		conn.SetReadDeadline(deadline)
		var m trainMsg
		if err := conn.ReadJSON(&m); err != nil {
			t.Fatalf("reading the stream after %+v: %v", out, err)
		}
		out = append(out, m)
		if m.Type == "done" || (stop != nil && stop(m)) {
			return out
		}
	}
}

func rounds(msgs []trainMsg) []int {
	var eps []int
	for _, m := range msgs {
		if m.Type == "round" {
			eps = append(eps, m.Episode)
		}
	}
	return eps
}

// TestTrainingStream: /ws/train/{id} sends the job, each round as it ends,
// the status and the end with the stored policy; a viewer of an ended job
// gets the same from the store.
func TestTrainingStream(t *testing.T) {
	s := newTestServer(t, Config{})
	req := tinyTraining("streamed")
	req["episodes"], req["stageEpisodes"] = 8, 4
	req["stages"] = []int{2, 3}
	var j trainJob
	s.must(201, "POST", "/api/train", req, &j)
	msgs := readTraining(t, dialTraining(t, s.ts.URL, j.ID), nil)
	last := msgs[len(msgs)-1]
	if msgs[0].Type != "hello" || msgs[0].Job.ID != j.ID || msgs[0].Job.Curve != nil {
		t.Fatalf("first message %+v", msgs[0])
	}
	if eps := rounds(msgs); len(eps) != 2 || eps[0] != 4 || eps[1] != 8 {
		t.Fatalf("rounds %v, want episodes 4 and 8 (four episodes a round)", eps)
	}
	var fanIns []int
	for _, m := range msgs {
		if m.Type == "round" {
			fanIns = append(fanIns, m.FanIn)
			if m.Reward == nil {
				t.Errorf("round %d has no reward", m.Episode)
			}
		}
	}
	if fanIns[0] != 2 || fanIns[1] != 3 {
		t.Errorf("the curriculum's fan-ins %v", fanIns)
	}
	if last.Status != "done" || last.Policy == "" || last.Interrupted || last.Resumable {
		t.Fatalf("done %+v", last)
	}
	// a late viewer: the stored job
	late := readTraining(t, dialTraining(t, s.ts.URL, j.ID), nil)
	if eps := rounds(late); len(eps) != 2 || late[len(late)-2].Type != "status" || late[len(late)-2].Status != "done" ||
		late[len(late)-1].Policy != last.Policy {
		t.Fatalf("late viewer %+v", late)
	}
	s.must(http.StatusNotFound, "GET", "/ws/train/0123456789abcdef", nil, nil)
}

// TestTrainingResume: a cancelled job is resumable; resumed, it continues
// from its checkpoint (its viewers see the rounds after it), and the
// policy it stores then replaces the interrupted one.
func TestTrainingResume(t *testing.T) {
	s := newTestServer(t, Config{TrainDir: t.TempDir()})
	req := tinyTraining("resumed")
	req["episodes"] = 400
	var j trainJob
	s.must(201, "POST", "/api/train", req, &j)
	conn := dialTraining(t, s.ts.URL, j.ID)
	readTraining(t, conn, func(m trainMsg) bool { return m.Type == "round" && m.Episode >= 8 })
	s.must(200, "POST", "/api/train/"+j.ID+"/cancel", nil, nil)
	msgs := readTraining(t, conn, nil)
	end := msgs[len(msgs)-1]
	if end.Status != "cancelled" || !end.Interrupted || !end.Resumable || end.Policy == "" {
		t.Fatalf("cancelled %+v", end)
	}
	var c struct {
		trainJob
		Resumable bool
		Links     map[string]string
	}
	s.must(200, "GET", "/api/train/"+j.ID, nil, &c)
	played, first := c.Episode, c.Policy
	if !c.Resumable || c.Links["resume"] != "/api/train/"+j.ID+"/resume" || len(c.Curve) != played/4 {
		t.Fatalf("cancelled job %+v", c)
	}
	s.must(200, "POST", "/api/train/"+j.ID+"/resume", nil, &c)
	if c.Status != "queued" && c.Status != "running" {
		t.Fatalf("resumed %+v", c)
	}
	if code, _ := s.do("POST", "/api/train/"+j.ID+"/resume", nil); code != http.StatusConflict {
		t.Errorf("resuming a live job: %d", code)
	}
	conn = dialTraining(t, s.ts.URL, j.ID)
	msgs = readTraining(t, conn, func(m trainMsg) bool { return m.Type == "round" && m.Episode >= played+12 })
	if eps := rounds(msgs); eps[0] != 4 || eps[played/4-1] != played || eps[played/4] != played+4 {
		t.Fatalf("rounds after the resume %v (played %d before)", eps, played)
	}
	s.must(200, "POST", "/api/train/"+j.ID+"/cancel", nil, nil)
	readTraining(t, conn, nil)
	s.must(200, "GET", "/api/train/"+j.ID, nil, &c)
	if c.Status != "cancelled" || c.Episode < played+12 || c.Policy == first || c.Policy == "" {
		t.Fatalf("cancelled again %+v (played %d, policy %s before)", c, played, first)
	}
	for i, p := range c.Curve {
		if p.Episode != 4*(i+1) {
			t.Fatalf("curve point %d is episode %d", i, p.Episode)
		}
	}
	if code, _ := s.do("GET", "/api/policies/"+first, nil); code != http.StatusNotFound {
		t.Errorf("the first interrupted policy is still stored: %d", code)
	}
	s.must(http.StatusNotFound, "POST", "/api/train/0123456789abcdef/resume", nil, nil)
}

// TestTrainingRestart: a server that stops interrupts its training job,
// which stores what it learned; the next server lists it, interrupted and
// resumable, and resumes it from its checkpoint.
func TestTrainingRestart(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db, err := store.Open(ctx, filepath.Join(dir, "lab.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cfg := Config{TrainDir: filepath.Join(dir, "ckpt"), Log: slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: slog.LevelWarn}))}
	start := func() (*Server, *httptest.Server) {
		srv, err := New(ctx, db, cfg)
		if err != nil {
			t.Fatal(err)
		}
		return srv, httptest.NewServer(srv.Handler())
	}
	srv, ts := start()
	s := &testServer{t: t, srv: srv, db: db, ts: ts}
	req := tinyTraining("survivor")
	req["episodes"] = 4000
	var j trainJob
	s.must(201, "POST", "/api/train", req, &j)
	readTraining(t, dialTraining(t, ts.URL, j.ID), func(m trainMsg) bool { return m.Type == "round" && m.Episode >= 3 })
	ts.Close()
	srv.Shutdown(ctx)

	srv, ts = start()
	defer func() { ts.Close(); srv.Shutdown(ctx) }()
	s = &testServer{t: t, srv: srv, db: db, ts: ts}
	var list []struct {
		trainJob
		Resumable bool
	}
	s.must(200, "GET", "/api/train", nil, &list)
	if len(list) != 1 || list[0].Status != "interrupted" || !list[0].Resumable || !list[0].Interrupted ||
		!strings.Contains(list[0].Error, "shut down") || list[0].Policy == "" {
		t.Fatalf("after the restart %+v", list)
	}
	played := list[0].Episode
	s.must(200, "POST", "/api/train/"+j.ID+"/resume", nil, nil)
	conn := dialTraining(t, ts.URL, j.ID)
	msgs := readTraining(t, conn, func(m trainMsg) bool { return m.Type == "round" && m.Episode > played })
	if eps := rounds(msgs); eps[len(eps)-1] != played+4 || eps[len(eps)-2] != played {
		t.Fatalf("rounds %v after a resume at episode %d", eps, played)
	}
	s.must(200, "POST", "/api/train/"+j.ID+"/cancel", nil, nil)
	msgs = readTraining(t, conn, nil)
	end := msgs[len(msgs)-1]
	if end.Status != "cancelled" || !end.Interrupted || end.Policy == list[0].Policy {
		t.Fatalf("cancelled after the resume: %+v", end)
	}
	var p policyListItem
	s.must(200, "GET", "/api/policies/"+end.Policy, nil, &p)
	if ep, _ := strconv.Atoi(p.Meta["episodes"]); p.Name != "survivor" || ep <= played || p.Meta["interrupted"] != "true" {
		t.Fatalf("policy %+v", p)
	}
}
