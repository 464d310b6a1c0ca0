package sim

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
