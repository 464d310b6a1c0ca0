package cc

import "testing"

// MPCC's and HPCC's presets resolve at 100 Gbps to their values, the
// other parameters keeping their defaults.
func TestMPCCAndHPCCPresets(t *testing.T) {
	cases := []struct {
		algo, preset string
		want         map[string]float64
	}{
		{"mpcc", "wq1_wr1", map[string]float64{"wq": 1, "wr": 1, "horizon": 5}},
		{"mpcc", "wq1_wr100", map[string]float64{"wq": 1, "wr": 100}},
		{"mpcc", "horizon3", map[string]float64{"horizon": 3, "wr": 10}},
		{"mpcc", "every4", map[string]float64{"every": 4}},
		{"mpcc", "literal", map[string]float64{"maxBDP": 30000, "growOnEmpty": 0, "pacing": 1}},
		{"hpcc", "maxstage5", map[string]float64{"maxStage": 5, "eta": 0.95}},
		{"hpcc", "eta90", map[string]float64{"eta": 0.9, "maxStage": 0}},
		{"hpcc", "hpai50", map[string]float64{"ai": 50}},
		{"hpcc", "per_rtt", map[string]float64{"fastReact": 0, "window": 1}},
	}
	for _, c := range cases {
		a, ok := Lookup(c.algo)
		if !ok {
			t.Fatalf("no %s", c.algo)
		}
		p, errs := a.Resolve(c.preset, nil, 100e9)
		if len(errs) > 0 {
			t.Fatalf("%s/%s: %v", c.algo, c.preset, errs)
		}
		for k, v := range c.want {
			if p[k] != v {
				t.Errorf("%s/%s: %s = %g, want %g", c.algo, c.preset, k, p[k], v)
			}
		}
	}
}
