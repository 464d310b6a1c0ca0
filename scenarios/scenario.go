// Package scenarios reads, validates, normalises and builds cclab scenarios:
// the JSON documents described in the scenario-format contract
// (scenarios/scenario-format.md). Parse turns a document into a Scenario
// with every default filled in and every problem reported by field path;
// Canonical writes the normalised form (the basis of scenario ids); Build
// generates the topology, the flows and the algorithm instances and returns the
// engine's input, a sim.Config. The package also embeds the flow-size CDFs and
// the built-in scenario library.
package scenarios

import "cclab/sim"

// Scenario is one parsed, validated scenario. Times are picoseconds, sizes
// bytes, rates bits per second. Every default of the contract is filled in.
type Scenario struct {
	Name        string
	Description string
	Seed        uint64
	// Duration is the hard stop; 0 means none: run until every flow has
	// finished (capped at sim.MaxDuration).
	Duration  sim.Time
	Topology  Topology
	Switch    Switch
	Host      Host
	CC        CC
	Workload  []Workload
	Events    []Event
	Telemetry Telemetry
}

// Link is the rate and propagation delay of a link (both directions).
type Link struct {
	Rate  int64
	Delay sim.Time
}

// Defaults of a link object (or of a member left out of one): 100 Gbps and
// 1 µs, the reference simulator's fabric.
const (
	DefaultLinkRate  int64    = 100e9
	DefaultLinkDelay sim.Time = sim.Microsecond
)

// Topology kinds.
const (
	KindDumbbell  = "dumbbell"
	KindFatTree   = "fattree"
	KindLeafSpine = "leafspine"
	KindCustom    = "custom"
)

// Topology is the network. Kind selects which one of the kind structs is set.
type Topology struct {
	Kind      string
	Dumbbell  *Dumbbell
	FatTree   *FatTree
	LeafSpine *LeafSpine
	Custom    *Custom
}

// Dumbbell: Senders hosts h0.. on switch s0, Receivers hosts r0.. on s1 and
// the bottleneck link s0–s1; with Bottleneck nil it is a star (every host on
// s0, no s1).
type Dumbbell struct {
	Senders    int
	Receivers  int
	HostLink   Link
	Bottleneck *Link
}

// Agg–core wirings of a fat-tree.
const (
	AggCoreGrouped = "grouped"
	AggCoreFull    = "full"
)

// FatTree is a three-tier tree of Pods pods; Tor, Agg and Core are switch
// totals.
type FatTree struct {
	Pods        int
	Tor         int
	Agg         int
	Core        int
	HostsPerTor int
	AggCore     string // AggCoreGrouped or AggCoreFull
	HostLink    Link
	TorAggLink  Link
	AggCoreLink Link
}

// LeafSpine is a two-tier Clos: every leaf links to every spine with
// UplinksPerPair parallel links.
type LeafSpine struct {
	Leaves         int
	Spines         int
	HostsPerLeaf   int
	UplinksPerPair int
	HostLink       Link
	LeafSpineLink  Link
}

// Custom is an explicit node and link list.
type Custom struct {
	Nodes []CustomNode
	Links []CustomLink
}

// Custom node types.
const (
	NodeHost   = "host"
	NodeSwitch = "switch"
)

// CustomNode is one node of a custom topology.
type CustomNode struct {
	ID   string
	Type string // NodeHost or NodeSwitch
}

// CustomLink is one link of a custom topology, between node ids A and B.
type CustomLink struct {
	A, B  string
	Rate  int64
	Delay sim.Time
}

// Switch is the switch model shared by every switch.
type Switch struct {
	Buffer int64
	// ECN is the marking configuration; nil means the scenario algorithm's
	// own defaults (none: no marking). Canonical keeps it nil so that a run
	// with another algorithm (--algo) gets that algorithm's thresholds.
	ECN              *ECN
	PFC              bool
	INT              bool
	FlowCountTimeout sim.Time
	// AckClass is the class of ACKs and NACKs at the switches: AckClassData
	// (their data's, as in HPCC's simulator) or AckClassHigh (strict
	// priority).
	AckClass string
	// DataClasses is the number of strict-priority data queues per egress
	// port, 1 … sim.MaxDataClasses; 0 (Parse's default) is the most any of
	// the run's algorithms is designed for (cc.Algorithm.DataClasses:
	// Homa's 8), or 1. Senders of algorithms that choose a packet's class
	// (cc.DataClasser) use them; the others send everything in the first.
	DataClasses int
	// Routing is how switches spread packets over equal-cost paths:
	// RoutingECMP (per flow, the default) or RoutingSpray (per packet).
	Routing string
}

// Routings of switch.routing.
const (
	RoutingECMP  = "ecmp"
	RoutingSpray = "spray"
)

// Classes of switch.ackClass.
const (
	AckClassData = "data"
	AckClassHigh = "high"
)

// ECN scale modes.
const (
	ScaleLinkRate = "linkRate"
	ScaleNone     = "none"
)

// ECN is RED-style marking. Kmin and Kmax are bytes for a 100 Gbps port when
// Scale is ScaleLinkRate.
type ECN struct {
	Enabled bool
	Kmin    int64
	Kmax    int64
	Pmax    float64
	Scale   string // ScaleLinkRate or ScaleNone
}

// BDP modes of host.bdp.
const (
	BDPGlobal = "global"
	BDPPath   = "path"
)

// Host is the NIC model shared by every host.
type Host struct {
	MTU         int64
	Header      int64 // data packet header on the wire
	IdealHeader int64 // header per packet counted by the ideal FCT
	Ack         int64 // an ACK on the wire (without echo)
	Nack        int64 // a NACK on the wire (without echo)
	AckHeader   int64 // an ACK or NACK that echoes b bytes is max(Ack, AckHeader+b)
	AckEvery    int
	CNPInterval sim.Time
	BDP         string // BDPGlobal or BDPPath
	// RTO is the retransmission timer's floor; with RTOAuto ("auto", the
	// default) the timer runs only in runs that can lose packets (PFC off, or
	// loss or link events); an explicit duration keeps it on; 0 turns it off.
	RTO          sim.Time
	RTOAuto      bool
	NackInterval sim.Time
}

// CC is an algorithm choice: a registered algorithm, a preset ("" = the
// defaults) and parameter overrides in each parameter's registry unit.
type CC struct {
	Algorithm string
	Preset    string
	Params    map[string]float64
	// Policy names the trained policy a learned algorithm (fdcc, rlcc)
	// decides with: "" or "default" is the one the lab ships; another name
	// is resolved by whoever builds the scenario (BuildOptions.Policy: the
	// lab's stored policies, the CLI's files).
	Policy string
}

// Workload kinds.
const (
	KindFlows     = "flows"
	KindIncast    = "incast"
	KindPoisson   = "poisson"
	KindStaggered = "staggered"
	KindLongShort = "longshort"
	KindAllToAll  = "alltoall"
)

// Workload is one entry of the workload list. Kind selects which field is set
// (Flows for KindFlows). CC, when set, is the algorithm of every flow of the
// entry (a flow's own CC wins over it).
type Workload struct {
	Kind      string
	CC        *CC
	Flows     []Flow
	Incast    *Incast
	Poisson   *Poisson
	Staggered *Staggered
	LongShort *LongShort
	AllToAll  *AllToAll
}

// Flow is one explicit flow; CC, when set, overrides the scenario's algorithm.
type Flow struct {
	Src, Dst string
	Size     int64
	Start    sim.Time
	CC       *CC
	// Tag labels the flow in the results ("" gives the workload's kind,
	// "flows"); "incast" also marks it as an incast flow in ns-3's files
	// (destination port 200).
	Tag string
}

// Incast is many senders to one receiver. Senders lists the senders, or, when
// it is nil, SenderCount senders are chosen at random from the other hosts.
// Each sender sends FlowsPerSender flows (at least 1), each with its own
// start. With RepeatCount > 1 the burst repeats every RepeatEvery (same
// senders).
type Incast struct {
	Senders     []string
	SenderCount int
	Receiver    string
	Size        int64
	Start       sim.Time
	Jitter      sim.Time
	// JitterDist is how starts spread over [0, Jitter]: JitterUniform (the
	// default) or JitterNormal, N(Jitter/2, (Jitter/6)²) clipped to the
	// window (the FDCC thesis' "Gaussian starts within 1 ms").
	JitterDist string
	// FlowsPerSender is how many flows each sender starts per burst (the
	// FDCC thesis' 1024-to-1 from 64 hosts); 1 by default.
	FlowsPerSender int
	RepeatEvery    sim.Time
	RepeatCount    int
}

// Incast start spreads.
const (
	JitterUniform = "uniform"
	JitterNormal  = "normal"
)

// Poisson is open-loop traffic: each host starts flows with exponential
// inter-arrival times at Load of its link rate, sizes from a CDF (by name, or
// inline points when CDFPoints is set) or all of Size bytes, to a uniformly
// random other host, between From and Until. Hosts, when set, restricts
// sources and destinations to those hosts; Pairs, when set, makes each pair
// a source sending to its own destination only.
type Poisson struct {
	CDF       string
	CDFPoints []CDFPoint
	Size      int64 // > 0: every flow has this size (no CDF)
	Load      float64
	From      sim.Time
	Until     sim.Time
	Hosts     []string
	Pairs     [][2]string
}

// Staggered is flow i from Src[i] to Dst of Sizes[i] starting at Starts[i].
type Staggered struct {
	Src    []string
	Dst    string
	Sizes  []int64
	Starts []sim.Time
}

// LongShort is one long flow and Short.Count short flows every Short.Every.
type LongShort struct {
	Long  LongFlow
	Short ShortFlows
}

// LongFlow is the long flow of a LongShort workload.
type LongFlow struct {
	Src, Dst string
	Size     int64
	Start    sim.Time
}

// ShortFlows are the short flows of a LongShort workload: flow k starts at
// Start + k×Every.
type ShortFlows struct {
	LongFlow // src, dst, size and the first start
	Count    int
	Every    sim.Time
}

// AllToAll is an MPI-style all-to-all: Hosts (or, when nil, the first
// HostCount hosts) each run RanksPerHost ranks; every rank sends Size bytes to
// every rank on another host; iteration k+1 starts when iteration k has
// completed; iteration 0 starts at Start.
type AllToAll struct {
	Hosts        []string
	HostCount    int
	RanksPerHost int
	Size         int64
	Iterations   int
	Start        sim.Time
}

// Event kinds.
const (
	EventParams = "params" // change algorithm parameters
	EventLink   = "link"   // take a link down or bring it up
	EventLoss   = "loss"   // set a link's loss rate
)

// Event is a scripted change at a simulated time.
type Event struct {
	At     sim.Time
	Kind   string             // EventParams, EventLink or EventLoss
	Params map[string]float64 // EventParams: new values, in registry units
	Link   string             // EventLink, EventLoss: a port name, "s0->s1"
	Up     bool               // EventLink
	Loss   float64            // EventLoss: probability in [0, 1]
}

// Telemetry selects what the engine samples.
type Telemetry struct {
	Interval  sim.Time // 0: no periodic samples
	AllQueues bool
	Queues    []string // port names, when not AllQueues (empty: none)
	AllFlows  bool
	Flows     []int // flow ids, when not AllFlows (empty: none)
}
