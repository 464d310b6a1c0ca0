package sim

import "cclab/cc"

type pktKind uint8

const (
	pktData pktKind = iota
	pktAck
	pktNack
	pktCNP
	pktPFC
	pktQCN
	pktCtrl   // a receiver-driven algorithm's control packet (cc.Ctrl)
	pktCredit // a control packet in the credit queues (cc.Ctrl.Credit)
	numPktKinds
)

var pktKindNames = [numPktKinds]string{"data", "ack", "nack", "cnp", "pfc", "qcn", "ctrl", "credit"}

// Traffic classes of an egress port: class 0 is strict high priority (PFC,
// CNP, QCN feedback, and ACK/NACK when the algorithm asks for it); classes
// 1 … SwitchConfig.DataClasses are the data classes (and ACKs otherwise), in
// strict priority among themselves, class 1 first. Only data classes are
// subject to buffer admission, ECN marking and PFC, as in HPCC's simulator
// (its queue 0 and queues 1–7). With one data class (the default) class 1 is
// HPCC's queue 3.
//
// One more queue, classCredit, holds credits (cc.Ctrl.Credit): it is served
// after class 0 and before the data classes, throttled by a token bucket, and
// is outside the switches' data buffer.
const (
	classHigh   = 0
	classData   = 1 // the first (highest-priority) data class
	nClass      = 1 + MaxDataClasses
	classCredit = nClass
	nQueue      = nClass + 1
)

// MaxDataClasses is the largest number of strict-priority data classes an
// egress port may have (SwitchConfig.DataClasses); Homa uses 8.
const MaxDataClasses = 8

// packet is the one packet type of the engine. Packets live in a chunked slab
// (pointers stay valid while the slab grows) and are recycled through a free
// list, so forwarding allocates nothing.
type packet struct {
	seq    int64 // data: first payload byte; ACK/NACK: cumulative acknowledgement; control: cc.Ctrl.Value
	sentAt Time  // data send time, echoed by the ACK
	window int64 // ACK: window assigned by a receiver-side algorithm; data: the sender's echo value; control: cc.Ctrl.Aux
	// route is a credit's path recorded for the data it releases, or that
	// data's path: one byte per switch, 1 + the index of the egress port
	// among the switch's next hops (0: not recorded), the next switch's
	// in the low byte
	route   uint64
	flow    int32
	dst     int32  // destination node, for routing
	hash    uint32 // ECMP hash of this direction of the flow
	ingress int32  // the port it arrived on at the current switch (for buffer accounting)
	size    int32  // bytes on the wire now
	payload int32
	next    int32 // free list link
	fb      int32 // QCN feedback value; control: cc.Ctrl.Kind
	acked   int16 // ACK: data packets counted since the previous ACK
	marked  int16 // ACK: of those, ECN-marked
	kind    pktKind
	class   uint8
	ecn     bool
	cnp     bool // ACK carries a CNP flag
	first   bool
	last    bool
	pause   bool  // PFC: pause (true) or resume (false)
	pclass  uint8 // PFC: the data class the frame pauses or resumes
	ackReq  bool  // data: the sender's window is full after this packet; acknowledge it
	pinned  bool  // data: follows route instead of ECMP
	toSrc   bool  // control: travels from the receiver to the flow's sender
	nhop    uint8 // INT records pushed so far
	rdir    uint8 // routing cache: 1 data direction, 2 the reverse, 0 none (see flowRoute)
	hop     uint8 // switches passed so far (with rdir)
	hops    [cc.MaxHops]cc.IntHop
}

const chunkBits = 12
const chunkSize = 1 << chunkBits

// pool hands out packet ids; get returns a zeroed packet. Packets live in
// chunks that never move, so a *packet stays valid while the pool grows;
// a chunk is an array, so that at indexes into it without a second bounds
// check.
type pool struct {
	chunks []*[chunkSize]packet
	free   int32 // head of the free list, -1 when empty
	n      int32 // ids handed out so far (high-water mark)
	live   int   // packets currently allocated
}

func newPool() pool { return pool{free: -1} }

func (p *pool) at(id int32) *packet {
	return &p.chunks[uint32(id)>>chunkBits][uint32(id)&(chunkSize-1)]
}

func (p *pool) get() (int32, *packet) {
	p.live++
	if p.free >= 0 {
		id := p.free
		pk := p.at(id)
		p.free = pk.next
		*pk = packet{}
		return id, pk
	}
	id := p.n
	if int(id>>chunkBits) == len(p.chunks) {
		p.chunks = append(p.chunks, new([chunkSize]packet))
	}
	p.n++
	return id, p.at(id)
}

func (p *pool) put(id int32) {
	p.live--
	pk := p.at(id)
	pk.next = p.free
	p.free = id
}

// fifo is a ring-buffer queue with amortised growth: once it has grown to
// the largest size a run needs, push and pop allocate nothing.
// head and n are 32-bit so that a queue of packet ids is 32 bytes, two to
// a cache line (portState).
type fifo[T any] struct {
	buf  []T
	head int32
	n    int32
}

func (r *fifo[T]) push(v T) {
	if int(r.n) == len(r.buf) {
		size := max(2*len(r.buf), 16)
		buf := make([]T, size)
		for i := 0; i < int(r.n); i++ {
			buf[i] = r.buf[(int(r.head)+i)&(len(r.buf)-1)]
		}
		r.buf, r.head = buf, 0
	}
	r.buf[int(r.head+r.n)&(len(r.buf)-1)] = v
	r.n++
}

func (r *fifo[T]) pop() T {
	v := r.buf[r.head]
	r.head = (r.head + 1) & int32(len(r.buf)-1)
	r.n--
	return v
}

func (r *fifo[T]) peek() T { return r.buf[r.head] }

// at returns the i-th element from the head.
func (r *fifo[T]) at(i int) T { return r.buf[(int(r.head)+i)&(len(r.buf)-1)] }

// ring is a FIFO of packet ids (an egress queue).
type ring = fifo[int32]

// wireRing holds the packets on one direction of a link with their arrival
// times, which are non-decreasing (a link is FIFO with a fixed delay).
type wireRing = fifo[wireSlot]

type wireSlot struct {
	at Time
	id int32
}
