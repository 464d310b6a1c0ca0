package dist

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"cclab/server/runs"
	"cclab/store"
)

// lab is a manager whose runs go over an embedded NATS server to a worker
// in the same process (the process tests in cmd/cclab use real ones).
type lab struct {
	t   *testing.T
	db  *store.DB
	mgr *runs.Manager
	sc  *store.Scenario
	url string
}

func newLab(t *testing.T, workers int) *lab { return newLabLog(t, workers, io.Discard) }

func newLabLog(t *testing.T, workers int, logTo io.Writer) *lab {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	log := slog.New(slog.NewTextHandler(logTo, nil))
	dir := t.TempDir()
	url, stop, err := StartEmbedded(filepath.Join(dir, "nats"), "127.0.0.1", 0, log)
	if err != nil {
		t.Fatal(err)
	}
	nc, err := Connect(url, "test lab")
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(ctx, filepath.Join(dir, "lab.db"))
	if err != nil {
		t.Fatal(err)
	}
	opt := Options{AckWait: 2 * time.Second}
	d, err := NewDispatcher(ctx, nc, opt, log)
	if err != nil {
		t.Fatal(err)
	}
	mgr, err := runs.New(ctx, db, runs.Config{Dispatcher: d, Log: log, FlushEvery: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	go d.Serve(ctx, mgr)
	done := make(chan struct{}, workers)
	for i := 0; i < workers; i++ {
		w, err := NewWorker(ctx, nc, 1, Options{}, log)
		if err != nil {
			t.Fatal(err)
		}
		go func() { w.Run(ctx); done <- struct{}{} }()
	}
	t.Cleanup(func() {
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		mgr.Shutdown(sctx)
		scancel()
		cancel()
		for i := 0; i < workers; i++ {
			<-done
		}
		nc.Close()
		stop()
		db.Close()
	})
	sc := &store.Scenario{Name: "incast", JSON: []byte(incast)}
	if _, err := db.PutScenario(ctx, sc); err != nil {
		t.Fatal(err)
	}
	return &lab{t: t, db: db, mgr: mgr, sc: sc, url: url}
}

const incast = `{"name": "incast-4", "seed": 1,
 "topology": {"kind": "dumbbell", "senders": 4, "hostLink": {"rate": "100Gbps", "delay": "1us"}},
 "cc": {"algorithm": "dcqcn"},
 "workload": [{"kind": "incast", "senders": ["h0", "h1", "h2", "h3"], "receiver": "r0", "size": "1MB", "start": "0s"}]}`

func (l *lab) submit(speed float64) string {
	l.t.Helper()
	c, err := runs.Compile([]byte(incast), runs.Limits{}, "")
	if err != nil {
		l.t.Fatal(err)
	}
	r, err := l.mgr.Submit(context.Background(), runs.Submission{ScenarioID: l.sc.ID, Name: "incast", Compiled: c, Speed: speed, Client: "me"})
	if err != nil {
		l.t.Fatal(err)
	}
	return r.ID
}

func (l *lab) wait(id string, want ...string) *store.Run {
	l.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		r, err := l.db.GetRun(context.Background(), id)
		if err != nil {
			l.t.Fatal(err)
		}
		for _, w := range want {
			if r.Status == w {
				return r
			}
		}
		if time.Now().After(deadline) {
			l.t.Fatalf("run %s is %s, want %v (%s)", id, r.Status, want, r.Error)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A run on a worker is stored as a local run of the same scenario is:
// flows, summary and series are equal.
func TestRemoteRunEqualsLocal(t *testing.T) {
	l := newLab(t, 1)
	id := l.submit(0)
	l.wait(id, store.StatusDone)

	// the same run in a manager of its own, locally
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "local.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mgr, err := runs.New(ctx, db, runs.Config{Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer mgr.Shutdown(ctx)
	if _, err := db.PutScenario(ctx, &store.Scenario{Name: "incast", JSON: []byte(incast)}); err != nil {
		t.Fatal(err)
	}
	c, _ := runs.Compile([]byte(incast), runs.Limits{}, "")
	lr, err := mgr.Submit(ctx, runs.Submission{ScenarioID: l.sc.ID, Name: "incast", Compiled: c, Client: "me"})
	if err != nil {
		t.Fatal(err)
	}
	mgr.WaitEnded(ctx, lr.ID, 30*time.Second)

	rf, _ := l.db.Flows(ctx, id)
	lf, _ := db.Flows(ctx, lr.ID)
	if len(rf) != 4 || !reflect.DeepEqual(rf, lf) {
		t.Errorf("flows differ:\nremote %+v\nlocal  %+v", rf, lf)
	}
	rs, _ := l.db.Series(ctx, id, store.SeriesQuery{Level: 0})
	ls, _ := db.Series(ctx, lr.ID, store.SeriesQuery{Level: 0})
	if len(rs) == 0 || !reflect.DeepEqual(rs, ls) {
		t.Errorf("series differ: %d and %d", len(rs), len(ls))
	}
}

// Control requests reach the worker: pause, resume, a live parameter
// change (recorded) and cancel; and a run cancelled before any worker took
// it ends at once, its work later dropped.
func TestRemoteControl(t *testing.T) {
	l := newLab(t, 1)
	ctx := context.Background()
	id := l.submit(100) // 100 µs of simulated time per second: seconds long
	l.wait(id, store.StatusRunning)
	if err := l.mgr.Pause(ctx, id); err != nil {
		t.Fatal(err)
	}
	l.wait(id, store.StatusPaused)
	if err := l.mgr.Resume(ctx, id); err != nil {
		t.Fatal(err)
	}
	l.wait(id, store.StatusRunning)
	if err := l.mgr.SetSpeed(ctx, id, 200); err != nil {
		t.Fatal(err)
	}
	ch, err := l.mgr.SetParams(ctx, id, []byte(`{"ai": 10}`))
	if err != nil || ch == nil || ch.Params["ai"] != 10 {
		t.Fatalf("params: %+v %v", ch, err)
	}
	if _, err := l.mgr.SetParams(ctx, id, []byte(`{"ai": -1}`)); err == nil {
		t.Error("a bad value passed the worker")
	}
	evs, err := l.db.RunEvents(ctx, id)
	if err != nil || len(evs) != 1 || evs[0].Params["ai"] != 10 {
		t.Errorf("events %+v %v", evs, err)
	}
	r, _ := l.db.GetRun(ctx, id)
	if r.Speed != 200 {
		t.Errorf("speed %v", r.Speed)
	}
	if err := l.mgr.Cancel(ctx, id); err != nil {
		t.Fatal(err)
	}
	l.mgr.WaitEnded(ctx, id, 10*time.Second)
	if r := l.wait(id, store.StatusCancelled); r.Progress.SimPS == 0 {
		t.Errorf("cancelled run kept nothing: %+v", r.Progress)
	}
}

func TestCancelBeforeAWorker(t *testing.T) {
	l := newLab(t, 0)
	ctx := context.Background()
	id := l.submit(0)
	if err := l.mgr.Pause(ctx, id); err == nil {
		t.Error("paused a run no worker has")
	}
	if err := l.mgr.Cancel(ctx, id); err != nil {
		t.Fatal(err)
	}
	l.wait(id, store.StatusCancelled)
	// a worker that takes the work now drops it, and the run stays cancelled
	nc, err := Connect(l.url, "late worker")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	w, err := NewWorker(ctx, nc, 1, Options{}, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	w.Run(wctx)
	if r := l.wait(id, store.StatusCancelled); r.Summary != nil {
		t.Errorf("a cancelled run got results: %s", r.Summary)
	}
}

// syncBuffer collects logs written from several goroutines.
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

// A run longer than the ack wait stays with its worker (it reports itself
// in progress): one attempt, though another worker is idle.
func TestLongRunNotRedelivered(t *testing.T) {
	var logs syncBuffer
	l := newLabLog(t, 2, &logs)
	id := l.submit(150) // 0.58 ms simulated at 150 µs/s: about 4 s; the ack wait is 2 s
	r := l.wait(id, store.StatusDone)
	if r.Progress.WallSeconds < 3 {
		t.Fatalf("the run took %.1f s: not longer than the ack wait", r.Progress.WallSeconds)
	}
	if n := strings.Count(logs.String(), `msg="run started on a worker" run=`+id); n != 1 || strings.Contains(logs.String(), "starts again") {
		t.Errorf("the run started %d times; logs:\n%s", n, logs.String())
	}
}
