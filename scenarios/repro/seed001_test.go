package repro

import (
	"math"
	"testing"

	"cclab/sim"
)

// TestIncastMetrics checks Table 6.2's columns against hand-computed
// values: two finished flows and one unfinished, a queue of four samples.
func TestIncastMetrics(t *testing.T) {
	ms := sim.Millisecond
	o := NewOutcome(nil, []sim.FlowResult{
		{Size: 1_000_000, Start: 0, Finish: 1 * ms, FCT: 1 * ms, IdealFCT: ms / 2, Finished: true},
		{Size: 1_000_000, Start: ms / 2, Finish: 3 * ms, FCT: 5 * ms / 2, IdealFCT: ms / 2, Finished: true},
		{Size: 1_000_000, Start: ms},
	})
	for i, q := range []float64{0, 100, 300, 200} {
		o.AddSample("queue_bytes", "s0->s1", float64(i)*1e-5, q)
	}
	m, fin, all := incastMetrics(o)
	// Goodputs 1e6/1 ms and 1e6/2.5 ms: mean 0.7e6 B/ms, max 1e6.
	bw1, bw2 := 1e6/1e9, 1e6/2.5e9
	mean := (bw1 + bw2) / 2
	want := fdccRow{qAvg: 150, q99: 300, sdAvg: (2 + 5) / 2.0, sd99: 5, unfair: (bw1 - mean) / mean,
		goodput: 2e6 * 8 / 3e-3 / 100e9}
	if fin != 2 || all != 3 {
		t.Fatalf("finished %d of %d, want 2 of 3", fin, all)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"qAvg", m.qAvg, want.qAvg}, {"q99", m.q99, want.q99}, {"sdAvg", m.sdAvg, want.sdAvg}, {"sd99", m.sd99, want.sd99},
		{"unfair", m.unfair, want.unfair}, {"goodput", m.goodput, want.goodput}} {
		if math.Abs(c.got-c.want) > 1e-12*math.Max(1, math.Abs(c.want)) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}
