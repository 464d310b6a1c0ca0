package cc

import (
	"math"
	"math/rand/v2"
	"testing"

	"cclab/cc/qp"
)

// Exp. 1's flow (extract §4.1): 1 Gbps NIC, max BDP 3750 B (a 30 µs base
// RTT), 1000 B payload + 48 B header + 32 B INT = 1080 B on the wire.
func newMPCC(t *testing.T, over map[string]float64) (*mpcc, *scriptEnv) {
	t.Helper()
	a, p := resolve(t, "mpcc", "", 1e9, over)
	m := a.NewSender(FlowInfo{LineRate: 1e9, MaxBDP: 3750, BaseRTT: 30 * Microsecond, MTU: 1000, Header: 48}, p).(*mpcc)
	env := newEnv()
	env.wallStep = 7
	m.Start(env)
	return m, env
}

func hop(q int64, n int32, rate int64) IntHop { return IntHop{Qlen: q, Flows: n, Rate: rate} }

func TestMPCCStart(t *testing.T) {
	m, env := newMPCC(t, nil)
	if m.pkt != 1080 || env.window != 3750 || env.rate != 1e9 {
		t.Fatalf("start: packet %g B, window %d, rate %d; want 1080, maxBDP 3750, line rate", m.pkt, env.window, env.rate)
	}
}

// Algorithm 1: the hop with the largest queue is the state; of equal queues
// the first (nearest the sender); its N and line rate set the fair window
// W_f = R_out·P_BD/(R_in·N).
func TestMPCCSelectsMostCongestedHop(t *testing.T) {
	m, env := newMPCC(t, nil)
	m.OnAck(env, &Ack{INT: []IntHop{hop(500, 2, 1e9), hop(2000, 4, 2e9), hop(2000, 3, 1e9)}})
	if env.gauges[mpccSeriesN] != 4 || env.gauges[mpccSeriesQInt] != 2000 {
		t.Fatalf("selected N %g, Q %g; want hop 1 (N 4, Q 2000)", env.gauges[mpccSeriesN], env.gauges[mpccSeriesQInt])
	}
	if want := 2e9 * 3750 / (1e9 * 4); env.gauges[mpccSeriesWFair] != want {
		t.Fatalf("W_f %g, want %g (hop 1's rate)", env.gauges[mpccSeriesWFair], want)
	}
}

// Every queue empty: with solveOnEmpty off (the thesis' rule, L552) the
// window is kept and no QP is solved. With it on (the default) the
// controller solves at the hop with the most flows with Q = 0; with nothing
// in flight above the fair share the optimum is U = 0, i.e. the fair window.
func TestMPCCEmptyQueues(t *testing.T) {
	m, env := newMPCC(t, map[string]float64{"solveOnEmpty": 0})
	m.w = 500
	m.apply(env)
	empty := []IntHop{hop(0, 2, 1e9), hop(0, 4, 1e9)}
	m.OnAck(env, &Ack{INT: empty})
	if m.w != 500 || env.window != 500 || len(env.events[mpccSeriesSolve]) != 0 {
		t.Fatalf("empty queues: window %g (engine %d), %d solves; want the window kept and no solve",
			m.w, env.window, len(env.events[mpccSeriesSolve]))
	}
	m, env = newMPCC(t, nil) // solveOnEmpty is the default
	m.w = 500
	m.apply(env)
	m.OnAck(env, &Ack{INT: empty})
	if want := 1e9 * 3750 / (1e9 * 4); math.Abs(m.w-want) > 1e-6 || len(env.events[mpccSeriesSolve]) != 1 {
		t.Fatalf("solveOnEmpty: window %g, want the fair share of the 4-flow hop %g", m.w, want)
	}
}

// mpccStep reproduces the controller's model constants for one ACK.
func mpccStep(m *mpcc, hops []IntHop, sel int) (wf, b float64, tau int) {
	d := m.baseRTT
	for _, h := range hops {
		d += float64(h.Qlen) * 8 / float64(h.Rate)
	}
	n := float64(hops[sel].Flows)
	wf = float64(hops[sel].Rate) * m.pbd / (m.lineRate * n)
	dt := m.pkt * d / math.Max(m.w, m.pkt)
	b = dt * n * m.lineRate / (8 * m.pbd)
	return wf, b, int(math.Round(d / dt))
}

// Horizon 1 and no bound active: the first move is the closed form
// W̄ = −B·W_Q·x/(B²·W_Q + W_R) (extract §2.8, step 5), with B from
// Δt = 1080·D/W (A.2) and D the base RTT plus the queueing delay (eq. 2.2).
func TestMPCCClosedFormHorizon1(t *testing.T) {
	m, env := newMPCC(t, map[string]float64{"horizon": 1, "wq": 1, "wr": 10})
	hops := []IntHop{hop(0, 4, 1e9), hop(300, 4, 1e9)}
	wf, b, _ := mpccStep(m, hops, 1)
	m.OnAck(env, &Ack{INT: hops}) // first ACK: no history, x = Q
	x := 300.0
	want := wf - b*x/(b*b+10)
	if math.Abs(m.w-want) > 1e-6 {
		t.Fatalf("window %.6f, want W_f + W̄ = %.6f (B %.4f)", m.w, want, b)
	}
	if env.window != int64(m.w) {
		t.Fatalf("engine window %d, want %d", env.window, int64(m.w))
	}
	// pacing at R_in·W/P_BD, not below one packet per base RTT
	if want := int64(1e9 * math.Max(m.w, 1080) / 3750); env.rate != want {
		t.Fatalf("pacing %d bps, want %d", env.rate, want)
	}
}

// The delayed model (eq. 3.7, A = 1): x = Q + B·Σ_{i<τ} (W(k−1−i) − W_f)
// over the last τ = round(D/Δt) windows, most recent first.
func TestMPCCPredictor(t *testing.T) {
	m, env := newMPCC(t, nil)
	for _, w := range []float64{3000, 2500, 2000, 1500, 1200, 1000} {
		m.w = w
		m.record()
	}
	m.w = 1000
	hops := []IntHop{hop(2160, 4, 1e9)}
	wf, b, tau := mpccStep(m, hops, 0)
	if tau != 1 {
		// W = 1000 < one packet: Δt = D, one step of loop delay
		t.Fatalf("τ = %d at a one-packet window, want 1", tau)
	}
	m.w = 3000 // three packets in flight: τ = round(3000/1080) = 3
	wf, b, tau = mpccStep(m, hops, 0)
	if tau != 3 {
		t.Fatalf("τ = %d at 3000 B, want 3", tau)
	}
	want := 2160 + b*((1000-wf)+(1200-wf)+(1500-wf))
	m.OnAck(env, &Ack{INT: hops})
	if got := env.gauges[mpccSeriesQPred]; math.Abs(got-want) > 1e-6 {
		t.Fatalf("prediction %.6f, want %.6f", got, want)
	}
}

// The corrected QP against the extract's test vectors (§2.9: A = 1,
// B = 1.152, P_BD = 3750, N = 4, W_f = 937.5): the first move of the plan,
// to the 3 decimals printed (±0.01), and the infeasible case (x = 20000 >
// (N−1)·P_BD + B·W_f) solved with softened queue bounds: the harshest cut the
// box allows, U_0 = −W_f.
func TestMPCCQPVectors(t *testing.T) {
	cases := []struct {
		x, wr float64
		p     int
		u0    float64
		soft  bool
	}{
		{11250, 1, 3, -937.5, false},
		{11250, 10, 3, -937.5, false},
		{11250, 100, 3, -366.219, false},
		{300, 10, 3, -65.001, false},
		{11250, 10, 5, -937.5, false},
		{300, 10, 5, -75.630, false},
		{11250, 100, 10, -877.66, false},
		{300, 10, 20, -79.15, false},
		{20000, 10, 5, -937.5, true},
	}
	for _, c := range cases {
		w := newMPCCQP(c.p)
		u0, soft, ok := w.solve(1.152, 1, c.wr, c.x, 4, 3750, 937.5)
		if !ok || soft != c.soft || math.Abs(u0-c.u0) > 0.01 {
			t.Errorf("x %g 1:%g P %d: U0 %.4f soft %v ok %v; want %.3f soft %v", c.x, c.wr, c.p, u0, soft, ok, c.u0, c.soft)
		}
	}
}

// A window driven to 0 keeps the flow alive: one byte of window (one packet
// in flight) and one packet per base RTT of pacing.
func TestMPCCKeepAlive(t *testing.T) {
	m, env := newMPCC(t, map[string]float64{"wr": 1})
	m.OnAck(env, &Ack{INT: []IntHop{hop(11_250, 4, 1e9)}})
	if m.w != 0 {
		t.Fatalf("window %g after a full queue at 1:1, want 0 (the extract's first vector)", m.w)
	}
	if env.window != 1 || env.rate != int64(1e9*1080/3750) {
		t.Fatalf("engine window %d, rate %d; want 1 B and one packet per base RTT", env.window, env.rate)
	}
	m2, env2 := newMPCC(t, map[string]float64{"wr": 1, "pacing": 0})
	m2.OnAck(env2, &Ack{INT: []IntHop{hop(11_250, 4, 1e9)}})
	if env2.window != 1 || env2.rate != Unlimited {
		t.Fatalf("without pacing: window %d, rate %d", env2.window, env2.rate)
	}
}

// every = k: a QP on every k-th ACK only; its wall time goes out as one
// qp_solve_ns event per solve (the script's clock advances 7 ns a read).
func TestMPCCEveryAndSolveTime(t *testing.T) {
	m, env := newMPCC(t, map[string]float64{"every": 3})
	for i := 0; i < 7; i++ {
		m.OnAck(env, &Ack{INT: []IntHop{hop(5000, 4, 1e9)}})
	}
	ev := env.events[mpccSeriesSolve]
	if len(ev) != 2 || ev[0] != 7 || ev[1] != 7 {
		t.Fatalf("solve events %v, want two of 7 ns (ACKs 3 and 6)", ev)
	}
	if m.nh != 7 {
		t.Fatalf("history has %d steps after 7 ACKs", m.nh)
	}
}

// Live changes: a new horizon takes effect at the next solve; the weights
// change the answer (a larger W_R cuts less).
func TestMPCCLiveParams(t *testing.T) {
	m, env := newMPCC(t, nil)
	ack := &Ack{INT: []IntHop{hop(3000, 4, 1e9)}}
	m.OnAck(env, ack)
	if m.qpw.p != 5 {
		t.Fatalf("horizon %d", m.qpw.p)
	}
	if err := m.SetParam(env, "horizon", 10); err != nil {
		t.Fatal(err)
	}
	m.OnAck(env, ack)
	if m.qpw.p != 10 {
		t.Fatalf("horizon %d after a live change to 10", m.qpw.p)
	}
	cut := func(wr float64) float64 {
		m, env := newMPCC(t, map[string]float64{"wr": wr})
		m.OnAck(env, ack)
		return m.w
	}
	if w10, w100 := cut(10), cut(100); !(w100 > w10) {
		t.Fatalf("window after the same queue: %g at 1:10, %g at 1:100; want a smaller cut at 1:100", w10, w100)
	}
	if err := m.SetParam(env, "bogus", 1); err == nil {
		t.Fatal("an unknown parameter was accepted")
	}
}

// The interval test of feasibility agrees with the solver's own verdict on
// the hard problem, over random model constants around and across the
// boundary (x near (N−1)·P_BD + B·W_f, W_f near P_BD at fast hops).
func TestMPCCFeasibleMatchesSolver(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	agree, infeasible := 0, 0
	for i := 0; i < 5000; i++ {
		p := 1 + r.IntN(10)
		b := 0.2 + 5*r.Float64()
		n := float64(1 + r.IntN(8))
		pbd := 1000 + 150_000*r.Float64()
		wf := pbd * (0.1 + 4*r.Float64()) / n
		x := ((n-1)*pbd + b*wf) * (2 * r.Float64())
		w := newMPCCQP(p)
		w.solve(b, 1, 10, x, n, pbd, wf) // fills the hard problem
		st, err := w.sh.Solve(&w.hard, w.u)
		if err != nil {
			t.Fatal(err)
		}
		if mpccFeasible(p, b, x, n, pbd, wf) != (st == qp.Optimal) {
			t.Fatalf("case %d (P %d B %g x %g N %g P_BD %g W_f %g): interval test %v, solver %v",
				i, p, b, x, n, pbd, wf, mpccFeasible(p, b, x, n, pbd, wf), st)
		}
		agree++
		if st == qp.Infeasible {
			infeasible++
		}
	}
	if infeasible < 500 || infeasible > 4500 {
		t.Fatalf("%d of %d cases infeasible: the sample does not straddle the boundary", infeasible, agree)
	}
}

// The window history keeps running totals in a ring: the sum of the last n
// windows is exact (to rounding) across the wrap, for every n it can hold.
func TestMPCCHistoryRing(t *testing.T) {
	m, _ := newMPCC(t, nil)
	var all []float64
	r := rand.New(rand.NewPCG(9, 9))
	for k := 0; k < 3*mpccHistory+17; k++ {
		m.w = 3750 * r.Float64()
		m.record()
		all = append(all, m.w)
		for _, n := range []int{0, 1, 5, m.nh / 2, m.nh} {
			if n > m.nh {
				continue
			}
			want := 0.0
			for _, w := range all[len(all)-n:] {
				want += w
			}
			if got := m.recent(n); math.Abs(got-want) > 1e-6*(1+want) {
				t.Fatalf("after %d windows: sum of the last %d = %.9g, want %.9g", k+1, n, got, want)
			}
		}
	}
	if m.nh != mpccHistory-1 {
		t.Fatalf("history holds %d, want %d", m.nh, mpccHistory-1)
	}
}
