package sim

import "math/bits"

// calQueue is the engine's event queue: a calendar queue (a timing wheel of
// fixed-width buckets) in front of a binary heap. A packet simulation
// schedules almost every event a link delay or a serialisation time ahead, so
// a wheel that spans a few link delays takes nearly all of them: push is an
// append to a bucket, pop takes the head of the current bucket, and a bitmap
// finds the next non-empty bucket. Events beyond the wheel's span (timers,
// samples, timeouts) wait in the heap until the wheel reaches them.
//
// Order is exactly the heap's: by time, then by key (eventKey). Each
// bucket is kept sorted by (at, key); since events are mostly scheduled in
// increasing order, inserting is almost always an append.
//
// The wheel follows the event density (after Brown's calendar queue
// resizing): when inserting has had to move more than 4 events of other
// times per insert on average over the last 4096 (a bucket holds too many
// events that come out of order: a 1024-host fabric keeps thousands of
// events within two link delays, which piles hundreds into each bucket),
// and it holds more than one event per 4 buckets, it doubles its buckets
// and halves their width, keeping its span; with fewer than one event per
// 16 buckets it halves them again. Resizing moves events between buckets
// but never changes their order. (Growing on the number of events per bucket alone
// costs the smaller fabrics more in scattered buckets than it saves.
// Events of the same picosecond, which a fabric in lockstep piles up, no
// width splits: growing for them scattered the wheel over more memory, and
// a sparse wheel thrashed, shrinking right after growing: 442 resizes of
// up to 65536 buckets in the 1024-host permutation, 17% of its time.)
type calQueue struct {
	shift   uint // bucket width is 1<<shift picoseconds
	nb      int  // number of buckets, a power of two
	buckets []bucket
	bitmap  []uint64
	base    Time // start of the current bucket's time range
	end     Time // base + span(): the first time beyond the wheel (setBase keeps it)
	cur     int  // current bucket
	n       int  // events in the wheel
	canGrow bool // the wheel is not at its largest, its buckets not 1 ps wide
	inserts int  // inserts since the last growth check
	moved   int  // events moved by those inserts
	shrink  int  // resize when n falls below it (1 per 16 buckets; -1 at the smallest)
	resizes int  // how many times the wheel has resized (for tests)
	far     eventQueue
}

const (
	minBuckets = 64
	maxBuckets = 1 << 20
)

// init sizes the wheel: buckets of width ~ width and a span of at least
// span (both rounded to powers of two).
func (q *calQueue) init(width, span Time) {
	q.shift = 0
	for Time(1)<<(q.shift+1) <= width && q.shift < 40 {
		q.shift++
	}
	nb := 64
	for Time(nb)<<q.shift < span && nb < 1<<16 {
		nb *= 2
	}
	q.alloc(nb)
	q.setBase(0)
	q.cur, q.n = 0, 0
	q.far = eventQueue{}
}

// bucket is a slot of the wheel: its events in order, and the read
// position. The two share a cache line (two buckets to a line), which an
// insert into a bucket touches besides the events themselves.
type bucket struct {
	ev   []event
	head int32
}

// alloc makes nb empty buckets and sets the resize thresholds.
func (q *calQueue) alloc(nb int) {
	q.nb = nb
	// every bucket starts with room for a few events, carved from one array
	const room = 12
	store := make([]event, nb*room)
	q.buckets = make([]bucket, nb)
	for i := range q.buckets {
		q.buckets[i].ev = store[i*room : i*room : (i+1)*room]
	}
	q.bitmap = make([]uint64, nb/64)
	q.canGrow = nb < maxBuckets && q.shift > 0
	q.inserts, q.moved = 0, 0
	q.shrink = nb / 16
	if nb <= minBuckets {
		q.shrink = -1
	}
}

// resize rebuilds the wheel with twice (grow) or half the buckets, each
// half or twice as wide, over the same span: every event goes back in its
// new bucket, in order; one that the realigned span no longer covers waits
// in the heap.
func (q *calQueue) resize(grow bool) {
	q.resizes++
	old := q.buckets
	nb := q.nb / 2
	if grow {
		nb = q.nb * 2
		q.shift--
	} else {
		q.shift++
	}
	q.alloc(nb)
	q.setBase(q.base >> q.shift << q.shift)
	q.cur = int(q.base>>q.shift) & (q.nb - 1)
	q.n = 0
	limit := q.end
	for i := range old {
		for _, e := range old[i].ev[old[i].head:] {
			if e.at >= limit {
				q.far.pushEvent(e)
				continue
			}
			q.place(e)
		}
	}
}

func (q *calQueue) len() int { return q.n + q.far.len() }

func (q *calQueue) span() Time { return Time(q.nb) << q.shift }

func (q *calQueue) setBase(b Time) {
	q.base = b
	q.end = b + q.span()
}

func (q *calQueue) push(at Time, k evKind, obj int32, arg uint32) {
	e := event{at: at, key: eventKey(k, obj, arg)}
	if at >= q.end {
		q.far.pushEvent(e)
		return
	}
	if at < q.base {
		q.rewind(at)
	}
	q.insert(e)
}

// rewind moves the wheel back so that it starts at time at's bucket. It is
// needed only when a caller schedules at the current time after the wheel
// has already been positioned on a later event (between RunUntil slices).
// Every wheel event goes to the heap first; the ones the new span covers come
// back.
func (q *calQueue) rewind(at Time) {
	for i := range q.buckets {
		bk := &q.buckets[i]
		for _, e := range bk.ev[bk.head:] {
			q.far.pushEvent(e)
		}
		bk.ev, bk.head = bk.ev[:0], 0
	}
	clear(q.bitmap)
	q.n = 0
	q.setBase(at >> q.shift << q.shift)
	q.cur = int(q.base>>q.shift) & (q.nb - 1)
	limit := q.end
	for q.far.len() > 0 && q.far.peekTime() < limit {
		q.insert(q.far.pop())
	}
}

// insert puts e, which lies inside the wheel's span, into its bucket, and
// resizes the wheel when it has become too crowded.
func (q *calQueue) insert(e event) {
	q.moved += q.place(e)
	if q.inserts++; q.inserts == 4096 {
		if q.moved > 4*4096 && q.canGrow && q.nb < 4*q.n {
			q.resize(true)
		}
		q.inserts, q.moved = 0, 0
	}
}

// place puts e into its bucket and returns how many events of other times
// it moved (those of its own time no narrower bucket would spare it).
func (q *calQueue) place(e event) int {
	i := int(e.at>>q.shift) & (q.nb - 1)
	bk := &q.buckets[i]
	b := bk.ev
	j := len(b)
	h := int(bk.head)
	q.n++
	// most inserts go into an empty bucket or after its last event (the
	// bitmap marks exactly the non-empty buckets)
	if j == h {
		bk.ev = append(b, e)
		q.bitmap[i>>6] |= 1 << (i & 63)
		return 0
	}
	if !e.less(&b[j-1]) {
		bk.ev = append(b, e)
		return 0
	}
	b = append(b, e)
	// the others step back a few places; one that has further to go
	// (among many events of one time, which a fabric in lockstep piles
	// up) finds its place by bisection and moves the rest at once
	stop := max(h, j-linearSteps)
	for j > stop && e.less(&b[j-1]) {
		b[j] = b[j-1]
		j--
	}
	if j == stop && j > h && e.less(&b[j-1]) {
		j = bisect(b, h, j, e)
	}
	b[j] = e
	bk.ev = b
	// the moved events of e's own time come first: count the others
	k := j + 1
	for n := k + linearSteps; k < len(b) && b[k].at == e.at; k++ {
		if k == n {
			for hi := len(b); k < hi; {
				if m := int(uint(k+hi) >> 1); b[m].at == e.at {
					k = m + 1
				} else {
					hi = m
				}
			}
			break
		}
	}
	return len(b) - k
}

// bisect finds where e goes in b[h:j], all of whose events come after it
// from b[j-1] on, and moves the events from there up one place (b[j] is
// free); it returns e's place.
func bisect(b []event, h, j int, e event) int {
	lo, hi := h, j-1
	for lo < hi {
		if m := int(uint(lo+hi) >> 1); e.less(&b[m]) {
			hi = m
		} else {
			lo = m + 1
		}
	}
	copy(b[lo+1:j+1], b[lo:j])
	return lo
}

// linearSteps is how far an insert steps back one event at a time before
// it bisects.
const linearSteps = 8

// pop removes and returns the earliest event; the queue must not be empty.
func (q *calQueue) pop() event {
	for {
		if q.n > 0 {
			i := q.cur
			if bk := &q.buckets[i]; int(bk.head) < len(bk.ev) {
				return q.take(i, int(bk.head))
			}
			// advance to the next non-empty bucket of the wheel
			j := q.next(i)
			// j is ahead of cur by d buckets (circularly)
			d := (j - i) & (q.nb - 1)
			q.setBase(q.base + Time(d)<<q.shift)
			q.cur = j
		} else {
			// the wheel is empty: jump to the earliest far event
			q.setBase(q.far.peekTime() >> q.shift << q.shift)
			q.cur = int(q.base>>q.shift) & (q.nb - 1)
		}
		// far events that the moved wheel now covers join it; they all lie
		// after the current bucket's events
		limit := q.end
		for q.far.len() > 0 && q.far.peekTime() < limit {
			q.insert(q.far.pop())
		}
	}
}

func (q *calQueue) take(i, h int) event {
	bk := &q.buckets[i]
	e := bk.ev[h]
	q.n--
	if h+1 == len(bk.ev) {
		bk.ev, bk.head = bk.ev[:0], 0
		q.bitmap[i>>6] &^= 1 << (i & 63)
		if q.n < q.shrink {
			q.resize(false)
		}
	} else {
		bk.head = int32(h + 1)
	}
	return e
}

// next returns the first non-empty bucket after i, circularly; the wheel
// must hold an event.
func (q *calQueue) next(i int) int {
	words := len(q.bitmap)
	w := i >> 6
	// rest of word w above bit i
	if m := q.bitmap[w] &^ (1<<(i&63+1) - 1); i&63 != 63 && m != 0 {
		return w<<6 | bits.TrailingZeros64(m)
	}
	for k := 1; k <= words; k++ {
		ww := (w + k) % words
		m := q.bitmap[ww]
		if k == words {
			m &= 1<<(i&63+1) - 1 // wrapped to word w: bits up to i
		}
		if m != 0 {
			return ww<<6 | bits.TrailingZeros64(m)
		}
	}
	return i
}

// peek returns the k-th event still waiting in the current bucket (0 is
// the one pop returns next, unless a push comes first), or nil: a hint for
// prefetching, not an order.
func (q *calQueue) peek(k int) *event {
	bk := &q.buckets[q.cur]
	if h := int(bk.head) + k; h < len(bk.ev) {
		return &bk.ev[h]
	}
	return nil
}

// unpop puts back the event pop just returned (it is the earliest, so it
// goes to the head of the current bucket).
func (q *calQueue) unpop(e event) {
	i := q.cur
	bk := &q.buckets[i]
	if h := int(bk.head); h > 0 {
		bk.ev[h-1] = e
		bk.head = int32(h - 1)
	} else {
		b := append(bk.ev, event{})
		copy(b[1:], b)
		b[0] = e
		bk.ev = b
	}
	q.bitmap[i>>6] |= 1 << (i & 63)
	q.n++
}

// peekAt returns the time of the earliest event without moving the wheel.
func (q *calQueue) peekAt() (Time, bool) {
	if q.n > 0 {
		if bk := &q.buckets[q.cur]; int(bk.head) < len(bk.ev) {
			return bk.ev[bk.head].at, true
		}
		bk := &q.buckets[q.next(q.cur)]
		return bk.ev[bk.head].at, true
	}
	if q.far.len() > 0 {
		return q.far.peekTime(), true
	}
	return 0, false
}

// popUpTo removes and returns the earliest event if it comes no later than
// (t, k) in the queue's order; otherwise it leaves the wheel where it is (so
// that events scheduled after (t, k) never rewind it) and returns false.
func (q *calQueue) popUpTo(t Time, k uint64) (event, bool) {
	for {
		if q.n > 0 {
			i := q.cur
			if bk := &q.buckets[i]; int(bk.head) < len(bk.ev) {
				if bk.ev[bk.head].after(t, k) {
					return event{}, false
				}
				return q.take(i, int(bk.head)), true
			}
			j := q.next(i)
			if bk := &q.buckets[j]; bk.ev[bk.head].after(t, k) {
				return event{}, false
			}
			d := (j - i) & (q.nb - 1)
			q.setBase(q.base + Time(d)<<q.shift)
			q.cur = j
		} else {
			if q.far.len() == 0 {
				return event{}, false
			}
			if q.far.h[0].after(t, k) {
				return event{}, false
			}
			q.setBase(q.far.peekTime() >> q.shift << q.shift)
			q.cur = int(q.base>>q.shift) & (q.nb - 1)
		}
		limit := q.end
		for q.far.len() > 0 && q.far.peekTime() < limit {
			q.insert(q.far.pop())
		}
	}
}
