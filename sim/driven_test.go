package sim_test

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"cclab/sim"
)

// Receiver-driven transports (Homa, ExpressPass) on the engine: hand-computed
// cases for their mechanisms, and the engine's control packets, send
// limit, out-of-order receiver, credit queues, spraying and symmetric
// credit paths under them.

const (
	gbps100 = int64(100e9)
	wirePkt = int64(1036) // 1000 B payload + 36 B header
)

// pktNs is one full data packet's time on a 100 Gbps link.
func pktTimeAt100() sim.Time { return sim.Time(wirePkt * 8 * 10) } // 82.88 ns in ps

func within(t *testing.T, what string, got, want sim.Time, tol float64) {
	t.Helper()
	lo, hi := float64(want)*(1-tol), float64(want)*(1+tol)
	if float64(got) < lo || float64(got) > hi {
		t.Errorf("%s: %.2f µs, want %.2f µs ± %.0f%%", what, float64(got)/1e6, float64(want)/1e6, tol*100)
	}
}

// Homa's SRPT with two senders to one receiver through one switch (100
// Gbps, 1 µs links; RTTbytes = the 52 KB BDP of the 4.16 µs base RTT). A
// (200 KB) and B (1 MB) start together: both send 52 KB unscheduled at the
// top level; the receiver grants both (overcommitment 7), A at the higher
// scheduled level since it has fewer bytes left to grant, so the
// bottleneck sends B's unscheduled packets and all of A's before any of
// B's scheduled ones. The bottleneck never idles (grants return within an
// RTT while 104 unscheduled packets, 8.6 µs, are queued), so A finishes
// after 200 + 52 packet times and B after all 1200, each plus the first
// packet's way in (two links and one packet) and the final ACK's way back
// (two links and two 48 B frames). Tolerance 3%: the two bursts interleave
// at the switch at packet granularity.
func TestHomaSRPTTwoSenders(t *testing.T) {
	tp := star(3, gbps100, sim.Microsecond)
	cfg := algoConfig(t, tp, "homa", gbps100, nil)
	cfg.Flows = []sim.FlowSpec{tp.flow("h0", "h2", 200_000, 0), tp.flow("h1", "h2", 1_000_000, 0)}
	_, r := run(t, cfg)
	pkt := pktTimeAt100()
	in := 2*sim.Microsecond + pkt
	back := 2*sim.Microsecond + 2*sim.Time(48*8*10)
	within(t, "A (200 KB) FCT", fct(t, r, 0), in+252*pkt+back, 0.03)
	within(t, "B (1 MB) FCT", fct(t, r, 1), in+1200*pkt+back, 0.03)

	// B alone first, A 20 µs later: SRPT preempts B, and A finishes as if
	// it were alone (its ideal FCT) up to the B packets queued at the
	// bottleneck ahead of its first (at most RTTbytes, 52 packets): 10%
	cfg.Flows = []sim.FlowSpec{tp.flow("h1", "h2", 1_000_000, 0), tp.flow("h0", "h2", 200_000, 20*sim.Microsecond)}
	_, r = run(t, cfg)
	a := r.Flows[1]
	if !a.Finished || float64(a.FCT) > 1.10*float64(a.IdealFCT)+float64(52*pkt) {
		t.Errorf("A started during B: FCT %v, ideal %v: SRPT did not preempt B", a.FCT, a.IdealFCT)
	}
	if r.Flows[0].Finish < a.Finish {
		t.Error("B (1 MB) finished before A (200 KB), which started 20 µs after it")
	}

	// without overcommitment B gets no grant while A has bytes to grant:
	// A's FCT is the same, B's is longer by the grant round trips
	cfg.Flows = []sim.FlowSpec{tp.flow("h0", "h2", 200_000, 0), tp.flow("h1", "h2", 1_000_000, 0)}
	_, cfg.Algos[0].Params = resolveAlgo(t, "homa", gbps100, map[string]float64{"overcommit": 1})
	_, r1 := run(t, cfg)
	within(t, "A (200 KB) FCT without overcommitment", fct(t, r1, 0), in+252*pkt+back, 0.03)
	if b := fct(t, r1, 1); b < in+1200*pkt+back {
		t.Errorf("B without overcommitment: %v, before the line-rate bound", b)
	}
}

// A lone ExpressPass flow: its data rate is the line rate less the credits'
// share of the reverse link (48 / (48 + 1036) = 4.43%), reached within a
// few update periods from α = 1/2, with no data queue beyond the packet
// being forwarded. 4 MB: 4000 packets of 86.7 ns at the credit pace (347
// µs) plus the request's round trip and the ramp (about 15 µs, measured
// 95.4%): the goodput is within 94–100% of (1 − share) × 100 Gbps ×
// 1000/1036, and the steady state is that rate.
func TestExpressPassLoneFlow(t *testing.T) {
	tp := star(2, gbps100, sim.Microsecond)
	cfg := algoConfig(t, tp, "expresspass", gbps100, nil)
	cfg.Flows = []sim.FlowSpec{tp.flow("h0", "h1", 4_000_000, 0)}
	_, r := run(t, cfg)
	fct := fct(t, r, 0)
	share := 48.0 / (48 + float64(wirePkt))
	want := 100e9 * (1 - share) * 1000 / float64(wirePkt)
	got := 4_000_000 * 8 / (float64(fct) / 1e12)
	t.Logf("goodput %.2f Gbps, want ≤ %.2f Gbps (line rate less the credit share)", got/1e9, want/1e9)
	if got < 0.94*want || got > want {
		t.Errorf("goodput %.2f Gbps, want 94–100%% of %.2f Gbps", got/1e9, want/1e9)
	}
	if q := portResult(r, "s0->h1").QueueMax; q > 2*wirePkt {
		t.Errorf("data queue at the receiver's port reached %d B, want at most two packets", q)
	}
	if r.Drops != 0 {
		t.Errorf("%d data drops", r.Drops)
	}
}

// The incast: 16 × 500 KB to one host at 100 Gbps. ExpressPass
// keeps the bottleneck queue (every class, credits included) a few
// packets deep, under 100 KB; Homa's is bounded by its unscheduled bursts
// plus the overcommitment (7 granted messages × RTTbytes), and half the
// time by the overcommitment alone; both finish every flow with a mean FCT
// within 1.3× of HPCC's on the same incast.
func TestReceiverDrivenIncast(t *testing.T) {
	mean := func(r *sim.Result) float64 {
		s := 0.0
		for i := range r.Flows {
			s += float64(fct(t, r, i))
		}
		return s / float64(len(r.Flows))
	}
	results := map[string]*sim.Result{}
	for _, algo := range []string{"hpcc", "homa", "expresspass"} {
		tp := star(17, gbps100, sim.Microsecond)
		cfg := algoConfig(t, tp, algo, gbps100, nil)
		for i := 0; i < 16; i++ {
			cfg.Flows = append(cfg.Flows, tp.flow(fmt.Sprintf("h%d", i), "h16", 500_000, 0))
		}
		_, results[algo] = run(t, cfg)
	}
	hpcc := mean(results["hpcc"])
	for _, algo := range []string{"homa", "expresspass"} {
		r := results[algo]
		m := mean(r)
		q := portResult(r, "s0->h16")
		t.Logf("%s: mean FCT %.1f µs (HPCC %.1f µs), bottleneck queue max %d B, p50 %d B", algo, m/1e6, hpcc/1e6, q.QueueMax, q.QueueP50)
		if m > 1.3*hpcc {
			t.Errorf("%s: mean FCT %.1f µs, more than 1.3× HPCC's %.1f µs", algo, m/1e6, hpcc/1e6)
		}
	}
	if q := portResult(results["expresspass"], "s0->h16").QueueMax; q >= 100_000 {
		t.Errorf("expresspass: bottleneck queue reached %d B, want under 100 KB", q)
	}
	// Homa: RTTbytes 52 KB; flows 1–8 send it unscheduled, flows 9–16 one
	// packet (incast optimisation above 8 arriving flows); 7 scheduled
	// levels, so 7 messages granted at once
	const rtt = 52_000
	q := portResult(results["homa"], "s0->h16")
	if bound := int64(8*rtt + 8*wirePkt + 7*rtt); q.QueueMax > bound {
		t.Errorf("homa: bottleneck queue max %d B, above unscheduled bursts + overcommitment (%d B)", q.QueueMax, bound)
	}
	if q.QueueP50 > 7*rtt {
		t.Errorf("homa: bottleneck queue p50 %d B, above the overcommitment's 7 × RTTbytes", q.QueueP50)
	}
}

// On a lossy fabric (PFC off, a 200 KB buffer, 1% random loss on the
// receiver's link) both recover every loss: Homa by RESEND after its
// receiver timeout, ExpressPass by asking again for what its credits did
// not bring; a sender whose final ACK is lost probes with its last
// packet.
func TestReceiverDrivenLossRecovery(t *testing.T) {
	for _, algo := range []string{"homa", "expresspass"} {
		tp := star(9, gbps100, sim.Microsecond)
		cfg := algoConfig(t, tp, algo, gbps100, nil)
		cfg.Switch.PFC = false
		cfg.Switch.Buffer = 200_000
		cfg.Events = []sim.EventSpec{{At: 0, Kind: sim.EventLoss, Port: "s0->h8", Loss: 0.01}}
		for i := 0; i < 8; i++ {
			cfg.Flows = append(cfg.Flows, tp.flow(fmt.Sprintf("h%d", i), "h8", 500_000, 0))
		}
		_, r := run(t, cfg)
		if n := r.FlowsFinished(); n != 8 {
			t.Errorf("%s: %d of 8 flows finished on a lossy fabric", algo, n)
		}
		if r.Drops == 0 || r.Retransmitted == 0 {
			t.Errorf("%s: %d drops, %d B retransmitted: the case does not exercise recovery", algo, r.Drops, r.Retransmitted)
		}
		t.Logf("%s: %d drops, %d B sent again, ends at %v", algo, r.Drops, r.Retransmitted, r.SimTime)
	}
}

// Homa sprays its data per packet: one flow across pods of a k = 4
// fat-tree leaves its ToR on both uplinks, arrives out of order, and is
// taken in without a retransmission; with spraying off it keeps one path.
func TestHomaSprayingOutOfOrder(t *testing.T) {
	for _, spray := range []float64{1, 0} {
		tp := fatTreeK(4, gbps100, sim.Microsecond)
		cfg := algoConfig(t, tp, "homa", gbps100, map[string]float64{"spray": spray})
		cfg.Flows = []sim.FlowSpec{tp.flow("h0", "h15", 2_000_000, 0)}
		_, r := run(t, cfg)
		fct(t, r, 0)
		up0, up1 := portResult(r, "tor0->agg0").DataPackets, portResult(r, "tor0->agg1").DataPackets
		if spray == 1 && (up0 == 0 || up1 == 0) {
			t.Errorf("sprayed: data left tor0 on agg0 %d, agg1 %d times: want both", up0, up1)
		}
		if spray == 0 && up0 > 0 && up1 > 0 {
			t.Errorf("not sprayed: data left tor0 on both uplinks (%d, %d)", up0, up1)
		}
		if r.Retransmitted != 0 {
			t.Errorf("spray %v: %d B sent again: out-of-order arrival was taken for loss", spray, r.Retransmitted)
		}
	}
}

// ExpressPass data follows its credits' path back: on a k = 4 fat-tree
// every switch port that carries a flow's data is the reverse of a port
// its credits crossed, for flows whose ECMP hashes would pick other paths.
func TestExpressPassSymmetricPath(t *testing.T) {
	for _, dst := range []string{"h15", "h13", "h10", "h9", "h6", "h5"} {
		tp := fatTreeK(4, gbps100, sim.Microsecond)
		cfg := algoConfig(t, tp, "expresspass", gbps100, nil)
		cfg.Flows = []sim.FlowSpec{tp.flow("h0", dst, 500_000, 0)}
		_, r := run(t, cfg)
		fct(t, r, 0)
		tx := map[string]int64{}
		for _, p := range r.Ports {
			tx[p.Name] = p.TxBytes
		}
		hops := 0
		for _, p := range r.Ports {
			if !p.Switch || p.DataPackets == 0 {
				continue
			}
			hops++
			a, b, _ := strings.Cut(p.Name, "->")
			if tx[b+"->"+a] == 0 {
				t.Errorf("h0->%s: data left %s, but nothing crossed %s->%s the other way", dst, p.Name, b, a)
			}
		}
		if hops == 0 {
			t.Errorf("h0->%s: no switch port carried data", dst)
		}
	}
}

// Credits leave every port at most at their share of its rate, and a full
// credit queue drops them (the feedback ExpressPass works on), apart from
// data drops.
func TestCreditThrottling(t *testing.T) {
	tp := star(9, gbps100, sim.Microsecond)
	cfg := algoConfig(t, tp, "expresspass", gbps100, map[string]float64{"alpha": 1, "wInit": 0.5})
	for i := 0; i < 8; i++ {
		cfg.Flows = append(cfg.Flows, tp.flow(fmt.Sprintf("h%d", i), "h8", 1_000_000, 0))
	}
	_, r := run(t, cfg)
	share := 48.0 / (48 + float64(wirePkt))
	p := portResult(r, "h8->s0") // the receiver's NIC sends the credits
	rate := float64(p.TxBytes) * 8 / (float64(r.SimTime) / 1e12)
	// 8 final ACKs of 48 B besides the credits, and a burst of two
	allowed := share*100e9 + (8*48+2*48)*8/(float64(r.SimTime)/1e12)
	if rate > allowed*1.001 {
		t.Errorf("credits left the receiver at %.3f Gbps, above their share %.3f Gbps", rate/1e9, allowed/1e9)
	}
	drops := int64(0)
	for _, p := range r.Ports {
		drops += p.CreditDrops
	}
	if drops == 0 {
		t.Error("no credit dropped: 8 flows starting at the maximum credit rate must overflow the credit queue")
	}
	if r.Drops != 0 {
		t.Errorf("%d drops counted as data drops", r.Drops)
	}
}

// Same seed, same run, with the receiver-driven machinery at work.
func TestReceiverDrivenDeterministic(t *testing.T) {
	for _, algo := range []string{"homa", "expresspass"} {
		var results [2]*sim.Result
		var samples [2][]sim.Sample
		for i := range results {
			tp := fatTreeK(4, gbps100, sim.Microsecond)
			cfg := algoConfig(t, tp, algo, gbps100, nil)
			for j := 0; j < 12; j++ {
				cfg.Flows = append(cfg.Flows, tp.flow(fmt.Sprintf("h%d", j), fmt.Sprintf("h%d", 15-j%4), int64(50_000*(j+1)), sim.Time(j)*sim.Microsecond))
			}
			c := &collector{}
			_, results[i] = run(t, cfg, c)
			samples[i] = c.s
		}
		if !reflect.DeepEqual(results[0], results[1]) || !reflect.DeepEqual(samples[0], samples[1]) {
			t.Errorf("%s: two runs of the same config differ", algo)
		}
		if results[0].FlowsFinished() != 12 {
			t.Errorf("%s: %d of 12 flows finished", algo, results[0].FlowsFinished())
		}
	}
}

// A message whose every unscheduled packet is lost leaves its receiver
// unaware of it: the sender, having sent all it may and heard nothing,
// probes with its last packet after the timeout, the receiver learns of the
// message, grants it and asks for the rest; it finishes. (Without the probe
// it would wait for ever.)
func TestHomaLostFirstPackets(t *testing.T) {
	tp := star(2, gbps100, sim.Microsecond)
	cfg := algoConfig(t, tp, "homa", gbps100, map[string]float64{"resendTimeout": 100})
	cfg.Switch.PFC = false
	cfg.Events = []sim.EventSpec{
		{At: 0, Kind: sim.EventLoss, Port: "h0->s0", Loss: 1},
		{At: 10 * sim.Microsecond, Kind: sim.EventLoss, Port: "h0->s0", Loss: 0},
	}
	cfg.Flows = []sim.FlowSpec{tp.flow("h0", "h1", 200_000, 0)}
	_, r := run(t, cfg)
	f := r.Flows[0]
	if !f.Finished || f.Timeouts == 0 {
		t.Fatalf("flow finished %v after %d probes: want it finished after at least one", f.Finished, f.Timeouts)
	}
	t.Logf("finished at %v after %d probe(s), %d B sent again", f.FCT, f.Timeouts, r.Retransmitted)
}
