package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"cclab/scenarios/sweep"
)

// poissonScenario is a small Poisson workload (about 50 flows of 20 KB in
// 200 µs on a 4-to-4 dumbbell under DCQCN): a run takes milliseconds, and
// another seed draws other arrivals.
func poissonScenario(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "poisson.json")
	doc := `{"name": "poisson-small", "seed": 1,
		"topology": {"kind": "dumbbell", "senders": 4, "receivers": 4, "hostLink": {"rate": "10Gbps", "delay": "1us"}},
		"cc": {"algorithm": "dcqcn"},
		"workload": [{"kind": "poisson", "load": 0.5, "size": "20KB", "until": "200us"}]}`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// readCSV reads sweep.csv as rows of cells.
func readCSV(t *testing.T, path string) [][]string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(readFile(t, path))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func readSweepJSON(t *testing.T, dir string) sweepFile {
	t.Helper()
	var f sweepFile
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "sweep.json"))), &f); err != nil {
		t.Fatal(err)
	}
	return f
}

// A 2×2 grid × 2 seeds: one row per point, in grid order, every run's
// files in runs/p<point>-s<seed>, sweep.json pointing at them; the same
// arguments (on 1 worker or 4) give the same sweep.csv byte for byte.
func TestSweepGrid(t *testing.T) {
	var csvs []string
	for _, workers := range []string{"1", "4"} {
		dir := filepath.Join(t.TempDir(), "out")
		code, stdout, stderr := runCLI(t, context.Background(), "sweep", library+"incast-8to1.json",
			"--grid", "topology.hostLink.rate=10Gbps,100Gbps", "--grid", "workload[0].size=100KB, 200KB",
			"--seeds", "1-2", "--out", dir, "--workers", workers, "--quiet")
		if code != 0 {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		if !strings.Contains(stdout, "4 points × 2 seeds, 8 of 8 runs finished") {
			t.Errorf("stdout %q", stdout)
		}
		rows := readCSV(t, filepath.Join(dir, "sweep.csv"))
		if len(rows) != 5 {
			t.Fatalf("sweep.csv has %d lines, want header + 4", len(rows))
		}
		if want := []string{"topology.hostLink.rate", "workload[0].size", "runs_done", "fct_mean_mean", "fct_mean_lo", "fct_mean_hi"}; !slices.Equal(rows[0][:6], want) {
			t.Errorf("header starts %q, want %q", rows[0][:6], want)
		}
		if n := 3 + 3*len(sweep.Metrics()); len(rows[0]) != n {
			t.Errorf("header has %d columns, want %d", len(rows[0]), n)
		}
		for i, want := range [][]string{{"10Gbps", "100KB"}, {"10Gbps", "200KB"}, {"100Gbps", "100KB"}, {"100Gbps", "200KB"}} {
			row := rows[i+1]
			if !slices.Equal(row[:2], want) || row[2] != "2" || row[3] == "" {
				t.Errorf("row %d starts %q, want %q, 2 runs done and a mean FCT slowdown", i, row[:4], want)
			}
		}
		// a 10x slower link makes the same incast take longer: goodput
		// falls (the rows are the points, not the same numbers)
		col := slices.Index(rows[0], "goodput_gbps_mean")
		slow, _ := strconv.ParseFloat(rows[1][col], 64)
		fast, _ := strconv.ParseFloat(rows[3][col], 64)
		if !(slow > 0 && fast > 2*slow) {
			t.Errorf("goodput %v Gbps at 10 Gbps, %v at 100 Gbps", slow, fast)
		}
		f := readSweepJSON(t, dir)
		if len(f.Points) != 4 || len(f.Metrics) != len(sweep.Metrics()) || !slices.Equal(f.Spec.Seeds, []uint64{1, 2}) {
			t.Fatalf("sweep.json: %d points, %d metrics, seeds %v", len(f.Points), len(f.Metrics), f.Spec.Seeds)
		}
		for _, p := range f.Points {
			want := []string{"runs/p" + strconv.Itoa(p.Index) + "-s1", "runs/p" + strconv.Itoa(p.Index) + "-s2"}
			if p.Done != 2 || !slices.Equal(p.Runs, want) {
				t.Errorf("point %d: done %d, runs %q, want %q", p.Index, p.Done, p.Runs, want)
			}
			for _, run := range p.Runs {
				for _, file := range []string{"flows.csv", "series.csv", "summary.json"} {
					if _, err := os.Stat(filepath.Join(dir, run, file)); err != nil {
						t.Error(err)
					}
				}
			}
		}
		// the run of point 3, seed 2 ran that point's scenario and seed
		var sum struct {
			Scenario struct {
				Seed     int
				Topology struct{ HostLink struct{ Rate string } }
				Workload []struct{ Size string }
			}
		}
		if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "runs", "p3-s2", "summary.json"))), &sum); err != nil {
			t.Fatal(err)
		}
		if s := sum.Scenario; s.Seed != 2 || s.Topology.HostLink.Rate != "100Gbps" || s.Workload[0].Size != "200KB" {
			t.Errorf("runs/p3-s2 ran %+v", s)
		}
		csvs = append(csvs, readFile(t, filepath.Join(dir, "sweep.csv")))
	}
	if csvs[0] != csvs[1] {
		t.Errorf("sweep.csv differs between two sweeps of the same arguments:\n%s\n%s", csvs[0], csvs[1])
	}
}

// A bad argument is a usage error naming it, found before anything runs:
// nothing is written.
func TestSweepUsageErrors(t *testing.T) {
	scen := library + "incast-8to1.json"
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no --out", []string{scen, "--grid", "workload[0].size=1KB", "--seeds", "1"}, "--out DIR is required"},
		{"no --grid", []string{scen, "--seeds", "1", "--out", "OUT"}, "--grid PATH=VALUES is required"},
		{"no --seeds", []string{scen, "--grid", "workload[0].size=1KB", "--out", "OUT"}, "--seeds is required"},
		{"two scenarios", []string{scen, scen, "--grid", "workload[0].size=1KB", "--seeds", "1", "--out", "OUT"}, "want exactly one scenario file"},
		{"negative workers", []string{scen, "--grid", "workload[0].size=1KB", "--seeds", "1", "--out", "OUT", "--workers", "-1"}, "--workers -1"},
		{"grid without =", []string{scen, "--grid", "workload[0].size", "--seeds", "1", "--out", "OUT"}, `--grid "workload[0].size": want PATH=`},
		{"grid range", []string{scen, "--grid", "workload[0].load=1:0:0.1", "--seeds", "1", "--out", "OUT"}, `--grid "workload[0].load=1:0:0.1": range lo 1 is above hi 0`},
		{"grid empty value", []string{scen, "--grid", "workload[0].size=1KB,", "--seeds", "1", "--out", "OUT"}, `--grid "workload[0].size=1KB,": value 2 is empty`},
		{"grid twice", []string{scen, "--grid", "workload[0].size=1KB", "--grid", "workload[0].size=2KB", "--seeds", "1", "--out", "OUT"},
			`--grid "workload[0].size=2KB": "workload[0].size" is swept twice`},
		{"seed axis", []string{scen, "--grid", "seed=1,2", "--seeds", "1", "--out", "OUT"}, `--grid "seed=1,2": the seed is swept by the seeds`},
		{"five axes", []string{scen, "--grid", "a=1", "--grid", "b=1", "--grid", "c=1", "--grid", "d=1", "--grid", "e=1", "--seeds", "1", "--out", "OUT"}, "5 axes, want 1 to 4"},
		{"too many runs", []string{scen, "--grid", "a=1:100:1", "--grid", "b=1:100:1", "--grid", "c=1:100:1", "--seeds", "1", "--out", "OUT"}, "1000000 runs (points × seeds), at most 100000"},
		{"bad seeds", []string{scen, "--grid", "workload[0].size=1KB", "--seeds", "3-1", "--out", "OUT"}, `--seeds "3-1": seed range "3-1": 3 is above 1`},
		{"seed 0", []string{scen, "--grid", "workload[0].size=1KB", "--seeds", "0,1", "--out", "OUT"}, `--seeds "0,1": seed "0"`},
		{"bad path", []string{scen, "--grid", "workload[3].size=1KB", "--seeds", "1", "--out", "OUT"},
			"point p0 (workload[3].size=1KB), seed 1: workload[3]: index out of range"},
		{"unknown field", []string{scen, "--grid", "cc.params.nope=1", "--seeds", "1", "--out", "OUT"},
			"point p0 (cc.params.nope=1), seed 1: cc.params.nope: unknown parameter"},
		{"bad value", []string{scen, "--grid", "topology.hostLink.rate=10Gbps", "--grid", "workload[0].size=1KB,big", "--seeds", "1-2", "--out", "OUT"},
			"point p1 (topology.hostLink.rate=10Gbps, workload[0].size=big), seed 1: workload[0].size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			args := append([]string{"sweep"}, tt.args...)
			for i, a := range args {
				if a == "OUT" {
					args[i] = out
				}
			}
			code, _, stderr := runCLI(t, context.Background(), args...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitUsage, tt.want)
			}
			if _, err := os.Stat(out); !os.IsNotExist(err) {
				t.Errorf("%s was written (%v)", out, err)
			}
		})
	}
	// an invalid scenario is reported as cclab run reports it (exit 1)
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"name":"x","topology":{"kind":"dumbbell","senders":2,"hostLink":{"rate":"1Gps","delay":"1us"}},
		"cc":{"algorithm":"none"},"workload":[{"kind":"incast","senders":["h0"],"receiver":"r0","size":"1MB","start":"0s"}]}`), 0o644)
	out := filepath.Join(t.TempDir(), "out")
	code, _, stderr := runCLI(t, context.Background(), "sweep", bad, "--grid", "workload[0].size=1KB", "--seeds", "1", "--out", out)
	if code != exitError || !strings.Contains(stderr, bad+": topology.hostLink.rate: unknown unit") {
		t.Errorf("invalid scenario: exit %d, stderr %q", code, stderr)
	}
}

// With one seed every interval is the point itself; with three seeds of a
// Poisson workload the runs differ, so the interval is not trivially 0.
func TestSweepSeeds(t *testing.T) {
	scen := poissonScenario(t)
	one := filepath.Join(t.TempDir(), "one")
	if code, _, stderr := runCLI(t, context.Background(), "sweep", scen, "--grid", "workload[0].load=0.3,0.5", "--seeds", "4", "--out", one, "--quiet"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, p := range readSweepJSON(t, one).Points {
		if p.Done != 1 || len(p.Metrics) < 10 {
			t.Errorf("point %d: %d done, %d metrics", p.Index, p.Done, len(p.Metrics))
		}
		for k, st := range p.Metrics {
			if st.N != 1 || st.Lo != st.Mean || st.Hi != st.Mean {
				t.Errorf("point %d, %s from one seed: %+v, want lo = hi = mean", p.Index, k, st)
			}
		}
	}
	rows := readCSV(t, filepath.Join(one, "sweep.csv"))
	for _, m := range sweep.Metrics() {
		i := slices.Index(rows[0], m.Key+"_mean")
		for _, row := range rows[1:] {
			if row[i] != row[i+1] || row[i] != row[i+2] {
				t.Errorf("sweep.csv %s from one seed: %q %q %q", m.Key, row[i], row[i+1], row[i+2])
			}
		}
	}

	three := filepath.Join(t.TempDir(), "three")
	if code, _, stderr := runCLI(t, context.Background(), "sweep", scen, "--grid", "workload[0].load=0.5", "--seeds", "1-3", "--out", three, "--quiet"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	p := readSweepJSON(t, three).Points[0]
	st := p.Metrics["fct_mean"]
	if st.N != 3 || !(st.Lo < st.Mean && st.Mean < st.Hi) {
		t.Errorf("fct_mean over 3 seeds: %+v, want a proper interval", st)
	}
	means := map[float64]bool{}
	for _, run := range p.Runs {
		var sum struct {
			FCTSlowdown struct{ Mean float64 } `json:"fct_slowdown"`
		}
		if err := json.Unmarshal([]byte(readFile(t, filepath.Join(three, run, "summary.json"))), &sum); err != nil {
			t.Fatal(err)
		}
		means[sum.FCTSlowdown.Mean] = true
	}
	if len(means) != 3 {
		t.Errorf("3 seeds gave %d different mean FCT slowdowns: %v", len(means), means)
	}
}

// cancelWriter cancels a context once the progress bar shows a count.
type cancelWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	at     string
	cancel context.CancelFunc
}

func (w *cancelWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if strings.Contains(string(p), w.at) {
		w.cancel()
	}
	return w.buf.Write(p)
}

// Ctrl-C after two of four runs: exit 130, and sweep.csv and sweep.json
// hold every point with the runs that finished.
func TestSweepInterrupt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stderr := &cancelWriter{at: "] 2/4 runs", cancel: cancel}
	var stdout bytes.Buffer
	code := run(ctx, []string{"sweep", poissonScenario(t), "--grid", "workload[0].load=0.3,0.5", "--seeds", "1-2",
		"--out", dir, "--workers", "1"}, &stdout, stderr)
	if code != exitInterrupted {
		t.Fatalf("exit %d, want %d: %s", code, exitInterrupted, stderr.buf.String())
	}
	rows := readCSV(t, filepath.Join(dir, "sweep.csv"))
	if len(rows) != 3 || rows[1][1] != "2" {
		t.Fatalf("sweep.csv %q: want header and 2 rows, point 0 with both runs done", rows)
	}
	f := readSweepJSON(t, dir)
	// the third run may have finished before the cancel reached it; the
	// fourth never starts
	if p := f.Points[1]; p.Done > 1 || p.Runs[1] != "" {
		t.Errorf("point 1 after the interrupt: %d done, runs %q", p.Done, p.Runs)
	}
	if st := f.Points[0].Metrics["fct_mean"]; st.N != 2 {
		t.Errorf("point 0 fct_mean %+v, want 2 runs", st)
	}

	// interrupted before the first run: nothing is written
	dir2 := filepath.Join(t.TempDir(), "out")
	code, _, _ = runCLI(t, ctx, "sweep", poissonScenario(t), "--grid", "workload[0].load=0.3", "--seeds", "1", "--out", dir2)
	if _, err := os.Stat(dir2); code != exitInterrupted || !os.IsNotExist(err) {
		t.Errorf("cancelled before starting: exit %d, %s: %v", code, dir2, err)
	}
}

// A run that cannot write its results stops the sweep with an error (exit
// 1) naming the run.
func TestSweepUnwritableOut(t *testing.T) {
	out := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(out, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCLI(t, context.Background(), "sweep", library+"incast-8to1.json",
		"--grid", "workload[0].size=100KB", "--seeds", "1", "--out", out, "--quiet")
	if code != exitError || !strings.Contains(stderr, "point p0, seed 1: mkdir "+out) {
		t.Errorf("exit %d, stderr %q; want %d naming the run and %s", code, stderr, exitError, out)
	}
}
