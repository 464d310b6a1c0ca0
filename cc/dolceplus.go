package cc

import (
	"fmt"
	"math"
)

// Dolce-RC+ (Ye et al., Dolce-RC §VI, the clean-slate design; seed 004):
// no DCQCN at all. A flow is a sequence of messages; a DR-UCB bandit picks
// the sending rate of each message from K arms r_i = C/2^(K−1−i) (Def. 3,
// ascending: arm K−1 is the line rate C), and is updated when the ACK that
// acknowledges a whole message arrives (Algorithm 3) with the reward of
// eq. (5):
//
//	X_i(t) = ideal_MCT(t)/actual_MCT(i,t) · (1 − ECN_Ratio(i,t))^i
//
// actual_MCT is the ACK's arrival minus the departure of the message's
// first packet (Fig. 7's third field), ECN_Ratio the share of the message's
// packets that arrived marked (Fig. 7's optional fourth field; here counted
// exactly from the ECN echo of the per-packet ACKs), and the exponent i
// makes a higher rate pay more for the same marking.
//
// [AMBIG] resolutions (the registry help repeats them):
//   - K is not given: 4 arms (C/8, C/4, C/2, C), as many as Dolce-RC's.
//   - ideal_MCT is not defined: the message alone at line rate, HPCC's
//     standalone time for it: the flow's base RTT plus its wire bytes
//     (payload and one header per packet) at C. X is clamped to [0, 1].
//   - message size: the evaluation's 8 KB, read as 8000 B (8 packets of
//     1000 B; the lab's KB is decimal). A flow is cut into messages of that
//     size in byte order (the last one may be shorter).
//   - pipelining: messages are sent back to back; the arm of a new message
//     is the bandit's choice after the ACKs received so far (Algorithm 3's
//     line 6 sends "a new message" per ACK, which would stop a sender for
//     an RTT between messages of 8 KB: under 6 Gb/s at 200 Gb/s).
//   - connection: the messages of one host pair share one bandit by default
//     (sharedQP on: "learning from the long-term online data"; in the
//     paper's dumbbell every sender talks to one receiver); off, each flow
//     learns from scratch.
//   - the first message of a flow uses the connection's current pick
//     (arm 0, the slowest rate, on a new connection: DR-UCB's round robin
//     starts there); no flow starts at line rate.
//   - the flow's last message is acknowledged by the ACK that finishes the
//     flow, which the engine does not hand to the algorithm: it earns no
//     reward.
func dolcePlusAlgorithm() *Algorithm {
	return &Algorithm{
		Name:  "dolceplus",
		Title: "Dolce-RC+ (clean-slate: a bandit picks each message's rate)",
		Help: "No congestion-control law at all: a discounted UCB bandit picks the sending rate of every message from the line " +
			"rate divided by powers of two, and learns from each message's completion time (against its ideal) and the share " +
			"of its packets that arrived ECN-marked, weighing the marks more for faster arms.",
		Param: []Param{
			{Name: "arms", Kind: KindInt, Default: 4, Min: 2, Max: maxBanditArms, Live: false,
				Help: "K, the number of arms: rates C/2^(K−1−i), i = 0..K−1 (arm K−1 is the line rate). [AMBIG] not given for the evaluation; 4 as Dolce-RC."},
			{Name: "messageSize", Kind: KindBytes, Unit: "B", Default: 8000, Min: 1, Max: 1e9, Live: false,
				Help: "Bytes per message: the bandit iterates once per message (the evaluation's 8 KB, read as 8000 B = 8 packets). [AMBIG] how flows map to messages is not said."},
			{Name: "gamma", Kind: KindNumber, Default: 0.9998, Min: 0.5, Max: 1, Live: true,
				Help: "DR-UCB discount factor γ per iteration (Dolce-RC's 0.9998)."},
			{Name: "epsilon", Kind: KindNumber, Default: 0.015, Min: 0.001, Max: 1, Live: true,
				Help: "DR-UCB forced exploration ε: every arm once at the start of every ⌊K/ε⌋ iterations (Dolce-RC's 0.015)."},
			{Name: "xi", Kind: KindNumber, Default: 0.5001, Min: 0, Max: 10, Live: true,
				Help: "DR-UCB exploration constant ξ (Dolce-RC's 0.5001)."},
			boolParam("sharedQP", true, false, "The messages of one host pair share one connection and its bandit, so learning carries over from flow to flow (the paper's long-term online data). Off: each flow learns from scratch."),
			ackPriorityParam(true, "as Dolce-RC"),
		},
		AckHighPriority:  true,
		AckPriorityParam: "ackHighPriority",
		// Dolce-RC's thresholds (the paper's 7 KB / 500 KB, Pmax 1)
		ECN:         &ECNDefaults{Kmin: 7_000, Kmax: 500_000, Pmax: 1},
		Connections: true,
		Series: []SeriesSpec{
			{Name: "dolceplus_arm", Unit: "", Help: "Dolce-RC+: the arm of the message being sent (its rate is C/2^(K−1−arm))."},
			{Name: "dolceplus_reward", Unit: "", Help: "Dolce-RC+ (event): a message's reward X = (ideal/actual MCT)·(1 − ECN ratio)^arm, when its ACK arrives."},
			{Name: "dolceplus_mct_ns", Unit: "ns", Help: "Dolce-RC+ (event): a message's completion time, from its first packet's departure to the ACK of its last byte."},
			{Name: "dolceplus_pick", Unit: "", Help: "Dolce-RC+ (event): the arm the bandit picked at each iteration (the arm trace)."},
		},
		NewSender: func(info FlowInfo, p Params) Sender {
			d := &dolcePlus{lineRate: float64(info.LineRate), baseRTT: info.BaseRTT, header: info.Header, mtu: max(info.MTU, 1)}
			d.l = connState(info, p["sharedQP"] != 0, &d.own)
			for name, v := range p {
				d.set(name, v)
			}
			return d
		},
	}
}

// Dolce-RC+ series ids.
const (
	dolcePlusSeriesArm = iota
	dolcePlusSeriesReward
	dolcePlusSeriesMCT
	dolcePlusSeriesPick
)

// dolcePlusLearner is one connection's bandit.
type dolcePlusLearner struct {
	bandit DRUCB
	ready  bool
}

// dolcePlusMsg is a message sent and not yet acknowledged.
type dolcePlusMsg struct {
	end          int64 // sequence after its last byte
	arm          int
	first        Time // departure of its first packet
	pkts, marked int64
}

type dolcePlus struct {
	k              int
	msgSize        int64
	gamma, eps, xi float64
	lineRate       float64
	baseRTT        Time
	header, mtu    int64

	l   *dolcePlusLearner
	own dolcePlusLearner

	sent    int64 // first-transmission bytes so far: the next byte's sequence
	arm     int   // the arm of the message being sent
	msgs    []dolcePlusMsg
	head    int // first unacknowledged message in msgs
	acked   int64
	curOpen bool // the message being sent has its entry in msgs
}

func (d *dolcePlus) set(name string, v float64) bool {
	switch name {
	case "arms":
		d.k = int(v)
	case "messageSize":
		d.msgSize = int64(v)
	case "gamma":
		d.gamma, d.l.bandit.Gamma = v, v
	case "epsilon":
		d.eps, d.l.bandit.Eps = v, v
	case "xi":
		d.xi, d.l.bandit.Xi = v, v
	case "sharedQP", "ackHighPriority": // read when the flow is built / by the engine
	default:
		return false
	}
	return true
}

// rate is arm i's rate: C/2^(K−1−i).
func (d *dolcePlus) rate(i int) float64 { return d.lineRate / math.Exp2(float64(d.k-1-i)) }

func (d *dolcePlus) Start(env Env) {
	if l := d.l; !l.ready {
		l.bandit.Init(d.k, d.gamma, d.eps, d.xi)
		l.ready = true
	}
	d.pick(env)
	env.SetWindow(Unlimited)
}

// pick chooses the arm of the next message and paces at its rate.
func (d *dolcePlus) pick(env Env) {
	d.arm = d.l.bandit.Select()
	env.SetRate(rateBps(d.rate(d.arm)))
	env.Gauge(dolcePlusSeriesArm, float64(d.arm))
}

// OnSend opens a message at its first packet and, when a packet completes
// one, picks the next message's arm.
func (d *dolcePlus) OnSend(env Env, payload, _ int64, retransmit bool) {
	if retransmit {
		return
	}
	if !d.curOpen {
		d.msgs = append(d.msgs, dolcePlusMsg{end: min(d.sent-d.sent%d.msgSize+d.msgSize, math.MaxInt64), arm: d.arm, first: env.Now()})
		d.curOpen = true
	}
	d.sent += payload
	if d.sent >= d.msgs[len(d.msgs)-1].end {
		d.msgs[len(d.msgs)-1].end = d.sent
		d.curOpen = false
		d.pick(env)
	}
}

// OnAck counts the ECN echo against the message it acknowledges and closes
// every message the ACK completes: one bandit iteration each.
func (d *dolcePlus) OnAck(env Env, a *Ack) {
	if a.NACK || d.head >= len(d.msgs) {
		return
	}
	m := &d.msgs[d.head]
	m.pkts += int64(max(a.Packets, 1))
	m.marked += int64(a.ECNMarked)
	for d.head < len(d.msgs) && a.Seq >= d.msgs[d.head].end && (d.head < len(d.msgs)-1 || !d.curOpen) {
		d.complete(env, &d.msgs[d.head])
		d.head++
	}
	// drop acknowledged messages from the front now and then
	if d.head > 64 && d.head*2 > len(d.msgs) {
		n := copy(d.msgs, d.msgs[d.head:])
		d.msgs = d.msgs[:n]
		d.head = 0
	}
}

// complete is Algorithm 3's lines 2–5 for one acknowledged message.
func (d *dolcePlus) complete(env Env, m *dolcePlusMsg) {
	now := env.Now()
	size := m.end - d.acked
	d.acked = m.end
	mct := now - m.first
	pkts := (size + d.mtu - 1) / d.mtu
	ideal := d.baseRTT + Time(float64((size+pkts*d.header)*8)/d.lineRate*float64(Second))
	ratio := 1.0
	if mct > 0 {
		ratio = min(1, float64(ideal)/float64(mct))
	}
	ecn := 0.0
	if m.pkts > 0 {
		ecn = min(1, float64(m.marked)/float64(m.pkts))
	}
	x := clamp(ratio*math.Pow(1-ecn, float64(m.arm)), 0, 1)
	d.l.bandit.Update(m.arm, x)
	env.Event(dolcePlusSeriesReward, x)
	env.Event(dolcePlusSeriesMCT, float64(mct)/float64(Nanosecond))
	// the next message (if it has not started yet) gets the new choice
	if !d.curOpen {
		d.pick(env)
	}
	env.Event(dolcePlusSeriesPick, float64(d.l.bandit.Select()))
}

func (d *dolcePlus) OnSample(env Env) { env.Gauge(dolcePlusSeriesArm, float64(d.arm)) }

func (d *dolcePlus) SetParam(env Env, name string, v float64) error {
	if !d.set(name, v) {
		return fmt.Errorf("dolceplus has no parameter %q", name)
	}
	return nil
}
