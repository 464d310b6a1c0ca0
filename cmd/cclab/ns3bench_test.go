package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"cclab/scenarios/ns3"
	"cclab/sim/report"
)

// BenchmarkAgainstNS3 times HPCC's ns-3 simulator and a whole `cclab run`
// process on the same experiment, one after the other, pair after pair, so
// that both meet the same state of a shared machine; each side goes first
// in every other pair. It needs the reference simulator built from source
// (README, "Against HPCC's ns-3 simulator"): CCLAB_NS3 names its
// build/scratch/third; without it the benchmark is skipped.
//
//	CCLAB_NS3=/path/to/simulation/build/scratch/third \
//	  go test ./cmd/cclab -run XXX -bench AgainstNS3 -benchtime 5x -timeout 30m
//
// (go test runs each case once before the five pairs it reports.)
//
// ns-3 runs with its queue monitor off (it would start a second after the
// simulator stops) and its packet trace off. The lab is the cclab binary
// built from this tree, with its profile-guided optimisation, in the lanes
// `cclab run` picks by default (two on a 2-core machine, whose results are
// those of one lane byte for byte; ns-3 runs on one core), and writes
// what `cclab run` always writes: flows.csv, series.csv (queues, PFC and
// ECN of every port every 10 µs: 55 MB for the 16-host replay) and
// summary.json. So the lab does more output work than ns-3 here.
//
// Reported: ns3-s and lab-s, the medians of each side's wall times; x-ns3,
// the median of the pairs' ratios; ns3-MiB and lab-MiB, each side's peak
// resident memory.
//
// Before timing, each case checks that it compares like with like: both
// simulators must finish every flow of the flow file, and on the reference
// replays ns-3 must write the reference's own FCT lines (else CCLAB_NS3 is
// not the simulator the reference ran).
func BenchmarkAgainstNS3(b *testing.B) {
	third := os.Getenv("CCLAB_NS3")
	if third == "" {
		b.Skip("CCLAB_NS3 is not set: point it at HPCC's ns-3 build/scratch/third (README, Against HPCC's ns-3 simulator)")
	}
	third, err := filepath.Abs(third)
	if err != nil {
		b.Fatal(err)
	}
	ref, err := filepath.Abs(filepath.Join("..", "..", "sim", "testdata", "reference", "hpcc-ns3-websearch16"))
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name string
		// prepare writes the ns-3 experiment (config.txt and the files it
		// names) into dir and returns the arguments of `cclab run` for the
		// same experiment, and the reference's FCT file ("": none to match)
		prepare func(b *testing.B, dir string) (run []string, wantFCT string)
	}{
		{"ref16-dcqcn", func(b *testing.B, dir string) ([]string, string) {
			return prepareReference(b, ref, "dcqcn", dir)
		}},
		{"ref16-hpcc", func(b *testing.B, dir string) ([]string, string) {
			return prepareReference(b, ref, "hp", dir)
		}},
		{"fattree320-websearch-hpcc", func(b *testing.B, dir string) ([]string, string) {
			// ns-3 reads BUFFER_SIZE in whole MiB; the library's 32 MB
			// becomes 32 MiB on both sides, so both run the same experiment
			return prepareExport(b, library+"rcc-fattree320-websearch.json", dir, "--algo", "hpcc", "--set", "switch.buffer=32MiB"), ""
		}},
	}
	bin := filepath.Join(b.TempDir(), "cclab")
	if out, err := exec.Command("go", "build", "-o", bin, "cclab/cmd/cclab").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			args, wantFCT := c.prepare(b, dir)
			flows := flowCount(b, dir)
			out := b.TempDir()
			args = append([]string{"run", "--quiet", "--out", out}, args...)
			var nsT, labT, ratio []float64
			var nsKB, labKB int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var ns, lab float64
				runNS3 := func() {
					var kb int64
					ns, kb = timeProcess(b, exec.Command(third, filepath.Join(dir, ns3.ConfigFile)), dir,
						// third links the ns-3 libraries waf leaves in the build folder
						"LD_LIBRARY_PATH="+filepath.Dir(filepath.Dir(third)))
					nsKB = max(nsKB, kb)
				}
				runLab := func() {
					var kb int64
					lab, kb = timeProcess(b, exec.Command(bin, args...), dir)
					labKB = max(labKB, kb)
				}
				if i%2 == 0 {
					runNS3()
					runLab()
				} else {
					runLab()
					runNS3()
				}
				if i == 0 {
					checkNS3Output(b, dir, flows, wantFCT)
					checkLabOutput(b, out, flows)
				}
				nsT, labT, ratio = append(nsT, ns), append(labT, lab), append(ratio, ns/lab)
				first := "ns-3"
				if i%2 == 1 {
					first = "lab"
				}
				b.Logf("pair %d (%s first): ns-3 %.3f s, lab %.3f s, %.2fx", i, first, ns, lab, ns/lab)
			}
			b.ReportMetric(median(nsT), "ns3-s")
			b.ReportMetric(median(labT), "lab-s")
			b.ReportMetric(median(ratio), "x-ns3")
			b.ReportMetric(float64(nsKB)/1024, "ns3-MiB")
			b.ReportMetric(float64(labKB)/1024, "lab-MiB")
		})
	}
}

// prepareReference writes the reference's config for algorithm alg (its
// folder under ref) into dir, and imports the same config as the lab's
// scenario with `cclab import ns3 --strict`.
func prepareReference(b *testing.B, ref, alg, dir string) ([]string, string) {
	b.Helper()
	config := filepath.Join(ref, alg, ns3.ConfigFile)
	scenario := filepath.Join(dir, "scenario.json")
	if code, _, stderr := runCLI(b, context.Background(), "import", "ns3", config, "--strict", "--out", scenario); code != 0 {
		b.Fatalf("cclab import ns3: exit %d: %s", code, stderr)
	}
	writeNS3Experiment(b, dir, readFile(b, config), map[string]string{
		"TOPOLOGY_FILE": filepath.Join(ref, "topo_mpcc_fattree_pods2.txt"),
		"FLOW_FILE":     filepath.Join(ref, "flow_websearch_l30_10ms_s1.txt"),
	})
	// third.cc reads the trace file's node count whether tracing is on or not
	if err := os.WriteFile(filepath.Join(dir, ns3.TraceFile), []byte("0\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	return []string{scenario}, readFile(b, filepath.Join(ref, alg, "fct_"+alg+".txt"))
}

// prepareExport writes a library scenario, with the given `cclab run`
// flags, as `cclab export ns3` does.
func prepareExport(b *testing.B, scenario, dir string, flags ...string) []string {
	b.Helper()
	scenario, err := filepath.Abs(scenario) // cclab runs in dir
	if err != nil {
		b.Fatal(err)
	}
	args := append(append([]string{"export", "ns3", "--dir", dir}, flags...), scenario)
	if code, _, stderr := runCLI(b, context.Background(), args...); code != 0 {
		b.Fatalf("cclab export ns3: exit %d: %s", code, stderr)
	}
	writeNS3Experiment(b, dir, readFile(b, filepath.Join(dir, ns3.ConfigFile)), nil)
	return append(flags, scenario)
}

// writeNS3Experiment writes config.txt into dir with the keys in set given
// their values, every output file in dir, packet tracing off, and the
// queue monitor off: it starts a second after SIMULATOR_STOP_TIME, so no
// sample is taken (third.cc still opens its file). A key the config lacks
// is added at its end, since third.cc reads keys in any order.
func writeNS3Experiment(b *testing.B, dir, config string, set map[string]string) {
	b.Helper()
	c, err := ns3.ParseConfig(ns3.File{Name: ns3.ConfigFile, Data: []byte(config)})
	if err != nil {
		b.Fatal(err)
	}
	v, ok := c.Values["SIMULATOR_STOP_TIME"]
	stop, err := strconv.ParseFloat(v, 64)
	if !ok || err != nil || !(stop > 0 && stop < 1e6) {
		b.Fatalf("config.txt: SIMULATOR_STOP_TIME %q: want seconds", v)
	}
	monitor := strconv.FormatInt(int64(stop+1)*1_000_000_000, 10) // ns
	keys := map[string]string{
		"FCT_OUTPUT_FILE":   "fct.txt",
		"PFC_OUTPUT_FILE":   "pfc.txt",
		"QLEN_MON_FILE":     "qlen.txt",
		"TRACE_OUTPUT_FILE": "mix.tr",
		"TRACE_FILE":        ns3.TraceFile,
		"ENABLE_TRACE":      "0",
		"QLEN_MON_START":    monitor,
		"QLEN_MON_END":      monitor,
	}
	maps.Copy(keys, set)
	var out strings.Builder
	seen := map[string]bool{}
	for _, line := range strings.SplitAfter(config, "\n") {
		if f := strings.Fields(line); len(f) >= 2 {
			if v, ok := keys[f[0]]; ok {
				fmt.Fprintf(&out, "%s %s\n", f[0], v)
				seen[f[0]] = true
				continue
			}
		}
		out.WriteString(line)
	}
	if !strings.HasSuffix(out.String(), "\n") {
		out.WriteString("\n")
	}
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if !seen[k] {
			fmt.Fprintf(&out, "%s %s\n", k, keys[k])
		}
	}
	if err := os.WriteFile(filepath.Join(dir, ns3.ConfigFile), []byte(out.String()), 0o644); err != nil {
		b.Fatal(err)
	}
}

// timeProcess runs cmd in dir with env added and returns its wall time in
// seconds and its peak resident memory in KiB.
func timeProcess(b *testing.B, cmd *exec.Cmd, dir string, env ...string) (float64, int64) {
	b.Helper()
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		b.Fatalf("%s: %v\n%s", cmd, err, stderr.String())
	}
	wall := time.Since(start).Seconds()
	var kb int64
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		kb = ru.Maxrss
	}
	return wall, kb
}

// flowCount is the number of flows in the flow file dir/config.txt names
// (its first field).
func flowCount(b *testing.B, dir string) int {
	b.Helper()
	c, err := ns3.ParseConfig(ns3.File{Name: ns3.ConfigFile, Data: []byte(readFile(b, filepath.Join(dir, ns3.ConfigFile)))})
	if err != nil {
		b.Fatal(err)
	}
	_, path := c.InputFiles()
	if !filepath.IsAbs(path) {
		path = filepath.Join(dir, path)
	}
	f := strings.Fields(readFile(b, path))
	if len(f) == 0 {
		b.Fatalf("%s is empty", path)
	}
	n, err := strconv.Atoi(f[0])
	if err != nil || n <= 0 {
		b.Fatalf("%s: flow count %q: want a whole number above 0", path, f[0])
	}
	return n
}

// checkNS3Output requires an FCT line per flow, and the reference's own
// lines (in any order: ns-3 writes flows as they end) when there is a
// reference.
func checkNS3Output(b *testing.B, dir string, flows int, want string) {
	b.Helper()
	got := fctLines(readFile(b, filepath.Join(dir, "fct.txt")))
	if len(got) != flows {
		b.Fatalf("ns-3 finished %d of %d flows", len(got), flows)
	}
	if want == "" {
		return
	}
	left := map[string]int{}
	for _, l := range fctLines(want) {
		left[l]++
	}
	same := 0
	for _, l := range got {
		if left[l] > 0 {
			left[l]--
			same++
		}
	}
	if same != len(got) || len(got) != len(fctLines(want)) {
		b.Fatalf("ns-3 wrote %d of the reference's %d FCT lines: CCLAB_NS3 is not the simulator the reference ran", same, len(fctLines(want)))
	}
}

// checkLabOutput requires the lab to have run and finished every flow.
func checkLabOutput(b *testing.B, out string, flows int) {
	b.Helper()
	var sum report.Summary
	if err := json.Unmarshal([]byte(readFile(b, filepath.Join(out, "summary.json"))), &sum); err != nil {
		b.Fatal(err)
	}
	if sum.FlowsTotal != flows || sum.FlowsFinished != flows {
		b.Fatalf("the lab finished %d of %d flows; the flow file has %d", sum.FlowsFinished, sum.FlowsTotal, flows)
	}
}

// fctLines are an FCT file's lines (none for an empty file).
func fctLines(data string) []string {
	data = strings.TrimSpace(data)
	if data == "" {
		return nil
	}
	return strings.Split(data, "\n")
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
