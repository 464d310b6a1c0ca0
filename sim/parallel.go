package sim

import (
	"cmp"
	"math"
	"runtime"
	"slices"
	"sync/atomic"
)

// A parallel run splits the network into lanes (logical processes, after
// conservative parallel discrete-event simulation): each lane is a group of
// pods (hosts, their ToRs and aggregation switches, and a share of the core
// switches) with its own event queue, packet pool and counters, run by its
// own goroutine. The lanes advance together in windows: every lane runs its
// events up to the window's end, then they meet. A window is never longer
// than the shortest delay of a link between lanes (the lookahead), so a
// packet sent across during a window arrives after it: the sending lane
// copies it into a hand-over buffer (handOff) and the receiving lane puts
// it on the link's wire at the start of the next window (takeIn).
//
// Each piece of state has one owner. A port belongs to its node's lane,
// except that a port whose link crosses to another lane has its wire (and
// wireBytes) kept by the peer's lane. A flow's sender fields belong to its
// source's lane and its receiver fields to its destination's. Every flow's
// path is cached before the lanes start, so that they only read the route
// cache. Counters are per lane and summed when the lanes stop
// (mergeLanes). The coordinator (the Sim the caller holds) keeps the
// telemetry samples and the half-run snapshot, which run at meetings, when
// no lane is running; the flows the lanes started join the sampled ones
// there (gatherStarts).
//
// Events are ordered by what they are (eventKey), not by when they were
// scheduled, so each lane runs its events in exactly the order the
// sequential engine runs them, and a parallel run gives the same bytes.
// Two things need care to keep it so. Samples come last at their instant,
// so a window ends just after a sample's time and the sample runs at the
// meeting. And a run that ends with its last flow must not run past that
// flow's last ACK: a flow can only finish when an ACK reaches its sender,
// and in such a run no window is longer than a link into a host either,
// so every ACK that can arrive within a window is already on the link into
// its sender when the window starts; the lanes note each last ACK as it
// goes onto that link (watchFinal) and the coordinator ends the window at
// the arrival that finishes the last flow (lastFinish).
//
// Runs whose state is not split this way go in one lane (parallelPlan
// says why): scripted events, receiver-side algorithms, algorithms other
// than none, DCQCN, HPCC and DCTCP (event series, wall-clock timings,
// FlowInfo.Incoming, which a lane counts over its own flows only, and
// per-host connections are not split), flow groups, the flow counter,
// credits, congestion points and the ns-3 recorders.

// parallel is the shared state of a parallel run.
type parallel struct {
	lanes    []*Sim
	nodeLane []int32
	look     Time
	// out[parity][from*P+to]: packets handed over in the current window
	// (parity) and the previous one, which the receiving lane takes in at
	// the start of its next window
	out    [2][][]handoff
	outMin [2][]Time
	parity int
	base   laneCounters // the coordinator's own counters when lanes began
	// scratch for lastFinish
	firstFinal map[int32]finalAck
	// the worker goroutines (lanes 1, 2, ...): the window to run, and the
	// signals that start them (the window's number; -slice: stop at the end
	// of the slice-th RunUntil) and that they are done (the number of the
	// window they ran, or the stop they obey)
	window int64
	slices int64
	winT   atomic.Int64
	winK   atomic.Uint64
	start  []signal
	done   []signal
}

// signal hands a number from one goroutine to another that waits for it.
// A window lasts microseconds, so the waiting side spins first; then it
// yields, and then it sleeps until woken, so that a lane kept waiting (by
// another lane descheduled on a busy machine, or by a long meeting) gives
// its core up instead of spinning the machine's time away.
type signal struct {
	v        atomic.Int64
	sleeping atomic.Bool
	wake     chan struct{} // capacity 1
}

func newSignal() signal { return signal{wake: make(chan struct{}, 1)} }

func (g *signal) set(v int64) {
	g.v.Store(v)
	if g.sleeping.Load() {
		select {
		case g.wake <- struct{}{}:
		default:
		}
	}
}

// wait returns the value once it differs from old.
func (g *signal) wait(old int64) int64 {
	for i := 0; ; i++ {
		if v := g.v.Load(); v != old {
			return v
		}
		switch {
		case i < spinWait:
		case i < spinWait+yieldWait:
			runtime.Gosched()
		default:
			g.sleeping.Store(true)
			if v := g.v.Load(); v != old { // set before it saw sleeping
				g.sleeping.Store(false)
				return v
			}
			<-g.wake
			g.sleeping.Store(false)
		}
	}
}

// How long a lane spins, then yields, before it sleeps, in loop turns: a
// thousand turns of about 1 ns, then up to 32768 yields to the Go
// scheduler (milliseconds), then a sleep. A meeting with a telemetry sample
// takes several microseconds, which a sleep (tens of microseconds to wake)
// would lengthen severalfold: sleeping after about 10 µs of spinning made
// the 16-host replay take 0.72 s instead of 0.44 s, its lanes sleeping at
// every sample. And spinning for 130 µs without yielding took 0.60 s
// against 0.45 s for this, perhaps because the two cores of this machine
// class share a physical core.
const (
	spinWait  = 1000
	yieldWait = 1 << 15
)

type handoff struct {
	pid int32
	at  Time
	pk  packet
}

type laneCounters struct {
	events, qLenSum, prefetches uint64
	started, finished, pending  int
	cnt                         counters
}

const noTime = Time(1<<63 - 1)

// parallelPlan splits the run into lanes, or says why it cannot: the
// state of some features is not split between lanes (their run goes in
// one lane), and lanes need links between them at least 100 ns long (and,
// in a run until its last flow, links into hosts too). The lookahead is
// the shortest of those links.
func (s *Sim) parallelPlan(lanes int) (nodeLane []int32, look Time, why string) {
	cfg := &s.cfg
	switch {
	case lanes < 2:
		return nil, 0, "one lane asked for"
	case len(cfg.Events) > 0:
		return nil, 0, "scripted events"
	case s.hasRx:
		return nil, 0, "a receiver-side algorithm"
	case s.flowCount:
		return nil, 0, "the switches' flow counter"
	case s.credit != nil:
		return nil, 0, "credit queues"
	case s.cpAlgo >= 0:
		return nil, 0, "congestion points in the switches"
	case s.qmonOn || s.pfcRec:
		return nil, 0, "ns-3 recorders"
	case s.noRouteCache:
		return nil, 0, "no route cache"
	}
	for i := range s.algos {
		a := &s.algos[i]
		switch a.spec.Algo.Name {
		case "none", "dcqcn", "hpcc", "dctcp":
		default:
			// the others' event series, wall clock or per-host
			// connections are not split between lanes
			return nil, 0, "algorithm " + a.spec.Algo.Name
		}
		if a.conns != nil {
			return nil, 0, "per-host connections"
		}
	}
	for i := range cfg.Flows {
		if cfg.Flows[i].Group >= 0 || cfg.Flows[i].After >= 0 {
			return nil, 0, "flow groups"
		}
	}
	nodeLane, why = s.partition(lanes)
	if why != "" {
		return nil, 0, why
	}
	look = noTime
	for i := range s.ports {
		p := &s.ports[i]
		if nodeLane[p.node] != nodeLane[p.peer] && p.delay < look {
			look = p.delay
		}
	}
	if look < minLookahead {
		return nil, 0, "links between lanes shorter than 100 ns"
	}
	if cfg.Duration == 0 {
		// a run that ends with its last flow sees that flow's last ACK on
		// the link into its sender before the window in which it arrives
		// (lastFinish): no window may be longer than such a link
		for i := range s.ports {
			if p := &s.ports[i]; s.nodes[p.peer].kind == Host && p.delay < look {
				look = p.delay
			}
		}
		if look < minLookahead {
			return nil, 0, "links into hosts shorter than 100 ns (in a run until its last flow)"
		}
	}
	return nodeLane, look, ""
}

// minLookahead is the shortest window worth meeting for.
const minLookahead = 100 * Nanosecond

// partition splits the nodes into lanes by pods: hosts in order, each ToR
// (a switch next to hosts) with its hosts; every other switch goes with
// the majority of its neighbours one tier below, except the top tier
// (switches with no neighbour above), which is dealt out by the work the
// flows will give each switch (loads), to even the lanes' work. It
// says why not when a lane would be empty or a node is cut off from every
// host.
func (s *Sim) partition(lanes int) ([]int32, string) {
	n := len(s.nodes)
	level := make([]int, n)
	for i := range level {
		level[i] = -1
	}
	var queue []int32
	for _, h := range s.hosts {
		level[h] = 0
		queue = append(queue, h)
	}
	for qi := 0; qi < len(queue); qi++ {
		u := queue[qi]
		for _, pid := range s.nodes[u].ports {
			if v := s.ports[pid].peer; level[v] < 0 {
				level[v] = level[u] + 1
				queue = append(queue, v)
			}
		}
	}
	lane := make([]int32, n)
	for i := range lane {
		lane[i] = -1
	}
	nh := len(s.hosts)
	for hi, h := range s.hosts {
		if lane[h] >= 0 {
			continue
		}
		l := int32(hi * lanes / nh)
		lane[h] = l
		// the host's ToRs, and their hosts
		for _, pid := range s.nodes[h].ports {
			t := s.ports[pid].peer
			if s.nodes[t].kind != Switch || lane[t] >= 0 {
				continue
			}
			lane[t] = l
			for _, tp := range s.nodes[t].ports {
				if v := s.ports[tp].peer; s.nodes[v].kind == Host && lane[v] < 0 {
					lane[v] = l
				}
			}
		}
	}
	var tops []int32 // the top tier, dealt out below
	for lv := 1; ; lv++ {
		any := false
		for _, u := range queue {
			if level[u] != lv || lane[u] >= 0 {
				continue
			}
			any = true
			count := make([]int, lanes)
			above := false
			for _, pid := range s.nodes[u].ports {
				v := s.ports[pid].peer
				if level[v] < lv && lane[v] >= 0 {
					count[lane[v]]++
				}
				if level[v] > lv {
					above = true
				}
			}
			if !above {
				tops = append(tops, u)
				continue
			}
			best := 0
			for l := range count {
				if count[l] > count[best] {
					best = l
				}
			}
			lane[u] = int32(best)
		}
		if !any && lv > len(queue) {
			break
		}
		if lv > n {
			break
		}
	}
	// the top tier carries only traffic between the groups below, and any
	// of its switches can go with any lane without a packet crossing more
	// often: deal them out by the work they will take, the heaviest first,
	// each to the lane with the least work so far
	w := s.loads()
	load := make([]float64, lanes)
	for u, l := range lane {
		if l >= 0 {
			load[l] += w[u]
		}
	}
	slices.SortStableFunc(tops, func(a, b int32) int { return cmp.Compare(w[b], w[a]) })
	for _, u := range tops {
		l := 0
		for k := range load {
			if load[k] < load[l] {
				l = k
			}
		}
		lane[u] = int32(l)
		load[l] += w[u]
	}
	seen := make([]bool, lanes)
	for u := range lane {
		if lane[u] < 0 {
			return nil, "nodes no host reaches"
		}
		seen[lane[u]] = true
	}
	for _, ok := range seen {
		if !ok {
			return nil, "fewer racks than lanes"
		}
	}
	return lane, ""
}

// loads estimates each node's share of a run's work from its flows: each
// data packet is sent or received at every node on its flow's path (ECMP
// as routed now), and each ACK at every node on the way back; a flow sends
// no more than its size, nor than its line rate allows before the run's
// end. (Flows that start after others finish are counted as if all ran.)
func (s *Sim) loads() []float64 {
	w := make([]float64, len(s.nodes))
	mtu := float64(s.cfg.Host.MTU)
	for i := range s.flows {
		f := &s.flows[i]
		bytes := float64(f.size)
		if d := s.cfg.Duration; d > 0 {
			start := s.cfg.Flows[i].Start
			bytes = min(bytes, max(0, float64(d-start)/float64(Second)*float64(f.lineRate)/8))
		}
		data := math.Ceil(bytes / mtu)
		fr := &s.routes[i]
		if fr.epoch != s.rt.epoch {
			s.routeFlow(int32(i), fr)
		}
		for d, n := range [2]float64{data, data / float64(s.cfg.Host.AckEvery)} {
			if fr.nic[d] < 0 {
				continue
			}
			w[s.ports[fr.nic[d]].node] += n
			last := fr.nic[d]
			for _, e := range fr.port[d][:fr.n[d]] {
				w[s.ports[e].node] += n
				last = e
			}
			w[s.ports[last].peer] += n
		}
	}
	return w
}

// startParallel makes the lanes: shallow copies of s that share its
// topology, ports and flows, each with its own queue, pool and counters.
// The flows' start events move to their source's lane; telemetry and the
// half-run snapshot stay with s, which coordinates.
func (s *Sim) startParallel(nodeLane []int32, look Time) {
	P := 0
	for _, l := range nodeLane {
		P = max(P, int(l)+1)
	}
	par := &parallel{nodeLane: nodeLane, look: look}
	for k := range par.out {
		par.out[k] = make([][]handoff, P*P)
		par.outMin[k] = make([]Time, P*P)
		for i := range par.outMin[k] {
			par.outMin[k][i] = noTime
		}
	}
	par.start = make([]signal, P)
	par.done = make([]signal, P)
	for l := range P {
		par.start[l], par.done[l] = newSignal(), newSignal()
	}
	par.firstFinal = map[int32]finalAck{}
	// every flow's paths are cached now: lanes only read them
	for i := range s.routes {
		if s.routes[i].epoch != s.rt.epoch {
			s.routeFlow(int32(i), &s.routes[i])
		}
	}
	for i := range s.ports {
		p := &s.ports[i]
		p.cut = nodeLane[p.node] != nodeLane[p.peer]
		p.watch = s.cfg.Duration == 0 && s.nodes[p.peer].kind == Host
	}
	par.base = s.laneCounters()
	for l := 0; l < P; l++ {
		ls := new(Sim)
		*ls = *s
		ls.lane = int32(l)
		ls.par = par
		ls.q = calQueue{}
		ls.initQueue()
		ls.pk = newPool()
		ls.events, ls.qLenSum, ls.prefetches = 0, 0, 0
		ls.started, ls.finished, ls.pending = 0, 0, 0
		ls.cnt = counters{}
		ls.incoming = make([]int32, len(s.incoming))
		ls.laneStarts = nil
		ls.finals = nil
		par.lanes = append(par.lanes, ls)
	}
	// move the lane events (flow starts) out of the coordinator's queue
	var keep []event
	for s.q.len() > 0 {
		e := s.q.pop()
		if e.kind() == evFlowStart {
			l := par.lanes[nodeLane[s.flows[e.obj()].src]]
			l.q.push(e.at, e.kind(), e.obj(), e.arg())
			continue
		}
		keep = append(keep, e)
	}
	s.q = calQueue{}
	s.initQueue()
	for _, e := range keep {
		s.q.push(e.at, e.kind(), e.obj(), e.arg())
	}
	s.par = par
	s.lane = -1
}

func (s *Sim) laneCounters() laneCounters {
	return laneCounters{s.events, s.qLenSum, s.prefetches, s.started, s.finished, s.pending, s.cnt}
}

// mergeLanes sets the coordinator's counters to the run's totals.
func (s *Sim) mergeLanes() {
	par := s.par
	b := par.base
	for _, l := range par.lanes {
		b.events += l.events
		b.qLenSum += l.qLenSum
		b.prefetches += l.prefetches
		b.started += l.started
		b.finished += l.finished
		b.pending += l.pending
		for k := range b.cnt.created {
			b.cnt.created[k] += l.cnt.created[k]
			b.cnt.consumed[k] += l.cnt.consumed[k]
			b.cnt.dropped[k] += l.cnt.dropped[k]
		}
		b.cnt.drops += l.cnt.drops
		b.cnt.retx += l.cnt.retx
		// the earliest violation, as one lane would have found it first
		if l.check != nil && (s.check == nil || l.checkAt < s.checkAt) {
			s.check, s.checkAt = l.check, l.checkAt
		}
	}
	s.events, s.qLenSum, s.prefetches = b.events, b.qLenSum, b.prefetches
	s.started, s.finished, s.pending = b.started, b.finished, b.pending
	s.cnt = b.cnt
}

// handOff sends packet id over port pid, a link to another lane: it leaves
// this lane's pool and reaches the other lane's wire at the next meeting.
func (s *Sim) handOff(pid int32, at Time, id int32, pk *packet) {
	par := s.par
	k := int(s.lane)*len(par.lanes) + int(par.nodeLane[s.ports[pid].peer])
	par.out[par.parity][k] = append(par.out[par.parity][k], handoff{pid: pid, at: at, pk: *pk})
	if at < par.outMin[par.parity][k] {
		par.outMin[par.parity][k] = at
	}
	s.pk.put(id)
}

// takeIn puts the packets handed to lane s in window parity k onto their
// wires.
func (s *Sim) takeIn(k int) {
	par := s.par
	P := len(par.lanes)
	for from := 0; from < P; from++ {
		i := from*P + int(s.lane)
		buf := par.out[k][i]
		for j := range buf {
			m := &buf[j]
			id, pk := s.pk.get()
			*pk = m.pk
			p := &s.ports[m.pid]
			if p.wire.n == 0 {
				s.q.push(m.at, evArrive, m.pid, p.wireGen)
			}
			p.wire.push(wireSlot{m.at, id})
			p.wireBytes += int64(pk.size)
		}
		par.out[k][i] = buf[:0]
	}
}

// runWindow runs lane s's events up to (t, k) in the queue's order, after
// taking in the packets handed over in the previous window.
func (s *Sim) runWindow(t Time, k uint64) {
	s.takeIn(s.par.parity ^ 1)
	for {
		ev, ok := s.q.popUpTo(t, k)
		if !ok {
			break
		}
		s.qLenSum += uint64(s.q.len())
		s.now = ev.at
		s.events++
		if s.prefetch {
			s.prefetchNext()
		}
		s.dispatch(&ev)
	}
}

// watchFinal notes a flow's last ACK (or NACK) as it goes onto the link
// into its sender, which it reaches at time at: a run that ends when its
// last flow finishes must know where that happens before the window in
// which it does.
func (s *Sim) watchFinal(pid int32, at Time, pk *packet) {
	if (pk.kind != pktAck && pk.kind != pktNack) || pk.flow < 0 || pk.seq < s.flows[pk.flow].size {
		return
	}
	s.finals = append(s.finals, finalAck{flow: pk.flow, at: at, key: eventKey(evArrive, pid, s.ports[pid].wireGen)})
}

type finalAck struct {
	flow int32
	at   Time
	key  uint64
}

// lastFinish reports whether every unfinished flow finishes before w (its
// last ACK is already on the link into its sender), and if so the event at
// which the last of them does.
func (s *Sim) lastFinish(w Time) (Time, uint64, bool) {
	par := s.par
	left := len(s.flows) - par.base.finished
	for _, l := range par.lanes {
		left -= l.finished
	}
	if left <= 0 {
		// every flow finished without the window being bounded at the
		// last: the lookahead was longer than a link into a host
		s.violate("lanes: the last flow finished inside a window")
		return 0, 0, false
	}
	// drop the ACKs of flows that have finished; keep each flow's first
	first := par.firstFinal
	clear(first)
	for _, l := range par.lanes {
		keep := l.finals[:0]
		for _, fa := range l.finals {
			if s.flows[fa.flow].state == flowDone {
				continue
			}
			keep = append(keep, fa)
			if g, ok := first[fa.flow]; !ok || fa.at < g.at || (fa.at == g.at && fa.key < g.key) {
				first[fa.flow] = fa
			}
		}
		l.finals = keep
	}
	if len(first) < left {
		return 0, 0, false
	}
	var t Time
	var k uint64
	for _, fa := range first {
		if fa.at >= w {
			return 0, 0, false
		}
		if fa.at > t || (fa.at == t && fa.key > k) {
			t, k = fa.at, fa.key
		}
	}
	return t, k, true
}

// runParallel is RunUntil for a run with lanes: s keeps the telemetry
// samples and the half-run snapshot, the lanes everything else.
func (s *Sim) runParallel(limit Time, final bool) {
	par := s.par
	P := len(par.lanes)
	// the other lanes' goroutines, for this slice
	for l := 1; l < P; l++ {
		go par.worker(l, par.start[l].v.Load())
	}
	par.slices++
	stop := -par.slices // tells this slice's workers to stop
	defer func() {
		for l := 1; l < P; l++ {
			par.start[l].set(stop)
			for v := par.done[l].v.Load(); v != stop; {
				v = par.done[l].wait(v)
			}
		}
		// take in what is still handed over, so that the lanes' state is
		// whole between slices
		for _, l := range par.lanes {
			l.takeIn(par.parity)
			l.takeIn(par.parity ^ 1)
		}
		for k := range par.outMin {
			for i := range par.outMin[k] {
				par.outMin[k][i] = noTime
			}
		}
		s.gatherStarts()
		s.mergeLanes()
	}()
	// the last event a slice runs: at its limit, after everything at it
	// when it is the final one, else before everything at it
	endT := limit - 1
	if final {
		endT = limit
	}
	for !s.stopped {
		// the earliest thing that can happen: a lane's event, a packet
		// handed over, or the coordinator's own event
		tl := noTime // the lanes'
		for _, l := range par.lanes {
			if at, ok := l.q.peekAt(); ok && at < tl {
				tl = at
			}
		}
		prev := par.parity ^ 1
		for _, at := range par.outMin[prev] {
			tl = min(tl, at)
		}
		t := tl
		gt, gok := s.q.peekAt()
		if gok {
			t = min(t, gt)
		}
		if t == noTime || t > endT {
			s.gatherStarts()
			s.mergeLanes()
			switch { // as RunUntil
			case t == noTime && s.cfg.Duration == 0:
				for _, l := range par.lanes {
					s.now = max(s.now, l.now) // the last event run
				}
				s.stop("idle")
			case !final:
				s.now = limit
			default:
				s.stopAtEnd()
			}
			return
		}
		if gok && gt < tl {
			// nothing in the lanes until after the coordinator's next
			// events (an idle network between samples): no window
			s.meet(gt)
			continue
		}
		// the window: up to the lookahead, the slice's end, and the
		// coordinator's next event (which comes last at its instant)
		wt, wk := min(t+par.look-1, endT), uint64(1<<64-1)
		if gok && gt < wt {
			wt = gt
		}
		last := false
		if s.cfg.Duration == 0 {
			if ft, fk, ok := s.lastFinish(wt + 1); ok {
				wt, wk, last = ft, fk, true
			}
		}
		par.winT.Store(int64(wt))
		par.winK.Store(wk)
		par.window++
		ep := par.window
		for l := 1; l < P; l++ {
			par.start[l].set(ep)
		}
		par.lanes[0].runWindow(wt, wk)
		for l := 1; l < P; l++ {
			for v := par.done[l].v.Load(); v != ep; {
				v = par.done[l].wait(v)
			}
		}
		// outMin[prev] has been taken in; the window's own hand-overs are
		// taken in at the start of the next
		for k := range par.outMin[prev] {
			par.outMin[prev][k] = noTime
		}
		par.parity ^= 1
		if last {
			// the run's last flow has just finished, at (wt, wk)
			s.gatherStarts()
			s.mergeLanes()
			s.now = wt
			s.stop("all flows finished")
			return
		}
		if gok && gt == wt {
			s.meet(gt)
		}
	}
}

// meet runs the coordinator's events at gt (samples, the half-run
// snapshot) while no lane runs.
func (s *Sim) meet(gt Time) {
	par := s.par
	for _, l := range par.lanes {
		l.now = gt
	}
	s.now = gt
	s.gatherStarts()
	s.mergeLanes()
	for {
		at, ok := s.q.peekAt()
		if !ok || at != gt {
			break
		}
		ev := s.q.pop()
		par.base.events++
		s.dispatch(&ev)
	}
	// what the samples' callbacks handed over goes out with the window
	// just run: move it to the parity taken in next
	s.flushBarrier()
}

// flushBarrier moves hand-overs made between windows (by the coordinator's
// events, in the lanes' name) to the buffers the lanes take in next.
func (s *Sim) flushBarrier() {
	par := s.par
	cur, next := par.parity, par.parity^1
	for k := range par.out[cur] {
		if len(par.out[cur][k]) == 0 {
			continue
		}
		par.out[next][k] = append(par.out[next][k], par.out[cur][k]...)
		par.out[cur][k] = par.out[cur][k][:0]
		par.outMin[next][k] = min(par.outMin[next][k], par.outMin[cur][k])
		par.outMin[cur][k] = noTime
	}
}

// worker runs lane l's windows until told to stop; seen is the start
// signal's value when it began.
func (par *parallel) worker(l int, seen int64) {
	lane := par.lanes[l]
	for {
		ep := par.start[l].wait(seen)
		if ep < 0 {
			par.done[l].set(ep)
			return
		}
		seen = ep
		lane.runWindow(Time(par.winT.Load()), par.winK.Load())
		par.done[l].set(ep)
	}
}

// livePackets counts the packets in the network: in the pool, or in a
// parallel run's lanes' pools and hand-overs.
func (s *Sim) livePackets() int {
	n := s.pk.live
	if s.par != nil {
		for _, l := range s.par.lanes {
			n += l.pk.live
		}
		for k := range s.par.out {
			for _, b := range s.par.out[k] {
				n += len(b)
			}
		}
	}
	return n
}

// gatherStarts adds the flows the lanes started to the telemetry's active
// flows (kept in id order, so the order they come in does not matter).
func (s *Sim) gatherStarts() {
	for _, l := range s.par.lanes {
		for _, id := range l.laneStarts {
			s.tel.addActive(id)
		}
		l.laneStarts = l.laneStarts[:0]
	}
}

// poolOf is the pool that holds the packets queued at node u's ports (and
// on the wires that end at u).
func (s *Sim) poolOf(u int32) *pool {
	if s.par == nil {
		return &s.pk
	}
	return &s.par.lanes[s.par.nodeLane[u]].pk
}

// SetLanes asks for the run to go in n parallel lanes (parallel.go), each
// on a goroutine of its own. It must come before the run starts, and after
// the recorders (RecordPFC, RecordQueueSamples) and DisableRouteCache are
// set. The results are the same bytes whatever the number of lanes. A run
// that cannot be split (see parallelPlan) goes in one; Lanes tells.
// Parameters cannot change live in a run with lanes (ApplyParams).
func (s *Sim) SetLanes(n int) {
	if s.par == nil && s.events == 0 && s.now == 0 {
		s.wantLanes = n
	}
}

// Lanes is the number of lanes the run goes in (1 until it has started in
// more), and, when it was asked for more and goes in one, why.
func (s *Sim) Lanes() (int, string) {
	if s.par == nil {
		return 1, s.oneLaneWhy
	}
	return len(s.par.lanes), ""
}

// SuggestLanes is the number of lanes worth running this run in on a
// machine with cores free cores: one per two ToR switches (a lane of one
// rack has too little to do between meetings), at most maxLanes and cores,
// and 1 when the run cannot be split.
func (s *Sim) SuggestLanes(cores int) int {
	tors := 0
	for u := range s.nodes {
		if s.nodes[u].kind != Switch {
			continue
		}
		for _, pid := range s.nodes[u].ports {
			if s.nodes[s.ports[pid].peer].kind == Host {
				tors++
				break
			}
		}
	}
	n := min(cores, tors/2, maxLanes)
	if n < 2 {
		return 1
	}
	if _, _, why := s.parallelPlan(n); why != "" {
		return 1
	}
	return n
}

// maxLanes bounds SuggestLanes. Only two lanes have been measured (on a
// 2-core machine); more are exact too (the tests run three and four) but
// their speed is untested.
const maxLanes = 8
