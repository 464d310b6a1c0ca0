package cc

import (
	"fmt"
)

// HPCC as HPCC's simulator implements it (rdma-hw.cc HandleAckHp,
// UpdateRateHp, FastReactHp; run.py `--cc hp`): INT-driven, with the window
// following the rate (max BDP × rate / line rate).
//
// On each ACK, for every hop of the echoed INT stack against the previous
// ACK's record of that hop (τ the difference of the hop's timestamps):
//
//	u = txRate/lineRate + min(qlen, qlen_prev)·maxRate/(lineRate·W)
//
// with txRate the hop's transmitted bytes over τ and W = max BDP (HPCC paper
// eq. (2); code: UpdateRateHp). With one rate for the path (run.py's
// MULTI_RATE 0) U is the largest u, and the utilisation estimate is an EWMA
// over min(τ, base RTT)/base RTT. Then, with k = U/eta:
//
//	k ≥ 1 or incStage ≥ maxStage: rate = Rc/k + ai, incStage = 0
//	otherwise:                    rate = Rc + ai,   incStage + 1
//
// bounded to [minRate, line rate]. The reference rate Rc and incStage are
// committed once per RTT (when an ACK passes the sequence sent at the last
// commit); the ACKs in between set the rate from Rc without committing it
// ("fast react"). With perHop (MULTI_RATE 1) every hop keeps its own U, Rc
// and stage, and the flow takes the smallest rate.
//
// INT costs 42 B on every data packet and its ACK: HPCC's fixed header of
// five 8-byte hop records and a 2-byte hop count.
func hpccAlgorithm() *Algorithm {
	return &Algorithm{
		Name:  "hpcc",
		Title: "HPCC (INT-based, as HPCC's simulator)",
		Help: "Each switch writes its queue, transmitted bytes and time into the packet (INT); from the echo the " +
			"sender computes how utilised its most loaded link is and scales its window to keep it at eta (95%), " +
			"so queues stay near empty.",
		Param: []Param{
			{Name: "eta", Kind: KindNumber, Default: 0.95, Min: 0.01, Max: 1.5, Live: true, Help: "Target utilisation (run.py: 0.95)."},
			{Name: "maxStage", Kind: KindInt, Default: 0, Min: 0, Max: 1000, Live: true, Help: "Additive-increase stages before a multiplicative step (run.py: 0)."},
			rateParam("ai", 40, "Additive increase W_AI, as a rate (run.py: 10 × bw/25 Mb/s; its README example uses 50)."),
			rateParam("minRate", 1000, "Lowest rate (run.py: 1000 Mb/s; here 1% of the line rate)."),
			boolParam("fastReact", true, true, "React on every ACK between the once-per-RTT updates (run.py: on)."),
			boolParam("perHop", false, true, "Keep a rate per hop and take the smallest (HPCC's MULTI_RATE; run.py: off)."),
			boolParam("window", true, false, "Limit in-flight bytes to max BDP × rate / line rate (run.py: on)."),
			ackPriorityParam(false, "run.py: no"),
		},
		Presets: []Preset{
			{Name: "maxstage5", Help: "The HPCC paper's and htsim's maxStage 5: five additive steps before a multiplicative one, gentler when a link is under target.",
				Values: map[string]float64{"maxStage": 5}},
			{Name: "eta90", Help: "Target 90% utilisation: more headroom for bursts (queues nearer empty) for 5% less throughput, the trade-off eta sets.",
				Values: map[string]float64{"eta": 0.9}},
			{Name: "hpai50", Help: "run.py README's example (--hpai 50): a larger additive increase, faster to take up bandwidth, more queue at many flows.",
				Values: map[string]float64{"ai": 50}},
			{Name: "per_rtt", Help: "No fast reaction: the window changes once per RTT only, as the paper's per-RTT update without its per-ACK reaction.",
				Values: map[string]float64{"fastReact": 0}},
		},
		AckHighPriority:       false,
		AckPriorityParam:      "ackHighPriority",
		INT:                   IntSpec{FixedBytes: 2 + MaxHops*8},
		RateChangeReschedules: true,
		ECN:                   runPyECN,
		Series: []SeriesSpec{
			{Name: "hpcc_u", Unit: "", Help: "HPCC's normalised utilisation U of the most loaded hop (the EWMA the rate follows)."},
		},
		NewSender: func(info FlowInfo, p Params) Sender {
			h := &hpcc{lineRate: float64(info.LineRate), maxBDP: info.MaxBDP, baseRTT: info.BaseRTT}
			for name, v := range p {
				h.set(name, v)
			}
			return h
		},
	}
}

type hpccHop struct {
	u        float64 // the hop's utilisation EWMA (perHop)
	rc       float64 // the hop's reference rate (perHop)
	incStage int
}

type hpcc struct {
	eta, ai, minRate       float64
	maxStage               int
	fastReact, perHop, win bool
	lineRate               float64
	maxBDP                 int64
	baseRTT                Time

	rate       float64 // current sending rate
	rc         float64 // reference rate, committed once per RTT
	incStage   int
	u          float64
	lastUpdate int64 // SndNxt at the last commit; 0 before the first ACK
	prev       [MaxHops]IntHop
	hop        [MaxHops]hpccHop
}

func (h *hpcc) set(name string, v float64) bool {
	switch name {
	case "eta":
		h.eta = v
	case "maxStage":
		h.maxStage = int(v)
	case "ai":
		h.ai = v * mbps
	case "minRate":
		h.minRate = v * mbps
	case "fastReact":
		h.fastReact = v != 0
	case "perHop":
		h.perHop = v != 0
	case "ackHighPriority": // read by the engine, not the sender
	case "window":
		h.win = v != 0
	default:
		return false
	}
	return true
}

func (h *hpcc) Start(env Env) {
	h.rate, h.rc, h.u = h.lineRate, h.lineRate, 1
	for i := range h.hop {
		h.hop[i] = hpccHop{u: 1, rc: h.lineRate}
	}
	h.apply(env)
}

func (h *hpcc) apply(env Env) {
	pace(env, h.rate, h.win, h.maxBDP, h.lineRate)
}

func (h *hpcc) OnAck(env Env, a *Ack) {
	if a.Seq > h.lastUpdate {
		h.update(env, a, false)
	} else if h.fastReact {
		h.update(env, a, true)
	}
}

// update is UpdateRateHp; fast reactions do not commit the reference rate.
func (h *hpcc) update(env Env, a *Ack, fast bool) {
	ints := a.INT
	if len(ints) > MaxHops {
		ints = ints[:MaxHops]
	}
	if h.lastUpdate == 0 { // first ACK: remember the hops
		copy(h.prev[:], ints)
		h.lastUpdate = a.SndNxt
		return
	}
	base := float64(h.baseRTT)
	var maxU, dt float64
	updatedAny := false
	var updated [MaxHops]bool
	for i := range ints {
		cur, p := &ints[i], &h.prev[i]
		tau := float64(cur.TS - p.TS)
		dtx, pq := cur.TxBytes-p.TxBytes, p.Qlen
		*p = *cur
		if tau <= 0 || cur.Rate <= 0 {
			continue // no time has passed at this hop: nothing to measure
		}
		txRate := float64(dtx) * 8 / (tau / float64(Second))
		q := min(float64(cur.Qlen), float64(pq))
		u := txRate/float64(cur.Rate) + q*h.lineRate/(float64(cur.Rate)*float64(h.maxBDP))
		updated[i], updatedAny = true, true
		if h.perHop {
			t := min(tau, base)
			hs := &h.hop[i]
			hs.u = (hs.u*(base-t) + u*t) / base
		} else if u > maxU {
			maxU, dt = u, tau
		}
	}
	if !updatedAny {
		if !fast && a.SndNxt > h.lastUpdate {
			h.lastUpdate = a.SndNxt
		}
		return
	}
	if h.perHop {
		// every hop proposes a rate from its own Rc and stage; a hop with
		// no new measurement proposes its Rc; the flow takes the smallest,
		// and a once-per-RTT update commits the hops that were measured
		rate, gauge := h.lineRate, 0.0
		for i := range ints {
			hs := &h.hop[i]
			if !updated[i] {
				rate = min(rate, hs.rc)
				continue
			}
			r, stage := h.step(hs.rc, hs.u, hs.incStage)
			rate = min(rate, r)
			gauge = max(gauge, hs.u)
			if !fast {
				hs.rc, hs.incStage = r, stage
			}
		}
		h.rate = rate
		env.Gauge(0, gauge)
	} else {
		t := min(dt, base)
		h.u = (h.u*(base-t) + maxU*t) / base
		rate, stage := h.step(h.rc, h.u, h.incStage)
		h.rate = rate
		if !fast {
			h.rc, h.incStage = rate, stage
		}
		env.Gauge(0, h.u)
	}
	h.apply(env)
	if !fast && a.SndNxt > h.lastUpdate {
		h.lastUpdate = a.SndNxt
	}
}

// step is HPCC's rate rule from a reference rate, a utilisation and a stage.
func (h *hpcc) step(rc, u float64, stage int) (float64, int) {
	k := u / h.eta
	var rate float64
	if k >= 1 || stage >= h.maxStage {
		rate, stage = rc/k+h.ai, 0
	} else {
		rate, stage = rc+h.ai, stage+1
	}
	return clamp(rate, h.minRate, h.lineRate), stage
}

func (h *hpcc) SetParam(env Env, name string, v float64) error {
	if !h.set(name, v) {
		return fmt.Errorf("hpcc has no parameter %q", name)
	}
	h.apply(env)
	return nil
}
