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

// seriesOf records one flow's throughput samples.
type seriesOf struct{ v []float64 }

func (o *seriesOf) Observe(b []sim.Sample) {
	for _, s := range b {
		if s.Metric == sim.MetricThroughput && s.Entity == 0 {
			o.v = append(o.v, s.Value)
		}
	}
}

// TestThroughputFirstPartialInterval: a flow that starts halfway through
// a 10 µs interval is measured over its 5 µs of it, not over 10 µs (which
// read half its rate).
func TestThroughputFirstPartialInterval(t *testing.T) {
	doc := `{"name": "half", "duration": "40us",
		"topology": {"kind": "dumbbell", "senders": 1, "hostLink": {"rate": "10Gbps", "delay": "0.1us"}},
		"cc": {"algorithm": "none"}, "telemetry": {"interval": "10us"},
		"workload": [{"kind": "flows", "flows": [{"src": "h0", "dst": "r0", "size": "1MB", "start": "5us"}]}]}`
	sc, err := scenarios.Parse([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := scenarios.Build(sc)
	if err != nil {
		t.Fatal(err)
	}
	o := &seriesOf{}
	run(t, *cfg, o)
	if len(o.v) < 2 {
		t.Fatalf("samples %v", o.v)
	}
	first, full := o.v[0], o.v[1]
	// the first ~1.5 µs go to the first packet's way there; the rest of
	// the 5 µs deliver at the full rate: about 0.7 of it (0.35 over 10 µs)
	t.Logf("first %.3g, second %.3g", first, full)
	if first < 0.5*full || first > 10e9 {
		t.Fatalf("first sample %.3g bps, a full interval %.3g bps: want the first over the flow's 5 µs", first, full)
	}
}
