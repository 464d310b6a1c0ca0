package cc

import (
	"math"
	"slices"
)

// Homa (Montazeri, Li, Alizadeh, Ousterhout, SIGCOMM 2018), with the
// defaults of its simulator (PlatformLab/HomaSimulation, OMNeT++): a sender
// sends a message's first RTTbytes unscheduled, at once, at a priority
// chosen from the message's size; the receiver grants the rest one packet
// at a time, keeping RTTbytes in flight for each of the messages it grants,
// in SRPT order (fewest bytes left to grant first, one message per sender),
// at most `overcommit` of them at a time, each at a scheduled priority
// (with k messages granted, the k lowest levels, the best message the
// highest of them); a receiver asks for data it misses with RESEND.
//
// Choices the paper and its simulator leave open, and what the lab does:
//   - RTTbytes: the flow's bandwidth-delay product (base RTT × line rate),
//     the paper's definition; the simulator's 10,000 B is that for 10 Gbps.
//   - Priority split: 8 levels; the unscheduled ones are the share of
//     levels equal to the unscheduled share of bytes in the run's size
//     distribution (the paper's rule; the simulator hard-codes the split per
//     workload), at least one of each.
//   - Unscheduled cut-offs: equal unscheduled bytes per level over the run's
//     message sizes, one priority per message (the paper); the simulator's
//     "graduated" per-packet priorities and tail boosting are not modelled.
//   - Grants ride the highest priority, 48 B on the wire (the lab's minimum
//     frame); data keeps the lab's RoCE framing (host.header), not Homa's
//     30 B header.
//   - Incast optimisation: a flow that starts while more than
//     incastThreshold flows are already arriving at its receiver sends only
//     incastUnsched unscheduled bytes (rounded up to one packet); the paper
//     marks such RPCs when a client has many outstanding and names no
//     threshold.
//   - Loss: the receiver sends RESEND for the first missing range of a
//     message it has heard nothing from for resendTimeout; the paper has no
//     number and its simulator no loss. BUSY is not modelled: a message
//     that waits for grants may be asked to resend what it was never
//     granted to send, which it ignores.
//   - The sending NIC serves its messages shortest-remaining first within a
//     priority (the simulator's SRBF).
const (
	homaGrant  uint8 = 1
	homaResend uint8 = 2
)

// Homa's series ids.
const (
	homaSerPrio = iota
	homaSerGranted
	homaSerRank
	homaSerResend
	homaSerGrantRate
)

// homaRateWindow is the span over which a message's grant rate is measured.
const homaRateWindow = 10 * Microsecond

func homaAlgorithm() *Algorithm {
	return &Algorithm{
		Name:  "homa",
		Title: "Homa (receiver-driven, priorities)",
		Help: "Receiver-driven transport with network priorities (Montazeri et al., SIGCOMM 2018): RTTbytes unscheduled at " +
			"a size-based priority, then one grant per packet from the receiver in SRPT order to a few messages at a time, " +
			"packet spraying in the core. Runs on 8 strict-priority data classes.",
		Param: []Param{
			{Name: "rttBytes", Kind: KindBytes, Unit: "B", Default: 0, Min: 0, Max: 1e9,
				Help: "RTTbytes: unscheduled bytes per message and bytes kept in flight per granted message; 0: the flow's bandwidth-delay product (the simulator's 10,000 B is that at 10 Gbps)."},
			{Name: "unschedPrios", Kind: KindInt, Default: 0, Min: 0, Max: 7,
				Help: "Priority levels for unscheduled packets, the rest are scheduled; 0: the unscheduled share of the run's bytes (the paper's rule), at least one of each."},
			{Name: "overcommit", Kind: KindInt, Default: 0, Min: 0, Max: 1000,
				Help: "Degree of overcommitment: messages a receiver grants at once; 0: the number of scheduled levels (the paper)."},
			{Name: "incastThreshold", Kind: KindInt, Default: 8, Min: 0, Max: 1e6,
				Help: "Incast optimisation: a flow that starts while more than this many flows are arriving at its receiver sends only incastUnsched unscheduled bytes; 0: off (the paper gives no number)."},
			{Name: "incastUnsched", Kind: KindBytes, Unit: "B", Default: 300, Min: 1, Max: 1e9,
				Help: "Unscheduled bytes of a flow started in an incast (the paper: a few hundred bytes); a packet is never split, so this is one packet."},
			{Name: "resendTimeout", Kind: KindTime, Unit: "us", Default: 1000, Min: 1, Max: 1e7,
				Help: "A receiver that has heard nothing from a message it expects data from for this long asks for the first missing range again (RESEND)."},
			{Name: "grantBytes", Kind: KindBytes, Unit: "B", Default: 48, Min: 1, Max: 1500,
				Help: "A grant's or RESEND's bytes on the wire."},
			boolParam("spray", true, false, "Spray data packets per packet across equal-cost paths (Homa's core spraying); off: per-flow ECMP."),
		},
		Presets: []Preset{
			{Name: "homa_no_incast", Help: "Without the incast optimisation: every flow sends RTTbytes unscheduled.",
				Values: map[string]float64{"incastThreshold": 0}},
			{Name: "homa_overcommit1", Help: "No overcommitment: a receiver grants one message at a time (pure SRPT, the paper's ablation).",
				Values: map[string]float64{"overcommit": 1}},
		},
		ReceiverDriven: true,
		DataClasses:    8,
		SprayParam:     "spray",
		SenderSRPT:     true,
		Series: []SeriesSpec{
			{Name: "homa_priority", Unit: "", Help: "Priority level of the flow's latest data packet (0 is the highest)."},
			{Name: "homa_granted_bytes", Unit: "B", Help: "Bytes of the message the receiver has allowed (unscheduled bytes, then each grant's offset); its slope is the grant rate."},
			{Name: "homa_rank", Unit: "", Help: "The message's place in its receiver's SRPT order among those it grants (0 first), −1 while it waits for grants."},
			{Name: "homa_resend_bytes", Unit: "B", Help: "Bytes a RESEND asked the sender for again (an event per RESEND)."},
			{Name: "homa_grant_bps", Unit: "bps", Help: "Bytes the receiver granted the message over the last 10 µs or more, × 8 / that time; 0 once it is no longer granted."},
		},
		NewSender: func(info FlowInfo, p Params) Sender {
			return &homaSender{info: info, p: p}
		},
		NewReceiver: func(p Params) Receiver {
			return &homaReceiver{p: p, byFlow: map[int32]*homaMsg{}}
		},
	}
}

// homaRTTBytes is the RTTbytes a flow uses.
func homaRTTBytes(p Params, info FlowInfo) int64 {
	if v := int64(p.Get("rttBytes")); v > 0 {
		return v
	}
	return max(info.MaxBDP, info.MTU)
}

// homaPrios maps message sizes to priority levels.
type homaPrios struct {
	classes int     // levels in all (the fabric's data classes)
	unsched int     // levels 0 … unsched−1 are unscheduled
	cut     []int64 // a message of size ≤ cut[k] (and > cut[k−1]) is sent unscheduled at level k
}

// prio is the unscheduled level of a message of this size.
func (h *homaPrios) prio(size int64) int {
	for k, c := range h.cut {
		if size <= c {
			return k
		}
	}
	return h.unsched - 1
}

// newHomaPrios splits the levels and sets the unscheduled cut-offs so that
// each unscheduled level carries an equal share of the unscheduled bytes of
// the workload's messages.
func newHomaPrios(w *Workload, rtt int64, classes, unschedParam int) *homaPrios {
	h := &homaPrios{classes: max(classes, 1), unsched: 1}
	if h.classes == 1 {
		return h
	}
	var ub, tb float64
	if w != nil {
		for i, s := range w.Sizes {
			ub += w.Weights[i] * float64(min(s, rtt))
			tb += w.Weights[i] * float64(s)
		}
	}
	u := unschedParam
	if u == 0 {
		u = 1
		if tb > 0 {
			u = int(math.Round(float64(h.classes) * ub / tb))
		}
	}
	h.unsched = min(max(u, 1), h.classes-1)
	if w == nil || ub == 0 {
		return h
	}
	acc, k := 0.0, 1
	for i, s := range w.Sizes {
		acc += w.Weights[i] * float64(min(s, rtt))
		for k < h.unsched && acc >= float64(k)/float64(h.unsched)*ub*(1-1e-12) {
			h.cut = append(h.cut, s)
			k++
		}
	}
	return h
}

type homaSender struct {
	info    FlowInfo
	p       Params
	prios   *homaPrios
	unsched int64 // bytes sent unscheduled
	limit   int64 // granted so far
	uprio   int   // level of the unscheduled packets
	sprio   int   // level of the scheduled packets (the latest grant's)
	last    int   // level of the latest packet asked for
	denv    DrivenEnv
}

func (s *homaSender) Start(env Env) {
	env.SetRate(Unlimited)
	env.SetWindow(Unlimited)
	d, ok := env.(DrivenEnv)
	if !ok {
		return // an engine without receiver-driven control: line rate, no limit
	}
	s.denv = d
	rtt := homaRTTBytes(s.p, s.info)
	key := homaPrioKey{rtt: rtt, classes: s.info.Classes, unsched: int(s.p.Get("unschedPrios"))}
	s.prios = s.info.Workload.homaPrios(key)
	s.unsched = min(s.info.Size, rtt)
	if t := int(s.p.Get("incastThreshold")); t > 0 && s.info.Incoming > t {
		s.unsched = min(s.info.Size, int64(s.p.Get("incastUnsched")))
	}
	s.uprio = s.prios.prio(s.info.Size)
	s.sprio = s.prios.classes - 1
	s.limit = s.unsched
	d.SetLimit(s.limit)
	// Homa's data header carries the message's unscheduled bytes, the
	// RTTbytes its sender uses and its number of scheduled levels, so that
	// the receiver knows them from any packet
	sched := s.prios.classes - s.prios.unsched
	d.Echo(min(s.unsched, 1<<32-1) | min(rtt, 1<<24-1)<<32 | int64(sched)<<56)
	d.Gauge(homaSerPrio, float64(s.uprio))
	d.Gauge(homaSerGranted, float64(s.limit))
}

func (s *homaSender) DataClass(env Env, seq int64) int {
	if seq < s.unsched {
		s.last = s.uprio
	} else {
		s.last = s.sprio
	}
	return s.last
}

func (s *homaSender) OnSend(env Env, payload, wire int64, retransmit bool) {
	// the packet just built is the flow's latest: the level charted
	env.Gauge(homaSerPrio, float64(s.last))
}

func (s *homaSender) OnCtrl(env Env, c *Ctrl) {
	if s.denv == nil {
		return
	}
	switch c.Kind {
	case homaGrant:
		// the k granted messages take the k lowest levels, the i-th the
		// (k−i)-th from the bottom, never an unscheduled one
		k, i := int(c.Aux>>16), int(c.Aux&(1<<16-1))
		s.sprio = max(s.prios.unsched, s.prios.classes-k+i)
		if s.prios.classes == 1 {
			s.sprio = 0
		}
		if c.Value > s.limit {
			s.limit = c.Value
			s.denv.SetLimit(s.limit)
			env.Gauge(homaSerGranted, float64(s.limit))
		}
	case homaResend:
		// only what it was allowed to send: a message that waits for
		// grants ignores a RESEND for bytes it never sent
		s.denv.Resend(c.Value, min(c.Aux, s.limit))
	}
}

func (s *homaSender) OnAck(env Env, a *Ack) {}

func (s *homaSender) SetParam(env Env, name string, v float64) error {
	s.p = s.p.Clone()
	s.p[name] = v
	return nil
}

type homaPrioKey struct {
	rtt              int64
	classes, unsched int
}

// homaPrios returns the priority map for these settings, computed once per
// run (every flow of a run shares its Workload).
func (w *Workload) homaPrios(k homaPrioKey) *homaPrios {
	if w == nil {
		return newHomaPrios(nil, k.rtt, k.classes, k.unsched)
	}
	if w.memo == nil {
		w.memo = map[any]any{}
	}
	if h, ok := w.memo[k].(*homaPrios); ok {
		return h
	}
	h := newHomaPrios(w, k.rtt, k.classes, k.unsched)
	w.memo[k] = h
	return h
}

// homaMsg is one message a receiver takes in.
type homaMsg struct {
	flow, src int32
	size      int64
	received  int64
	granted   int64
	rtt       int64
	lastRx    Time
	mtu       int64 // the largest payload seen: a whole packet
	sched     int   // scheduled levels, as its sender split them
	aux       int64 // what its latest grant said of its place
	rank      int   // place among the granted messages, −1 if not granted
	rateFrom  Time  // start of the grant-rate window
	rateBytes int64 // bytes granted since then
}

// granted records a grant of n more bytes at now and reports the grant
// rate once the window has passed.
func (m *homaMsg) grantRate(env ReceiverEnv, n int64) {
	now := env.Now()
	if m.rateBytes == 0 && n > 0 && now-m.rateFrom > homaRateWindow {
		m.rateFrom = now // first grant after a pause: a new window
	}
	m.rateBytes += n
	if d := now - m.rateFrom; d >= homaRateWindow {
		env.Gauge(m.flow, homaSerGrantRate, float64(m.rateBytes)*8/(float64(d)/float64(Second)))
		m.rateFrom, m.rateBytes = now, 0
	}
}

// toGrant is the SRPT key: bytes not yet granted.
func (m *homaMsg) toGrant() int64 { return m.size - m.granted }

type homaReceiver struct {
	p      Params
	msgs   []*homaMsg // sorted by toGrant, then size, then flow
	byFlow map[int32]*homaMsg
	armed  bool
	act    []*homaMsg // the messages granted, in SRPT order
	prev   []*homaMsg // scratch: the previous act
	srcs   []int32    // scratch: senders already granted in this round
}

func homaLess(a, b *homaMsg) bool {
	if a.toGrant() != b.toGrant() {
		return a.toGrant() < b.toGrant()
	}
	if a.size != b.size {
		return a.size < b.size
	}
	return a.flow < b.flow
}

// resort moves message i to its place after its key changed.
func (r *homaReceiver) resort(i int) {
	for i > 0 && homaLess(r.msgs[i], r.msgs[i-1]) {
		r.msgs[i], r.msgs[i-1] = r.msgs[i-1], r.msgs[i]
		i--
	}
	for i+1 < len(r.msgs) && homaLess(r.msgs[i+1], r.msgs[i]) {
		r.msgs[i], r.msgs[i+1] = r.msgs[i+1], r.msgs[i]
		i++
	}
}

func (r *homaReceiver) OnData(env ReceiverEnv, d *DataInfo) int64 {
	m := r.byFlow[d.Flow]
	if m == nil {
		if d.Received >= d.Size {
			return 0 // complete (a duplicate after the end)
		}
		m = &homaMsg{flow: d.Flow, src: d.Src, size: d.Size, granted: d.Echo & (1<<32 - 1),
			rtt: d.Echo >> 32 & (1<<24 - 1), sched: int(d.Echo >> 56), rank: -1, aux: -1, rateFrom: env.Now()}
		if m.rtt <= 0 {
			m.rtt = d.Payload
		}
		r.byFlow[d.Flow] = m
		r.msgs = append(r.msgs, m)
		r.resort(len(r.msgs) - 1)
		if !r.armed {
			r.armed = true
			env.SetTimer(0, env.Now()+r.timeout())
		}
	}
	m.received = d.Received
	m.lastRx = env.Now()
	m.mtu = max(m.mtu, d.Payload)
	r.grant(env)
	return 0
}

func (r *homaReceiver) OnComplete(env ReceiverEnv, flow int32) {
	m := r.byFlow[flow]
	if m == nil {
		return
	}
	delete(r.byFlow, flow)
	if i := slices.Index(r.msgs, m); i >= 0 {
		r.msgs = slices.Delete(r.msgs, i, i+1)
	}
	r.grant(env)
}

func (r *homaReceiver) timeout() Time { return Time(r.p.Get("resendTimeout") * float64(Microsecond)) }

// grant walks the messages in SRPT order, takes the first of each sender
// up to the overcommitment degree, and grants each up to RTTbytes beyond
// what has arrived, in whole packets, telling it its place among the k
// granted (the sender turns that into a level: the k lowest scheduled
// levels, the first message the highest of them).
func (r *homaReceiver) grant(env ReceiverEnv) {
	d, ok := env.(DrivenReceiverEnv)
	if !ok || len(r.msgs) == 0 {
		return
	}
	over := int(r.p.Get("overcommit"))
	if over == 0 {
		over = max(r.msgs[0].sched, 1)
	}
	prev := append(r.prev[:0], r.act...)
	r.act, r.srcs = r.act[:0], r.srcs[:0]
	for _, m := range r.msgs {
		if len(r.act) >= over {
			break
		}
		if m.toGrant() <= 0 || slices.Contains(r.srcs, m.src) {
			continue
		}
		r.srcs = append(r.srcs, m.src)
		r.act = append(r.act, m)
	}
	r.prev = prev
	for _, m := range prev {
		if !slices.Contains(r.act, m) && m.rank >= 0 {
			m.rank = -1
			d.Gauge(m.flow, homaSerRank, -1)
			d.Gauge(m.flow, homaSerGrantRate, 0)
			m.rateBytes = 0
		}
	}
	k := len(r.act)
	wire := int64(r.p.Get("grantBytes"))
	for i, m := range r.act {
		want := min(m.size, (m.received+m.rtt+m.mtu-1)/m.mtu*m.mtu)
		aux := int64(k)<<16 | int64(i)
		if want <= m.granted && aux == m.aux {
			continue
		}
		if want > m.granted {
			m.grantRate(env, want-m.granted)
		}
		m.granted = max(m.granted, want)
		m.aux = aux
		if m.rank != i {
			m.rank = i
			d.Gauge(m.flow, homaSerRank, float64(i))
		}
		d.SendCtrl(Ctrl{Flow: m.flow, Kind: homaGrant, Value: m.granted, Aux: aux, Wire: wire, Class: 0})
		d.Gauge(m.flow, homaSerGranted, float64(m.granted))
	}
	// grants moved keys: restore the SRPT order (insertion sort, nearly sorted)
	for i := 1; i < len(r.msgs); i++ {
		r.resort(i)
	}
}

// OnTimer asks every message the receiver expects data from and has heard
// nothing from for resendTimeout to send its first missing range again.
func (r *homaReceiver) OnTimer(env ReceiverEnv, slot int) {
	r.armed = false
	if len(r.msgs) == 0 {
		return
	}
	d, ok := env.(DrivenReceiverEnv)
	if !ok {
		return
	}
	now, to := env.Now(), r.timeout()
	for _, m := range r.msgs {
		if m.granted <= m.received || now-m.lastRx < to {
			continue
		}
		from, upto := d.FirstGap(m.flow)
		if upto <= from {
			upto = m.granted // the tail: nothing after the gap has arrived
		}
		m.lastRx = now
		d.SendCtrl(Ctrl{Flow: m.flow, Kind: homaResend, Value: from, Aux: upto, Wire: int64(r.p.Get("grantBytes")), Class: 0})
		env.Event(m.flow, homaSerResend, float64(upto-from))
	}
	r.armed = true
	env.SetTimer(0, now+to)
}

func (r *homaReceiver) SetParam(name string, v float64) error {
	r.p = r.p.Clone()
	r.p[name] = v
	return nil
}
