package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cclab/sim/report"
)

const library = "../../scenarios/library/"

func runCLI(t testing.TB, ctx context.Context, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(ctx, args, &out, &errb)
	return code, out.String(), errb.String()
}

func readFile(t testing.TB, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A short copy of the fat-tree WebSearch scenario (1 ms of arrivals) keeps
// the tests fast while exercising Poisson arrivals, ECMP and every output.
func shortFatTree(t *testing.T) string {
	t.Helper()
	data := readFile(t, library+"fattree16-websearch30.json")
	var m map[string]any
	if err := json.Unmarshal([]byte(data), &m); err != nil {
		t.Fatal(err)
	}
	m["workload"].([]any)[0].(map[string]any)["until"] = "1ms"
	b, _ := json.Marshal(m)
	path := filepath.Join(t.TempDir(), "ft.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRunWritesContractFiles(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, context.Background(), "run", library+"incast-8to1.json", "--out", dir, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "8 of 8 flows finished") {
		t.Errorf("stdout: %q", stdout)
	}
	flows := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(dir, "flows.csv"))), "\n")
	if flows[0] != report.FlowsHeader || len(flows) != 9 {
		t.Fatalf("flows.csv: header %q and %d rows", flows[0], len(flows)-1)
	}
	for _, row := range flows[1:] {
		cols := strings.Split(row, ",")
		if len(cols) != 10 || cols[9] != "none" || cols[5] == "" || cols[8] == "" {
			t.Errorf("flows.csv row %q", row)
		}
	}
	series := readFile(t, filepath.Join(dir, "series.csv"))
	if !strings.HasPrefix(series, report.SeriesHeader+"\n") {
		t.Fatalf("series.csv header: %q", series[:40])
	}
	for _, want := range []string{",queue_bytes,s0->r0,", ",throughput_bps,0,", ",cwnd_bytes,7,", ",pfc_pause,h0->s0,"} {
		if !strings.Contains(series, want) {
			t.Errorf("series.csv has no %q row", want)
		}
	}
	var sum map[string]any
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "summary.json"))), &sum); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"scenario", "wall_seconds", "sim_seconds", "events", "events_per_second",
		"flows_total", "flows_finished", "flows_unfinished", "fct_slowdown", "fct_slowdown_by_size",
		"queues", "utilization", "pfc_pause_fraction", "drops", "jain"} {
		if _, ok := sum[key]; !ok {
			t.Errorf("summary.json has no %q", key)
		}
	}
	if n := len(sum["fct_slowdown_by_size"].([]any)); n != 5 {
		t.Errorf("%d size buckets, want 5", n)
	}
}

// Test 6: the same scenario and seed give byte-identical flows.csv and
// series.csv and the same summary.json apart from its wall-clock fields;
// another seed changes the Poisson arrivals.
func TestDeterminism(t *testing.T) {
	scen := shortFatTree(t)
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	for i, d := range dirs {
		args := []string{"run", scen, "--out", d, "--quiet"}
		if i == 2 {
			args = append(args, "--seed", "2")
		}
		if code, _, stderr := runCLI(t, context.Background(), args...); code != 0 {
			t.Fatalf("run %d: exit %d: %s", i, code, stderr)
		}
	}
	for _, f := range []string{"flows.csv", "series.csv"} {
		a, b := readFile(t, filepath.Join(dirs[0], f)), readFile(t, filepath.Join(dirs[1], f))
		if a != b {
			t.Errorf("%s differs between two runs of the same seed", f)
		}
		if len(a) < 1000 {
			t.Errorf("%s is only %d bytes: the comparison is vacuous", f, len(a))
		}
	}
	summary := func(d string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(readFile(t, filepath.Join(d, "summary.json"))), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "wall_seconds")
		delete(m, "events_per_second")
		return m
	}
	a, _ := json.Marshal(summary(dirs[0]))
	b, _ := json.Marshal(summary(dirs[1]))
	if !bytes.Equal(a, b) {
		t.Error("summary.json differs between two runs of the same seed (beyond wall-clock fields)")
	}
	flows0 := readFile(t, filepath.Join(dirs[0], "flows.csv"))
	flows2 := readFile(t, filepath.Join(dirs[2], "flows.csv"))
	if flows0 == flows2 {
		t.Error("seed 2 gives the same flows as seed 1")
	}
}

// Ctrl-C: the run stops cleanly and still writes what was measured.
func TestInterruptStillWritesResults(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // interrupted before the first slice: nothing finishes
	code, _, stderr := runCLI(t, ctx, "run", shortFatTree(t), "--out", dir, "--quiet")
	if code != exitInterrupted {
		t.Fatalf("exit %d, want %d: %s", code, exitInterrupted, stderr)
	}
	var sum report.Summary
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "summary.json"))), &sum); err != nil {
		t.Fatal(err)
	}
	if sum.FlowsUnfinished == 0 || sum.EndReason != "stopped" {
		t.Errorf("summary after interrupt: %d unfinished, end %q", sum.FlowsUnfinished, sum.EndReason)
	}
	flows := readFile(t, filepath.Join(dir, "flows.csv"))
	if !strings.Contains(flows, ",,,") {
		t.Error("flows.csv shows no unfinished flow (empty finish, fct)")
	}
}

func TestValidate(t *testing.T) {
	code, out, _ := runCLI(t, context.Background(), "validate", library+"dumbbell-4to1-none.json")
	if code != 0 || !strings.Contains(out, "ok") {
		t.Fatalf("valid scenario: exit %d, %q", code, out)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"name":"x","topology":{"kind":"dumbbell","senders":2,"hostLink":{"rate":"1Gps","delay":"1us"}},
		"cc":{"algorithm":"none"},"workload":[{"kind":"flows","flows":[{"src":"h0","dst":"r0","size":"-1MB","start":"0s"}]}]}`), 0o644)
	code, _, stderr := runCLI(t, context.Background(), "validate", bad)
	if code != exitError {
		t.Fatalf("invalid scenario: exit %d", code)
	}
	for _, want := range []string{`topology.hostLink.rate: unknown unit "Gps" (want bps, Kbps, Mbps, Gbps, Tbps)`, "workload[0].flows[0].size"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}

func TestOverrides(t *testing.T) {
	dir := t.TempDir()
	code, _, stderr := runCLI(t, context.Background(), "run", library+"incast-8to1.json", "--out", dir, "--quiet",
		"--set", "cc.params.windowBDPs=0", "--seed", "7")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var sum struct {
		Scenario struct {
			Seed int `json:"seed"`
			CC   struct {
				Params map[string]float64 `json:"params"`
			} `json:"cc"`
		} `json:"scenario"`
	}
	json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "summary.json"))), &sum)
	if sum.Scenario.Seed != 7 || sum.Scenario.CC.Params["windowBDPs"] != 0 {
		t.Errorf("overrides not applied: %+v", sum.Scenario)
	}
	if strings.Contains(readFile(t, filepath.Join(dir, "series.csv")), "cwnd_bytes") {
		t.Error("no window, yet cwnd_bytes rows")
	}
	code, _, stderr = runCLI(t, context.Background(), "run", library+"incast-8to1.json", "--out", dir, "--algo", "nope")
	if code == 0 || !strings.Contains(stderr, "cc.algorithm") {
		t.Errorf("--algo nope: exit %d, %q", code, stderr)
	}
	code, _, _ = runCLI(t, context.Background(), "run", library+"incast-8to1.json")
	if code != exitUsage {
		t.Errorf("missing --out: exit %d, want %d", code, exitUsage)
	}
}

// --cpuprofile writes a profile that pprof can read (gzipped protobuf with
// samples), and a path it cannot create is an error naming the flag.
func TestRunCPUProfile(t *testing.T) {
	dir := t.TempDir()
	prof := filepath.Join(dir, "cpu.prof")
	code, _, stderr := runCLI(t, context.Background(), "run", shortFatTree(t), "--out", filepath.Join(dir, "out"), "--quiet", "--cpuprofile", prof)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(prof)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 100 || b[0] != 0x1f || b[1] != 0x8b {
		t.Errorf("profile is %d bytes, not gzip", len(b))
	}
	code, _, stderr = runCLI(t, context.Background(), "run", shortFatTree(t), "--out", filepath.Join(dir, "out2"), "--quiet", "--cpuprofile", filepath.Join(dir, "no", "such", "dir", "p"))
	if code == 0 || !strings.Contains(stderr, "cpuprofile") {
		t.Errorf("unwritable profile: exit %d, stderr %q", code, stderr)
	}
}
