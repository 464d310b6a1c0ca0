package store

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
)

// crashEnv names the database TestCrashChild writes to.
const crashEnv = "STORE_CRASH_TEST_DB"

// TestCrashChild is the writer TestCrashSafety kills; it does nothing
// unless run by it.
func TestCrashChild(t *testing.T) {
	path := os.Getenv(crashEnv)
	if path == "" {
		t.Skip("run by TestCrashSafety")
	}
	ctx := context.Background()
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	sc := &Scenario{Name: "crash", JSON: []byte(`{"crash":true}`)}
	if _, err := db.PutScenario(ctx, sc); err != nil {
		t.Fatal(err)
	}
	ready := false
	deadline := time.Now().Add(30 * time.Second) // in case nobody kills it
	for i := 0; time.Now().Before(deadline); i++ {
		r := &Run{ScenarioID: sc.ID, Algorithm: "dcqcn", Status: StatusRunning}
		if err := db.CreateRun(ctx, r); err != nil {
			t.Fatal(err)
		}
		rec := NewRecorder(50_000_000)
		idx := make([]int, 50)
		for k := range idx {
			idx[k] = rec.Series("m", fmt.Sprint(k), Agg(k%2))
		}
		// Progress.SimPS counts the level-0 points stored with it, which
		// the checks compare with the chunks.
		points := int64(0)
		for flush := range 10 {
			for tick := range 100 {
				tt := int64(flush*100+tick) * 10_000_000
				for _, x := range idx {
					rec.Add(x, tt, float64(tick*x))
				}
			}
			points += int64(rec.Pending())
			if err := db.AppendSeries(ctx, r.ID, rec.Flush(false), Progress{SimPS: points}); err != nil {
				t.Fatal(err)
			}
			if !ready {
				fmt.Println("ready")
				ready = true
			}
		}
		if err := db.FinishRun(ctx, r.ID, Finish{Status: StatusDone, Chunks: rec.Flush(true), Flows: testFlows,
			Progress: Progress{SimPS: points}, Summary: []byte(`{"ok":true}`)}); err != nil {
			t.Fatal(err)
		}
		if i%5 == 4 {
			if _, err := db.Prune(ctx, 8, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// TestCrashSafety kills a process writing runs with SIGKILL at random
// moments, then checks that the database is intact and every transaction
// is all there or not at all.
func TestCrashSafety(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		t.Skip("needs SIGKILL and subprocesses")
	}
	if os.Getenv(crashEnv) != "" {
		t.Skip("in the child")
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	for round, wait := range []time.Duration{0, 150 * time.Millisecond, 400 * time.Millisecond, 900 * time.Millisecond} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashEnv+"="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(out)
		ok := false
		for lines.Scan() {
			if lines.Text() == "ready" {
				ok = true
				break
			}
		}
		if !ok {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("round %d: the child did not start writing", round)
		}
		time.Sleep(wait)
		if err := cmd.Process.Kill(); err != nil { // SIGKILL
			t.Fatal(err)
		}
		cmd.Wait()
		checkCrashed(t, path, round)
	}
}

// checkCrashed opens the database a killed writer left and checks it.
func checkCrashed(t *testing.T, path string, round int) {
	t.Helper()
	ctx := context.Background()
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("round %d: %v", round, err)
	}
	defer db.Close()
	runs, done := checkWholeRuns(t, db, fmt.Sprintf("round %d", round), StatusInterrupted)
	ids, err := db.MarkInterrupted(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("round %d: %d runs, %d done, %d interrupted", round, runs, len(done), len(ids))
}

// checkWholeRuns checks a database holds whole transactions only: it
// passes SQLite's integrity check, every run has the level-0 points its
// progress counts, a finished run its summary and flows, a running one (or
// one with a status in also) neither. It returns the number of runs and
// the finished ones.
func checkWholeRuns(t *testing.T, db *DB, label string, also ...string) (int, map[string]bool) {
	t.Helper()
	if s, err := db.IntegrityCheck(context.Background()); err != nil || s != "ok" {
		t.Fatalf("%s: integrity check %q, %v", label, s, err)
	}
	rows, err := db.sql.Query(`SELECT r.id, r.status, r.progress_sim_ps, r.summary IS NOT NULL,
			(SELECT coalesce(sum(n), 0) FROM chunks c WHERE c.run = r.rid AND c.level = 0),
			(SELECT count(*) FROM flows f WHERE f.run = r.rid)
		FROM runs r`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	runs, done := 0, map[string]bool{}
	for rows.Next() {
		var id, status string
		var progress, points int64
		var summary bool
		var flows int
		if err := rows.Scan(&id, &status, &progress, &summary, &points, &flows); err != nil {
			t.Fatal(err)
		}
		runs++
		if points != progress {
			t.Errorf("%s: run %s (%s) has %d points stored, its progress says %d", label, id, status, points, progress)
		}
		switch {
		case status == StatusDone:
			done[id] = true
			if !summary || flows != len(testFlows) {
				t.Errorf("%s: finished run %s has summary %v and %d flows", label, id, summary, flows)
			}
		case status == StatusRunning || slices.Contains(also, status):
			if summary || flows != 0 {
				t.Errorf("%s: running run %s has summary %v and %d flows", label, id, summary, flows)
			}
		default:
			t.Errorf("%s: run %s is %s", label, id, status)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return runs, done
}
