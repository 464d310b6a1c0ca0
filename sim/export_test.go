package sim

import "fmt"

// Test hooks: the benchmarks in package sim_test measure the bare event
// queue against the engine in the same run.

// BareQueue is the engine's event queue, for benchmarks.
type BareQueue struct{ q calQueue }

// NewBareQueue returns a queue sized like the engine's for a 100 Gbps /
// 1 µs fabric.
func NewBareQueue() *BareQueue {
	b := &BareQueue{}
	b.q.init(1024, 2200*Nanosecond)
	return b
}

// Push schedules an event.
func (b *BareQueue) Push(at Time, obj int32) { b.q.push(at, evKick, obj, 0) }

// Pop removes the earliest event and returns its time.
func (b *BareQueue) Pop() Time { return b.q.pop().at }

// Len is the number of pending events.
func (b *BareQueue) Len() int { return b.q.len() }

// MeanQueueLen is the average number of pending events seen at each pop.
func (s *Sim) MeanQueueLen() float64 {
	if s.events == 0 {
		return 0
	}
	return float64(s.qLenSum) / float64(s.events)
}

// DisableRouteCache makes every hop read the routing table (the engine
// before flowRoute), for tests that compare the two.
func (s *Sim) DisableRouteCache() { s.noRouteCache = true }

// SetPrefetch turns the engine's prefetching on or off whatever the size.
func (s *Sim) SetPrefetch(on bool) { s.prefetch = on }

// Prefetching reports whether the engine prefetches.
func (s *Sim) Prefetching() bool { return s.prefetch }

// Prefetches counts the prefetches the engine has issued.
func (s *Sim) Prefetches() uint64 { return s.prefetches }

// PlanLanes is the lane of every node (by name) and the lookahead of a
// split into n lanes, or nil when the run cannot be split.
func (s *Sim) PlanLanes(n int) (map[string]int, Time) {
	nodeLane, look, why := s.parallelPlan(n)
	if why != "" {
		return nil, 0
	}
	m := map[string]int{}
	for u, l := range nodeLane {
		m[s.nodes[u].name] = int(l)
	}
	return m, look
}

// Loads is the work the lanes' partition expects at each node (by name).
func (s *Sim) Loads() map[string]float64 {
	m := map[string]float64{}
	for u, w := range s.loads() {
		m[s.nodes[u].name] = w
	}
	return m
}

// RecomputeInParts builds the routing table and the maximum base RTT and
// BDP again, in parts on as many goroutines (as a large network's set-up
// does).
func (s *Sim) RecomputeInParts(parts int) {
	s.rt.computeIn(s, parts)
	s.maxRTT, s.maxBDP = 0, 0
	s.computeBaseRTTsIn(parts)
}

// RoutingDiff compares the routing table with the literal computation it
// replaces (a breadth-first search from every host over the ports that
// are up, then every node's next hops towards every host), and says where
// they first differ ("" when they agree).
func (s *Sim) RoutingDiff() string {
	nNodes, nHosts := len(s.nodes), len(s.hosts)
	dist := make([]int32, nHosts*nNodes)
	for hi, h := range s.hosts {
		d := dist[hi*nNodes : (hi+1)*nNodes]
		for i := range d {
			d[i] = -1
		}
		d[h] = 0
		queue := []int32{h}
		for qi := 0; qi < len(queue); qi++ {
			u := queue[qi]
			for _, pid := range s.nodes[u].ports {
				p := &s.ports[pid]
				if !p.up || d[p.peer] >= 0 {
					continue
				}
				d[p.peer] = d[u] + 1
				if s.nodes[p.peer].kind == Switch {
					queue = append(queue, p.peer)
				}
			}
		}
	}
	var off, ports []int32
	for u := 0; u < nNodes; u++ {
		for hi := 0; hi < nHosts; hi++ {
			off = append(off, int32(len(ports)))
			du := dist[hi*nNodes+u]
			if du <= 0 {
				continue
			}
			for _, pid := range s.nodes[u].ports {
				p := &s.ports[pid]
				if !p.up {
					continue
				}
				if dist[hi*nNodes+int(p.peer)] == du-1 && (s.nodes[p.peer].kind == Switch || p.peer == s.hosts[hi]) {
					ports = append(ports, pid)
				}
			}
		}
	}
	off = append(off, int32(len(ports)))
	for _, c := range []struct {
		name      string
		got, want []int32
	}{{"dist", s.rt.dist, dist}, {"off", s.rt.off, off}, {"ports", s.rt.ports, ports}} {
		if len(c.got) != len(c.want) {
			return fmt.Sprintf("%s: %d entries, want %d", c.name, len(c.got), len(c.want))
		}
		for i := range c.got {
			if c.got[i] != c.want[i] {
				return fmt.Sprintf("%s[%d] = %d, want %d", c.name, i, c.got[i], c.want[i])
			}
		}
	}
	return ""
}

// LiteralBaseRTTs is the maximum base RTT and BDP over all host pairs,
// each pair's path walked on its own (pathTo), as computeBaseRTTs gives
// them.
func (s *Sim) LiteralBaseRTTs() (Time, int64) {
	var rtt Time
	var bdp int64
	for _, a := range s.hosts {
		for _, b := range s.hosts {
			if a == b {
				continue
			}
			pi, ok := s.pathTo(a, b)
			if !ok {
				continue
			}
			r := 2*pi.delay + pi.tx
			rtt = max(rtt, r)
			bdp = max(bdp, mulDiv(int64(r), pi.bw, 8*int64(Second)))
		}
	}
	return rtt, bdp
}

// PushesINT reports whether the switches push INT records in this run.
func (s *Sim) PushesINT() bool { return s.intOn }
