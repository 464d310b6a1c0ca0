package cc

import (
	"fmt"
	"math"

	"cclab/cc/qp"
)

// MPCC: model predictive congestion control (Zheng, MSc thesis, University
// of Alberta 2024; seed 000). The implementation follows the thesis'
// formulation with its errata corrected (each correction is noted where it
// applies below); the bracketed D-numbers name the decisions the thesis
// leaves open, as the lab's reproduction notes number them.
//
// Every ACK is one step k of the discrete model (A.2: the interval between
// two ACKs). On an ACK the sender reads the INT stack (per hop: queue Q_h,
// active-flow count N_h, line rate R_h; the first five switches of the path,
// as every INT stack here) and
//
//  1. selects the most congested hop h* (Algorithm 1: the largest Q, ties
//     to the hop nearest the sender);
//  2. builds the scalar queue model at h*: R_out = its line rate (Algorithm
//     2 generalised: the rate comes with the INT record instead of from a
//     table of the thesis' fat-tree), R_in = the NIC rate, P_BD = the flow's
//     max BDP, W_f = R_out·P_BD/(R_in·N) the fair window (L661), D = base
//     RTT + Σ_h Q_h/R_h (eq. 2.2 with the INT queues), Δt = a·pkt·D/W (A.2;
//     pkt = MTU + header + 32 B of INT on the wire, a the packets this ACK
//     covers, W at least the keep-alive floor), B = Δt·N·R_in/(8·P_BD) (eq.
//     3.5) for the steps ahead;
//  3. predicts the queue when the new window takes effect (eq. 3.7): the
//     INT queue plus what the steps still in flight add, each by eq. 3.5
//     with its own length Δt_i (measured: the time between its two ACKs,
//     A.2's definition; right after a cut the ACKs of the old window still
//     come one packet time apart, not at the new window's spacing) and its
//     window W_i, re-centred on today's N and R_out:
//     x = Q_h* + Σ_{i<τ} (N·R_in·W_i/P_BD − R_out)·Δt_i/8 (with a constant Δt
//     this is eq. 3.7 with A = 1: x = Q + B·Σ(W_i − W_f)). τ = τ1 + τ2, the
//     loop delay in ACK steps, is the number of ACKs still to come for the
//     packets in flight, ⌈in-flight bytes/(a·MTU)⌉: every one of them was
//     sent under an earlier window [D5]. x is clipped at 0;
//  4. solves the condensed QP over U = W̄(k..k+P−1), deviations from W_f:
//     H = 2(B²W_Q·LᵀL + W_R·I), g = 2B·W_Q·x·[P, P−1, …, 1]ᵀ, box
//     −W_f ≤ U ≤ P_BD − W_f, rows −x ≤ B·L·U ≤ (N−1)·P_BD − x (eqs.
//     4.12–4.17). The gradient is the extract's correction of eq. 4.13
//     (erratum E1): the printed g = 2(Āx)ᵀW̄_Q B̄ᵀ is a row vector with B̄
//     transposed; the right one is g = 2·B̄ᵀ·W̄_Q·Ā·x, which with A = 1
//     weighs the moves [P, P−1, …, 1] (the printed one, [1, 2, …, P], makes
//     the window grow with the queue for P ≥ 3, §2.7);
//  5. applies the first move (receding horizon, L753):
//     W = clamp(U*_0 + W_f, 0, P_BD).
//
// With N = 1 the queue bounds are 0 ≤ Q ≤ 0 (eq. 4.3), so a lone flow's
// move is deadbeat, U_0 = −x/B, whatever the weights.
//
// Decisions where the thesis is silent (extract §6), also in the
// parameter help:
//   - Infeasible QP [D9]: the queue rows cannot hold when the predicted
//     queue is more than one step of the lowest window can bring within
//     (N−1)·P_BD, or when W_f > P_BD (a fast hop shared by few flows) makes
//     Q ≥ 0 unreachable. MPCC then widens every queue row by the smallest
//     slack σ that makes the problem feasible (found exactly by propagating
//     the interval of reachable queues step by step) and solves that: the
//     least violation of the queue bounds, and the best plan within it. Each
//     such step is an mpcc_soft event.
//   - A window of 0 [D7]: the thesis lets the controller set W = 0 (L798),
//     which with per-ACK control would stop a flow for good (no packet, no
//     ACK, no new solve). The NIC's window is at least one byte, so one
//     packet may always be in flight (the NIC sends while unacknowledged
//     bytes are below the window), and with pacing the rate is at least
//     R_in·(pkt/2)/P_BD: one packet per two base RTTs (when P_BD is the
//     path's BDP, not a maxBDP override), often enough to stay counted in
//     the switches' N (whose idle timeout is at least four base RTTs by
//     default).
//   - Pacing [D6]: with pacing on (default) the NIC paces at R_in·W/P_BD
//     (floored as above), the rate–window relation of the model (eq. 3.3,
//     erratum E9), as HPCC's var_win pairs rate and window: sub-packet
//     windows then mean sub-packet rates (at 1 Gbps the fair window of four
//     flows is 937.5 B). Off, the flow is window-limited at line rate.
//   - How often [every]: every ACK by default; every k ACKs as the thesis'
//     future work suggests (L961). Each move is then held for k ACKs, so
//     the QP's step is k ACKs long (B·k: move blocking); the history still
//     advances one step per ACK.
//   - Empty queues [D8]: when every queue on the path is empty MPCC keeps
//     its window and solves nothing (L552) — except that a window below the
//     fair share of the path's tightest hop (smallest R_h/N_h) is raised to
//     that share (growOnEmpty, default on). The thesis' rule alone locks a
//     window below the fair share once a flow has left (the extract's model
//     run locks at 902 B < 937.5 B; in Exp. 2 the last flow then finishes at
//     127 ms instead of 78 ms), while the thesis reports that "the remaining
//     flows rapidly utilize the newly available bandwidth" (L816). The raise
//     is the QP's own answer for an empty queue with nothing in flight above
//     the fair share (U = 0). growOnEmpty off is the literal rule.
//   - Flow-count timeout [D12]: countTimeout sets the switches' idle timeout;
//     0 (the default) is the larger of switch.flowCountTimeout (100 µs) and
//     four base RTTs: with 1 ms links a fixed 100 µs forgets every flow
//     between two of its packets, N drops, W_f jumps and the queue with it
//     (the Fig. 3.5 setting never converges); with four base RTTs (24 ms) it
//     settles at W_f. Shorter timeouts trade a larger queue for faster
//     convergence after flows leave (L828).
//
// The solve time of every step (wall clock, the one place the lab reads it)
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
				Help: "Prediction horizon P in steps (thesis: 3, 5, 10, 20; convergence changes little beyond 5 at 1:10)."},
			{Name: "every", Kind: KindInt, Default: 1, Min: 1, Max: 1000, Live: true,
				Help: "Solve on every k-th ACK (thesis: every ACK; its future work suggests less often). The window holds in between, and the QP plans in steps of k ACKs."},
			{Name: "countTimeout", Kind: KindTime, Unit: "us", Default: 0, Min: 0, Max: 1e6, Live: true,
				Help: "Idle time after which a flow stops counting in a switch's N (thesis A.1, value not given); 0 is the larger of switch.flowCountTimeout (100 µs) and four base RTTs. Shorter: more oscillation; longer: slower convergence after a flow leaves (L828)."},
			boolParam("pacing", true, true,
				"Pace at R_in·W/P_BD (the model's rate–window relation) with the window; off: window only, at line rate. Either way a flow whose window reaches 0 keeps one packet in flight, and a paced one sends at least half a packet per base RTT, so it stays alive and counted."),
			boolParam("growOnEmpty", true, true,
				"When every queue on the path is empty the window is kept (thesis L552), but one below the fair share of the tightest hop (smallest rate per flow) is raised to it, so flows take up bandwidth others have left (L816). Off: the literal rule, which can lock a window below the fair share."),
			{Name: "maxBDP", Kind: KindBytes, Unit: "B", Default: 0, Min: 0, Max: 1e9, Live: false,
				Help: "P_BD, the window cap and model constant; 0 uses the flow's max BDP (host.bdp). The thesis prints \"30000 bytes\" for Exp. 1 where HPCC's formula gives 3750 B (extract §4.1): set 30000 to try the literal reading."},
		},
		Presets: []Preset{
			{Name: "wq1_wr1", Help: "Thesis §5.2.1, W_Q:W_R 1:1: the queue weighs most, it drains fastest (140 µs in Exp. 1) with the most window swings.",
				Values: map[string]float64{"wq": 1, "wr": 1}},
			{Name: "wq1_wr100", Help: "Thesis §5.2.1, W_Q:W_R 1:100: the fair share weighs most, smoothest and slowest to drain (176 µs in Exp. 1).",
				Values: map[string]float64{"wq": 1, "wr": 100}},
			{Name: "horizon3", Help: "Thesis §5.2.2, horizon 3: converges as fast as 5 at 1:10, with the cheapest solves (256 µs vs 344 µs each there).",
				Values: map[string]float64{"horizon": 3}},
			{Name: "every4", Help: "The thesis' future work: solve on every 4th ACK instead of every ACK, a quarter of the solves.",
				Values: map[string]float64{"every": 4}},
			{Name: "literal", Help: "The thesis read literally: P_BD 30000 bytes as printed for Exp. 1, and no raise to the fair share when queues are empty.",
				Values: map[string]float64{"maxBDP": 30000, "growOnEmpty": 0}},
		},
		AckHighPriority: false,
		INT:             IntSpec{FixedBytes: mpccIntBytes, FlowCount: true, FlowCountTimeoutParam: "countTimeout"},
		// the pacing rate follows the window on every ACK, as HPCC's ChangeRate
		RateChangeReschedules: true,
		Series: []SeriesSpec{
			{Name: "qp_solve_ns", Unit: "ns", Stats: true, Help: "Wall-clock time of each QP solve (event, one per solve; the lab's only wall-clock series)."},
			{Name: "mpcc_q_int_bytes", Unit: "B", Help: "Queue of the most congested hop as the last ACK's INT reported it (what the sender sees, one feedback delay late)."},
			{Name: "mpcc_q_pred_bytes", Unit: "B", Help: "The model's prediction x of that queue when the new window takes effect (eq. 3.7): INT queue plus what the packets in flight add."},
			{Name: "mpcc_n", Unit: "", Help: "Active flows N at the selected hop (the switch's idle-timer flow counter)."},
			{Name: "mpcc_wfair_bytes", Unit: "B", Help: "Fair-share window W_f = R_out·P_BD/(R_in·N), the reference the window is pulled to."},
			{Name: "mpcc_soft", Unit: "B", Help: "Event: a QP was infeasible and was solved with its queue bounds widened by this slack (bytes)."},
		},
		NewSender: func(info FlowInfo, p Params) Sender {
			m := &mpcc{
				lineRate: float64(info.LineRate),
				pbd:      float64(info.MaxBDP),
				baseRTT:  float64(info.BaseRTT) / float64(Second),
				mtu:      float64(max(info.MTU, 1)),
				pkt:      float64(info.MTU + info.Header + mpccIntBytes),
			}
			for name, v := range p {
				m.set(name, v)
			}
			if m.pbdParam > 0 {
				m.pbd = m.pbdParam
			}
			// the history holds a step per packet a full window keeps in flight
			n := int(math.Ceil(m.pbd/m.mtu)) + 3
			m.cumDt = make([]float64, n)
			m.cumDtW = make([]float64, n)
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

type mpcc struct {
	// parameters
	wq, wr         float64
	horizon, every int
	pacing         bool
	growOnEmpty    bool
	pbdParam       float64

	// the flow
	lineRate float64 // R_in, bits/s
	pbd      float64 // P_BD, bytes
	baseRTT  float64 // seconds
	mtu, pkt float64 // payload and wire bytes of a full packet

	// state
	w       float64 // the controller's window, bytes
	acks    int     // ACKs since the last solve
	lastAck Time    // when the previous ACK came
	acked   bool    // an ACK has come
	// The steps of the past, as running totals of Δt_i and Δt_i·W_i in a
	// ring: cumDt[head] sums every step so far, cumDt[head−j] the steps
	// before the last j, so the last τ steps sum in O(1).
	cumDt, cumDtW []float64
	head          int
	nh            int // steps recorded, at most len(cumDt)−1 usable

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
	case "growOnEmpty":
		m.growOnEmpty = v != 0
	case "maxBDP":
		m.pbdParam = v
	default:
		return false
	}
	return true
}

// floor is the smallest window the flow acts on: half a packet when paced
// (the keep-alive rate), one packet otherwise (the NIC's window rule lets
// one packet out whatever the window).
func (m *mpcc) floor() float64 {
	if m.pacing {
		return m.pkt / 2
	}
	return m.pkt
}

func (m *mpcc) Start(env Env) {
	// maxBDP is the initial window (L401): the flow starts at line rate, and
	// the packets of that start are the history of its first ACKs
	m.w = m.pbd
	dt := m.pkt * 8 / m.lineRate // one packet time: the spacing at line rate
	for i := 0; i < int(math.Ceil(m.pbd/m.mtu)); i++ {
		m.record(dt)
	}
	m.apply(env)
}

// apply hands the window (at least one byte) and the pacing rate to the NIC.
func (m *mpcc) apply(env Env) {
	env.SetWindow(max(int64(m.w), 1))
	if !m.pacing {
		env.SetRate(Unlimited)
		return
	}
	env.SetRate(rateBps(min(m.lineRate, m.lineRate*max(m.w, m.floor())/m.pbd)))
}

// record closes a step of length dt with the window now in effect.
func (m *mpcc) record(dt float64) {
	n := len(m.cumDt)
	dt0, dtw0 := m.cumDt[m.head], m.cumDtW[m.head]
	m.head = (m.head + 1) % n
	m.cumDt[m.head] = dt0 + dt
	m.cumDtW[m.head] = dtw0 + dt*m.w
	if m.nh < n-1 {
		m.nh++
	}
}

// recent sums Δt_i and Δt_i·W_i over the last j steps (j ≤ nh).
func (m *mpcc) recent(j int) (dt, dtw float64) {
	n := len(m.cumDt)
	k := (m.head - j + n) % n
	return m.cumDt[m.head] - m.cumDt[k], m.cumDtW[m.head] - m.cumDtW[k]
}

func (m *mpcc) OnAck(env Env, a *Ack) {
	hops := a.INT // at most MaxHops records: the engine pushes no more
	// the step this ACK closes: eq. 2.2's RTT and A.2's interval
	d := m.baseRTT
	for _, h := range hops {
		if h.Rate > 0 {
			d += float64(h.Qlen) * 8 / float64(h.Rate)
		}
	}
	per := float64(max(a.Packets, 1)) // packets this ACK covers (host.ackEvery)
	// the model's interval for the steps ahead (A.1); the step this ACK
	// closes is recorded with its measured length, A.2's definition
	dt := per * m.pkt * d / max(m.w, m.floor())
	m.acks++
	if m.acks >= m.every {
		m.acks = 0
		// τ: the ACKs still to come for the packets in flight
		tau := int(math.Ceil(float64(a.SndNxt-a.SndUna) / (per * m.mtu)))
		m.control(env, hops, dt, min(max(tau, 0), m.nh))
	}
	now := env.Now()
	if m.acked {
		m.record(float64(now-m.lastAck) / float64(Second))
	} else {
		m.record(dt) // the first ACK ends no interval between ACKs
	}
	m.acked, m.lastAck = true, now
}

// control runs one controller step on an INT stack; dt is this step's
// interval and tau the steps in flight.
func (m *mpcc) control(env Env, hops []IntHop, dt float64, tau int) {
	// Algorithm 1: the hop with the largest queue; strict '>' keeps the
	// first of equal queues, and all-empty selects none
	sel, q := -1, int64(0)
	for i, h := range hops {
		if h.Qlen > q {
			sel, q = i, h.Qlen
		}
	}
	if sel < 0 {
		m.empty(env, hops)
		return
	}
	h := hops[sel]
	n := float64(max(h.Flows, 1))
	rOut := float64(h.Rate)
	if rOut <= 0 {
		return
	}
	wf := rOut * m.pbd / (m.lineRate * n)
	// eq. 3.7, each step by eq. 3.5 with its own Δt, at today's N and R_out
	sdt, sdtw := m.recent(tau)
	x := float64(q) + (n*m.lineRate*sdtw/m.pbd-rOut*sdt)/8
	x = max(x, 0)
	env.Gauge(mpccSeriesQInt, float64(q))
	env.Gauge(mpccSeriesQPred, x)
	env.Gauge(mpccSeriesN, n)
	env.Gauge(mpccSeriesWFair, wf)

	// B (eq. 3.5) for a QP step of `every` ACKs
	b := float64(m.every) * dt * n * m.lineRate / (8 * m.pbd)
	if m.qpw == nil || m.qpw.p != m.horizon {
		m.qpw = newMPCCQP(m.horizon)
	}
	t0 := env.WallNanos()
	u0, slack, ok := m.qpw.solve(b, m.wq, m.wr, x, n, m.pbd, wf)
	env.Event(mpccSeriesSolve, float64(env.WallNanos()-t0))
	if slack > 0 {
		env.Event(mpccSeriesSoft, slack)
	}
	if !ok {
		return // not even the widened problem could be solved: keep the window
	}
	m.w = clamp(u0+wf, 0, m.pbd)
	m.apply(env)
}

// empty handles an ACK whose every queue is empty: keep the window (L552),
// but raise one below the fair share of the tightest hop to it.
func (m *mpcc) empty(env Env, hops []IntHop) {
	env.Gauge(mpccSeriesQInt, 0)
	wf := math.Inf(1)
	n := 0.0
	for _, h := range hops {
		if h.Rate <= 0 {
			continue
		}
		hn := float64(max(h.Flows, 1))
		if share := float64(h.Rate) * m.pbd / (m.lineRate * hn); share < wf {
			wf, n = share, hn
		}
	}
	if math.IsInf(wf, 1) {
		return
	}
	env.Gauge(mpccSeriesN, n)
	env.Gauge(mpccSeriesWFair, wf)
	if m.growOnEmpty && m.w < wf {
		m.w = min(wf, m.pbd)
		m.apply(env)
	}
}

func (m *mpcc) SetParam(env Env, name string, v float64) error {
	if !m.set(name, v) {
		return fmt.Errorf("mpcc has no parameter %q", name)
	}
	m.apply(env)
	return nil
}

// mpccQP is the workspace of one flow's QPs at horizon p.
type mpccQP struct {
	p    int
	prob qp.Problem
	sol  *qp.Solver
	u    []float64
}

func newMPCCQP(p int) *mpccQP {
	return &mpccQP{p: p, sol: qp.NewSolver(p, p), u: make([]float64, p),
		prob: qp.Problem{N: p, M: p, H: make([]float64, p*p), G: make([]float64, p),
			LB: make([]float64, p), UB: make([]float64, p), A: make([]float64, p*p),
			LBA: make([]float64, p), UBA: make([]float64, p)}}
}

// solve builds and solves the condensed QP (extract §2.8) and returns the
// first move U*_0. When the queue bounds cannot all hold, every queue row is
// widened by the smallest slack that makes them feasible, returned as slack.
func (w *mpccQP) solve(b, wq, wr, x, n, pbd, wf float64) (u0, slack float64, ok bool) {
	p := w.p
	pr := &w.prob
	slack = mpccSlack(p, b, x, n, pbd, wf)
	if slack > 0 {
		// a millionth more than the interval test's least slack (which it
		// finds to within its rounding tolerance), so that the solver's
		// stricter feasibility test agrees: well under a byte
		slack += 1e-6 * (slack + math.Abs(x) + n*pbd + 1)
	}
	for i := 0; i < p; i++ {
		for j := 0; j < p; j++ {
			// (LᵀL)_ij = p − max(i, j) with L lower-triangular ones
			v := 2 * b * b * wq * float64(p-max(i, j))
			if i == j {
				v += 2 * wr
			}
			pr.H[i*p+j] = v
			a := 0.0
			if j <= i {
				a = b
			}
			pr.A[i*p+j] = a
		}
		pr.G[i] = 2 * b * wq * x * float64(p-i) // erratum E1: 2·B̄ᵀ·W̄_Q·Ā·x
		pr.LB[i], pr.UB[i] = -wf, pbd-wf
		pr.LBA[i], pr.UBA[i] = -x-slack, (n-1)*pbd-x+slack
	}
	st, err := w.sol.Solve(pr, w.u)
	if err == nil && st == qp.Infeasible && slack == 0 {
		// on the boundary the interval test and the solver's tolerance may
		// disagree: widen by a rounding-sized slack and try once more
		slack = 1e-9 * (math.Abs(x) + n*pbd + 1)
		for i := 0; i < p; i++ {
			pr.LBA[i] -= slack
			pr.UBA[i] += slack
		}
		st, err = w.sol.Solve(pr, w.u)
	}
	if err != nil || st != qp.Optimal {
		return 0, slack, false
	}
	return w.u[0], slack, true
}

// mpccFeasible tells exactly whether the queue rows, each widened by σ, can
// hold: the predicted queue after i moves is x + S_i, S_i = B·(U_0 + … +
// U_{i−1}), each move in [−W_f, P_BD − W_f], and every S_i must lie in
// [−x − σ, (N−1)·P_BD − x + σ]. The set of reachable S_i is an interval,
// propagated step by step; the rows are infeasible when it empties.
func mpccFeasible(p int, b, x, n, pbd, wf, sigma float64) bool {
	lo, hi := -b*wf, b*(pbd-wf)
	floor, ceil := -x-sigma, (n-1)*pbd-x+sigma
	tol := 1e-9 * (math.Abs(floor) + math.Abs(ceil) + 1)
	rlo, rhi := 0.0, 0.0
	for i := 0; i < p; i++ {
		rlo = max(rlo+lo, floor)
		rhi = min(rhi+hi, ceil)
		if rlo > rhi+tol {
			return false
		}
	}
	return true
}

// mpccSlack is the smallest σ ≥ 0 for which the widened queue rows are
// feasible (0 when they already are), by bisection to 1e-9 relative: the
// rows only get looser as σ grows, and σ = x + P·B·(P_BD + W_f) + (N+1)·P_BD
// always suffices.
func mpccSlack(p int, b, x, n, pbd, wf float64) float64 {
	if mpccFeasible(p, b, x, n, pbd, wf, 0) {
		return 0
	}
	lo, hi := 0.0, math.Abs(x)+float64(p)*b*(pbd+wf)+(n+1)*pbd
	for hi-lo > 1e-9*hi {
		mid := (lo + hi) / 2
		if mpccFeasible(p, b, x, n, pbd, wf, mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}
