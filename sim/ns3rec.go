package sim

// Recorders of what HPCC's ns-3 simulator writes besides FCTs (its
// pfc.txt and queue-length histograms), for exporting a run in its
// formats. Both are off unless asked for before the run starts; when off
// they cost one predictable branch where the engine changes a queue or
// receives a PFC frame, and allocate nothing.

// PFCEvent is one PFC frame received by a node (HPCC's QbbPfc trace): the
// egress port Port (of the receiving node, on the frame's link) is paused
// or resumed.
type PFCEvent struct {
	At    Time
	Port  int32
	Pause bool
}

// RecordPFC makes the run keep every PFC frame received (PFCEvents). Call
// it before the run starts.
func (s *Sim) RecordPFC() { s.pfcRec = true }

// PFCEvents returns the PFC frames received so far, in time order.
func (s *Sim) PFCEvents() []PFCEvent { return s.pfcLog }

// RecordQueueSamples makes the run count, for every switch egress port,
// the samples of its queue length taken every step from time 0 on, in
// buckets of bucket bytes (HPCC's monitor_buffer: 100 ns and 1 KB). The
// counts are exact: a sample at time t sees the queue after every change at
// t. PFC frames in the high-priority queue are not counted, as HPCC's
// egress_bytes counts only the data queues. Call it before the run starts.
func (s *Sim) RecordQueueSamples(step Time, bucket int64) {
	if step <= 0 || bucket <= 0 {
		return
	}
	s.qmonOn = true
	s.qmonStep = step
	s.qmonBucket = bucket
}

// QueueSamples returns, for each port id, the sample counts per bucket
// (nil for host ports), counting the samples at times 0, step, … up to
// Now() included. Call it when the run has ended.
func (s *Sim) QueueSamples() [][]int64 {
	if !s.qmonOn {
		return nil
	}
	out := make([][]int64, len(s.ports))
	for pid := range s.ports {
		p := &s.ports[pid]
		if p.host {
			continue
		}
		s.qmonAdvanceTo(p, s.now+1)
		out[pid] = p.qmonCount
	}
	return out
}

// qmonAdvance counts the samples since the port's last change at its
// current length; called before every change of a switch port's queue.
func (s *Sim) qmonAdvance(p *portState) {
	if s.now > p.qmonNext {
		s.qmonAdvanceTo(p, s.now)
	}
}

// qmonAdvanceTo counts the samples before now (at p.qmonNext, then every
// step) at the port's current length.
func (s *Sim) qmonAdvanceTo(p *portState, now Time) {
	if now <= p.qmonNext {
		return
	}
	n := (now - p.qmonNext + s.qmonStep - 1) / s.qmonStep
	p.qmonNext += n * s.qmonStep
	b := int((p.bytes - p.qBytes[classHigh]) / s.qmonBucket)
	if b >= len(p.qmonCount) {
		c := make([]int64, b+1, max(b+1, 2*len(p.qmonCount)))
		copy(c, p.qmonCount)
		p.qmonCount = c
	}
	p.qmonCount[b] += int64(n)
}
