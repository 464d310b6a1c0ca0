package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"cclab/cc/fdcc"
	"cclab/cc/nn"
	"cclab/scenarios"
	"cclab/sim"
)

// TestImportPyTorch: the shipped FDCC actor, written as the reference
// PyTorch code names it (pi.*, no lab metadata), converts back into a
// policy that decides exactly as the shipped one; the unconverted file is
// refused by cc.policy with a pointer to the command.
func TestImportPyTorch(t *testing.T) {
	data, err := fdcc.ShippedFile("fdcc")
	if err != nil {
		t.Fatal(err)
	}
	f, err := nn.ReadSafetensors(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var ts []nn.Tensor
	for _, x := range f.Tensors {
		ts = append(ts, nn.Tensor{Name: "pi." + strings.TrimPrefix(x.Name, "actor."), Shape: x.Shape, Data: x.Data})
	}
	var b bytes.Buffer
	if err := nn.WriteSafetensors(&b, ts, nil); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in, out := filepath.Join(dir, "actor.safetensors"), filepath.Join(dir, "policy.safetensors")
	if err := os.WriteFile(in, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	code, stdout, stderr := runCLI(t, context.Background(), "import", "pytorch", in, "--out", out)
	if code != exitOK || !strings.Contains(stdout, "hidden 16") {
		t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	got, meta, err := fdcc.LoadPolicy(bytes.NewReader([]byte(readFile(t, out))))
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := fdcc.Shipped("fdcc")
	if got.Arch() != want.Arch() || meta["algo"] != "fdcc" {
		t.Fatalf("imported %+v (meta %v), want %+v", got.Arch(), meta, want.Arch())
	}
	obs := []float64{1.3, 0.4, 0.9, 0.2, 0.1, -0.2, 0.25, 0.5}
	hist := append(append([]float64{}, obs...), obs...)
	if g, w := got.Act(got.NewScratch(), hist, 2, obs), want.Act(want.NewScratch(), hist, 2, obs); g != w {
		t.Fatalf("imported policy acts %v, the shipped one %v", g, w)
	}

	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"import", "pytorch", in, "--out", out, "--algo", "rlcc"}, "want [hidden, 2]"},
		{[]string{"import", "pytorch", in, "--out", out, "--prefix", "actor."}, `is the prefix "actor." right?`},
		{[]string{"import", "pytorch", in, "--out", out, "--algo", "dcqcn"}, "--algo"},
		{[]string{"import", "onnx", in}, "pytorch"},
		{[]string{"run", "../../scenarios/library/fdcc-dumbbell-4to1.json", "--set", "cc.policy=" + in, "--out", filepath.Join(dir, "run")}, "cclab import pytorch"},
	} {
		code, _, stderr := runCLI(t, context.Background(), tc.args...)
		if code == exitOK || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q, want an error containing %q", tc.args, code, stderr, tc.want)
		}
	}
}

// the reference's ns-3 experiment, kept with the engine's fidelity tests
// (sim/reference_test.go reads the same copy)
const ns3RefDir = "../../sim/testdata/reference/hpcc-ns3-websearch16"

// refFlowLine is one line of the reference's flow file, read here
// independently of the importer: src dst pg dport size start_s.
type refFlowLine struct {
	src, dst string
	size     int64
	start    sim.Time // with the 2 s offset removed
}

func readNS3FlowFile(t *testing.T, path string) []refFlowLine {
	t.Helper()
	lines := strings.Split(strings.TrimSpace(readFile(t, path)), "\n")
	n, err := strconv.Atoi(lines[0])
	if err != nil || n != len(lines)-1 {
		t.Fatalf("%s: count %q, %d flow lines", path, lines[0], len(lines)-1)
	}
	var out []refFlowLine
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		size, err1 := strconv.ParseInt(f[4], 10, 64)
		whole, frac, _ := strings.Cut(f[5], ".")
		ps, err2 := strconv.ParseInt(whole+(frac + "000000000000")[:12], 10, 64) // seconds to picoseconds
		if err1 != nil || err2 != nil || len(frac) > 12 {
			t.Fatalf("%s: line %q", path, l)
		}
		out = append(out, refFlowLine{src: "h" + f[0], dst: "h" + f[1], size: size, start: sim.Time(ps) - 2*sim.Second})
	}
	return out
}

// TestImportNS3Reference: `cclab import ns3` on each of the reference's
// configurations finds the topology and flow files in the config's parent
// folder (the trace file the configs name does not exist: not an error),
// writes a scenario that parses, with the reference's 357 flows in the flow
// file's order and with its sizes, hosts and starts (offset removed).
func TestImportNS3Reference(t *testing.T) {
	want := readNS3FlowFile(t, filepath.Join(ns3RefDir, "flow_websearch_l30_10ms_s1.txt"))
	if len(want) != 357 {
		t.Fatalf("the reference flow file has %d flows, want 357", len(want))
	}
	for _, tc := range []struct{ dir, algo string }{{"dcqcn", "dcqcn"}, {"dctcp", "dctcp"}, {"hp", "hpcc"}, {"timely", "timely"}} {
		t.Run(tc.dir, func(t *testing.T) {
			config := filepath.Join(ns3RefDir, tc.dir, "config.txt")
			if !strings.Contains(readFile(t, config), "TRACE_FILE trace.txt") {
				t.Fatal("the config no longer names a trace file")
			}
			if _, err := os.Stat(filepath.Join(ns3RefDir, "trace.txt")); err == nil {
				t.Fatal("trace.txt exists: the test no longer shows that a missing trace file is not an error")
			}
			out := filepath.Join(t.TempDir(), "scenario.json")
			code, stdout, stderr := runCLI(t, context.Background(), "import", "ns3", config, "--out", out, "--strict")
			if code != exitOK || stdout != "" || strings.Contains(stderr, "warning") {
				t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
			}
			sc, err := scenarios.Parse([]byte(readFile(t, out)))
			if err != nil {
				t.Fatal(err)
			}
			if sc.Name != "ns3-"+tc.dir || sc.CC.Algorithm != tc.algo || sc.Duration != 101*sim.Millisecond || sc.Topology.Kind != scenarios.KindCustom {
				t.Errorf("name %q, algorithm %s, duration %d, topology %s", sc.Name, sc.CC.Algorithm, sc.Duration, sc.Topology.Kind)
			}
			if len(sc.Workload) != 1 || len(sc.Workload[0].Flows) != len(want) {
				t.Fatalf("workload %d entries, want one list of %d flows", len(sc.Workload), len(want))
			}
			for i, f := range sc.Workload[0].Flows {
				w := want[i]
				if f.Src != w.src || f.Dst != w.dst || f.Size != w.size || f.Start != w.start {
					t.Fatalf("flow %d: %s -> %s, %d B at %d ps; the flow file's line %d: %s -> %s, %d B at %d ps",
						i, f.Src, f.Dst, f.Size, f.Start, i+2, w.src, w.dst, w.size, w.start)
				}
			}
		})
	}
}

// TestImportNS3Stdout: without --out the scenario goes to standard output,
// and --name names it.
func TestImportNS3Stdout(t *testing.T) {
	code, stdout, stderr := runCLI(t, context.Background(), "import", "ns3", filepath.Join(ns3RefDir, "hp", "config.txt"), "--name", "mine")
	if code != exitOK {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	sc, err := scenarios.Parse([]byte(stdout))
	if err != nil || sc.Name != "mine" {
		t.Fatalf("stdout is not the scenario named mine: %v", err)
	}
}

// TestImportNS3Errors: bad input fails with the file, the line and the
// field in the message; unknown keys warn by name, or fail with --strict.
func TestImportNS3Errors(t *testing.T) {
	dir := t.TempDir()
	ref := func(name string) string { return readFile(t, filepath.Join(ns3RefDir, name)) }
	config := ref("hp/config.txt")
	topo := ref("topo_mpcc_fattree_pods2.txt")
	flows := ref("flow_websearch_l30_10ms_s1.txt")
	lines := func(s string, n int) string { return strings.Join(strings.SplitAfter(s, "\n")[:n], "") }
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	cases := []struct {
		name                string
		config, topo, flows string
		flags               []string
		code                int
		stderr              []string // every one must appear
	}{
		{"truncated config", lines(config, 45) + "KMAX_MAP\n", topo, flows, nil, exitError,
			[]string{"config.txt:46: KMAX_MAP: no value"}},
		{"truncated topology", config, lines(topo, 10), flows, nil, exitError,
			[]string{"topo.txt:10: links: truncated after line 10: 8 of 32 links"}},
		{"truncated flows", config, topo, lines(flows, 100), nil, exitError,
			[]string{"flow.txt:100: flows: truncated after line 100: 99 of 357 flows"}},
		{"link to an unknown node", config, strings.Replace(topo, "0 16 100Gbps", "0 26 100Gbps", 1), flows, nil, exitError,
			[]string{`topo.txt:3: b: "26" is not a node (0..25)`}},
		{"rate without units", config, strings.Replace(topo, "0 16 100Gbps", "0 16 100", 1), flows, nil, exitError,
			[]string{`topo.txt:3: rate: "100": want a rate`}},
		{"flow host does not exist", config, topo, strings.Replace(flows, "13 3 3 100 5101961", "13 30 3 100 5101961", 1), nil, exitError,
			[]string{`flow.txt:2: dst: "30" is not a node id`}},
		{"flow from a switch", config, topo, strings.Replace(flows, "9 0 3 100 596369", "17 0 3 100 596369", 1), nil, exitError,
			[]string{"flow.txt:3: src: flow 1: node 17 is a switch"}},
		{"config rate without units", strings.Replace(config, "RATE_AI 40Mb/s", "RATE_AI 40", 1), topo, flows, nil, exitError,
			[]string{`config.txt:22: RATE_AI: "40": want a rate`}},
		{"a CC_MODE the lab lacks", strings.Replace(config, "CC_MODE 3", "CC_MODE 10", 1), topo, flows, nil, exitError,
			[]string{"config.txt:15: CC_MODE: 10 is not an algorithm the lab has"}},
		{"unknown keys warn", config + "NEW_KEY 1\nOTHER_KEY 2\n", topo, flows, nil, exitOK,
			[]string{"warning: ", "config.txt:59: NEW_KEY: not a config key the lab understands", "config.txt:60: OTHER_KEY: not a config key"}},
		{"--strict with an unknown key", config + "NEW_KEY 1\nOTHER_KEY 2\n", topo, flows, []string{"--strict"}, exitError,
			[]string{"config.txt:59: NEW_KEY: not a config key the lab understands; 2 unknown keys in all: NEW_KEY, OTHER_KEY (--strict)"}},
		{"no topology file", strings.Replace(config, "TOPOLOGY_FILE topo_mpcc_fattree_pods2.txt", "TOPOLOGY_FILE nowhere.txt", 1), topo, flows, nil, exitError,
			[]string{"config.txt:6: TOPOLOGY_FILE: nowhere.txt: no such file"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := write("config.txt", tc.config)
			args := append([]string{"import", "ns3", c, "--topology", write("topo.txt", tc.topo), "--flows", write("flow.txt", tc.flows), "--out", filepath.Join(dir, "out.json")}, tc.flags...)
			if tc.name == "no topology file" {
				args = []string{"import", "ns3", c}
			}
			code, _, stderr := runCLI(t, context.Background(), args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %q", code, tc.code, stderr)
			}
			for _, w := range tc.stderr {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr %q lacks %q", stderr, w)
				}
			}
		})
	}
}
