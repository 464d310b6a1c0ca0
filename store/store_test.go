package store

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestMigrationsFreshAndReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "lab.db")
	ms, err := loadMigrations()
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) == 0 || ms[0].name != "0001_init.sql" {
		t.Fatalf("migrations %v", ms)
	}

	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if v := count(t, db, `PRAGMA user_version`); v != len(ms) {
		t.Errorf("user_version %d, want %d", v, len(ms))
	}
	if av := count(t, db, `PRAGMA auto_vacuum`); av != 2 {
		t.Errorf("auto_vacuum %d, want 2 (incremental)", av)
	}
	for _, table := range []string{"scenarios", "runs", "run_events", "flows", "series", "chunks"} {
		if n := count(t, db, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?`, table); n != 1 {
			t.Errorf("table %s missing", table)
		}
	}
	sc := putScenario(t, db, "a", `{"a":1}`)
	createRun(t, db, sc, 1, nil)
	schema := func(db *DB) string {
		rows, err := db.sql.Query(`SELECT sql FROM sqlite_schema WHERE sql IS NOT NULL ORDER BY name`)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var b strings.Builder
		for rows.Next() {
			var s string
			if err := rows.Scan(&s); err != nil {
				t.Fatal(err)
			}
			b.WriteString(s + "\n")
		}
		return b.String()
	}
	before := schema(db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	// Re-opening applies nothing and keeps the data.
	for range 2 {
		db, err = Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		if v := count(t, db, `PRAGMA user_version`); v != len(ms) {
			t.Errorf("reopen: user_version %d, want %d", v, len(ms))
		}
		if got := schema(db); got != before {
			t.Errorf("reopen changed the schema:\n%s\nwant\n%s", got, before)
		}
		if n, err := db.CountRuns(ctx, RunFilter{}); err != nil || n != 1 {
			t.Errorf("reopen: %d runs (%v), want 1", n, err)
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestOpenRejectsNewerSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "lab.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.sql.Exec(`PRAGMA user_version = 999`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err := Open(ctx, path); err == nil {
		db.Close()
		t.Fatal("opened a database from the future")
	} else if !strings.Contains(err.Error(), "999") {
		t.Errorf("error %v does not name the version", err)
	}
}

func TestOpenBadPath(t *testing.T) {
	for _, path := range []string{"", ":memory:", "a?b.db", filepath.Join(t.TempDir(), "no", "such", "dir", "x.db")} {
		if db, err := Open(context.Background(), path); err == nil {
			db.Close()
			t.Errorf("Open(%q) succeeded", path)
		}
	}
}

func TestPragmasOnEveryConnection(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	// Hold several connections at once so that each is a different one.
	const n = 5
	conns := make([]*sql.Conn, n)
	for i := range conns {
		c, err := db.sql.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		conns[i] = c
	}
	for i, c := range conns {
		for _, p := range []struct{ pragma, want string }{
			{"journal_mode", "wal"},
			{"foreign_keys", "1"},
			{"busy_timeout", "10000"},
			{"synchronous", "1"}, // NORMAL
			{"auto_vacuum", "2"}, // INCREMENTAL
		} {
			var got string
			if err := c.QueryRowContext(ctx, "PRAGMA "+p.pragma).Scan(&got); err != nil {
				t.Fatal(err)
			}
			if got != p.want {
				t.Errorf("connection %d: %s = %s, want %s", i, p.pragma, got, p.want)
			}
		}
	}
}

func TestIntegrityCheckAndSize(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	if s, err := db.IntegrityCheck(ctx); err != nil || s != "ok" {
		t.Fatalf("integrity %q %v", s, err)
	}
	s0, err := db.SizeBytes(ctx)
	if err != nil || s0 <= 0 {
		t.Fatalf("size %d %v", s0, err)
	}
	sc := putScenario(t, db, "big", `{"pad":"`+strings.Repeat("x", 100_000)+`"}`)
	s1, err := db.SizeBytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s1 < s0+90_000 {
		t.Errorf("size %d after a 100 kB scenario, was %d", s1, s0)
	}
	if err := db.DeleteScenario(ctx, sc.ID); err != nil {
		t.Fatal(err)
	}
	s2, err := db.SizeBytes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s2 > s0+8192 {
		t.Errorf("size %d after deleting it, was %d: freed pages count", s2, s0)
	}
}

// TestConcurrentWritersAndReaders: writers of different runs and readers of
// their series never see an error (SQLITE_BUSY in particular).
func TestConcurrentWritersAndReaders(t *testing.T) {
	ctx := context.Background()
	db := openTest(t)
	sc := putScenario(t, db, "s", `{}`)
	const writers, readers, flushes = 4, 4, 25
	runs := make([]*Run, writers)
	for i := range runs {
		runs[i] = createRun(t, db, sc, i, nil)
	}
	var wg sync.WaitGroup
	errs := make(chan error, writers+readers)
	done := make(chan struct{})
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rec := NewRecorder(1000)
			var idx [8]int
			for k := range idx {
				idx[k] = rec.Series("m", string(rune('a'+k)), AggMean)
			}
			tt := int64(0)
			for f := range flushes {
				for range 200 {
					tt += 100
					for k := range idx {
						rec.Add(idx[k], tt, float64(k)+float64(tt))
					}
				}
				if err := db.AppendSeries(ctx, runs[w].ID, rec.Flush(false), Progress{Fraction: float64(f) / flushes}); err != nil {
					errs <- err
					return
				}
			}
			if err := db.FinishRun(ctx, runs[w].ID, Finish{Status: StatusDone, Chunks: rec.Flush(true)}); err != nil {
				errs <- err
			}
		}()
	}
	var rg sync.WaitGroup
	for r := range readers {
		rg.Add(1)
		go func() {
			defer rg.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				id := runs[(r+i)%writers].ID
				if _, err := db.Series(ctx, id, SeriesQuery{Level: i % 2}); err != nil {
					errs <- err
					return
				}
				if _, err := db.ListRuns(ctx, RunFilter{}); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(done)
	rg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, r := range runs {
		ss, err := db.Series(ctx, r.ID, SeriesQuery{})
		if err != nil {
			t.Fatal(err)
		}
		if len(ss) != 8 || len(ss[0].T) != flushes*200 {
			t.Errorf("run %s: %d series, want 8 of %d points", r.ID, len(ss), flushes*200)
		}
	}
}
