package cc

// Receiver-driven transports (Homa, ExpressPass): the receiver decides what
// a sender may send and tells it with control packets (grants, credits); the
// sender sends exactly what it is allowed. The engine carries control
// packets of a stated wire size and priority between a flow's sender and
// its receiver instance, keeps a per-flow send limit, and, for algorithms
// that set Algorithm.ReceiverDriven, accepts data out of order at the
// receiving NIC.

// CtrlHigh is the Ctrl.Class of a control packet that travels in the
// egress ports' strict high-priority class (never paused by PFC, outside
// the switches' data buffer), as PFC frames and CNPs do.
const CtrlHigh = -1

// Ctrl is one control packet between a flow's sender and its receiver
// instance. Kind, Value and Aux are the algorithm's own (for example a
// grant: Kind grant, Value the granted offset, Aux the priority to send
// at); the engine only carries them.
type Ctrl struct {
	Flow  int32
	Kind  uint8
	Value int64
	Aux   int64
	// Wire is the packet's bytes on the wire (> 0).
	Wire int64
	// Class is CtrlHigh or a data class (0 first) that the packet takes at
	// every egress port, as data of that class would.
	Class int
	// Credit sends the packet through the credit queue of every egress port
	// it crosses, throttled to the share of the link its algorithm's
	// CreditSpec gives (ExpressPass): a credit that finds that queue full
	// is dropped. A credit records the path it takes, and the data packets
	// its sender sends after receiving it follow that path back (symmetric
	// routing, so that throttled credits bound the data on every link).
	Credit bool
}

// CreditSpec asks every egress port for a credit queue (ExpressPass): credits
// leave a port at most at Share of its line rate, in bursts of at most
// Bucket credits, and at most Queue credits wait; one more is dropped.
type CreditSpec struct {
	Wire   int64   `json:"wireBytes"`    // bytes of one credit on the wire
	Share  float64 `json:"share"`        // of each link's rate credits may use
	Queue  int     `json:"queuePackets"` // credits a port's credit queue holds
	Bucket int     `json:"bucketPackets"`
}

// DrivenEnv is what a receiver-driven sender may do besides Env. The
// engine's Env implements it; a sender asserts it once, in Start.
type DrivenEnv interface {
	Env
	// SetLimit lets the flow start packets only below byte offset limit
	// (Unlimited: no limit; every flow starts with none). A packet that
	// starts below the limit is whole, so an algorithm grants in packets.
	SetLimit(limit int64)
	// Resend sends the payload bytes [from, to) again before any new data,
	// paced by the flow's rate but not held by its window or limit; a new
	// call replaces a pending one.
	Resend(from, to int64)
	// SendCtrl sends a control packet to the flow's receiver instance.
	SendCtrl(c Ctrl)
	// Echo sets the value the flow's data packets carry to the receiver
	// from now on (DataInfo.Echo): ExpressPass echoes credit numbers.
	Echo(v int64)
}

// DrivenReceiverEnv is what a receiver-driven receiver instance may do
// besides ReceiverEnv. The engine's ReceiverEnv implements it.
type DrivenReceiverEnv interface {
	ReceiverEnv
	// SendCtrl sends a control packet to the source of flow c.Flow.
	SendCtrl(c Ctrl)
	// FirstGap is the first range of the flow's payload not yet received,
	// [from, to): from is the first missing byte and to the first byte
	// after it that has arrived (the highest byte sent so far, as far as
	// the receiver knows, when none has). from == to when nothing is
	// missing below the highest byte received.
	FirstGap(flow int32) (from, to int64)
}

// CtrlHandler is implemented by senders that receive control packets.
type CtrlHandler interface {
	OnCtrl(env Env, c *Ctrl)
}

// CtrlReceiver is implemented by receivers that receive control packets
// from senders (a credit request).
type CtrlReceiver interface {
	OnCtrl(env ReceiverEnv, c *Ctrl)
}

// FlowEnder is implemented by receivers that want to know when a flow's
// last byte has arrived (every byte, in any order): the engine calls
// OnComplete after the OnData of the packet that completed it.
type FlowEnder interface {
	OnComplete(env ReceiverEnv, flow int32)
}

// Workload is what every flow of a run knows about the run's message
// sizes (Homa sets its unscheduled priority cut-offs from it): sizes in
// payload bytes, ascending, each with the weight of its share of messages.
// It is read-only and shared.
type Workload struct {
	Sizes   []int64
	Weights []float64
	// memo keeps what algorithms derive from the workload once per run
	// (the engine is single-threaded; a Workload belongs to one run)
	memo map[any]any
}

// Copy returns a Workload with the same sizes and nothing derived yet: a
// run takes its own, so that runs built from one configuration share no
// state.
func (w *Workload) Copy() *Workload {
	return &Workload{Sizes: w.Sizes, Weights: w.Weights}
}
