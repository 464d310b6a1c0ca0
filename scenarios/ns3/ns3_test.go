package ns3

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"cclab/scenarios"
	"cclab/sim"
)

const topo = `4 2 3
2 3
0 2 100Gbps 1000ns 0
1 2 100Gbps 0.001ms 0
2 3 400Gbps 1us 0
`

const flows = `2
0 1 3 100 1000 2.000000001
1 0 3 100 5000000 2.5
`

const config = `CC_MODE 1
RATE_AI 20Mb/s
RATE_HAI 200Mb/s
MIN_RATE 1000Mb/s
EWMA_GAIN 0.00390625
ALPHA_RESUME_INTERVAL 1
RATE_DECREASE_INTERVAL 4
RP_TIMER 300
FAST_RECOVERY_TIMES 1
CLAMP_TARGET_RATE 0
ACK_HIGH_PRIO 1
HAS_WIN 0
BUFFER_SIZE 32
PACKET_PAYLOAD_SIZE 1000
KMAX_MAP 2 100000000000 1600 400000000000 6400
KMIN_MAP 2 100000000000 400 400000000000 1600
PMAX_MAP 2 100000000000 0.20 400000000000 0.20
SIMULATOR_STOP_TIME 2.01
U_TARGET 0.95
FCT_OUTPUT_FILE fct.txt
SOMETHING_NEW 7
`

func TestImport(t *testing.T) {
	imp, err := FromFiles("t", File{"config.txt", []byte(config)}, File{"topo.txt", []byte(topo)}, File{"flow.txt", []byte(flows)})
	if err != nil {
		t.Fatal(err)
	}
	if len(imp.Unknown) != 1 || imp.Unknown[0] != "SOMETHING_NEW" {
		t.Errorf("unknown keys %v, want [SOMETHING_NEW]", imp.Unknown)
	}
	ignored := strings.Join(imp.Ignored, "; ")
	for _, k := range []string{"FCT_OUTPUT_FILE", "U_TARGET: not a parameter of dcqcn"} {
		if !strings.Contains(ignored, k) {
			t.Errorf("ignored keys %q lack %q", ignored, k)
		}
	}
	sc, err := scenarios.Parse(imp.Scenario)
	if err != nil {
		t.Fatalf("%v\n%s", err, imp.Scenario)
	}
	if sc.Duration != 10*sim.Millisecond || sc.CC.Algorithm != "dcqcn" || sc.Switch.Buffer != 32<<20 {
		t.Errorf("duration %d, algorithm %s, buffer %d", sc.Duration, sc.CC.Algorithm, sc.Switch.Buffer)
	}
	want := map[string]float64{"ai": 20, "hai": 200, "minRate": 1000, "g": 0.00390625, "alphaTimer": 1,
		"decreaseInterval": 4, "increaseTimer": 300, "fastRecovery": 1, "clampTarget": 0, "ackHighPriority": 1, "window": 0}
	for k, v := range want {
		if sc.CC.Params[k] != v {
			t.Errorf("param %s = %v, want %v", k, sc.CC.Params[k], v)
		}
	}
	if len(sc.CC.Params) != len(want) {
		t.Errorf("params %v", sc.CC.Params)
	}
	if !sc.Switch.PFC {
		t.Errorf("pfc off: the reference's switches are always lossless")
	}
	e := sc.Switch.ECN
	if e == nil || !e.Enabled || e.Kmin != 400_000 || e.Kmax != 1_600_000 || e.Pmax != 0.2 || e.Scale != scenarios.ScaleLinkRate {
		t.Errorf("ecn %+v", e)
	}
	c := sc.Topology.Custom
	if len(c.Nodes) != 4 || c.Nodes[2].ID != "s2" || c.Nodes[0].ID != "h0" || c.Links[1].Delay != sim.Microsecond || c.Links[2].Rate != 400e9 {
		t.Errorf("topology %+v", c)
	}
	f := sc.Workload[0].Flows
	if len(f) != 2 || f[0].Src != "h0" || f[0].Dst != "h1" || f[0].Size != 1000 || f[0].Start != sim.Nanosecond ||
		f[1].Start != 500*sim.Millisecond {
		t.Errorf("flows %+v", f)
	}
}

// Bad input names the file, the line and the field: each case asserts
// the three parts of the *Error and a piece of its message.
func TestImportErrors(t *testing.T) {
	cases := []struct {
		name                string
		config, topo, flows string
		file                string
		line                int
		field, msg          string
	}{
		{"truncated config", strings.Replace(config, "KMIN_MAP 2 100000000000 400 400000000000 1600", "KMIN_MAP", 1), topo, flows,
			"config.txt", 16, "KMIN_MAP", "no value (is the file cut short?)"},
		{"truncated config map", strings.Replace(config, "KMIN_MAP 2 100000000000 400 400000000000 1600", "KMIN_MAP 2 100000000000 400 4000", 1), topo, flows,
			"config.txt", 16, "KMIN_MAP", "want `n rate1 v1 ... rateN vN`"},
		{"config without CC_MODE", strings.Replace(config, "CC_MODE 1\n", "", 1), topo, flows, "config.txt", 0, "CC_MODE", "missing"},
		{"empty topology", config, "", flows, "topo.txt", 1, "counts", "empty file"},
		{"truncated topology", config, "4 2 3\n2 3\n0 2 100Gbps 1us 0\n", flows, "topo.txt", 3, "links", "truncated after line 3: 1 of 3 links"},
		{"truncated topology line", config, "4 2 3\n2 3\n0 2 100Gbps 1us 0\n1 2 100Gbps\n", flows, "topo.txt", 4, "link", "got 3 fields"},
		{"too many nodes", config, "20001 0 0\n", flows, "topo.txt", 1, "node, switch and link counts", "at most 10000 hosts"},
		{"truncated switch ids", config, "4 2 3\n", flows, "topo.txt", 1, "switch ids", "truncated after line 1"},
		{"link to unknown node", config, strings.Replace(topo, "1 2 100Gbps", "1 9 100Gbps", 1), flows, "topo.txt", 4, "b", `"9" is not a node (0..3)`},
		{"zero rate", config, strings.Replace(topo, "400Gbps", "0Gbps", 1), flows, "topo.txt", 5, "rate", `"0Gbps": want a rate > 0`},
		{"link to itself", config, strings.Replace(topo, "2 3 400Gbps", "3 3 400Gbps", 1), flows, "topo.txt", 5, "b", "joins node 3 to itself"},
		{"link between hosts", config, strings.Replace(topo, "1 2 100Gbps", "1 0 100Gbps", 1), flows, "topo.txt", 4, "b", "joins two hosts (1, 0)"},
		{"host without a link", config, "5 2 3\n2 3\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n2 3 400Gbps 1us 0\n", flows, "topo.txt", 0, "links", "host 4 has no link"},
		{"flow to itself", config, topo, strings.Replace(flows, "0 1 3 100 1000", "0 0 3 100 1000", 1), "flow.txt", 2, "dst", "flow 0: the same host as the source (0)"},
		{"flow over 4 GB", config, topo, strings.Replace(flows, "0 1 3 100 1000", "0 1 3 100 4294967296", 1), "flow.txt", 2, "size", `"4294967296": want a whole number of bytes in 1..4294967295`},
		{"rate without unit", config, strings.Replace(topo, "400Gbps", "400", 1), flows, "topo.txt", 5, "rate", `"400": want a rate`},
		{"bad delay", config, strings.Replace(topo, "1000ns", "1000", 1), flows, "topo.txt", 3, "delay", `"1000": want a time`},
		{"flow host missing", config, topo, strings.Replace(flows, "0 1 3 100 1000", "0 7 3 100 1000", 1), "flow.txt", 2, "dst", `"7" is not a node id`},
		{"flow from a switch", config, topo, strings.Replace(flows, "1 0 3 100 5000000", "2 0 3 100 5000000", 1), "flow.txt", 3, "src", "flow 1: node 2 is a switch, not a host"},
		{"flow to a switch after a blank line", config, topo, strings.Replace(flows, "\n1 0 3 100 5000000", "\n\n1 3 3 100 5000000", 1), "flow.txt", 4, "dst", "node 3 is a switch"},
		{"empty flows", config, topo, "\n", "flow.txt", 1, "flow count", "empty file"},
		{"truncated flows", config, topo, "3\n0 1 3 100 1000 2.0\n", "flow.txt", 2, "flows", "truncated after line 2: 1 of 3 flows"},
		{"truncated flow line", config, topo, "1\n0 1 3 100\n", "flow.txt", 2, "flow", "got 4 fields"},
		{"flow before offset", config, topo, "1\n0 1 3 100 1000 1.5\n", "flow.txt", 2, "start_s", "flow 0 starts before"},
		{"unknown cc mode", strings.Replace(config, "CC_MODE 1", "CC_MODE 10", 1), topo, flows, "config.txt", 1, "CC_MODE", "10 is not an algorithm the lab has"},
		{"rate param without unit", strings.Replace(config, "RATE_AI 20Mb/s", "RATE_AI 20", 1), topo, flows, "config.txt", 2, "RATE_AI", `"20": want a rate`},
		{"ecn map missing a rate", strings.Replace(config, "KMIN_MAP 2 100000000000 400 400000000000 1600", "KMIN_MAP 1 100000000000 400", 1), topo, flows,
			"config.txt", 16, "KMIN_MAP", "no value for the topology's 400Gbps links"},
		{"sampled feedback", config + "SAMPLE_FEEDBACK 1\n", topo, flows, "config.txt", 22, "SAMPLE_FEEDBACK", "only feedback on every ACK (0) is modelled"},
		{"static PFC threshold", config + "USE_DYNAMIC_PFC_THRESHOLD 0\n", topo, flows, "config.txt", 22, "USE_DYNAMIC_PFC_THRESHOLD", "only the dynamic threshold"},
		{"window without VAR_WIN", strings.Replace(config, "HAS_WIN 0", "HAS_WIN 1", 1), topo, flows, "config.txt", 0, "VAR_WIN", "missing with HAS_WIN 1: third.cc's default is 0 (a fixed window)"},
		{"NaN gain", strings.Replace(config, "EWMA_GAIN 0.00390625", "EWMA_GAIN NaN", 1), topo, flows, "config.txt", 5, "EWMA_GAIN", `"NaN" is not a number`},
		{"NaN error rate", config, strings.Replace(topo, "1000ns 0", "1000ns NaN", 1), flows, "topo.txt", 3, "error_rate", `"NaN": want a probability`},
		{"NaN ECN value", strings.Replace(config, "PMAX_MAP 2 100000000000 0.20", "PMAX_MAP 2 100000000000 NaN", 1), topo, flows, "config.txt", 17, "PMAX_MAP", "pair 1 (100000000000 NaN)"},
		{"link down too late", config + "LINK_DOWN 99999999999999999 2 3\n", topo, flows, "config.txt", 22, "LINK_DOWN", "after the latest time the lab takes (3600s)"},
		{"no flows", config, topo, "0\n", "flow.txt", 1, "flow count", "0: want 1..5000000"},
		{"stop too late", strings.Replace(config, "SIMULATOR_STOP_TIME 2.01", "SIMULATOR_STOP_TIME 200000", 1), topo, flows, "config.txt", 18, "SIMULATOR_STOP_TIME", "the lab runs at most 3600s"},
		{"payload too big", strings.Replace(config, "PACKET_PAYLOAD_SIZE 1000", "PACKET_PAYLOAD_SIZE 99999999999", 1), topo, flows, "config.txt", 14, "PACKET_PAYLOAD_SIZE", "want a whole number of bytes in 1..65536"},
		{"ack interval 0", config + "L2_ACK_INTERVAL 0\n", topo, flows, "config.txt", 22, "L2_ACK_INTERVAL", "with 0 the reference ignores every ACK"},
		{"pause time 0", config + "PAUSE_TIME 0\n", topo, flows, "config.txt", 22, "PAUSE_TIME", "only a time > 0 is modelled"},
		{"link down between unlinked nodes", config + "LINK_DOWN 5 0 3\n", topo, flows, "config.txt", 22, "LINK_DOWN", `"5 0 3": nodes 0 and 3 have no link between them`},
		{"stop before offset", strings.Replace(config, "SIMULATOR_STOP_TIME 2.01", "SIMULATOR_STOP_TIME 1", 1), topo, flows, "config.txt", 18, "SIMULATOR_STOP_TIME", "1 is not after"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FromFiles("t", File{"config.txt", []byte(tc.config)}, File{"topo.txt", []byte(tc.topo)}, File{"flow.txt", []byte(tc.flows)})
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v (%T), want an *ns3.Error", err, err)
			}
			if e.File != tc.file || e.Line != tc.line || e.Field != tc.field || !strings.Contains(e.Msg, tc.msg) {
				t.Fatalf("error %q: file %q line %d field %q, want %q line %d field %q and a message containing %q",
					err, e.File, e.Line, e.Field, tc.file, tc.line, tc.field, tc.msg)
			}
			if tc.line > 0 && !strings.HasPrefix(err.Error(), fmt.Sprintf("%s:%d: %s: ", tc.file, tc.line, tc.field)) {
				t.Fatalf("message %q does not start with file:line: field", err)
			}
		})
	}
}

// Every reference configuration the project keeps imports without an
// unknown key, and the algorithms' defaults equal the reference's run.py
// values the configurations were written with: the importer sets exactly
// the defaults.
func TestReferenceConfigsAreDefaults(t *testing.T) {
	for _, dir := range []string{"dcqcn", "hp", "timely", "dctcp"} {
		t.Run(dir, func(t *testing.T) {
			imp := importRef(t, dir)
			var doc struct {
				CC struct {
					Algorithm string             `json:"algorithm"`
					Params    map[string]float64 `json:"params"`
				} `json:"cc"`
			}
			if err := json.Unmarshal(imp.Scenario, &doc); err != nil {
				t.Fatal(err)
			}
			sc, err := scenarios.Parse(imp.Scenario)
			if err != nil {
				t.Fatal(err)
			}
			cfg, _, err := scenarios.Build(sc)
			if err != nil {
				t.Fatal(err)
			}
			a := cfg.Algos[0]
			defaults, errs := a.Algo.Resolve("", nil, 100e9)
			if len(errs) > 0 {
				t.Fatal(errs)
			}
			for k, v := range doc.CC.Params {
				if defaults[k] != v {
					t.Errorf("%s: %s = %v in the reference config, %v by default", doc.CC.Algorithm, k, v, defaults[k])
				}
			}
		})
	}
}

// importRef imports one of the reference's configurations kept with the
// engine's fidelity tests (the scenario is named for its folder).
func importRef(t *testing.T, dir string) *Import {
	t.Helper()
	imp, err := FromFiles(dir, exportRefFile(t, dir+"/config.txt"), exportRefFile(t, "topo_mpcc_fattree_pods2.txt"), exportRefFile(t, "flow_websearch_l30_10ms_s1.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if len(imp.Unknown) > 0 {
		t.Errorf("unknown keys %v", imp.Unknown)
	}
	return imp
}

// third.cc reads its config word by word: a key and its value separated by
// a tab (an aligned config) read as with a space.
func TestImportConfigTabs(t *testing.T) {
	tabbed := strings.NewReplacer("CC_MODE 1", "CC_MODE\t1", "RATE_AI 20Mb/s", "RATE_AI\t\t20Mb/s", "BUFFER_SIZE 32", "BUFFER_SIZE \t32").Replace(config)
	imp, err := FromFiles("t", File{"config.txt", []byte(tabbed)}, File{"topo.txt", []byte(topo)}, File{"flow.txt", []byte(flows)})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Parse(imp.Scenario)
	if err != nil {
		t.Fatal(err)
	}
	if sc.CC.Algorithm != "dcqcn" || sc.CC.Params["ai"] != 20 || sc.Switch.Buffer != 32<<20 {
		t.Errorf("algorithm %s, ai %v, buffer %d: want dcqcn, 20, 32 MiB", sc.CC.Algorithm, sc.CC.Params["ai"], sc.Switch.Buffer)
	}
}

// Events as third.cc makes them: ERROR_RATE_PER_LINK is the error rate of
// the links whose own error_rate is 0 (a link's own rate > 0 wins, larger
// or smaller), and LINK_DOWN takes a link down only at a time > 0 (`0 a b`
// is no link down, like `0 0 0`).
func TestImportEvents(t *testing.T) {
	lossyTopo := strings.Replace(topo, "1 2 100Gbps 0.001ms 0", "1 2 100Gbps 0.001ms 0.001", 1)
	type ev struct {
		link string
		loss float64
		up   bool
	}
	cases := []struct {
		name, extra string
		want        []ev
	}{
		{"per link rate, larger", "ERROR_RATE_PER_LINK 0.01\n", []ev{{"h0->s2", 0.01, true}, {"h1->s2", 0.001, true}, {"s2->s3", 0.01, true}}},
		{"per link rate, smaller", "ERROR_RATE_PER_LINK 0.0001\n", []ev{{"h0->s2", 0.0001, true}, {"h1->s2", 0.001, true}, {"s2->s3", 0.0001, true}}},
		{"no per link rate", "ERROR_RATE_PER_LINK 0.0000\n", []ev{{"h1->s2", 0.001, true}}},
		{"link down at 0", "LINK_DOWN 0 2 3\n", []ev{{"h1->s2", 0.001, true}}},
		{"link down", "LINK_DOWN 5 2 3\n", []ev{{"h1->s2", 0.001, true}, {"s2->s3", 0, false}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			imp, err := FromFiles("t", File{"config.txt", []byte(config + tc.extra)}, File{"topo.txt", []byte(lossyTopo)}, File{"flow.txt", []byte(flows)})
			if err != nil {
				t.Fatal(err)
			}
			sc, err := scenarios.Parse(imp.Scenario)
			if err != nil {
				t.Fatal(err)
			}
			var got []ev
			for _, e := range sc.Events {
				got = append(got, ev{e.Link, e.Loss, e.Kind == scenarios.EventLoss || e.Up})
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("events %v, want %v", got, tc.want)
			}
		})
	}
}

// third.cc reads the ECN maps only at the topology's link rates: map
// entries for other rates (run.py writes maps for every rate it knows) do
// not count, whatever their values.
func TestImportECNMapUnusedRates(t *testing.T) {
	c := strings.NewReplacer(
		"KMAX_MAP 2 100000000000 1600 400000000000 6400", "KMAX_MAP 3 10000000000 50 100000000000 1600 400000000000 6400",
		"KMIN_MAP 2 100000000000 400 400000000000 1600", "KMIN_MAP 3 10000000000 5 100000000000 400 400000000000 1600",
		"PMAX_MAP 2 100000000000 0.20 400000000000 0.20", "PMAX_MAP 3 10000000000 1 100000000000 0.20 400000000000 0.20").Replace(config)
	imp, err := FromFiles("t", File{"config.txt", []byte(c)}, File{"topo.txt", []byte(topo)}, File{"flow.txt", []byte(flows)})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Parse(imp.Scenario)
	if err != nil {
		t.Fatal(err)
	}
	e := sc.Switch.ECN
	if e == nil || e.Kmin != 400_000 || e.Kmax != 1_600_000 || e.Pmax != 0.2 || e.Scale != scenarios.ScaleLinkRate {
		t.Errorf("ecn %+v, want kmin 400 KB, kmax 1600 KB at 100 Gbps, pmax 0.2, scaled with the link rate", e)
	}
}

// L2_ACK_INTERVAL does not thin the ACKs the way its name says: rdma-hw.cc
// sets the receiver's milestone back to the interval on every packet
// (ReceiveUdp: m_milestone_rx = m_ack_interval), so every packet past the
// interval's first bytes is acknowledged. The import acknowledges every
// packet; the export refuses ackEvery > 1, which ns-3 cannot express.
func TestAckInterval(t *testing.T) {
	imp, err := FromFiles("t", File{"config.txt", []byte(config + "L2_ACK_INTERVAL 4000\nL2_CHUNK_SIZE 4000\n")}, File{"topo.txt", []byte(topo)}, File{"flow.txt", []byte(flows)})
	if err != nil {
		t.Fatal(err)
	}
	sc, cfg := buildDoc(t, imp.Scenario)
	if sc.Host.AckEvery != 1 || cfg.Host.AckEvery != 1 {
		t.Errorf("L2_ACK_INTERVAL 4000: ackEvery %d, want 1", sc.Host.AckEvery)
	}
	every4 := strings.Replace(string(imp.Scenario), `"ackEvery": 1`, `"ackEvery": 4`, 1)
	sc, cfg = buildDoc(t, []byte(every4))
	_, err = Export(sc, cfg)
	var ue *UnsupportedError
	if !errors.As(err, &ue) || len(ue.Features) != 1 || !strings.HasPrefix(ue.Features[0], "host.ackEvery 4") {
		t.Errorf("ackEvery 4: %v, want it refused", err)
	}
}

// Keys third.cc reads without effect on the experiment (DATA_RATE and
// LINK_DELAY are shadowed by each link's own; PAUSE_TIME only marks a frame
// as a PAUSE) are ignored with a reason, not reported as unknown.
func TestImportKeysThirdCCIgnores(t *testing.T) {
	extra := "DATA_RATE 100Gb/s\nLINK_DELAY 0.001ms\nPAUSE_TIME 5\n"
	imp, err := FromFiles("t", File{"config.txt", []byte(strings.Replace(config, "SOMETHING_NEW 7\n", extra, 1))}, File{"topo.txt", []byte(topo)}, File{"flow.txt", []byte(flows)})
	if err != nil {
		t.Fatal(err)
	}
	if len(imp.Unknown) > 0 {
		t.Errorf("unknown keys %v, want none", imp.Unknown)
	}
	ignored := strings.Join(imp.Ignored, "; ")
	for _, k := range []string{"DATA_RATE: ", "LINK_DELAY: ", "PAUSE_TIME: "} {
		if !strings.Contains(ignored, k) {
			t.Errorf("ignored keys %q lack %q", ignored, k)
		}
	}
}

// A config without SIMULATOR_STOP_TIME or BUFFER_SIZE runs with third.cc's
// values: it stops at 3.01 s (a duration of 1.01 s after the flows' offset)
// with 16 MiB switch buffers.
func TestImportThirdCCDefaults(t *testing.T) {
	c := strings.NewReplacer("SIMULATOR_STOP_TIME 2.01\n", "", "BUFFER_SIZE 32\n", "").Replace(config)
	imp, err := FromFiles("t", File{"config.txt", []byte(c)}, File{"topo.txt", []byte(topo)}, File{"flow.txt", []byte(flows)})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Parse(imp.Scenario)
	if err != nil {
		t.Fatal(err)
	}
	if sc.Duration != 1010*sim.Millisecond || sc.Switch.Buffer != 16<<20 {
		t.Errorf("duration %s, buffer %d B: want 1.01 s and 16 MiB", scenarios.FormatTime(sc.Duration), sc.Switch.Buffer)
	}
}

// third.cc tests GLOBAL_T == 1: 1 is the global BDP, 0 and any other value
// the path's.
func TestImportGlobalT(t *testing.T) {
	for v, want := range map[string]string{"1": scenarios.BDPGlobal, "0": scenarios.BDPPath, "2": scenarios.BDPPath} {
		imp, err := FromFiles("t", File{"config.txt", []byte(config + "GLOBAL_T " + v + "\n")}, File{"topo.txt", []byte(topo)}, File{"flow.txt", []byte(flows)})
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Host struct {
				BDP string `json:"bdp"`
			} `json:"host"`
		}
		if err := json.Unmarshal(imp.Scenario, &doc); err != nil {
			t.Fatal(err)
		}
		if doc.Host.BDP != want {
			t.Errorf("GLOBAL_T %s: host.bdp %q, want %q", v, doc.Host.BDP, want)
		}
	}
}

// TestImportUnsetKeys: an algorithm key the config leaves out takes the
// lab's (run.py's) default, and the import says so, with third.cc's own
// value, for every key where the two differ; a config that sets them all
// (the test config, the reference's) gets no such line.
func TestImportUnsetKeys(t *testing.T) {
	drop := map[string]bool{"ACK_HIGH_PRIO": true, "EWMA_GAIN": true, "RATE_AI": true, "RATE_DECREASE_INTERVAL": true, "MIN_RATE": true}
	var kept []string
	for _, line := range strings.Split(config, "\n") {
		key, _, _ := strings.Cut(line, " ")
		if !drop[key] {
			kept = append(kept, line)
		}
	}
	imp, err := FromFiles("t", File{"config.txt", []byte(strings.Join(kept, "\n"))}, File{"topo.txt", []byte(topo)}, File{"flow.txt", []byte(flows)})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		// RATE_AI: third.cc has no default at all
		"RATE_AI: not set: the lab uses ai 20 Mbps at 100 Gbps, scaled with the host link rate (run.py's value); third.cc has no default and needs the key",
		"MIN_RATE: not set: the lab uses minRate 1000 Mbps at 100 Gbps, scaled with the host link rate (run.py's value), where third.cc's built-in value is 100 Mbps; set it to run the same experiment",
		// third.cc's `double ewma_gain = 1 / 16` is 0
		"EWMA_GAIN: not set: the lab uses g 0.00390625 (run.py's value), where third.cc's built-in value is 0; set it to run the same experiment",
		"ACK_HIGH_PRIO: not set: the lab uses ackHighPriority 1 (run.py's value), where third.cc's built-in value is 0; set it to run the same experiment",
		// RATE_DECREASE_INTERVAL: 4 µs in both, so no line
	}
	if got := strings.Join(imp.Unset, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("unset keys:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	warned := strings.Join(imp.Warnings(), "\n")
	if !strings.Contains(warned, "config.txt: ACK_HIGH_PRIO: not set") {
		t.Errorf("warnings do not carry the unset keys with the file's name:\n%s", warned)
	}

	full, err := FromFiles("t", File{"config.txt", []byte(config)}, File{"topo.txt", []byte(topo)}, File{"flow.txt", []byte(flows)})
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Unset) != 0 {
		t.Errorf("a config setting every key: unset %v", full.Unset)
	}
	for _, dir := range []string{"dcqcn", "hp", "timely", "dctcp"} {
		if u := importRef(t, dir).Unset; len(u) != 0 {
			t.Errorf("reference %s: unset %v", dir, u)
		}
	}
}

// TestImportIncastPort: a flow file's dport 200 (fct_analysis.py's incast
// flows) imports as the flow's tag "incast" and exports back as 200; 100
// is a background flow; another port is named among the ignored keys.
func TestImportIncastPort(t *testing.T) {
	const fl = `3
0 1 3 200 1000 2.000000001
1 0 3 100 5000 2.000001
0 1 3 300 7000 2.000002
`
	imp, err := FromFiles("t", File{"config.txt", []byte(config)}, File{"topo.txt", []byte(topo)}, File{"flow.txt", []byte(fl)})
	if err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Parse(imp.Scenario)
	if err != nil {
		t.Fatal(err)
	}
	var tags []string
	for _, f := range sc.Workload[0].Flows {
		tags = append(tags, f.Tag)
	}
	if strings.Join(tags, ",") != "incast,," {
		t.Errorf("tags %q, want [incast, none, none]", tags)
	}
	if ig := strings.Join(imp.Ignored, "; "); !strings.Contains(ig, "flow.txt: dport: 1 flows with a port other than 100") {
		t.Errorf("ignored %q: want the port-300 flow named", ig)
	}
	cfg, _, err := scenarios.Build(sc)
	if err != nil {
		t.Fatal(err)
	}
	files, err := Export(sc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var ports []string
	for _, line := range strings.Split(strings.TrimSpace(string(files.Flows)), "\n")[1:] {
		ports = append(ports, strings.Fields(line)[3])
	}
	if strings.Join(ports, ",") != "200,100,100" {
		t.Errorf("exported dports %v, want 200, 100, 100:\n%s", ports, files.Flows)
	}
}

// TestImportUnsortedFlows: a flow file not in start order imports (the lab
// starts each flow at its own time) with a note naming the first line out
// of order, since HPCC's simulator reads the flows in file order.
func TestImportUnsortedFlows(t *testing.T) {
	const fl = `3
0 1 3 100 1000 2.000002
1 0 3 100 5000 2.000001
0 1 3 100 7000 2.000000001
`
	imp, err := FromFiles("t", File{"config.txt", []byte(config)}, File{"topo.txt", []byte(topo)}, File{"flow.txt", []byte(fl)})
	if err != nil {
		t.Fatal(err)
	}
	want := "flow.txt:3: start_s: flow 1 starts before flow 0: the file is not in start order"
	if len(imp.Notes) != 1 || !strings.HasPrefix(imp.Notes[0], want) {
		t.Errorf("notes %q, want one starting %q", imp.Notes, want)
	}
	if w := strings.Join(imp.Warnings(), "\n"); !strings.Contains(w, want) {
		t.Errorf("warnings lack the note:\n%s", w)
	}
	sorted, err := FromFiles("t", File{"config.txt", []byte(config)}, File{"topo.txt", []byte(topo)}, File{"flow.txt", []byte(flows)})
	if err != nil {
		t.Fatal(err)
	}
	if len(sorted.Notes) != 0 {
		t.Errorf("a sorted flow file: notes %q", sorted.Notes)
	}
	if n := importRef(t, "dcqcn").Notes; len(n) != 0 {
		t.Errorf("the reference's flow file: notes %q", n)
	}
}
