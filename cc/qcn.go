package cc

import (
	"fmt"
	"math"
)

// QCN (IEEE 802.1Qau), as "Stability Analysis of QCN: The Averaging
// Principle" (Alizadeh et al., SIGMETRICS'11; seed 003) describes it. The
// stage logic (byte-counter and timer stages, fast recovery, active and
// hyper-active increase) follows Adrian Tam's ns-3 model of pseudo-code
// v2.2 (github.com/righthandabacus/ns-3-dcn, src/devices/point-to-point/
// cp-net-device.cc ShouldSendCN and rp-net-device.cc RateIncrease); the
// constants the paper leaves out (the 15 ms timer, R_HAI 50 Mb/s at 10 G,
// the 0.5 minimum decrease factor) are the pseudo-code's, as the Cavium
// LiquidIO firmware's RPG_* constants and the IBM OMNeT++ parameter list
// (Crisan et al., HotI'11) give them.
//
// Congestion point (one per switch egress port, paper §2.1): a data packet is
// sampled with probability `sampling` (the paper's model, 1%); optionally the
// standard's variable sampling instead samples every 150, 75, 50, 37.5, 30,
// 25, 21.5 or 18.5 KB by the last quantised feedback (Tam's switch on
// qntzFb/8), ±15% at random. At a sample, with Q the queue including the
// packet and Q_old the queue at the previous sample:
//
//	Fb = (Q − Q_eq) + w·(Q − Q_old)
//
// (the paper's sign: positive means congestion). Fb is quantised to 6 bits
// against Fb_max = Q_eq·(2w+1) (the pseudo-code's bound; qntzFb =
// min(63, ⌊64·Fb/Fb_max⌋)) and sent to the sampled packet's source when the
// quantised value is above 0.
//
// Reaction point (the source, paper §2.1 and Fig. 5): on feedback Fb,
// R_T ← R_C and R_C ← R_C·(1 − min(G_d·Fb, 0.5)) (G_d = 1/128, so with the
// default gain a cut is at most 49%), and the byte counter and timer
// restart. Then the byte counter
// (every byteCounter bytes sent; half that once past fast recovery, the
// paper's footnote 5: 50 packets in active increase) and the timer (every
// timer; likewise halved) each end cycles; after either:
//   - both stages ≤ fastRecovery (5): fast recovery, R_C ← (R_C + R_T)/2;
//   - one stage > 5: active increase, R_T += R_AI, then the average;
//   - both > 5: hyper-active increase, R_T += R_HAI·(min stage − 5).
//
// The standard's Extra Fast Recovery (a repeated feedback before the first
// cycle ends keeps the target and the running cycles) and Target Rate Reduction (R_T ← R_T/8 when
// it is more than 10·R_C at the first cycle) are options, off by default
// because the paper's analysis leaves them out. The pseudo-code's random
// ±15% on the source's counters is left out too (the paper's model has
// none). A source starts at line rate and runs no limiter until its first
// feedback; it releases the limiter when R_C is back at line rate.
//
// qcn_aimd is the comparison the paper is built on (§2.4): no target rate
// and no averaging; R_C ← R_C·(1 − G_d·Fb) on feedback and R_C += R_AI every
// byte-counter cycle.
//
// Rates are given at 100 Gbps and scale with the host link rate, so that at
// the paper's 10 Gbps they are its values (R_AI 5 Mb/s, R_HAI 50 Mb/s, Q_eq
// 33 KB = 22 packets of 1500 B); the minimum rate is Tam's 10 Mb/s at 10 G.
func qcnAlgorithm(aimd bool) *Algorithm {
	params := []Param{
		{Name: "qeq", Kind: KindBytes, Unit: "B", Default: 330_000, Min: 1, Max: 1e9, ScaleWithRate: true, Live: true,
			Help: "Congestion point's queue set point Q_eq (the paper's 22 packets of 1500 B at 10 Gbps)."},
		{Name: "w", Kind: KindNumber, Default: 2, Min: 0, Max: 100, Live: true, Help: "Weight of the queue's growth in Fb (paper: 2)."},
		{Name: "fbMax", Kind: KindBytes, Unit: "B", Default: 0, Min: 0, Max: 1e9, Live: true,
			Help: "Fb that quantises to the top of the 6-bit scale; 0 means the pseudo-code's Q_eq·(2w+1). The paper's model counts Fb in packets " +
				"with G_d·Fb_max = 1/2, i.e. 64 packets (96,000 B at 1500 B)."},
		fracParam("sampling", 0.01, "Probability that the congestion point samples a packet (the paper's model: 1%)."),
		boolParam("variableSampling", false, true, "Sample every 150 KB … 18.5 KB by the last feedback (the standard's table, ±15%) instead of at a fixed probability."),
		{Name: "gd", Kind: KindNumber, Default: 1.0 / 128, Min: 0, Max: 1.0 / 64, Live: true, Help: "Decrease gain G_d per unit of the 6-bit Fb (1/128: Fb 63 cuts 49%; no cut exceeds 50%, the standard's minimum decrease factor)."},
		rateParam("rai", 50, "Active increase R_AI (the paper's 5 Mb/s at 10 Gbps)."),
		rateParam("minRate", 100, "Lowest rate (10 Mb/s at 10 Gbps, Tam's QCN model)."),
		{Name: "byteCounter", Kind: KindBytes, Unit: "B", Default: 150_000, Min: 1000, Max: 1e9, Live: true,
			Help: "Bytes per byte-counter cycle (150 KB = 100 packets of 1500 B)."},
		{Name: "startRate", Kind: KindNumber, Default: 1, Min: 0.0001, Max: 1, Live: false,
			Help: "Rate a source starts at, as a fraction of its line rate: 1 starts at line rate with no limiter (as every scheme here); " +
				"below 1 the limiter starts at that rate (the paper's analysis starts at the fixed point C/N)."},
	}
	if !aimd {
		params = append(params,
			rateParam("rhai", 500, "Hyper-active increase R_HAI per stage (50 Mb/s at 10 Gbps)."),
			Param{Name: "timer", Kind: KindTime, Unit: "ms", Default: 15, Min: 0, Max: 1e4, Live: true,
				Help: "Rate-increase timer period (the pseudo-code's 15 ms; 0 turns it off, as the paper's model)."},
			Param{Name: "fastRecovery", Kind: KindInt, Default: 5, Min: 0, Max: 100, Live: true, Help: "Cycles of fast recovery after a cut (5)."},
			boolParam("halveAfterFR", true, true, "Byte-counter and timer cycles halve past fast recovery (the actual algorithm: 50-packet cycles in active increase)."),
			boolParam("extraFastRecovery", false, true, "Keep the target on a feedback that comes before the first cycle after a cut ends (standard option)."),
			boolParam("targetRateReduction", false, true, "Divide the target by 8 when it exceeds 10 × the current rate at the first cycle (standard option)."),
		)
	}
	a := &Algorithm{
		Name:  "qcn",
		Title: "QCN (IEEE 802.1Qau)",
		Help: "Switches sample packets and send multi-bit congestion feedback straight to the source; the source cuts " +
			"its rate in proportion and then recovers by averaging towards the rate it had before the cut " +
			"(the averaging principle).",
		Param:           params,
		AckHighPriority: true,
		// the reaction point's rate limiter applies a new rate at once: the
		// next packet leaves one packet time at the new rate after the last
		RateChangeReschedules: true,
		Series: []SeriesSpec{
			{Name: "qcn_fb", Unit: "", Help: "Quantised feedback Fb (0–63) received by the source."},
			{Name: "qcn_stage", Unit: "", Help: "Reaction point stage: 0 no limiter, 1 fast recovery, 2 active increase, 3 hyper-active increase."},
			{Name: "qcn_target_bps", Unit: "bps", Help: "Reaction point's target rate R_T."},
		},
		NewSender: func(info FlowInfo, p Params) Sender {
			r := &qcnRP{aimd: aimd, lineRate: float64(info.LineRate)}
			for name, v := range p {
				r.set(name, v)
			}
			return r
		},
		NewCongestionPoint: func(port PortInfo, p Params) CongestionPoint {
			c := &qcnCP{}
			for name, v := range p {
				c.set(name, v)
			}
			c.toMark = qcnSampleTable[0]
			return c
		},
	}
	if aimd {
		a.Name = "qcn_aimd"
		a.Title = "QCN-AIMD (no averaging)"
		a.Help = "QCN's congestion point with an AIMD source: multiplicative cut on feedback, additive increase every " +
			"byte-counter cycle, no target rate and no averaging: the comparison the averaging principle is measured against."
		a.Series = a.Series[:1]
	}
	return a
}

// qcnSampleTable is the standard's sampling interval in bytes by qntzFb/8
// (Tam's cp-net-device.cc; KB of 1000 B).
var qcnSampleTable = [8]int64{150_000, 75_000, 50_000, 37_500, 30_000, 25_000, 21_500, 18_500}

type qcnCP struct {
	qeq, w, sampling, fbMax float64
	variable                bool
	qOld                    int64
	toMark                  int64 // bytes until the next sample (variable sampling)
}

func (c *qcnCP) set(name string, v float64) bool {
	switch name {
	case "qeq":
		c.qeq = v
	case "w":
		c.w = v
	case "fbMax":
		c.fbMax = v
	case "sampling":
		c.sampling = v
	case "variableSampling":
		c.variable = v != 0
	default:
		return false
	}
	return true
}

// fb computes the quantised feedback at a sample and remembers the queue.
func (c *qcnCP) fb(q int64) int {
	f := (float64(q) - c.qeq) + c.w*float64(q-c.qOld)
	c.qOld = q
	if f <= 0 {
		return 0
	}
	fbMax := c.fbMax
	if fbMax <= 0 {
		fbMax = c.qeq * (2*c.w + 1)
	}
	return int(min(63, math.Floor(64*f/fbMax)))
}

func (c *qcnCP) OnEnqueue(env CPEnv, qlen, pkt int64) (int, bool) {
	if c.variable {
		c.toMark -= pkt
		if c.toMark > 0 {
			return 0, false
		}
	} else if env.Rand() >= c.sampling {
		return 0, false
	}
	q := c.fb(qlen)
	if c.variable {
		jitter := 0.85 + 0.3*env.Rand()
		c.toMark = int64(float64(qcnSampleTable[q>>3]) * jitter)
	}
	return q, q > 0
}

// SetParam applies a congestion point parameter; the source's own
// parameters arrive here too and are ignored.
func (c *qcnCP) SetParam(name string, v float64) error {
	c.set(name, v)
	return nil
}

// reaction point stages (the qcn_stage series)
const (
	qcnIdle = iota
	qcnFastRecovery
	qcnActive
	qcnHyper
)

const qcnTimer = 0 // timer slot

type qcnRP struct {
	aimd                            bool
	gd, rai, rhai, minRate          float64
	byteCounter                     int64
	period                          Time
	fastRecovery                    int
	halve, extraFR, targetReduction bool
	lineRate                        float64
	startRate                       float64

	active     bool
	rc, rt     float64
	bc         int64 // bytes left in the byte-counter cycle
	bcStage    int
	tStage     int
	cutPending bool // no cycle has ended since the last cut (extra fast recovery)
}

func (r *qcnRP) set(name string, v float64) bool {
	switch name {
	case "gd":
		r.gd = v
	case "rai":
		r.rai = v * mbps
	case "rhai":
		r.rhai = v * mbps
	case "minRate":
		r.minRate = v * mbps
	case "byteCounter":
		r.byteCounter = int64(v)
	case "timer":
		r.period = Time(math.Round(v * float64(Millisecond)))
	case "fastRecovery":
		r.fastRecovery = int(v)
	case "halveAfterFR":
		r.halve = v != 0
	case "extraFastRecovery":
		r.extraFR = v != 0
	case "targetRateReduction":
		r.targetReduction = v != 0
	case "startRate":
		r.startRate = v
	case "qeq", "w", "fbMax", "sampling", "variableSampling": // the congestion point's
	default:
		return false
	}
	return true
}

func (r *qcnRP) Start(env Env) {
	env.SetWindow(Unlimited)
	if r.startRate < 1 {
		r.active = true
		r.rc = r.startRate * r.lineRate
		r.rt = r.rc
		r.bc = r.byteCounter
	}
	r.apply(env) // line rate, no limiter, until the first feedback by default
}

func (r *qcnRP) apply(env Env) {
	if r.active {
		env.SetRate(rateBps(r.rc))
	} else {
		env.SetRate(Unlimited)
	}
	stage := qcnIdle
	if r.active && !r.aimd {
		switch {
		case r.bcStage > r.fastRecovery && r.tStage > r.fastRecovery:
			stage = qcnHyper
		case r.bcStage > r.fastRecovery || r.tStage > r.fastRecovery:
			stage = qcnActive
		default:
			stage = qcnFastRecovery
		}
		env.Gauge(2, r.rt)
	}
	if !r.aimd {
		env.Gauge(1, float64(stage))
	}
}

func (r *qcnRP) OnQCN(env Env, fb QCNFeedback) {
	if fb.Fb <= 0 {
		return
	}
	env.Event(0, float64(fb.Fb))
	if !r.active {
		r.active = true
		r.rc, r.rt = r.lineRate, r.lineRate
		r.cutPending = false
	}
	// extra fast recovery: a feedback before the first cycle after a cut
	// ends cuts again but keeps the target and the running cycle
	keep := !r.aimd && r.extraFR && r.cutPending
	if !r.aimd && !keep {
		r.rt = r.rc
	}
	// the standard's minimum decrease factor: one cut at most halves the rate
	r.rc = max(r.minRate, r.rc*(1-min(0.5, r.gd*float64(fb.Fb))))
	if !keep {
		r.bc = r.byteCounter
		r.bcStage, r.tStage = 0, 0
		if !r.aimd && r.period > 0 {
			env.SetTimer(qcnTimer, env.Now()+r.period)
		}
	}
	r.cutPending = true
	r.apply(env)
}

// cycle is the length of the next byte-counter cycle or timer period.
func (r *qcnRP) cycle(stage int, full int64) int64 {
	if !r.aimd && r.halve && stage > r.fastRecovery {
		return full / 2
	}
	return full
}

func (r *qcnRP) OnSend(env Env, payload, wire int64, retx bool) {
	if !r.active {
		return
	}
	r.bc -= wire
	if r.bc > 0 {
		return
	}
	r.bcStage++
	r.bc += r.cycle(r.bcStage, r.byteCounter)
	r.increase(env)
}

func (r *qcnRP) OnTimer(env Env, slot int) {
	if !r.active || r.aimd || r.period <= 0 {
		return
	}
	r.tStage++
	env.SetTimer(qcnTimer, env.Now()+Time(r.cycle(r.tStage, int64(r.period))))
	r.increase(env)
}

// increase ends a byte-counter or timer cycle (Tam's RateIncrease).
func (r *qcnRP) increase(env Env) {
	r.cutPending = false
	if r.aimd {
		r.rc = min(r.lineRate, r.rc+r.rai)
	} else {
		inc := 0.0
		f := r.fastRecovery
		switch {
		case r.bcStage > f && r.tStage > f:
			inc = r.rhai * float64(min(r.bcStage, r.tStage)-f)
		case r.bcStage > f || r.tStage > f:
			inc = r.rai
		}
		if r.targetReduction && (r.bcStage == 1 || r.tStage == 1) && r.rt > 10*r.rc {
			r.rt /= 8
		} else {
			r.rt = min(r.lineRate, r.rt+inc)
		}
		r.rc = min(r.lineRate, (r.rc+r.rt)/2)
	}
	if r.rc >= r.lineRate {
		r.active = false // back at line rate: release the limiter
		env.CancelTimer(qcnTimer)
	}
	r.apply(env)
}

func (r *qcnRP) OnAck(Env, *Ack) {}

func (r *qcnRP) SetParam(env Env, name string, v float64) error {
	if !r.set(name, v) {
		return fmt.Errorf("%s has no parameter %q", map[bool]string{false: "qcn", true: "qcn_aimd"}[r.aimd], name)
	}
	r.apply(env)
	return nil
}
