package cc

import (
	"fmt"
)

// TIMELY as HPCC's simulator implements it (rdma-hw.cc HandleAckTimely,
// UpdateRateTimely), after the TIMELY paper (SIGCOMM'15), with the
// parameters the paper leaves out from the ECN-vs-delay paper (CoNEXT'16).
//
// Once per RTT (when an ACK acknowledges past the sequence sent at the last
// update) the sender takes the RTT of that ACK (now − the echoed send time):
//   - rttDiff ← (1−alpha)·rttDiff + alpha·(rtt − previous rtt); gradient =
//     rttDiff / minRTT;
//   - rtt < tLow: increase; rtt > tHigh: rate ← rate·(1 − beta·(1 − tHigh/rtt));
//     gradient ≤ 0: increase; otherwise rate ← rate·max(0, 1 − beta·gradient);
//   - an increase adds ai, or hai once haiAfter increases have come in a row;
//   - the rate stays within [minRate, line rate].
//
// Note that HPCC's code weights the newest difference by alpha (0.875), as
// run.py configures it; that is the reverse of the TIMELY paper's EWMA
// notation. The default follows the reference simulator.
func timelyAlgorithm() *Algorithm {
	return &Algorithm{
		Name:  "timely",
		Title: "TIMELY (RTT gradient, as HPCC's simulator)",
		Help: "Delay-based rate control: once per RTT the sender looks at how the RTT is changing; a rising RTT " +
			"(a growing queue) cuts the rate in proportion, a falling or low RTT raises it.",
		Param: []Param{
			rateParam("ai", 100, "Additive increase per update (run.py: 10 × bw/10 Mb/s)."),
			rateParam("hai", 500, "Increase once haiAfter increases came in a row (run.py: 50 × bw/10 Mb/s)."),
			rateParam("minRate", 1000, "Lowest rate (run.py: 1000 Mb/s; here 1% of the line rate)."),
			fracParam("beta", 0.8, "Multiplicative decrease factor (TIMELY: 0.8)."),
			fracParam("alpha", 0.875, "EWMA weight of the newest RTT difference (HPCC's TimelyAlpha: 0.875)."),
			timeParam("tLow", 50, "Below this RTT the rate always increases (50 µs)."),
			timeParam("tHigh", 500, "Above this RTT the rate always decreases (500 µs)."),
			timeParam("minRTT", 20, "Normalises the RTT gradient (20 µs)."),
			{Name: "haiAfter", Kind: KindInt, Default: 5, Min: 1, Max: 1000, Live: true, Help: "Consecutive increases before the hyper increase (HPCC's simulator fixes it at 5)."},
			boolParam("window", false, false, "Also limit in-flight bytes to max BDP × rate / line rate (run.py's timely_vwin)."),
			ackPriorityParam(true, "run.py: yes"),
		},
		Presets: []Preset{
			{Name: "timely_vwin", Help: "run.py's timely_vwin: with a window of max BDP × rate / line rate.", Values: map[string]float64{"window": 1}},
		},
		AckHighPriority:  true,
		AckPriorityParam: "ackHighPriority",
		INT:              IntSpec{HeaderBytes: 8},
		ECN:              runPyECN,
		Series: []SeriesSpec{
			{Name: "timely_rtt_ns", Unit: "ns", Help: "TIMELY's RTT sample at each update."},
			{Name: "timely_gradient", Unit: "", Help: "TIMELY's normalised RTT gradient at each update."},
		},
		NewSender: func(info FlowInfo, p Params) Sender {
			t := &timely{lineRate: float64(info.LineRate), maxBDP: info.MaxBDP}
			for name, v := range p {
				t.set(name, v)
			}
			return t
		},
	}
}

type timely struct {
	ai, hai, minRate, beta, alpha float64
	tLow, tHigh, minRTT           Time
	haiAfter                      int
	window                        bool
	lineRate                      float64
	maxBDP                        int64

	rate       float64 // the committed rate
	lastUpdate int64   // SndNxt at the last update; 0 before the first ACK
	lastRTT    Time
	rttDiff    float64
	incStage   int
}

// set applies one parameter; it reports false for an unknown name.
func (t *timely) set(name string, v float64) bool {
	switch name {
	case "ai":
		t.ai = v * mbps
	case "hai":
		t.hai = v * mbps
	case "minRate":
		t.minRate = v * mbps
	case "beta":
		t.beta = v
	case "alpha":
		t.alpha = v
	case "tLow":
		t.tLow = usec(v)
	case "tHigh":
		t.tHigh = usec(v)
	case "minRTT":
		t.minRTT = usec(v)
	case "haiAfter":
		t.haiAfter = int(v)
	case "ackHighPriority": // read by the engine, not the sender
	case "window":
		t.window = v != 0
	default:
		return false
	}
	return true
}

func (t *timely) Start(env Env) {
	t.rate = t.lineRate
	t.apply(env)
}

func (t *timely) apply(env Env) {
	pace(env, t.rate, t.window, t.maxBDP, t.lineRate)
}

func (t *timely) OnAck(env Env, a *Ack) {
	if a.Seq <= t.lastUpdate {
		return // TIMELY has no per-ACK reaction between updates
	}
	rtt := env.Now() - a.SentAt
	if t.lastUpdate != 0 {
		t.update(env, rtt)
	}
	if a.SndNxt > t.lastUpdate {
		t.lastUpdate = a.SndNxt
		t.lastRTT = rtt
	}
}

func (t *timely) update(env Env, rtt Time) {
	diff := (1-t.alpha)*t.rttDiff + t.alpha*float64(rtt-t.lastRTT)
	gradient := diff / float64(t.minRTT)
	increase := false
	c := 0.0
	switch {
	case rtt < t.tLow:
		increase = true
	case rtt > t.tHigh:
		c = 1 - t.beta*(1-float64(t.tHigh)/float64(rtt))
	case gradient <= 0:
		increase = true
	default:
		c = max(0, 1-t.beta*gradient)
	}
	if increase {
		if t.incStage < t.haiAfter {
			t.rate += t.ai
		} else {
			t.rate += t.hai
		}
		t.rate = min(t.rate, t.lineRate)
		t.incStage++
	} else {
		t.rate = max(t.minRate, t.rate*c)
		t.incStage = 0
	}
	t.rttDiff = diff
	env.Event(0, float64(rtt)/float64(Nanosecond))
	env.Event(1, gradient)
	t.apply(env)
}

func (t *timely) SetParam(env Env, name string, v float64) error {
	if !t.set(name, v) {
		return fmt.Errorf("timely has no parameter %q", name)
	}
	t.apply(env)
	return nil
}
