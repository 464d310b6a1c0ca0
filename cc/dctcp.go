package cc

import (
	"fmt"
)

// DCTCP in the hardware, rate-based form HPCC's simulator envisions
// (rdma-hw.cc HandleAckDctcp; run.py `--cc dctcp`): it starts at line rate
// with no slow start and no delayed ACKs, and keeps DCTCP's control law
// (RFC 8257 §3.3–3.4) on a rate and a window of max BDP × rate / line rate:
//   - once per window of data (when an ACK passes the sequence sent at the
//     last update), alpha ← (1−g)·alpha + g·F, F the fraction of the window's
//     marked packets (at most 1);
//   - an ECN echo outside CWR cuts the rate by alpha/2 (not below minRate) and
//     enters CWR until an ACK passes the data sent at the cut;
//   - outside CWR the rate grows by ai once per window.
//
// The switches mark with a single threshold K (kmin = kmax = 300 KB at
// 100 Gbps, pmax 1).
func dctcpAlgorithm() *Algorithm {
	return &Algorithm{
		Name:  "dctcp",
		Title: "DCTCP (hardware rate-based, as HPCC's simulator)",
		Help: "ECN-based: switches mark packets above a single threshold K; each window the sender measures the " +
			"fraction of marked packets (alpha) and cuts its rate by alpha/2, so a lightly congested path sees small cuts.",
		Param: []Param{
			{Name: "g", Kind: KindNumber, Default: 1.0 / 16, Min: 0, Max: 1, Live: true, Help: "EWMA gain of alpha (run.py: 1/16)."},
			rateParam("ai", 615, "Rate increase per window (run.py: 615 Mb/s, one MTU per 13 µs RTT; scaled here with the line rate)."),
			rateParam("minRate", 1000, "Lowest rate a cut can reach (run.py: 1000 Mb/s; here 1% of the line rate)."),
			boolParam("window", true, false, "Limit in-flight bytes to max BDP × rate / line rate (run.py: HAS_WIN and VAR_WIN on)."),
			ackPriorityParam(false, "run.py: no"),
		},
		AckHighPriority:  false,
		AckPriorityParam: "ackHighPriority",
		ECN:              &ECNDefaults{Kmin: 300_000, Kmax: 300_000, Pmax: 1},
		Series: []SeriesSpec{
			{Name: "dctcp_alpha", Unit: "", Help: "DCTCP's alpha: the smoothed fraction of ECN-marked packets per window."},
		},
		NewSender: func(info FlowInfo, p Params) Sender {
			d := &dctcp{lineRate: float64(info.LineRate), maxBDP: info.MaxBDP, mtu: info.MTU}
			for name, v := range p {
				d.set(name, v)
			}
			return d
		},
	}
}

type dctcp struct {
	g, ai, minRate float64
	window         bool
	lineRate       float64
	maxBDP, mtu    int64

	rate       float64
	alpha      float64
	lastUpdate int64 // SndNxt at the last alpha update; 0 before the first
	ecnCount   int64 // ECN-marked packets acked since the last update
	batch      int64 // packets the current window holds
	cwr        bool
	highSeq    int64 // CWR ends when an ACK passes this
}

func (d *dctcp) set(name string, v float64) bool {
	switch name {
	case "g":
		d.g = v
	case "ai":
		d.ai = v * mbps
	case "minRate":
		d.minRate = v * mbps
	case "ackHighPriority": // read by the engine, not the sender
	case "window":
		d.window = v != 0
	default:
		return false
	}
	return true
}

func (d *dctcp) Start(env Env) {
	d.rate, d.alpha = d.lineRate, 1
	d.apply(env)
}

func (d *dctcp) apply(env Env) {
	pace(env, d.rate, d.window, d.maxBDP, d.lineRate)
}

func (d *dctcp) OnAck(env Env, a *Ack) {
	// marked packets, not marking ACKs: the same as the reference with one
	// ACK per packet (run.py), and still the fraction of marked packets
	// when ACKs are coalesced (host.ackEvery > 1)
	ece := a.ECNMarked > 0
	d.ecnCount += int64(a.ECNMarked)
	newBatch := false
	if a.Seq > d.lastUpdate {
		newBatch = true
		if d.lastUpdate == 0 {
			d.batch = a.SndNxt/d.mtu + 1
		} else {
			frac := min(1, float64(d.ecnCount)/float64(d.batch))
			d.alpha = (1-d.g)*d.alpha + d.g*frac
			d.ecnCount = 0
			d.batch = (a.SndNxt-a.Seq)/d.mtu + 1
		}
		d.lastUpdate = a.SndNxt
		env.Gauge(0, d.alpha)
	}
	if d.cwr && a.Seq > d.highSeq {
		d.cwr = false
	}
	changed := false
	if ece && !d.cwr {
		d.rate = max(d.minRate, d.rate*(1-d.alpha/2))
		d.cwr = true
		d.highSeq = a.SndNxt
		changed = true
	}
	if !d.cwr && newBatch {
		d.rate = min(d.lineRate, d.rate+d.ai)
		changed = true
	}
	if changed {
		d.apply(env)
	}
}

func (d *dctcp) SetParam(env Env, name string, v float64) error {
	if !d.set(name, v) {
		return fmt.Errorf("dctcp has no parameter %q", name)
	}
	d.apply(env)
	return nil
}
