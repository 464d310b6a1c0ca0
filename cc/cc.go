// Package cc defines the congestion-control interface of the lab and holds the
// algorithms. Every algorithm is a pure, deterministic state machine: the
// engine (package sim) feeds it events (ACK/NACK with INT and ECN echo, CNP,
// timer, QCN feedback, retransmission timeout) together with an Env through
// which it sets its flow's pacing rate and window, arms its own timers and
// reports series. Nothing in
// this package does I/O or reads the wall clock, except where an algorithm
// measures its own solve time (MPCC, through Env.WallNanos).
//
// Three kinds of hooks exist, matching where real algorithms run:
//   - Sender: one instance per flow at the sending NIC (DCQCN, TIMELY, DCTCP,
//     HPCC, MPCC, Dolce-RC, FDCC, TCP, none).
//   - Receiver: one instance per receiving host; it sees every data packet and
//     may assign a window that the ACK carries back (RCC). Through its
//     ReceiverEnv it arms timers and reports series for the flows it
//     receives; optionally it sees everything its NIC takes in (RxObserver).
//   - CongestionPoint: one instance per switch egress port; it sees every
//     packet enqueued there and may send feedback to the packet's source
//     (QCN's congestion point).
package cc

import "math"

// Time is simulated time in integer picoseconds.
type Time int64

// Units of Time.
const (
	Picosecond  Time = 1
	Nanosecond  Time = 1000
	Microsecond Time = 1000 * Nanosecond
	Millisecond Time = 1000 * Microsecond
	Second      Time = 1000 * Millisecond
)

// Unlimited is the rate or window value meaning "no limit": a flow with an
// unlimited rate sends at its NIC's line rate, one with an unlimited window is
// not window-bound.
const Unlimited int64 = math.MaxInt64

// MaxHops is the deepest INT stack a packet carries (HPCC's maxHop).
const MaxHops = 5

// IntHop is one switch's in-band telemetry record, pushed when the packet is
// dequeued at that switch's egress port. It carries the union of what HPCC
// (queue, cumulative tx bytes, timestamp, line rate) and MPCC (queue, active
// flow count) need. Values are exact, not quantised to HPCC's wire encoding.
type IntHop struct {
	Qlen    int64 // bytes queued at the egress port (all priorities) after this packet left
	TxBytes int64 // cumulative bytes sent by the port before this packet
	TS      Time  // dequeue time
	Rate    int64 // port line rate, bits per second
	Flows   int32 // active flows counted at the port (0 when counting is off)
	Port    int32 // engine port id, for telemetry only
}

// Ack is what a sender learns from one ACK or NACK.
type Ack struct {
	Seq        int64    // cumulative: every payload byte below Seq has arrived
	NACK       bool     // out-of-order arrival detected; the sender goes back to Seq
	NewlyAcked int64    // payload bytes this ACK acknowledged for the first time
	Packets    int      // data packets the receiver counted since its previous ACK
	ECNMarked  int      // of those, how many arrived ECN-marked
	CNP        bool     // the receiver flagged a congestion notification on this ACK
	SentAt     Time     // send timestamp of the data packet that triggered this ACK
	Window     int64    // window assigned by a receiver-side algorithm, 0 if none
	INT        []IntHop // the echoed INT stack (empty unless an algorithm of the run declares INT in its IntSpec); valid only during the call
	SndNxt     int64    // the sender's next sequence to send, at ACK arrival
	SndUna     int64    // the sender's lowest unacknowledged byte, after this ACK
	// SndMax is one past the highest byte the sender has sent so far:
	// unlike SndNxt, a go-back (NACK or timeout) does not lower it
	// (NewReno's "recover", RFC 6582).
	SndMax int64
}

// QCNFeedback is a congestion point's message to a source.
type QCNFeedback struct {
	Fb   int   // quantised feedback, > 0 means congestion
	Port int32 // the congestion point's engine port id
}

// Env is the engine's side of one sender instance. Calls take effect
// immediately in simulated time.
type Env interface {
	Now() Time
	// SetRate sets the pacing rate in bits per second (Unlimited: line rate).
	SetRate(bps int64)
	// SetWindow sets the limit on unacknowledged payload bytes (Unlimited: none).
	SetWindow(bytes int64)
	// SetTimer arms timer slot (0 <= slot < MaxTimers) to fire at the absolute
	// time at, replacing any pending firing of that slot.
	SetTimer(slot int, at Time)
	// CancelTimer disarms a slot.
	CancelTimer(slot int)
	// Gauge records the current value of one of the algorithm's gauge series; the
	// engine samples it at every telemetry tick.
	Gauge(series int, v float64)
	// Event records one value at the current simulated time (e.g. a solve time).
	Event(series int, v float64)
	// WallNanos reads a monotonic wall clock, in nanoseconds from an
	// arbitrary origin. It exists only so that an algorithm can measure how
	// long its own computation takes (MPCC's QP solve time) and report it as
	// a series; a value read from it must never influence what the
	// algorithm decides, or runs would stop being reproducible.
	WallNanos() int64
}

// MaxTimers is the number of timer slots an algorithm instance may use.
const MaxTimers = 4

// FlowInfo is what an instance knows about its flow; it does not change.
type FlowInfo struct {
	ID       int32
	Size     int64 // payload bytes
	LineRate int64 // sender NIC rate, bits per second
	BaseRTT  Time  // base RTT (global maximum or the flow's path, per host.bdp)
	MaxBDP   int64 // bytes; the initial and maximum window of window-based schemes
	MTU      int64 // payload bytes per packet
	Header   int64 // header bytes per data packet
	Hops     int   // switches on the flow's path when it starts
	// Conn is the connection the flow belongs to when its algorithm asks
	// for connections (Algorithm.Connections): one per source host,
	// destination host and algorithm instance, shared by every flow
	// between them for the whole run. Nil otherwise.
	Conn *Conn
	// Classes is the number of strict-priority data classes the fabric has
	// (SwitchConfig.DataClasses).
	Classes int
	// Incoming counts the flows to the same destination host, this one
	// included, that have started and not finished when it starts: what a
	// client knows of its own outstanding requests (Homa's incast
	// optimisation).
	Incoming int
	// Workload describes the run's message sizes; nil when the run has
	// no flows (it is never nil for a started flow).
	Workload *Workload
}

// Conn is what the messages between one pair of hosts share: in RDMA a
// queue pair carries many messages, and an algorithm may keep state per
// connection that outlives each of them (Dolce-RC's bandit). Data is the
// algorithm's; the engine only hands the same Conn to every flow of the
// pair, in the order the flows start.
type Conn struct {
	Src, Dst int32 // host node indexes
	Data     any
}

// connState returns the state a flow keeps what it learns in: own, or, when
// shared and the flow has a connection, the connection's (made on first
// use, so the first flow of a pair creates it).
func connState[T any](info FlowInfo, shared bool, own *T) *T {
	if !shared || info.Conn == nil {
		return own
	}
	if st, ok := info.Conn.Data.(*T); ok {
		return st
	}
	st := new(T)
	info.Conn.Data = st
	return st
}

// Sender is the per-flow algorithm at the sending NIC.
type Sender interface {
	// Start is called once when the flow starts; it sets the initial rate and
	// window (every scheme in the reference simulator starts at line rate).
	Start(env Env)
	// OnAck is called for every ACK and NACK, except the one that
	// acknowledges the last byte: that one finishes the flow.
	OnAck(env Env, a *Ack)
	// SetParam changes a parameter while the run is live; the new value
	// takes effect at once (e.g. a new window is applied through env). It
	// is required, not optional: every sender but RCC's (whose parameters
	// are all its receiver's) applies live changes itself, and one that
	// forgot to should fail to compile rather than ignore them.
	SetParam(env Env, name string, v float64) error
}

// The rarer events have their own small interfaces: a sender implements
// only those it reacts to. The engine looks for them once, when it makes
// the sender (a type assertion, so a wrapper around a sender hides the
// hooks it does not declare itself); an event for a sender without its
// hook is dropped, as a no-op method would have taken it.

// CNPHandler is implemented by senders that react to a congestion
// notification packet arriving on its own, not flagged on an ACK (a marked
// packet the receiver does not acknowledge by itself): the engine calls
// OnCNP when that packet reaches the flow's source. DCQCN and Dolce-RC.
type CNPHandler interface {
	OnCNP(env Env)
}

// TimerHandler is implemented by senders that arm timers (Env.SetTimer):
// the engine calls OnTimer when slot's timer fires, while the flow is
// active. A sender that arms timers must implement it, or its timers fire
// into nothing.
type TimerHandler interface {
	OnTimer(env Env, slot int)
}

// TimeoutHandler is implemented by senders that react to the engine's
// retransmission timeout (host.rto): when no ACK has advanced the flow for
// the timeout while data is outstanding, the engine goes back to the first
// unacknowledged byte (SndNxt = SndUna) and then calls OnTimeout. TCP.
type TimeoutHandler interface {
	OnTimeout(env Env, t Timeout)
}

// Timeout is what a sender learns from a retransmission timeout.
type Timeout struct {
	SndUna int64 // the lowest unacknowledged byte, where sending resumes
	SndMax int64 // one past the highest byte sent so far
}

// QCNHandler is implemented by senders that take QCN's quantized feedback:
// the engine calls OnQCN when a congestion point's feedback frame reaches
// the flow's source.
type QCNHandler interface {
	OnQCN(env Env, fb QCNFeedback)
}

// Sampler is implemented by senders whose gauges change between events (a
// value that decays on a timer the algorithm evaluates lazily, such as
// DCQCN's alpha): the engine calls OnSample at every telemetry tick, before
// it reads the gauges.
type Sampler interface {
	OnSample(env Env)
}

// SendObserver is implemented by senders that count their own transmissions
// (QCN's byte counter, Dolce-RC's per-arm packet counts).
type SendObserver interface {
	OnSend(env Env, payload, wire int64, retransmit bool)
}

// DataClasser is implemented by senders that choose the strict-priority
// data class of each packet they send (Homa's priorities). Class 0 is the
// highest and is served first at every egress port; the fabric has
// SwitchConfig.DataClasses classes, and a class beyond the last is clamped
// to the last (the lowest). The engine calls DataClass with the first
// payload byte of the packet it is about to build, and may also call it to
// learn whether the flow's next packet could leave a port where some
// classes are paused by PFC, so the answer must depend only on the sender's
// state and seq, not on how often it is asked. A sender without it sends
// everything in class 0, which with one class is the only data queue.
type DataClasser interface {
	DataClass(env Env, seq int64) int
}

// DataInfo describes one data packet arriving at its receiver.
type DataInfo struct {
	Flow    int32
	Seq     int64
	Payload int64
	Wire    int64 // the packet's bytes on the wire (headers and INT included)
	Size    int64 // flow size in bytes
	SentAt  Time
	Now     Time
	ECN     bool
	First   bool // first packet of the message (BTH "First")
	Last    bool // last packet of the message (BTH "Last")
	InOrder bool
	Src     int32 // sender host node index
	// For receiver-driven algorithms (Algorithm.ReceiverDriven), whose
	// data may arrive out of order: Received counts the flow's distinct
	// payload bytes in so far (this packet included), RcvNxt is the
	// first byte not yet received, Dup says this packet had arrived
	// before, and Echo is the value the sender set with DrivenEnv.Echo.
	Received int64
	RcvNxt   int64
	Dup      bool
	Echo     int64
}

// ReceiverEnv is the engine's side of one receiver instance (one per
// receiving host and algorithm). Series are reported per flow: a receiver's
// gauge or event for flow f is charted with f's sender series.
type ReceiverEnv interface {
	Now() Time
	// SetTimer arms the instance's timer slot (0 <= slot < MaxTimers) to
	// fire at the absolute time at (ReceiverTimer.OnTimer), replacing any
	// pending firing of that slot.
	SetTimer(slot int, at Time)
	CancelTimer(slot int)
	// Gauge records the current value of one of the algorithm's gauge
	// series for a flow this host receives.
	Gauge(flow int32, series int, v float64)
	// Event records one value of a series for a flow at the current time.
	Event(flow int32, series int, v float64)
}

// Receiver is a receiver-side algorithm instance, one per receiving host.
// OnData returns the window to carry in the ACK for this packet (0: none).
type Receiver interface {
	OnData(env ReceiverEnv, d *DataInfo) (window int64)
	SetParam(name string, v float64) error
}

// ReceiverTimer is implemented by receivers that arm timers.
type ReceiverTimer interface {
	OnTimer(env ReceiverEnv, slot int)
}

// RxObserver is implemented by receivers that measure everything their
// host's NIC takes off its links (its RX rate): the engine calls OnRx for
// every packet that arrives at the host, data or not, before OnData.
type RxObserver interface {
	OnRx(env ReceiverEnv, wire int64)
}

// CPEnv is what a congestion point may use.
type CPEnv interface {
	Now() Time
	// Rand returns a uniform float in [0,1) from the port's own seeded stream.
	Rand() float64
}

// CongestionPoint runs at one switch egress port. OnEnqueue sees each data
// packet as it joins the queue (qlen includes it) and may ask the engine to
// send feedback fb to the packet's source.
type CongestionPoint interface {
	OnEnqueue(env CPEnv, qlen, pktBytes int64) (fb int, send bool)
	SetParam(name string, v float64) error
}
