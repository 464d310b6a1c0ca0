package sim

// flowCounter counts the active flows of every switch egress port as the MPCC
// thesis (Appendix A.1) describes: a flow becomes active when one of its
// packets enters the port's queue, stays active while packets keep coming,
// and stops counting when none has come for the idle timeout. One addition:
// a packet leaving the queue refreshes its flow too, so that a flow whose
// packets wait in a long queue is not forgotten while they wait (with only
// arrivals counted, a standing queue longer than the timeout would hide the
// very flows that build it). Instead of one
// timer per flow, each port keeps its flows in least-recently-seen order and
// expires the stale ones lazily whenever it is touched or read, which gives
// the same count with no events.
type flowCounter struct {
	timeout Time
	index   map[uint64]int32 // (port, flow) -> entry
	entries []fcEntry
	free    int32
	ports   []fcList
}

type fcEntry struct {
	last       Time
	prev, next int32
	flow       int32
	port       int32
}

type fcList struct {
	head, tail int32
	n          int32
}

func (c *flowCounter) init(nPorts int, timeout Time) {
	c.timeout = timeout
	c.index = map[uint64]int32{}
	c.free = -1
	c.ports = make([]fcList, nPorts)
	for i := range c.ports {
		c.ports[i] = fcList{head: -1, tail: -1}
	}
}

func fcKey(port, flow int32) uint64 { return uint64(uint32(port))<<32 | uint64(uint32(flow)) }

func (c *flowCounter) unlink(l *fcList, i int32) {
	e := &c.entries[i]
	if e.prev >= 0 {
		c.entries[e.prev].next = e.next
	} else {
		l.head = e.next
	}
	if e.next >= 0 {
		c.entries[e.next].prev = e.prev
	} else {
		l.tail = e.prev
	}
}

func (c *flowCounter) append(l *fcList, i int32) {
	e := &c.entries[i]
	e.prev, e.next = l.tail, -1
	if l.tail >= 0 {
		c.entries[l.tail].next = i
	} else {
		l.head = i
	}
	l.tail = i
}

// expire drops the flows of a port that have been idle for the timeout.
func (c *flowCounter) expire(port int32, now Time) {
	l := &c.ports[port]
	for l.head >= 0 {
		i := l.head
		e := &c.entries[i]
		if now-e.last < c.timeout {
			return
		}
		c.unlink(l, i)
		l.n--
		delete(c.index, fcKey(e.port, e.flow))
		e.next = c.free
		c.free = i
	}
}

// touch records a packet of flow entering port's queue.
func (c *flowCounter) touch(port, flow int32, now Time) {
	c.expire(port, now)
	l := &c.ports[port]
	key := fcKey(port, flow)
	if i, ok := c.index[key]; ok {
		c.entries[i].last = now
		if l.tail != i {
			c.unlink(l, i)
			c.append(l, i)
		}
		return
	}
	var i int32
	if c.free >= 0 {
		i = c.free
		c.free = c.entries[i].next
	} else {
		i = int32(len(c.entries))
		c.entries = append(c.entries, fcEntry{})
	}
	c.entries[i] = fcEntry{last: now, flow: flow, port: port}
	c.append(l, i)
	l.n++
	c.index[key] = i
}
