package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"cclab/scenarios/ns3"
	"cclab/sim/report"
)

// BenchmarkAgainstNS3 times HPCC's ns-3 simulator and a whole `cclab run`
// of the same experiment, alternated (one ns-3 run, then one lab run, per
// iteration), so that both meet the same state of a shared machine. It
// needs the reference simulator built from source (README, "Against
// ns-3"): CCLAB_NS3 names its build/scratch/third; without it the
// benchmark is skipped.
//
//	CCLAB_NS3=/path/to/simulation/build/scratch/third \
//	  go test ./cmd/cclab -run XXX -bench AgainstNS3 -benchtime 3x
//
// ns-3 runs with its queue monitor off (QLEN_MON_START after the stop
// time) and no packet trace; the lab is a whole `cclab run` process (the
// binary built from this tree, with its profile-guided optimisation),
// writing flows.csv, series.csv and summary.json with the scenario's
// default telemetry. Reported: ns3-s and lab-s, the medians of each side's
// wall times; x-ns3, the median of the ratios of the pairs; ns3-MB and
// lab-MB, each side's peak resident memory.
//
// Before timing, each case checks that it compares like with like: the
// reference replays must give ns-3 the reference's own FCT file line for
// line (else CCLAB_NS3 is not the simulator the reference ran), and every
// flow must finish in both simulators.
func BenchmarkAgainstNS3(b *testing.B) {
	third := os.Getenv("CCLAB_NS3")
	if third == "" {
		b.Skip("CCLAB_NS3 is not set: point it at HPCC's ns-3 build/scratch/third (README, Against ns-3)")
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
		// same experiment, and the reference's FCT file (nil: none to match)
		prepare func(b *testing.B, dir string) (run []string, wantFCT []byte)
	}{
		{"ref16-dcqcn", func(b *testing.B, dir string) ([]string, []byte) {
			return prepareReference(b, ref, "dcqcn", "dcqcn", dir)
		}},
		{"ref16-hpcc", func(b *testing.B, dir string) ([]string, []byte) {
			return prepareReference(b, ref, "hp", "hp", dir)
		}},
		{"fattree320-websearch-hpcc", func(b *testing.B, dir string) ([]string, []byte) {
			// ns-3 reads BUFFER_SIZE in whole MiB; the library's 32 MB
			// becomes 32 MiB on both sides, so both run the same experiment
			return prepareExport(b, library+"rcc-fattree320-websearch.json", "hpcc", "switch.buffer=32MiB", dir), nil
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
			out := b.TempDir()
			args = append([]string{"run", "--quiet", "--out", out}, args...)
			var nsT, labT, ratio []float64
			var nsKB, labKB int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				ns, kb := timeProcess(b, exec.Command(third, filepath.Join(dir, "config.txt")), dir,
					// third links the ns-3 libraries waf leaves in the build folder
					"LD_LIBRARY_PATH="+filepath.Dir(filepath.Dir(third)))
				nsKB = max(nsKB, kb)
				if i == 0 {
					checkNS3Output(b, dir, wantFCT)
				}
				l, kb := timeProcess(b, exec.Command(bin, args...), dir)
				labKB = max(labKB, kb)
				if i == 0 {
					checkLabOutput(b, out, wantFCT)
				}
				nsT, labT, ratio = append(nsT, ns), append(labT, l), append(ratio, ns/l)
			}
			b.ReportMetric(median(nsT), "ns3-s")
			b.ReportMetric(median(labT), "lab-s")
			b.ReportMetric(median(ratio), "x-ns3")
			b.ReportMetric(float64(nsKB)/1024, "ns3-MB")
			b.ReportMetric(float64(labKB)/1024, "lab-MB")
		})
	}
}

// prepareReference writes the reference's config for algorithm alg (its
// folder under ref) into dir with the monitors off, and imports the same
// config as the lab's scenario, as `cclab import ns3` does.
func prepareReference(b *testing.B, ref, alg, cc, dir string) ([]string, []byte) {
	b.Helper()
	config := readBytes(b, filepath.Join(ref, alg, "config.txt"))
	topo := filepath.Join(ref, "topo_mpcc_fattree_pods2.txt")
	flows := filepath.Join(ref, "flow_websearch_l30_10ms_s1.txt")
	imp, err := ns3.FromFiles("ns3-"+alg,
		ns3.File{Name: "config.txt", Data: config},
		ns3.File{Name: topo, Data: readBytes(b, topo)},
		ns3.File{Name: flows, Data: readBytes(b, flows)})
	if err != nil {
		b.Fatal(err)
	}
	scenario := filepath.Join(dir, "scenario.json")
	if err := os.WriteFile(scenario, imp.Scenario, 0o644); err != nil {
		b.Fatal(err)
	}
	writeNS3Experiment(b, dir, config, map[string]string{"TOPOLOGY_FILE": topo, "FLOW_FILE": flows})
	if err := os.WriteFile(filepath.Join(dir, "trace.txt"), []byte("0\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	return []string{scenario}, readBytes(b, filepath.Join(ref, alg, "fct_"+cc+".txt"))
}

// prepareExport writes a scenario with an algorithm and a --set as `cclab
// export ns3` does, with the monitors off.
func prepareExport(b *testing.B, scenario, algo, set, dir string) []string {
	b.Helper()
	scenario, err := filepath.Abs(scenario) // cclab runs in dir
	if err != nil {
		b.Fatal(err)
	}
	c, err := loadScenario(scenario, "", algo, []string{set})
	if err != nil {
		b.Fatal(err)
	}
	c.Release()
	files, err := ns3.Export(c.Scenario, c.Config)
	if err != nil {
		b.Fatal(err)
	}
	for name, data := range map[string][]byte{ns3.TopologyFile: files.Topology, ns3.FlowFile: files.Flows, ns3.TraceFile: files.Trace} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	writeNS3Experiment(b, dir, files.Config, nil)
	return []string{"--algo", algo, "--set", set, scenario}
}

// writeNS3Experiment writes config.txt into dir with the given keys
// replaced, every output file in dir, and the queue monitor off: it starts
// after the simulator stops, so no sample is taken (third.cc still opens
// the file).
func writeNS3Experiment(b *testing.B, dir string, config []byte, set map[string]string) {
	b.Helper()
	keys := map[string]string{
		"FCT_OUTPUT_FILE":   "fct.txt",
		"PFC_OUTPUT_FILE":   "pfc.txt",
		"QLEN_MON_FILE":     "qlen.txt",
		"TRACE_OUTPUT_FILE": "mix.tr",
		"TRACE_FILE":        "trace.txt",
		"ENABLE_TRACE":      "0",
		"QLEN_MON_START":    "1000000000000",
		"QLEN_MON_END":      "1000000000000",
	}
	maps.Copy(keys, set)
	var out bytes.Buffer
	seen := map[string]bool{}
	for _, line := range strings.SplitAfter(string(config), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 {
			if v, ok := keys[f[0]]; ok {
				fmt.Fprintf(&out, "%s %s\n", f[0], v)
				seen[f[0]] = true
				continue
			}
		}
		out.WriteString(line)
	}
	for _, k := range []string{"QLEN_MON_START", "QLEN_MON_END", "FCT_OUTPUT_FILE"} {
		if !seen[k] {
			b.Fatalf("config.txt has no %s to set", k)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "config.txt"), out.Bytes(), 0o644); err != nil {
		b.Fatal(err)
	}
}

// timeProcess runs cmd in dir with env added and returns its wall time in
// seconds and its peak resident memory in KB.
func timeProcess(b *testing.B, cmd *exec.Cmd, dir string, env ...string) (float64, int64) {
	b.Helper()
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
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

// checkNS3Output requires an FCT line per flow of the experiment, and the
// reference's own lines when there is a reference.
func checkNS3Output(b *testing.B, dir string, want []byte) {
	b.Helper()
	got := fctLines(readBytes(b, filepath.Join(dir, "fct.txt")))
	flows := strings.Fields(string(readBytes(b, flowFileOf(b, dir))))
	if len(flows) == 0 || fmt.Sprint(len(got)) != flows[0] {
		b.Fatalf("ns-3 finished %d flows; the flow file has %s", len(got), flows[0])
	}
	if want == nil {
		return
	}
	w := fctLines(want)
	if !slices.Equal(got, w) {
		same := 0
		for i := range min(len(got), len(w)) {
			if got[i] == w[i] {
				same++
			}
		}
		b.Fatalf("ns-3's FCT file matches the reference's on %d of %d lines: CCLAB_NS3 is not the simulator the reference ran", same, len(w))
	}
}

// checkLabOutput requires every flow to finish, as many as the reference
// ran when there is one.
func checkLabOutput(b *testing.B, out string, want []byte) {
	b.Helper()
	var sum report.Summary
	if err := json.Unmarshal(readBytes(b, filepath.Join(out, "summary.json")), &sum); err != nil {
		b.Fatal(err)
	}
	if sum.FlowsFinished != sum.FlowsTotal || sum.FlowsTotal == 0 {
		b.Fatalf("the lab finished %d of %d flows", sum.FlowsFinished, sum.FlowsTotal)
	}
	if want != nil && sum.FlowsTotal != len(fctLines(want)) {
		b.Fatalf("the lab ran %d flows, the reference %d", sum.FlowsTotal, len(fctLines(want)))
	}
}

// flowFileOf is the FLOW_FILE of dir/config.txt, resolved from dir.
func flowFileOf(b *testing.B, dir string) string {
	for _, line := range strings.Split(string(readBytes(b, filepath.Join(dir, "config.txt"))), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "FLOW_FILE" {
			if filepath.IsAbs(f[1]) {
				return f[1]
			}
			return filepath.Join(dir, f[1])
		}
	}
	b.Fatal("config.txt has no FLOW_FILE")
	return ""
}

// fctLines are an FCT file's lines, sorted (ns-3 writes flows as they end).
func fctLines(data []byte) []string {
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	slices.Sort(lines)
	return lines
}

func readBytes(b *testing.B, path string) []byte {
	b.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	return data
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}
