package training

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"cclab/sim/rl"
	"cclab/store"
)

// openStore opens a store in a temporary folder (path: "" for a new one).
func openStore(t *testing.T, path string) *store.DB {
	t.Helper()
	if path == "" {
		path = filepath.Join(t.TempDir(), "lab.db")
	}
	db, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func newManager(t *testing.T, st Store, cfg Config) *Manager {
	t.Helper()
	if cfg.Log == nil {
		cfg.Log = quiet()
	}
	m, err := New(context.Background(), st, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Shutdown(context.Background()) })
	return m
}

func policy(t *testing.T, db *store.DB, name string) *store.Policy {
	t.Helper()
	p, err := db.PolicyByName(context.Background(), name)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func tiny(episodes int) rl.Config {
	c := rl.DefaultConfig("fdcc")
	c.Episodes, c.Hidden, c.Updates, c.EvalEvery = episodes, 8, 2, 0
	c.Stages, c.StageEpisodes, c.Size, c.Round = []int{2}, 2, 20_000, 1
	return c
}

func wait(t *testing.T, m *Manager, id string, cond func(Job) bool) Job {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		j, err := m.Get(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if cond(j) {
			return j
		}
		if time.Now().After(deadline) {
			t.Fatalf("job %+v", j)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func ended(j Job) bool { return j.Status != Queued && j.Status != Running }

// TestQueueAndShutdown: one job trains, one waits, a third is refused;
// the same name twice is a conflict; a shutdown interrupts both, and the
// one that has played a round stores its policy, marked interrupted.
func TestQueueAndShutdown(t *testing.T) {
	db := openStore(t, "")
	m := newManager(t, db, Config{MaxQueue: 1})
	a, err := m.Submit("a", tiny(4000))
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Submit("b", tiny(2))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		want error
	}{{"a", ErrConflict}, {"c", ErrTooMany}} {
		if _, err := m.Submit(tc.name, tiny(2)); !errors.Is(err, tc.want) {
			t.Errorf("submit %s: %v, want %v", tc.name, err, tc.want)
		}
	}
	if _, err := m.Submit("bad", rl.Config{Algo: "hpcc"}); err == nil {
		t.Error("a bad configuration was queued")
	}
	if r, q := m.Counts(); r != 1 || q != 1 {
		t.Fatalf("running %d, queued %d", r, q)
	}
	wait(t, m, a.ID, func(j Job) bool { return j.Episode > 0 })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	m.Shutdown(ctx)
	ja, _ := m.Get(ctx, a.ID)
	jb, _ := m.Get(ctx, b.ID)
	if ja.Status != Interrupted || !ja.Interrupted || !ja.Resumable || !strings.Contains(ja.Error, "shut down at episode") ||
		jb.Status != Interrupted || jb.PolicyID != "" || !jb.Resumable {
		t.Fatalf("after shutdown: %+v, %+v", ja, jb)
	}
	p := policy(t, db, "a")
	if p == nil || p.Meta["interrupted"] != "true" || p.Source != a.ID || p.Algorithm != "fdcc" || p.Size == 0 || p.ID != ja.PolicyID {
		t.Fatalf("stored %+v", p)
	}
	if policy(t, db, "b") != nil {
		t.Error("the queued job stored a policy")
	}
	if _, err := m.Submit("d", tiny(2)); !errors.Is(err, ErrClosed) {
		t.Errorf("submit after shutdown: %v", err)
	}
}

// TestNameTakenMeanwhile: a job whose name was stored meanwhile fails,
// saying why.
func TestNameTakenMeanwhile(t *testing.T) {
	db := openStore(t, "")
	if err := db.PutPolicy(context.Background(), &store.Policy{Name: "x", Algorithm: "fdcc", Data: []byte("x")}); err != nil {
		t.Fatal(err)
	}
	m := newManager(t, db, Config{})
	j, err := m.Submit("x", tiny(2))
	if err != nil {
		t.Fatal(err)
	}
	j = wait(t, m, j.ID, ended)
	if j.Status != Failed || j.Error == "" || j.PolicyID != "" {
		t.Fatalf("job %+v", j)
	}
}

// TestKeep: only the newest ended jobs are kept.
func TestKeep(t *testing.T) {
	m := newManager(t, openStore(t, ""), Config{Keep: 2})
	var ids []string
	for _, n := range []string{"a", "b", "c"} {
		j, err := m.Submit(n, tiny(2))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
		wait(t, m, j.ID, func(j Job) bool { return j.Status == Done })
	}
	if _, err := m.Get(context.Background(), ids[0]); !errors.Is(err, ErrNotFound) {
		t.Errorf("the oldest ended job is kept: %v", err)
	}
	if l, err := m.List(context.Background()); err != nil || len(l) != 2 || l[0].ID != ids[2] || l[1].ID != ids[1] {
		t.Errorf("list %+v, %v", l, err)
	}
}

// TestRestartAndResume: a job outlives its process: one the process left
// training is interrupted at the next start, with what it stored; resumed,
// it continues from its checkpoint to the end, every round once on its
// curve, and its final policy replaces the interrupted one. A job stopped
// before its first checkpoint starts again from its first episode.
func TestRestartAndResume(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "lab.db")
	db := openStore(t, path)
	cfg := Config{Dir: filepath.Join(dir, "ckpt"), Log: quiet()}
	m, err := New(ctx, db, cfg)
	if err != nil {
		t.Fatal(err)
	}
	a, err := m.Submit("a", tiny(30))
	if err != nil {
		t.Fatal(err)
	}
	wait(t, m, a.ID, func(j Job) bool { return j.Episode >= 3 })
	m.Shutdown(ctx)
	first := policy(t, db, "a")
	if first == nil {
		t.Fatal("no interrupted policy")
	}
	// a process that died leaves a job running in the store
	dead := &store.TrainJob{Name: "dead", Algorithm: "fdcc", Config: must(json.Marshal(tiny(4))), Status: store.StatusRunning, Episode: 2}
	if err := db.CreateTrainJob(ctx, dead); err != nil {
		t.Fatal(err)
	}
	m2 := newManager(t, db, cfg)
	list, err := m2.List(ctx)
	if err != nil || len(list) != 2 || list[0].ID != dead.ID || list[0].Status != Interrupted || !list[0].Resumable ||
		list[1].ID != a.ID || list[1].Status != Interrupted {
		t.Fatalf("after the restart %+v, %v", list, err)
	}
	if _, err := m2.Resume(ctx, "0123456789abcdef"); !errors.Is(err, ErrNotFound) {
		t.Errorf("resume an unknown job: %v", err)
	}
	ja, err := m2.Resume(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m2.Resume(ctx, a.ID); !errors.Is(err, ErrConflict) {
		t.Errorf("resume a queued job: %v", err)
	}
	ja = wait(t, m2, a.ID, ended)
	if ja.Status != Done || ja.Episode != 30 || len(ja.Curve) != 30 || ja.Interrupted || ja.Resumable {
		t.Fatalf("resumed to the end: %+v", ja)
	}
	for i, p := range ja.Curve {
		if p.Episode != i+1 {
			t.Fatalf("round %d is episode %d", i, p.Episode)
		}
	}
	final := policy(t, db, "a")
	if final == nil || final.ID == first.ID || final.ID != ja.PolicyID || final.Meta["interrupted"] != "" || final.Meta["episodes"] != "30" {
		t.Fatalf("final policy %+v (first %s)", final, first.ID)
	}
	if _, err := db.GetPolicy(ctx, first.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the interrupted policy is still stored: %v", err)
	}
	if _, err := os.Stat(filepath.Join(cfg.Dir, a.ID)); !os.IsNotExist(err) {
		t.Errorf("the finished job's checkpoint is left: %v", err)
	}
	if _, err := m2.Resume(ctx, a.ID); !errors.Is(err, ErrConflict) {
		t.Errorf("resume a finished job: %v", err)
	}
	// without a checkpoint: from the start
	jd, err := m2.Resume(ctx, dead.ID)
	if err != nil {
		t.Fatal(err)
	}
	jd = wait(t, m2, jd.ID, ended)
	if jd.Status != Done || len(jd.Curve) != 4 || jd.Curve[0].Episode != 1 || policy(t, db, "dead") == nil {
		t.Fatalf("resumed from scratch: %+v", jd)
	}
	// the same run as a job that did not stop: training is deterministic
	// for its seed
	m3 := newManager(t, db, Config{Log: quiet()})
	jc, err := m3.Submit("c", tiny(30))
	if err != nil {
		t.Fatal(err)
	}
	jc = wait(t, m3, jc.ID, ended)
	for i := range jc.Curve {
		if jc.Curve[i].Reward != ja.Curve[i].Reward || jc.Curve[i].CriticLoss != ja.Curve[i].CriticLoss {
			t.Fatalf("round %d: resumed %+v, whole %+v", i, ja.Curve[i], jc.Curve[i])
		}
	}
}

// TestCancelAndWatch: a viewer sees every round and the end; a cancelled
// job stores its policy so far and can be resumed; a queued one cancelled
// never starts and stores nothing.
func TestCancelAndWatch(t *testing.T) {
	ctx := context.Background()
	db := openStore(t, "")
	m := newManager(t, db, Config{})
	a, err := m.Submit("a", tiny(4000))
	if err != nil {
		t.Fatal(err)
	}
	b, err := m.Submit("b", tiny(2))
	if err != nil {
		t.Fatal(err)
	}
	jb, err := m.Cancel(ctx, b.ID)
	if err != nil || jb.Status != Cancelled {
		t.Fatalf("cancel the queued job: %+v, %v", jb, err)
	}
	j, ch, err := m.Watch(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	seen := len(j.Curve)
	for seen < 3 {
		select {
		case <-ch:
		case <-time.After(30 * time.Second):
			t.Fatal("no change in 30 s")
		}
		if j, ch, err = m.Watch(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
		seen = len(j.Curve)
	}
	if _, err := m.Cancel(ctx, a.ID); err != nil {
		t.Fatal(err)
	}
	for ch != nil {
		select {
		case <-ch:
		case <-time.After(30 * time.Second):
			t.Fatal("the job did not end")
		}
		if j, ch, err = m.Watch(ctx, a.ID); err != nil {
			t.Fatal(err)
		}
	}
	if j.Status != Cancelled || !j.Interrupted || j.PolicyID == "" || !j.Resumable || j.Error != "" {
		t.Fatalf("cancelled %+v", j)
	}
	if _, err := m.Cancel(ctx, a.ID); !errors.Is(err, ErrConflict) {
		t.Errorf("cancel an ended job: %v", err)
	}
	if jb, _ = m.Get(ctx, b.ID); jb.Status != Cancelled || jb.PolicyID != "" || jb.Episode != 0 {
		t.Fatalf("the queued job %+v", jb)
	}
	if policy(t, db, "b") != nil {
		t.Error("a job that never started stored a policy")
	}
}

// TestTimeCap: a job reaching the time cap stops, cancelled, with its
// policy so far.
func TestTimeCap(t *testing.T) {
	db := openStore(t, "")
	m := newManager(t, db, Config{MaxTime: 300 * time.Millisecond})
	j, err := m.Submit("capped", tiny(100_000))
	if err != nil {
		t.Fatal(err)
	}
	j = wait(t, m, j.ID, ended)
	if j.Status != Cancelled || !strings.Contains(j.Error, "max-train-time") || j.Episode == 0 || j.PolicyID == "" || !j.Interrupted {
		t.Fatalf("at the time cap: %+v", j)
	}
}

// TestPointJSON: a round's point keeps the trainer's progress through the
// store, numbers that are not finite as null.
func TestPointJSON(t *testing.T) {
	p := rl.Progress{Episode: 6, Episodes: 8, FanIn: 4, Reward: 0.5, CriticLoss: math.NaN(), ActorLoss: -1, Q: math.Inf(1), Steps: 10, Replay: 20,
		Wall: 1500 * time.Millisecond, Eval: &rl.Eval{Reward: 0.25, Score: 1.5, Unfair: []float64{0.1, math.NaN()}, PeakQ: []int64{1000, 2000},
			Slowdown: []float64{1.1, 1.2}, Finished: []bool{true, false}}}
	data, err := json.Marshal(pointOf(p))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"criticLoss":null`) || !strings.Contains(string(data), `"unfair":[0.1,null]`) {
		t.Fatalf("point %s", data)
	}
	var back point
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	got := back.progress()
	if !math.IsNaN(got.CriticLoss) || !math.IsNaN(got.Q) || !math.IsNaN(got.Eval.Unfair[1]) {
		t.Fatalf("round trip %+v", got)
	}
	got.CriticLoss, got.Q, got.Eval.Unfair[1] = p.CriticLoss, p.Q, p.Eval.Unfair[1]
	if fmtP := func(x rl.Progress) string { b, _ := json.Marshal(pointOf(x)); return string(b) }; fmtP(got) != fmtP(p) ||
		!reflect.DeepEqual(got.Eval.PeakQ, p.Eval.PeakQ) || got.Wall != p.Wall {
		t.Fatalf("round trip %+v, want %+v", got, p)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
