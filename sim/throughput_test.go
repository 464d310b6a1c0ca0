package sim_test

import (
	"os"
	"testing"

	"cclab/scenarios"
	"cclab/sim"
)

// tputMax records each flow's largest throughput_bps sample.
type tputMax map[int32]float64

func (m tputMax) Observe(b []sim.Sample) {
	for _, s := range b {
		if s.Metric == sim.MetricThroughput && s.Value > m[s.Entity] {
			m[s.Entity] = s.Value
		}
	}
}

// TestThroughputNeverAboveLink: mpcc-exp1 samples every 1 µs on 1 Gbps
// links, where a 1000-byte packet takes 8 µs; throughput_bps used to count
// a packet in the interval its last bit landed in, so samples read 0 or
// 8 Gbps. No sample may exceed the fastest link.
func TestThroughputNeverAboveLink(t *testing.T) {
	for _, name := range []string{"mpcc-exp1", "incast-8to1", "fairness-2flows-hpcc", "rcc-fairness-4flows"} {
		data, err := os.ReadFile("../scenarios/library/" + name + ".json")
		if err != nil {
			t.Fatal(err)
		}
		if data, err = scenarios.ApplySets(data, []string{"duration=1ms"}); err != nil {
			t.Fatal(err)
		}
		sc, err := scenarios.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		cfg, _, err := scenarios.Build(sc)
		if err != nil {
			t.Fatal(err)
		}
		var link int64
		for _, l := range cfg.Links {
			link = max(link, l.Rate)
		}
		m := tputMax{}
		run(t, *cfg, m)
		if len(m) == 0 {
			t.Fatalf("%s: no throughput samples", name)
		}
		for f, v := range m {
			if v > float64(link)*(1+1e-9) {
				t.Errorf("%s: flow %d: throughput sample %.4g bps above the link rate %d", name, f, v, link)
			}
		}
	}
}
