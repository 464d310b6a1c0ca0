package sim_test

import (
	"fmt"
	"testing"

	"cclab/sim"
)

// The hot path allocates nothing per packet: a run that forwards ten times as
// many packets (same in-flight bound, so the same queue and pool high-water
// marks) makes the same number of allocations, up to a few for ring growth.
// Runs of 1.6k, 16k and 160k packets are measured: from 16k to 160k the
// count may grow by less than one per thousand packets. An allocation per
// packet (or per ACK, or per solve) would add 144,000; what does grow is the
// event wheel's buckets reaching new high-water marks now and then under
// irregular timers (at most a few dozen, bounded by the wheel's size).
// Every algorithm is held to it, MPCC's per-ACK QP and FDCC's per-step
// network (the shipped policy) included.
func TestNoAllocationPerPacket(t *testing.T) {
	// Dolce-RC with a short qualify interval, so that its bandit iterates
	// (and RCC's receiver recycles message state) within the run
	over := map[string]map[string]float64{"dolce": {"qualifyInterval": 5}}
	for _, algo := range []string{"none", "dcqcn", "timely", "dctcp", "hpcc", "qcn", "mpcc", "rcc", "dolce", "dolceplus", "tcp", "fdcc", "rlcc", "homa", "expresspass"} {
		allocs := func(size int64) float64 {
			tp := star(9, 100e9, sim.Microsecond)
			var cfg sim.Config
			if algo == "none" {
				cfg = baseConfig(t, tp, noneAlgo(t, 1))
			} else {
				cfg = algoConfig(t, tp, algo, 100e9, over[algo])
			}
			cfg.Telemetry = sim.TelemetryConfig{} // sampling allocates per sample batch only, but keep it out
			for i := 0; i < 8; i++ {
				cfg.Flows = append(cfg.Flows, tp.flow(fmt.Sprintf("h%d", i), "h8", size, 0))
			}
			return testing.AllocsPerRun(2, func() {
				s, err := sim.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				if err := s.Run(); err != nil {
					t.Fatal(err)
				}
			})
		}
		a1, a2, a3 := allocs(200_000), allocs(2_000_000), allocs(20_000_000) // 1.6k, 16k, 160k packets
		t.Logf("%s: allocations per run: %.0f (1.6k packets), %.0f (16k), %.0f (160k)", algo, a1, a2, a3)
		if a3-a2 > 144 {
			t.Errorf("%s: %.0f more allocations for 144,000 more packets: something allocates per packet", algo, a3-a2)
		}
	}
}

// The same holds for a run in lanes: packets handed between lanes, their
// windows and meetings allocate nothing per packet once the hand-over
// buffers have grown. Eight flows cross from one pod of a 16-host fat-tree
// to the other, so every data packet and ACK changes lanes.
func TestNoAllocationPerPacketInLanes(t *testing.T) {
	for _, algo := range []string{"none", "dcqcn", "hpcc"} {
		allocs := func(size int64) float64 {
			tp := fatTreeK(4, 100e9, sim.Microsecond)
			var cfg sim.Config
			if algo == "none" {
				cfg = baseConfig(t, tp, noneAlgo(t, 1))
			} else {
				cfg = algoConfig(t, tp, algo, 100e9, nil)
			}
			cfg.Telemetry = sim.TelemetryConfig{}
			for i := 0; i < 8; i++ {
				cfg.Flows = append(cfg.Flows, tp.flow(fmt.Sprintf("h%d", i), fmt.Sprintf("h%d", 8+i), size, 0))
			}
			return testing.AllocsPerRun(2, func() {
				s, err := sim.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				s.SetLanes(2)
				if err := s.Run(); err != nil {
					t.Fatal(err)
				}
				if n, why := s.Lanes(); n != 2 {
					t.Fatalf("went in %d lanes: %s", n, why)
				}
			})
		}
		a1, a2, a3 := allocs(200_000), allocs(2_000_000), allocs(20_000_000)
		t.Logf("%s in 2 lanes: allocations per run: %.0f (1.6k packets), %.0f (16k), %.0f (160k)", algo, a1, a2, a3)
		if a3-a2 > 144 {
			t.Errorf("%s: %.0f more allocations for 144,000 more packets: something allocates per packet", algo, a3-a2)
		}
	}
}
