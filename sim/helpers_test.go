package sim_test

import (
	"fmt"
	"testing"

	"cclab/cc"
	"cclab/sim"
)

// Small topology builders for engine tests, independent of package
// scenarios so that the engine is tested on its own.

type topo struct {
	nodes []sim.NodeSpec
	links []sim.LinkSpec
	index map[string]int
}

func (t *topo) node(name string, kind sim.NodeKind) int {
	if t.index == nil {
		t.index = map[string]int{}
	}
	t.index[name] = len(t.nodes)
	t.nodes = append(t.nodes, sim.NodeSpec{Name: name, Kind: kind})
	return len(t.nodes) - 1
}

func (t *topo) link(a, b string, rate int64, delay sim.Time) {
	t.links = append(t.links, sim.LinkSpec{A: t.index[a], B: t.index[b], Rate: rate, Delay: delay})
}

// dumbbell: senders h0.. on s0, s0-s1, receivers r0.. on s1 (the MPCC thesis
// 4-to-1 setting with n senders, one receiver).
func dumbbell(n int, rate int64, delay sim.Time) *topo {
	t := &topo{}
	for i := 0; i < n; i++ {
		t.node(fmt.Sprintf("h%d", i), sim.Host)
	}
	t.node("r0", sim.Host)
	t.node("s0", sim.Switch)
	t.node("s1", sim.Switch)
	for i := 0; i < n; i++ {
		t.link(fmt.Sprintf("h%d", i), "s0", rate, delay)
	}
	t.link("s0", "s1", rate, delay)
	t.link("s1", "r0", rate, delay)
	return t
}

// star: hosts h0..h(n-1) on one switch s0.
func star(n int, rate int64, delay sim.Time) *topo {
	t := &topo{}
	for i := 0; i < n; i++ {
		t.node(fmt.Sprintf("h%d", i), sim.Host)
	}
	t.node("s0", sim.Switch)
	for i := 0; i < n; i++ {
		t.link(fmt.Sprintf("h%d", i), "s0", rate, delay)
	}
	return t
}

// mpccFatTree is the MPCC thesis' Exp. 3 fabric: 2 pods of 2 ToRs and 2
// aggs, every agg linked to both cores, 4 hosts per ToR; host links 100 Gbps,
// fabric links 400 Gbps, 1 µs everywhere.
func mpccFatTree() *topo {
	t := &topo{}
	for i := 0; i < 16; i++ {
		t.node(fmt.Sprintf("h%d", i), sim.Host)
	}
	for i := 0; i < 4; i++ {
		t.node(fmt.Sprintf("tor%d", i), sim.Switch)
	}
	for i := 0; i < 4; i++ {
		t.node(fmt.Sprintf("agg%d", i), sim.Switch)
	}
	for i := 0; i < 2; i++ {
		t.node(fmt.Sprintf("core%d", i), sim.Switch)
	}
	us := sim.Microsecond
	for i := 0; i < 16; i++ {
		t.link(fmt.Sprintf("h%d", i), fmt.Sprintf("tor%d", i/4), 100e9, us)
	}
	for tor := 0; tor < 4; tor++ {
		pod := tor / 2
		for a := 0; a < 2; a++ {
			t.link(fmt.Sprintf("tor%d", tor), fmt.Sprintf("agg%d", 2*pod+a), 400e9, us)
		}
	}
	for a := 0; a < 4; a++ {
		for c := 0; c < 2; c++ {
			t.link(fmt.Sprintf("agg%d", a), fmt.Sprintf("core%d", c), 400e9, us)
		}
	}
	return t
}

func noneAlgo(t testing.TB, windowBDPs float64) sim.AlgoSpec {
	t.Helper()
	a, ok := cc.Lookup("none")
	if !ok {
		t.Fatal("none not registered")
	}
	p, errs := a.Resolve("", map[string]float64{"windowBDPs": windowBDPs}, 0)
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
	return sim.AlgoSpec{Algo: a, Params: p}
}

func baseConfig(t testing.TB, tp *topo, algo sim.AlgoSpec) sim.Config {
	return sim.Config{
		Nodes:  tp.nodes,
		Links:  tp.links,
		Host:   sim.DefaultHost(),
		Switch: sim.DefaultSwitch(),
		Algos:  []sim.AlgoSpec{algo},
		Seed:   1,
		Telemetry: sim.TelemetryConfig{
			Interval: 10 * sim.Microsecond, AllQueues: true, AllFlows: true,
		},
	}
}

func (t *topo) flow(src, dst string, size int64, start sim.Time) sim.FlowSpec {
	return sim.FlowSpec{Src: t.index[src], Dst: t.index[dst], Size: size, Start: start, Group: -1, After: -1}
}

// collector keeps every sample.
type collector struct{ s []sim.Sample }

func (c *collector) Observe(b []sim.Sample) { c.s = append(c.s, b...) }

func run(t testing.TB, cfg sim.Config, obs ...sim.Observer) (*sim.Sim, *sim.Result) {
	t.Helper()
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range obs {
		s.Subscribe(o)
	}
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	if err := s.Conservation().Check(); err != nil {
		t.Fatalf("conservation: %v", err)
	}
	return s, s.Result()
}

// fatTreeK builds a k-ary fat-tree (k pods of k/2 ToRs and k/2 aggs, (k/2)^2
// cores, k/2 hosts per ToR; agg j of every pod links to cores j·k/2..), all
// links at rate with delay.
func fatTreeK(k int, rate int64, delay sim.Time) *topo {
	t := &topo{}
	half := k / 2
	hosts := k * half * half
	for i := 0; i < hosts; i++ {
		t.node(fmt.Sprintf("h%d", i), sim.Host)
	}
	for i := 0; i < k*half; i++ {
		t.node(fmt.Sprintf("tor%d", i), sim.Switch)
	}
	for i := 0; i < k*half; i++ {
		t.node(fmt.Sprintf("agg%d", i), sim.Switch)
	}
	for i := 0; i < half*half; i++ {
		t.node(fmt.Sprintf("core%d", i), sim.Switch)
	}
	for i := 0; i < hosts; i++ {
		t.link(fmt.Sprintf("h%d", i), fmt.Sprintf("tor%d", i/half), rate, delay)
	}
	for p := 0; p < k; p++ {
		for e := 0; e < half; e++ {
			for a := 0; a < half; a++ {
				t.link(fmt.Sprintf("tor%d", p*half+e), fmt.Sprintf("agg%d", p*half+a), rate, delay)
			}
		}
		for a := 0; a < half; a++ {
			for c := 0; c < half; c++ {
				t.link(fmt.Sprintf("agg%d", p*half+a), fmt.Sprintf("core%d", a*half+c), rate, delay)
			}
		}
	}
	return t
}
