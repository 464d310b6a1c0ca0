package sim

import (
	"cclab/cc"
	"math/bits"
)

// flowEnv is a flow's handle on the engine, given to its algorithm.
type flowEnv struct {
	s *Sim
	f int32
}

func (e *flowEnv) Now() Time { return e.s.now }

func (e *flowEnv) SetRate(bps int64) {
	s := e.s
	f := &s.flows[e.f]
	if bps <= 0 {
		bps = 1
	}
	if bps == f.rate {
		return
	}
	f.rate = bps
	// as HPCC's ChangeRate: the next send is due one packet time after the
	// last one, at the new rate; other algorithms set the rate only
	if f.lastPktSize > 0 && s.algos[f.algo].resched {
		if bps == cc.Unlimited {
			f.nextAvail = f.lastSendAt
		} else {
			f.nextAvail = f.lastSendAt + serTime(f.lastPktSize, bps)
		}
	}
	f.dirty = true
}

func (e *flowEnv) SetWindow(bytes int64) {
	f := &e.s.flows[e.f]
	if bytes < 0 {
		bytes = 0
	}
	if bytes != f.window {
		f.window = bytes
		f.dirty = true
	}
}

func (e *flowEnv) SetTimer(slot int, at Time) {
	s := e.s
	f := &s.flows[e.f]
	if slot < 0 || slot >= cc.MaxTimers {
		s.violate("flow %d: timer slot %d out of range", e.f, slot)
		return
	}
	s.arm(&f.timers[slot], at, evTimer, e.f, slot)
}

// arm sets a timer slot to fire at `at` (not before now): it replaces any
// pending firing, whose event then finds a stale generation.
func (s *Sim) arm(t *timerSlot, at Time, kind evKind, obj int32, slot int) {
	if at < s.now {
		at = s.now
	}
	t.gen = (t.gen + 1) & 0xffffff
	t.at = at
	t.armed = true
	s.q.push(at, kind, obj, uint32(slot)<<24|t.gen)
}

func (e *flowEnv) CancelTimer(slot int) {
	if slot < 0 || slot >= cc.MaxTimers {
		return
	}
	t := &e.s.flows[e.f].timers[slot]
	t.armed = false
	t.gen = (t.gen + 1) & 0xffffff
}

func (e *flowEnv) Gauge(series int, v float64) {
	f := &e.s.flows[e.f]
	if series < 0 || series >= len(f.gauges) {
		return
	}
	f.gauges[series] = gauge{v: v, set: true}
}

func (e *flowEnv) Event(series int, v float64) { e.s.seriesEvent(&e.s.flows[e.f], series, v) }

// seriesEvent records one value of the flow's algorithm series at the
// current time (summarised when the series asks for it).
func (s *Sim) seriesEvent(f *flowState, series int, v float64) {
	a := &s.algos[f.algo]
	if series < 0 || series >= len(a.series) {
		return
	}
	if k := a.statOf[series]; k >= 0 {
		s.sstats[k].add(v)
	}
	s.tel.event(s, a.series[series], f.id, v)
}

func (e *flowEnv) WallNanos() int64 { return e.s.wall() }

// afterCC applies what an algorithm callback changed: a new rate or window
// may let the NIC send now.
func (s *Sim) afterCC(f *flowState) {
	if !f.dirty {
		return
	}
	f.dirty = false
	if f.state == flowActive && f.port >= 0 {
		s.wake(f.port, s.now)
	}
}

// bindFlow picks the sender NIC port of a flow (ECMP over the host's ports).
func (s *Sim) bindFlow(f *flowState) {
	pid := s.rt.next(s, f.src, f.dst, f.hashData)
	if pid == f.port {
		return
	}
	if f.port >= 0 {
		s.unbindFlow(f)
	}
	f.port = pid
	if pid >= 0 {
		p := &s.ports[pid]
		p.qps = append(p.qps, f.id)
	}
}

func (s *Sim) unbindFlow(f *flowState) {
	p := &s.ports[f.port]
	for i, id := range p.qps {
		if id == f.id {
			p.qps = append(p.qps[:i], p.qps[i+1:]...)
			// keep the round robin's place: the flow after the last served
			// one is still next
			if i <= p.rrLast {
				p.rrLast-- // may become -1: start from the first
			}
			if p.rrLast >= len(p.qps) {
				p.rrLast = -1
			}
			break
		}
	}
	f.port = -1
}

func (s *Sim) startFlow(id int32) {
	f := &s.flows[id]
	if f.state != flowPending {
		return
	}
	a := &s.algos[f.algo]
	f.state = flowActive
	f.startAt = s.now
	s.pending--
	s.started++
	f.env = &flowEnv{s: s, f: id}
	f.rate = cc.Unlimited
	f.window = cc.Unlimited
	f.limit = cc.Unlimited
	f.nextAvail = s.now
	f.lastProgress = s.now
	f.gauges = make([]gauge, len(a.series))
	s.incoming[f.dst]++
	info := cc.FlowInfo{
		ID: id, Size: f.size, BaseRTT: f.baseRTT, MaxBDP: f.maxBDP, LineRate: f.lineRate,
		MTU: s.cfg.Host.MTU, Header: s.cfg.Host.Header, Hops: f.hops,
		Classes: int(s.nData), Incoming: int(s.incoming[f.dst]), Workload: s.workload,
	}
	if a.conns != nil {
		k := [2]int32{f.src, f.dst}
		c := a.conns[k]
		if c == nil {
			c = &cc.Conn{Src: f.src, Dst: f.dst}
			a.conns[k] = c
		}
		info.Conn = c
	}
	s.bindFlow(f)
	f.sender = a.spec.Algo.NewSender(info, a.params)
	// the optional hooks, looked up once (nil: the sender has none)
	f.sendObs, _ = f.sender.(cc.SendObserver)
	f.classer = nil
	if s.nData > 1 {
		f.classer, _ = f.sender.(cc.DataClasser)
	}
	f.sampler, _ = f.sender.(cc.Sampler)
	f.onCNP, _ = f.sender.(cc.CNPHandler)
	f.onQCN, _ = f.sender.(cc.QCNHandler)
	f.onTimer, _ = f.sender.(cc.TimerHandler)
	f.onTimeout, _ = f.sender.(cc.TimeoutHandler)
	f.onCtrl, _ = f.sender.(cc.CtrlHandler)
	f.sender.Start(f.env)
	f.dirty = false
	if s.lane >= 0 {
		// a lane of a parallel run: the coordinator adds it to the
		// sampled flows at the next meeting
		s.laneStarts = append(s.laneStarts, id)
		s.sampleFrom(f)
	} else {
		s.tel.flowStarted(s, id)
	}
	if s.rtoMin > 0 {
		s.armRTO(f)
	}
	if f.port >= 0 {
		s.wake(f.port, s.now)
	}
}

func (s *Sim) finishFlow(f *flowState) {
	f.state = flowDone
	f.finishAt = s.now
	s.finished++
	s.incoming[f.dst]--
	for i := range f.timers {
		f.timers[i].armed = false
		f.timers[i].gen = (f.timers[i].gen + 1) & 0xffffff
	}
	f.rtoGen++
	f.rtoPending = false
	f.sender, f.sendObs, f.sampler, f.env, f.classer, f.onCtrl = nil, nil, nil, nil, nil, nil
	if f.port >= 0 {
		s.unbindFlow(f)
	}
	fs := &s.cfg.Flows[f.id]
	if fs.Group >= 0 {
		s.groupLeft[fs.Group]--
		if s.groupLeft[fs.Group] == 0 {
			for _, nid := range s.groupAfter[fs.Group] {
				s.q.push(s.now+s.cfg.Flows[nid].Start, evFlowStart, nid, 0)
				s.waiting--
			}
		}
	}
	// (a lane counts its own flows only: the coordinator stops a run in
	// lanes, lastFinish)
	if s.lane < 0 && s.finished == len(s.flows) && s.cfg.Duration == 0 {
		s.stop("all flows finished")
	}
}

// hasData reports whether the flow has data to send again (Resend), or
// new data with room in its window and below its limit.
func (f *flowState) hasData() bool {
	return f.rtxFrom < f.rtxTo ||
		f.sndNxt < f.size && f.sndNxt < f.limit && (f.window == cc.Unlimited || f.sndNxt-f.sndUna < f.window)
}

// nextSeq is the first payload byte of the flow's next data packet.
func (f *flowState) nextSeq() int64 {
	if f.rtxFrom < f.rtxTo {
		return f.rtxFrom
	}
	return f.sndNxt
}

// dataClass is the class (1 … nData) of the flow's next data packet.
func (s *Sim) dataClass(f *flowState) uint8 {
	if f.classer == nil {
		return classData
	}
	c := f.classer.DataClass(f.env, f.nextSeq())
	if c < 0 {
		c = 0
	}
	if c >= int(s.nData) {
		c = int(s.nData) - 1
	}
	return uint8(classData + c)
}

// nextData picks the flow whose packet the host port sends next, round
// robin over its flows, as HPCC's RdmaEgressQueue does; -1 if none may send
// now. wakeAt is the earliest time a rate-limited flow may send. With
// several data classes the NIC is strict priority too: it picks the first
// flow in round-robin order among those whose next packet has the highest
// class, and skips flows whose next packet's class is paused.
func (s *Sim) nextData(p *portState) (int32, Time) {
	n := len(p.qps)
	wakeAt := Time(-1)
	best, bestIdx, bestClass := int32(-1), 0, uint8(0)
	for i := 1; i <= n; i++ {
		idx := (p.rrLast + i) % n
		f := &s.flows[p.qps[idx]]
		if !f.hasData() {
			continue
		}
		if f.nextAvail > s.now {
			if wakeAt < 0 || f.nextAvail < wakeAt {
				wakeAt = f.nextAvail
			}
			continue
		}
		if s.nData == 1 && !s.srpt {
			p.rrLast = idx
			return f.id, wakeAt
		}
		c := s.dataClass(f)
		if p.paused&(1<<c) != 0 {
			continue
		}
		if best < 0 || c < bestClass || c == bestClass && s.shorter(f, &s.flows[best]) {
			best, bestIdx, bestClass = f.id, idx, c
		}
	}
	if best >= 0 {
		p.rrLast = bestIdx
	}
	return best, wakeAt
}

// shorter reports whether flow f goes before flow g of the same class at
// a sending NIC that serves shortest remaining first (both must ask for it;
// otherwise the round robin's order stands).
func (s *Sim) shorter(f, g *flowState) bool {
	if !s.algos[f.algo].srpt || !s.algos[g.algo].srpt {
		return false
	}
	return f.size-f.nextSeq() < g.size-g.nextSeq()
}

// readyClass is the highest-priority data class with a packet queued at
// port p and not paused; 0 (classHigh) if none.
func (s *Sim) readyClass(p *portState) uint8 {
	if m := p.queued & s.dataMask &^ p.paused; m != 0 {
		return uint8(bits.TrailingZeros16(m))
	}
	return classHigh
}

// makeData builds the flow's next data packet (HPCC's GetNxtPacket).
func (s *Sim) makeData(f *flowState) int32 {
	h := &s.cfg.Host
	seq := f.nextSeq()
	payload := f.size - seq
	if payload > h.MTU {
		payload = h.MTU
	}
	a := &s.algos[f.algo]
	id, pk := s.pk.get()
	pk.kind = pktData
	pk.class = s.dataClass(f)
	pk.flow = f.id
	pk.dst = f.dst
	pk.hash = f.hashData
	pk.rdir = 1
	if a.spray {
		// per-packet spraying: every packet hashes on its own
		f.sprayN++
		pk.hash = fmix32(f.hashData + f.sprayN*0x9e3779b9)
		pk.rdir = 0
	}
	if f.route != 0 {
		pk.route, pk.pinned = f.route, true
	}
	pk.window = f.echo
	pk.seq = seq
	pk.payload = int32(payload)
	pk.size = int32(payload + h.Header + int64(a.extraHdr) + int64(a.intFixed))
	pk.sentAt = s.now
	pk.first = seq == 0
	pk.last = seq+payload >= f.size
	pk.ingress = -1
	retx := seq < f.sndMax
	if f.rtxFrom < f.rtxTo {
		// a range sent again (DrivenEnv.Resend): new data waits
		f.rtxFrom += payload
		if f.rtxFrom >= f.rtxTo {
			f.rtxFrom, f.rtxTo = 0, 0
		}
		return s.sent(f, id, pk, payload, retx)
	}
	if f.sndNxt == f.sndUna {
		f.lastProgress = s.now // nothing was outstanding: the timeout starts now
	}
	f.sndNxt += payload
	// RoCE's AckReq: a packet that fills the window asks for an ACK, so a
	// receiver that acknowledges every ackEvery packets cannot leave a window
	// smaller than that waiting
	pk.ackReq = f.window != cc.Unlimited && f.sndNxt-f.sndUna >= f.window
	if f.sndNxt > f.sndMax {
		f.sndMax = f.sndNxt
	}
	return s.sent(f, id, pk, payload, retx)
}

// sent accounts for a data packet makeData built and returns its id.
func (s *Sim) sent(f *flowState, id int32, pk *packet, payload int64, retx bool) int32 {
	wire := int64(pk.size)
	s.cnt.created[pktData] += wire
	if retx {
		s.cnt.retx += payload
		f.retxBytes += payload
	}
	f.lastSendAt = s.now
	f.lastPktSize = wire
	if f.rate == cc.Unlimited {
		f.nextAvail = s.now
	} else {
		f.nextAvail = s.now + serTime(wire, f.rate)
	}
	if f.sendObs != nil {
		// a rate or window change here is picked up by transmit, which is
		// running: waking the port now would start a second transmission
		f.sendObs.OnSend(f.env, payload, wire, retx)
		f.dirty = false
	}
	return id
}

// wake makes sure port pid tries to transmit at time t (or earlier).
func (s *Sim) wake(pid int32, t Time) {
	p := &s.ports[pid]
	if t < p.busyUntil {
		t = p.busyUntil
	}
	if t <= s.now {
		if !p.kickPending || p.kickAt > s.now {
			// transmit right away; a later pending kick stays valid
			s.transmit(pid)
			return
		}
		return
	}
	if p.kickPending && p.kickAt <= t {
		return
	}
	p.kickGen++
	p.kickAt = t
	p.kickPending = true
	s.q.push(t, evKick, pid, p.kickGen)
}

// transmit starts sending the next packet on port pid if it is free.
func (s *Sim) transmit(pid int32) {
	p := &s.ports[pid]
	if p.sending {
		// re-entered from a side effect of picking the packet (a RESUME that
		// a dequeue queues on this same port): the running call sends it next
		return
	}
	if !p.up || p.busyUntil > s.now {
		if p.up {
			s.wake(pid, p.busyUntil)
		}
		return
	}
	var id int32 = -1
	var wakeAt Time = -1
	p.sending = true
	crAt := s.creditReady(p)
	if p.q[classHigh].n > 0 {
		id = s.dequeue(p, pid, classHigh)
	} else if crAt >= 0 && crAt <= s.now {
		id = s.sendCredit(p)
	} else if c := s.readyClass(p); c != classHigh {
		id = s.dequeue(p, pid, c)
	} else if p.host && p.paused != s.dataMask && len(p.qps) > 0 {
		var fid int32
		fid, wakeAt = s.nextData(p)
		if fid >= 0 {
			id = s.makeData(&s.flows[fid])
		}
	}
	p.sending = false
	if id < 0 {
		if crAt > s.now && (wakeAt < 0 || crAt < wakeAt) {
			wakeAt = crAt // a credit waits for its tokens
		}
		if wakeAt > s.now {
			s.wake(pid, wakeAt)
		}
		return
	}
	pk := s.pk.at(id)
	ser := p.psPerByte * Time(pk.size)
	if ser == 0 {
		ser = serTime(int64(pk.size), p.rate)
	}
	if p.busyUntil > s.now {
		s.violate("port %s starts a packet while still sending one", s.PortName(pid))
	}
	p.busyUntil = s.now + ser
	p.txBytes += int64(pk.size)
	p.busy += ser
	arrive := p.busyUntil + p.delay
	if p.watch {
		s.watchFinal(pid, arrive, pk)
	}
	if p.cut {
		s.handOff(pid, arrive, id, pk)
	} else {
		if p.wire.n == 0 {
			s.q.push(arrive, evArrive, pid, p.wireGen)
		}
		p.wire.push(wireSlot{arrive, id})
		p.wireBytes += int64(pk.size)
	}
	// more to send after this one? (a host whose flows are all window-bound
	// or done waits for an ACK to wake it instead)
	switch {
	case p.q[classHigh].n > 0 || s.readyClass(p) != classHigh:
		s.wake(pid, p.busyUntil)
	case p.host && p.paused != s.dataMask:
		if t := s.dataReadyAt(p); t >= 0 {
			s.wake(pid, max(t, p.busyUntil))
		}
	}
	if t := s.creditReady(p); t >= 0 {
		s.wake(pid, max(t, p.busyUntil))
	}
}

// dataReadyAt is the earliest time one of the host port's flows may send a
// data packet without waiting for an ACK, or -1 if none may.
func (s *Sim) dataReadyAt(p *portState) Time {
	at := Time(-1)
	for _, id := range p.qps {
		f := &s.flows[id]
		if !f.hasData() {
			continue
		}
		if at < 0 || f.nextAvail < at {
			at = f.nextAvail
		}
	}
	return at
}

// onArrive delivers the head of port pid's wire to the peer node.
func (s *Sim) onArrive(pid int32, gen uint32) {
	p := &s.ports[pid]
	if gen != p.wireGen || p.wire.n == 0 {
		return
	}
	slot := p.wire.pop()
	if p.wire.n > 0 {
		s.q.push(p.wire.peek().at, evArrive, pid, p.wireGen)
	}
	pk := s.pk.at(slot.id)
	p.wireBytes -= int64(pk.size)
	// random loss spares PFC frames: a lost RESUME would pause a port for
	// good (real PAUSE frames expire; these wait for RESUME, as HPCC's do)
	if p.loss > 0 && pk.kind != pktPFC && uniform(&p.rng) < p.loss {
		s.drop(slot.id, pid)
		return
	}
	if p.toSwitch {
		s.switchReceive(slot.id, pk, pid)
	} else {
		s.hostReceive(slot.id, pk, pid)
	}
}

func uniform(r interface{ Uint64() uint64 }) float64 {
	return float64(r.Uint64()>>11) / (1 << 53)
}

// drop discards a packet that is in no queue and on no wire.
func (s *Sim) drop(id int32, pid int32) {
	pk := s.pk.at(id)
	s.cnt.dropped[pk.kind] += int64(pk.size)
	s.cnt.drops++
	if pid >= 0 {
		s.ports[pid].drops++
		s.ports[pid].dropsTick++
	}
	s.pk.put(id)
}

func (s *Sim) consume(id int32, pk *packet) {
	s.cnt.consumed[pk.kind] += int64(pk.size)
	s.pk.put(id)
}

// hostReceive handles a packet arriving at a host over the link of port pid
// (pid is the peer's egress port; pid^1 is this host's port on that link).
func (s *Sim) hostReceive(id int32, pk *packet, pid int32) {
	if s.hasRx {
		s.receiversSee(pk, s.ports[pid].peer)
	}
	switch pk.kind {
	case pktData:
		s.receiveData(id, pk)
	case pktAck, pktNack:
		s.receiveAck(id, pk)
	case pktCNP:
		f := &s.flows[pk.flow]
		s.consume(id, pk)
		if f.state == flowActive {
			if f.onCNP != nil {
				f.onCNP.OnCNP(f.env)
			}
			s.afterCC(f)
		}
	case pktQCN:
		f := &s.flows[pk.flow]
		fb := cc.QCNFeedback{Fb: int(pk.fb), Port: int32(pk.seq)}
		s.consume(id, pk)
		if f.state == flowActive {
			if f.onQCN != nil {
				f.onQCN.OnQCN(f.env, fb)
			}
			s.afterCC(f)
		}
	case pktPFC:
		s.receivePFC(id, pk, pid)
	case pktCtrl, pktCredit:
		s.receiveCtrl(id, pk)
	}
}

// receiveData is the receiver NIC (HPCC's ReceiveUdp and ReceiverCheckSeq):
// in-order data advances the expected sequence and is acknowledged every
// AckEvery packets and at the end of the flow; a gap triggers a NACK (at most
// one per NackInterval for the same expected sequence); a duplicate is
// acknowledged again so that a sender whose ACKs were lost can move on.
func (s *Sim) receiveData(id int32, pk *packet) {
	f := &s.flows[pk.flow]
	h := &s.cfg.Host
	a := &s.algos[f.algo]
	if a.driven {
		s.receiveDriven(id, pk, f, a)
		return
	}
	s.cnt.consumed[pktData] += int64(pk.size)
	f.rxPkts++
	if pk.ecn {
		f.rxMarked++
	}
	inOrder := pk.seq == f.rcvNxt
	if a.rxOf != nil {
		rx := &s.rx[a.rxOf[f.dst]] // made by hostReceive
		s.data = cc.DataInfo{Flow: f.id, Seq: pk.seq, Payload: int64(pk.payload), Wire: int64(pk.size), Size: f.size,
			SentAt: pk.sentAt, Now: s.now, ECN: pk.ecn, First: pk.first, Last: pk.last, InOrder: inOrder, Src: f.src}
		pk.window = rx.r.OnData(rx.env, &s.data)
	}
	kind := pktKind(255)
	switch {
	case inOrder:
		f.rcvNxt += int64(pk.payload)
		f.delivered += int64(pk.payload)
		s.rxDeliver(f, pk.payload)
		f.rxInOrder++
		if int(f.rxInOrder) >= h.AckEvery || f.rcvNxt >= f.size || pk.ackReq {
			kind = pktAck
		}
	case pk.seq > f.rcvNxt:
		if s.now >= f.nackUntil || f.lastNack != f.rcvNxt {
			f.nackUntil = s.now + h.NackInterval
			f.lastNack = f.rcvNxt
			kind = pktNack
		}
	default:
		kind = pktAck
	}
	// a marked packet's CNP rides on its ACK or NACK; an in-order packet
	// that is not acknowledged on its own (ackEvery > 1) sends it alone; an
	// out-of-order packet whose NACK is suppressed sends none, as in HPCC's
	// simulator, where only an ACK or NACK carries the flag
	cnp := false
	if pk.ecn && (kind != pktKind(255) || inOrder) &&
		(h.CNPInterval == 0 || !f.cnpEver || s.now-f.lastCNP >= h.CNPInterval) {
		cnp = true
		f.cnpEver = true
		f.lastCNP = s.now
	}
	if kind == pktKind(255) && !cnp {
		s.pk.put(id)
		return
	}
	s.turnIntoAck(id, pk, f, a, kind, cnp)
}

// turnIntoAck sends the flow's ACK or NACK (kind), or, with kind 255, a
// CNP alone, back to its source, made from the data packet that asks for it.
func (s *Sim) turnIntoAck(id int32, pk *packet, f *flowState, a *algoRun, kind pktKind, cnp bool) {
	h := &s.cfg.Host
	// turn the data packet into its ACK, NACK or CNP in place: the INT stack
	// and the send timestamp are echoed without a copy
	intEcho := int64(a.extraHdr)
	if s.intOn && (a.intFixed > 0 || a.intPerHop > 0) {
		intEcho += int64(a.intFixed) + int64(pk.nhop)*int64(a.intPerHop)
	}
	pk.dst = f.src
	pk.hash = f.hashAck
	pk.rdir, pk.hop = 2, 0
	pk.ingress = -1
	pk.payload = 0
	pk.ecn = false
	pk.route, pk.pinned = 0, false
	nic := uint8(classHigh)
	dataClass := pk.class
	if kind == pktKind(255) {
		// a CNP on its own (the packet needs no ACK): high priority, no INT
		pk.kind = pktCNP
		pk.class = classHigh
		pk.size = cnpFrameBytes
		pk.nhop = 0
	} else {
		// at the NIC the algorithm's ACK priority (HPCC's ACK_HIGH_PRIO);
		// at the switches the data's class unless switch.ackClass is high
		nic = a.nicAck
		if nic != classHigh {
			nic = dataClass
		}
		pk.kind = kind
		pk.class = s.ackClass
		if pk.class != classHigh {
			pk.class = dataClass
		}
		pk.seq = f.rcvNxt
		size := h.Ack
		if kind == pktNack {
			size = h.Nack
		}
		if intEcho > 0 {
			size = max(size, h.AckHeader+intEcho)
		}
		pk.size = int32(size)
		pk.cnp = cnp
		pk.acked = clamp16(f.rxPkts)
		pk.marked = clamp16(f.rxMarked)
		f.rxPkts, f.rxMarked, f.rxInOrder = 0, 0, 0
	}
	s.cnt.created[pk.kind] += int64(pk.size)
	s.hostEnqueue(id, pk, f.dst, nic)
}

// hostEnqueue queues a control packet at the host's NIC port towards dst,
// in the NIC's class nic (which may differ from the class the packet has at
// the switches, pk.class).
func (s *Sim) hostEnqueue(id int32, pk *packet, host int32, nic uint8) {
	pid := s.hostPort(host, pk)
	if pid < 0 {
		s.drop(id, -1)
		return
	}
	p := &s.ports[pid]
	p.enqueue(nic, id)
	s.queueAdd(p, nic, int64(pk.size))
	s.transmit(pid)
}

func (s *Sim) receiveAck(id int32, pk *packet) {
	f := &s.flows[pk.flow]
	if f.state != flowActive {
		s.consume(id, pk)
		return
	}
	f.rttSample(s.now - pk.sentAt)
	newly := int64(0)
	if pk.seq > f.sndUna {
		newly = pk.seq - f.sndUna
		f.sndUna = pk.seq
		f.lastProgress = s.now
		f.backoff = 0
		if f.sndNxt < f.sndUna {
			f.sndNxt = f.sndUna
		}
	}
	if f.sndUna >= f.size {
		s.consume(id, pk)
		s.finishFlow(f)
		return
	}
	if pk.kind == pktNack {
		f.sndNxt = f.sndUna // go-back-N
	}
	// the Ack lives in the Sim (one scratch value) so that handing it to the
	// algorithm through an interface does not allocate per ACK
	s.ack = cc.Ack{
		Seq: pk.seq, NACK: pk.kind == pktNack, NewlyAcked: newly,
		Packets: int(pk.acked), ECNMarked: int(pk.marked), CNP: pk.cnp,
		SentAt: pk.sentAt, Window: pk.window, INT: pk.hops[:pk.nhop],
		SndNxt: f.sndNxt, SndUna: f.sndUna, SndMax: f.sndMax,
	}
	f.sender.OnAck(f.env, &s.ack)
	s.ack.INT = nil
	s.consume(id, pk)
	f.dirty = false
	// the ACK may have opened the window
	if f.port >= 0 {
		s.wake(f.port, s.now)
	}
}

func (s *Sim) onTimer(fid int32, arg uint32) {
	f := &s.flows[fid]
	slot := int(arg >> 24)
	t := &f.timers[slot]
	if f.state != flowActive || !t.armed || t.gen != arg&0xffffff || t.at != s.now {
		return
	}
	t.armed = false
	if f.onTimer != nil {
		f.onTimer.OnTimer(f.env, slot)
	}
	s.afterCC(f)
}

// stalled reports a run without a duration that can never finish: nothing
// is in flight, no scripted event (a link coming back) is left, no flow is
// about to start, and no unfinished flow has a path. Such a run stops
// instead of sampling its way to the 10 s cap.
func (s *Sim) stalled() bool {
	// a lane of a parallel run cannot tell, and need not: such a run has no
	// scripted events, so every unfinished flow keeps its path, and a run
	// with nothing left to do has stopped when its last flow finished
	if s.lane >= 0 {
		return false
	}
	if s.cfg.Duration > 0 || s.livePackets() > 0 || s.scripts > 0 || s.pending > s.waiting {
		return false
	}
	for i := range s.flows {
		f := &s.flows[i]
		if f.state == flowActive && s.rt.reachable(s, f.src, f.dst) {
			return false
		}
	}
	return true
}

// minRTO decides whether this run needs a retransmission timer and its floor.
func (s *Sim) minRTO() Time {
	h := &s.cfg.Host
	if h.RTO <= 0 {
		return 0
	}
	lossy := !s.cfg.Switch.PFC
	for _, e := range s.cfg.Events {
		if e.Kind != EventParams {
			lossy = true
		}
	}
	if !lossy && !h.RTOLossless {
		return 0
	}
	slowest := int64(1<<63 - 1)
	for i := range s.ports {
		slowest = min(slowest, s.ports[i].rate)
	}
	s.rtoFirst = Time(mulDiv(s.cfg.Switch.Buffer, 8*int64(Second), slowest))
	return max(h.RTO, 2*s.maxRTT)
}

// rttSample feeds RFC 6298's smoothed RTT and variation.
func (f *flowState) rttSample(r Time) {
	if !f.hasRTT {
		f.srtt, f.rttvar, f.hasRTT = r, r/2, true
		return
	}
	d := f.srtt - r
	if d < 0 {
		d = -d
	}
	f.rttvar = (3*f.rttvar + d) / 4
	f.srtt = (7*f.srtt + r) / 8
}

// rto is the flow's current timeout. Before its first RTT sample a flow
// allows for the deepest queue a switch can hold (its buffer at the slowest
// link's rate), so that a packet queued behind a standing queue is not
// mistaken for a lost one.
func (s *Sim) rto(f *flowState) Time {
	t := s.rtoMin
	if f.hasRTT {
		t = max(t, f.srtt+4*f.rttvar)
	} else {
		t = max(t, s.rtoFirst)
	}
	return t << f.backoff
}

// armRTO makes sure an RTO check is pending for the flow.
func (s *Sim) armRTO(f *flowState) {
	if f.rtoPending {
		return
	}
	f.rtoGen++
	f.rtoPending = true
	rto := s.rto(f)
	f.rtoAt = f.lastProgress + rto
	if f.rtoAt <= s.now {
		f.rtoAt = s.now + rto
	}
	s.q.push(f.rtoAt, evRTO, f.id, f.rtoGen)
}

// onRTO is the retransmission timer: if nothing has been acknowledged for
// RTO while data is outstanding, go back to the first unacknowledged byte.
// The check is lazy: ACKs only move lastProgress, and a check that finds the
// deadline moved re-arms itself.
func (s *Sim) onRTO(fid int32, gen uint32) {
	f := &s.flows[fid]
	if f.state != flowActive || gen != f.rtoGen {
		return
	}
	if s.stalled() {
		s.stop("stalled: no unfinished flow has a path")
		return
	}
	f.rtoPending = false
	if deadline := f.lastProgress + s.rto(f); deadline > s.now {
		s.armRTO(f)
		return
	}
	if s.algos[f.algo].driven {
		// a receiver-driven flow's receiver recovers lost data; the sender
		// only probes when it has sent everything it may and heard nothing
		// (no grant, credit or final ACK) for the timeout: its first
		// packets, or its final ACK, were lost. It sends its last packet
		// again, which tells the receiver of the message (or, if all of it
		// is in, draws the ACK again)
		if f.sndMax > 0 && !f.hasData() {
			mtu := s.cfg.Host.MTU
			f.rtxFrom, f.rtxTo = (f.sndMax-1)/mtu*mtu, f.sndMax
			f.timeouts++
			if f.backoff < 6 {
				f.backoff++
			}
			if f.port >= 0 {
				s.wake(f.port, s.now)
			}
		}
		f.lastProgress = s.now
		s.armRTO(f)
		return
	}
	if f.sndNxt > f.sndUna {
		f.sndNxt = f.sndUna
		f.timeouts++
		if f.backoff < 6 {
			f.backoff++
		}
		f.lastProgress = s.now
		if f.onTimeout != nil {
			f.onTimeout.OnTimeout(f.env, cc.Timeout{SndUna: f.sndUna, SndMax: f.sndMax})
			f.dirty = false // the wake below sends what the new window allows
		}
		if f.port < 0 {
			s.bindFlow(f)
		}
		if f.port >= 0 {
			s.wake(f.port, s.now)
		}
	} else {
		f.lastProgress = s.now
	}
	s.armRTO(f)
}

func clamp16(v int32) int16 {
	if v > 1<<15-1 {
		return 1<<15 - 1
	}
	return int16(v)
}
