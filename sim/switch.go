package sim

import (
	"cclab/cc"
)

const pfcFrameBytes = 64
const cnpFrameBytes = 64
const qcnFrameBytes = 64

// switchReceive handles a packet arriving at a switch over the link of port
// pin (pin is the upstream node's egress port; pin^1 is the switch's own
// port on that link, the packet's ingress). It follows HPCC's SwitchNode:
// route by ECMP, admit data-class packets into the shared buffer (or drop),
// account them at the ingress port, pause the upstream when the ingress is
// over its threshold, and queue at the egress port.
func (s *Sim) switchReceive(id int32, pk *packet, pin int32) {
	if pk.kind == pktPFC {
		s.receivePFC(id, pk, pin)
		return
	}
	in := pin ^ 1
	// the switch is pin's peer: pin's link line is in cache (the arrival
	// read it), the ingress port's would be one more line
	u := s.ports[pin].peer
	n := &s.nodes[u]
	var egress int32
	if pk.pinned {
		egress = s.rt.pinned(s, u, pk)
	} else {
		egress = s.forward(u, pk)
	}
	if egress < 0 {
		s.drop(id, in)
		return
	}
	ep := &s.ports[egress]
	size := int64(pk.size)
	pk.ingress = -1
	if pk.class == classCredit {
		if int(ep.q[classCredit].n) >= s.crQueue {
			s.dropCredit(id, ep)
			return
		}
		// record the way back for the data this credit releases
		f := &s.flows[pk.flow]
		pk.route = pk.route<<8 | s.rt.indexOf(s, u, f.dst, in)
		ep.enqueue(classCredit, id)
		s.queueAdd(ep, classCredit, size)
		s.transmit(egress)
		return
	}
	data := pk.class != classHigh
	if data {
		if s.cfg.Switch.PFC {
			if !s.admit(n, in, pk.class, size) {
				s.drop(id, egress)
				return
			}
			s.ingressAdd(n, in, pk.class, size)
			pk.ingress = in
		} else if n.mmu.used+size > n.mmu.buffer {
			s.drop(id, egress)
			return
		}
		n.mmu.used += size
		if n.mmu.used > n.mmu.maxUsed {
			n.mmu.maxUsed = n.mmu.used
		}
	}
	if pk.kind == pktData {
		if s.flowCount {
			s.fc.touch(egress, pk.flow, s.now)
		}
		// (cpAlgo first: a port's cp sits in a line no packet otherwise touches)
		if s.cpAlgo >= 0 && ep.cp != nil {
			if fb, send := ep.cp.OnEnqueue(ep.cpEnv, ep.bytes+size, size); send {
				s.sendQCN(u, pk.flow, fb, egress)
			}
		}
	}
	ep.enqueue(pk.class, id)
	s.queueAdd(ep, pk.class, size)
	if data && s.cfg.Switch.PFC {
		s.checkPause(n, in, pk.class)
	}
	s.transmit(egress)
}

// dequeue takes the head packet of a class at port pid, doing what a switch
// does as a packet leaves: release its buffer, mark ECN (RED on the bytes of
// the packet's own class queue, after removal), resume the upstream's class
// if its ingress has drained, and push the INT record.
func (s *Sim) dequeue(p *portState, pid int32, class uint8) int32 {
	id := s.release(p, class)
	pk := s.pk.at(id)
	if p.host {
		return id
	}
	if class != classHigh && class != classCredit {
		if pk.kind == pktData {
			p.dataPkts++
		}
		if p.ecn && pk.kind == pktData && s.shouldMark(p, class) {
			pk.ecn = true
			p.marks++
			p.marksTick++
		}
	}
	if s.intOn && pk.kind == pktData && int(pk.nhop) < cc.MaxHops {
		h := &pk.hops[pk.nhop]
		h.Qlen = p.bytes
		h.TxBytes = p.txBytes
		h.TS = s.now
		h.Rate = p.rate
		h.Flows = 0
		if s.flowCount {
			// the departing packet refreshes its flow: a flow whose packets
			// are still queued is never forgotten, however long they waited
			s.fc.touch(pid, pk.flow, s.now)
			h.Flows = s.fc.ports[pid].n
		}
		h.Port = pid
		pk.nhop++
		// the packet's flow (another line) only when an algorithm grows
		// its packets at every hop
		if s.intGrows {
			if grow := s.algos[s.flows[pk.flow].algo].intPerHop; grow > 0 {
				pk.size += grow
				s.cnt.created[pktData] += int64(grow)
			}
		}
	}
	return id
}

// enqueue puts packet id at the tail of queue q[class].
func (p *portState) enqueue(class uint8, id int32) {
	p.q[class].push(id)
	p.queued |= 1 << class
}

// release takes the head packet of a class off port p's queue and frees its
// buffer (resuming the upstream if its ingress has drained).
func (s *Sim) release(p *portState, class uint8) int32 {
	id := p.q[class].pop()
	if p.q[class].n == 0 {
		p.queued &^= 1 << class
	}
	pk := s.pk.at(id)
	size := int64(pk.size)
	s.queueRemove(p, class, size)
	if !p.host && class != classHigh && class != classCredit {
		n := &s.nodes[p.node]
		n.mmu.used -= size
		if s.cfg.Switch.PFC {
			s.ingressRemove(n, pk.ingress, class, size)
			s.checkResume(n, pk.ingress, class)
		}
	}
	return id
}

// shouldMark is HPCC's ShouldSendCN: mark above kmax; between kmin and kmax
// with probability pmax·(q−kmin)/(kmax−kmin), q being the bytes of the
// packet's own class queue (ECN per egress queue).
func (s *Sim) shouldMark(p *portState, class uint8) bool {
	q := p.qBytes[class]
	if q > p.kmax {
		return true
	}
	if q > p.kmin {
		prob := p.pmax * float64(q-p.kmin) / float64(p.kmax-p.kmin)
		return uniform(&p.rng) < prob
	}
	return false
}

func (s *Sim) queueAdd(p *portState, class uint8, size int64) {
	p.hist.advance(p.bytes, s.now)
	if s.qmonOn && !p.host {
		s.qmonAdvance(p)
	}
	p.qBytes[class] += size
	p.bytes += size
	if p.bytes > p.qmax {
		p.qmax = p.bytes
	}
}

func (s *Sim) queueRemove(p *portState, class uint8, size int64) {
	p.hist.advance(p.bytes, s.now)
	if s.qmonOn && !p.host {
		s.qmonAdvance(p)
	}
	p.qBytes[class] -= size
	p.bytes -= size
	if p.qBytes[class] < 0 {
		s.violate("negative queue at a port of %s", s.nodes[p.node].name)
	}
}

// --- shared buffer and PFC, after HPCC's SwitchMmu ---

func (s *Sim) pfcThreshold(n *mmu, p *portState) int64 {
	t := n.buffer - n.totalHdrm - n.totalRsrv - n.sharedUsed
	if t < 0 {
		return 0
	}
	return t >> p.shift
}

// sharedUsed is the shared-buffer bytes of ingress port p's data class c
// (HPCC's GetSharedUsed(port, qIndex)): what it holds beyond its reserve.
func (s *Sim) sharedUsed(p *portState, c uint8) int64 {
	if r := s.cfg.Switch.Reserve; p.in[c].bytes > r {
		return p.in[c].bytes - r
	}
	return 0
}

// admit is CheckIngressAdmission for ingress port in and data class c: drop
// only when the class's headroom is full and its shared buffer is over the
// port's threshold.
func (s *Sim) admit(n *nodeState, in int32, c uint8, size int64) bool {
	p := &s.ports[in]
	return !(size+p.in[c].hdrm > p.headroom && size+s.sharedUsed(p, c) > s.pfcThreshold(&n.mmu, p))
}

func (s *Sim) ingressAdd(n *nodeState, in int32, c uint8, size int64) {
	p := &s.ports[in]
	reserve := s.cfg.Switch.Reserve
	nb := p.in[c].bytes + size
	if nb <= reserve {
		p.in[c].bytes = nb
		return
	}
	if nb-reserve > s.pfcThreshold(&n.mmu, p) {
		p.in[c].hdrm += size
		return
	}
	p.in[c].bytes = nb
	n.mmu.sharedUsed += min(size, nb-reserve)
}

func (s *Sim) ingressRemove(n *nodeState, in int32, c uint8, size int64) {
	p := &s.ports[in]
	reserve := s.cfg.Switch.Reserve
	fromHdrm := min(p.in[c].hdrm, size)
	over := int64(0)
	if p.in[c].bytes > reserve {
		over = p.in[c].bytes - reserve
	}
	fromShared := min(size-fromHdrm, over)
	p.in[c].hdrm -= fromHdrm
	p.in[c].bytes -= size - fromHdrm
	n.mmu.sharedUsed -= fromShared
	if p.in[c].bytes < 0 || p.in[c].hdrm < 0 || n.mmu.sharedUsed < 0 {
		s.violate("negative buffer accounting at switch %s", n.name)
	}
}

func (s *Sim) checkPause(n *nodeState, in int32, c uint8) {
	p := &s.ports[in]
	bit := uint16(1) << c
	if p.pfcSent&bit != 0 {
		return
	}
	if p.in[c].hdrm > 0 || s.sharedUsed(p, c) >= s.pfcThreshold(&n.mmu, p) {
		p.pfcSent |= bit
		s.sendPFC(in, c, true)
	}
}

func (s *Sim) checkResume(n *nodeState, in int32, c uint8) {
	p := &s.ports[in]
	bit := uint16(1) << c
	if p.pfcSent&bit == 0 {
		return
	}
	su := s.sharedUsed(p, c)
	if p.in[c].hdrm == 0 && (su == 0 || su+s.cfg.Switch.ResumeOffset <= s.pfcThreshold(&n.mmu, p)) {
		p.pfcSent &^= bit
		s.sendPFC(in, c, false)
	}
}

// sendPFC sends a PAUSE or RESUME for data class c out of port pid (towards
// the upstream node): like an 802.1Qbb frame it names the one class it
// stops. Like HPCC's SendPfc it goes into the high-priority queue and so
// waits at most for the packet being transmitted.
func (s *Sim) sendPFC(pid int32, c uint8, pause bool) {
	p := &s.ports[pid]
	if !p.up {
		return
	}
	id, pk := s.pk.get()
	pk.kind = pktPFC
	pk.class = classHigh
	pk.size = pfcFrameBytes
	pk.pause = pause
	pk.pclass = c
	pk.ingress = -1
	pk.flow = -1
	s.cnt.created[pktPFC] += pfcFrameBytes
	if pause {
		p.pausesSent++
	}
	p.enqueue(classHigh, id)
	s.queueAdd(p, classHigh, pfcFrameBytes)
	s.transmit(pid)
}

// receivePFC applies a PAUSE or RESUME that crossed the link of port pin to
// the receiving node's egress port on that link (pin^1), for the one data
// class the frame names. The port's pause time counts while any class is
// paused.
func (s *Sim) receivePFC(id int32, pk *packet, pin int32) {
	pause := pk.pause
	bit := uint16(1) << pk.pclass
	s.consume(id, pk)
	tid := pin ^ 1
	t := &s.ports[tid]
	if s.pfcRec {
		s.pfcLog = append(s.pfcLog, PFCEvent{At: s.now, Port: tid, Pause: pause})
	}
	if pause {
		if t.paused == 0 {
			t.pausedSince = s.now
		}
		t.paused |= bit
		return
	}
	if t.paused&bit != 0 {
		t.paused &^= bit
		if t.paused == 0 {
			t.pausedTotal += s.now - t.pausedSince
		}
		s.transmit(tid)
	}
}

// sendQCN sends a congestion point's feedback from switch u to the source of
// flow fid, in the high-priority class.
func (s *Sim) sendQCN(u int32, fid int32, fb int, cpPort int32) {
	f := &s.flows[fid]
	id, pk := s.pk.get()
	pk.kind = pktQCN
	pk.class = classHigh
	pk.size = qcnFrameBytes
	pk.flow = fid
	pk.dst = f.src
	pk.hash = f.hashAck
	pk.fb = int32(fb)
	pk.seq = int64(cpPort)
	pk.ingress = -1
	s.cnt.created[pktQCN] += qcnFrameBytes
	egress := s.rt.next(s, u, pk.dst, pk.hash)
	if egress < 0 {
		s.drop(id, -1)
		return
	}
	p := &s.ports[egress]
	p.enqueue(classHigh, id)
	s.queueAdd(p, classHigh, qcnFrameBytes)
	s.transmit(egress)
}

// cpEnv is a congestion point's view of the engine.
type cpEnv struct {
	s *Sim
	p int32
}

func (e *cpEnv) Now() Time     { return e.s.now }
func (e *cpEnv) Rand() float64 { return uniform(&e.s.ports[e.p].rng) }
