package training

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"cclab/sim/rl"
	"cclab/store"
)

// memStore keeps policies in memory.
type memStore struct {
	mu   sync.Mutex
	list []*store.Policy
}

func (m *memStore) PutPolicy(_ context.Context, p *store.Policy) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, q := range m.list {
		if q.Name == p.Name {
			return store.ErrExists
		}
	}
	p.ID = "p" + p.Name
	m.list = append(m.list, p)
	return nil
}

func (m *memStore) get(name string) *store.Policy {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, q := range m.list {
		if q.Name == name {
			return q
		}
	}
	return nil
}

func tiny(episodes int) rl.Config {
	c := rl.DefaultConfig("fdcc")
	c.Episodes, c.Hidden, c.Updates, c.EvalEvery = episodes, 8, 2, 0
	c.Stages, c.StageEpisodes, c.Size = []int{2}, 2, 20_000
	return c
}

func wait(t *testing.T, m *Manager, id string, cond func(Job) bool) Job {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		j, err := m.Get(id)
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

// TestQueueAndShutdown: one job trains, one waits, a third is refused;
// the same name twice is a conflict; a shutdown cancels both, and the
// one that has played a round stores its policy, marked interrupted.
func TestQueueAndShutdown(t *testing.T) {
	st := &memStore{}
	m := New(st, Config{MaxQueue: 1})
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
	ja, _ := m.Get(a.ID)
	jb, _ := m.Get(b.ID)
	if ja.Status != Cancelled || !ja.Interrupted || jb.Status != Cancelled || jb.PolicyID != "" {
		t.Fatalf("after shutdown: %+v, %+v", ja, jb)
	}
	p := st.get("a")
	if p == nil || p.Meta["interrupted"] != "true" || p.Source != a.ID || p.Algorithm != "fdcc" || len(p.Data) == 0 {
		t.Fatalf("stored %+v", p)
	}
	if st.get("b") != nil {
		t.Error("the queued job stored a policy")
	}
	if _, err := m.Submit("d", tiny(2)); !errors.Is(err, ErrClosed) {
		t.Errorf("submit after shutdown: %v", err)
	}
}

// TestNameTakenMeanwhile: a job whose name was stored meanwhile fails,
// saying why.
func TestNameTakenMeanwhile(t *testing.T) {
	st := &memStore{}
	st.PutPolicy(context.Background(), &store.Policy{Name: "x"})
	m := New(st, Config{})
	j, err := m.Submit("x", tiny(2))
	if err != nil {
		t.Fatal(err)
	}
	j = wait(t, m, j.ID, func(j Job) bool { return j.Status != Queued && j.Status != Running })
	if j.Status != Failed || j.Error == "" || j.PolicyID != "" {
		t.Fatalf("job %+v", j)
	}
	m.Shutdown(context.Background())
}

// TestKeep: only the newest ended jobs are kept in memory.
func TestKeep(t *testing.T) {
	m := New(&memStore{}, Config{Keep: 2})
	var ids []string
	for _, n := range []string{"a", "b", "c"} {
		j, err := m.Submit(n, tiny(2))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.ID)
		wait(t, m, j.ID, func(j Job) bool { return j.Status == Done })
	}
	m.Shutdown(context.Background())
	if _, err := m.Get(ids[0]); !errors.Is(err, ErrNotFound) {
		t.Errorf("the oldest ended job is kept: %v", err)
	}
	if l := m.List(); len(l) != 2 || l[0].ID != ids[2] || l[1].ID != ids[1] {
		t.Errorf("list %+v", l)
	}
}
