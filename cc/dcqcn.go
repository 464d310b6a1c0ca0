package cc

import (
	"fmt"
	"math"
)

// DCQCN as HPCC's simulator implements it: Mellanox's version (the CX4+ NIC
// behaviour, not the SIGCOMM'15 paper's), rdma-hw.cc UpdateAlphaMlx,
// cnp_received_mlx, CheckRateDecreaseMlx, RateIncEventTimerMlx and the three
// increase phases. Defaults are run.py's `--cc dcqcn` at 100 Gbps (rates
// scale with the host link rate); presets give run.py's dcqcn_paper timers
// and the _vwin variants with a window.
//
// Behaviour (rdma-hw.cc):
//   - the first CNP sets alpha = 1, multiplies the rate by rateOnFirstCNP, and
//     starts the alpha timer and the decrease check; the check runs 1 ns after
//     the alpha update, so alpha is updated before the decrease (issue #52 of
//     the HPCC repository asks about this order);
//   - every alphaTimer: alpha ← (1−g)·alpha + g if a CNP arrived since the last
//     update, else (1−g)·alpha;
//   - every decreaseInterval, if a CNP arrived: target ← rate (unless
//     clampTarget is off and no increase happened since the last cut), rate ←
//     max(minRate, rate·(1−alpha/2)), the increase stage resets and the
//     increase timer restarts;
//   - every increaseTimer: stage < fastRecovery: rate ← (rate+target)/2;
//     stage = fastRecovery: target += ai; above: target += hai (target capped
//     at line rate), then rate ← (rate+target)/2; stage++.
//
// The reference runs the alpha and decrease timers as periodic events for
// the whole life of a flow. Here they are evaluated lazily on the same grid:
// alpha catches up on the ticks that have passed whenever it is read, and a
// decrease check is scheduled only at the first grid point after a CNP. The
// values are those of the periodic timers (a tick falling on the very
// picosecond of a CNP counts as before it), at a fraction of the events.
func dcqcnAlgorithm() *Algorithm {
	return &Algorithm{
		Name:  "dcqcn",
		Title: "DCQCN (Mellanox version, as HPCC's simulator)",
		Help: "ECN-based rate control: switches mark packets above Kmin, the receiver flags a CNP on the ACK of each " +
			"marked packet, and the sender cuts its rate by alpha/2 (alpha tracks how often CNPs come), then recovers " +
			"towards its target rate on a timer.",
		Param: []Param{
			rateParam("ai", 20, "Additive increase of the target rate per increase-timer tick in the active-increase stage (run.py: 5 × bw/25 Mb/s)."),
			rateParam("hai", 200, "Hyper-additive increase of the target rate per tick once past the active stage (run.py: 50 × bw/25 Mb/s)."),
			rateParam("minRate", 1000, "Lowest rate a cut can reach (run.py: 1000 Mb/s at every speed; here 1% of the line rate, so slow links stay sensible)."),
			{Name: "g", Kind: KindNumber, Default: 1.0 / 256, Min: 0, Max: 1, Live: true, Help: "EWMA gain of alpha, the estimate of how congested the path is (run.py: 1/256)."},
			timeParam("alphaTimer", 1, "Alpha update period (run.py dcqcn: 1 µs; dcqcn_paper: 50 µs)."),
			timeParam("decreaseInterval", 4, "Rate-decrease check period: at most one cut per interval, if a CNP came (run.py: 4 µs; paper: 50 µs)."),
			timeParam("increaseTimer", 300, "Rate-increase timer (run.py: 300 µs; paper: 55 µs)."),
			{Name: "fastRecovery", Kind: KindInt, Default: 1, Min: 0, Max: 100, Live: true, Help: "Increase ticks spent in fast recovery (rate halfway to target) before active increase (run.py: 1)."},
			fracParam("rateOnFirstCNP", 1, "Fraction of the rate kept on the first CNP (Mellanox: 1.0)."),
			boolParam("clampTarget", false, true, "Set the target to the current rate on every cut (run.py: off: only after an increase)."),
			boolParam("window", false, false, "Also limit in-flight bytes to max BDP × rate / line rate (run.py's _vwin variants)."),
			ackPriorityParam(true, "run.py: yes; the _vwin variants: no"),
		},
		Presets: []Preset{
			{Name: "dcqcn_paper", Help: "run.py's dcqcn_paper: the DCQCN paper's timers (alpha 50 µs, decrease 50 µs, increase 55 µs).",
				Values: map[string]float64{"alphaTimer": 50, "decreaseInterval": 50, "increaseTimer": 55}},
			{Name: "dcqcn_vwin", Help: "run.py's dcqcn_vwin: dcqcn with a window of max BDP × rate / line rate and data-priority ACKs (the HPCC paper's DCQCN+win).",
				Values: map[string]float64{"window": 1, "ackHighPriority": 0}},
			{Name: "dcqcn_paper_vwin", Help: "run.py's dcqcn_paper_vwin: the paper's timers with the window.",
				Values: map[string]float64{"alphaTimer": 50, "decreaseInterval": 50, "increaseTimer": 55, "window": 1, "ackHighPriority": 0}},
		},
		AckHighPriority:  true,
		AckPriorityParam: "ackHighPriority",
		ECN:              runPyECN,
		Series: []SeriesSpec{
			{Name: "dcqcn_alpha", Unit: "", Help: "DCQCN's alpha: the smoothed fraction of alpha periods with a CNP."},
			{Name: "dcqcn_target_bps", Unit: "bps", Help: "DCQCN's target rate, the rate recovery climbs back to."},
		},
		NewSender: func(info FlowInfo, p Params) Sender {
			d := &dcqcn{lineRate: float64(info.LineRate), maxBDP: info.MaxBDP}
			for name, v := range p {
				d.set(name, v)
			}
			return d
		},
	}
}

// timer slots
const (
	dcqcnDecrease = 0
	dcqcnIncrease = 1
)

// series ids
const (
	dcqcnSeriesAlpha = iota
	dcqcnSeriesTarget
)

type dcqcn struct {
	ai, hai, minRate, g, firstCut float64
	tAlpha, tDec, tInc            Time
	fastRecovery                  int
	clampTarget, window           bool
	lineRate                      float64
	maxBDP                        int64

	rate, target float64
	alpha        float64
	started      bool // a CNP has come: the alpha and decrease grids run
	alphaCNP     bool // a CNP came since the last alpha tick
	decCNP       bool // a CNP came since the last decrease check
	alphaNext    Time // the next alpha tick
	decNext      Time // the next decrease check on the grid
	decPending   bool // a decrease check is scheduled
	stage        int  // rate-increase stage
}

// set applies one parameter; it reports false for an unknown name.
func (d *dcqcn) set(name string, v float64) bool {
	switch name {
	case "ai":
		d.ai = v * mbps
	case "hai":
		d.hai = v * mbps
	case "minRate":
		d.minRate = v * mbps
	case "g":
		d.g = v
	case "alphaTimer":
		d.tAlpha = usec(v)
	case "decreaseInterval":
		d.tDec = usec(v)
	case "increaseTimer":
		d.tInc = usec(v)
	case "fastRecovery":
		d.fastRecovery = int(v)
	case "rateOnFirstCNP":
		d.firstCut = v
	case "clampTarget":
		d.clampTarget = v != 0
	case "window":
		d.window = v != 0
	case "ackHighPriority": // read by the engine, not the sender
	default:
		return false
	}
	return true
}

func (d *dcqcn) Start(env Env) {
	d.rate, d.target, d.alpha = d.lineRate, d.lineRate, 1
	d.apply(env)
}

// apply hands the rate (and window) to the engine.
func (d *dcqcn) apply(env Env) {
	pace(env, d.rate, d.window, d.maxBDP, d.lineRate)
}

// catchUp applies the alpha ticks up to and including now. Like the
// reference's timer, a tick already due keeps its time when alphaTimer
// changes, and the ticks after it use the new period.
func (d *dcqcn) catchUp(now Time) {
	if !d.started || now < d.alphaNext {
		return
	}
	d.alpha, d.alphaNext = d.alphaAt(now)
	d.alphaCNP = false
}

// alphaAt returns alpha after the ticks up to now, and the next tick,
// without changing the state.
func (d *dcqcn) alphaAt(now Time) (float64, Time) {
	alpha := d.alpha
	if !d.started || now < d.alphaNext {
		return alpha, d.alphaNext
	}
	n := int64((now-d.alphaNext)/d.tAlpha) + 1 // ticks at alphaNext, +T, ... ≤ now
	if d.alphaCNP {
		alpha = (1-d.g)*alpha + d.g
	} else {
		alpha *= 1 - d.g
	}
	if n > 1 {
		alpha *= math.Pow(1-d.g, float64(n-1))
	}
	return alpha, d.alphaNext + Time(n)*d.tAlpha
}

func (d *dcqcn) cnp(env Env) {
	now := env.Now()
	if !d.started {
		// first CNP (cnp_received_mlx): alpha = 1, cut by rateOnFirstCNP,
		// start the alpha timer and the decrease check 1 ns after it
		d.started = true
		d.alpha = 1
		d.alphaCNP = false
		d.decCNP = true
		d.alphaNext = now + d.tAlpha
		d.decNext = now + d.tDec + Nanosecond
		d.rate *= d.firstCut
		d.target = d.rate
		d.scheduleDecrease(env)
		d.apply(env)
		return
	}
	d.catchUp(now)
	d.alphaCNP = true
	d.decCNP = true
	d.scheduleDecrease(env)
}

// scheduleDecrease arms the decrease check at the first grid point after
// now (the checks in between had no CNP to act on).
func (d *dcqcn) scheduleDecrease(env Env) {
	if d.decPending {
		return
	}
	d.skipDecreaseChecks(env.Now())
	d.decPending = true
	env.SetTimer(dcqcnDecrease, d.decNext)
}

// skipDecreaseChecks moves decNext past the checks at or before now that
// had no CNP to act on (and so were never scheduled).
func (d *dcqcn) skipDecreaseChecks(now Time) {
	if d.started && !d.decPending && now >= d.decNext {
		d.decNext += ((now-d.decNext)/d.tDec + 1) * d.tDec
	}
}

func (d *dcqcn) OnAck(env Env, a *Ack) {
	if a.CNP {
		d.cnp(env)
	}
}

func (d *dcqcn) OnCNP(env Env) { d.cnp(env) }

func (d *dcqcn) OnTimer(env Env, slot int) {
	now := env.Now()
	switch slot {
	case dcqcnDecrease:
		if !d.decreaseDue(now) {
			return
		}
		d.catchUp(now)
		// CheckRateDecreaseMlx
		if d.clampTarget || d.stage != 0 {
			d.target = d.rate
		}
		d.cut(env, now, d.alpha)
	case dcqcnIncrease:
		env.SetTimer(dcqcnIncrease, now+d.tInc)
		switch {
		case d.stage < d.fastRecovery: // fast recovery
		case d.stage == d.fastRecovery: // active increase
			d.target = min(d.target+d.ai, d.lineRate)
		default: // hyper increase
			d.target = min(d.target+d.hai, d.lineRate)
		}
		d.rate = d.rate/2 + d.target/2
		d.stage++
		d.apply(env)
	}
}

// decreaseDue is the decrease check's bookkeeping (the check reschedules
// itself, ScheduleDecreaseRateMlx): it says whether a CNP arrived since
// the last check, so that the rate is cut now. DCQCN and Dolce-RC share
// it, and the cut; they differ in the target rule and in where alpha
// comes from.
func (d *dcqcn) decreaseDue(now Time) bool {
	d.decPending = false
	d.decNext = now + d.tDec
	return d.decCNP
}

// cut is the rate decrease, rate ← max(minRate, rate·(1−alpha/2)), and
// what follows it: fast recovery starts over and the increase timer is
// armed from now.
func (d *dcqcn) cut(env Env, now Time, alpha float64) {
	d.rate = max(d.minRate, d.rate*(1-alpha/2))
	d.stage = 0
	d.decCNP = false
	env.SetTimer(dcqcnIncrease, now+d.tInc)
	d.apply(env)
}

// OnSample reports alpha as of now without applying the ticks, so that the
// sampling interval cannot change the arithmetic of the run.
func (d *dcqcn) OnSample(env Env) {
	alpha, _ := d.alphaAt(env.Now())
	env.Gauge(dcqcnSeriesAlpha, alpha)
	env.Gauge(dcqcnSeriesTarget, d.target)
}

func (d *dcqcn) SetParam(env Env, name string, v float64) error {
	// past ticks keep the old g and periods
	d.catchUp(env.Now())
	d.skipDecreaseChecks(env.Now())
	if !d.set(name, v) {
		return fmt.Errorf("dcqcn has no parameter %q", name)
	}
	d.apply(env)
	return nil
}
