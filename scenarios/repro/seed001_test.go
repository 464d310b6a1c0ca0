package repro

import (
	"fmt"
	"math"
	"testing"

	"cclab/sim"
	"cclab/sim/report"
)

func near(got, want float64) bool {
	return math.Abs(got-want) <= 1e-12*math.Max(1, math.Abs(want)) || math.IsNaN(got) && math.IsNaN(want)
}

// TestIncastMetrics checks Table 6.2's columns against hand-computed
// values: two finished flows and one unfinished, a queue of four samples.
func TestIncastMetrics(t *testing.T) {
	ms := sim.Millisecond
	o := NewOutcome(&report.Summary{Queues: map[string]report.QueueStats{"s0->s1": {Max: 350}}}, []sim.FlowResult{
		{ID: 0, Size: 1_000_000, Start: 0, Finish: 1 * ms, FCT: 1 * ms, IdealFCT: ms / 2, Finished: true},
		{ID: 1, Size: 1_000_000, Start: ms / 2, Finish: 3 * ms, FCT: 5 * ms / 2, IdealFCT: ms / 2, Finished: true},
		{ID: 2, Size: 1_000_000, Start: ms},
	})
	for i, q := range []float64{0, 100, 300, 200} {
		o.AddSample("queue_bytes", "s0->s1", float64(i)*1e-5, q)
	}
	m := incastOf(o, "s0->s1")
	// goodputs 1e6 B / 1 ms and 1e6 B / 2.5 ms: mean 0.7e9 B/s, max 1e9
	bw1, bw2 := 1e9, 1e6/2.5e-3
	mean := (bw1 + bw2) / 2
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"qAvg", m.qAvg, 150}, {"q99", m.q99, 300}, {"qMax", m.qMax, 350},
		{"sdAvg", m.sdAvg, (2 + 5) / 2.0}, {"sd99", m.sd99, 5},
		{"unfair", m.unfair, (bw1 - mean) / mean},
		{"goodput", m.goodput, 2e6 * 8 / 3e-3 / 100e9}, // two flows' bytes over 0..3 ms, ÷ 100 Gbps
	} {
		if !near(c.got, c.want) {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if m.finished != 2 || m.flows != 3 {
		t.Errorf("finished %d of %d, want 2 of 3", m.finished, m.flows)
	}
}

func TestUnfairRatio(t *testing.T) {
	for _, tc := range []struct {
		bw   []float64
		want float64
	}{
		{nil, math.NaN()},
		{[]float64{5}, 0},
		{[]float64{1, 1, 1, 1}, 0},
		{[]float64{1, 3}, 0.5},           // mean 2, max 3
		{[]float64{2, 2, 2, 6}, 1},       // mean 3, max 6
		{[]float64{10, 40, 20, 30}, 0.6}, // mean 25, max 40
	} {
		if got := unfairRatio(tc.bw); !near(got, tc.want) {
			t.Errorf("unfairRatio(%v) = %v, want %v", tc.bw, got, tc.want)
		}
	}
}

func TestNormalisedGoodput(t *testing.T) {
	ms := sim.Millisecond
	for _, tc := range []struct {
		name  string
		flows []sim.FlowResult
		want  float64
	}{
		{"one flow at line rate", []sim.FlowResult{{Size: 12_500_000, Start: 0, Finish: ms, Finished: true}}, 1},
		// 25 MB over 1 ms → 4 ms: 50 Gbps
		{"two flows, span from the first start", []sim.FlowResult{
			{Size: 12_500_000, Start: ms, Finish: 3 * ms, Finished: true},
			{Size: 12_500_000, Start: 2 * ms, Finish: 5 * ms, Finished: true}}, 0.5},
		// the unfinished flow's start opens the span; its bytes do not count
		{"unfinished flow", []sim.FlowResult{
			{Size: 12_500_000, Start: ms, Finish: 2 * ms, Finished: true},
			{Size: 12_500_000, Start: 0}}, 0.5},
		{"nothing finished", []sim.FlowResult{{Size: 1, Start: 0}}, math.NaN()},
	} {
		if got := normalisedGoodput(tc.flows, 100e9); !near(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// Queue percentiles are nearest rank, v[int(n·p)], on the sorted samples.
func TestQueueStats(t *testing.T) {
	var s Series
	for i := 100; i >= 1; i-- { // 100 .. 1, unsorted
		s.T = append(s.T, float64(100-i)*1e-5)
		s.V = append(s.V, float64(i))
	}
	for _, tc := range []struct {
		name     string
		s        Series
		avg, p99 float64
	}{
		{"1..100", s, 50.5, 100}, // v[99]
		{"four samples", Series{V: []float64{0, 100, 300, 200}}, 150, 300}, // v[int(3.96)] = v[3]
		{"ten samples", Series{V: []float64{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}}, 4.5, 9},
		{"none", Series{}, math.NaN(), math.NaN()},
	} {
		avg, p99 := queueStats(tc.s)
		if !near(avg, tc.avg) || !near(p99, tc.p99) {
			t.Errorf("%s: avg %v p99 %v, want %v and %v", tc.name, avg, p99, tc.avg, tc.p99)
		}
	}
	if s.V[0] != 100 {
		t.Error("queueStats sorted its input")
	}
}

// Processor sharing by hand (rate 1, sizes 1).
func TestFairShareFCTs(t *testing.T) {
	for _, tc := range []struct {
		name          string
		starts, sizes []float64
		want          []float64
	}{
		{"alone", []float64{2}, []float64{3}, []float64{3}},
		// A alone until 0.5 (0.5 left), both at 1/2: A done at 1.5; B has 0.5 left, alone: 2.0
		{"two, staggered", []float64{0, 0.5}, []float64{1, 1}, []float64{1.5, 1.5}},
		// 0–0.5 A alone (A 0.5 left); 0.5–1 A, B at 1/2 (A 0.25, B 0.75); then three at 1/3:
		// A done at 1.75 (B 0.5, C 0.75 left); two at 1/2: B done at 2.75 (C 0.25); C alone: 3.0
		{"three, staggered", []float64{0, 0.5, 1}, []float64{1, 1, 1}, []float64{1.75, 2.25, 2}},
		// given out of order; an idle gap between them
		{"gap", []float64{5, 0}, []float64{1, 2}, []float64{1, 2}},
		{"simultaneous", []float64{0, 0}, []float64{1, 1}, []float64{2, 2}},
	} {
		got := fairShareFCTs(tc.starts, tc.sizes, 1)
		for i := range tc.want {
			if math.Abs(got[i]-tc.want[i]) > 1e-9 {
				t.Errorf("%s: FCTs %v, want %v", tc.name, got, tc.want)
				break
			}
		}
	}
	// three flows of 1 B from 0, 0.5, 1 s at 8 bit/s: goodputs 1/1.75,
	// 1/2.25, 1/2 → unfair ratio (1/1.75 − mean)/mean
	flows := []sim.FlowResult{{Size: 1, Start: 0}, {Size: 1, Start: sim.Second / 2}, {Size: 1, Start: sim.Second}}
	bw := []float64{1 / 1.75, 1 / 2.25, 1 / 2.0}
	mean := (bw[0] + bw[1] + bw[2]) / 3
	if got, want := fairShareUnfair(flows, 8), (bw[0]-mean)/mean; math.Abs(got-want) > 1e-9 {
		t.Errorf("fairShareUnfair = %v, want %v", got, want)
	}
}

// The unfair ratio while every flow is active: from the last start to the
// first finish, on their throughput samples.
func TestOverlapUnfair(t *testing.T) {
	ms := sim.Millisecond
	o := NewOutcome(nil, []sim.FlowResult{
		{ID: 0, Start: 0, Finish: 4 * ms, Finished: true},
		{ID: 1, Start: ms, Finish: 3 * ms, Finished: true},
	})
	// flow 0 at 90 Gbps outside 1–3 ms and 60 inside; flow 1 at 30: while
	// both are active, mean 45 and max 60
	for i := 0; i < 40; i++ {
		t := float64(i) * 1e-4
		v := 90e9
		if t >= 1e-3 && t < 3e-3 {
			v = 60e9
			o.AddSample("throughput_bps", "1", t, 30e9)
		}
		o.AddSample("throughput_bps", "0", t, v)
	}
	u, from, to, ok := overlapUnfair(o)
	if !ok || !near(from, 1e-3) || !near(to, 3e-3) || math.Abs(u-(60-45)/45.0) > 1e-9 {
		t.Errorf("overlapUnfair = %v over %v–%v (ok %v), want %v over 1–3 ms", u, from, to, ok, (60-45)/45.0)
	}
	if _, _, _, ok := overlapUnfair(NewOutcome(nil, o.Flows)); ok {
		t.Error("overlapUnfair without samples says ok")
	}
}

// Fig. 6.2's statistics on two flows: flow 0 alone in phase 1, then at
// 50 Gbps steadily; flow 1 alternating 40/60 Gbps (σ 10 = 0.2 of the
// 50 Gbps fair share).
func TestJoinStats(t *testing.T) {
	o := NewOutcome(&report.Summary{SimSeconds: 2}, []sim.FlowResult{{ID: 1, Start: sim.Second}, {ID: 0, Start: 0}})
	for i := 0; i < 200; i++ {
		t := float64(i) * 0.01
		if t < 1 {
			o.AddSample("throughput_bps", "0", t, 95e9)
			continue
		}
		o.AddSample("throughput_bps", "0", t, 50e9)
		o.AddSample("throughput_bps", "1", t, 40e9+20e9*float64(i%2))
	}
	j, f := joinStats(o)
	if !near(j, 1) || math.Abs(f-0.1) > 1e-9 {
		t.Errorf("joinStats = Jain %v, fluctuation %v; want 1 and (0 + 0.2)/2", j, f)
	}
}

// Fig. 6.1's utilisation: both flows' samples summed per instant; a flow
// absent from part of the window counts as zero there.
func TestBottleneckGoodput(t *testing.T) {
	o := NewOutcome(nil, []sim.FlowResult{{ID: 0}, {ID: 1}})
	for i := 0; i < 10; i++ {
		t := 1e-3 + float64(i)*1e-4
		o.AddSample("throughput_bps", "0", t, 50e9)
		if i < 5 {
			o.AddSample("throughput_bps", "1", t, 40e9)
		}
	}
	if got := bottleneckGoodput(o, 1e-3, 2e-3); !near(got, 0.7) { // 50 + 40/2
		t.Errorf("bottleneckGoodput = %v, want 0.7", got)
	}
	if got := bottleneckGoodput(o, 5e-3, 6e-3); !math.IsNaN(got) {
		t.Errorf("bottleneckGoodput of an empty window = %v, want NaN", got)
	}
}

func TestShortSlowdownsAndPause(t *testing.T) {
	us := sim.Microsecond
	flows := []sim.FlowResult{
		{Src: "h0", Size: 1000, FCT: 9 * us, IdealFCT: 10 * us, Finished: true}, // 0.9, clamped to 1
		{Src: "h0", Size: 50_000, FCT: 30 * us, IdealFCT: 10 * us, Finished: true},
		{Src: "h1", Size: 99_999, FCT: 20 * us, IdealFCT: 10 * us, Finished: true},
		{Src: "h1", Size: 100_000, FCT: 90 * us, IdealFCT: 10 * us, Finished: true}, // not short
		{Src: "h2", Size: 1000, IdealFCT: 10 * us},                                  // unfinished
	}
	got := shortSlowdowns(flows)
	if fmt.Sprint(got) != "[1 2 3]" {
		t.Errorf("shortSlowdowns = %v, want [1 2 3]", got)
	}
	// the NICs of h0, h1, h2 (they send) average 0.4; the links from the
	// switches into the receiver's switch s1, 0.3; a host's link into s1
	// (r1, idle) and the receiver's own port do not count
	o := NewOutcome(&report.Summary{PFCPauseFraction: map[string]float64{
		"h0->s0": 0.2, "h1->s0": 0.4, "h2->s0": 0.6, "h3->s0": 0.9, "s0->h0": 1,
		"s0->s1": 0.1, "s2->s1": 0.5, "r1->s1": 1, "s1->r0": 1}}, append(flows, sim.FlowResult{Src: "h0", Dst: "r0"}))
	if p := incastPause(o, "s1"); !near(p, 0.4+0.3) {
		t.Errorf("incastPause = %v, want 0.7", p)
	}
}

// RL-CC's rows carry a note if no RL-CC policy ships (one does); other
// rows none.
func TestRLCCNote(t *testing.T) {
	if rlccNote("hpcc") != "" {
		t.Error("a note on HPCC's rows")
	}
	if (rlccNote("rlcc") == "") == !shipsPolicy("rlcc") {
		t.Errorf("rlcc note %q with shipsPolicy %v", rlccNote("rlcc"), shipsPolicy("rlcc"))
	}
	for _, algo := range []string{"fdcc", "rlcc"} {
		if !shipsPolicy(algo) {
			t.Errorf("%s ships a policy, shipsPolicy says no", algo)
		}
	}
}
