package sim

import (
	"fmt"
	"math"
	"slices"

	"cclab/cc"
)

// Receiver-side algorithm instances (cc.Receiver): one per receiving host
// and algorithm, made when the host's first data packet of that algorithm
// arrives.

// receiver returns the index of algorithm ai's receiver at host, making it
// on first use.
func (s *Sim) receiver(ai int32, host int32) int32 {
	a := &s.algos[ai]
	if i, ok := a.rxOf[host]; ok {
		return i
	}
	i := int32(len(s.rx))
	r := a.spec.Algo.NewReceiver(a.params)
	rx := rxState{r: r, env: &rxEnv{s: s, i: i}, algo: ai, host: host}
	rx.timer, _ = r.(cc.ReceiverTimer)
	rx.obs, _ = r.(cc.RxObserver)
	rx.ctrl, _ = r.(cc.CtrlReceiver)
	rx.ender, _ = r.(cc.FlowEnder)
	s.rx = append(s.rx, rx)
	a.rxOf[host] = i
	s.nodes[host].rx = append(s.nodes[host].rx, i)
	return i
}

// receiversSee makes the receiver a data packet arriving at host needs
// (on its first) and shows every other packet to the host's receivers that
// measure the NIC's RX.
func (s *Sim) receiversSee(pk *packet, host int32) {
	dataOf := int32(-1) // the algorithm whose receiver gets this packet through OnData
	if pk.kind == pktData {
		if ai := s.flows[pk.flow].algo; s.algos[ai].rxOf != nil {
			s.receiver(ai, host)
			dataOf = ai
		}
	}
	for _, i := range s.nodes[host].rx {
		if rx := &s.rx[i]; rx.obs != nil && rx.algo != dataOf {
			rx.obs.OnRx(rx.env, int64(pk.size))
		}
	}
}

// rxEnv is a receiver's handle on the engine.
type rxEnv struct {
	s *Sim
	i int32
}

func (e *rxEnv) Now() Time { return e.s.now }

func (e *rxEnv) SetTimer(slot int, at Time) {
	s := e.s
	if slot < 0 || slot >= cc.MaxTimers {
		s.violate("receiver %d: timer slot %d out of range", e.i, slot)
		return
	}
	if s.rx[e.i].timer == nil {
		s.violate("receiver %d arms a timer but has no OnTimer", e.i)
		return
	}
	s.arm(&s.rx[e.i].timers[slot], at, evRxTimer, e.i, slot)
}

func (e *rxEnv) CancelTimer(slot int) {
	if slot < 0 || slot >= cc.MaxTimers {
		return
	}
	t := &e.s.rx[e.i].timers[slot]
	t.armed = false
	t.gen = (t.gen + 1) & 0xffffff
}

// flow returns the flow if it is one this receiver may report on: a flow
// of its algorithm to its host that has started.
func (e *rxEnv) flow(id int32) *flowState {
	s := e.s
	if id < 0 || int(id) >= len(s.flows) {
		return nil
	}
	f := &s.flows[id]
	rx := &s.rx[e.i]
	if f.algo != rx.algo || f.dst != rx.host || f.gauges == nil {
		return nil
	}
	return f
}

func (e *rxEnv) Gauge(flow int32, series int, v float64) {
	if f := e.flow(flow); f != nil && series >= 0 && series < len(f.gauges) {
		f.gauges[series] = gauge{v: v, set: true}
	}
}

func (e *rxEnv) Event(flow int32, series int, v float64) {
	if f := e.flow(flow); f != nil {
		e.s.seriesEvent(f, series, v)
	}
}

func (s *Sim) onRxTimer(i int32, arg uint32) {
	rx := &s.rx[i]
	slot := int(arg >> 24)
	t := &rx.timers[slot]
	if !t.armed || t.gen != arg&0xffffff || t.at != s.now {
		return
	}
	t.armed = false
	rx.timer.OnTimer(rx.env, slot)
}

// --- receiver-driven transports (cc.Ctrl, cc.DrivenEnv) ---

// initCredits gives every egress port its credit queue: a credit may use
// Share of the link (by default the credit's share of a credit and a full
// data packet, so that the data the credits release fills the link) in
// bursts of Bucket credits.
func (s *Sim) initCredits() error {
	c := s.credit
	if c.Wire <= 0 || c.Share < 0 || c.Share >= 1 || c.Queue < 1 || c.Bucket < 1 {
		return fmt.Errorf("sim: credit queue: wire %d B, share %g, queue %d, bucket %d: want wire > 0, share in [0,1), queue and bucket >= 1",
			c.Wire, c.Share, c.Queue, c.Bucket)
	}
	share := c.Share
	if share == 0 {
		share = float64(c.Wire) / float64(c.Wire+s.cfg.Host.MTU+s.cfg.Host.Header)
	}
	s.crQueue = c.Queue
	for i := range s.ports {
		p := &s.ports[i]
		p.crT = Time(math.Round(float64(c.Wire*8) * float64(Second) / (float64(p.rate) * share)))
		p.crBurst = Time(c.Bucket-1) * p.crT
	}
	return nil
}

// creditReady is when port p's head credit may leave, or -1 when it has none.
func (s *Sim) creditReady(p *portState) Time {
	if s.credit == nil || p.q[classCredit].n == 0 {
		return -1
	}
	return max(p.crTAT-p.crBurst, 0)
}

// sendCredit takes the head credit off port p's credit queue and charges
// the token bucket.
func (s *Sim) sendCredit(p *portState) int32 {
	p.crTAT = max(p.crTAT, s.now) + p.crT
	return s.release(p, classCredit)
}

// buildWorkload describes the run's message sizes for the algorithms
// (cc.FlowInfo.Workload): every flow's size, equally weighted.
func (s *Sim) buildWorkload() {
	s.incoming = make([]int32, len(s.nodes))
	if s.cfg.Workload != nil {
		s.workload = s.cfg.Workload.Copy()
		return
	}
	sizes := make([]int64, 0, len(s.flows))
	for i := range s.flows {
		sizes = append(sizes, s.flows[i].size)
	}
	slices.Sort(sizes)
	w := &cc.Workload{}
	for i, v := range sizes {
		if i > 0 && v == sizes[i-1] {
			w.Weights[len(w.Weights)-1]++
			continue
		}
		w.Sizes = append(w.Sizes, v)
		w.Weights = append(w.Weights, 1)
	}
	for i := range w.Weights {
		w.Weights[i] /= float64(len(sizes))
	}
	s.workload = w
}

// sendCtrl builds a control packet of flow f and queues it at the NIC of
// its sender (toSrc false) or receiver (toSrc true).
func (s *Sim) sendCtrl(f *flowState, c *cc.Ctrl, toSrc bool) {
	if c.Wire <= 0 {
		s.violate("flow %d: control packet of %d B", f.id, c.Wire)
		return
	}
	id, pk := s.pk.get()
	pk.kind = pktCtrl
	pk.flow = f.id
	pk.seq = c.Value
	pk.window = c.Aux
	pk.fb = int32(c.Kind)
	pk.size = int32(c.Wire)
	pk.ingress = -1
	pk.sentAt = s.now
	pk.toSrc = toSrc
	from := f.src
	pk.dst, pk.hash, pk.rdir = f.dst, f.hashData, 1
	if toSrc {
		from = f.dst
		pk.dst, pk.hash, pk.rdir = f.src, f.hashAck, 2
	}
	switch {
	case c.Credit && s.credit != nil:
		pk.kind = pktCredit
		pk.class = classCredit
	case c.Class < 0:
		pk.class = classHigh
	default:
		pk.class = uint8(classData + min(c.Class, int(s.nData)-1))
	}
	s.cnt.created[pk.kind] += int64(pk.size)
	pid := s.hostPort(from, pk)
	if pid < 0 {
		s.drop(id, -1)
		return
	}
	p := &s.ports[pid]
	if pk.class == classCredit && int(p.q[classCredit].n) >= s.crQueue {
		s.dropCredit(id, p)
		return
	}
	p.enqueue(pk.class, id)
	s.queueAdd(p, pk.class, int64(pk.size))
	s.transmit(pid)
}

// dropCredit drops a credit that finds port p's credit queue full. It is
// how the credits' feedback works, not a loss of data: it is counted apart
// from the port's drops.
func (s *Sim) dropCredit(id int32, p *portState) {
	pk := s.pk.at(id)
	s.cnt.dropped[pk.kind] += int64(pk.size)
	p.crDrops++
	s.pk.put(id)
}

// receiveCtrl delivers a control packet to the flow's sender or receiver.
func (s *Sim) receiveCtrl(id int32, pk *packet) {
	f := &s.flows[pk.flow]
	s.ctrl = cc.Ctrl{Flow: pk.flow, Kind: uint8(pk.fb), Value: pk.seq, Aux: pk.window, Wire: int64(pk.size),
		Credit: pk.kind == pktCredit, Class: int(pk.class) - classData}
	if pk.class == classHigh {
		s.ctrl.Class = cc.CtrlHigh
	}
	toSrc, route := pk.toSrc, pk.route
	s.consume(id, pk)
	if toSrc {
		if f.state != flowActive || f.onCtrl == nil {
			return
		}
		if s.ctrl.Credit {
			f.route = route
		}
		f.lastProgress = s.now // the receiver is answering: no probe needed
		f.onCtrl.OnCtrl(f.env, &s.ctrl)
		s.afterCC(f)
		return
	}
	if s.algos[f.algo].rxOf == nil {
		return
	}
	rx := &s.rx[s.receiver(f.algo, f.dst)]
	if rx.ctrl != nil {
		rx.ctrl.OnCtrl(rx.env, &s.ctrl)
	}
}

// receiveDriven is the receiving NIC of a receiver-driven algorithm: data
// is taken in any order, each packet once; nothing is acknowledged until
// every byte is in, and then (and for any duplicate after) one ACK goes
// back, which finishes the flow at the sender.
func (s *Sim) receiveDriven(id int32, pk *packet, f *flowState, a *algoRun) {
	mtu := s.cfg.Host.MTU
	s.cnt.consumed[pktData] += int64(pk.size)
	if f.rxBits == nil {
		n := (f.size + mtu - 1) / mtu
		f.rxBits = make([]uint64, (n+63)/64)
	}
	i := pk.seq / mtu
	bit := uint64(1) << (i & 63)
	dup := f.rxBits[i>>6]&bit != 0
	inOrder := pk.seq == f.rcvNxt
	complete := false
	if !dup {
		f.rxBits[i>>6] |= bit
		f.delivered += int64(pk.payload)
		s.rxDeliver(f, pk.payload)
		f.rxPkts++
		if pk.ecn {
			f.rxMarked++
		}
		for f.rcvNxt < f.size {
			j := f.rcvNxt / mtu
			if f.rxBits[j>>6]&(1<<(j&63)) == 0 {
				break
			}
			f.rcvNxt = min(f.rcvNxt+mtu, f.size)
		}
		complete = f.rcvNxt >= f.size
	}
	if end := pk.seq + int64(pk.payload); end > f.rxHigh {
		f.rxHigh = end
	}
	if a.rxOf != nil {
		rx := &s.rx[a.rxOf[f.dst]] // made by hostReceive
		s.data = cc.DataInfo{Flow: f.id, Seq: pk.seq, Payload: int64(pk.payload), Wire: int64(pk.size), Size: f.size,
			SentAt: pk.sentAt, Now: s.now, ECN: pk.ecn, First: pk.first, Last: pk.last, InOrder: inOrder, Src: f.src,
			Received: f.delivered, RcvNxt: f.rcvNxt, Dup: dup, Echo: pk.window}
		rx.r.OnData(rx.env, &s.data)
		if complete && rx.ender != nil {
			rx.ender.OnComplete(rx.env, f.id)
		}
	}
	if !complete && !(dup && f.rcvNxt >= f.size) {
		s.pk.put(id)
		return
	}
	f.rxInOrder = 0
	pk.window = 0
	s.turnIntoAck(id, pk, f, a, pktAck, false)
}

// firstGap is the flow's first range of payload not yet received.
func (s *Sim) firstGap(f *flowState) (int64, int64) {
	from := f.rcvNxt
	if from >= f.size || f.rxBits == nil {
		return from, max(from, f.rxHigh)
	}
	mtu := s.cfg.Host.MTU
	to := from
	for to < f.rxHigh {
		j := to / mtu
		if f.rxBits[j>>6]&(1<<(j&63)) != 0 {
			break
		}
		to = min(to+mtu, f.size)
	}
	return from, to
}

// DrivenReceiverEnv's methods of the engine's receiver env.

func (e *rxEnv) SendCtrl(c cc.Ctrl) {
	if f := e.flow(c.Flow); f != nil && f.state == flowActive {
		e.s.sendCtrl(f, &c, true)
	}
}

func (e *rxEnv) FirstGap(flow int32) (int64, int64) {
	if f := e.flow(flow); f != nil {
		return e.s.firstGap(f)
	}
	return 0, 0
}

// DrivenEnv's methods of the engine's flow env.

func (e *flowEnv) SetLimit(limit int64) {
	f := &e.s.flows[e.f]
	if limit != f.limit {
		f.limit = limit
		f.dirty = true
	}
}

func (e *flowEnv) Resend(from, to int64) {
	s := e.s
	f := &s.flows[e.f]
	mtu := s.cfg.Host.MTU
	from = max(from/mtu*mtu, 0)
	to = min(to, f.sndMax)
	if from >= to {
		return
	}
	f.rtxFrom, f.rtxTo = from, to
	f.dirty = true
}

func (e *flowEnv) SendCtrl(c cc.Ctrl) {
	f := &e.s.flows[e.f]
	if f.state == flowActive {
		e.s.sendCtrl(f, &c, false)
	}
}

func (e *flowEnv) Echo(v int64) { e.s.flows[e.f].echo = v }
