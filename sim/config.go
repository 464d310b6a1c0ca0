package sim

import (
	"cclab/cc"
)

// Time is simulated time in integer picoseconds.
type Time = cc.Time

// Units of Time.
const (
	Picosecond  = cc.Picosecond
	Nanosecond  = cc.Nanosecond
	Microsecond = cc.Microsecond
	Millisecond = cc.Millisecond
	Second      = cc.Second
)

// MaxDuration caps a run that has no duration: it stops when every flow has
// finished or at 10 s of simulated time, whichever comes first.
const MaxDuration = 10 * Second

// NodeKind tells hosts from switches.
type NodeKind uint8

// Node kinds.
const (
	Host NodeKind = iota
	Switch
)

// NodeSpec is one node of the topology.
type NodeSpec struct {
	Name string
	Kind NodeKind
}

// LinkSpec is one full-duplex link between nodes A and B (indexes into
// Config.Nodes). Both directions have the same rate and delay.
type LinkSpec struct {
	A, B  int
	Rate  int64 // bits per second
	Delay Time  // propagation delay
}

// HostConfig is the RoCEv2 NIC model shared by every host.
type HostConfig struct {
	MTU int64 // payload bytes per data packet
	// Header is the bytes each data packet adds on the wire, INT and an
	// algorithm's own header excluded (HPCC's simulator: 36 = PPP 2 + IPv4
	// 20 + UDP 8 + sequence and priority 6).
	Header int64
	// IdealHeader is the header bytes per packet that the ideal FCT counts
	// (HPCC's standalone FCT counts 48 B: its wire header plus a 14-byte
	// Ethernet header it does not transmit, less the 2-byte PPP header).
	IdealHeader int64
	// Ack and Nack are an ACK's and a NACK's size on the wire when they echo
	// nothing; one that echoes an algorithm's header or INT is AckHeader +
	// the echo, or Ack (Nack) when that is larger: HPCC's simulator pads
	// every ACK to its 60-byte minimum frame, 48 B without the Ethernet
	// header it does not transmit, and an ACK echoing HPCC's 42-byte INT
	// is 34 + 42 = 76 B.
	Ack       int64
	Nack      int64
	AckHeader int64
	// AckEvery acknowledges every AckEvery-th in-order data packet; the last
	// packet of a flow is always acknowledged.
	AckEvery int
	// CNPInterval: 0 flags a CNP on the ACK of every ECN-marked packet (HPCC's
	// simulator); > 0 sends at most one CNP per flow per interval (DCQCN's NP).
	CNPInterval Time
	// RTO is the minimum retransmission timeout (0 disables the timer). A
	// flow goes back to its first unacknowledged byte when no ACK has
	// advanced it for max(RTO, 2 × max base RTT, srtt + 4·rttvar), the RTT
	// estimate of RFC 6298 from the ACKs' echoed send times, doubling on
	// consecutive timeouts (up to 64×).
	RTO Time
	// RTOLossless keeps the timer on in runs that cannot lose packets. By
	// default it runs only when they can: PFC off, or loss or link events.
	// HPCC's simulator has no timer; a lossless run here needs none either.
	RTOLossless bool
	// NackInterval suppresses repeated NACKs for the same expected sequence
	// (HPCC's "NACK Generation Interval", 500 µs).
	NackInterval Time
	// BDPPerPath gives each flow its own path's base RTT and BDP instead of the
	// maximum over all host pairs (HPCC's GLOBAL_T 0 instead of 1).
	BDPPerPath bool
}

// ECNConfig is RED-style marking at dequeue on the egress queue's bytes.
type ECNConfig struct {
	Enabled bool
	Kmin    int64   // bytes, for a port at RefRate
	Kmax    int64   // bytes, for a port at RefRate
	Pmax    float64 // marking probability at Kmax
	// ScaleWithRate scales Kmin and Kmax linearly with each port's rate
	// relative to RefRate (HPCC's run.py: thresholds given at 100 Gbps).
	ScaleWithRate bool
	RefRate       int64
}

// SwitchConfig is the shared-buffer, output-queued switch model.
type SwitchConfig struct {
	Buffer int64 // shared buffer bytes per switch
	ECN    ECNConfig
	PFC    bool // lossless with PFC; otherwise drop-tail on the shared buffer
	INT    bool // push INT records at every egress dequeue
	// FlowCountTimeout is the idle time after which a flow stops counting as
	// active at an egress port (MPCC thesis A.1). Counting runs only when an
	// algorithm in the run asks for it.
	FlowCountTimeout Time
	// AckHigh puts ACKs and NACKs in the strict-priority class at every
	// switch. By default (false) they share their data's class, as in HPCC's
	// simulator, whose switches never set their ACK-priority attribute; an
	// algorithm's ACK priority applies to the NIC that sends the ACK only.
	AckHigh bool
	// DataClasses is the number of strict-priority data queues at every
	// egress port (switches and NICs), 1 … MaxDataClasses; 0 means 1. A
	// sender picks each packet's class (cc.DataClasser; class 0 is served
	// first), ACKs and NACKs ride their data's class unless AckHigh, and
	// buffer admission, PFC and ECN apply per class: a PAUSE stops one class
	// of the upstream port, thresholds are kept per ingress port and class
	// (HPCC's SwitchMmu [port][queue]) with headroom and reserve set aside
	// for each class, and ECN marks on the class's own queue. With one
	// class the switch is exactly the single data queue.
	DataClasses int
	// Spray routes every data packet on its own among the equal-cost next
	// hops (per-packet spraying, Homa's core spraying) instead of per flow
	// (ECMP on the flow's 4-tuple). Receivers of algorithms that are not
	// receiver-driven still expect data in order: a packet that overtakes
	// another makes them NACK, as a RoCE NIC would. An algorithm may also
	// spray only its own flows (cc.Algorithm.SprayParam).
	Spray bool
	// PFC thresholds as in HPCC's simulator: per-port ingress reserve, resume
	// offset and the headroom factor (headroom = factor × rate × delay).
	Reserve        int64 // default 4 KiB
	ResumeOffset   int64 // default 3 KiB
	HeadroomFactor int64 // default 3
}

// FlowSpec is one RDMA message from Src to Dst (host node indexes).
type FlowSpec struct {
	Src, Dst int
	Size     int64 // payload bytes
	Start    Time  // absolute start, or the delay after group After completes
	// Group (>= 0) puts the flow in a barrier group; After (>= 0) holds the
	// flow until every flow of that group has finished, then starts it Start
	// later. -1 means none. MPI all-to-all iterations use this.
	Group, After int
	// Algo indexes Config.Algos: the algorithm and parameters of this flow.
	Algo int
	// Tag is a free label carried to the results (e.g. "incast").
	Tag string
}

// AlgoSpec is one algorithm with its resolved parameters. Parameters that
// scale with the line rate are resolved per host rate by the caller.
type AlgoSpec struct {
	Algo   *cc.Algorithm
	Preset string
	Params cc.Params
}

// EventKind is the kind of a scripted event.
type EventKind uint8

// Scripted event kinds.
const (
	EventParams   EventKind = iota // change algorithm parameters
	EventLinkDown                  // take a link down (both directions)
	EventLinkUp                    // bring it back
	EventLoss                      // set a link's random loss rate (both directions)
)

// EventSpec is a scripted change at a simulated time.
type EventSpec struct {
	At   Time
	Kind EventKind
	// Params: the new values, applied to every live flow of Algo (or of every
	// algorithm that has the parameter when Algo < 0) and to flows that start
	// later.
	Params map[string]float64
	Algo   int
	// Port names one direction of the link ("s0->s1"); the event applies to both.
	Port string
	Loss float64
}

// TelemetryConfig selects what the sampler emits.
type TelemetryConfig struct {
	Interval Time // sampling interval (0: no periodic samples)
	// Queues lists port names to sample; nil with AllQueues false means none.
	AllQueues bool
	Queues    []string
	// Flows lists flow ids to sample; nil with AllFlows false means none.
	AllFlows bool
	Flows    []int
}

// Config is a complete, validated simulation input.
type Config struct {
	Nodes     []NodeSpec
	Links     []LinkSpec
	Host      HostConfig
	Switch    SwitchConfig
	Algos     []AlgoSpec
	Flows     []FlowSpec
	Events    []EventSpec
	Telemetry TelemetryConfig
	Seed      uint64
	Duration  Time // 0: until every flow has finished (capped at MaxDuration)
	// Workload is the run's message-size distribution, which algorithms may
	// derive settings from (cc.FlowInfo.Workload); nil: the flows' own
	// sizes, equally weighted.
	Workload *cc.Workload
	// WallClock is what algorithms read through cc.Env.WallNanos to time
	// their own work (nanoseconds); nil is the process's monotonic clock.
	// Tests set it to make solve-time series reproducible.
	WallClock func() int64
}

// FieldError is a Config problem that a scenario field is responsible for
// (Field is that field's path in the scenario format, e.g. "switch.buffer").
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// DefaultSwitch returns the reference simulator's switch settings.
func DefaultSwitch() SwitchConfig {
	return SwitchConfig{
		Buffer:           32 << 20,
		PFC:              true,
		INT:              true,
		FlowCountTimeout: 100 * Microsecond,
		Reserve:          4 << 10,
		ResumeOffset:     3 << 10,
		HeadroomFactor:   3,
	}
}

// DefaultHost returns the reference simulator's NIC settings.
func DefaultHost() HostConfig {
	return HostConfig{
		MTU:          1000,
		Header:       36,
		IdealHeader:  48,
		Ack:          48,
		Nack:         48,
		AckHeader:    34,
		AckEvery:     1,
		RTO:          1 * Millisecond, // armed only when packets can be lost
		NackInterval: 500 * Microsecond,
	}
}
