package cc

import (
	"fmt"
)

// Dolce-RC (Ye, Lin, Cai, Zhou, He, Lui, "Data-Driven Rate Control for RDMA
// Networks: A Lightweight Online Learning Approach"): DCQCN whose cut is
// chosen per connection by a DR-UCB bandit (bandit.go). On a CNP the revised
// DCQCN sets
//
//	R_T = β·R_C,  then  R_C = (1 − α/2)·R_C          (paper eqs. 1, 2)
//
// with (α, β) the current arm; DCQCN's α EWMA is removed. Everything else is
// this lab's DCQCN (dcqcn.go, HPCC's Mellanox version), reused by embedding:
// the cut happens at the decrease check that follows a CNP (at most one per
// decreaseInterval), recovery is the same timer-driven fast recovery /
// additive / hyper increase. R_T is capped at the line rate.
//
// Learning (Algorithm 2): a CNP is "qualified" when at least
// qualifyInterval has passed since the last qualified CNP (or since the flow
// started). On a qualified CNP the reward of the arm in force since then is
// X = 1 − marked/sent (eq. 4), from exact counts over the interval between
// two qualified CNPs: sent = data packets the sender put on the wire in it
// (OnSend, retransmissions included), marked = the ECN-marked packets the
// receiver reported on ACKs that arrived in it (Ack.ECNMarked). That is not
// quite per arm: marks of packets sent just before an arm change arrive an
// RTT later and count against the next arm (so the reward is clamped to
// [0, 1]); the paper's testbed approximated the ratio with 1 µs time slots. The bandit is updated and picks
// the next arm, which applies to this CNP's cut and to every cut until the
// next qualified CNP. A qualified CNP with no packet sent since the last one
// is not an iteration (no evidence). Before the first qualified CNP arm 0
// (DR-UCB's I_0) is in force.
//
// [AMBIG] resolutions (the registry help repeats them):
//   - connection: by default each flow (message) is its own connection
//     and learns from scratch; with sharedQP, the messages between one pair
//     of hosts share one queue pair (cc.Conn), as RDMA applications keep a
//     QP per peer: the bandit, the arm in force and the reward interval's
//     counts are the connection's and outlive each message, while every
//     message keeps its own DCQCN rate state (it starts at line rate, as
//     every flow in this lab does).
//   - the cut (eqs. 1–2, with the current arm) happens at DCQCN's decrease
//     check, at most once per decreaseInterval when a CNP came; only
//     qualified CNPs iterate the bandit; the new arm applies to the cut that
//     follows the qualifying CNP.
//   - "at least five times the CNP interval (i.e., about one fast recovery
//     phase)": with the DCQCN paper's timers (CNP 50 µs, T 55 µs, F 5) the
//     two readings agree; with run.py's (decrease check 4 µs, T 300 µs, F 1)
//     they do not. Default: one fast-recovery phase, fastRecovery ×
//     increaseTimer (qualifyInterval 0); preset dolce_5cnp: 5 ×
//     decreaseInterval = 20 µs.
//   - the arm values are not given: derived below from eq. 20; preset
//     dolce_dcqcn_arms uses DCQCN-style β = 1 arms instead.
//   - natural log in the exploration bonus; ties to the lowest arm.
//
// Arm derivation (paper Appendix B, eq. 20, with the "a/" that eq. 3 drops):
//
//	α = (τ·R'(b+d)/a)·[β − 1 + τ·R_AI·R'(c+e)/(a·R)]
//
// R = C/N the steady-state rate (bit/s), R' = R/(8·packet) the same in
// packets/s, p* the marking probability, and (the fluid model of DCQCN,
// Zhu et al. CoNEXT'16, eq. 12) a = 1 − (1−p*)^{τR'}, b = p*/((1−p*)^{−B} −
// 1), c = (1−p*)^{FB}·b, d = p*/((1−p*)^{−TR'} − 1), e = (1−p*)^{FTR'}·d.
// This lab's DCQCN has no byte counter (B → ∞: b = c = 0), τ = the decrease
// check 4 µs, T = increaseTimer 300 µs, F = fastRecovery 1, R_AI = ai
// 20 Mb/s, C = 100 Gb/s, packet = 1048 B on the wire. p* is not given
// either: take DCQCN's own equilibrium (β = 1, α = 1 − (1−p*)^{1µs·R'}, the
// alpha EWMA's fixed point with alphaTimer 1 µs) and keep that operating
// point while β moves. Then α is linear in β:
//
//	N  = 2: p* = 2.13e-4, α = 0.001 + 2.16(β−1)
//	N  = 8: p* = 1.21e-3, α = 0.002 + 1.39(β−1)
//	N = 32: p* = 6.65e-3, α = 0.003 + 0.90(β−1)
//
// α ≥ 0 needs β ≥ 1 at this operating point (β < 1 would need a negative
// α: a smaller β must be paid for by a gentler cut, and β = 1 is already
// almost cut-free), and α grows with β as the paper's Fig. 3 shows. Four
// arms on the N = 8 line (the testbed's eight servers), β spanning the
// paper's plotted range above 1:
//
//	arm 0: β = 1.0, α = 0.002   (hold the rate: DCQCN's target rule, ~no cut)
//	arm 1: β = 1.1, α = 0.141
//	arm 2: β = 1.2, α = 0.280
//	arm 3: β = 1.3, α = 0.420   (deepest cut, recovery aims 30% above)
//
// Every arm has the same fluid equilibrium rate C/N at the same p*; they
// differ in the oscillation: how deep a cut and how far above the old rate
// recovery aims. The bandit picks the one with the fewest marks.
func dolceAlgorithm() *Algorithm {
	var params []Param
	for _, p := range dcqcnAlgorithm().Param {
		switch p.Name {
		case "g", "alphaTimer", "clampTarget": // the α EWMA is removed; R_T is always β·R_C
			continue
		}
		params = append(params, p)
	}
	armHelp := func(i int, what string) string {
		return fmt.Sprintf("Arm %d's %s. [AMBIG] the paper gives no arm values; the defaults are four points on the "+
			"steady-state line of its eq. 20 (α = 0.002 + 1.39(β−1) at C = 100 Gb/s, N = 8; derivation in cc/dolce.go).", i, what)
	}
	for i := 0; i < dolceArms; i++ {
		params = append(params,
			Param{Name: fmt.Sprintf("alpha%d", i), Kind: KindNumber, Default: dolceDefaultArms[i][0], Min: 0, Max: 1, Live: true,
				Help: armHelp(i, "α: on a CNP R_C ← (1 − α/2)·R_C (0 ≤ α ≤ 1)")},
			Param{Name: fmt.Sprintf("beta%d", i), Kind: KindNumber, Default: dolceDefaultArms[i][1], Min: 0.5, Max: 2, Live: true,
				Help: armHelp(i, "β: on a CNP R_T ← β·R_C before the cut (β = 1 is DCQCN's rule; capped at the line rate)")})
	}
	params = append(params,
		Param{Name: "gamma", Kind: KindNumber, Default: 0.9998, Min: 0.5, Max: 1, Live: true,
			Help: "DR-UCB discount factor γ per iteration (paper: 0.9998, a memory of about 1/(1−γ) = 5000 iterations)."},
		Param{Name: "epsilon", Kind: KindNumber, Default: 0.015, Min: 0.001, Max: 1, Live: true,
			Help: "DR-UCB forced-exploration rate ε: each arm is tried once at the start of every ⌊K/ε⌋ iterations (paper: 0.015 → every 266). The paper calls it random; it is a fixed round robin."},
		Param{Name: "xi", Kind: KindNumber, Default: 0.5001, Min: 0, Max: 10, Live: true,
			Help: "DR-UCB exploration constant ξ in the bonus √(ξ·ln Σn / n_i) (paper: 0.5001, must be > 0.5 for its bound). [AMBIG] natural log."},
		Param{Name: "sharedQP", Kind: KindBool, Default: 0, Min: 0, Max: 1, Live: false,
			Help: "The messages between one pair of hosts share one connection (an RDMA queue pair) and its bandit: what is learnt outlives each message. " +
				"Off: every message is its own connection and learns from scratch. [AMBIG] the paper keeps the bandit per connection without saying how messages map to QPs."},
		Param{Name: "qualifyInterval", Kind: KindTime, Unit: "us", Default: 0, Min: 0, Max: 1e6, Live: true,
			Help: "A CNP is qualified (one bandit iteration, reward measured over the interval) when this long has passed since the last qualified one; " +
				"0 means one fast-recovery phase, fastRecovery × increaseTimer (300 µs with run.py's timers), following changes to either; never less than decreaseInterval. " +
				"[AMBIG] the paper says \"at least five times the CNP interval (i.e., about one fast recovery phase)\"; with the DCQCN paper's timers the two agree " +
				"(5 × 50 µs ≈ 5 × 55 µs), with run.py's they do not: preset dolce_5cnp uses 5 × decreaseInterval = 20 µs instead."},
	)
	return &Algorithm{
		Name:  "dolce",
		Title: "Dolce-RC (DCQCN with a DR-UCB-chosen cut)",
		Help: "DCQCN whose cut is learnt online: on a CNP the target becomes β·rate and the rate is cut by α/2, with (α, β) one of four arms " +
			"that a discounted UCB bandit (DR-UCB) picks per flow on every qualified CNP, rewarding 1 − the ECN-marked fraction of the packets " +
			"sent with that arm. DCQCN's alpha estimate is removed; recovery is DCQCN's. [AMBIG] choices: connection = flow (each flow learns " +
			"from scratch) unless sharedQP; ECN defaults are the paper's 7 KB / 500 KB with Pmax 1 (not given; the PMAX of the DCQCN code it cites).",
		Param: params,
		Presets: []Preset{
			{Name: "dolce_5cnp", Help: "[AMBIG] alternative: a CNP qualifies after five CNP intervals, read as 5 × decreaseInterval = 20 µs, instead of one fast-recovery phase (300 µs): about 15× more bandit iterations.",
				Values: map[string]float64{"qualifyInterval": 20}},
			{Name: "dolce_dcqcn_arms", Help: "[AMBIG] alternative arm set: β = 1 (DCQCN's target rule) and α ∈ {1/16, 1/8, 1/4, 1/2}: the bandit only learns how deep to cut.",
				Values: map[string]float64{"alpha0": 0.0625, "beta0": 1, "alpha1": 0.125, "beta1": 1, "alpha2": 0.25, "beta2": 1, "alpha3": 0.5, "beta3": 1}},
		},
		AckHighPriority:  true,
		AckPriorityParam: "ackHighPriority",
		// The paper's thresholds (Kmin 7 KB, Kmax 500 KB). [AMBIG] Pmax is not
		// given: 1.0, the PMAX of the DCQCN code it cites (ns3-rdma mix/config.txt).
		ECN: &ECNDefaults{Kmin: 7_000, Kmax: 500_000, Pmax: 1},
		Series: []SeriesSpec{
			{Name: "dolce_arm", Unit: "", Help: "Dolce-RC: the arm (0..3) in force, i.e. the (α, β) the next cut uses."},
			{Name: "dolce_reward", Unit: "", Help: "Dolce-RC (event): the reward 1 − marked/sent of the arm just closed, at each qualified CNP."},
			{Name: "dolce_target_bps", Unit: "bps", Help: "Dolce-RC's target rate R_T, the rate recovery climbs back to."},
			{Name: "dolce_pick", Unit: "", Help: "Dolce-RC (event): the arm the bandit picked at each iteration, on the flow whose CNP iterated it (the arm trace)."},
		},
		Connections: true,
		NewSender: func(info FlowInfo, p Params) Sender {
			d := &dolce{}
			d.lineRate, d.maxBDP = float64(info.LineRate), info.MaxBDP
			// the α EWMA is off: alpha never moves (g = 0), and its lazy
			// grid ticks rarely so catching it up costs nothing
			d.g, d.tAlpha = 0, Millisecond
			d.l = connState(info, p["sharedQP"] != 0, &d.own)
			for name, v := range p {
				d.set(name, v)
			}
			return d
		},
	}
}

// dolceArms is K, the paper's four arms.
const dolceArms = 4

// dolceDefaultArms are the derived (α, β) pairs, arm 0 first.
var dolceDefaultArms = [dolceArms][2]float64{{0.002, 1.0}, {0.141, 1.1}, {0.280, 1.2}, {0.420, 1.3}}

// series ids
const (
	dolceSeriesArm = iota
	dolceSeriesReward
	dolceSeriesTarget
	dolceSeriesPick
)

// dolceLearner is what Dolce-RC learns on one connection: the bandit, the
// arm in force and the counts of the current reward interval.
type dolceLearner struct {
	bandit       DRUCB
	ready        bool  // initialised by the connection's first message
	arm          int   // arm in force
	winStart     Time  // start of the current reward interval
	sent, marked int64 // packets sent / reported marked in it
	lastReward   float64
	learned      bool // at least one iteration happened
}

type dolce struct {
	dcqcn // rates, timers, recovery; its alpha is unused

	alpha, beta    [dolceArms]float64
	gamma, eps, xi float64
	qualify        Time
	l              *dolceLearner // this flow's connection's learner: own, or shared (sharedQP)
	own            dolceLearner
}

// set applies one parameter (Dolce-RC's own first, then DCQCN's).
func (d *dolce) set(name string, v float64) bool {
	switch name {
	case "gamma":
		d.gamma, d.l.bandit.Gamma = v, v
	case "epsilon":
		d.eps, d.l.bandit.Eps = v, v
	case "xi":
		d.xi, d.l.bandit.Xi = v, v
	case "qualifyInterval":
		d.qualify = usec(v)
	case "sharedQP": // read when the flow is built
	default:
		if len(name) == 6 && name[:5] == "alpha" && name[5] >= '0' && name[5] < '0'+dolceArms {
			d.alpha[name[5]-'0'] = v
			return true
		}
		if len(name) == 5 && name[:4] == "beta" && name[4] >= '0' && name[4] < '0'+dolceArms {
			d.beta[name[4]-'0'] = v
			return true
		}
		switch name {
		case "g", "alphaTimer", "clampTarget":
			return false // not parameters of Dolce-RC
		}
		return d.dcqcn.set(name, v)
	}
	return true
}

func (d *dolce) Start(env Env) {
	d.dcqcn.Start(env)
	if l := d.l; !l.ready {
		l.bandit.Init(dolceArms, d.gamma, d.eps, d.xi)
		l.arm = l.bandit.Select()
		l.winStart = env.Now()
		l.ready = true
	}
}

func (d *dolce) OnSend(_ Env, _, _ int64, _ bool) { d.l.sent++ }

func (d *dolce) OnAck(env Env, a *Ack) {
	d.l.marked += int64(a.ECNMarked)
	if a.CNP {
		d.congestion(env)
	}
}

func (d *dolce) OnCNP(env Env) { d.congestion(env) }

// congestion handles one CNP: a qualified one iterates the bandit first, so
// that the arm it picks applies to this CNP's cut; then DCQCN's CNP logic
// (first-CNP handling, the decrease check) runs.
func (d *dolce) congestion(env Env) {
	now := env.Now()
	if l := d.l; now-l.winStart >= d.qualifyTime() && l.sent > 0 {
		x := 1 - float64(l.marked)/float64(l.sent)
		x = clamp(x, 0, 1) // marks of packets sent before the interval can exceed its sends
		l.bandit.Update(l.arm, x)
		l.arm = l.bandit.Select()
		l.lastReward, l.learned = x, true
		l.sent, l.marked, l.winStart = 0, 0, now
		env.Event(dolceSeriesReward, x)
		env.Event(dolceSeriesPick, float64(l.arm))
	}
	d.dcqcn.cnp(env)
}

// qualifyTime is the least time between qualified CNPs: qualifyInterval,
// or one fast-recovery phase; never less than one decrease interval (with
// fastRecovery set to 0 every CNP would otherwise iterate the bandit).
func (d *dolce) qualifyTime() Time {
	q := d.qualify
	if q <= 0 {
		q = Time(d.fastRecovery) * d.tInc
	}
	return max(q, d.tDec)
}

func (d *dolce) OnTimer(env Env, slot int) {
	if slot != dcqcnDecrease {
		d.dcqcn.OnTimer(env, slot)
		return
	}
	now := env.Now()
	if !d.decreaseDue(now) {
		return
	}
	// the revised cut (eqs. 1, 2) with the arm in force: the target rule
	// is Dolce-RC's own, the cut is DCQCN's with the arm's alpha
	arm := d.l.arm
	d.target = min(d.beta[arm]*d.rate, d.lineRate)
	d.cut(env, now, d.alpha[arm])
}

func (d *dolce) OnSample(env Env) {
	env.Gauge(dolceSeriesArm, float64(d.l.arm))
	env.Gauge(dolceSeriesTarget, d.target)
}

func (d *dolce) SetParam(env Env, name string, v float64) error {
	d.catchUp(env.Now())
	d.skipDecreaseChecks(env.Now())
	if !d.set(name, v) {
		return fmt.Errorf("dolce has no parameter %q", name)
	}
	d.apply(env)
	return nil
}
