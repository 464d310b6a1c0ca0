package runs

import (
	"context"
	"os"
	"syscall"
	"testing"
	"time"

	"cclab/store"
)

// Stop answers at once on a big run: the viewers see the run end as soon as
// its engine stops and its last results are written; merging its stored
// series (compactRun: 1.8 of the 2.1 s a Stop took after 4 s of the
// 1024-host fat-tree, growing with the run's length and the machine's
// load) happens after. Measured on 2 shared cores, cancelling after 3 s
// with the series flushed every 20 ms: 2.34 s from the cancel to the final
// message before, 0.24 s after. The bound, 1.5 s, leaves room for load.
func TestStopBigRunAtOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("a 1024-host run for a few seconds")
	}
	doc, err := os.ReadFile("../../scenarios/library/fattree1024-permutation-hpcc.json")
	if err != nil {
		t.Fatal(err)
	}
	m, db, cs := manager(t, Config{FlushEvery: 20 * time.Millisecond}, string(doc))
	id := submit(t, m, cs[0], "a")
	time.Sleep(3 * time.Second)
	ctx := context.Background()
	t0 := time.Now()
	if err := m.Cancel(ctx, id); err != nil {
		t.Fatal(err)
	}
	final, _ := watch(t, m, id)
	took := time.Since(t0)
	t.Logf("cancel to the final message: %v", took)
	if final.Status != store.StatusCancelled {
		t.Fatalf("final %+v, want cancelled", final)
	}
	if took > 1500*time.Millisecond {
		t.Errorf("the run ended %v after Stop, want under 1.5 s", took)
	}
	rec, err := db.GetRun(ctx, id)
	if err != nil || rec.Status != store.StatusCancelled {
		t.Fatalf("stored %+v, %v: want cancelled as soon as the viewers know", rec, err)
	}
	m.WaitEnded(ctx, id, time.Minute) // the series are compacted, then the slot is free
	if running, _ := m.Counts(); running != 0 {
		t.Errorf("%d runs still running", running)
	}
}

// A paced (slow-motion) run lends its slot while it sleeps: with one slot,
// another client's run starts and finishes while it goes on (before, it
// waited for the paced run to end: a soak test's students waited for
// slots held by runs asleep).
func TestPacedRunLendsItsSlot(t *testing.T) {
	m, _, cs := manager(t, Config{Concurrency: 1}, long, incast)
	ctx := context.Background()
	rec, err := m.Submit(ctx, Submission{ScenarioID: store.ScenarioID(cs[0].Canonical), Compiled: cs[0], Client: "a", Speed: 10})
	if err != nil {
		t.Fatal(err)
	}
	paced := rec.ID
	deadline := time.Now().Add(10 * time.Second)
	for {
		if p, _ := m.LiveProgress(paced); p.Status == store.StatusRunning && p.SimNs > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the paced run did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	other := submit(t, m, cs[1], "b")
	if final, _ := watch(t, m, other); final.Status != store.StatusDone {
		t.Fatalf("the other run ended %+v", final)
	}
	if !m.Live(paced) {
		t.Fatal("the paced run ended")
	}
	// the paced run still steps, and its pause and cancel still work
	p0, _ := m.LiveProgress(paced)
	time.Sleep(300 * time.Millisecond)
	if p1, _ := m.LiveProgress(paced); p1.SimNs <= p0.SimNs {
		t.Errorf("the paced run stopped stepping: %v then %v ns", p0.SimNs, p1.SimNs)
	}
	if err := m.Cancel(ctx, paced); err != nil {
		t.Fatal(err)
	}
	if final, _ := watch(t, m, paced); final.Status != store.StatusCancelled {
		t.Fatalf("the paced run ended %+v", final)
	}
	m.WaitEnded(ctx, paced, 10*time.Second)
	m.mu.Lock()
	running, lent := m.running, m.lent
	m.mu.Unlock()
	if running != 0 || lent != 0 {
		t.Errorf("after both runs: running %d, lent %d", running, lent)
	}
}

// A paced run sleeps between its steps: at 10 µs per second it keeps pace
// on a fraction of a core (it spun one before: 1.85 s of CPU in 2 s; now
// ~25 ms). The process's own CPU time, so other load does not count.
func TestPacedRunSleeps(t *testing.T) {
	m, _, cs := manager(t, Config{Concurrency: 1}, long)
	rec, err := m.Submit(context.Background(), Submission{ScenarioID: store.ScenarioID(cs[0].Canonical), Compiled: cs[0], Client: "a", Speed: 10})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	c0, p0 := cpuTime(t), progressOf(m, rec.ID)
	time.Sleep(2 * time.Second)
	c1, p1 := cpuTime(t), progressOf(m, rec.ID)
	t.Logf("CPU over 2 s: %v; simulated %.0f ns", c1-c0, p1-p0)
	if c1-c0 > 500*time.Millisecond {
		t.Errorf("a paced run used %v of CPU in 2 s", c1-c0)
	}
	if d := p1 - p0; d < 10_000 || d > 30_000 {
		t.Errorf("simulated %.0f ns in 2 s at 10 µs per second", d)
	}
}

func progressOf(m *Manager, id string) float64 {
	p, _ := m.LiveProgress(id)
	return p.SimNs
}

func cpuTime(t *testing.T) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Skip("no getrusage:", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
