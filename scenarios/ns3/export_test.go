package ns3

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"

	"cclab/scenarios"
	"cclab/sim"
)

// unsupportedInLibrary is what Export must refuse in each library scenario
// (by its own algorithm, then with every flow on HPCC), each feature named
// as Unsupported names it (the text before its explanation). A scenario
// missing here must export and come back the same.
var unsupportedInLibrary = map[string][]string{
	"dolce-alltoall-ppn16.json":            {"cc.algorithm dolce", "workload: flow 14336 waits for other flows to finish"},
	"dolce-alltoall-ppn16.json hpcc":       {"workload: flow 14336 waits for other flows to finish"},
	"dolce-alltoall-ppn40.json":            {"cc.algorithm dolce"},
	"dolce-fattree16-cachefollower30.json": {"cc.algorithm dolce"},
	"dolce-fattree16-cachefollower50.json": {"cc.algorithm dolce"},
	"dolce-fattree16-datamining30.json":    {"cc.algorithm dolce"},
	"dolce-fattree16-datamining50.json":    {"cc.algorithm dolce"},
	"dolce-fattree8-cachefollower30.json":  {"cc.algorithm dolce"},
	"dolce-fattree8-cachefollower50.json":  {"cc.algorithm dolce"},
	"dolce-fattree8-datamining30.json":     {"cc.algorithm dolce"},
	"dolce-fattree8-datamining50.json":     {"cc.algorithm dolce"},
	"dolce-incast-repeat.json":             {"cc.algorithm dolce"},
	"dolceplus-dumbbell.json":              {"cc.algorithm dolceplus"},
	"dumbbell-4to1-none.json":              {"cc.algorithm none"},
	"fattree16-websearch30.json":           {"cc.algorithm none"},
	"fdcc-dumbbell-1024to1.json":           {"cc.algorithm fdcc"},
	"fdcc-dumbbell-16to1.json":             {"cc.algorithm fdcc"},
	"fdcc-dumbbell-256to1.json":            {"cc.algorithm fdcc"},
	"fdcc-dumbbell-4to1.json":              {"cc.algorithm fdcc"},
	"fdcc-fattree-192to1.json":             {"cc.algorithm fdcc"},
	"fdcc-fattree-48to1.json":              {"cc.algorithm fdcc"},
	"fdcc-fattree-768to1.json":             {"cc.algorithm fdcc"},
	"fdcc-fattree-fbhadoop.json":           {"cc.algorithm fdcc"},
	"fdcc-fattree-websearch.json":          {"cc.algorithm fdcc"},
	"fdcc-join4.json":                      {"cc.algorithm fdcc"},
	"fdcc-longshort.json":                  {"cc.algorithm fdcc"},
	"incast-8to1.json":                     {"cc.algorithm none"},
	"leafspine-alltoall-none.json":         {"cc.algorithm none", "workload: flow 240 waits for other flows to finish"},
	"leafspine-alltoall-none.json hpcc":    {"workload: flow 240 waits for other flows to finish"},
	"mpcc-exp1-1ms.json":                   {"cc.algorithm mpcc"},
	"mpcc-exp1-literal.json":               {"cc.algorithm mpcc"},
	"mpcc-exp1.json":                       {"cc.algorithm mpcc"},
	"mpcc-exp2.json":                       {"cc.algorithm mpcc"},
	"mpcc-exp3-fbhadoop30-incast.json":     {"cc.algorithm mpcc"},
	"mpcc-exp3-fbhadoop30.json":            {"cc.algorithm mpcc"},
	"mpcc-exp3-fbhadoop60-incast.json":     {"cc.algorithm mpcc"},
	"mpcc-exp3-fbhadoop60.json":            {"cc.algorithm mpcc"},
	"mpcc-exp3-websearch30-incast.json":    {"cc.algorithm mpcc"},
	"mpcc-exp3-websearch30.json":           {"cc.algorithm mpcc"},
	"mpcc-exp3-websearch60-incast.json":    {"cc.algorithm mpcc"},
	"mpcc-exp3-websearch60.json":           {"cc.algorithm mpcc"},
	"qcn-aimd-350us.json":                  {"cc.algorithm qcn_aimd", "switch.pfc off", "host header, ACK or NACK sizes"},
	"qcn-aimd-350us.json hpcc":             {"switch.pfc off", "host header, ACK or NACK sizes"},
	"qcn-averaging-350us.json":             {"cc.algorithm qcn", "switch.pfc off", "host header, ACK or NACK sizes"},
	"qcn-averaging-350us.json hpcc":        {"switch.pfc off", "host header, ACK or NACK sizes"},
	"qcn-buffer-qcn.json":                  {"cc.algorithm qcn", "switch.pfc off", "switch.buffer 150000 B", "host header, ACK or NACK sizes"},
	"qcn-buffer-qcn.json hpcc":             {"switch.pfc off", "switch.buffer 150000 B", "host header, ACK or NACK sizes"},
	"qcn-buffer-tcp.json":                  {"cc.algorithm tcp", "switch.pfc off", "switch.buffer 150000 B", "host header, ACK or NACK sizes"},
	"qcn-buffer-tcp.json hpcc":             {"switch.pfc off", "switch.buffer 150000 B", "host header, ACK or NACK sizes"},
	"rcc-fairness-4flows.json":             {"cc.algorithm rcc"},
	"rcc-fattree320-websearch.json":        {"cc.algorithm rcc", "switch.buffer 32000000 B"},
	"rcc-fattree320-websearch.json hpcc":   {"switch.buffer 32000000 B"},
	"rcc-incast-256to1.json":               {"cc.algorithm rcc"},
	"rcc-multibottleneck.json":             {"cc.algorithm rcc"},
}

// featureNames cuts Unsupported's explanations off.
func featureNames(list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i], _, _ = strings.Cut(s, " (")
	}
	return out
}

func buildDoc(t *testing.T, doc []byte) (*scenarios.Scenario, *sim.Config) {
	t.Helper()
	sc, err := scenarios.Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := scenarios.Build(sc)
	if err != nil {
		t.Fatal(err)
	}
	return sc, cfg
}

// Round trip: every library scenario, by its own algorithm and with HPCC
// for every flow, either is refused naming exactly the features listed
// above, or exports to ns-3 files that import back (FromFiles) as the same
// experiment (sameExperiment); the imported scenario exported and imported
// again has the same canonical form.
func TestExportRoundTrip(t *testing.T) {
	paths, err := filepath.Glob("../library/*.json")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no library scenarios: %v", err)
	}
	seen := map[string]bool{}
	exported := 0
	for _, p := range paths {
		for _, algo := range []string{"", "hpcc"} {
			name := strings.TrimSpace(filepath.Base(p) + " " + algo)
			t.Run(name, func(t *testing.T) {
				doc, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				if algo != "" {
					if doc, err = scenarios.SetAlgorithm(doc, algo); err != nil {
						t.Fatal(err)
					}
				}
				sc, cfg := buildDoc(t, doc)
				want, listed := unsupportedInLibrary[name]
				seen[name] = listed
				files, err := Export(sc, cfg)
				var ue *UnsupportedError
				if errors.As(err, &ue) {
					got := featureNames(ue.Features)
					if !listed || strings.Join(got, "|") != strings.Join(want, "|") {
						t.Fatalf("Export refuses %q, the test lists %q", got, want)
					}
					if u := featureNames(Unsupported(sc, cfg)); strings.Join(u, "|") != strings.Join(got, "|") {
						t.Fatalf("Unsupported says %q, Export %q", u, got)
					}
					t.Skipf("ns-3 cannot express: %s", strings.Join(got, "; "))
				}
				if err != nil {
					t.Fatal(err)
				}
				if listed {
					t.Fatalf("exported, but the test lists %q as unsupported", want)
				}
				exported++
				imp, err := FromFiles("rt", File{ConfigFile, files.Config}, File{TopologyFile, files.Topology}, File{FlowFile, files.Flows})
				if err != nil {
					t.Fatal(err)
				}
				if len(imp.Unknown) > 0 {
					t.Errorf("the importer does not know the exported keys %v", imp.Unknown)
				}
				isc, icfg := buildDoc(t, imp.Scenario)
				sameExperiment(t, sc, cfg, icfg)

				// the imported scenario is a fixed point: export, import, same canonical form
				files2, err := Export(isc, icfg)
				if err != nil {
					t.Fatal(err)
				}
				imp2, err := FromFiles("rt", File{ConfigFile, files2.Config}, File{TopologyFile, files2.Topology}, File{FlowFile, files2.Flows})
				if err != nil {
					t.Fatal(err)
				}
				isc2, _ := buildDoc(t, imp2.Scenario)
				c1, err1 := isc.Canonical()
				c2, err2 := isc2.Canonical()
				if err1 != nil || err2 != nil {
					t.Fatal(err1, err2)
				}
				if string(c1) != string(c2) {
					t.Errorf("imported, exported and imported again: the canonical form changed")
				}
			})
		}
	}
	for name := range unsupportedInLibrary {
		if _, ok := seen[name]; !ok {
			t.Errorf("the test lists %s, which is not a library scenario", name)
		}
	}
	if exported < 10 {
		t.Errorf("only %d library scenarios exported: the round trip covers too little", exported)
	}
}

// sameExperiment requires the imported run to be the original's: nodes of
// the same kinds under the ns-3 numbering, the same links, the flows (in
// start order) with the same hosts, sizes and starts, the same algorithm
// and parameters, NIC and switch settings, the same ECN threshold on every
// port, and the same duration (cclab's cap when the original had none).
func sameExperiment(t *testing.T, sc *scenarios.Scenario, a, b *sim.Config) {
	t.Helper()
	n, err := NewNumbering(sc, a)
	if err != nil {
		t.Fatal(err)
	}
	bIndex := map[string]int{}
	for i, node := range b.Nodes {
		bIndex[node.Name] = i
	}
	mapped := make([]int, len(a.Nodes))
	if len(a.Nodes) != len(b.Nodes) {
		t.Fatalf("%d nodes, imported %d", len(a.Nodes), len(b.Nodes))
	}
	for i, node := range a.Nodes {
		prefix := "h"
		if node.Kind == sim.Switch {
			prefix = "s"
		}
		j, ok := bIndex[fmt.Sprintf("%s%d", prefix, n.ID[i])]
		if !ok || b.Nodes[j].Kind != node.Kind {
			t.Fatalf("node %s (ns-3 id %d): not imported as %s%d of its kind", node.Name, n.ID[i], prefix, n.ID[i])
		}
		mapped[i] = j
	}
	if len(a.Links) != len(b.Links) {
		t.Fatalf("%d links, imported %d", len(a.Links), len(b.Links))
	}
	for i, l := range a.Links {
		m := b.Links[i]
		if mapped[l.A] != m.A || mapped[l.B] != m.B || l.Rate != m.Rate || l.Delay != m.Delay {
			t.Fatalf("link %d: %+v, imported %+v", i, l, m)
		}
	}
	order := make([]int, len(a.Flows))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool { return a.Flows[order[x]].Start < a.Flows[order[y]].Start })
	if len(a.Flows) != len(b.Flows) {
		t.Fatalf("%d flows, imported %d", len(a.Flows), len(b.Flows))
	}
	for k, i := range order {
		f, g := a.Flows[i], b.Flows[k]
		size := f.Size
		if size > math.MaxUint32 {
			size = math.MaxUint32 // written as the most a flow file holds (endlessFlow)
		}
		if mapped[f.Src] != g.Src || mapped[f.Dst] != g.Dst || size != g.Size || f.Start != g.Start {
			t.Fatalf("flow %d (line %d of the flow file): %+v, imported %+v", i, k+2, f, g)
		}
	}
	// one algorithm and one set of parameters (the engine keeps an entry
	// per host line rate)
	if len(b.Algos) != len(a.Algos) {
		t.Fatalf("%d algorithm entries, imported %d", len(a.Algos), len(b.Algos))
	}
	for _, ba := range b.Algos {
		if a.Algos[0].Algo.Name != ba.Algo.Name {
			t.Fatalf("algorithm %s, imported %v", a.Algos[0].Algo.Name, b.Algos)
		}
		for k, v := range a.Algos[0].Params {
			if w := ba.Params[k]; w != v {
				t.Errorf("cc.params.%s = %v, imported %v", k, v, w)
			}
		}
	}
	if a.Host != b.Host {
		t.Errorf("host %+v, imported %+v", a.Host, b.Host)
	}
	sa, sb := a.Switch, b.Switch
	if sa.Buffer != sb.Buffer || sa.PFC != sb.PFC || sa.INT != sb.INT || sa.AckHigh != sb.AckHigh || sa.Spray != sb.Spray ||
		max(sa.DataClasses, 1) != max(sb.DataClasses, 1) || sa.ECN.Enabled != sb.ECN.Enabled || sa.ECN.Pmax != sb.ECN.Pmax {
		t.Errorf("switch %+v, imported %+v", sa, sb)
	}
	if sa.ECN.Enabled {
		for _, l := range a.Links {
			for _, th := range [][2]int64{{sa.ECN.Kmin, sb.ECN.Kmin}, {sa.ECN.Kmax, sb.ECN.Kmax}} {
				if x, y := threshold(sa.ECN, th[0], l.Rate), threshold(sb.ECN, th[1], l.Rate); x != y {
					t.Errorf("ECN threshold at %d bps: %d B, imported %d B", l.Rate, x, y)
				}
			}
		}
	}
	want := a.Duration
	if want == 0 {
		want = sim.MaxDuration
	}
	if b.Duration != want {
		t.Errorf("duration %d ps, imported %d ps", want, b.Duration)
	}
}

func threshold(e sim.ECNConfig, k, rate int64) int64 {
	if e.ScaleWithRate && e.RefRate > 0 {
		return k * rate / e.RefRate
	}
	return k
}

// sameValue compares two config values token by token: equal text, equal
// numbers (0.20 and 0.2, 2.101 and 2.101000000) or equal rates.
func sameValue(a, b string) bool {
	ta, tb := strings.Fields(a), strings.Fields(b)
	if len(ta) != len(tb) {
		return false
	}
	for i := range ta {
		if ta[i] == tb[i] {
			continue
		}
		x, err1 := strconv.ParseFloat(ta[i], 64)
		y, err2 := strconv.ParseFloat(tb[i], 64)
		if err1 == nil && err2 == nil && x == y {
			continue
		}
		r, err1 := ParseRate(ta[i])
		q, err2 := ParseRate(tb[i])
		if err1 == nil && err2 == nil && r == q {
			continue
		}
		return false
	}
	return true
}

// The reference's four experiments (DCQCN, HPCC, TIMELY, DCTCP), imported
// and exported again, import back as the same experiment and give its
// flow file byte for byte, its topology, and its config: every key both
// write has the same value (file names and the end of queue monitoring
// aside), and every key the importer reads for the algorithm is written.
func TestExportReproducesReferenceFiles(t *testing.T) {
	// file names differ; QLEN_MON_END: the export monitors queues until the
	// stop time, the reference's runs stopped 1 ms after their monitoring
	skip := map[string]bool{"TOPOLOGY_FILE": true, "FLOW_FILE": true, "TRACE_FILE": true, "TRACE_OUTPUT_FILE": true,
		"FCT_OUTPUT_FILE": true, "PFC_OUTPUT_FILE": true, "QLEN_MON_FILE": true, "QLEN_MON_END": true}
	for _, algo := range []string{"dcqcn", "hp", "timely", "dctcp"} {
		t.Run(algo, func(t *testing.T) {
			sc, cfg := exportRefImport(t, algo)
			files, err := Export(sc, cfg)
			if err != nil {
				t.Fatal(err)
			}
			imp, err := FromFiles("rt", File{ConfigFile, files.Config}, File{TopologyFile, files.Topology}, File{FlowFile, files.Flows})
			if err != nil {
				t.Fatal(err)
			}
			_, icfg := buildDoc(t, imp.Scenario)
			sameExperiment(t, sc, cfg, icfg)
			if want := exportRefFile(t, "flow_websearch_l30_10ms_s1.txt"); string(files.Flows) != string(want.Data) {
				t.Errorf("flow.txt differs from the reference's flow file")
			}
			want, err := ParseTopology(exportRefFile(t, "topo_mpcc_fattree_pods2.txt"))
			if err != nil {
				t.Fatal(err)
			}
			got, err := ParseTopology(File{TopologyFile, files.Topology})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("topology.txt: %+v, the reference's %+v", got, want)
			}
			ref, err := ParseConfig(exportRefFile(t, algo+"/config.txt"))
			if err != nil {
				t.Fatal(err)
			}
			ours, err := ParseConfig(File{ConfigFile, files.Config})
			if err != nil {
				t.Fatal(err)
			}
			required := []string{"CC_MODE", "SIMULATOR_STOP_TIME", "BUFFER_SIZE", "KMAX_MAP", "KMIN_MAP", "PMAX_MAP", "ENABLE_QCN",
				"HAS_WIN", "VAR_WIN", "GLOBAL_T", "PACKET_PAYLOAD_SIZE", "L2_ACK_INTERVAL", "QLEN_MON_START", "QLEN_MON_END"}
			for _, pk := range paramKeys[cfg.Algos[0].Algo.Name] {
				required = append(required, pk.key)
			}
			for _, k := range required {
				if _, ok := ours.Values[k]; !ok {
					t.Errorf("config.txt has no %s", k)
				}
			}
			for _, k := range ref.Keys {
				v, ok := ours.Values[k]
				if skip[k] || !ok {
					continue
				}
				if !sameValue(v, ref.Values[k]) {
					t.Errorf("%s %q, the reference has %q", k, v, ref.Values[k])
				}
			}
		})
	}
}

// A link down at 0 s cannot be written: third.cc takes LINK_DOWN only at a
// time > 0, so `LINK_DOWN 0 a b` would run with the link up. A later link
// down exports and comes back.
func TestExportLinkDown(t *testing.T) {
	imp, err := FromFiles("t", File{"config.txt", []byte(config + "LINK_DOWN 5 2 3\n")}, File{"topo.txt", []byte(topo)}, File{"flow.txt", []byte(flows)})
	if err != nil {
		t.Fatal(err)
	}
	sc, cfg := buildDoc(t, imp.Scenario)
	files, err := Export(sc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(files.Config), "LINK_DOWN 5 2 3\n") {
		t.Errorf("config.txt lacks `LINK_DOWN 5 2 3`:\n%s", files.Config)
	}
	at0 := strings.Replace(string(imp.Scenario), `"at": "5us"`, `"at": "0s"`, 1)
	sc, cfg = buildDoc(t, []byte(at0))
	_, err = Export(sc, cfg)
	var ue *UnsupportedError
	if !errors.As(err, &ue) || len(ue.Features) != 1 || !strings.HasPrefix(ue.Features[0], "events: link s2->s3 down at 0 s") {
		t.Errorf("a link down at 0 s: %v, want it refused", err)
	}
}

// third.cc reads a flow's size as a uint32_t: a larger flow that could
// send more than 4294967295 B before the run ends is refused; one that
// cannot (a library scenario's "endless" 1000 GB flow) is written with that
// size, the same experiment, and a note.
func TestExportHugeFlow(t *testing.T) {
	imp, err := FromFiles("t", File{"config.txt", []byte(config)}, File{"topo.txt", []byte(topo)}, File{"flow.txt", []byte(flows)})
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(string(imp.Scenario), `"size": "1KB"`, `"size": "5GB"`, 1)
	if doc == string(imp.Scenario) {
		t.Fatalf("no 1KB flow in %s", imp.Scenario)
	}
	sc, cfg := buildDoc(t, []byte(doc)) // 10 ms: 5 GB at 100 Gbps takes 400 ms
	files, err := Export(sc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(files.Flows), "\n0 1 3 100 4294967295 2.000000001\n") || !strings.Contains(strings.Join(files.Warnings, "\n"), "written as 4294967295 B") {
		t.Errorf("flow.txt:\n%s\nnotes %q: want the 5 GB flow as 4294967295 B, with a note", files.Flows, files.Warnings)
	}
	long := strings.Replace(doc, `"duration": "10ms"`, `"duration": "1s"`, 1)
	sc, cfg = buildDoc(t, []byte(long))
	_, err = Export(sc, cfg)
	var ue *UnsupportedError
	if !errors.As(err, &ue) || len(ue.Features) != 1 || !strings.HasPrefix(ue.Features[0], "workload: flow 0 of 5000000000 B") {
		t.Errorf("a 5 GB flow in a 1 s run: %v, want it refused", err)
	}
}

// Hosts at different line rates (a 25 Gbps and a 100 Gbps NIC) run one
// algorithm with one set of parameters, as in ns-3: the engine's entry per
// line rate is not "flows with different algorithms". The files import back
// as the same experiment.
func TestExportMixedHostRates(t *testing.T) {
	mixed := strings.Replace(topo, "0 2 100Gbps 1000ns 0", "0 2 25Gbps 1000ns 0", 1)
	c := strings.NewReplacer(
		"KMAX_MAP 2 100000000000 1600 400000000000 6400", "KMAX_MAP 3 25000000000 400 100000000000 1600 400000000000 6400",
		"KMIN_MAP 2 100000000000 400 400000000000 1600", "KMIN_MAP 3 25000000000 100 100000000000 400 400000000000 1600",
		"PMAX_MAP 2 100000000000 0.20 400000000000 0.20", "PMAX_MAP 3 25000000000 0.2 100000000000 0.20 400000000000 0.20").Replace(config)
	imp, err := FromFiles("t", File{"config.txt", []byte(c)}, File{"topo.txt", []byte(mixed)}, File{"flow.txt", []byte(flows)})
	if err != nil {
		t.Fatal(err)
	}
	sc, cfg := buildDoc(t, imp.Scenario)
	if len(cfg.Algos) < 2 {
		t.Fatalf("%d algorithm entries: the test wants the engine's entry per line rate", len(cfg.Algos))
	}
	files, err := Export(sc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	back, err := FromFiles("rt", File{ConfigFile, files.Config}, File{TopologyFile, files.Topology}, File{FlowFile, files.Flows})
	if err != nil {
		t.Fatal(err)
	}
	_, icfg := buildDoc(t, back.Scenario)
	sameExperiment(t, sc, cfg, icfg)

	// different parameters are still refused
	two := strings.Replace(string(imp.Scenario), `"workload": [`, `"workload": [{"kind": "flows", "cc": {"algorithm": "dcqcn", "params": {"ai": 10}}, "flows": [{"src": "h1", "dst": "h0", "size": "1KB", "start": "0s"}]},`, 1)
	sc, cfg = buildDoc(t, []byte(two))
	_, err = Export(sc, cfg)
	var ue *UnsupportedError
	if !errors.As(err, &ue) || len(ue.Features) != 1 || !strings.HasPrefix(ue.Features[0], "cc.params (flows with different parameters") {
		t.Errorf("a workload with its own ai: %v, want it refused", err)
	}
}

// third.cc reads the ECN maps' thresholds as whole KB (uint32_t; a
// fraction stops its config reader): thresholds that are not whole KB at
// some link rate are refused, naming the rate.
func TestExportECNWholeKB(t *testing.T) {
	imp, err := FromFiles("t", File{"config.txt", []byte(config)}, File{"topo.txt", []byte(topo)}, File{"flow.txt", []byte(flows)})
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.Replace(string(imp.Scenario), `"kmin": "400KB"`, `"kmin": "400500B"`, 1)
	if doc == string(imp.Scenario) {
		t.Fatalf("no kmin 400KB in %s", imp.Scenario)
	}
	sc, cfg := buildDoc(t, []byte(doc))
	_, err = Export(sc, cfg)
	var ue *UnsupportedError
	// 400.5 KB at 100 Gbps, 1602 KB (whole) at 400 Gbps
	if !errors.As(err, &ue) || len(ue.Features) != 1 || !strings.HasPrefix(ue.Features[0], "switch.ecn.kmin 400.5 KB at 100Gbps") {
		t.Errorf("kmin 400.5 KB: %v, want it refused at 100 Gbps only", err)
	}
}

// With ECN off the config still has the three ECN maps: third.cc asserts a
// kmin, kmax and pmax for every switch port's rate whatever ENABLE_QCN says.
func TestExportECNOffHasMaps(t *testing.T) {
	imp, err := FromFiles("t", File{"config.txt", []byte(config + "ENABLE_QCN 0\n")}, File{"topo.txt", []byte(topo)}, File{"flow.txt", []byte(flows)})
	if err != nil {
		t.Fatal(err)
	}
	sc, cfg := buildDoc(t, imp.Scenario)
	if cfg.Switch.ECN.Enabled {
		t.Fatal("ENABLE_QCN 0 imported with ECN on")
	}
	files, err := Export(sc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseConfig(File{ConfigFile, files.Config})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"KMAX_MAP", "KMIN_MAP", "PMAX_MAP"} {
		if v := c.Values[k]; !strings.HasPrefix(v, "2 100000000000 ") || !strings.Contains(v, " 400000000000 ") {
			t.Errorf("%s %q: want a value at 100 and 400 Gbps", k, v)
		}
	}
	if c.Values["ENABLE_QCN"] != "0" {
		t.Errorf("ENABLE_QCN %q", c.Values["ENABLE_QCN"])
	}
	back, err := FromFiles("rt", File{ConfigFile, files.Config}, File{TopologyFile, files.Topology}, File{FlowFile, files.Flows})
	if err != nil {
		t.Fatal(err)
	}
	_, icfg := buildDoc(t, back.Scenario)
	sameExperiment(t, sc, cfg, icfg)
}
