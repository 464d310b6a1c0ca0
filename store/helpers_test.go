package store

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// openTest opens a new database in the test's temporary directory.
func openTest(t testing.TB) *DB {
	t.Helper()
	db, err := Open(context.Background(), filepath.Join(t.TempDir(), "test.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := db.Close(); err != nil {
			t.Error(err)
		}
	})
	return db
}

// putScenario stores a user scenario with the given name and JSON.
func putScenario(t testing.TB, db *DB, name, js string) *Scenario {
	t.Helper()
	sc := &Scenario{Name: name, Description: "about " + name, JSON: []byte(js)}
	if _, err := db.PutScenario(context.Background(), sc); err != nil {
		t.Fatal(err)
	}
	return sc
}

// t0 is the fixed wall time tests start from.
var t0 = time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC)

// createRun stores a run of scenario sc created i seconds after t0.
func createRun(t testing.TB, db *DB, sc *Scenario, i int, mod func(r *Run)) *Run {
	t.Helper()
	r := &Run{
		ScenarioID:  sc.ID,
		Name:        fmt.Sprintf("run %d", i),
		Algorithm:   "dcqcn",
		Params:      []byte(`{"wq":1,"wr":10}`),
		Seed:        uint64(i),
		CodeVersion: "test",
		Scenario:    sc.JSON,
		Client:      "alice",
		BucketPS:    100_000_000,
		CreatedAt:   t0.Add(time.Duration(i) * time.Second),
	}
	if mod != nil {
		mod(r)
	}
	if err := db.CreateRun(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	return r
}

// count returns the result of a count(*) query.
func count(t testing.TB, db *DB, query string, args ...any) int {
	t.Helper()
	var n int
	if err := db.sql.QueryRow(query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
