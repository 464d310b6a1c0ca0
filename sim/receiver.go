package sim

import "cclab/cc"

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
