package cc

import (
	"fmt"
	"math"

	"cclab/cc/qp"
)

// MPCC: model predictive congestion control (Zheng, MSc thesis, University
// of Alberta 2024; seed 000). The implementation follows the corrected
// formulation of the seed's extract, shared/spec/seeds/000-mpcc.md §2.8; the
// numbers in brackets below are its sections.
//
// On an ACK the sender reads the INT stack (per hop: queue Q_h, active-flow
// count N_h, line rate) and
//
//  1. selects the most congested hop h* (Algorithm 1: the largest Q, ties
//     to the hop nearest the sender). If every queue is empty it keeps its
//     window (L552) — unless solveOnEmpty is set, see below.
//  2. builds the scalar queue model at h*: R_out = the hop's line rate
//     (Algorithm 2 generalised: the engine carries the rate in the INT
//     record instead of a table of the thesis' fat-tree), R_in = the NIC
//     rate, P_BD = the flow's max BDP, W_f = R_out·P_BD/(R_in·N) the fair
//     window, D = base RTT + Σ_h Q_h/R_h (eq. 2.2, with the INT queues),
//     Δt = pkt·D/W (A.2; pkt = MTU + header + 32 B of INT on the wire, W
//     at least one packet), B = Δt·N·R_in/(8·P_BD) (eq. 3.5).
//  3. predicts the queue when the new window takes effect (eq. 3.7 with
//     A = 1): x = Q_h* + B·Σ_{i<τ} (W(k−1−i) − W_f), τ = round(D/Δt) the
//     loop delay in ACK steps (τ1 + τ2: sender → h* → receiver → sender),
//     clipped at x ≥ 0. The history holds the windows themselves, so that a
//     change of N or R_out re-centres the whole in-flight excess on today's
//     fair share [D5].
//  4. solves the condensed QP over U = W̄(k..k+P−1), deviations from W_f:
//     H = 2(B²W_Q·LᵀL + W_R·I), g = 2B·W_Q·x·[P, P−1, …, 1]ᵀ, box
//     −W_f ≤ U ≤ P_BD − W_f, rows −x ≤ B·L·U ≤ (N−1)·P_BD − x (eqs.
//     4.12–4.17). The gradient is the extract's correction of eq. 4.13
//     (erratum E1): the printed g = 2(Āx)ᵀW̄_Q B̄ᵀ is a row vector with B̄
//     transposed; the right one is g = 2·B̄ᵀ·W̄_Q·Ā·x, which with A = 1 weighs
//     the moves [P, P−1, …, 1] (the printed one, [1, 2, …, P], makes the
//     window grow with the queue for P ≥ 3, §2.7).
//  5. applies the first move (receding horizon, L753):
//     W = clamp(U*_0 + W_f, 0, P_BD).
//
// Decisions where the thesis is silent (extract §6), also in the
// parameter help:
//   - Infeasible QP [D9]: the state rows cannot hold when the predicted
//     queue is more than one step of the lowest window can bring within
//     (N−1)·P_BD, or when W_f > P_BD makes Q ≥ 0 unreachable. MPCC then solves
//     again with the state rows softened by one slack σ ≥ 0
//     (−x − σ ≤ B·L·U ≤ (N−1)·P_BD − x + σ) penalised by ρ·σ²,
//     ρ = 10⁶·(W_Q + W_R), so the violation is as small as the box allows;
//     each such solve is an mpcc_soft event.
//   - A window of 0 [D7]: the thesis lets the controller set W = 0 (L798),
//     which with per-ACK control would stop a flow for good (no packet, no
//     ACK, no new solve). The window handed to the NIC is at least one byte,
//     so one packet may always be in flight (the NIC sends while
//     unacknowledged bytes are below the window), and the pacing rate is
//     at least one packet per base RTT (R_in·pkt/P_BD).
//   - Pacing [D6]: with pacing on (default) the NIC paces at
//     R_in·max(W, pkt)/P_BD, the rate–window relation of the model (eq. 3.3,
//     erratum E9), as HPCC's var_win pairs rate and window; off, the flow is
//     window-limited at line rate.
//   - How often [every]: every ACK by default; every k ACKs as the
//     thesis' future work suggests (L961). The window holds in between, and
//     the history still advances one step per ACK.
//   - Empty queues [D8]: the thesis keeps the window when every queue is
//     empty, which can freeze a window below the fair share once a flow
//     leaves (the extract's model run locks at 902 B < 937.5 B). With
//     solveOnEmpty MPCC instead solves at the hop with the most flows with
//     Q = 0: the predictor then moves the window to W_f unless windows in
//     flight are already above it.
//   - Flow-count timeout [D12]: countTimeout sets the switches' idle timeout;
//     0 (the default) is the larger of switch.flowCountTimeout (100 µs) and
//     four base RTTs. A flow at the keep-alive floor sends one packet per
//     RTT, and queueing stretches the RTT (a queue of (N−1)·P_BD makes it N
//     base RTTs), so a timeout shorter than that forgets live flows, N drops,
//     W_f jumps and the queue with it: with 1 ms links and a fixed 100 µs the
//     Fig. 3.5 setting never converges, with four base RTTs (24 ms) it settles
//     at W_f in ~30 ms. Shorter timeouts trade a larger queue for faster
//     convergence after flows leave (L828).
//
// The solve time of every QP (wall clock, the one place the lab reads it)
// goes out as the event series qp_solve_ns, summarised in the run's results.
func mpccAlgorithm() *Algorithm {
	return &Algorithm{
		Name:  "mpcc",
		Title: "MPCC (model predictive, INT-based)",
		Help: "Each switch writes its queue length and its number of active flows into the packet (INT). From the " +
			"echo the sender predicts the most congested queue with a state-space model and solves a small quadratic " +
			"program on every ACK: the window sequence that drains the queue fastest for the weights W_Q (queue) and " +
			"W_R (distance from the fair-share window). The first window of the plan is applied.",
		Param: []Param{
			{Name: "wq", Kind: KindNumber, Default: 1, Min: 1e-6, Max: 1e6, Live: true,
				Help: "W_Q, the weight on the predicted queue; only the ratio W_Q:W_R matters (thesis: 1:1, 1:10, 1:100)."},
			{Name: "wr", Kind: KindNumber, Default: 10, Min: 1e-6, Max: 1e6, Live: true,
				Help: "W_R, the weight on the window's distance from the fair share; larger is smoother and slower (thesis' horizon test: 1:10)."},
			{Name: "horizon", Kind: KindInt, Default: 5, Min: 1, Max: 40, Live: true,
				Help: "Prediction horizon P in ACK steps (thesis: 3, 5, 10, 20; convergence changes little beyond 5 at 1:10)."},
			{Name: "every", Kind: KindInt, Default: 1, Min: 1, Max: 1000, Live: true,
				Help: "Solve on every k-th ACK (thesis: every ACK; its future work suggests less often). The window holds in between."},
			{Name: "countTimeout", Kind: KindTime, Unit: "us", Default: 0, Min: 0, Max: 1e6, Live: true,
				Help: "Idle time after which a flow stops counting in a switch's N (thesis A.1, value not given); 0 is the larger of switch.flowCountTimeout (100 µs) and four base RTTs, so that a flow sending one packet per RTT stays counted. Shorter: more oscillation; longer: slower convergence after a flow leaves (L828)."},
			boolParam("pacing", true, true,
				"Pace at R_in·W/P_BD (the model's rate–window relation) with the window; off: window only, at line rate. Never below one packet per base RTT, so a flow whose window reaches 0 keeps one packet in flight and stays alive."),
			boolParam("solveOnEmpty", true, true,
				"When every queue on the path is empty, solve anyway at the hop with the most flows (queue 0) instead of keeping the window, so that a window below the fair share grows back (the thesis keeps it: L552)."),
			{Name: "maxBDP", Kind: KindBytes, Unit: "B", Default: 0, Min: 0, Max: 1e9, Live: false,
				Help: "P_BD, the window cap and model constant; 0 uses the flow's max BDP (host.bdp). The thesis prints \"30000 bytes\" for Exp. 1 where HPCC's formula gives 3750 B (extract §4.1): set 30000 to try the literal reading."},
		},
		AckHighPriority: false,
		INT:             IntSpec{FixedBytes: mpccIntBytes, FlowCount: true, FlowCountTimeoutParam: "countTimeout"},
		// the pacing rate follows the window on every ACK, as HPCC's ChangeRate
		RateChangeReschedules: true,
		Series: []SeriesSpec{
			{Name: "qp_solve_ns", Unit: "ns", Stats: true, Help: "Wall-clock time of each QP solve (event, one per solve; the lab's only wall-clock series)."},
			{Name: "mpcc_q_int_bytes", Unit: "B", Help: "Queue of the most congested hop as the last ACK's INT reported it (what the sender sees, one feedback delay late)."},
			{Name: "mpcc_q_pred_bytes", Unit: "B", Help: "The model's prediction x of that queue when the new window takes effect (eq. 3.7): INT queue plus the in-flight excess."},
			{Name: "mpcc_n", Unit: "", Help: "Active flows N at the selected hop (the switch's idle-timer flow counter)."},
			{Name: "mpcc_wfair_bytes", Unit: "B", Help: "Fair-share window W_f = R_out·P_BD/(R_in·N), the reference the window is pulled to."},
			{Name: "mpcc_soft", Unit: "", Help: "Event: a QP was infeasible and was solved with softened queue bounds."},
		},
		NewSender: func(info FlowInfo, p Params) Sender {
			m := &mpcc{
				lineRate: float64(info.LineRate),
				pbd:      float64(info.MaxBDP),
				baseRTT:  float64(info.BaseRTT) / float64(Second),
				mtu:      float64(info.MTU),
				pkt:      float64(info.MTU + info.Header + mpccIntBytes),
			}
			for name, v := range p {
				m.set(name, v)
			}
			if m.pbdParam > 0 {
				m.pbd = m.pbdParam
			}
			return m
		},
	}
}

// mpccIntBytes is the thesis' INT block on every data packet (L765): per hop
// a 32-bit queue and a 16-bit flow count, five hops, and a 16-bit hop count.
const mpccIntBytes = 5*(4+2) + 2

// MPCC series ids.
const (
	mpccSeriesSolve = iota
	mpccSeriesQInt
	mpccSeriesQPred
	mpccSeriesN
	mpccSeriesWFair
	mpccSeriesSoft
)

// mpccHistory − 1 is the longest loop delay, in ACK steps, the predictor
// remembers (τ is about the window in packets: ~140 at 100 Gbps over 6
// links).
const mpccHistory = 256

type mpcc struct {
	// parameters
	wq, wr         float64
	horizon, every int
	pacing         bool
	solveOnEmpty   bool
	pbdParam       float64

	// the flow
	lineRate float64 // R_in, bits/s
	pbd      float64 // P_BD, bytes
	baseRTT  float64 // seconds
	mtu, pkt float64 // payload and wire bytes of a full packet

	// state
	w    float64 // the controller's window, bytes
	acks int     // ACKs since the last solve
	// the windows of past ACK steps, as running totals: cum[head] is the
	// sum of every window recorded so far, cum[head−i] the sum before the
	// last i, so the last τ windows sum to cum[head] − cum[head−τ] in O(1)
	// (τ reaches ~140 steps at 100 Gbps)
	cum  [mpccHistory]float64
	head int // index of the latest total
	nh   int // windows recorded, at most mpccHistory−1 usable

	qpw *mpccQP
}

func (m *mpcc) set(name string, v float64) bool {
	switch name {
	case "wq":
		m.wq = v
	case "wr":
		m.wr = v
	case "horizon":
		m.horizon = int(v)
	case "every":
		m.every = int(v)
	case "countTimeout": // read by the engine (the switches' flow counters)
	case "pacing":
		m.pacing = v != 0
	case "solveOnEmpty":
		m.solveOnEmpty = v != 0
	case "maxBDP":
		m.pbdParam = v
	default:
		return false
	}
	return true
}

func (m *mpcc) Start(env Env) {
	m.w = m.pbd // maxBDP is the initial window (L401): line rate from the start
	m.apply(env)
}

// apply hands the window (at least one byte, so one packet can always be in
// flight) and the pacing rate (at least one packet per base RTT) to the NIC.
func (m *mpcc) apply(env Env) {
	env.SetWindow(max(int64(m.w), 1))
	if !m.pacing {
		env.SetRate(Unlimited)
		return
	}
	env.SetRate(rateBps(math.Min(m.lineRate, m.lineRate*math.Max(m.w, m.pkt)/m.pbd)))
}

// record pushes the window in effect after this ACK step onto the history.
func (m *mpcc) record() {
	total := m.cum[m.head] + m.w
	m.head = (m.head + 1) % mpccHistory
	m.cum[m.head] = total
	if m.nh < mpccHistory-1 {
		m.nh++
	}
}

// recent is the sum of the last n recorded windows (n ≤ nh).
func (m *mpcc) recent(n int) float64 {
	return m.cum[m.head] - m.cum[(m.head-n+mpccHistory)%mpccHistory]
}

func (m *mpcc) OnAck(env Env, a *Ack) {
	m.acks++
	if m.acks >= m.every {
		m.acks = 0
		m.control(env, a.INT)
	}
	m.record()
}

// control runs one controller step on an INT stack.
func (m *mpcc) control(env Env, hops []IntHop) {
	if len(hops) > MaxHops {
		hops = hops[:MaxHops]
	}
	// Algorithm 1: the hop with the largest queue; strict '>' keeps the
	// first of equal queues, and all-empty gives no hop
	sel, q := -1, int64(0)
	for i, h := range hops {
		if h.Qlen > q {
			sel, q = i, h.Qlen
		}
	}
	if sel < 0 {
		env.Gauge(mpccSeriesQInt, 0)
		if !m.solveOnEmpty {
			return // every queue is empty: keep the window (L552)
		}
		// the most shared hop, queue 0
		n := int32(0)
		for i, h := range hops {
			if h.Flows > n {
				sel, n = i, h.Flows
			}
		}
		if sel < 0 {
			return
		}
	}
	h := hops[sel]
	n := float64(max(h.Flows, 1))
	rOut := float64(h.Rate)
	if rOut <= 0 {
		return
	}
	// eq. 2.2: base RTT plus the queueing delay of every hop
	d := m.baseRTT
	for _, x := range hops {
		if x.Rate > 0 {
			d += float64(x.Qlen) * 8 / float64(x.Rate)
		}
	}
	wf := rOut * m.pbd / (m.lineRate * n)
	wEff := math.Max(m.w, m.pkt)
	dt := m.pkt * d / wEff                 // A.2
	b := dt * n * m.lineRate / (8 * m.pbd) // eq. 3.5
	tau := int(math.Round(d / dt))         // τ1 + τ2 in ACK steps
	tau = min(tau, m.nh)
	x := float64(q) + b*(m.recent(tau)-float64(tau)*wf) // eq. 3.7, A = 1
	x = math.Max(x, 0)
	env.Gauge(mpccSeriesQInt, float64(q))
	env.Gauge(mpccSeriesQPred, x)
	env.Gauge(mpccSeriesN, n)
	env.Gauge(mpccSeriesWFair, wf)

	if m.qpw == nil || m.qpw.p != m.horizon {
		m.qpw = newMPCCQP(m.horizon)
	}
	t0 := env.WallNanos()
	u0, soft, ok := m.qpw.solve(b, m.wq, m.wr, x, n, m.pbd, wf)
	env.Event(mpccSeriesSolve, float64(env.WallNanos()-t0))
	if soft {
		env.Event(mpccSeriesSoft, 1)
	}
	if !ok {
		return // not even the softened problem could be solved: keep the window
	}
	m.w = clamp(u0+wf, 0, m.pbd)
	m.apply(env)
}

func (m *mpcc) OnCNP(Env)              {}
func (m *mpcc) OnQCN(Env, QCNFeedback) {}
func (m *mpcc) OnTimer(Env, int)       {}

func (m *mpcc) SetParam(env Env, name string, v float64) error {
	if !m.set(name, v) {
		return fmt.Errorf("mpcc has no parameter %q", name)
	}
	m.apply(env)
	return nil
}

// mpccQP is the workspace of one flow's QPs at horizon p: the hard problem
// (p variables, p rows) and its softened form (p+1 variables, 2p rows).
type mpccQP struct {
	p          int
	hard, soft qp.Problem
	sh, ss     *qp.Solver
	u          []float64
}

func newMPCCQP(p int) *mpccQP {
	w := &mpccQP{p: p, sh: qp.NewSolver(p, p), ss: qp.NewSolver(p+1, 2*p), u: make([]float64, p+1)}
	w.hard = qp.Problem{N: p, M: p, H: make([]float64, p*p), G: make([]float64, p),
		LB: make([]float64, p), UB: make([]float64, p), A: make([]float64, p*p),
		LBA: make([]float64, p), UBA: make([]float64, p)}
	n, m := p+1, 2*p
	w.soft = qp.Problem{N: n, M: m, H: make([]float64, n*n), G: make([]float64, n),
		LB: make([]float64, n), UB: make([]float64, n), A: make([]float64, m*n),
		LBA: make([]float64, m), UBA: make([]float64, m)}
	return w
}

// solve builds and solves the condensed QP (extract §2.8) and returns the
// first move U*_0; soft reports that the hard problem was infeasible and the
// softened one was solved instead.
func (w *mpccQP) solve(b, wq, wr, x, n, pbd, wf float64) (u0 float64, soft, ok bool) {
	p := w.p
	hp := &w.hard
	for i := 0; i < p; i++ {
		for j := 0; j < p; j++ {
			// (LᵀL)_ij = p − max(i, j) with L lower-triangular ones
			v := 2 * b * b * wq * float64(p-max(i, j))
			if i == j {
				v += 2 * wr
			}
			hp.H[i*p+j] = v
			a := 0.0
			if j <= i {
				a = b
			}
			hp.A[i*p+j] = a
		}
		hp.G[i] = 2 * b * wq * x * float64(p-i) // erratum E1: 2·B̄ᵀ·W̄_Q·Ā·x
		hp.LB[i], hp.UB[i] = -wf, pbd-wf
		hp.LBA[i], hp.UBA[i] = -x, (n-1)*pbd-x
	}
	if mpccFeasible(p, b, x, n, pbd, wf) {
		st, err := w.sh.Solve(hp, w.u)
		if err == nil && st == qp.Optimal {
			return w.u[0], false, true
		}
	}
	// soften the queue bounds with one slack σ ≥ 0
	sp := &w.soft
	ns := p + 1
	rho := 1e6 * (wq + wr)
	for i := range sp.H {
		sp.H[i] = 0
	}
	for i := range sp.A {
		sp.A[i] = 0
	}
	for i := 0; i < p; i++ {
		copy(sp.H[i*ns:i*ns+p], hp.H[i*p:i*p+p])
		sp.G[i] = hp.G[i]
		sp.LB[i], sp.UB[i] = hp.LB[i], hp.UB[i]
		copy(sp.A[i*ns:i*ns+p], hp.A[i*p:i*p+p]) // B·L·U + σ ≥ −x
		sp.A[i*ns+p] = 1
		sp.LBA[i], sp.UBA[i] = hp.LBA[i], math.Inf(1)
		r := p + i // B·L·U − σ ≤ (N−1)·P_BD − x
		copy(sp.A[r*ns:r*ns+p], hp.A[i*p:i*p+p])
		sp.A[r*ns+p] = -1
		sp.LBA[r], sp.UBA[r] = math.Inf(-1), hp.UBA[i]
	}
	sp.H[p*ns+p] = 2 * rho
	sp.G[p] = 0
	sp.LB[p], sp.UB[p] = 0, math.Inf(1)
	st, err := w.ss.Solve(sp, w.u)
	if err != nil || st != qp.Optimal {
		return 0, true, false
	}
	return w.u[0], true, true
}

// mpccFeasible tells exactly whether the hard QP has a feasible point: the
// predicted queue after i moves is x + S_i, S_i = B·(U_0 + … + U_{i−1}),
// each move in [−W_f, P_BD − W_f], and every S_i must lie in
// [−x, (N−1)·P_BD − x]. The set of reachable S_i is an interval, propagated
// step by step; the problem is infeasible when it empties. Checking first
// spares the solver a failed solve on the (frequent, in a fabric of fast
// links) infeasible steps.
func mpccFeasible(p int, b, x, n, pbd, wf float64) bool {
	lo, hi := -b*wf, b*(pbd-wf)
	floor, ceil := -x, (n-1)*pbd-x
	tol := 1e-9 * (math.Abs(floor) + math.Abs(ceil) + 1)
	rlo, rhi := 0.0, 0.0
	for i := 0; i < p; i++ {
		rlo = math.Max(rlo+lo, floor)
		rhi = math.Min(rhi+hi, ceil)
		if rlo > rhi+tol {
			return false
		}
	}
	return true
}
