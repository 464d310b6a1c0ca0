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

// ack is an ACK with an INT stack and inflight bytes still unacknowledged.
func ack(inflight int64, hops ...IntHop) *Ack {
	return &Ack{Packets: 1, SndUna: 10_000, SndNxt: 10_000 + inflight, INT: hops}
}

// The flow starts at line rate with a window of max BDP (L401), and the
// packets of that start (⌈3750/1000⌉ = 4, one packet time apart) are the
// history its first ACKs predict from.
func TestMPCCStart(t *testing.T) {
	m, env := newMPCC(t, nil)
	if m.pkt != 1080 || env.window != 3750 || env.rate != 1e9 {
		t.Fatalf("start: packet %g B, window %d, rate %d; want 1080, maxBDP 3750, line rate", m.pkt, env.window, env.rate)
	}
	if m.nh != 4 {
		t.Fatalf("%d steps of history at the start, want 4", m.nh)
	}
	dt, dtw := m.recent(4)
	if math.Abs(dt-4*8.64e-6) > 1e-15 || math.Abs(dtw-4*8.64e-6*3750) > 1e-9 {
		t.Fatalf("start history: Σdt %g, ΣdtW %g", dt, dtw)
	}
}

// Algorithm 1: the hop with the largest queue is the state; of equal queues
// the first (nearest the sender); its N and line rate set the fair window
// W_f = R_out·P_BD/(R_in·N).
func TestMPCCSelectsMostCongestedHop(t *testing.T) {
	m, env := newMPCC(t, nil)
	m.OnAck(env, ack(0, hop(500, 2, 1e9), hop(2000, 4, 2e9), hop(2000, 3, 1e9)))
	if env.gauges[mpccSeriesN] != 4 || env.gauges[mpccSeriesQInt] != 2000 {
		t.Fatalf("selected N %g, Q %g; want hop 1 (N 4, Q 2000)", env.gauges[mpccSeriesN], env.gauges[mpccSeriesQInt])
	}
	if want := 2e9 * 3750 / (1e9 * 4); env.gauges[mpccSeriesWFair] != want {
		t.Fatalf("W_f %g, want %g (hop 1's rate)", env.gauges[mpccSeriesWFair], want)
	}
}

// Every queue empty: no QP. With growOnEmpty off (the thesis' rule, L552)
// the window is kept whatever it is. With it on (the default) a window above
// the fair share of the tightest hop (here the 4-flow hop: 937.5 B, not the
// 2-flow one) is kept too, and one below it is raised to it.
func TestMPCCEmptyQueues(t *testing.T) {
	empty := []IntHop{hop(0, 2, 1e9), hop(0, 4, 1e9)}
	cases := []struct {
		grow      float64
		w, want   float64
		applied   int64
		wantGauge float64
	}{
		{0, 500, 500, 500, 937.5},
		{1, 500, 937.5, 937, 937.5},
		{1, 2000, 2000, 2000, 937.5},
		{0, 2000, 2000, 2000, 937.5},
	}
	for _, c := range cases {
		m, env := newMPCC(t, map[string]float64{"growOnEmpty": c.grow})
		m.w = c.w
		m.apply(env)
		m.OnAck(env, ack(0, empty...))
		if m.w != c.want || env.window != c.applied || len(env.events[mpccSeriesSolve]) != 0 || env.gauges[mpccSeriesWFair] != c.wantGauge {
			t.Errorf("growOnEmpty %g from %g: window %g (engine %d), %d solves, W_f %g; want %g, %d, no solve, %g",
				c.grow, c.w, m.w, env.window, len(env.events[mpccSeriesSolve]), env.gauges[mpccSeriesWFair], c.want, c.applied, c.wantGauge)
		}
	}
}

// The model constants of Exp. 1 in the extract's numbers (§1.4, §2.9): at
// W = P_BD = 3750 B, D = 30 µs and N = 4, Δt = 1080·30 µs/3750 = 8.64 µs and
// B = Δt·N·R_in/(8·P_BD) = 1.152. With nothing in flight (τ = 0) the
// prediction is the INT queue, and at horizon 1 the unconstrained move is
// W̄ = −B·W_Q·x/(B²·W_Q + W_R) (extract §2.8 step 5).
func TestMPCCConstantsAndClosedForm(t *testing.T) {
	m, env := newMPCC(t, map[string]float64{"horizon": 1, "wq": 1, "wr": 10})
	// a queue of 300 B adds 2.4 µs to D: Δt = 1080·32.4 µs/3750
	m.OnAck(env, ack(0, hop(300, 4, 1e9)))
	b := 1080 * 32.4e-6 / 3750 * 4 * 1e9 / (8 * 3750)
	want := 937.5 - b*300/(b*b+10)
	if math.Abs(m.w-want) > 1e-6 {
		t.Fatalf("window %.6f, want W_f + W̄ = %.6f (B %.6f)", m.w, want, b)
	}
	if env.gauges[mpccSeriesQPred] != 300 {
		t.Fatalf("prediction %g with nothing in flight, want the INT queue 300", env.gauges[mpccSeriesQPred])
	}
	// without the queue term: exactly the extract's B = 1.152
	m2, env2 := newMPCC(t, map[string]float64{"horizon": 1})
	m2.OnAck(env2, ack(0, hop(1, 4, 1e9)))
	b2 := 1080 * (30e-6 + 8e-9) / 3750 * 4 * 1e9 / (8 * 3750)
	if math.Abs(b2-1.152) > 1e-3 {
		t.Fatalf("B %g, want 1.152", b2)
	}
	if want := 937.5 - b2*1/(b2*b2+10); math.Abs(m2.w-want) > 1e-9 {
		t.Fatalf("window %.9f, want %.9f", m2.w, want)
	}
	// pacing at R_in·W/P_BD
	if want := int64(1e9 * m.w / 3750); env.rate != want {
		t.Fatalf("pacing %d bps, want %d", env.rate, want)
	}
}

// The delayed model (eq. 3.7): the INT queue plus what the steps still in
// flight add, each by eq. 3.5 with its own Δt_i and W_i at today's N and
// R_out: x = Q + Σ (N·R_in·W_i/P_BD − R_out)·Δt_i/8 over the last τ steps, τ
// the ACKs to come for the bytes in flight. With a constant Δt this is
// Q + B·Σ(W_i − W_f).
func TestMPCCPredictor(t *testing.T) {
	m, env := newMPCC(t, nil)
	// replace the start history with known steps, most recent last
	for _, s := range []struct{ w, dt float64 }{{3000, 9e-6}, {2500, 10e-6}, {2000, 11e-6}, {1500, 12e-6}, {1200, 13e-6}} {
		m.w = s.w
		m.record(s.dt)
	}
	// 2500 B in flight: ⌈2500/1000⌉ = 3 ACKs to come: the last three steps
	m.OnAck(env, ack(2500, hop(2160, 4, 1e9)))
	rate := 4 * 1e9 / 3750.0 // N·R_in/P_BD, bits per second per byte of window
	want := 2160.0
	for _, s := range []struct{ w, dt float64 }{{2000, 11e-6}, {1500, 12e-6}, {1200, 13e-6}} {
		want += (rate*s.w - 1e9) * s.dt / 8
	}
	if got := env.gauges[mpccSeriesQPred]; math.Abs(got-want) > 1e-6 {
		t.Fatalf("prediction %.6f, want %.6f", got, want)
	}
	// a constant Δt gives eq. 3.7 with A = 1
	m, env = newMPCC(t, nil)
	for _, w := range []float64{900, 1000, 1100} {
		m.w = w
		m.record(20e-6)
	}
	m.OnAck(env, ack(3000, hop(5000, 4, 1e9)))
	b := 20e-6 * 4 * 1e9 / (8 * 3750)
	want = 5000 + b*((900-937.5)+(1000-937.5)+(1100-937.5))
	if got := env.gauges[mpccSeriesQPred]; math.Abs(got-want) > 1e-6 {
		t.Fatalf("constant Δt: prediction %.6f, want Q + B·Σ(W_i − W_f) = %.6f", got, want)
	}
}

// host.ackEvery: an ACK for two packets plans steps twice as long (A.1
// counts one packet per ACK): at horizon 1 the move is the closed form with
// B doubled; and τ counts ACKs, not packets. The steps recorded are the
// measured intervals between ACKs (A.2's definition).
func TestMPCCCoalescedAcks(t *testing.T) {
	m, env := newMPCC(t, map[string]float64{"horizon": 1})
	a := ack(0, hop(300, 4, 1e9))
	a.Packets = 2
	m.OnAck(env, a)
	b := 2 * 1080 * 32.4e-6 / 3750 * 4 * 1e9 / (8 * 3750)
	if want := 937.5 - b*300/(b*b+10); math.Abs(m.w-want) > 1e-6 {
		t.Fatalf("window %.6f, want %.6f (B for two packets per ACK)", m.w, want)
	}
	env.now += 17 * Microsecond
	m.OnAck(env, a)
	if dt, _ := m.recent(1); math.Abs(dt-17e-6) > 1e-15 {
		t.Fatalf("recorded step %g s, want the 17 µs between the ACKs", dt)
	}
}

// The corrected QP against the extract's test vectors (§2.9: A = 1,
// B = 1.152, P_BD = 3750, N = 4, W_f = 937.5): the first move of the plan,
// to the 3 decimals printed (±0.01). The infeasible vector (x = 20000 >
// (N−1)·P_BD + B·W_f) widens the rows by the smallest slack that makes them
// feasible: 20000 − 11250 − B·W_f = 7670 at the first step, and then the
// harshest cut, U_0 = −W_f.
func TestMPCCQPVectors(t *testing.T) {
	cases := []struct {
		x, wr     float64
		p         int
		u0, slack float64
	}{
		{11250, 1, 3, -937.5, 0},
		{11250, 10, 3, -937.5, 0},
		{11250, 100, 3, -366.219, 0},
		{300, 10, 3, -65.001, 0},
		{11250, 10, 5, -937.5, 0},
		{300, 10, 5, -75.630, 0},
		{11250, 100, 10, -877.66, 0},
		{300, 10, 20, -79.15, 0},
		{20000, 10, 5, -937.5, 7670},
	}
	for _, c := range cases {
		w := newMPCCQP(c.p)
		u0, slack, ok := w.solve(1.152, 1, c.wr, c.x, 4, 3750, 937.5)
		// the slack is the least one plus a millionth (well under a byte)
		if !ok || math.Abs(slack-c.slack) > 0.1 || math.Abs(u0-c.u0) > 0.01 {
			t.Errorf("x %g 1:%g P %d: U0 %.4f slack %.4f ok %v; want %.3f slack %g", c.x, c.wr, c.p, u0, slack, ok, c.u0, c.slack)
		}
	}
}

// A fast hop shared by few flows (R_out = 4·R_in, N = 2: W_f = 2·P_BD >
// P_BD): every move drains, and the queue cannot stay ≥ 0 over the horizon.
// The slack is the least that makes the rows feasible (a hair less is not),
// the plan is the one that violates them least and, within that, costs
// least: the flow keeps its full window (U_0 = P_BD − W_f), as it must,
// since it cannot fill the hop.
func TestMPCCSoftFastHop(t *testing.T) {
	const b, x, n, pbd = 1.0, 500.0, 2.0, 3750.0
	wf := 4 * pbd / n
	for _, p := range []int{1, 3, 5} {
		w := newMPCCQP(p)
		u0, slack, ok := w.solve(b, 1, 10, x, n, pbd, wf)
		if !ok {
			t.Fatalf("P %d: not solved", p)
		}
		exact := mpccSlack(p, b, x, n, pbd, wf)
		if want := float64(p)*b*(wf-pbd) - x; math.Abs(exact-want) > 1e-6*want {
			t.Fatalf("P %d: slack %g, want P·B·(W_f − P_BD) − x = %g", p, exact, want)
		}
		if mpccFeasible(p, b, x, n, pbd, wf, exact*(1-1e-6)) || !mpccFeasible(p, b, x, n, pbd, wf, exact) {
			t.Fatalf("P %d: slack %g is not the least", p, exact)
		}
		if slack < exact || math.Abs(u0-(pbd-wf)) > 1e-6 {
			t.Fatalf("P %d: U0 %g slack %g; want %g (full window) with slack %g", p, u0, slack, pbd-wf, exact)
		}
	}
}

// The interval test of feasibility agrees with the solver's own verdict on
// the hard problem, over random model constants around and across the
// boundary (x near (N−1)·P_BD + B·W_f, W_f near P_BD at fast hops).
func TestMPCCFeasibleMatchesSolver(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	infeasible := 0
	const cases = 5000
	for i := 0; i < cases; i++ {
		p := 1 + r.IntN(10)
		b := 0.2 + 5*r.Float64()
		n := float64(1 + r.IntN(8))
		pbd := 1000 + 150_000*r.Float64()
		wf := pbd * (0.1 + 4*r.Float64()) / n
		x := ((n-1)*pbd + b*wf) * (2 * r.Float64())
		w := newMPCCQP(p)
		w.solve(b, 1, 10, x, n, pbd, wf) // fills the problem
		for k := 0; k < p; k++ {         // the hard rows, unwidened
			w.prob.LBA[k], w.prob.UBA[k] = -x, (n-1)*pbd-x
		}
		st, err := w.sol.Solve(&w.prob, w.u)
		if err != nil {
			t.Fatal(err)
		}
		if got := mpccFeasible(p, b, x, n, pbd, wf, 0); got != (st == qp.Optimal) {
			t.Fatalf("case %d (P %d B %g x %g N %g P_BD %g W_f %g): interval test %v, solver %v", i, p, b, x, n, pbd, wf, got, st)
		}
		if st == qp.Infeasible {
			infeasible++
		}
	}
	if infeasible < cases/10 || infeasible > cases*9/10 {
		t.Fatalf("%d of %d cases infeasible: the sample does not straddle the boundary", infeasible, cases)
	}
}

// A window driven to 0 keeps the flow alive: one byte of window (one packet
// in flight) and a pacing rate of half a packet per base RTT; without
// pacing, line rate and the window alone.
func TestMPCCKeepAlive(t *testing.T) {
	m, env := newMPCC(t, map[string]float64{"wr": 1})
	m.OnAck(env, ack(0, hop(11_250, 4, 1e9)))
	if m.w != 0 {
		t.Fatalf("window %g after a full queue at 1:1, want 0 (the extract's first vector)", m.w)
	}
	if env.window != 1 || env.rate != int64(1e9*540/3750) {
		t.Fatalf("engine window %d, rate %d; want 1 B and half a packet per base RTT", env.window, env.rate)
	}
	m2, env2 := newMPCC(t, map[string]float64{"wr": 1, "pacing": 0})
	m2.OnAck(env2, ack(0, hop(11_250, 4, 1e9)))
	if env2.window != 1 || env2.rate != Unlimited {
		t.Fatalf("without pacing: window %d, rate %d", env2.window, env2.rate)
	}
}

// every = k: a QP on every k-th ACK only (the 3rd and 6th of 7), each timed
// as one qp_solve_ns event (the script's clock advances 7 ns a read), and
// planned in steps of k ACKs: B is k times the one-ACK value, which a
// horizon-1 move shows.
func TestMPCCEveryAndSolveTime(t *testing.T) {
	m, env := newMPCC(t, map[string]float64{"every": 3, "horizon": 1})
	var solvedAt []int
	for i := 1; i <= 7; i++ {
		before := len(env.events[mpccSeriesSolve])
		m.OnAck(env, ack(0, hop(300, 4, 1e9)))
		if len(env.events[mpccSeriesSolve]) > before {
			solvedAt = append(solvedAt, i)
		}
	}
	ev := env.events[mpccSeriesSolve]
	if len(solvedAt) != 2 || solvedAt[0] != 3 || solvedAt[1] != 6 || ev[0] != 7 || ev[1] != 7 {
		t.Fatalf("solves at ACKs %v with times %v, want ACKs 3 and 6, 7 ns each", solvedAt, ev)
	}
	// the first solve, from W = P_BD: B = 3·Δt·N·R_in/(8·P_BD)
	m2, env2 := newMPCC(t, map[string]float64{"every": 3, "horizon": 1})
	m2.OnAck(env2, ack(0, hop(300, 4, 1e9)))
	m2.OnAck(env2, ack(0, hop(300, 4, 1e9)))
	m2.OnAck(env2, ack(0, hop(300, 4, 1e9)))
	b := 3 * (1080 * 32.4e-6 / 3750) * 4 * 1e9 / (8 * 3750)
	if want := 937.5 - b*300/(b*b+10); math.Abs(m2.w-want) > 1e-6 {
		t.Fatalf("window %.6f, want %.6f with B for 3 ACKs", m2.w, want)
	}
}

// Live changes: a new horizon takes effect at the next solve, every and
// pacing at once, and the weights change the answer (a larger W_R cuts less).
func TestMPCCLiveParams(t *testing.T) {
	m, env := newMPCC(t, nil)
	a := ack(0, hop(3000, 4, 1e9))
	m.OnAck(env, a)
	if m.qpw.p != 5 {
		t.Fatalf("horizon %d", m.qpw.p)
	}
	if err := m.SetParam(env, "horizon", 10); err != nil {
		t.Fatal(err)
	}
	m.OnAck(env, a)
	if m.qpw.p != 10 {
		t.Fatalf("horizon %d after a live change to 10", m.qpw.p)
	}
	if err := m.SetParam(env, "pacing", 0); err != nil || env.rate != Unlimited {
		t.Fatalf("pacing off live: rate %d, err %v", env.rate, err)
	}
	if err := m.SetParam(env, "every", 2); err != nil {
		t.Fatal(err)
	}
	n := len(env.events[mpccSeriesSolve])
	m.OnAck(env, a)
	m.OnAck(env, a)
	if got := len(env.events[mpccSeriesSolve]) - n; got != 1 {
		t.Fatalf("%d solves in two ACKs after every = 2", got)
	}
	cut := func(wr float64) float64 {
		m, env := newMPCC(t, map[string]float64{"wr": wr})
		m.OnAck(env, a)
		return m.w
	}
	if w10, w100 := cut(10), cut(100); !(w100 > w10) {
		t.Fatalf("window after the same queue: %g at 1:10, %g at 1:100; want a smaller cut at 1:100", w10, w100)
	}
	if err := m.SetParam(env, "bogus", 1); err == nil {
		t.Fatal("an unknown parameter was accepted")
	}
}

// The step history keeps running totals in a ring: the sums over the last
// j steps are exact (to rounding) across the wrap, for every j it holds.
func TestMPCCHistoryRing(t *testing.T) {
	m, _ := newMPCC(t, nil)
	type step struct{ dt, w float64 }
	var all []step
	for i := 0; i < m.nh; i++ { // the start's history
		all = append(all, step{8.64e-6, 3750})
	}
	r := rand.New(rand.NewPCG(9, 9))
	for k := 0; k < 3*len(m.cumDt)+17; k++ {
		m.w = 3750 * r.Float64()
		s := step{1e-6 + 1e-5*r.Float64(), m.w}
		m.record(s.dt)
		all = append(all, s)
		for _, j := range []int{0, 1, 3, m.nh / 2, m.nh} {
			var dt, dtw float64
			for _, x := range all[len(all)-j:] {
				dt += x.dt
				dtw += x.dt * x.w
			}
			gdt, gdtw := m.recent(j)
			if math.Abs(gdt-dt) > 1e-12*(1+dt) || math.Abs(gdtw-dtw) > 1e-9*(1+dtw) {
				t.Fatalf("after %d steps, last %d: (%g, %g), want (%g, %g)", len(all), j, gdt, gdtw, dt, dtw)
			}
		}
	}
	if m.nh != len(m.cumDt)-1 {
		t.Fatalf("history holds %d, want %d", m.nh, len(m.cumDt)-1)
	}
}
