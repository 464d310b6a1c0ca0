package scenarios

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"cclab/cc"
	"cclab/sim"
)

// Meta is what Build knows about a run beyond the engine's input, for the CLI
// and the reports.
type Meta struct {
	// FlowCC is the algorithm name of each flow, by flow id (flows.csv's cc
	// column).
	FlowCC []string
	// Hosts lists the host names; host i is node i of Config.Nodes (hosts
	// come first, then the switches).
	Hosts []string
	// Ports lists the port names by engine port id (sim.PortNames).
	Ports []string
}

// Build turns a scenario into the engine's input. It first re-validates the
// scenario through its canonical form (so a Scenario built or changed by hand
// is checked exactly like a parsed one), then generates the topology, the
// flows (numbered as the contract says: in workload order, within a generated
// workload by start time, then source, then destination) and one algorithm
// instance per distinct (algorithm, preset, parameters, sender line rate).
// Generation is deterministic for a given seed: workload entry i draws from
// its own PCG stream (seed, streamBase+i).
func Build(s *Scenario) (*sim.Config, *Meta, error) { return BuildWith(s, BuildOptions{}) }

// BuildOptions are what building needs from outside the scenario.
type BuildOptions struct {
	// Policy resolves a learned algorithm's policy name other than ""
	// and "default" (which are the shipped policy) for algorithm algo;
	// nil rejects every such name.
	Policy func(algo, name string) (cc.Policy, error)
}

// BuildWith is Build with options.
func BuildWith(s *Scenario, opt BuildOptions) (*sim.Config, *Meta, error) {
	data, err := s.Canonical()
	if err != nil {
		return nil, nil, err
	}
	return BuildCanonical(data, opt)
}

// BuildCanonical is BuildWith for a caller that already holds the
// scenario's canonical form (Scenario.Canonical), which BuildWith makes
// and builds from: the same run, without making the form again.
func BuildCanonical(data []byte, opt BuildOptions) (*sim.Config, *Meta, error) {
	sc, err := Parse(data)
	if err != nil {
		return nil, nil, err
	}
	net, err := newNetwork(&sc.Topology)
	if err != nil {
		return nil, nil, fieldErr("topology", "%v", err)
	}
	cfg := &sim.Config{
		Nodes:    net.nodes,
		Links:    net.links,
		Host:     hostConfig(&sc.Host),
		Switch:   switchConfig(&sc.Switch, &sc.CC),
		Seed:     sc.Seed,
		Duration: sc.Duration,
	}
	meta := &Meta{Hosts: net.hostNames(), Ports: net.ports}

	gen := &generator{s: sc, net: net}
	var flows []genFlow
	for i := range sc.Workload {
		flows = append(flows, gen.generate(i)...)
		if len(flows) > 2*MaxFlows {
			return nil, nil, fieldErr(index("workload", i), "the workload made %d flows up to here, more than %d", len(flows), 2*MaxFlows)
		}
	}
	algos := &algoTable{index: map[string]int{}, policy: opt.Policy}
	cfg.Flows = make([]sim.FlowSpec, len(flows))
	meta.FlowCC = make([]string, len(flows))
	for i, f := range flows {
		c := f.cc
		if c == nil {
			c = &sc.CC
		}
		k, err := algos.get(c, net.hostRate[f.spec.Src])
		if err != nil {
			return nil, nil, err
		}
		f.spec.Algo = k
		cfg.Flows[i] = f.spec
		meta.FlowCC[i] = c.Algorithm
	}
	if len(algos.specs) == 0 {
		// no flow: the engine still wants the scenario's algorithm
		if _, err := algos.get(&sc.CC, net.hostRate[0]); err != nil {
			return nil, nil, err
		}
	}
	cfg.Algos = algos.specs
	if cfg.Switch.DataClasses == 0 {
		// the most any of the run's algorithms is designed for
		cfg.Switch.DataClasses = 1
		for _, a := range cfg.Algos {
			cfg.Switch.DataClasses = max(cfg.Switch.DataClasses, a.Algo.DataClasses)
		}
	}
	cfg.Workload = workloadOf(sc)

	events := append([]Event(nil), sc.Events...)
	sort.SliceStable(events, func(i, j int) bool { return events[i].At < events[j].At })
	for _, e := range events {
		cfg.Events = append(cfg.Events, eventSpec(&e))
	}

	cfg.Telemetry = sim.TelemetryConfig{
		Interval:  sc.Telemetry.Interval,
		AllQueues: sc.Telemetry.AllQueues,
		Queues:    append([]string(nil), sc.Telemetry.Queues...),
		AllFlows:  sc.Telemetry.AllFlows,
		Flows:     append([]int(nil), sc.Telemetry.Flows...),
	}
	for i, id := range sc.Telemetry.Flows {
		if id >= len(cfg.Flows) {
			return nil, nil, fieldErr(index("telemetry.flows", i), "flow %d does not exist (the run has %d flows)", id, len(cfg.Flows))
		}
	}
	if err := sim.CheckTopology(cfg.Nodes, cfg.Links); err != nil {
		return nil, nil, fieldErr("topology", "%v", err)
	}
	return cfg, meta, nil
}

func hostConfig(h *Host) sim.HostConfig {
	c := sim.DefaultHost()
	c.MTU = h.MTU
	c.Header = h.Header
	c.IdealHeader = h.IdealHeader
	c.Ack = h.Ack
	c.Nack = h.Nack
	c.AckHeader = h.AckHeader
	c.AckEvery = h.AckEvery
	c.CNPInterval = h.CNPInterval
	c.RTO = h.RTO
	c.RTOLossless = !h.RTOAuto
	c.NackInterval = h.NackInterval
	c.BDPPerPath = h.BDP == BDPPath
	return c
}

// switchConfig applies switch.ecn, or the scenario algorithm's ECN defaults
// (scaled with the link rate) when it is left out; an algorithm without
// defaults means no marking.
func switchConfig(s *Switch, c *CC) sim.SwitchConfig {
	sw := sim.DefaultSwitch()
	sw.Buffer = s.Buffer
	sw.PFC = s.PFC
	sw.INT = s.INT
	sw.FlowCountTimeout = s.FlowCountTimeout
	sw.AckHigh = s.AckClass == AckClassHigh
	sw.DataClasses = s.DataClasses
	sw.Spray = s.Routing == RoutingSpray
	sw.ECN = sim.ECNConfig{RefRate: RefRate}
	switch {
	case s.ECN != nil:
		sw.ECN.Enabled = s.ECN.Enabled
		sw.ECN.Kmin = s.ECN.Kmin
		sw.ECN.Kmax = s.ECN.Kmax
		sw.ECN.Pmax = s.ECN.Pmax
		sw.ECN.ScaleWithRate = s.ECN.Scale == ScaleLinkRate
	default:
		if a, ok := cc.Lookup(c.Algorithm); ok && a.ECN != nil {
			sw.ECN.Enabled = true
			sw.ECN.Kmin = a.ECN.Kmin
			sw.ECN.Kmax = a.ECN.Kmax
			sw.ECN.Pmax = a.ECN.Pmax
			sw.ECN.ScaleWithRate = true
		}
	}
	if !sw.ECN.Enabled {
		sw.ECN = sim.ECNConfig{RefRate: RefRate}
	}
	return sw
}

func eventSpec(e *Event) sim.EventSpec {
	out := sim.EventSpec{At: e.At, Algo: -1}
	switch e.Kind {
	case EventParams:
		out.Kind = sim.EventParams
		out.Params = make(map[string]float64, len(e.Params))
		for k, v := range e.Params {
			out.Params[k] = v
		}
	case EventLink:
		out.Kind = sim.EventLinkDown
		if e.Up {
			out.Kind = sim.EventLinkUp
		}
		out.Port = e.Link
	case EventLoss:
		out.Kind = sim.EventLoss
		out.Port = e.Link
		out.Loss = e.Loss
	}
	return out
}

// algoTable resolves algorithm choices into Config.Algos, one entry per
// distinct (algorithm, preset, parameter overrides, line rate), in order of
// first use.
type algoTable struct {
	specs  []sim.AlgoSpec
	index  map[string]int
	policy func(algo, name string) (cc.Policy, error)
}

func (t *algoTable) get(c *CC, lineRate int64) (int, error) {
	keys := make([]string, 0, len(c.Params))
	for k := range c.Params {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	b.WriteString(c.Algorithm + "|" + c.Preset + "|" + c.Policy + "|" + strconv.FormatInt(lineRate, 10))
	for _, k := range keys {
		b.WriteString("|" + k + "=" + strconv.FormatFloat(c.Params[k], 'g', -1, 64))
	}
	key := b.String()
	if i, ok := t.index[key]; ok {
		return i, nil
	}
	a, ok := cc.Lookup(c.Algorithm)
	if !ok {
		return 0, fieldErr("cc.algorithm", "unknown algorithm %q", c.Algorithm)
	}
	if c.Policy != "" && c.Policy != "default" {
		if a.WithPolicy == nil {
			return 0, fieldErr("cc.policy", "%s takes no trained policy", a.Name)
		}
		if t.policy == nil {
			return 0, fieldErr("cc.policy", "policy %q: only the shipped policy (\"default\") is known here", c.Policy)
		}
		p, err := t.policy(a.Name, c.Policy)
		if err != nil {
			return 0, fieldErr("cc.policy", "%v", err)
		}
		if a, err = a.WithPolicy(p); err != nil {
			return 0, fieldErr("cc.policy", "policy %q: %v", c.Policy, err)
		}
	}
	params, perrs := a.Resolve(c.Preset, c.Params, lineRate)
	if len(perrs) > 0 {
		return 0, fmt.Errorf("scenarios: resolving %s at %s: %v", a.Name, formatRate(lineRate), perrs[0])
	}
	t.specs = append(t.specs, sim.AlgoSpec{Algo: a, Preset: c.Preset, Params: params})
	t.index[key] = len(t.specs) - 1
	return len(t.specs) - 1, nil
}

// workloadOf is the run's message-size distribution for the algorithms that
// derive settings from it (Homa's priority cut-offs): the CDF of its Poisson
// entries when they all draw from one, each segment of the CDF split into
// equal-mass slices; nil otherwise, and the engine takes the flows' own
// sizes.
func workloadOf(sc *Scenario) *cc.Workload {
	var pts []CDFPoint
	for i := range sc.Workload {
		w := &sc.Workload[i]
		if w.Kind != KindPoisson || w.Poisson == nil || w.Poisson.Size > 0 {
			return nil
		}
		p := w.Poisson.CDFPoints
		if p == nil {
			c, err := LoadCDF(w.Poisson.CDF)
			if err != nil {
				return nil
			}
			p = c.Points
		}
		if pts != nil && !slices.Equal(pts, p) {
			return nil
		}
		pts = p
	}
	if len(pts) < 2 {
		return nil
	}
	const slicesPer = 16
	var sizes []int64
	var weights []float64
	for i := 1; i < len(pts); i++ {
		a, b := pts[i-1], pts[i]
		mass := (b.Percent - a.Percent) / 100
		if mass <= 0 {
			continue
		}
		for k := 0; k < slicesPer; k++ {
			v := int64(math.Round(a.Bytes + (b.Bytes-a.Bytes)*(float64(k)+0.5)/slicesPer))
			sizes = append(sizes, max(v, 1))
			weights = append(weights, mass/slicesPer)
		}
	}
	// sizes ascend (a CDF's bytes do not decrease); merge equal ones
	w := &cc.Workload{}
	for i, v := range sizes {
		if n := len(w.Sizes); n > 0 && w.Sizes[n-1] == v {
			w.Weights[n-1] += weights[i]
			continue
		}
		w.Sizes = append(w.Sizes, v)
		w.Weights = append(w.Weights, weights[i])
	}
	return w
}
