package sim_test

import (
	"fmt"
	"math"
	"testing"

	"cclab/sim"
)

// series returns the (t, value) points of one metric and entity.
func series(s *sim.Sim, c *collector, metric, entity string) (ts, vs []float64) {
	m, ok := s.MetricID(metric)
	if !ok {
		return nil, nil
	}
	for _, x := range c.s {
		if x.Metric == m && s.EntityName(m, x.Entity) == entity {
			ts = append(ts, float64(x.T)/float64(sim.Second))
			vs = append(vs, x.Value)
		}
	}
	return ts, vs
}

// slope is the least-squares slope of v over t.
func slope(ts, vs []float64) float64 {
	n := float64(len(ts))
	var st, sv, stt, stv float64
	for i := range ts {
		st += ts[i]
		sv += vs[i]
		stt += ts[i] * ts[i]
		stv += ts[i] * vs[i]
	}
	return (n*stv - st*sv) / (n*stt - st*st)
}

func mean(vs []float64) float64 {
	s := 0.0
	for _, v := range vs {
		s += v
	}
	return s / float64(len(vs))
}

// checkBuffers asserts no switch ever held more than its buffer.
func checkBuffers(t *testing.T, cfg sim.Config, r *sim.Result) {
	t.Helper()
	if r.MaxSwitchBuffer > cfg.Switch.Buffer {
		t.Errorf("a switch held %d B, more than its %d B buffer", r.MaxSwitchBuffer, cfg.Switch.Buffer)
	}
	for _, p := range r.Ports {
		if p.QueueMax < 0 || p.QueueMax > cfg.Switch.Buffer {
			t.Errorf("port %s queue max %d outside [0, buffer %d]", p.Name, p.QueueMax, cfg.Switch.Buffer)
		}
	}
}

// Test 1 (MPCC thesis §3.1, E0a and E0c): four senders at line rate into one
// 1 Gbps bottleneck. Without a window the queue grows at 4 − 1 = 3 Gbps of
// wire bytes; with a window of one max BDP per flow it stops growing and sits
// near (N−1)·W.
func TestQueueGrowthDumbbell(t *testing.T) {
	tp := dumbbell(4, 1e9, sim.Microsecond)
	cfg := baseConfig(t, tp, noneAlgo(t, 0))
	cfg.Duration = 2 * sim.Millisecond
	for i := 0; i < 4; i++ {
		cfg.Flows = append(cfg.Flows, tp.flow(fmt.Sprintf("h%d", i), "r0", 10_000_000, 0))
	}
	c := &collector{}
	s, r := run(t, cfg, c)
	checkBuffers(t, cfg, r)
	ts, vs := series(s, c, "queue_bytes", "s0->s1")
	// fit from 100 µs on (after the first packets have crossed) to the end
	var ft, fv []float64
	for i := range ts {
		if ts[i] >= 100e-6 {
			ft, fv = append(ft, ts[i]), append(fv, vs[i])
		}
	}
	got := slope(ft, fv) * 8 // bits per second
	t.Logf("queue slope without window: %.5g bps", got)
	// Tolerance 2%: arrivals are exactly 4 × 1 Gbps of back-to-back wire
	// bytes and the drain exactly 1 Gbps, so the only error is the one-packet
	// quantisation of each 10 µs sample, which a 190-point fit averages out.
	if math.Abs(got-3e9)/3e9 > 0.02 {
		t.Errorf("queue slope %.4g bps, want 3e9 within 2%%", got)
	}

	cfg.Algos = []sim.AlgoSpec{noneAlgo(t, 1)}
	c = &collector{}
	s, r = run(t, cfg, c)
	checkBuffers(t, cfg, r)
	ts, vs = series(s, c, "queue_bytes", "s0->s1")
	var plateau []float64
	for i := range ts {
		if ts[i] >= 1e-3 {
			plateau = append(plateau, vs[i])
		}
	}
	w := float64(r.MaxBDP) // 3750 B: HPCC's maxBdp for this dumbbell
	want := 3 * w
	got = mean(plateau)
	t.Logf("plateau with window %0.f B: %.0f B (want %.0f)", w, got, want)
	// Tolerance 15% (the issue's): each flow keeps ⌈W/MTU⌉ = 4 packets of
	// 1036 B in flight, so the queue holds the excess over the pipe in whole
	// wire-size packets, slightly above (N−1)·W counted in payload bytes.
	if math.Abs(got-want)/want > 0.15 {
		t.Errorf("plateau %.0f B, want (N-1)·W = %.0f B within 15%%", got, want)
	}
	if slope(ts[len(ts)/2:], vs[len(vs)/2:]) > 1e5 {
		t.Errorf("queue still growing in the second half with a window")
	}
}

// Test 2: a lone flow reaches line rate × mtu/(mtu+header) and finishes
// within 1% of the ideal FCT (HPCC's standalone_fct) on every path length of
// the MPCC thesis fat-tree.
func TestLoneFlowFatTree(t *testing.T) {
	cases := []struct {
		name string
		dst  string
		hops int
	}{
		{"same ToR", "h1", 2},
		{"same pod", "h5", 4},
		{"cross pod", "h12", 6},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tp := mpccFatTree()
			cfg := baseConfig(t, tp, noneAlgo(t, 1))
			const size = 10_000_000 // 10,000 packets of 1000 B
			cfg.Flows = []sim.FlowSpec{tp.flow("h0", tc.dst, size, 0)}
			c := &collector{}
			s, r := run(t, cfg, c)
			checkBuffers(t, cfg, r)
			f := r.Flows[0]
			if !f.Finished {
				t.Fatal("flow did not finish")
			}
			// The ideal (HPCC's standalone FCT) counts 48 B of header per
			// packet where 36 B cross the wire, so a lone flow beats it by
			// 12 B per packet, as in the reference (whose DCQCN replay has 58
			// flows with a slowdown below 1).
			h := cfg.Host
			wireIdeal := f.IdealFCT - sim.Time(size/h.MTU*(h.IdealHeader-h.Header)*80) // 80 ps/B at 100 Gbps
			ratio := float64(f.FCT) / float64(wireIdeal)
			t.Logf("FCT/ideal %.5f, FCT/(ideal with the wire's header) %.5f", float64(f.FCT)/float64(f.IdealFCT), ratio)
			// 1%: the ideal counts one MTU payload per hop and no ACK; the
			// simulated FCT has a whole packet per hop and the ACK's way
			// back, a few hundred ns on 850 µs.
			if math.Abs(ratio-1) > 0.01 {
				t.Errorf("FCT %d ps vs ideal with the wire's header %d ps: ratio %.5f, want within 1%%", f.FCT, wireIdeal, ratio)
			}
			_, thr := series(s, c, "throughput_bps", "0")
			if len(thr) < 20 {
				t.Fatalf("only %d throughput samples", len(thr))
			}
			got := mean(thr[2 : len(thr)-2])
			want := 100e9 * 1000 / float64(1000+h.Header)
			t.Logf("goodput %.5g bps (want %.5g)", got, want)
			// 1%: each 10 µs sample counts whole packets (±1 of ~119), and the
			// mean over ~80 interior samples cancels that quantisation.
			if math.Abs(got-want)/want > 0.01 {
				t.Errorf("goodput %.5g bps, want %.5g within 1%%", got, want)
			}
		})
	}
}

// Test 4: 8-to-1 incast of 1 MB, no window. With PFC the fabric is lossless
// and the pauses are accounted; without PFC the 4 MiB buffer overflows and
// go-back-N still completes every flow.
func TestIncastPFC(t *testing.T) {
	for _, pfc := range []bool{true, false} {
		t.Run(fmt.Sprintf("pfc=%v", pfc), func(t *testing.T) {
			tp := star(9, 100e9, sim.Microsecond)
			cfg := baseConfig(t, tp, noneAlgo(t, 0))
			cfg.Switch.Buffer = 4 << 20
			cfg.Switch.PFC = pfc
			for i := 0; i < 8; i++ {
				cfg.Flows = append(cfg.Flows, tp.flow(fmt.Sprintf("h%d", i), "h8", 1_000_000, 0))
			}
			_, r := run(t, cfg)
			checkBuffers(t, cfg, r)
			for _, f := range r.Flows {
				if !f.Finished {
					t.Errorf("flow %d did not finish", f.ID)
				}
			}
			var pauseFrac float64
			var pausesSent int64
			for _, p := range r.Ports {
				pauseFrac += p.PauseFraction
				pausesSent += p.PausesSent
			}
			t.Logf("drops %d, pauses sent %d, paused-fraction sum %.3f, retransmitted %d B, end %d ps", r.Drops, pausesSent, pauseFrac, r.Retransmitted, r.SimTime)
			if pfc {
				if r.Drops != 0 {
					t.Errorf("%d drops with PFC", r.Drops)
				}
				if pausesSent == 0 || pauseFrac == 0 {
					t.Errorf("no pauses with PFC (sent %d, paused fraction sum %.3f)", pausesSent, pauseFrac)
				}
				for _, p := range r.Ports {
					if p.PauseFraction < 0 || p.PauseFraction > 1 {
						t.Errorf("port %s paused fraction %.3f", p.Name, p.PauseFraction)
					}
				}
			} else {
				if r.Drops == 0 {
					t.Error("no drops without PFC in a 4 MiB buffer")
				}
				if pausesSent != 0 || pauseFrac != 0 {
					t.Error("pauses without PFC")
				}
				if r.Retransmitted == 0 {
					t.Error("drops but nothing retransmitted")
				}
			}
		})
	}
}

// Test 3 (conservation) runs inside run() for every test; this case also
// stops a run while packets are queued and on the wire.
func TestConservationMidRun(t *testing.T) {
	tp := star(9, 100e9, sim.Microsecond)
	cfg := baseConfig(t, tp, noneAlgo(t, 0))
	cfg.Duration = 50 * sim.Microsecond
	for i := 0; i < 8; i++ {
		cfg.Flows = append(cfg.Flows, tp.flow(fmt.Sprintf("h%d", i), "h8", 1_000_000, 0))
	}
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, limit := range []sim.Time{1234567, 7 * sim.Microsecond, 31 * sim.Microsecond} {
		if err := s.RunUntil(limit); err != nil {
			t.Fatal(err)
		}
		c := s.Conservation()
		if err := c.Check(); err != nil {
			t.Fatalf("at %d ps: %v", limit, err)
		}
		if c.PacketsFound == 0 {
			t.Fatalf("at %d ps: nothing in flight, the check is vacuous", limit)
		}
	}
}

// Test 5 (RED at dequeue, HPCC's ShouldSendCN): with the queue held at a
// level by fixed windows, the fraction of marked data packets follows
// pmax·(q−kmin)/(kmax−kmin) between the thresholds, is 0 below kmin and 1
// above kmax.
func TestECNMarkingLine(t *testing.T) {
	const kmin, kmax, pmax = 20_000, 100_000, 0.4
	cases := []struct {
		windowBDPs float64
		region     string
	}{
		{0.3, "below"},
		{0.9, "line"},
		{1.2, "line"},
		{2.5, "above"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("w=%.1f", tc.windowBDPs), func(t *testing.T) {
			tp := star(3, 100e9, sim.Microsecond)
			cfg := baseConfig(t, tp, noneAlgo(t, tc.windowBDPs))
			cfg.Switch.ECN = sim.ECNConfig{Enabled: true, Kmin: kmin, Kmax: kmax, Pmax: pmax}
			cfg.Duration = 3 * sim.Millisecond
			cfg.Flows = []sim.FlowSpec{tp.flow("h0", "h2", 1e9, 0), tp.flow("h1", "h2", 1e9, 0)}
			c := &collector{}
			s, r := run(t, cfg, c)
			var port sim.PortResult
			for _, p := range r.Ports {
				if p.Name == "s0->h2" {
					port = p
				}
			}
			_, q := series(s, c, "queue_bytes", "s0->h2")
			meanQ := mean(q[20:]) // skip the first 200 µs
			frac := float64(port.Marks) / float64(port.DataPackets)
			n := float64(port.DataPackets)
			t.Logf("mean queue %.0f B, p50 %d, max %d, marked %d of %d (%.4f)", meanQ, port.QueueP50, port.QueueMax, port.Marks, port.DataPackets, frac)
			switch tc.region {
			case "below":
				if port.QueueMax >= kmin {
					t.Fatalf("queue reached %d B, the case needs it below kmin", port.QueueMax)
				}
				if port.Marks != 0 {
					t.Errorf("%d marks below kmin", port.Marks)
				}
			case "above":
				if port.QueueP50 <= kmax {
					t.Fatalf("median queue %d B, the case needs it above kmax", port.QueueP50)
				}
				if frac < 0.97 {
					t.Errorf("marked fraction %.3f above kmax, want ~1", frac)
				}
			case "line":
				if meanQ <= kmin || meanQ >= kmax {
					t.Fatalf("mean queue %.0f B not between the thresholds", meanQ)
				}
				want := pmax * (meanQ - kmin) / (kmax - kmin)
				// The marking probability is linear in q between the thresholds,
				// so the expected fraction is the line at the mean queue seen at
				// dequeue. Bound: 4 binomial standard deviations over n marks,
				// plus 0.01 for the difference between the 10 µs-sampled mean
				// and the mean at dequeue instants (the queue moves by about
				// two 1036 B packets around its level: 0.4·2 KB/80 KB = 0.01).
				tol := 4*math.Sqrt(want*(1-want)/n) + 0.01
				if math.Abs(frac-want) > tol {
					t.Errorf("marked fraction %.4f at mean queue %.0f B, want %.4f ± %.4f (n=%d)", frac, meanQ, want, tol, port.DataPackets)
				}
			}
		})
	}
}

// Test 9: a link taken down mid-run moves its flows to the other ECMP paths
// and they still finish; a parameter event takes effect at its time.
func TestScriptedEvents(t *testing.T) {
	tp := mpccFatTree()
	cfg := baseConfig(t, tp, noneAlgo(t, 1))
	for i := 0; i < 8; i++ {
		cfg.Flows = append(cfg.Flows, tp.flow(fmt.Sprintf("h%d", i), fmt.Sprintf("h%d", 8+i), 3_000_000, 0))
	}
	const downAt = 100 * sim.Microsecond
	const paramAt = 150 * sim.Microsecond
	cfg.Events = []sim.EventSpec{
		{At: downAt, Kind: sim.EventLinkDown, Port: "agg0->core0"},
		{At: paramAt, Kind: sim.EventParams, Algo: -1, Params: map[string]float64{"windowBDPs": 2}},
	}
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	c := &collector{}
	s.Subscribe(c)
	tx := func() map[string]int64 {
		m := map[string]int64{}
		for _, p := range s.Result().Ports {
			m[p.Name] = p.TxBytes
		}
		return m
	}
	if err := s.RunUntil(downAt + 1); err != nil { // just past the event
		t.Fatal(err)
	}
	before := tx()
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	after := tx()
	r := s.Result()
	// every flow was still running when the link went down and finished
	// later; since the link carried some of them before and nothing after,
	// those flows moved to the remaining paths
	for _, f := range r.Flows {
		if !f.Finished || f.Finish <= downAt {
			t.Errorf("flow %d: finished %v at %d ps", f.ID, f.Finished, f.Finish)
		}
	}
	// the link carried traffic before it went down and nothing after; the
	// other uplinks of agg0 and the core0 links of the other pod carried the
	// rest (agg0 now reaches pod 1 through core1 only)
	if before["agg0->core0"] == 0 {
		t.Error("agg0->core0 carried nothing before going down: the case is vacuous")
	}
	if after["agg0->core0"] != before["agg0->core0"] || after["core0->agg0"] != before["core0->agg0"] {
		t.Errorf("agg0<->core0 sent %d/%d more bytes after going down",
			after["agg0->core0"]-before["agg0->core0"], after["core0->agg0"]-before["core0->agg0"])
	}
	if after["agg0->core1"] == before["agg0->core1"] {
		t.Error("agg0->core1 sent nothing after the event: agg0's traffic did not move")
	}
	if err := s.Conservation().Check(); err != nil {
		t.Fatal(err)
	}
	// windowBDPs 1 -> 2 at 150 µs: cwnd samples before are W, from then on 2W
	m, _ := s.MetricID("cwnd_bytes")
	w := float64(r.MaxBDP)
	var nBefore, nAfter int
	for _, x := range c.s {
		if x.Metric != m {
			continue
		}
		switch {
		case x.T < paramAt && x.Value == w:
			nBefore++
		case x.T >= paramAt && x.Value == 2*w:
			nAfter++
		default:
			t.Fatalf("cwnd %.0f at %d ps: want %.0f before %d ps and %.0f from then on", x.Value, x.T, w, paramAt, 2*w)
		}
	}
	if nBefore == 0 || nAfter == 0 {
		t.Errorf("cwnd samples before/after the event: %d/%d", nBefore, nAfter)
	}
}

// ECMP: flows between pods spread over both cores, and each flow keeps one
// path (no reordering, so no NACK and nothing retransmitted).
func TestECMPSpreadsFlows(t *testing.T) {
	tp := mpccFatTree()
	cfg := baseConfig(t, tp, noneAlgo(t, 1))
	for i := 0; i < 8; i++ {
		cfg.Flows = append(cfg.Flows, tp.flow(fmt.Sprintf("h%d", i), fmt.Sprintf("h%d", 8+i), 500_000, 0))
	}
	_, r := run(t, cfg)
	used := 0
	for _, p := range r.Ports {
		if len(p.Name) > 4 && p.Name[:3] == "agg" && p.Utilization > 0 && (p.Name[6:10] == "core") {
			used++
		}
	}
	if used < 3 {
		t.Errorf("only %d agg->core ports carried traffic of 8 flows", used)
	}
	if r.Retransmitted != 0 {
		t.Errorf("%d bytes retransmitted in a lossless run with per-flow ECMP", r.Retransmitted)
	}
}
