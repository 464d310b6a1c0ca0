package sim_test

import (
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
