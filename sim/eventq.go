package sim

// event is one pending action. Events are ordered by (at, key), where key
// (eventKey) is made of what the event is, not of when it was scheduled:
// two events at the same picosecond run in the order of their kinds (see
// evKind), then of their objects (port, flow, ...), then of their arguments.
// The order of a run therefore depends only on its events, never on the
// order in which they were scheduled, which makes every run deterministic
// and lets events be scheduled from several places (e.g. partitions of the
// network simulated apart) without changing it.
//
// Two pending events never share a key unless at most one of them still
// counts: an object has at most one live event of each kind at a time (a
// port's wire head, its kick, a flow's timer slot, ...), and the others
// carry an older generation in arg, which makes them no-ops.
type event struct {
	at  Time
	key uint64 // eventKey(kind, obj, arg)
}

// maxEventObj bounds the objects (ports, flows, receivers, scripted events)
// a run may have: an event's key holds its object in 28 bits.
const maxEventObj = 1 << 28

// eventKey orders events of the same time: kind in the top 4 bits, object
// in the next 28, argument in the low 32.
func eventKey(k evKind, obj int32, arg uint32) uint64 {
	return uint64(k)<<60 | uint64(uint32(obj)&(maxEventObj-1))<<32 | uint64(arg)
}

func (e *event) kind() evKind { return evKind(e.key >> 60) }

// obj is the event's port, flow or index, by kind.
func (e *event) obj() int32 { return int32(e.key>>32) & (maxEventObj - 1) }

// arg is the event's generation or slot, by kind.
func (e *event) arg() uint32 { return uint32(e.key) }

func (e *event) less(f *event) bool {
	return e.at < f.at || (e.at == f.at && e.key < f.key)
}

// after reports whether e comes after (t, k) in the queue's order.
func (e *event) after(t Time, k uint64) bool {
	return e.at > t || (e.at == t && e.key > k)
}

// eventQueue is a binary min-heap of event values (no pointers, no
// interfaces): pushing and popping allocate nothing once the slice has grown.
// The engine uses it behind its calendar queue (calQueue) for far events.
type eventQueue struct {
	h []event
}

func (q *eventQueue) len() int { return len(q.h) }

// pushEvent inserts an event that already has its key.
func (q *eventQueue) pushEvent(e event) {
	q.h = append(q.h, e)
	// sift up
	h := q.h
	i := len(h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !e.less(&h[p]) {
			break
		}
		h[i] = h[p]
		i = p
	}
	h[i] = e
}

// pop removes and returns the earliest event. The queue must not be empty.
func (q *eventQueue) pop() event {
	h := q.h
	top := h[0]
	n := len(h) - 1
	last := h[n]
	q.h = h[:n]
	if n > 0 {
		q.siftDown(last, n)
	}
	return top
}

// siftDown places e at the root of a heap of n elements and restores order.
func (q *eventQueue) siftDown(e event, n int) {
	h := q.h
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if r := c + 1; r < n && h[r].less(&h[c]) {
			c = r
		}
		if !h[c].less(&e) {
			break
		}
		h[i] = h[c]
		i = c
	}
	h[i] = e
}

// peekTime returns the time of the earliest event; the queue must not be empty.
func (q *eventQueue) peekTime() Time { return q.h[0].at }
