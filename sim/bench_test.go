package sim_test

import (
	"fmt"
	"testing"

	"cclab/sim"
)

func incast64(b testing.TB) sim.Config {
	tp := star(65, 100e9, sim.Microsecond)
	cfg := baseConfig(b, tp, noneAlgo(b, 1))
	for i := 0; i < 64; i++ {
		cfg.Flows = append(cfg.Flows, tp.flow(fmt.Sprintf("h%d", i), "h64", 500_000, 0))
	}
	return cfg
}

func BenchmarkIncast64(b *testing.B) {
	cfg := incast64(b)
	var ev uint64
	var simT sim.Time
	for b.Loop() {
		s, err := sim.New(cfg)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Run(); err != nil {
			b.Fatal(err)
		}
		ev, simT = s.Events(), s.Now()
	}
	b.ReportMetric(float64(ev)*float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(simT)/1e12*float64(b.N)/b.Elapsed().Seconds(), "simsec/s")
	b.ReportMetric(float64(ev), "events")
}
