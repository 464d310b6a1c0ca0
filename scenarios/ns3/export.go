package ns3

// Export: a cclab scenario written as the input files of HPCC's ns-3
// simulator (config.txt, topology, flow and trace files), for the features
// that simulator has. A feature it lacks makes the export fail, naming it:
// the files would run another experiment.

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"sort"
	"strconv"
	"strings"

	"cclab/scenarios"
	"cclab/sim"
)

// Exported file names, as config.txt names them (paths relative to the
// folder ns-3 runs in).
const (
	ConfigFile   = "config.txt"
	TopologyFile = "topology.txt"
	FlowFile     = "flow.txt"
	TraceFile    = "trace.txt"
)

// Files is a scenario as ns-3 input files.
type Files struct {
	Config, Topology, Flows, Trace []byte
	// Warnings say what the files make explicit that the scenario left to
	// cclab (generated flows listed one by one, no duration) and what ns-3
	// does its own way without changing the experiment.
	Warnings []string
}

// UnsupportedError lists, by name, the features of a scenario that HPCC's
// simulator cannot express.
type UnsupportedError struct {
	Features []string
}

func (e *UnsupportedError) Error() string {
	return "HPCC's ns-3 simulator cannot express: " + strings.Join(e.Features, "; ")
}

// ccModeOf is the reverse of ccModes.
var ccModeOf = map[string]int{"dcqcn": 1, "hpcc": 3, "timely": 7, "dctcp": 8}

// exportedParams are the parameters every algorithm's config keys carry
// besides paramKeys: the window (HAS_WIN and VAR_WIN).
var exportedParams = map[string]bool{"window": true}

// Unsupported returns the features of a built scenario that HPCC's
// simulator cannot express, each named by its scenario field; none means
// Export writes the same experiment.
func Unsupported(sc *scenarios.Scenario, cfg *sim.Config) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }

	// the algorithm
	// the engine keeps one entry per algorithm choice and host line rate:
	// ns-3 has one CC_MODE and one value per key, for every host
	for _, a := range cfg.Algos[min(1, len(cfg.Algos)):] {
		if a.Algo.Name != cfg.Algos[0].Algo.Name {
			add("cc (flows with different algorithms: ns-3 runs one CC_MODE)")
			break
		}
		if !maps.Equal(a.Params, cfg.Algos[0].Params) {
			add("cc.params (flows with different parameters, by their cc or their host's line rate: ns-3 has one value per key)")
			break
		}
	}
	if len(cfg.Algos) > 0 {
		a := cfg.Algos[0]
		name := a.Algo.Name
		if _, ok := ccModeOf[name]; !ok {
			add("cc.algorithm %s (ns-3 has dcqcn, hpcc, timely and dctcp)", name)
		} else {
			defaults, _ := a.Algo.Resolve("", nil, hostRate(cfg))
			keyed := map[string]bool{}
			for _, pk := range paramKeys[name] {
				keyed[pk.param] = true
			}
			for _, p := range a.Algo.Param {
				if !keyed[p.Name] && !exportedParams[p.Name] && a.Params[p.Name] != defaults[p.Name] {
					add("cc.params.%s = %g (ns-3 has no key for it; only its default %g)", p.Name, a.Params[p.Name], defaults[p.Name])
				}
			}
			if name == "hpcc" && !cfg.Switch.INT {
				add("switch.int off (ns-3's HPCC always has INT)")
			}
		}
	}

	// switches
	sw := cfg.Switch
	if !sw.PFC {
		add("switch.pfc off (ns-3's fabric is lossless with PFC)")
	}
	if sw.AckHigh {
		add("switch.ackClass high (ns-3's switches queue ACKs with their data)")
	}
	if sw.DataClasses > 1 {
		add("switch.dataClasses %d (ns-3 sends all data in one priority group)", sw.DataClasses)
	}
	if sw.Spray {
		add("switch.routing spray (ns-3 routes per flow, ECMP)")
	}
	if sw.Buffer%(1<<20) != 0 {
		add("switch.buffer %d B (BUFFER_SIZE is a whole number of MiB)", sw.Buffer)
	}
	if sw.ECN.Enabled {
		// third.cc reads KMIN_MAP and KMAX_MAP values as whole KB (uint32_t):
		// a fraction stops its config reader
		seen := map[int64]bool{}
		for _, l := range cfg.Links {
			if seen[l.Rate] {
				continue
			}
			seen[l.Rate] = true
			for _, k := range []struct {
				name string
				v    int64
			}{{"kmin", sw.ECN.Kmin}, {"kmax", sw.ECN.Kmax}} {
				if kb := ecnKB(sw.ECN, k.v, l.Rate); kb != math.Trunc(kb) {
					add("switch.ecn.%s %g KB at %s (KMIN_MAP and KMAX_MAP hold whole KB)", k.name, kb, scenarios.FormatRate(l.Rate))
				}
			}
		}
	}
	def := sim.DefaultSwitch()
	if sw.Reserve != def.Reserve || sw.ResumeOffset != def.ResumeOffset || (sw.HeadroomFactor != def.HeadroomFactor && sw.HeadroomFactor != 0) {
		add("switch PFC reserve, resume offset or headroom factor (ns-3 fixes them)")
	}

	// hosts
	h, dh := cfg.Host, sim.DefaultHost()
	if h.Header != dh.Header || h.IdealHeader != dh.IdealHeader || h.Ack != dh.Ack || h.Nack != dh.Nack || h.AckHeader != dh.AckHeader {
		add("host header, ACK or NACK sizes (ns-3's are fixed)")
	}
	if h.AckEvery > 1 {
		add("host.ackEvery %d (ns-3 acknowledges every packet once a flow has L2_ACK_INTERVAL bytes: rdma-hw.cc resets the milestone on every packet)", h.AckEvery)
	}
	if h.CNPInterval != 0 {
		add("host.cnpInterval (ns-3 flags a CNP on every marked packet's ACK)")
	}
	if h.NackInterval != dh.NackInterval {
		add("host.nackInterval (ns-3's is 500 µs)")
	}
	if sc != nil && !sc.Host.RTOAuto && sc.Host.RTO != 0 {
		add("host.rto (ns-3 has no retransmission timer)")
	}

	// events
	downs := 0
	for _, e := range cfg.Events {
		switch e.Kind {
		case sim.EventParams:
			add("events: a parameter change at %s (ns-3 has no scripted changes)", scenarios.FormatTime(e.At))
		case sim.EventLinkUp:
			add("events: link %s up at %s (ns-3 takes a link down only)", e.Port, scenarios.FormatTime(e.At))
		case sim.EventLinkDown:
			downs++
			if e.At == 0 {
				add("events: link %s down at 0 s (third.cc takes LINK_DOWN only at a time > 0)", e.Port)
			}
			if downs == 2 {
				add("events: more than one link down (ns-3's LINK_DOWN takes one)")
			}
		case sim.EventLoss:
			if e.At != 0 {
				add("events: loss on %s at %s (ns-3's error rate is set at the start)", e.Port, scenarios.FormatTime(e.At))
			}
		}
	}

	// flows
	for i, f := range cfg.Flows {
		if f.Size > math.MaxUint32 && !endlessFlow(cfg, f) {
			add("workload: flow %d of %d B (third.cc reads a flow's size as a uint32_t, at most %d B, and the flow could send more before the run ends)", i, f.Size, uint32(math.MaxUint32))
			break
		}
	}
	for i, f := range cfg.Flows {
		if f.After >= 0 {
			add("workload: flow %d waits for other flows to finish (alltoall iterations; a flow file has fixed starts)", i)
			break
		}
	}
	return out
}

// endlessFlow says whether flow f cannot send MaxUint32 bytes (the most a
// flow file's size can say: third.cc reads a uint32_t) at its host's line
// rate before the run ends: written with that size, it runs the same.
func endlessFlow(cfg *sim.Config, f sim.FlowSpec) bool {
	if cfg.Duration <= 0 {
		return false
	}
	for _, l := range cfg.Links {
		if l.A == f.Src || l.B == f.Src {
			need := float64(math.MaxUint32) * 8 / float64(l.Rate) * float64(sim.Second)
			return float64(f.Start)+need >= float64(cfg.Duration)
		}
	}
	return false
}

// ecnKB is threshold k (bytes at the reference rate) at a port of rate r,
// in KB as the ECN maps write it.
func ecnKB(e sim.ECNConfig, k, r int64) float64 {
	v := float64(k)
	if e.ScaleWithRate && e.RefRate > 0 {
		v = v * float64(r) / float64(e.RefRate)
	}
	return v / 1000
}

// hostRate is the first host link's rate (the NIC rate, as the engine and
// third.cc take it).
func hostRate(cfg *sim.Config) int64 {
	for _, l := range cfg.Links {
		if cfg.Nodes[l.A].Kind == sim.Host || cfg.Nodes[l.B].Kind == sim.Host {
			return l.Rate
		}
	}
	return 0
}

// Export writes a built scenario as ns-3 input files, or fails with an
// *UnsupportedError naming every feature ns-3 cannot express.
func Export(sc *scenarios.Scenario, cfg *sim.Config) (*Files, error) {
	if u := Unsupported(sc, cfg); len(u) > 0 {
		return nil, &UnsupportedError{Features: u}
	}
	n, err := NewNumbering(sc, cfg)
	if err != nil {
		return nil, err
	}
	files := &Files{Trace: []byte("0\n")}
	warn := func(format string, args ...any) {
		files.Warnings = append(files.Warnings, fmt.Sprintf(format, args...))
	}
	if sc != nil {
		for i, w := range sc.Workload {
			if w.Kind != scenarios.KindFlows {
				warn("workload[%d] (%s): the flow file lists the flows it generated with seed %d", i, w.Kind, cfg.Seed)
			}
		}
	}
	portIndex := map[string]int{}
	for i, p := range sim.PortNames(cfg.Nodes, cfg.Links) {
		portIndex[p] = i
	}

	// topology: nodes by ns-3 id, links in the run's order
	loss := make([]float64, len(cfg.Links))
	linkDown := "0 0 0"
	for _, e := range cfg.Events {
		pid, ok := portIndex[e.Port]
		if !ok {
			return nil, fmt.Errorf("events: %q is not a port of the run", e.Port)
		}
		l := cfg.Links[pid/2]
		switch e.Kind {
		case sim.EventLoss:
			loss[pid/2] = e.Loss
			warn("events: loss %g on %s is the link's error rate in the topology file; cclab arms its retransmission timer in lossy runs, ns-3 has none", e.Loss, e.Port)
		case sim.EventLinkDown:
			if e.At%sim.Microsecond != 0 {
				return nil, &UnsupportedError{Features: []string{fmt.Sprintf("events: link down at %s (LINK_DOWN is in whole µs)", scenarios.FormatTime(e.At))}}
			}
			linkDown = fmt.Sprintf("%d %d %d", e.At/sim.Microsecond, n.ID[l.A], n.ID[l.B])
		}
	}
	var topo bytes.Buffer
	var switches []int
	for i := range cfg.Nodes {
		if n.Switch[i] {
			switches = append(switches, n.ID[i])
		}
	}
	sort.Ints(switches)
	fmt.Fprintf(&topo, "%d %d %d\n", len(cfg.Nodes), len(switches), len(cfg.Links))
	for i, id := range switches {
		if i > 0 {
			topo.WriteByte(' ')
		}
		topo.WriteString(strconv.Itoa(id))
	}
	topo.WriteByte('\n')
	rates := map[int64]bool{}
	for i, l := range cfg.Links {
		rates[l.Rate] = true
		fmt.Fprintf(&topo, "%d %d %s %s %s\n", n.ID[l.A], n.ID[l.B], rateText(l.Rate), delayText(l.Delay), strconv.FormatFloat(loss[i], 'f', -1, 64))
	}
	files.Topology = topo.Bytes()

	// flows, in start order (the order third.cc needs)
	order := make([]int, len(cfg.Flows))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return cfg.Flows[order[a]].Start < cfg.Flows[order[b]].Start })
	var fl bytes.Buffer
	fmt.Fprintf(&fl, "%d\n", len(cfg.Flows))
	for _, i := range order {
		f := cfg.Flows[i]
		dport := DPort
		if f.Tag == scenarios.KindIncast {
			dport = DPortIncast
		}
		size := f.Size
		if size > math.MaxUint32 {
			size = math.MaxUint32 // endlessFlow: it cannot finish either way
			warn("workload: flow %d of %d B is written as %d B, the most a flow file holds; at line rate it could not send more before the run ends", i, f.Size, size)
		}
		fmt.Fprintf(&fl, "%d %d 3 %d %d %s\n", n.ID[f.Src], n.ID[f.Dst], dport, size, StartSeconds(f.Start))
	}
	files.Flows = fl.Bytes()

	// config
	a := cfg.Algos[0]
	name := a.Algo.Name
	duration := cfg.Duration
	if duration == 0 {
		duration = sim.MaxDuration
		warn("duration: none (until every flow finishes); SIMULATOR_STOP_TIME is cclab's cap, %s after the flows' offset", scenarios.FormatTime(sim.MaxDuration))
	}
	var c bytes.Buffer
	kv := func(k string, v any) { fmt.Fprintf(&c, "%s %v\n", k, v) }
	gap := func() { c.WriteByte('\n') }
	kv("ENABLE_QCN", b2i(cfg.Switch.ECN.Enabled))
	kv("USE_DYNAMIC_PFC_THRESHOLD", 1)
	gap()
	kv("PACKET_PAYLOAD_SIZE", cfg.Host.MTU)
	gap()
	kv("TOPOLOGY_FILE", TopologyFile)
	kv("FLOW_FILE", FlowFile)
	kv("TRACE_FILE", TraceFile)
	kv("TRACE_OUTPUT_FILE", "mix.tr")
	kv("FCT_OUTPUT_FILE", "fct.txt")
	kv("PFC_OUTPUT_FILE", "pfc.txt")
	gap()
	kv("SIMULATOR_STOP_TIME", StartSeconds(duration))
	gap()
	kv("CC_MODE", ccModeOf[name])
	for _, pk := range paramKeys[name] {
		if pk.key == "ACK_HIGH_PRIO" {
			continue // below, with the other host keys
		}
		v := a.Params[pk.param]
		switch pk.kind {
		case "rate":
			kv(pk.key, strconv.FormatFloat(v, 'f', -1, 64)+"Mb/s")
		case "bool":
			kv(pk.key, b2i(v != 0))
		default:
			kv(pk.key, strconv.FormatFloat(v, 'f', -1, 64))
		}
	}
	gap()
	kv("ERROR_RATE_PER_LINK", "0.0000")
	kv("L2_CHUNK_SIZE", 4000)
	// 1 (run.py's): an ACK for every packet (ackEvery > 1 is refused above)
	kv("L2_ACK_INTERVAL", 1)
	kv("L2_BACK_TO_ZERO", 0)
	gap()
	win := b2i(a.Params["window"] != 0)
	kv("HAS_WIN", win)
	kv("GLOBAL_T", b2i(!cfg.Host.BDPPerPath))
	kv("VAR_WIN", win)
	// INT's byte counter unit: run.py's bw/25 for HPCC, 1 for the others
	intMulti := int64(1)
	if name == "hpcc" {
		intMulti = max(1, hostRate(cfg)/25e9)
	}
	kv("INT_MULTI", intMulti)
	kv("SAMPLE_FEEDBACK", 0)
	kv("RATE_BOUND", 1)
	kv("ACK_HIGH_PRIO", b2i(a.Params["ackHighPriority"] != 0))
	kv("LINK_DOWN", linkDown)
	kv("ENABLE_TRACE", 0)
	gap()
	// ECN maps: a value for every link rate, thresholds in KB
	var rs []int64
	for r := range rates {
		rs = append(rs, r)
	}
	sort.Slice(rs, func(i, j int) bool { return rs[i] < rs[j] })
	e := cfg.Switch.ECN
	ecnMap := func(key string, val func(r int64) string) {
		fmt.Fprintf(&c, "%s %d", key, len(rs))
		for _, r := range rs {
			fmt.Fprintf(&c, " %d %s", r, val(r))
		}
		c.WriteByte('\n')
	}
	at := func(k int64) func(r int64) string {
		return func(r int64) string {
			v := ecnKB(e, k, r)
			if !e.Enabled {
				v = math.Round(v) // unused with ECN off; whole KB as third.cc reads them
			}
			return strconv.FormatFloat(v, 'f', -1, 64)
		}
	}
	// written with ECN off too: third.cc asserts a value for every switch
	// port's rate whatever ENABLE_QCN says
	ecnMap("KMAX_MAP", at(e.Kmax))
	ecnMap("KMIN_MAP", at(e.Kmin))
	ecnMap("PMAX_MAP", func(int64) string { return strconv.FormatFloat(e.Pmax, 'f', -1, 64) })
	kv("BUFFER_SIZE", cfg.Switch.Buffer>>20)
	kv("QLEN_MON_FILE", "qlen.txt")
	kv("QLEN_MON_START", ns(FlowOffset))
	kv("QLEN_MON_END", ns(FlowOffset+duration))
	files.Config = c.Bytes()
	return files, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// rateText writes a rate as ns-3's DataRate reads it, exactly.
func rateText(bps int64) string {
	for _, u := range []struct {
		unit string
		f    int64
	}{{"Gbps", 1e9}, {"Mbps", 1e6}, {"Kbps", 1e3}} {
		if bps%u.f == 0 {
			return strconv.FormatInt(bps/u.f, 10) + u.unit
		}
	}
	return strconv.FormatInt(bps, 10) + "bps"
}

// delayText writes a delay in ns (ps when it is not whole ns).
func delayText(t sim.Time) string {
	if t%sim.Nanosecond == 0 {
		return strconv.FormatInt(int64(t/sim.Nanosecond), 10) + "ns"
	}
	return strconv.FormatInt(int64(t), 10) + "ps"
}
