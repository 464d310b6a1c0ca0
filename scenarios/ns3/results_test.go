package ns3

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"cclab/scenarios"
	"cclab/sim"
)

// Two hosts on one switch, 100 Gbps and 1 µs links; every number of
// fct.txt worked out by hand:
//   - addresses: h0 is 0x0b000001, h1 0x0b000101;
//   - base RTT = 2 × (1000 + 1000) ns + 2 hops × 1000 B × 8 / 100 Gbps (80 ns)
//     = 4160 ns;
//   - 2500 B is 3 packets: (2500 + 3 × 48) B × 8 / 100 Gbps = 211.52 → 211 ns,
//     standalone 4371 ns; 1000 B: (1000 + 48) × 8 / 100 = 83.84 → 83, 4243 ns;
//   - starts are written as the reference reads its flow file: the double
//     nearest 2.000005 is 2.00000499999999981…, truncated to 2000004999 ns,
//     that of 2.000006 (2.00000599999999995…) to 2000005999 ns; that of
//     2.000007 is above it (2.00000700000000009…): 2000007000 ns;
//   - source ports count per (src, dst) pair from 10000 in start order;
//   - lines come in finish order; flow 3 never finished and has no line.
func TestWriteFCTByHand(t *testing.T) {
	cfg := &sim.Config{
		Nodes: []sim.NodeSpec{{Name: "h0", Kind: sim.Host}, {Name: "h1", Kind: sim.Host}, {Name: "sw", Kind: sim.Switch}},
		Links: []sim.LinkSpec{{A: 0, B: 2, Rate: 100e9, Delay: sim.Microsecond}, {A: 1, B: 2, Rate: 100e9, Delay: sim.Microsecond}},
		Host:  sim.DefaultHost(),
	}
	flows := []sim.FlowResult{
		{ID: 0, Src: "h0", Dst: "h1", Size: 2500, Start: 5 * sim.Microsecond, Started: true, Finished: true, FCT: 7500*sim.Nanosecond + 400, Finish: 12500*sim.Nanosecond + 400},
		{ID: 1, Src: "h0", Dst: "h1", Size: 1000, Start: 6 * sim.Microsecond, Started: true, Finished: true, FCT: 4300 * sim.Nanosecond, Finish: 10300 * sim.Nanosecond},
		{ID: 2, Src: "h1", Dst: "h0", Size: 1000, Start: 7 * sim.Microsecond, Started: true, Finished: true, FCT: 9000 * sim.Nanosecond, Finish: 16 * sim.Microsecond, Tag: "incast"},
		{ID: 3, Src: "h1", Dst: "h0", Size: 1000, Start: 8 * sim.Microsecond, Started: true},
	}
	n, err := NewNumbering(nil, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := n.WriteFCT(&b, flows); err != nil {
		t.Fatal(err)
	}
	want := "0b000001 0b000101 10001 100 1000 2000005999 4300 4243\n" +
		"0b000001 0b000101 10000 100 2500 2000004999 7500 4371\n" +
		"0b000101 0b000001 10000 200 1000 2000007000 9000 4243\n"
	if b.String() != want {
		t.Errorf("fct.txt:\n%s\nwant:\n%s", b.String(), want)
	}
}

// IP numbers nodes as the reference: 11.x.y.1 with id = x·256 + y.
func TestIP(t *testing.T) {
	for _, c := range []struct {
		id   int
		want uint32
	}{{0, 0x0b000001}, {15, 0x0b000f01}, {255, 0x0b00ff01}, {256, 0x0b010001}, {300, 0x0b012c01}} {
		if got := IP(c.id); got != c.want || int(got>>8)&0xffff != c.id {
			t.Errorf("IP(%d) = %08x, want %08x", c.id, got, c.want)
		}
	}
}

// exportRefDir is the reference's 16-host WebSearch replay.
const exportRefDir = "../../sim/testdata/reference/hpcc-ns3-websearch16"

func exportRefFile(t *testing.T, name string) File {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(exportRefDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return File{Name: name, Data: data}
}

// exportRefImport imports one algorithm's reference configuration and builds it.
func exportRefImport(t *testing.T, algo string) (*scenarios.Scenario, *sim.Config) {
	t.Helper()
	sc, err := scenarios.Parse(importRef(t, algo).Scenario)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := scenarios.Build(sc)
	if err != nil {
		t.Fatal(err)
	}
	return sc, cfg
}

// fctLine is a line of fct.txt as HPCC's analysis/fct_analysis.py reads it
// (awk fields $4 dport, $5 size, $6 start, $7 fct, $8 standalone fct), with
// the addresses as third.cc prints them.
type fctLine struct {
	sip, dip                     uint32
	sport, dport                 int
	size, start, fct, standalone uint64
}

var hex8 = regexp.MustCompile(`^[0-9a-f]{8}$`)

func parseFCT(t *testing.T, name string, data []byte) []fctLine {
	t.Helper()
	var out []fctLine
	for i, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		fs := strings.Split(line, " ")
		if len(fs) != 8 {
			t.Fatalf("%s:%d: %d fields, want 8: %q", name, i+1, len(fs), line)
		}
		var l fctLine
		for k, f := range fs {
			var err error
			var v uint64
			if k < 2 {
				if !hex8.MatchString(f) {
					t.Fatalf("%s:%d: field %d %q is not 8 hex digits", name, i+1, k+1, f)
				}
				v, err = strconv.ParseUint(f, 16, 32)
			} else {
				v, err = strconv.ParseUint(f, 10, 64)
			}
			if err != nil {
				t.Fatalf("%s:%d: field %d %q: %v", name, i+1, k+1, f, err)
			}
			switch k {
			case 0:
				l.sip = uint32(v)
			case 1:
				l.dip = uint32(v)
			case 2:
				l.sport = int(v)
			case 3:
				l.dport = int(v)
			case 4:
				l.size = v
			case 5:
				l.start = v
			case 6:
				l.fct = v
			case 7:
				l.standalone = v
			}
		}
		out = append(out, l)
	}
	return out
}

// Fed the reference's own results (its fct file as flow results of the
// imported scenario), WriteFCT writes the reference's fct file back, line
// for line: the same addresses, source ports, destination ports, sizes,
// start times, FCTs and standalone FCTs, parsed the way fct_analysis.py
// parses it. Lines finishing at the same ns are compared in sorted order.
func TestWriteFCTReproducesReference(t *testing.T) {
	for _, algo := range []string{"dcqcn", "hp", "timely", "dctcp"} {
		t.Run(algo, func(t *testing.T) {
			sc, cfg := exportRefImport(t, algo)
			ref := exportRefFile(t, algo+"/fct_"+algo+".txt")
			want := parseFCT(t, ref.Name, ref.Data)
			n, err := NewNumbering(sc, cfg)
			if err != nil {
				t.Fatal(err)
			}
			// the reference's lines as flow results: flow i is line i of the
			// flow file, found by (src, dst, size, start)
			type key struct {
				src, dst string
				size     int64
				start    sim.Time
			}
			ids := map[key][]int{}
			for i, f := range cfg.Flows {
				k := key{cfg.Nodes[f.Src].Name, cfg.Nodes[f.Dst].Name, f.Size, sim.Time(StartNs(f.Start))}
				ids[k] = append(ids[k], i)
			}
			res := make([]sim.FlowResult, len(cfg.Flows))
			for i, f := range cfg.Flows {
				res[i] = sim.FlowResult{ID: i, Src: cfg.Nodes[f.Src].Name, Dst: cfg.Nodes[f.Dst].Name, Size: f.Size, Start: f.Start, Started: true}
			}
			for _, l := range want {
				k := key{"h" + strconv.Itoa(int(l.sip>>8)&0xffff), "h" + strconv.Itoa(int(l.dip>>8)&0xffff), int64(l.size), sim.Time(l.start)}
				if len(ids[k]) == 0 {
					t.Fatalf("reference line %+v: no such flow in the flow file", l)
				}
				i := ids[k][0]
				ids[k] = ids[k][1:]
				res[i].Finished = true
				res[i].FCT = sim.Time(l.fct) * sim.Nanosecond
				// the reference's finish: its start as it rounds it, plus its FCT
				res[i].Finish = sim.Time(l.start+l.fct) * sim.Nanosecond
			}
			var b bytes.Buffer
			if err := n.WriteFCT(&b, res); err != nil {
				t.Fatal(err)
			}
			got := parseFCT(t, "ours", b.Bytes())
			if len(got) != len(want) {
				t.Fatalf("%d lines, the reference has %d", len(got), len(want))
			}
			less := func(ls []fctLine) func(a, b int) bool {
				return func(a, b int) bool {
					x, y := ls[a], ls[b]
					if x.start+x.fct != y.start+y.fct {
						return x.start+x.fct < y.start+y.fct
					}
					if x.sip != y.sip {
						return x.sip < y.sip
					}
					return x.sport < y.sport
				}
			}
			sort.SliceStable(got, less(got))
			sort.SliceStable(want, less(want))
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("line %d: %+v, the reference has %+v", i+1, got[i], want[i])
				}
			}
		})
	}
}

// pfc.txt and the queue-length file on a custom topology that lists its
// switch first: ids follow the list (s0 is 0, h1 1, h2 2), interface
// indexes each node's links in link order (the switch's link to h1 is its
// 1, to h2 its 2; each host's only link is its 1).
func TestWritePFCAndQlenByHand(t *testing.T) {
	sc := &scenarios.Scenario{Topology: scenarios.Topology{Kind: scenarios.KindCustom, Custom: &scenarios.Custom{
		Nodes: []scenarios.CustomNode{{ID: "s0", Type: scenarios.NodeSwitch}, {ID: "h1", Type: scenarios.NodeHost}, {ID: "h2", Type: scenarios.NodeHost}},
	}}}
	// the engine's order: hosts first
	cfg := &sim.Config{
		Nodes: []sim.NodeSpec{{Name: "h1", Kind: sim.Host}, {Name: "h2", Kind: sim.Host}, {Name: "s0", Kind: sim.Switch}},
		Links: []sim.LinkSpec{{A: 0, B: 2, Rate: 100e9, Delay: sim.Microsecond}, {A: 1, B: 2, Rate: 100e9, Delay: sim.Microsecond}},
		Host:  sim.DefaultHost(),
	}
	n, err := NewNumbering(sc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	// ports: 0 h1→s0, 1 s0→h1, 2 h2→s0, 3 s0→h2
	var b bytes.Buffer
	err = n.WritePFC(&b, []sim.PFCEvent{
		{At: 1 * sim.Microsecond, Port: 0, Pause: true},     // h1 paused by s0
		{At: 2*sim.Microsecond + 500, Port: 3, Pause: true}, // s0's port to h2 paused by h2
		{At: 3 * sim.Microsecond, Port: 0, Pause: false},    // h1 resumed
	})
	if err != nil {
		t.Fatal(err)
	}
	want := "2000001000 1 0 1 1\n2000002000 0 1 2 1\n2000003000 1 0 1 0\n"
	if b.String() != want {
		t.Errorf("pfc.txt:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	samples := [][]int64{nil, {7, 0, 3}, nil, {10}}
	if err := n.WriteQlen(&b, 900*sim.Nanosecond, samples); err != nil {
		t.Fatal(err)
	}
	want = "time: 2000000900\n0 1 7 0 3\n0 2 10\n"
	if b.String() != want {
		t.Errorf("qlen:\n%s\nwant:\n%s", b.String(), want)
	}
}

// A real run of the reference's DCQCN experiment (imported) writes an
// fct.txt that fct_analysis.py's reading parses as it parses the
// reference's: every flow finished, and each line has the reference's
// addresses, ports, size, start and standalone FCT; only the FCTs are
// cclab's own (within 25% of the reference's for nine flows in ten).
func TestRunFCTMatchesReferenceFields(t *testing.T) {
	sc, cfg := exportRefImport(t, "dcqcn")
	s, err := sim.New(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	n, err := NewNumbering(sc, cfg)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := n.WriteFCT(&b, s.Result().Flows); err != nil {
		t.Fatal(err)
	}
	got := parseFCT(t, "ours", b.Bytes())
	ref := exportRefFile(t, "dcqcn/fct_dcqcn.txt")
	want := parseFCT(t, ref.Name, ref.Data)
	if len(got) != len(want) {
		t.Fatalf("%d lines, the reference has %d", len(got), len(want))
	}
	type key struct {
		sip, dip     uint32
		sport, dport int
	}
	refBy := map[key]fctLine{}
	for _, l := range want {
		refBy[key{l.sip, l.dip, l.sport, l.dport}] = l
	}
	close := 0
	for _, l := range got {
		r, ok := refBy[key{l.sip, l.dip, l.sport, l.dport}]
		if !ok || r.size != l.size || r.start != l.start || r.standalone != l.standalone {
			t.Errorf("line %+v: the reference's line for the flow is %+v", l, r)
			continue
		}
		if ratio := float64(l.fct) / float64(r.fct); ratio > 0.8 && ratio < 1.25 {
			close++
		}
	}
	if close < len(got)*9/10 {
		t.Errorf("%d of %d FCTs within 25%% of the reference's", close, len(got))
	}
}
