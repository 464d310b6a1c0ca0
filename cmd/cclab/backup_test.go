package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"cclab/store"
)

func TestBackupCommandErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "lab.db")
	sdb, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	sdb.Close()
	existing := filepath.Join(dir, "existing.db")
	if err := os.WriteFile(existing, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.db")
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"no --out", []string{"backup", "--db", db}, exitUsage, "--out FILE is required"},
		{"an argument", []string{"backup", "--db", db, "--out", filepath.Join(dir, "a.db"), "extra"}, exitUsage, `unexpected argument "extra"`},
		{"a bad flag", []string{"backup", "--nope"}, exitUsage, "flag provided but not defined"},
		{"--out exists", []string{"backup", "--db", db, "--out", existing}, exitError, "--out " + existing + ": the file exists"},
		{"--out is the database", []string{"backup", "--db", db, "--out", db}, exitError, "--out " + db + ": the file exists"},
		{"--db missing", []string{"backup", "--db", missing, "--out", filepath.Join(dir, "b.db")}, exitError, "--db " + missing + ": stat"},
		{"--db a folder", []string{"backup", "--db", dir, "--out", filepath.Join(dir, "c.db")}, exitError, "not a database file"},
		{"--out in a missing folder", []string{"backup", "--db", db, "--out", filepath.Join(dir, "no", "d.db")}, exitError, "store: backup of " + db},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, ctx, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.stderr) || stdout != "" {
				t.Fatalf("exit %d, stdout %q, stderr %q; want exit %d and %q", code, stdout, stderr, tc.code, tc.stderr)
			}
		})
	}
	if b, _ := os.ReadFile(existing); string(b) != "keep me" {
		t.Errorf("the existing --out file was changed: %q", b)
	}
	if _, err := os.Stat(missing); err == nil {
		t.Error("a missing --db was created")
	}
	for _, p := range []string{"a.db", "b.db", "c.db"} {
		if _, err := os.Stat(filepath.Join(dir, p)); err == nil {
			t.Errorf("%s was written", p)
		}
	}
}

// TestBackupWhileServing runs `cclab backup` on the database of a running
// `cclab serve` that is simulating a run, then serves the copy (a restore)
// and reads the finished runs back, byte for byte, through the REST API.
func TestBackupWhileServing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := filepath.Join(dir, "lab.db")
	s := startServe(t, db, "--concurrency", "2", "--grace", "100ms")
	var done []string
	for _, sc := range []string{"incast-8to1", "dumbbell-4to1-none"} {
		var r runInfo
		if code := s.call("POST", "/api/runs", map[string]any{"scenarioId": sc}, &r); code != 201 {
			t.Fatalf("start %s: %d", sc, code)
		}
		done = append(done, r.ID)
	}
	type files struct{ flows, summary, series []byte }
	want := map[string]files{}
	for _, id := range done {
		s.waitRun(id, 60*time.Second, "done")
		want[id] = files{s.get("/api/runs/" + id + "/flows.csv"), s.get("/api/runs/" + id + "/summary.json"),
			s.get("/api/runs/" + id + "/series.csv")}
	}
	// a slow run is writing its series while the copy is made
	var live runInfo
	s.call("POST", "/api/runs", map[string]any{"scenarioId": "fattree16-websearch30", "speed": 1000}, &live)
	s.waitRun(live.ID, 30*time.Second, "running")
	time.Sleep(700 * time.Millisecond)

	copyPath := filepath.Join(dir, "backup.db")
	code, stdout, stderr := runCLI(t, ctx, "backup", "--db", db, "--out", copyPath)
	if code != 0 || !strings.HasPrefix(stdout, "backed up "+db+" to "+copyPath+" (") {
		t.Fatalf("cclab backup: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	t.Log(strings.TrimSpace(stdout))
	// the server did not notice
	if r := s.waitRun(live.ID, 5*time.Second, "running"); r.Error != "" {
		t.Fatalf("the live run after the backup: %+v", r)
	}
	s.cmd.Process.Signal(syscall.SIGTERM)
	if err := s.cmd.Wait(); err != nil {
		t.Fatalf("cclab serve after SIGTERM: %v; logs:\n%s", err, s.logs)
	}

	// restore: serve the copy
	cp, err := store.Open(ctx, copyPath)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := cp.IntegrityCheck(ctx); err != nil || res != "ok" {
		t.Fatalf("integrity_check of the copy: %q, %v", res, err)
	}
	cp.Close()
	s2 := startServe(t, copyPath)
	for _, id := range done {
		var r runInfo
		s2.call("GET", "/api/runs/"+id, nil, &r)
		if r.Status != "done" {
			t.Fatalf("run %s in the restored lab: %+v", id, r)
		}
		got := files{s2.get("/api/runs/" + id + "/flows.csv"), s2.get("/api/runs/" + id + "/summary.json"),
			s2.get("/api/runs/" + id + "/series.csv")}
		if !bytes.Equal(got.flows, want[id].flows) || !bytes.Equal(got.summary, want[id].summary) || !bytes.Equal(got.series, want[id].series) {
			t.Errorf("run %s: flows.csv, summary.json or series.csv differ in the restored lab", id)
		}
	}
	// the run that was running when the copy was made
	var r runInfo
	s2.call("GET", "/api/runs/"+live.ID, nil, &r)
	if r.Status != "interrupted" {
		t.Errorf("the live run in the restored lab: %+v", r)
	}
	s2.cmd.Process.Signal(syscall.SIGTERM)
	if err := s2.cmd.Wait(); err != nil {
		t.Fatalf("restored cclab serve after SIGTERM: %v; logs:\n%s", err, s2.logs)
	}
}
