package sim_test

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"cclab/sim"
)

// Packets that follow their flow's cached path take exactly the ports the
// routing table gives hop by hop, also while links fail and recover (the
// routing is recomputed and in-flight packets are mid-path), with per-packet
// spraying, and for receiver-driven control packets: the runs with and
// without the cache are identical in every result and sample.
func TestRouteCacheIsRoutingTable(t *testing.T) {
	failures := []sim.EventSpec{
		{At: 2 * sim.Millisecond, Kind: sim.EventLinkDown, Port: "agg0->core0"},
		{At: 3 * sim.Millisecond, Kind: sim.EventLinkDown, Port: "tor1->agg1"},
		{At: 3*sim.Millisecond + 500*sim.Nanosecond, Kind: sim.EventLinkDown, Port: "h5->tor1"},
		{At: 6 * sim.Millisecond, Kind: sim.EventLinkUp, Port: "agg0->core0"},
		{At: 7 * sim.Millisecond, Kind: sim.EventLinkUp, Port: "tor1->agg1"},
		{At: 8 * sim.Millisecond, Kind: sim.EventLinkUp, Port: "h5->tor1"},
	}
	for _, tc := range []struct {
		name, algo string
		sets       []string
	}{
		{"dcqcn", "dcqcn", nil},
		{"hpcc", "hpcc", nil},
		{"spray", "dcqcn", []string{"switch.routing=spray"}},
		{"homa", "homa", nil},
		{"expresspass", "expresspass", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			results := make([]*sim.Result, 2)
			samples := make([][]sim.Sample, 2)
			for i := range results {
				cfg := libraryConfig(t, "fattree16-websearch30", tc.algo, append([]string{"workload[0].until=4ms"}, tc.sets...)...)
				cfg.Events = failures
				s, err := sim.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				if i == 1 {
					s.DisableRouteCache()
				}
				c := &collector{}
				s.Subscribe(c)
				if err := s.Run(); err != nil {
					t.Fatal(err)
				}
				results[i], samples[i] = s.Result(), c.s
			}
			if !reflect.DeepEqual(results[0], results[1]) || !reflect.DeepEqual(samples[0], samples[1]) {
				t.Fatal("the run with cached paths differs from the one routed hop by hop")
			}
			drops := int64(0)
			for _, p := range results[0].Ports {
				drops += p.Drops
			}
			if results[0].FlowsFinished() == 0 || len(samples[0]) == 0 {
				t.Fatal("nothing ran")
			}
			t.Logf("%d flows finished, %d drops", results[0].FlowsFinished(), drops)
		})
	}
}

// The routing table and the maximum base RTT and BDP are what their
// literal computations give (RoutingDiff, LiteralBaseRTTs): on fat-trees
// with every link alike and with links of mixed rates and delays (so that
// which next hop a path takes matters), on two fabrics no link joins
// (hosts that reach no other), with a host on two switches (which must
// not relay), and after links fail and come back; and so are both when
// built in parts on several goroutines.
func TestRoutingMatchesLiteral(t *testing.T) {
	mixed := func(k int) *topo {
		tp := fatTreeK(k, 100e9, sim.Microsecond)
		r := rand.New(rand.NewPCG(5, uint64(k)))
		for i := range tp.links {
			tp.links[i].Rate = []int64{25e9, 40e9, 100e9, 400e9}[r.IntN(4)]
			tp.links[i].Delay = sim.Time(1+r.IntN(2000)) * sim.Nanosecond
		}
		return tp
	}
	apart := func() *topo {
		tp := fatTreeK(4, 100e9, sim.Microsecond)
		st := star(5, 40e9, 3*sim.Microsecond)
		base := len(tp.nodes)
		for _, n := range st.nodes {
			tp.node("x"+n.Name, n.Kind)
		}
		for _, l := range st.links {
			l.A += base
			l.B += base
			tp.links = append(tp.links, l)
		}
		return tp
	}
	// h0 hangs off s0 and s1: s1's shortest way to h1 passes h0, which
	// does not relay, so s1 routes through s2
	dual := func() *topo {
		tp := &topo{}
		for _, h := range []string{"h0", "h1", "h2"} {
			tp.node(h, sim.Host)
		}
		for _, sw := range []string{"s0", "s1", "s2"} {
			tp.node(sw, sim.Switch)
		}
		for _, l := range [][2]string{{"h0", "s0"}, {"h0", "s1"}, {"h1", "s0"}, {"h2", "s2"}, {"s1", "s2"}, {"s0", "s2"}} {
			tp.link(l[0], l[1], 100e9, sim.Microsecond)
		}
		return tp
	}
	down := []sim.EventSpec{
		{At: 0, Kind: sim.EventLinkDown, Port: "agg0->core0"},
		{At: 0, Kind: sim.EventLinkDown, Port: "tor1->agg1"},
		{At: 0, Kind: sim.EventLinkDown, Port: "h5->tor2"},
		{At: 2 * sim.Microsecond, Kind: sim.EventLinkUp, Port: "tor1->agg1"},
	}
	for _, tc := range []struct {
		name   string
		tp     *topo
		events []sim.EventSpec
	}{
		{"fat-tree k=4", fatTreeK(4, 100e9, sim.Microsecond), nil},
		{"fat-tree k=8", fatTreeK(8, 100e9, sim.Microsecond), nil},
		{"mixed links k=4", mixed(4), nil},
		{"mixed links k=6", mixed(6), nil},
		{"two fabrics", apart(), nil},
		{"a host on two switches", dual(), nil},
		{"links down and up", fatTreeK(4, 100e9, sim.Microsecond), down},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := algoConfig(t, tc.tp, "dcqcn", 100e9, nil)
			cfg.Events = tc.events
			cfg.Duration = 10 * sim.Microsecond
			s, err := sim.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			rtt, bdp := s.LiteralBaseRTTs()
			if rtt == 0 || s.MaxBaseRTT() != rtt || s.MaxBDP() != bdp {
				t.Errorf("max base RTT %d ps, BDP %d B; the literal all-pairs walk gives %d ps, %d B", s.MaxBaseRTT(), s.MaxBDP(), rtt, bdp)
			}
			if d := s.RoutingDiff(); d != "" {
				t.Fatalf("at the start: %s", d)
			}
			// a large network's set-up builds both in parts, one per
			// core: any number of parts gives the same
			for _, parts := range []int{2, 3, 7} {
				s.RecomputeInParts(parts)
				if s.MaxBaseRTT() != rtt || s.MaxBDP() != bdp {
					t.Errorf("in %d parts: max base RTT %d ps, BDP %d B; the literal all-pairs walk gives %d ps, %d B", parts, s.MaxBaseRTT(), s.MaxBDP(), rtt, bdp)
				}
				if d := s.RoutingDiff(); d != "" {
					t.Fatalf("in %d parts: %s", parts, d)
				}
			}
			for _, e := range tc.events {
				if err := s.RunUntil(e.At + 1); err != nil {
					t.Fatal(err)
				}
				if d := s.RoutingDiff(); d != "" {
					t.Fatalf("after the event at %d ps: %s", e.At, d)
				}
			}
		})
	}
}
