package cc

import (
	"testing"
)

// --- HPCC (HPCC paper §3.2–3.3; rdma-hw.cc UpdateRateHp, FastReactHp) ---

func newHPCC(t *testing.T, over map[string]float64) (*hpcc, *scriptEnv) {
	a, p := resolve(t, "hpcc", "", 100e9, over)
	h := a.NewSender(FlowInfo{LineRate: 100e9, MaxBDP: 50_000, BaseRTT: 10 * Microsecond}, p).(*hpcc)
	env := newEnv()
	h.Start(env)
	return h, env
}

// U from an INT stack: u = txRate/lineRate + min(q, q_prev)·maxRate/(lineRate·W)
// per hop, the largest taken, smoothed over min(τ, base RTT)/base RTT; then
// rate = Rc/(U/η) + W_AI.
func TestHPCCUtilisationFromINT(t *testing.T) {
	h, env := newHPCC(t, nil)
	hop := func(ts Time, tx, q int64) IntHop { return IntHop{TS: ts, TxBytes: tx, Qlen: q, Rate: 100e9} }
	// first ACK: the hops are remembered, nothing else changes
	h.OnAck(env, &Ack{Seq: 1000, SndNxt: 10_000, INT: []IntHop{hop(0, 0, 20_000), hop(0, 0, 0)}})
	if env.rate != 100e9 {
		t.Fatalf("rate changed on the first ACK: %d", env.rate)
	}
	// 1 µs later: hop 0 sent 12,500 B (100 Gbps) with min(q) = 10,000 B;
	// hop 1 sent 6,250 B (50 Gbps) with no queue
	h.OnAck(env, &Ack{Seq: 11_000, SndNxt: 20_000, INT: []IntHop{hop(Microsecond, 12_500, 10_000), hop(Microsecond, 6250, 0)}})
	u0 := 1 + 10_000.0*100e9/(100e9*50_000) // 1.2
	wantU := (1*(10-1) + u0*1) / 10.0       // EWMA from u = 1 over 1 µs of a 10 µs base RTT
	if !near(h.u, wantU, 1e-12) {
		t.Fatalf("U = %.6f, want %.6f", h.u, wantU)
	}
	wantRate := 100e9/(wantU/0.95) + 40e6
	if !near(float64(env.rate), wantRate, 1) || !near(h.rc, wantRate, 1) {
		t.Fatalf("rate %d, want %.0f (Rc committed: %g)", env.rate, wantRate, h.rc)
	}
	if env.gauges[0] != h.u {
		t.Error("hpcc_u gauge not reported")
	}
	// the window follows the rate: max BDP × rate / line rate
	if want := int64(50_000 * float64(env.rate) / 100e9); env.window != want {
		t.Fatalf("window %d, want %d", env.window, want)
	}
}

// Fast react: between once-per-RTT updates, ACKs set the rate from the
// committed reference Rc without committing (HPCC paper Algorithm 1,
// lines 18–24: only the update at the end of an RTT moves W^c).
func TestHPCCFastReactDoesNotCommit(t *testing.T) {
	h, env := newHPCC(t, nil)
	hop := func(ts Time, tx int64, q int64) []IntHop {
		return []IntHop{{TS: ts, TxBytes: tx, Qlen: q, Rate: 100e9}}
	}
	h.OnAck(env, &Ack{Seq: 1000, SndNxt: 10_000, INT: hop(0, 0, 0)})
	h.OnAck(env, &Ack{Seq: 11_000, SndNxt: 20_000, INT: hop(Microsecond, 12_500, 40_000)}) // commit
	rc := h.rc
	// ACKs below SndNxt of the last commit (20,000): fast reactions
	h.OnAck(env, &Ack{Seq: 12_000, SndNxt: 21_000, INT: hop(2*Microsecond, 25_000, 80_000)})
	if h.rc != rc {
		t.Fatalf("fast reaction committed Rc: %g -> %g", rc, h.rc)
	}
	fast := env.rate
	if float64(fast) >= rc {
		t.Fatalf("fast reaction to a deeper queue did not lower the rate below Rc (%d vs %g)", fast, rc)
	}
	// with fastReact off the same ACK changes nothing
	h2, env2 := newHPCC(t, map[string]float64{"fastReact": 0})
	h2.OnAck(env2, &Ack{Seq: 1000, SndNxt: 10_000, INT: hop(0, 0, 0)})
	h2.OnAck(env2, &Ack{Seq: 11_000, SndNxt: 20_000, INT: hop(Microsecond, 12_500, 40_000)})
	before := env2.rate
	h2.OnAck(env2, &Ack{Seq: 12_000, SndNxt: 21_000, INT: hop(2*Microsecond, 25_000, 80_000)})
	if env2.rate != before {
		t.Fatal("fastReact 0 still reacted between updates")
	}
}

// Below the target (k < 1) with maxStage > 0: additive increase stages
// before the multiplicative step (HPCC paper §3.3, "MI_THRESH").
func TestHPCCAdditiveStages(t *testing.T) {
	h, env := newHPCC(t, map[string]float64{"maxStage": 2})
	hop := func(ts Time, tx int64) []IntHop { return []IntHop{{TS: ts, TxBytes: tx, Rate: 100e9}} }
	h.OnAck(env, &Ack{Seq: 1, SndNxt: 1000, INT: hop(0, 0)})
	h.rc, h.u = 50e9, 0.5 // a flow at half rate on a half-used link
	seq := int64(1000)
	for i := 1; i <= 3; i++ {
		// each ACK passes the data sent at the last update: a full update.
		// 6,250 B per µs: 50 Gbps, no queue
		h.OnAck(env, &Ack{Seq: seq + 1, SndNxt: seq + 1000, INT: hop(Time(i)*Microsecond, int64(i)*6250)})
		seq += 1000
		if i < 3 && h.incStage != i {
			t.Fatalf("update %d: incStage %d, want %d (additive stage)", i, h.incStage, i)
		}
	}
	// two additive stages (+40 Mb/s each), then k < 1 with incStage = 2 = maxStage: Rc/k + ai
	if h.incStage != 0 {
		t.Fatalf("incStage %d after the multiplicative step", h.incStage)
	}
	if h.rc <= 50e9+80e6 {
		t.Fatalf("Rc %g: the multiplicative step did not raise the rate", h.rc)
	}
}

// --- TIMELY (TIMELY paper §4.2 Algorithm 1; rdma-hw.cc UpdateRateTimely) ---

func newTimely(t *testing.T) (*timely, *scriptEnv) {
	a, p := resolve(t, "timely", "", 100e9, nil)
	tm := a.NewSender(FlowInfo{LineRate: 100e9, MaxBDP: 50_000}, p).(*timely)
	env := newEnv()
	tm.Start(env)
	return tm, env
}

// The three regions, once per RTT: below Tlow increase (AI, then HAI after
// five increases), above Thigh rate·(1 − β(1 − Thigh/rtt)), between them
// rate·(1 − β·gradient) for a rising RTT and an increase for a falling one.
func TestTimelyRegions(t *testing.T) {
	tm, env := newTimely(t)
	seq := int64(0)
	ack := func(rtt Time) {
		seq += 1000
		env.now += 100 * Microsecond
		tm.OnAck(env, &Ack{Seq: seq, SndNxt: seq + 500, SentAt: env.now - rtt})
	}
	tm.rate = 50e9
	ack(20 * Microsecond) // first ACK: remembers the RTT only
	if tm.rate != 50e9 {
		t.Fatal("first ACK changed the rate")
	}
	for i := 0; i < 5; i++ { // below Tlow: +100 Mb/s
		ack(20 * Microsecond)
	}
	if !near(tm.rate, 50.5e9, 1) {
		t.Fatalf("after 5 low-RTT updates: %g, want 50.5 Gbps", tm.rate)
	}
	ack(20 * Microsecond) // sixth in a row: +500 Mb/s
	if !near(tm.rate, 51e9, 1) {
		t.Fatalf("hyper increase: %g, want 51 Gbps", tm.rate)
	}
	// above Thigh (500 µs): rtt 1 ms → rate·(1 − 0.8·(1 − 0.5)) = 0.6·rate
	r := tm.rate
	ack(1000 * Microsecond)
	if !near(tm.rate, 0.6*r, 1) {
		t.Fatalf("above Thigh: %g, want %g", tm.rate, 0.6*r)
	}
	// between: the RTT rises by 20 µs per update; rttDiff is an EWMA with the
	// newest difference weighted 0.875 (HPCC's TimelyAlpha)
	tm.rttDiff, tm.lastRTT = 0, 100*Microsecond
	r = tm.rate
	ack(120 * Microsecond)
	diff := 0.875 * float64(20*Microsecond)
	want := r * (1 - 0.8*diff/float64(20*Microsecond))
	if !near(tm.rate, want, 1) {
		t.Fatalf("gradient region, rising: %g, want %g", tm.rate, want)
	}
	// falling RTT in the gradient region: increase
	r = tm.rate
	ack(60 * Microsecond)
	if tm.rate <= r {
		t.Fatalf("gradient region, falling: %g did not increase from %g", tm.rate, r)
	}
	if len(env.events[1]) == 0 || len(env.events[0]) == 0 {
		t.Error("RTT and gradient series not reported")
	}
}

// Updates happen once per RTT: ACKs that do not pass the sequence sent at the
// last update change nothing.
func TestTimelyOncePerRTT(t *testing.T) {
	tm, env := newTimely(t)
	tm.OnAck(env, &Ack{Seq: 1000, SndNxt: 50_000, SentAt: 0})
	env.now = 10 * Microsecond
	tm.OnAck(env, &Ack{Seq: 2000, SndNxt: 51_000, SentAt: 0}) // within the RTT
	if tm.lastUpdate != 50_000 || len(env.events[0]) != 0 {
		t.Fatalf("an ACK inside the RTT updated: lastUpdate %d, %d samples", tm.lastUpdate, len(env.events[0]))
	}
	tm.OnAck(env, &Ack{Seq: 50_001, SndNxt: 90_000, SentAt: 0})
	if tm.lastUpdate != 90_000 || len(env.events[0]) != 1 {
		t.Fatalf("the ACK past the RTT did not update: lastUpdate %d", tm.lastUpdate)
	}
}

// --- DCTCP (RFC 8257 §3.3–3.4; rdma-hw.cc HandleAckDctcp) ---

// alpha ← (1−g)·alpha + g·F once per window; an ECN echo outside CWR cuts
// the rate by alpha/2 and enters CWR until the data sent at the cut is
// acknowledged; outside CWR the rate grows by ai once per window.
func TestDCTCPWindowLaw(t *testing.T) {
	a, p := resolve(t, "dctcp", "", 100e9, nil)
	d := a.NewSender(FlowInfo{LineRate: 100e9, MaxBDP: 100_000, MTU: 1000}, p).(*dctcp)
	env := newEnv()
	d.Start(env)
	// first ACK: starts the first window of (10,000/1000 + 1) = 11 packets
	d.OnAck(env, &Ack{Seq: 1000, SndNxt: 10_000})
	if d.batch != 11 || d.alpha != 1 {
		t.Fatalf("first window: batch %d alpha %g", d.batch, d.alpha)
	}
	// an ECN echo inside the window: cut by alpha/2 = 50%, enter CWR
	d.OnAck(env, &Ack{Seq: 2000, SndNxt: 10_000, ECNMarked: 1})
	if !near(float64(env.rate), 50e9, 1) || !d.cwr || d.highSeq != 10_000 {
		t.Fatalf("cut: rate %d cwr %v highSeq %d", env.rate, d.cwr, d.highSeq)
	}
	d.OnAck(env, &Ack{Seq: 3000, SndNxt: 10_000, ECNMarked: 1}) // inside CWR: no second cut
	if !near(float64(env.rate), 50e9, 1) {
		t.Fatalf("second cut inside CWR: %d", env.rate)
	}
	// the window ends: F = 2/11 marked, alpha = (15/16) + (1/16)(2/11); CWR ends
	d.OnAck(env, &Ack{Seq: 10_001, SndNxt: 20_000})
	want := 15.0/16 + (1.0/16)*(2.0/11)
	if !near(d.alpha, want, 1e-12) || d.cwr {
		t.Fatalf("alpha %g (want %g), cwr %v", d.alpha, want, d.cwr)
	}
	// outside CWR at a new window: +615 Mb/s
	if !near(float64(env.rate), 50e9+615e6, 1) {
		t.Fatalf("additive increase: rate %d", env.rate)
	}
	if env.window != int64(100_000*float64(env.rate)/100e9) {
		t.Fatalf("window %d does not follow the rate", env.window)
	}
}

// --- QCN (Alizadeh et al., SIGMETRICS'11 §2.1; 802.1Qau pseudo-code) ---

// Congestion point: Fb = (Q − Q_eq) + w·(Q − Q_old) at each sample, Q_old the
// queue at the previous sample, quantised to 6 bits against Fb_max, sent
// only when positive.
func TestQCNCongestionPointFb(t *testing.T) {
	a, p := resolve(t, "qcn", "", 10e9, map[string]float64{"fbMax": 96_000})
	cp := a.NewCongestionPoint(PortInfo{}, p)
	if p.Get("qeq") != 33_000 {
		t.Fatalf("Q_eq at 10 Gbps: %g B, want 33,000 (22 packets)", p.Get("qeq"))
	}
	env := newEnv()
	steps := []struct {
		q    int64
		fb   int
		send bool
	}{
		{0, 0, false},       // Fb = −33,000
		{40_000, 58, true},  // 7,000 + 2·40,000 = 87,000 → ⌊64·87/96⌋
		{40_000, 4, true},   // 7,000 + 0 → ⌊64·7/96⌋
		{37_000, 0, false},  // 4,000 − 2·3,000 < 0
		{100_000, 63, true}, // 67,000 + 2·63,000: clipped to 63
	}
	// Fb_max = 96,000 B (64 packets of 1500 B): one 6-bit unit per packet
	for i, st := range steps {
		env.rand = []float64{0} // sample this packet
		fb, send := cp.OnEnqueue(env, st.q, 1500)
		if fb != st.fb || send != st.send {
			t.Fatalf("step %d (Q = %d): fb %d send %v, want %d %v", i, st.q, fb, send, st.fb, st.send)
		}
	}
	env.rand = []float64{0.5} // not sampled at 1%
	if _, send := cp.OnEnqueue(env, 1e6, 1500); send {
		t.Fatal("an unsampled packet produced feedback")
	}
}

// Reaction point: R_T ← R_C, R_C ← R_C(1 − G_d·Fb); five byte-counter
// cycles of fast recovery (R_C ← (R_C + R_T)/2, R_T fixed), then active
// increase (R_T += R_AI each half-length cycle), and hyper-active increase
// once the timer stage is past fast recovery too.
func TestQCNReactionPoint(t *testing.T) {
	a, p := resolve(t, "qcn", "", 10e9, nil)
	r := a.NewSender(FlowInfo{LineRate: 10e9}, p).(*qcnRP)
	env := newEnv()
	r.Start(env)
	if env.rate != Unlimited {
		t.Fatal("a source starts with a limiter")
	}
	r.OnQCN(env, QCNFeedback{Fb: 32})
	if !near(r.rc, 10e9*(1-32.0/128), 1) || r.rt != 10e9 {
		t.Fatalf("cut: Rc %g Rt %g", r.rc, r.rt)
	}
	send := func(bytes int64) {
		for bytes > 0 {
			r.OnSend(env, 1452, 1500, false)
			bytes -= 1500
		}
	}
	rc := r.rc
	for c := 1; c <= 5; c++ {
		send(150_000)
		rc = (rc + 10e9) / 2
		if !near(r.rc, rc, 1) || r.rt != 10e9 {
			t.Fatalf("fast recovery cycle %d: Rc %g (want %g) Rt %g", c, r.rc, rc, r.rt)
		}
	}
	if env.gauges[1] != qcnFastRecovery {
		t.Fatalf("stage %g after five cycles, want fast recovery", env.gauges[1])
	}
	// the limiter is released at line rate, so cut again to watch the increase
	r.OnQCN(env, QCNFeedback{Fb: 64})
	for i := 0; i < 5; i++ {
		send(150_000)
	}
	rt := r.rt
	send(150_000) // sixth cycle: active increase, +5 Mb/s
	if !near(r.rt, rt+5e6, 1) || env.gauges[1] != qcnActive {
		t.Fatalf("active increase: Rt %g (want %g), stage %g", r.rt, rt+5e6, env.gauges[1])
	}
	send(75_000) // from the seventh on, cycles are half as long (50 packets)
	if !near(r.rt, rt+10e6, 1) {
		t.Fatalf("half-length active cycle: Rt %g, want %g", r.rt, rt+10e6)
	}
	// six timer periods push the timer stage past fast recovery as well:
	// hyper-active increase by R_HAI·(min stage − 5)
	for i := 0; i < 6; i++ {
		env.fire(t, r, qcnTimer)
	}
	if env.gauges[1] != qcnHyper {
		t.Fatalf("stage %g, want hyper-active", env.gauges[1])
	}
	if len(env.events[0]) != 2 || env.events[0][1] != 64 {
		t.Errorf("feedback series %v", env.events[0])
	}
}

// QCN-AIMD: the cut has no target and no averaging; each byte-counter
// cycle adds R_AI (the paper's §2.4).
func TestQCNAIMD(t *testing.T) {
	a, p := resolve(t, "qcn_aimd", "", 10e9, nil)
	r := a.NewSender(FlowInfo{LineRate: 10e9}, p).(*qcnRP)
	env := newEnv()
	r.Start(env)
	r.OnQCN(env, QCNFeedback{Fb: 64})
	if !near(r.rc, 5e9, 1) {
		t.Fatalf("cut to %g, want half", r.rc)
	}
	for c := 1; c <= 3; c++ {
		for i := 0; i < 100; i++ {
			r.OnSend(env, 1452, 1500, false)
		}
		if want := 5e9 + float64(c)*5e6; !near(r.rc, want, 1) {
			t.Fatalf("cycle %d: Rc %g, want %g", c, r.rc, want)
		}
	}
	if _, ok := env.timers[qcnTimer]; ok {
		t.Error("QCN-AIMD armed a timer")
	}
}

// perHop (HPCC's MULTI_RATE): every hop keeps its own U, Rc and stage; a
// measured hop proposes step(Rc_i, U_i), a hop with nothing new proposes its
// Rc_i, the flow takes the smallest, and a full update commits only the hops
// that were measured. The gauge is the largest hop U.
func TestHPCCPerHop(t *testing.T) {
	h, env := newHPCC(t, map[string]float64{"perHop": 1})
	hop := func(ts Time, tx, q int64) IntHop { return IntHop{TS: ts, TxBytes: tx, Qlen: q, Rate: 100e9} }
	h.OnAck(env, &Ack{Seq: 1, SndNxt: 1000, INT: []IntHop{hop(0, 0, 20_000), hop(0, 0, 0)}})
	// 1 µs later: hop 0 at line rate with 10,000 B of queue (u = 1.2), hop 1
	// at half rate with none (u = 0.5)
	h.OnAck(env, &Ack{Seq: 1001, SndNxt: 2000, INT: []IntHop{hop(Microsecond, 12_500, 10_000), hop(Microsecond, 6250, 0)}})
	u0 := (1*9 + 1.2) / 10.0
	u1 := (1*9 + 0.5) / 10.0
	if !near(h.hop[0].u, u0, 1e-12) || !near(h.hop[1].u, u1, 1e-12) {
		t.Fatalf("hop U %.6f %.6f, want %.6f %.6f", h.hop[0].u, h.hop[1].u, u0, u1)
	}
	r0 := 100e9/(u0/0.95) + 40e6
	r1 := min(100e9/(u1/0.95)+40e6, 100e9)
	if !near(float64(env.rate), min(r0, r1), 1) {
		t.Fatalf("rate %d, want the smaller hop rate %.0f", env.rate, min(r0, r1))
	}
	if !near(h.hop[0].rc, r0, 1) || !near(h.hop[1].rc, r1, 1) {
		t.Fatalf("committed Rc %g %g, want %g %g", h.hop[0].rc, h.hop[1].rc, r0, r1)
	}
	if env.gauges[0] != max(h.hop[0].u, h.hop[1].u) {
		t.Fatalf("gauge %g, want the largest hop U %g", env.gauges[0], max(h.hop[0].u, h.hop[1].u))
	}
	// next update: hop 0 has no new timestamp (not measured), hop 1 is idle
	// now; hop 0 proposes its Rc and keeps its state
	rc0, st0 := h.hop[0].rc, h.hop[0].incStage
	h.hop[1].rc = 100e9 // so that hop 1 alone would send at line rate
	h.OnAck(env, &Ack{Seq: 2001, SndNxt: 3000, INT: []IntHop{hop(Microsecond, 12_500, 10_000), hop(2*Microsecond, 6250, 0)}})
	if h.hop[0].rc != rc0 || h.hop[0].incStage != st0 {
		t.Fatal("an unmeasured hop's Rc or stage changed")
	}
	if !near(float64(env.rate), rc0, 1) {
		t.Fatalf("rate %d, want the unmeasured hop's Rc %g", env.rate, rc0)
	}
}

// With coalesced ACKs (host.ackEvery > 1), the marked fraction counts
// marked packets: one ACK for three marked packets counts three.
func TestDCTCPCountsMarkedPackets(t *testing.T) {
	a, p := resolve(t, "dctcp", "", 100e9, nil)
	d := a.NewSender(FlowInfo{LineRate: 100e9, MaxBDP: 100_000, MTU: 1000}, p).(*dctcp)
	env := newEnv()
	d.Start(env)
	d.OnAck(env, &Ack{Seq: 1000, SndNxt: 10_000}) // window of 11 packets
	d.OnAck(env, &Ack{Seq: 4000, SndNxt: 10_000, Packets: 3, ECNMarked: 3})
	d.OnAck(env, &Ack{Seq: 10_001, SndNxt: 20_000})
	want := 15.0/16 + (1.0/16)*(3.0/11)
	if !near(d.alpha, want, 1e-12) {
		t.Fatalf("alpha %g, want %g (3 of 11 packets marked)", d.alpha, want)
	}
}

// The pseudo-code's quantiser: with fbMax left at 0, Fb_max = Q_eq·(2w+1).
func TestQCNDefaultQuantiser(t *testing.T) {
	a, p := resolve(t, "qcn", "", 10e9, nil)
	cp := a.NewCongestionPoint(PortInfo{}, p)
	env := newEnv()
	env.rand = []float64{0}
	cp.OnEnqueue(env, 33_000, 1500) // Q = Q_eq, Q_old = 0: Fb = 2·33,000
	env.rand = []float64{0}
	// Q = 49,500: Fb = 16,500 + 2·16,500 = 49,500 = Fb_max/3.33 → ⌊64·49.5/165⌋ = 19
	if fb, _ := cp.OnEnqueue(env, 49_500, 1500); fb != 19 {
		t.Fatalf("fb %d, want 19 against Fb_max = Q_eq·5 = 165,000 B", fb)
	}
}

// Hyper-active increase adds R_HAI·(min(stages) − 5) to the target; a
// feedback restarts both counters and the timer; no cut exceeds the
// standard's minimum decrease factor 0.5; extra fast recovery keeps the
// target and the running cycle.
func TestQCNIncreaseAndOptions(t *testing.T) {
	a, p := resolve(t, "qcn", "", 10e9, map[string]float64{"timer": 1})
	r := a.NewSender(FlowInfo{LineRate: 10e9}, p).(*qcnRP)
	env := newEnv()
	r.Start(env)
	env.now = 5 * Microsecond
	r.OnQCN(env, QCNFeedback{Fb: 40})
	if env.timers[qcnTimer] != env.now+Millisecond {
		t.Fatalf("timer at %d after feedback, want one period later", env.timers[qcnTimer])
	}
	// both stages to 6: six byte-counter cycles and six timer periods
	r.bcStage, r.tStage = 6, 5
	r.rt = 8e9 // below line rate, so the increase is not capped
	rt := r.rt
	env.fire(t, r, qcnTimer) // tStage 6: hyper, +50 Mb/s × (6 − 5)
	if !near(r.rt, rt+50e6, 1) {
		t.Fatalf("hyper-active: Rt %g, want %g", r.rt, rt+50e6)
	}
	r.bcStage = 8
	rt = r.rt
	env.fire(t, r, qcnTimer) // tStage 7, bcStage 8: +50 Mb/s × 2
	if !near(r.rt, rt+100e6, 1) {
		t.Fatalf("hyper-active, stage 7: Rt %g, want %g", r.rt, rt+100e6)
	}
	// a feedback restarts the counters and the timer
	env.now += 3 * Microsecond
	r.OnQCN(env, QCNFeedback{Fb: 10})
	if r.bcStage != 0 || r.tStage != 0 || r.bc != 150_000 || env.timers[qcnTimer] != env.now+Millisecond {
		t.Fatalf("after feedback: stages %d %d, byte counter %d, timer %d", r.bcStage, r.tStage, r.bc, env.timers[qcnTimer])
	}

	// the largest gain: a cut is clamped to half
	a, p = resolve(t, "qcn", "", 10e9, map[string]float64{"gd": 1.0 / 64})
	r = a.NewSender(FlowInfo{LineRate: 10e9}, p).(*qcnRP)
	r.Start(env)
	r.OnQCN(env, QCNFeedback{Fb: 63})
	if !near(r.rc, 5e9, 1) {
		t.Fatalf("cut with G_d·Fb = 0.98: Rc %g, want 5 Gbps", r.rc)
	}

	// extra fast recovery: a second feedback before a cycle ends keeps R_T
	// and the byte counter; after a cycle has ended, R_T follows R_C again
	for _, efr := range []float64{0, 1} {
		a, p = resolve(t, "qcn", "", 10e9, map[string]float64{"extraFastRecovery": efr})
		r = a.NewSender(FlowInfo{LineRate: 10e9}, p).(*qcnRP)
		r.Start(env)
		r.OnQCN(env, QCNFeedback{Fb: 32}) // Rc 7.5 G, Rt 10 G
		for i := 0; i < 10; i++ {
			r.OnSend(env, 1452, 1500, false)
		}
		r.OnQCN(env, QCNFeedback{Fb: 32})
		wantRT, wantBC := 7.5e9, int64(150_000)
		if efr == 1 {
			wantRT, wantBC = 10e9, 135_000
		}
		if !near(r.rt, wantRT, 1) || r.bc != wantBC || !near(r.rc, 7.5e9*0.75, 1) {
			t.Fatalf("extraFastRecovery %g: Rt %g byte counter %d Rc %g, want %g %d", efr, r.rt, r.bc, r.rc, wantRT, wantBC)
		}
	}
}
