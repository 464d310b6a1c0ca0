package cc

import (
	"fmt"
)

// TCP is a loss-based window AIMD in the manner of Reno with NewReno's
// recovery rule (RFC 5681, RFC 6582), adapted to the engine's RoCE-style
// transport:
//   - slow start from initWindow segments (RFC 6928's 10 by default): the
//     window grows by the bytes each ACK newly acknowledges, so it doubles
//     per RTT, until it reaches ssthresh (unlimited at first, or
//     initSsthresh);
//   - congestion avoidance: +NewlyAcked·MSS/cwnd per ACK, one MSS per RTT;
//   - a NACK is the loss signal. The engine's receiver NACKs the first gap
//     it sees, as soon as the first packet after a lost one arrives: the
//     analogue of the third duplicate ACK, without waiting for two more.
//     On it ssthresh = max(cwnd/2, 2 MSS), cwnd = ssthresh (fast recovery
//     without window inflation: the engine goes back to the first
//     unacknowledged byte and re-sends from there, go-back-N, so there is
//     no dup-ACK clock to inflate for), and recover = SndMax, the highest
//     byte sent. Further NACKs are ignored until SndUna reaches recover
//     (NewReno's rule for partial ACKs: one cut per window of losses), and
//     the window does not grow in recovery;
//   - on the engine's retransmission timeout (TimeoutHandler) cwnd = 1 MSS
//     (RFC 5681's loss window) and ssthresh = max(cwnd/2, 2 MSS) from the
//     window before the timeout, unless the flow is already in recovery,
//     whose cut stands (a timeout of a retransmission does not halve
//     ssthresh again, as RFC 5681 and Linux hold it); recover = SndMax
//     guards against NACKs of the data sent before, and the window
//     slow-starts from one MSS.
//
// MSS is the host MTU (payload bytes per packet); the window counts payload
// bytes, as the engine's does. The rate is the line rate (TCP without
// pacing) unless pacing is on: then cwnd/srtt × pacingGain, srtt from the
// ACKs' echoed send times (RFC 6298's gain 1/8).
func tcpAlgorithm() *Algorithm {
	return &Algorithm{
		Name:  "tcp",
		Title: "TCP (loss-based Reno/NewReno window AIMD)",
		Help: "Loss-based: slow start, then one segment more per RTT; a NACK (the first sign of a lost packet) halves " +
			"the window once per window of data, a retransmission timeout drops it to one segment. No ECN, no INT.",
		Param: []Param{
			{Name: "initWindow", Kind: KindInt, Unit: "packets", Default: 10, Min: 1, Max: 1e6, Live: false,
				Help: "Initial window in segments of one MTU (RFC 6928: 10)."},
			{Name: "initSsthresh", Kind: KindInt, Unit: "packets", Default: 0, Min: 0, Max: 1e9, Live: false,
				Help: "Initial slow-start threshold in segments; 0 = unlimited (RFC 5681: arbitrarily high)."},
			{Name: "maxWindow", Kind: KindBytes, Unit: "B", Default: 0, Min: 0, Max: 1e12, Live: true,
				Help: "Cap on the window (a receive window); 0 = none."},
			boolParam("pacing", false, true, "Pace at pacingGain × cwnd / srtt instead of sending at line rate (srtt from the ACKs' echoed send times)."),
			{Name: "pacingGain", Kind: KindNumber, Default: 1, Min: 0.1, Max: 10, Live: true,
				Help: "Pacing rate as a multiple of cwnd / srtt, when pacing is on."},
			boolParam("recoveryPacing", true, true, "During fast recovery pace at cwnd / srtt: the engine's go-back-N receiver sends no "+
				"duplicate ACKs, so this stands in for the dup-ACK clock that spreads a NewReno sender's recovery over an RTT "+
				"(off: the halved window leaves at line rate at once)."),
		},
		Series: []SeriesSpec{
			{Name: "tcp_ssthresh_bytes", Unit: "B", Help: "TCP's slow-start threshold (0 while unlimited)."},
			{Name: "tcp_loss", Unit: "", Help: "A window cut: 1 on a NACK (fast retransmit), 2 on a retransmission timeout."},
		},
		NewSender: func(info FlowInfo, p Params) Sender {
			t := &tcp{mss: float64(info.MTU), lineRate: float64(info.LineRate)}
			if t.mss <= 0 {
				t.mss = 1000
			}
			for name, v := range p {
				t.set(name, v)
			}
			return t
		},
	}
}

// maxCwnd bounds the window when no maxWindow is set, so that a flow
// that never loses a packet (PFC on) cannot grow it without end.
const maxCwnd = 1 << 40

// The series ids of tcpAlgorithm.
const (
	tcpSeriesSsthresh = iota
	tcpSeriesLoss
)

type tcp struct {
	// parameters
	initWindow, initSsthresh float64 // segments
	maxWindow                float64 // bytes, 0 = none
	pacing, recoveryPacing   bool
	pacingGain               float64
	mss, lineRate            float64

	cwnd, ssthresh float64 // bytes; ssthresh 0 = unlimited
	// After a cut, loss signals are ignored until SndUna reaches recover
	// (guard). A NACK's cut also holds the window (fastRecovery) until
	// then; a timeout's does not: the window slow-starts from one MSS.
	guard, fastRecovery bool
	recover             int64
	srtt                float64 // seconds
	hasRTT              bool
}

func (t *tcp) set(name string, v float64) bool {
	switch name {
	case "initWindow":
		t.initWindow = v
	case "initSsthresh":
		t.initSsthresh = v
	case "maxWindow":
		t.maxWindow = v
	case "pacing":
		t.pacing = v != 0
	case "pacingGain":
		t.pacingGain = v
	case "recoveryPacing":
		t.recoveryPacing = v != 0
	default:
		return false
	}
	return true
}

func (t *tcp) Start(env Env) {
	t.cwnd = t.initWindow * t.mss
	t.ssthresh = t.initSsthresh * t.mss
	t.guard, t.fastRecovery, t.recover = false, false, 0
	t.apply(env)
}

// limit is the largest window allowed.
func (t *tcp) limit() float64 {
	if t.maxWindow > 0 {
		return min(t.maxWindow, maxCwnd)
	}
	return maxCwnd
}

func (t *tcp) apply(env Env) {
	t.cwnd = min(t.cwnd, t.limit())
	env.SetWindow(max(int64(t.cwnd), 1))
	switch {
	case !t.hasRTT || t.srtt <= 0:
		env.SetRate(Unlimited)
	case t.pacing:
		env.SetRate(rateBps(t.pacingGain * t.cwnd * 8 / t.srtt))
	case t.recoveryPacing && t.fastRecovery:
		env.SetRate(rateBps(t.cwnd * 8 / t.srtt))
	default:
		env.SetRate(Unlimited)
	}
	env.Gauge(tcpSeriesSsthresh, t.ssthresh)
}

func (t *tcp) OnAck(env Env, a *Ack) {
	if r := env.Now() - a.SentAt; r > 0 {
		sec := float64(r) / float64(Second)
		if t.hasRTT {
			t.srtt += (sec - t.srtt) / 8
		} else {
			t.srtt, t.hasRTT = sec, true
		}
	}
	switch {
	case t.guard && a.SndUna >= t.recover:
		// a full ACK: everything sent before the cut has arrived; this
		// ACK ends recovery and does not grow the window
		t.guard, t.fastRecovery = false, false
	case !t.fastRecovery && a.NewlyAcked > 0:
		t.grow(a.NewlyAcked)
	}
	if a.NACK && !t.guard {
		t.ssthresh = max(t.cwnd/2, 2*t.mss)
		t.cwnd = t.ssthresh
		t.guard, t.fastRecovery, t.recover = true, true, a.SndMax
		env.Event(tcpSeriesLoss, 1)
	}
	t.apply(env)
}

// grow is slow start below ssthresh, congestion avoidance above it.
func (t *tcp) grow(acked int64) {
	b := float64(acked)
	if t.ssthresh == 0 || t.cwnd < t.ssthresh {
		// slow start: never past ssthresh on one ACK (RFC 5681 allows at
		// most one MSS per ACK; with one ACK per packet that is the same)
		t.cwnd += b
		if t.ssthresh > 0 && t.cwnd > t.ssthresh {
			t.cwnd = t.ssthresh
		}
		return
	}
	t.cwnd += b * t.mss / t.cwnd
}

// OnTimeout is the retransmission timeout: the loss window, then slow
// start. A timeout inside a window already cut (a retransmission lost, or a
// second timeout) keeps that cut's ssthresh.
func (t *tcp) OnTimeout(env Env, to Timeout) {
	if !t.guard {
		t.ssthresh = max(t.cwnd/2, 2*t.mss)
	}
	t.cwnd = t.mss
	t.guard, t.fastRecovery, t.recover = true, false, to.SndMax
	env.Event(tcpSeriesLoss, 2)
	t.apply(env)
}

func (t *tcp) SetParam(env Env, name string, v float64) error {
	if !t.set(name, v) {
		return fmt.Errorf("tcp has no parameter %q", name)
	}
	t.apply(env)
	return nil
}
