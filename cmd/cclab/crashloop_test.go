package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"

	"cclab/store"
)

// crashLoopSeed seeds TestCrashLoop's choices; CCLAB_CRASHLOOP_SEED
// replaces it, to explore other schedules.
const crashLoopSeed = 18

// crashLoopScenarios are small library scenarios: as fast as possible they
// take milliseconds, paced they are still running when the server dies.
var crashLoopScenarios = []string{"incast-8to1", "dumbbell-4to1-none", "fairness-2flows-hpcc", "incast-16to1-dcqcn"}

// runDigest is what a run's results are compared by across a crash: each
// part is a hash of its %#v (exact for floats, NaN included).
type runDigest struct {
	run, flows, series0, series1, events string
}

func digest(v any) string {
	h := sha256.Sum256(fmt.Appendf(nil, "%#v", v))
	return hex.EncodeToString(h[:8])
}

// digestRun reads a run's record, summary, flows and series (both levels)
// through the store API.
func digestRun(t *testing.T, db *store.DB, id string) runDigest {
	t.Helper()
	ctx := context.Background()
	r, err := db.GetRun(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	flows, err := db.Flows(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	s0, err := db.Series(ctx, id, store.SeriesQuery{Level: 0})
	if err != nil {
		t.Fatal(err)
	}
	s1, err := db.Series(ctx, id, store.SeriesQuery{Level: 1})
	if err != nil {
		t.Fatal(err)
	}
	evs, err := db.RunEvents(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return runDigest{digest(*r), digest(flows), digest(s0), digest(s1), digest(evs)}
}

// crashEvent is one step of a round's schedule, at ms after the server is
// ready: submit a run, pause the last one submitted, or kill the server.
type crashEvent struct {
	at       int // ms
	kind     string
	scenario string
	speed    float64
	seed     int
}

// crashSchedule draws a round's schedule: 2 to 5 runs at random moments in
// the first 1.2 s, some of them paced (so that they are running when the
// server dies), a pause after some, and the kill somewhere in 50..1350 ms.
func crashSchedule(rng *rand.Rand) []crashEvent {
	var evs []crashEvent
	for range 2 + rng.IntN(4) {
		at := rng.IntN(1200)
		speed := []float64{0, 0, 0, 200, 1000}[rng.IntN(5)]
		evs = append(evs, crashEvent{at: at, kind: "submit", scenario: crashLoopScenarios[rng.IntN(len(crashLoopScenarios))],
			speed: speed, seed: 1 + rng.IntN(100)})
		if rng.IntN(4) == 0 {
			evs = append(evs, crashEvent{at: at + 1 + rng.IntN(300), kind: "pause"})
		}
	}
	evs = append(evs, crashEvent{at: 50 + rng.IntN(1300), kind: "kill"})
	slices.SortStableFunc(evs, func(a, b crashEvent) int { return a.at - b.at })
	return evs
}

// TestCrashLoop starts `cclab serve` on one database file ten times, and
// each time submits a few small runs through the REST API at random
// moments and kills the server with SIGKILL at a random moment (a seeded
// schedule; the moments are wall-clock, so what the runs have reached
// varies). After each kill the database must pass integrity_check and hold
// every run the API accepted; after each restart every run that was done
// (or otherwise finished) before the kill is unchanged — record, summary,
// flows, series at both levels, events — and every run that was queued,
// running or paused is interrupted, with the series it had written kept.
func TestCrashLoop(t *testing.T) {
	seed := uint64(crashLoopSeed)
	if s := os.Getenv("CCLAB_CRASHLOOP_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("CCLAB_CRASHLOOP_SEED=%q: %v", s, err)
		}
		seed = v
	}
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, seed^0xc1ab))
	db := filepath.Join(t.TempDir(), "lab.db")
	start := time.Now()

	finished := map[string]runDigest{} // runs in a terminal status, as they were first seen
	interrupted := map[string]string{} // runs live at the last kill: their level-0 series digest
	accepted := map[string]bool{}      // every run the API answered 201 for
	totals := map[string]int{}
	done := 0 // runs done at the previous kill
	const rounds = 10
	for round := 0; round <= rounds; round++ {
		s := startServe(t, db, "--concurrency", "2", "--grace", "100ms")
		// after a restart: the previous kill's live runs are interrupted,
		// finished runs unchanged (read while the server runs)
		nInterrupted := checkRestart(t, s, db, round, finished, interrupted)
		if round == rounds {
			// the lab still works after ten crashes
			var r runInfo
			if code := s.call("POST", "/api/runs", map[string]any{"scenarioId": "incast-8to1"}, &r); code != 201 {
				t.Fatalf("after %d crashes: POST /api/runs answered %d; logs:\n%s", rounds, code, s.logs)
			}
			s.waitRun(r.ID, 30*time.Second, "done")
			s.cmd.Process.Signal(syscall.SIGTERM)
			if err := s.cmd.Wait(); err != nil {
				t.Fatalf("cclab serve after SIGTERM: %v; logs:\n%s", err, s.logs)
			}
			break
		}

		ready := time.Now()
		var last string
		killAt := 0
		nSubmitted, nPaused := 0, 0
		schedule := crashSchedule(rng)
		for _, ev := range schedule {
			time.Sleep(time.Until(ready.Add(time.Duration(ev.at) * time.Millisecond)))
			switch ev.kind {
			case "submit":
				var r runInfo
				req := map[string]any{"scenarioId": ev.scenario, "seed": ev.seed}
				if ev.speed > 0 {
					req["speed"] = ev.speed
				}
				if code := s.call("POST", "/api/runs", req, &r); code != 201 {
					t.Fatalf("round %d: POST /api/runs %v: %d; logs:\n%s", round, req, code, s.logs)
				}
				accepted[r.ID] = true
				last = r.ID
				nSubmitted++
			case "pause":
				// 409 when the run has finished already
				code := s.call("POST", "/api/runs/"+last+"/pause", nil, nil)
				if code >= 500 {
					t.Fatalf("round %d: pause %s: %d; logs:\n%s", round, last, code, s.logs)
				}
				if code < 300 {
					nPaused++
				}
			case "kill":
				killAt = ev.at
			}
			if ev.kind == "kill" {
				break
			}
		}
		// what the API says just before the kill: a run it calls done must
		// be done in the file
		var list struct{ Runs []runInfo }
		s.call("GET", "/api/runs?limit=1000", nil, &list)
		doneBefore := map[string]bool{}
		for _, r := range list.Runs {
			if r.Status == store.StatusDone {
				doneBefore[r.ID] = true
			}
		}
		if err := s.cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		s.cmd.Wait()

		byStatus := checkKilled(t, db, round, accepted, doneBefore, finished, interrupted)
		t.Logf("round %d: the restart interrupted %d; %d of %d scheduled runs submitted, %d paused; killed at %d ms: "+
			"%d newly done (%d seen done by the API), %d queued, %d running, %d paused; the file holds %v",
			round, nInterrupted, nSubmitted, countKind(schedule, "submit"), nPaused, killAt,
			byStatus[store.StatusDone]-done, len(doneBefore), byStatus[store.StatusQueued], byStatus[store.StatusRunning],
			byStatus[store.StatusPaused], byStatus)
		done = byStatus[store.StatusDone]
		for _, k := range []string{store.StatusQueued, store.StatusRunning, store.StatusPaused} {
			totals[k] += byStatus[k]
		}
	}
	if st, err := os.Stat(db); err == nil {
		t.Logf("%d rounds in %v: %d runs accepted, %d done at the last kill, %d finished runs checked across restarts, live at a kill (then interrupted): %d queued, %d running, %d paused; database %d bytes",
			rounds, time.Since(start).Round(time.Millisecond), len(accepted), done, len(finished),
			totals[store.StatusQueued], totals[store.StatusRunning], totals[store.StatusPaused], st.Size())
	}
	// the schedule must have exercised both sides
	live := totals[store.StatusQueued] + totals[store.StatusRunning] + totals[store.StatusPaused]
	if done == 0 || live == 0 {
		t.Fatalf("the crashes met %d done and %d live runs; the test needs both", done, live)
	}
}

func countKind(evs []crashEvent, kind string) int {
	n := 0
	for _, ev := range evs {
		if ev.kind == kind {
			n++
		}
	}
	return n
}

// checkKilled opens the database a killed server left (nothing marks
// interrupted runs yet) and checks it; it records the finished runs not
// seen before and the live ones, and returns the runs by status.
func checkKilled(t *testing.T, db string, round int, accepted, doneBefore map[string]bool,
	finished map[string]runDigest, interrupted map[string]string) map[string]int {
	t.Helper()
	ctx := context.Background()
	sdb, err := store.Open(ctx, db)
	if err != nil {
		t.Fatalf("round %d: opening the database after kill -9: %v", round, err)
	}
	defer sdb.Close()
	if res, err := sdb.IntegrityCheck(ctx); err != nil || res != "ok" {
		t.Fatalf("round %d: integrity_check after kill -9: %q, %v", round, res, err)
	}
	runs, err := sdb.ListRuns(ctx, store.RunFilter{Limit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	inFile := map[string]bool{}
	byStatus := map[string]int{}
	clear(interrupted)
	for _, r := range runs {
		inFile[r.ID] = true
		byStatus[r.Status]++
		if doneBefore[r.ID] && r.Status != store.StatusDone {
			t.Errorf("round %d: run %s was done before the kill, is %s in the file", round, r.ID, r.Status)
		}
		d := digestRun(t, sdb, r.ID)
		switch {
		case store.Terminal(r.Status):
			if r.Status == store.StatusFailed {
				t.Errorf("round %d: run %s failed: %s", round, r.ID, r.Error)
			}
			full, err := sdb.GetRun(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			flows, err := sdb.Flows(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if r.Status == store.StatusDone && (len(full.Summary) == 0 || len(flows) == 0) {
				t.Errorf("round %d: done run %s has a %d-byte summary and %d flows", round, r.ID, len(full.Summary), len(flows))
			}
			if old, ok := finished[r.ID]; ok {
				if d != old {
					t.Errorf("round %d: finished run %s (%s) changed across the crash: %+v, was %+v", round, r.ID, r.Status, d, old)
				}
			} else {
				finished[r.ID] = d
			}
		default: // queued, running or paused when the server died
			interrupted[r.ID] = d.series0
		}
	}
	for id := range accepted {
		if !inFile[id] {
			t.Errorf("round %d: run %s, accepted by the API, is not in the file", round, id)
		}
	}
	return byStatus
}

// checkRestart checks, through the store and the REST API of the restarted
// server s, that the runs live at the kill are interrupted with their
// series kept and the finished ones unchanged; it returns how many were
// interrupted.
func checkRestart(t *testing.T, s *serveProc, db string, round int, finished map[string]runDigest, interrupted map[string]string) int {
	t.Helper()
	ctx := context.Background()
	sdb, err := store.Open(ctx, db)
	if err != nil {
		t.Fatalf("round %d: %v", round, err)
	}
	defer sdb.Close()
	for id, series0 := range interrupted {
		r, err := sdb.GetRun(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != store.StatusInterrupted || r.Error == "" || r.FinishedAt.IsZero() {
			t.Errorf("round %d: run %s, live at the kill, is %s (error %q) after the restart", round, id, r.Status, r.Error)
		}
		if d := digestRun(t, sdb, id); d.series0 != series0 {
			t.Errorf("round %d: the series run %s had written changed across the restart", round, id)
		}
		var ri runInfo
		if s.call("GET", "/api/runs/"+id, nil, &ri); ri.Status != "interrupted" {
			t.Errorf("round %d: GET /api/runs/%s: %+v", round, id, ri)
		}
	}
	for id, old := range finished {
		if d := digestRun(t, sdb, id); d != old {
			t.Errorf("round %d: finished run %s changed across the restart: %+v, was %+v", round, id, d, old)
		}
	}
	return len(interrupted)
}
