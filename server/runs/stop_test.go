package runs

import (
	"context"
	"os"
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
