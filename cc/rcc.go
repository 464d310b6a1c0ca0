package cc

import (
	"fmt"
	"math"
)

// RCC (Zhang et al., "Receiver-Driven RDMA Congestion Control with
// Congestion Divide-and-Conquer", IEEE/ACM ToN 2022; seed 002): a
// receiver-side, window-based, delay-based scheme. Everything is decided at
// the receiving host (one Receiver per host); the window rides back on every
// ACK and the sender only applies it, sending at line rate.
//
// Per data packet (Algorithm 1), with d = arrival − send timestamp:
//
//  1. N, the receiver's active messages, is updated from the BTH markers:
//     a flow counts from its first in-order packet to its last in-order
//     packet (a duplicate of a finished flow is not counted again).
//  2. Fair share (Explicit Window Assignment): W_fair = s·C·RTT/N bytes.
//  3. A flow already under PI control stays there until it ends (L117).
//  4. Last hop (C1): B_R, the bytes the host's NIC received over the last
//     round T (the minimum base RTT), reaches η·C·T ⇒ W = W_fair.
//  5. Otherwise Eq. (1): after n consecutive samples d > base·(1+δ) the
//     congestion is in the network (C2) and the flow switches to PI:
//     E = d − base·(1+δ/2) (seconds), U += Kp·E + Kd·(E − E_prev),
//     W = W·(1 − tanh U), W ≤ W_fair; with no congestion W = W_fair.
//
// Resolutions of the extract's [AMBIG] points (each is also in a parameter's
// help):
//   - Delay signal: the one-way delay of Algorithm 1 (sender timestamp to
//     arrival; the simulator's clocks are synchronised). base is the minimum
//     one-way delay seen from that source host (kept across its messages,
//     like Table I's per-connection base_rtt), or baseDelay when set.
//     The threshold and the target are relative (1+δ, 1+δ/2) and so are
//     applied to the one-way values as written.
//   - Units of W = C/N: a window, C·RTT/N bytes, with RTT = ewaRTT when set,
//     else twice the smallest base one-way delay the receiver has seen
//     (symmetric paths; exact on one tier, short for long paths on a
//     multi-tier fabric, where a scenario sets ewaRTT to the paper's 12 µs).
//     ewaScale (default 1, the text; η reproduces the paper's measured
//     0.95·C/N goodput) scales it.
//   - B_R: Algorithm 1's "RX rate": every byte the receiving NIC takes off
//     its link, on the wire (C is a wire rate: 1000 B payloads alone carry
//     only 96.5% of it) and whatever the packet (data of every connection,
//     and the ACKs of the flows the host itself sends, which share its
//     downlink: counting data only, a host that also sends at line rate
//     never reaches η = 0.95), over a sliding window of one round (two
//     tumbling halves interpolated). In the first round after an idle
//     period the rate is extrapolated from what arrived after the round's
//     first packet, over the time since it, so a burst at line rate is
//     recognised as last-hop from its second packet, and a packet arriving
//     alone after a gap is no evidence of a full link. The test is B_R ≥
//     η·C·T (Alg. 1 line 10's ≥).
//   - Eq. (1)'s counter counts data packets (Alg. 1 runs per packet); it
//     resets on a sample at or below the threshold and on a packet
//     classified last-hop (the in-network run is broken).
//   - Single-packet messages (First and Last together) count in N for their
//     own packet only.
//   - PI cadence: one update per RTT per flow (Table I's update_timer) by
//     default. With the paper's gains (Kp 1e4, Kd 1e5, E in seconds) a
//     per-packet update is violently unstable in this simulator (at 100 Gbps
//     a 12 µs RTT holds ~150 packets, so per-packet updates multiply the
//     loop gain ~150×; the extract's fluid check §4.5 finds 15%
//     utilisation); per RTT they settle near the target. Measured on
//     rcc-multibottleneck (two flows through one in-network 100 G link):
//     per packet, the paper's gains collapse both flows to ~1.3 Gbps (the
//     minimum window) and the practical gains (Kp 16, Kd 7e3) to ~3 Gbps
//     after the second flow's start-up burst (the multiplicative cut is
//     applied on every packet of the burst); per RTT both hold the queue
//     near the target with ≥ 87 Gbps carried. So both presets update per RTT.
//   - PI state: U and E_prev start at 0 when a flow enters PI (U then equals
//     Kp·ΣE + Kd·E, the PI form of footnote 4), and W starts from the window
//     the flow had. Not in the paper: when the fair-share cap binds, a
//     negative U is reset to 0 (anti-windup: otherwise U integrates without
//     bound while capped and the flow reacts late to new congestion); W never
//     falls below minWindow.
//   - Pacing: the sender sends at line rate (the NIC paces packets at its
//     line rate, "each flow starts at line rate"), window-limited.
//   - Ablations: ewa off (RCC-PID) gives every flow a line-rate window (one
//     BDP, C·RTT) as its cap and skips the last-hop test, so every congestion
//     goes through detection and PI; pi off (RCC-EWA) always assigns the
//     fair share.
//
// Measured limits (see sim/rcc_test.go and the contract notes): flows under
// PI keep the ratio of their windows (Eq. (5) multiplies every flow at one
// bottleneck by the same factor) and one that sees a slightly larger E drifts
// to minWindow, so the PI path is not fair.
//
// The receiver reports, per flow, the window it assigned, the message count
// N, whether the flow is under PI control and its U, and B_R as a fraction
// of C·T (through its cc.ReceiverEnv).
func rccAlgorithm() *Algorithm {
	return &Algorithm{
		Name:  "rcc",
		Title: "RCC (receiver-driven, delay-based, window)",
		Help: "The receiver tells every sender its window on each ACK. When the receiver's own link is full " +
			"(last-hop congestion) each active message gets the fair share C·RTT/N at once; when the one-way delay " +
			"stays above base·(1+δ) while the last hop is not full (congestion inside the network), a PI controller " +
			"on the delay scales the window by 1 − tanh(U), capped at the fair share. No ECN or INT needed.",
		Param: []Param{
			{Name: "n", Kind: KindInt, Default: 3, Min: 1, Max: 1000, Live: true,
				Help: "Consecutive delay samples (data packets) above base·(1+δ) that declare in-network congestion (paper: 3). The count resets on a sample at or below the threshold and on a last-hop packet [AMBIG resolved]."},
			{Name: "delta", Kind: KindNumber, Default: 0.2, Min: 0.001, Max: 0.999, Live: true,
				Help: "δ: detection threshold base·(1+δ) and PI target base·(1+δ/2), applied to the one-way delay (paper: 0.2)."},
			{Name: "eta", Kind: KindNumber, Default: 0.95, Min: 0.01, Max: 1, Live: true,
				Help: "η: the last hop is congested when the wire bytes received over one round reach η·C·round (paper: 0.95)."},
			{Name: "kp", Kind: KindNumber, Default: 1e4, Min: 0, Max: 1e6, Live: true,
				Help: "Kp, PI gain on E in seconds (paper's evaluation: 1e4; §IV-D's practical range 1–16)."},
			{Name: "kd", Kind: KindNumber, Default: 1e5, Min: 0, Max: 1e7, Live: true,
				Help: "Kd, gain on the change of E (paper's evaluation: 1e5; practical range 1e3–7e3)."},
			boolParam("pidPerRTT", true, true, "Run the PI update once per RTT per flow (Table I's update timer) instead of on every packet. "+
				"On by default: the paper's gains are unstable per packet in this simulator [AMBIG resolved]."),
			rateParam("linkRate", 100000, "C, the receiver's last-hop rate (the engine gives receivers no link rate; defaults to the host link rate)."),
			{Name: "baseDelay", Kind: KindTime, Unit: "us", Default: 0, Min: 0, Max: 1e6, Live: true,
				Help: "Base one-way delay for every connection; 0 learns it as the minimum one-way delay seen from each source host [AMBIG: the paper does not say how base is obtained]."},
			{Name: "ewaRTT", Kind: KindTime, Unit: "us", Default: 0, Min: 0, Max: 1e6, Live: true,
				Help: "RTT in the fair share C·RTT/N, the round of B_R and the PI update period; 0: the fair share and B_R use twice the smallest one-way delay the receiver has seen, and the PI period twice the connection's own base (set 12 µs on HPCC's fat-tree, the paper's base RTT) [AMBIG: W = C/N has no time unit]."},
			{Name: "ewaScale", Kind: KindNumber, Default: 1, Min: 0.1, Max: 2, Live: true,
				Help: "Scale s of the fair share s·C·RTT/N (the text: 1; η = 0.95 matches the paper's measured per-flow goodput) [AMBIG]."},
			boolParam("ewa", true, true, "Explicit window assignment (off: RCC-PID ablation, every flow is capped at one line-rate window and all congestion goes to PI)."),
			boolParam("pi", true, true, "PI control of in-network congestion (off: RCC-EWA ablation, always the fair share)."),
			{Name: "minWindow", Kind: KindBytes, Unit: "B", Default: 1000, Min: 1, Max: 1e9, Live: true,
				Help: "Smallest window the receiver assigns (one MTU; not in the paper)."},
		},
		Presets: []Preset{
			{Name: "rcc_paper", Help: "The paper's evaluation gains Kp = 1e4, Kd = 1e5, one PI update per RTT (the defaults).",
				Values: map[string]float64{"kp": 1e4, "kd": 1e5, "pidPerRTT": 1}},
			{Name: "rcc_practical", Help: "§IV-D's practical gains (Kp = 16, Kd = 7e3, the top of the range), one update per RTT: a smaller standing queue and slower drift apart of flows under PI.",
				Values: map[string]float64{"kp": 16, "kd": 7e3, "pidPerRTT": 1}},
			{Name: "rcc_no_ewa", Help: "RCC-PID ablation: no explicit window assignment; all congestion handled by the PI controller.",
				Values: map[string]float64{"ewa": 0}},
			{Name: "rcc_no_pi", Help: "RCC-EWA ablation: no PI control; every flow always gets the fair share.",
				Values: map[string]float64{"pi": 0}},
		},
		AckHighPriority: false,
		// the 8-byte send timestamp on every data packet (echoed in the ACK,
		// which also carries the 4-byte window)
		INT: IntSpec{HeaderBytes: 8},
		Series: []SeriesSpec{
			{Name: "rcc_window_bytes", Unit: "B", Help: "The window the receiver assigned to the flow with its latest data packet (what the next ACK carries)."},
			{Name: "rcc_n", Unit: "", Help: "N, the active messages at the flow's receiver when it assigned the window."},
			{Name: "rcc_pi", Unit: "", Help: "1 while the flow is under PI control (in-network congestion detected; sticky until it ends), else 0."},
			{Name: "rcc_u", Unit: "", Help: "The PI controller's U for the flow (the window scales by 1 − tanh U at each update); set once it is under PI."},
			{Name: "rcc_rx_util", Unit: "", Help: "B_R / (C·T): the receiver's NIC utilisation over the last round; the last hop counts as congested at η."},
		},
		NewSender: func(info FlowInfo, p Params) Sender {
			return &rccSender{maxBDP: info.MaxBDP}
		},
		NewReceiver: func(p Params) Receiver {
			r := &RccReceiver{flows: map[int32]*rccFlow{}, conns: map[int32]Time{}}
			for name, v := range p {
				r.set(name, v)
			}
			return r
		},
	}
}

// rccSender obeys the assigned window and sends at line rate.
type rccSender struct {
	maxBDP int64
	w      int64
}

func (s *rccSender) Start(env Env) {
	s.w = s.maxBDP // line rate, one BDP, until the first assignment
	env.SetRate(Unlimited)
	env.SetWindow(s.w)
}

func (s *rccSender) OnAck(env Env, a *Ack) {
	if a.Window > 0 && a.Window != s.w {
		s.w = a.Window
		env.SetWindow(s.w)
	}
}

func (s *rccSender) SetParam(env Env, name string, v float64) error {
	if _, ok := rccAlgorithm0.FindParam(name); !ok {
		return fmt.Errorf("rcc has no parameter %q", name)
	}
	return nil // every parameter is the receiver's
}

var rccAlgorithm0 = rccAlgorithm()

// rccFlow is the receiver's state of one active message.
type rccFlow struct {
	consec     int
	inPI       bool
	u, ePrev   float64
	w          float64 // bytes
	nextUpdate Time
}

// RccReceiver is RCC's per-host receiver state machine. It is exported so
// that tests can inspect N, B_R and the per-flow controller state.
type RccReceiver struct {
	n                  int
	delta, eta, kp, kd float64
	perRTT, ewa, pi    bool
	c                  float64 // bits per second
	baseDelay, ewaRTT  Time
	ewaScale           float64
	minWin             float64

	flows   map[int32]*rccFlow
	free    []*rccFlow
	conns   map[int32]Time // learned base one-way delay per source host
	minBase Time

	// B_R: tumbling halves of one round T, interpolated into a sliding sum
	winStart    Time
	cur, prev   float64
	activeSince Time
	sinceActive float64
	active      bool
}

func (r *RccReceiver) set(name string, v float64) bool {
	switch name {
	case "n":
		r.n = int(v)
	case "delta":
		r.delta = v
	case "eta":
		r.eta = v
	case "kp":
		r.kp = v
	case "kd":
		r.kd = v
	case "pidPerRTT":
		r.perRTT = v != 0
	case "linkRate":
		r.c = v * mbps
	case "baseDelay":
		r.baseDelay = usec(v)
	case "ewaRTT":
		r.ewaRTT = usec(v)
	case "ewaScale":
		r.ewaScale = v
	case "ewa":
		r.ewa = v != 0
	case "pi":
		r.pi = v != 0
	case "minWindow":
		r.minWin = v
	default:
		return false
	}
	return true
}

// SetParam changes a parameter live.
func (r *RccReceiver) SetParam(name string, v float64) error {
	if !r.set(name, v) {
		return fmt.Errorf("rcc has no parameter %q", name)
	}
	return nil
}

// N is the number of active messages.
func (r *RccReceiver) N() int { return len(r.flows) }

// InPI reports whether the flow is under PI control, and its U and window.
func (r *RccReceiver) InPI(flow int32) (in bool, u, w float64) {
	f := r.flows[flow]
	if f == nil {
		return false, 0, 0
	}
	return f.inPI, f.u, f.w
}

// base returns the connection's base one-way delay after this sample.
func (r *RccReceiver) base(src int32, sample Time) Time {
	b := r.baseDelay
	if b <= 0 {
		b = r.conns[src]
		if b <= 0 || sample < b {
			b = sample
			r.conns[src] = b // a new source host adds an entry once
		}
	}
	// the round comes from the delays actually seen, whatever baseDelay
	// says (so a live change of baseDelay never leaves it stale)
	if r.minBase <= 0 || sample < r.minBase {
		r.minBase = sample
	}
	return b
}

// rtt is the round of the fair share, of B_R and of the PI updates: ewaRTT,
// or twice the smallest base one-way delay the receiver has seen. The
// receiver-wide minimum, not the connection's own base: in an incast the
// first packet of a late sender already waits behind the others, and a
// base learned from it would size that sender's share (and, summed over N,
// the queue) by the queueing delay, which then never drains below it.
func (r *RccReceiver) rtt() Time {
	if r.ewaRTT > 0 {
		return r.ewaRTT
	}
	return 2 * r.minBase
}

// account adds bytes the NIC received to B_R and returns B_R, the bytes of
// the last round T (sliding), extrapolated in the first round of activity
// from what arrived after the round's first packet.
func (r *RccReceiver) account(now Time, bytes float64, T Time) float64 {
	if T <= 0 {
		return 0
	}
	if !r.active || now-r.winStart >= 2*T {
		// idle for a round or more: a round starts with this packet, which
		// says nothing yet of the rate
		r.active = true
		r.cur, r.prev = bytes, 0
		r.winStart = now
		r.activeSince = now
		r.sinceActive = 0
		return bytes
	}
	if now-r.winStart >= T {
		r.prev, r.cur = r.cur, 0
		r.winStart += T
	}
	r.cur += bytes
	if el := now - r.activeSince; el < T {
		r.sinceActive += bytes
		if el <= 0 {
			return r.cur
		}
		return r.sinceActive * float64(T) / float64(el)
	}
	f := float64(now-r.winStart) / float64(T)
	return r.cur + r.prev*max(0, 1-f)
}

// OnRx counts a packet the host received that is not one of this
// algorithm's data packets (an ACK of a flow the host sends, say) in B_R.
func (r *RccReceiver) OnRx(env ReceiverEnv, wire int64) {
	if T := r.rtt(); T > 0 {
		r.account(env.Now(), float64(wire), T)
	}
}

// series ids
const (
	rccSeriesWindow = iota
	rccSeriesN
	rccSeriesPI
	rccSeriesU
	rccSeriesRxUtil
)

// OnData runs Algorithm 1 on one data packet and returns the window for its
// ACK (0: this packet belongs to no counted message and carries none).
func (r *RccReceiver) OnData(env ReceiverEnv, d *DataInfo) int64 {
	sample := d.Now - d.SentAt
	b := r.base(d.Src, sample)
	minRTT := r.rtt()
	br := r.account(d.Now, float64(d.Wire), minRTT)

	f := r.flows[d.Flow]
	if f == nil {
		if !d.InOrder {
			return 0 // a duplicate of a finished message, or a gap before its start
		}
		if k := len(r.free); k > 0 {
			f = r.free[k-1]
			r.free = r.free[:k-1]
			*f = rccFlow{}
		} else {
			f = &rccFlow{}
		}
		r.flows[d.Flow] = f
	}
	w := math.Round(r.decide(f, d.Now, sample, b, minRTT, br, minRTT))
	env.Gauge(d.Flow, rccSeriesWindow, w)
	env.Gauge(d.Flow, rccSeriesN, float64(len(r.flows)))
	env.Gauge(d.Flow, rccSeriesPI, b2f(f.inPI))
	if f.inPI {
		env.Gauge(d.Flow, rccSeriesU, f.u)
	}
	if full := r.c / 8 * float64(minRTT) / float64(Second); full > 0 {
		env.Gauge(d.Flow, rccSeriesRxUtil, br/full)
	}
	if d.Last && d.InOrder {
		delete(r.flows, d.Flow)
		r.free = append(r.free, f)
	}
	return int64(w)
}

// FairShare is the explicit window assignment for a round rtt and the
// current N (at least 1); without EWA it is one line-rate window.
func (r *RccReceiver) FairShare(rtt Time) float64 {
	bdp := r.c / 8 * float64(rtt) / float64(Second)
	if !r.ewa {
		return bdp
	}
	n := len(r.flows)
	if n < 1 {
		n = 1
	}
	return max(r.minWin, r.ewaScale*bdp/float64(n))
}

// LastHop is the congestion-type test: B_R ≥ η·C·T.
func (r *RccReceiver) LastHop(br float64, T Time) bool {
	return br >= r.eta*r.c/8*float64(T)/float64(Second)
}

func (r *RccReceiver) decide(f *rccFlow, now, sample, b, rtt Time, br float64, T Time) float64 {
	fair := r.FairShare(rtt)
	if !r.pi && f.inPI {
		// PI switched off live: flows under it leave it at once
		f.inPI, f.u, f.ePrev = false, 0, 0
	}
	if !f.inPI {
		if !r.pi || (r.ewa && r.LastHop(br, T)) {
			f.consec = 0
			f.w = fair
			return fair
		}
		if float64(sample) > float64(b)*(1+r.delta) {
			f.consec++
		} else {
			f.consec = 0
		}
		if f.consec < r.n {
			f.w = fair
			return fair
		}
		f.inPI = true
		f.u, f.ePrev = 0, 0
		if f.w <= 0 || f.w > fair {
			f.w = fair
		}
		f.nextUpdate = now
	}
	if r.perRTT && now < f.nextUpdate {
		f.w = max(r.minWin, min(f.w, fair))
		return f.w
	}
	// the update timer runs at the connection's own round (twice its base
	// one-way delay, or ewaRTT), so that flows sharing an in-network
	// bottleneck update at the same pace whatever their receivers saw
	period := 2 * b
	if r.ewaRTT > 0 {
		period = r.ewaRTT
	}
	f.nextUpdate = now + period
	target := float64(b) * (1 + r.delta/2)
	e := (float64(sample) - target) / float64(Second)
	f.u += r.kp*e + r.kd*(e-f.ePrev)
	f.ePrev = e
	f.w *= 1 - math.Tanh(f.u)
	if f.w >= fair {
		f.w = fair
		if f.u < 0 {
			f.u = 0 // anti-windup while the fair share binds
		}
	}
	if f.w < r.minWin {
		f.w = r.minWin
	}
	return f.w
}
