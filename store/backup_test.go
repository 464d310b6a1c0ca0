package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// dumpTables returns every row of every table of db, each row formatted
// with %#v (blobs in hex), the rows of a table sorted by all its columns:
// two databases with equal dumps hold the same data.
func dumpTables(t *testing.T, db *DB) map[string][]string {
	t.Helper()
	names, err := db.sql.Query(`SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for names.Next() {
		var n string
		if err := names.Scan(&n); err != nil {
			t.Fatal(err)
		}
		tables = append(tables, n)
	}
	names.Close()
	out := map[string][]string{}
	for _, table := range tables {
		rows, err := db.sql.Query(`SELECT * FROM "` + table + `"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		var lines []string
		for rows.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			lines = append(lines, fmt.Sprintf("%#v", vals))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		slices.Sort(lines)
		out[table] = lines
	}
	return out
}

func fileMode(t *testing.T, path string) fs.FileMode {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

// pragmaInt returns the value of an integer PRAGMA.
func pragmaInt(t *testing.T, db *DB, name string) int {
	t.Helper()
	var n int
	if err := db.sql.QueryRow(`PRAGMA ` + name).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// sameSeries reports whether two series lists are equal, NaNs by their
// bits.
func sameSeries(a, b []Series) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].Index != b[i].Index || a[i].Metric != b[i].Metric || a[i].Entity != b[i].Entity ||
			!slices.Equal(a[i].T, b[i].T) || !sameBits(a[i].V, b[i].V) {
			return false
		}
	}
	return true
}

// checkSameLab checks that the copy holds exactly what the original does:
// through the store API (every run, its summary, flows, events and series
// at both levels) and row by row (every table, every chunk's bytes).
func checkSameLab(t *testing.T, orig, cp *DB) {
	t.Helper()
	ctx := context.Background()
	if s, err := cp.IntegrityCheck(ctx); err != nil || s != "ok" {
		t.Fatalf("integrity_check of the copy: %q, %v", s, err)
	}
	for _, p := range []string{"user_version", "auto_vacuum"} {
		if o, c := pragmaInt(t, orig, p), pragmaInt(t, cp, p); o != c {
			t.Errorf("PRAGMA %s: copy %d, original %d", p, c, o)
		}
	}
	scs, err := orig.ListScenarios(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cscs, err := cp.ListScenarios(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(scs) != len(cscs) {
		t.Errorf("%d scenarios in the copy, %d in the original", len(cscs), len(scs))
	}
	runs, err := orig.ListRuns(ctx, RunFilter{Limit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := cp.CountRuns(ctx, RunFilter{}); err != nil || n != len(runs) {
		t.Errorf("%d runs in the copy (%v), %d in the original", n, err, len(runs))
	}
	for _, r := range runs {
		want, err := orig.GetRun(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		got, err := cp.GetRun(ctx, r.ID)
		if err != nil {
			t.Fatalf("run %s in the copy: %v", r.ID, err)
		}
		sameRun(t, got, want)
		wf, err := orig.Flows(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		gf, err := cp.Flows(ctx, r.ID)
		if err != nil || fmt.Sprintf("%#v", gf) != fmt.Sprintf("%#v", wf) {
			t.Errorf("run %s: flows %v in the copy, %v; want %v", r.ID, gf, err, wf)
		}
		we, _ := orig.RunEvents(ctx, r.ID)
		ge, err := cp.RunEvents(ctx, r.ID)
		if err != nil || fmt.Sprint(ge) != fmt.Sprint(we) {
			t.Errorf("run %s: events %v in the copy, %v; want %v", r.ID, ge, err, we)
		}
		for level := range 2 {
			ws, err := orig.Series(ctx, r.ID, SeriesQuery{Level: level})
			if err != nil {
				t.Fatal(err)
			}
			gs, err := cp.Series(ctx, r.ID, SeriesQuery{Level: level})
			if err != nil || !sameSeries(gs, ws) {
				t.Errorf("run %s: level-%d series differ in the copy (%d and %d series, %v)", r.ID, level, len(gs), len(ws), err)
			}
		}
	}
	want, got := dumpTables(t, orig), dumpTables(t, cp)
	for table, rows := range want {
		if !slices.Equal(got[table], rows) {
			t.Errorf("table %s: %d rows in the copy, %d in the original, or different", table, len(got[table]), len(rows))
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d tables in the copy, %d in the original", len(got), len(want))
	}
	if len(want["chunks"]) != count(t, orig, `SELECT count(*) FROM chunks`) {
		t.Fatal("dumpTables missed chunks")
	}
}

// fillRun records n flushes of a few series for run r and finishes it
// with status (none: it stays running).
func fillRun(t *testing.T, db *DB, r *Run, series, n int, status string) {
	t.Helper()
	ctx := context.Background()
	rec := NewRecorder(r.BucketPS)
	for f := range n {
		for s := range series {
			idx := rec.Series("queue_bytes", fmt.Sprint("p", s), Agg(s%2))
			for i := range 500 {
				tt := int64(f*500+i) * 10_000_000
				v := float64((i * (s + 1)) % 97 * 1000)
				if i == 7 && s == 1 {
					v = math.NaN()
				}
				rec.Add(idx, tt, v)
			}
		}
		if err := db.AppendSeries(ctx, r.ID, rec.Flush(false), Progress{Fraction: float64(f+1) / float64(n+1), SimPS: int64(f+1) * 5_000_000_000}); err != nil {
			t.Fatal(err)
		}
	}
	if status == "" {
		return
	}
	if err := db.FinishRun(ctx, r.ID, Finish{Status: status, Chunks: rec.Flush(true), Flows: testFlows,
		Progress: Progress{Fraction: 1, SimPS: int64(n) * 5_000_000_000, Events: 12345, WallSeconds: 0.5},
		Summary:  []byte(`{"flows": 3, "note": "` + status + `"}`)}); err != nil {
		t.Fatal(err)
	}
}

func TestBackupCopiesEverything(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		build func(t *testing.T, db *DB)
	}{
		{"empty", func(t *testing.T, db *DB) {}},
		{"scenarios only", func(t *testing.T, db *DB) {
			putScenario(t, db, "a", `{"a":1}`)
			putScenario(t, db, "b", `{"b":2}`)
		}},
		{"finished runs with series", func(t *testing.T, db *DB) {
			sc := putScenario(t, db, "s", `{"s":1}`)
			for i := range 3 {
				fillRun(t, db, createRun(t, db, sc, i, nil), 4, 3, StatusDone)
			}
		}},
		{"every state", func(t *testing.T, db *DB) {
			sc := putScenario(t, db, "s", `{"s":1}`)
			other := putScenario(t, db, "other", `{"o":1}`)
			fillRun(t, db, createRun(t, db, sc, 1, nil), 3, 2, StatusDone)
			fillRun(t, db, createRun(t, db, sc, 2, func(r *Run) { r.Pinned = true; r.Algorithm = "hpcc" }), 2, 2, StatusCancelled)
			fillRun(t, db, createRun(t, db, other, 3, func(r *Run) { r.Status = StatusRunning }), 2, 2, "")
			createRun(t, db, other, 4, func(r *Run) { r.Status = StatusQueued })
			ev := createRun(t, db, sc, 5, func(r *Run) { r.Status = StatusRunning })
			if err := db.AddRunEvent(ctx, ev.ID, RunEvent{AtPS: 1000, Params: map[string]float64{"wr": 100}, Wall: t0}, nil, nil); err != nil {
				t.Fatal(err)
			}
			fillRun(t, db, ev, 1, 1, StatusFailed)
		}},
		{"after pruning (free pages)", func(t *testing.T, db *DB) {
			sc := putScenario(t, db, "s", `{"s":1}`)
			for i := range 6 {
				fillRun(t, db, createRun(t, db, sc, i, nil), 6, 3, StatusDone)
			}
			if _, err := db.Prune(ctx, 2, 0); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			db := openTest(t)
			tc.build(t, db)
			out := filepath.Join(t.TempDir(), "copy.db")
			if err := db.Backup(ctx, out); err != nil {
				t.Fatal(err)
			}
			if leftovers, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".*tmp*")); len(leftovers) != 0 {
				t.Errorf("temporary files left: %v", leftovers)
			}
			if o, c := fileMode(t, db.path), fileMode(t, out); o != c {
				t.Errorf("the copy's permissions %v, the original's %v", c, o)
			}
			cp, err := Open(ctx, out)
			if err != nil {
				t.Fatal(err)
			}
			defer cp.Close()
			checkSameLab(t, db, cp)
			o, _ := db.SizeBytes(ctx)
			c, _ := cp.SizeBytes(ctx)
			t.Logf("%d runs, %d chunks: %d bytes in use, copy %d bytes", count(t, db, `SELECT count(*) FROM runs`),
				count(t, db, `SELECT count(*) FROM chunks`), o, c)
		})
	}
}

func TestBackupRefusesToOverwrite(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name    string
		prepare func(path string)
	}{
		{"a file", func(p string) { os.WriteFile(p, []byte("precious"), 0o644) }},
		{"an empty file", func(p string) { os.WriteFile(p, nil, 0o644) }},
		{"a folder", func(p string) { os.Mkdir(p, 0o755) }},
		{"a dangling symlink", func(p string) { os.Symlink(filepath.Join(dir, "nowhere"), p) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
			tc.prepare(p)
			before, _ := os.ReadFile(p)
			err := db.Backup(ctx, p)
			if !errors.Is(err, fs.ErrExist) || !strings.Contains(err.Error(), p) {
				t.Fatalf("Backup onto %s: %v, want an error wrapping fs.ErrExist naming the file", tc.name, err)
			}
			if after, _ := os.ReadFile(p); string(after) != string(before) {
				t.Errorf("the existing file changed: %q", after)
			}
		})
	}
	for _, bad := range []string{"", "x.db?mode=ro", filepath.Join(dir, "no-such-dir", "x.db")} {
		if err := db.Backup(ctx, bad); err == nil || !strings.HasPrefix(err.Error(), "store: backup") {
			t.Errorf("Backup(%q): %v", bad, err)
		}
	}
	if leftovers, _ := filepath.Glob(filepath.Join(dir, ".*tmp*")); len(leftovers) != 0 {
		t.Errorf("temporary files left: %v", leftovers)
	}
}

// TestBackupWhileWriting backs up repeatedly while two writers (one on the
// same DB, one on its own connection pool, as a running server is) keep
// creating runs, appending series and finishing runs. Every copy must open
// cleanly, pass integrity_check, and hold whole transactions only: a run's
// stored level-0 points equal the progress stored with them, a finished
// run has its summary and flows, and finished runs never go missing from
// one copy to the next. After the writers stop, a last copy equals the
// original.
func TestBackupWhileWriting(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "lab.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	other, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	sc := putScenario(t, db, "s", `{"s":1}`)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	errs := make(chan error, 2)
	for w, wdb := range []*DB{db, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				if err := writeOneRun(ctx, wdb, sc.ID, w*100000+i); err != nil {
					errs <- fmt.Errorf("writer %d: %w", w, err)
					return
				}
			}
		}()
	}
	dir := t.TempDir()
	prevDone := map[string]bool{}
	const copies = 8
	for k := range copies {
		time.Sleep(40 * time.Millisecond)
		out := filepath.Join(dir, fmt.Sprintf("copy%d.db", k))
		start := time.Now()
		if err := db.Backup(ctx, out); err != nil {
			t.Fatal(err)
		}
		took := time.Since(start)
		cp, err := Open(ctx, out)
		if err != nil {
			t.Fatal(err)
		}
		runs, done := checkWhole(t, cp, k)
		for id := range prevDone {
			if !done[id] {
				t.Errorf("copy %d: run %s, done in the previous copy, is not done", k, id)
			}
		}
		prevDone = done
		st, _ := os.Stat(out)
		t.Logf("copy %d: %d runs, %d done, %d bytes, in %v", k, runs, len(done), st.Size(), took.Round(time.Millisecond))
		cp.Close()
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if len(prevDone) == 0 {
		t.Fatal("no run finished while backing up")
	}
	out := filepath.Join(dir, "final.db")
	if err := db.Backup(ctx, out); err != nil {
		t.Fatal(err)
	}
	cp, err := Open(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Close()
	checkSameLab(t, db, cp)
}

// writeOneRun writes a run the way the run manager does: created running,
// series appended in a few flushes with the points so far as its progress,
// then finished with flows and a summary.
func writeOneRun(ctx context.Context, db *DB, scenarioID string, i int) error {
	r := &Run{ScenarioID: scenarioID, Name: fmt.Sprint("run ", i), Algorithm: "dcqcn", Status: StatusRunning, BucketPS: 50_000_000}
	if err := db.CreateRun(ctx, r); err != nil {
		return err
	}
	rec := NewRecorder(r.BucketPS)
	idx := make([]int, 20)
	for k := range idx {
		idx[k] = rec.Series("m", fmt.Sprint(k), Agg(k%2))
	}
	points := int64(0)
	for flush := range 4 {
		for tick := range 50 {
			tt := int64(flush*50+tick) * 10_000_000
			for _, x := range idx {
				rec.Add(x, tt, float64(tick*x+i))
			}
		}
		points += int64(rec.Pending())
		if err := db.AppendSeries(ctx, r.ID, rec.Flush(false), Progress{SimPS: points}); err != nil {
			return err
		}
	}
	return db.FinishRun(ctx, r.ID, Finish{Status: StatusDone, Chunks: rec.Flush(true), Flows: testFlows,
		Progress: Progress{SimPS: points}, Summary: []byte(fmt.Sprintf(`{"run":%d}`, i))})
}

// checkWhole checks that a copy holds whole transactions only (see
// TestBackupWhileWriting) and returns its number of runs and its finished
// ones.
func checkWhole(t *testing.T, cp *DB, k int) (int, map[string]bool) {
	t.Helper()
	return checkWholeRuns(t, cp, fmt.Sprintf("copy %d", k))
}

// TestRestoreFromBackup: the original goes away, the copy becomes the
// lab's database (what `cclab serve --db COPY` does: Open, then the run
// manager's MarkInterrupted), and a finished run reads back whole; a run
// that was running when the copy was made is interrupted.
func TestRestoreFromBackup(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "lab.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	sc := putScenario(t, db, "s", `{"s":1}`)
	done := createRun(t, db, sc, 1, nil)
	fillRun(t, db, done, 3, 3, StatusDone)
	live := createRun(t, db, sc, 2, func(r *Run) { r.Status = StatusRunning })
	fillRun(t, db, live, 2, 1, "")
	wantRun, err := db.GetRun(ctx, done.ID)
	if err != nil {
		t.Fatal(err)
	}
	wantFlows, _ := db.Flows(ctx, done.ID)
	wantSeries, _ := db.Series(ctx, done.ID, SeriesQuery{})
	wantLive, _ := db.Series(ctx, live.ID, SeriesQuery{})

	backup := filepath.Join(dir, "backup", "lab-copy.db")
	os.Mkdir(filepath.Dir(backup), 0o755)
	if err := db.Backup(ctx, backup); err != nil {
		t.Fatal(err)
	}
	// the original is lost
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) {
			t.Fatal(err)
		}
	}

	restored, err := Open(ctx, backup)
	if err != nil {
		t.Fatal(err)
	}
	defer restored.Close()
	ids, err := restored.MarkInterrupted(ctx)
	if err != nil || len(ids) != 1 || ids[0] != live.ID {
		t.Fatalf("MarkInterrupted on the restored copy: %v, %v; want [%s]", ids, err, live.ID)
	}
	got, err := restored.GetRun(ctx, done.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameRun(t, got, wantRun)
	if got.Status != StatusDone || string(got.Summary) != `{"flows": 3, "note": "done"}` {
		t.Errorf("restored run: status %s, summary %s", got.Status, got.Summary)
	}
	if f, err := restored.Flows(ctx, done.ID); err != nil || fmt.Sprintf("%#v", f) != fmt.Sprintf("%#v", wantFlows) {
		t.Errorf("restored flows: %v, %v", f, err)
	}
	if s, err := restored.Series(ctx, done.ID, SeriesQuery{}); err != nil || !sameSeries(s, wantSeries) || len(s) != 3 {
		t.Errorf("restored series: %d, %v", len(s), err)
	}
	l, err := restored.GetRun(ctx, live.ID)
	if err != nil || l.Status != StatusInterrupted || l.Error == "" {
		t.Errorf("the run that was live: %+v, %v", l, err)
	}
	if s, err := restored.Series(ctx, live.ID, SeriesQuery{}); err != nil || !sameSeries(s, wantLive) {
		t.Errorf("the live run's series so far: %d, %v", len(s), err)
	}
	// and the restored lab takes new runs
	fillRun(t, restored, createRun(t, restored, sc, 3, nil), 1, 1, StatusDone)
	if s, err := restored.IntegrityCheck(ctx); err != nil || s != "ok" {
		t.Errorf("integrity_check: %q, %v", s, err)
	}
}
