package sim_test

import (
	"fmt"
	"testing"

	"cclab/sim"
)

// The hot path allocates nothing per packet: a run that forwards ten times as
// many packets (same in-flight bound, so the same queue and pool high-water
// marks) makes the same number of allocations, up to a few for ring growth.
func TestNoAllocationPerPacket(t *testing.T) {
	allocs := func(size int64) float64 {
		tp := star(9, 100e9, sim.Microsecond)
		cfg := baseConfig(t, tp, noneAlgo(t, 1))
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
	small, large := allocs(200_000), allocs(2_000_000) // 1,600 vs 16,000 packets
	t.Logf("allocations per run: %.0f (1.6k packets) vs %.0f (16k packets)", small, large)
	if large-small > 16 {
		t.Errorf("%.0f more allocations for 14,400 more packets: something allocates per packet", large-small)
	}
}
