// Package sim is the lab's discrete-event packet engine: RoCEv2 hosts,
// shared-buffer output-queued switches with PFC, ECN and INT, full-duplex
// links, and the congestion-control algorithms of package cc driven by the
// events they see. It knows nothing of HTTP or files.
//
// The engine is deterministic for a given Config, whether it runs on one
// goroutine or splits the network into lanes on several (SetLanes,
// parallel.go): time is an integer count of picoseconds, events at the
// same time run in an order fixed by what they are (their kind, then the
// port or flow they concern; see eventKey), and every random draw comes
// from a stream seeded from Config.Seed. A caller drives it with RunUntil
// in slices, which is where it may pause, change parameters (ApplyParams)
// or stop.
package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"time"
	"unsafe"

	"cclab/cc"
)

// evKind is what an event does. Events at the same picosecond run in the
// order of these constants: scripted changes first (a change at t applies
// to everything at t, as a live change between slices does), then flows
// starting, timers, ports, packets arriving, and last the snapshots, which
// see the network after everything at their instant.
type evKind uint8

const (
	evScript    evKind = iota // obj: index into Config.Events
	evFlowStart               // obj: flow
	evTimer                   // obj: flow; arg: slot<<24 | generation
	evRxTimer                 // obj: receiver (index into Sim.rx); arg: slot<<24 | generation
	evRTO                     // obj: flow; arg: generation
	evKick                    // obj: port to try transmitting on; arg: kick generation
	evArrive                  // obj: port whose wire head arrives at the peer; arg: wire generation
	evHalf                    // half-duration snapshot for Jain's index
	evSample                  // telemetry tick
)

const (
	flowPending uint8 = iota
	flowActive
	flowDone
)

// Sim is one simulation run.
type Sim struct {
	cfg    Config
	now    Time
	end    Time // the run stops here (duration, or MaxDuration, or when all flows finish)
	q      calQueue
	pk     pool
	nodes  []nodeState
	ports  []portState
	flows  []flowState
	hosts  []int32 // host node ids in node order
	rt     routing
	routes []flowRoute // per flow, its cached paths (see forward)
	// noRouteCache: route every hop from the table (tests compare the two)
	noRouteCache bool
	// prefetch: ask for the next events' ports and packets ahead of use
	// (large fabrics only; see prefetchNext); prefetches counts the asks
	prefetch   bool
	prefetches uint64

	algos     []algoRun
	rx        []rxState // receiver-side algorithm instances, in order of creation
	hasRx     bool      // some algorithm of the run has a receiver side
	srpt      bool      // some algorithm's sending NICs serve shortest remaining first
	flowCount bool      // some algorithm needs the switches' active-flow counter
	ackClass  uint8     // classHigh if ACKs and NACKs are high priority at switches (SwitchConfig.AckHigh), else classData: their data's class
	nData     uint8     // data classes per egress port (SwitchConfig.DataClasses)
	dataMask  uint16    // bits 1 … nData: every data class (of portState.paused)
	fc        flowCounter
	intOn     bool
	intGrows  bool // some algorithm adds INT bytes at every hop (IntSpec.PerHopBytes)

	// progress
	events   uint64
	qLenSum  uint64 // sum of the queue length at every pop (for benchmarks)
	started  int    // flows started
	finished int    // flows finished
	pending  int    // flows not yet started
	waiting  int    // of those, flows waiting on a barrier (no start event yet)
	scripts  int    // scripted events not yet run
	// flows started and not finished per destination node (FlowInfo.Incoming)
	incoming  []int32
	stopped   bool
	endReason string

	// barrier groups (all-to-all iterations)
	groupLeft  map[int]int
	groupAfter map[int][]int32

	tel telemetry

	// ns-3 export recorders (ns3rec.go), off unless asked for
	pfcRec     bool
	pfcLog     []PFCEvent
	qmonOn     bool
	qmonStep   Time
	qmonBucket int64

	maxRTT   Time  // maximum base RTT over host pairs
	maxBDP   int64 // maximum BDP over host pairs
	rtoMin   Time  // minimum retransmission timeout; 0: no timer in this run
	rtoFirst Time  // the timeout before a flow's first RTT sample

	cnt counters

	// scratch values handed to algorithms (reused: no allocation per packet)
	ack  cc.Ack
	data cc.DataInfo
	ctrl cc.Ctrl

	credit   *cc.CreditSpec // the credit queues' settings (the first algorithm with one), nil: none
	crQueue  int            // credits a credit queue holds
	workload *cc.Workload   // the run's message sizes, shared by every flow

	portNames []string
	portIDs   map[string]int32
	cpAlgo    int // the algorithm whose congestion points run in the switches (-1: none)

	// checks records the first invariant violation (a negative queue, a queue
	// above its switch's buffer); Run reports it as an error.
	check   error
	checkAt Time // when check was found

	// the wall clock algorithms may read to time their own work
	// (cc.Env.WallNanos), and the event series summarised in the results
	wall   func() int64
	sstats []seriesStat

	// a parallel run (parallel.go): par is shared by the coordinator (lane
	// -1) and its lanes (0, 1, ...); laneStarts are the flows a lane started
	// since the last meeting
	par        *parallel
	lane       int32
	wantLanes  int    // SetLanes, until the run starts
	oneLaneWhy string // why a run asked to go in lanes went in one
	laneStarts []int32
	finals     []finalAck // a lane's flows' last ACKs on their way (watchFinal)
}

// algoRun is one AlgoSpec as the run uses it.
type algoRun struct {
	spec      AlgoSpec
	params    cc.Params
	nicAck    uint8 // the class of its ACKs at the sending NIC (cc.Algorithm.AckHigh)
	extraHdr  int32 // the algorithm's own header bytes (data and ACK)
	resched   bool  // a rate change moves the next send (cc.Algorithm.RateChangeReschedules)
	intFixed  int32
	intPerHop int32
	series    []Metric              // metric id of each of the algorithm's series
	statOf    []int32               // index in Sim.sstats of each series, -1 if not summarised
	rxOf      map[int32]int32       // receiving host -> index into Sim.rx (algorithms with a receiver)
	conns     map[[2]int32]*cc.Conn // (source, destination host) -> connection, when the algorithm asks
	driven    bool                  // cc.Algorithm.ReceiverDriven
	spray     bool                  // its data packets are sprayed per packet (switch.routing or its spray parameter)
	srpt      bool                  // its sending NICs serve shortest remaining first (cc.Algorithm.SenderSRPT)
}

// rxState is one receiver-side algorithm instance: one per receiving host
// and algorithm.
type rxState struct {
	r      cc.Receiver
	timer  cc.ReceiverTimer // nil unless it arms timers
	obs    cc.RxObserver    // nil unless it watches the NIC's RX
	ctrl   cc.CtrlReceiver  // nil unless it takes control packets
	ender  cc.FlowEnder     // nil unless it wants to know when a flow is in
	env    *rxEnv
	algo   int32
	host   int32
	timers [cc.MaxTimers]timerSlot
}

type nodeState struct {
	name   string
	kind   NodeKind
	ports  []int32 // egress ports of this node
	hostIx int32   // index among hosts, -1 for switches
	rx     []int32 // receivers at this host (indexes into Sim.rx)
	// switch buffer (MMU) state
	mmu mmu
}

// mmu is the shared-buffer accounting of one switch, after HPCC's SwitchMmu.
type mmu struct {
	buffer     int64
	totalHdrm  int64
	totalRsrv  int64
	sharedUsed int64
	used       int64 // all admitted data-class bytes, for drop-tail and checks
	maxUsed    int64
}

// portState is one egress port and the link direction that starts at it.
// Its fields are grouped by who writes them, a cache line (64 bytes) per
// group, so that in a parallel run the two lanes at the ends of a link
// between lanes do not pass a line back and forth with every packet that
// crosses (TestPortLayout checks the groups' offsets, and that newPorts
// starts the array on a line):
//   - line 0, the link: read by both ends, written only by scripted link
//     events (never in a parallel run);
//   - line 1, the wire: written by the link's far end, which is the
//     peer's lane in a parallel run;
//   - the rest: the port's node's.
type portState struct {
	// line 0
	up        bool
	host      bool // egress port of a host NIC
	cut       bool // a parallel run's link to another lane (handOff)
	watch     bool // a parallel run's link into a host, watched for flows' last ACKs (watchFinal)
	ecn       bool // ECN marking on this egress port
	toSwitch  bool // the peer is a switch (onArrive)
	node      int32
	peer      int32
	wireGen   uint32
	psPerByte Time // serialisation time of one byte when exact, else 0
	delay     Time
	rate      int64
	loss      float64
	kmin      int64

	// line 1
	wireBytes int64
	wire      wireRing // the link's direction that starts at this port
	_         [64 - 8 - unsafe.Sizeof(wireRing{})]byte

	// the node's own, in the lines a packet touches: a packet leaving
	// through the port reads and writes lines 2 to 4 and the line of its
	// class's queue (6, for the two classes nearly every run uses), and a
	// packet entering the switch through the port's link the ingress line
	// (11, for those classes); at a thousand hosts the ports outgrow the
	// core's cache, and each line more is a miss more per packet
	// (TestPortLayout checks the lines)

	// line 2, the egress
	paused      uint16 // PFC: bit c set while data class c is paused by the downstream node
	kickPending bool
	sending     bool   // transmit is picking a packet (guards re-entry)
	queued      uint16 // bit c set while queue q[c] holds a packet (enqueue, release)
	kickGen     uint32
	busyUntil   Time
	kickAt      Time
	bytes       int64 // queued, all classes
	txBytes     int64
	kmax        int64
	pmax        float64

	// line 3: the queue-length statistics every packet updates
	hist qhist
	qmax int64 // longest queue, bytes
	// line 4: statistics, and the bytes of each class queue
	busy     Time  // serialisation time of everything sent
	dataPkts int64 // data packets that left a switch port
	qBytes   [nQueue]int64
	// line 5: the rest of qBytes, and statistics of marked and dropped
	// packets
	marks     int64
	marksTick int64
	drops     int64
	dropsTick int64
	// lines 6 to 10: the class queues, two to a line
	q [nQueue]ring

	// line 11, the ingress: buffer accounting of packets that entered this
	// port's node through this port's link (the port is the "ingress" of
	// HPCC's MMU)
	pfcSent  uint16 // PFC: bit c set while we have paused data class c of the peer
	shift    uint8  // PFC: the dynamic threshold is the free buffer >> shift
	headroom int64  // per class
	in       [nClass]ingressBytes

	// credit queue (cc.CreditSpec): a credit may leave at crTAT − crBurst
	// or later (a token bucket as GCRA); crT is one credit's share of the
	// link
	crTAT, crT, crBurst Time
	crDrops             int64

	// host NIC: the flows it sends (round robin as HPCC's RdmaEgressQueue)
	qps    []int32
	rrLast int

	// cold
	pausesSent  int64
	pausedSince Time
	pausedTotal Time
	qmonNext    Time    // the first queue sample not yet counted (RecordQueueSamples)
	qmonCount   []int64 // samples per length bucket
	rng         rand.PCG
	cp          cc.CongestionPoint
	cpEnv       *cpEnv
	// (the fields make whole lines, so that every port's line 0 starts
	// one: pad here when they do not)
}

// newPorts makes n ports in an array that starts on a cache line: Go
// starts an allocation over 32 KB on a page, and a smaller one with
// pointers 8 bytes after a line (its header), so the array is never
// smaller than that.
func newPorts(n int) []portState {
	const least = 32<<10/int(unsafe.Sizeof(portState{})) + 1
	return make([]portState, n, max(n, least))
}

type flowState struct {
	id         int32
	src, dst   int32
	size       int64
	algo       int32
	state      uint8
	port       int32 // sender NIC port
	hashData   uint32
	hashAck    uint32
	baseRTT    Time
	maxBDP     int64
	idealFCT   Time
	bottleneck int64
	lineRate   int64 // sender NIC rate, from the topology at the start of the run
	hops       int   // switches on the path at the start of the run

	// In a parallel run, the source's lane writes the sender's fields and
	// the destination's lane the receiver's: the pads keep them, and the
	// fields above that both read, on separate cache lines.
	_ [64]byte

	// sender
	sndNxt, sndUna, sndMax int64
	rate                   int64
	window                 int64
	nextAvail              Time
	lastSendAt             Time
	lastPktSize            int64
	sender                 cc.Sender
	sendObs                cc.SendObserver
	classer                cc.DataClasser // nil: every packet in the first data class
	sampler                cc.Sampler
	onCNP                  cc.CNPHandler
	onQCN                  cc.QCNHandler
	onTimer                cc.TimerHandler
	onTimeout              cc.TimeoutHandler
	onCtrl                 cc.CtrlHandler
	limit                  int64  // packets start only below this byte (cc.DrivenEnv.SetLimit)
	rtxFrom, rtxTo         int64  // a range to send again before new data (cc.DrivenEnv.Resend)
	echo                   int64  // carried by data packets (cc.DrivenEnv.Echo)
	route                  uint64 // the path of the latest credit, for the data it releases
	sprayN                 uint32 // data packets sent, for per-packet spraying
	env                    *flowEnv
	timers                 [cc.MaxTimers]timerSlot
	rtoGen                 uint32
	rtoPending             bool
	rtoAt                  Time
	lastProgress           Time
	backoff                int
	dirty                  bool // rate or window changed during a callback
	retxBytes              int64
	timeouts               int
	srtt, rttvar           Time // RFC 6298 RTT estimate from echoed send times
	hasRTT                 bool

	_ [64]byte

	// receiver
	rcvNxt     int64
	rxPkts     int32 // data packets since the previous ACK
	rxMarked   int32 // of those, ECN-marked
	rxInOrder  int32 // in-order packets since the previous ACK
	lastNack   int64
	nackUntil  Time
	lastCNP    Time
	cnpEver    bool
	delivered  int64
	sampledDel float64 // delivered less rxPending at the previous sample
	sampledAt  Time    // the previous sample, or the flow's start
	// rxPending bytes of delivered payload not yet counted by throughput_bps
	// at rxPendAt: each delivery is spread over the time the receiver's
	// link takes to carry it (rxDeliver)
	rxPending  float64
	rxPendAt   Time
	halfDel    int64
	halfActive bool
	rxBits     []uint64 // receiver-driven: packets received (index seq/MTU)
	rxHigh     int64    // receiver-driven: one past the highest byte received

	startAt, finishAt Time
	gauges            []gauge
}

type timerSlot struct {
	at    Time
	gen   uint32
	armed bool
}

type gauge struct {
	v   float64
	set bool
}

// counters are kept independently at the places bytes enter and leave the
// network, so that Conservation can check them against queues and links.
type counters struct {
	created  [numPktKinds]int64 // bytes put into the network (or added to a packet by INT)
	consumed [numPktKinds]int64 // bytes taken out at their destination
	dropped  [numPktKinds]int64 // bytes dropped
	drops    int64              // packets dropped
	retx     int64              // data payload bytes sent again
}

// New prepares a run. The Config must have been validated (package scenarios
// does that); New still refuses inconsistent input with an error.
func New(cfg Config) (*Sim, error) {
	if err := CheckTopology(cfg.Nodes, cfg.Links); err != nil {
		return nil, fmt.Errorf("sim: %w", err)
	}
	if h := cfg.Host; h.MTU <= 0 || h.Header < 0 || h.IdealHeader < 0 || h.Ack <= 0 || h.Nack <= 0 || h.AckHeader < 0 || h.AckEvery < 1 {
		return nil, errors.New("sim: host mtu, ack and nack must be > 0, headers >= 0, ackEvery >= 1")
	}
	if cfg.Switch.Buffer <= 0 {
		return nil, errors.New("sim: switch buffer must be > 0")
	}
	if len(cfg.Algos) == 0 {
		return nil, errors.New("sim: no algorithm")
	}
	if d := cfg.Switch.DataClasses; d < 0 || d > MaxDataClasses {
		return nil, &FieldError{Field: "switch.dataClasses", Msg: fmt.Sprintf("must be from 1 to %d, got %d", MaxDataClasses, d)}
	}
	if cfg.Switch.DataClasses == 0 {
		cfg.Switch.DataClasses = 1
	}
	s := &Sim{cfg: cfg, pk: newPool(), groupLeft: map[int]int{}, groupAfter: map[int][]int32{}, lane: -1}
	s.wall = cfg.WallClock
	s.ackClass = classData
	s.nData = uint8(cfg.Switch.DataClasses)
	s.dataMask = uint16(1)<<(s.nData+1) - 2
	if cfg.Switch.AckHigh {
		s.ackClass = classHigh
	}
	if s.wall == nil {
		origin := time.Now()
		s.wall = func() int64 { return int64(time.Since(origin)) }
	}
	s.end = MaxDuration
	if cfg.Duration > 0 {
		s.end = cfg.Duration
	}
	if n := max(2*len(cfg.Links), len(cfg.Flows), len(cfg.Events)); n >= maxEventObj {
		return nil, fmt.Errorf("sim: %d ports, %d flows and %d scripted events: each must be under %d", 2*len(cfg.Links), len(cfg.Flows), len(cfg.Events), maxEventObj)
	}
	if err := s.buildNodes(); err != nil {
		return nil, err
	}
	s.prefetch = len(s.ports) >= prefetchPorts
	s.initQueue()
	if err := s.buildAlgos(); err != nil {
		return nil, err
	}
	s.rt.compute(s)
	s.computeBaseRTTs()
	if s.flowCount {
		s.fc.timeout = s.flowCountTimeout() // may depend on the base RTTs
	}
	s.rtoMin = s.minRTO()
	if err := s.buildFlows(); err != nil {
		return nil, err
	}
	s.buildWorkload()
	if err := s.buildEvents(); err != nil {
		return nil, err
	}
	if err := s.tel.init(s); err != nil {
		return nil, err
	}
	if cfg.Duration > 0 {
		s.q.push(cfg.Duration/2, evHalf, 0, 0)
	}
	if len(s.flows) == 0 && cfg.Duration == 0 {
		s.stop("no flows")
	}
	return s, nil
}

func (s *Sim) buildNodes() error {
	cfg := &s.cfg
	s.nodes = make([]nodeState, len(cfg.Nodes))
	for i, n := range cfg.Nodes {
		s.nodes[i] = nodeState{name: n.Name, kind: n.Kind, hostIx: -1}
		if n.Kind == Host {
			s.nodes[i].hostIx = int32(len(s.hosts))
			s.hosts = append(s.hosts, int32(i))
		}
	}
	// the NIC rate is the host link rate (HPCC uses the first host's)
	var nicRate int64
	for _, l := range cfg.Links {
		if cfg.Nodes[l.A].Kind == Host || cfg.Nodes[l.B].Kind == Host {
			nicRate = l.Rate
			break
		}
	}
	// the largest packet on the wire, for the PFC headroom
	maxPkt := cfg.Host.MTU + cfg.Host.Header
	var maxINT int64
	for _, a := range cfg.Algos {
		if a.Algo != nil {
			maxINT = max(maxINT, a.Algo.INT.HeaderBytes+a.Algo.INT.FixedBytes+cc.MaxHops*a.Algo.INT.PerHopBytes)
		}
	}
	maxPkt += maxINT
	s.ports = newPorts(2 * len(cfg.Links))
	for i, l := range cfg.Links {
		for d := 0; d < 2; d++ {
			from, to := l.A, l.B
			if d == 1 {
				from, to = l.B, l.A
			}
			id := int32(2*i + d)
			p := &s.ports[id]
			p.node, p.peer = int32(from), int32(to)
			p.toSwitch = cfg.Nodes[to].Kind == Switch
			p.rate, p.delay = l.Rate, l.Delay
			if 8*int64(Second)%l.Rate == 0 {
				p.psPerByte = Time(8 * int64(Second) / l.Rate)
			}
			p.up = true
			p.host = cfg.Nodes[from].Kind == Host
			p.rng = *rand.NewPCG(cfg.Seed, uint64(id)*0x9e3779b97f4a7c15+1)
			s.nodes[from].ports = append(s.nodes[from].ports, id)
			if !p.host {
				sw := cfg.Switch
				factor := sw.HeadroomFactor
				if factor == 0 {
					factor = 3
				}
				// HPCC's headroom is factor × rate × delay. What a PAUSE must
				// absorb is what arrives while it waits behind a packet, crosses
				// the link, and the upstream finishes its packet: two link
				// delays of data plus two packets and the frame; on short links
				// that is more than HPCC's, and the fabric must stay lossless.
				inFlight := mulDiv(l.Rate, int64(l.Delay), 8*int64(Second))
				p.headroom = max(factor*inFlight, 2*inFlight+2*maxPkt+pfcFrameBytes)
				shift := uint8(3)
				r := l.Rate
				for r > nicRate && shift > 0 && nicRate > 0 {
					shift--
					r /= 2
				}
				p.shift = shift
				if sw.ECN.Enabled {
					p.ecn = true
					p.kmin, p.kmax, p.pmax = sw.ECN.Kmin, sw.ECN.Kmax, sw.ECN.Pmax
					if sw.ECN.ScaleWithRate && sw.ECN.RefRate > 0 {
						p.kmin = mulDiv(sw.ECN.Kmin, l.Rate, sw.ECN.RefRate)
						p.kmax = mulDiv(sw.ECN.Kmax, l.Rate, sw.ECN.RefRate)
					}
				}
			}
		}
	}
	reserve := cfg.Switch.Reserve
	for i := range s.nodes {
		n := &s.nodes[i]
		if n.kind != Switch {
			continue
		}
		n.mmu.buffer = cfg.Switch.Buffer
		// every (ingress port, data class) pair has its own headroom and
		// reserve (802.1Qbb; HPCC's SwitchMmu keeps them per port and
		// queue), so the buffer sets both aside for each class
		classes := int64(s.nData)
		for _, pid := range n.ports {
			n.mmu.totalHdrm += s.ports[pid].headroom * classes
			n.mmu.totalRsrv += reserve * classes
		}
		if cfg.Switch.PFC && n.mmu.totalHdrm+n.mmu.totalRsrv >= n.mmu.buffer {
			what := "PFC headroom and reserve"
			if classes > 1 {
				what = fmt.Sprintf("PFC headroom and reserve for %d data classes", classes)
			}
			return &FieldError{Field: "switch.buffer", Msg: fmt.Sprintf(
				"%d B is not more than switch %s's %s (%d B); give it more or turn PFC off",
				n.mmu.buffer, n.name, what, n.mmu.totalHdrm+n.mmu.totalRsrv)}
		}
	}
	return nil
}

// initQueue sizes the calendar queue from the links: buckets of about a
// sixteenth of the shortest packet time, and a span of two of the longest
// hop times (delay plus a full packet), which covers the scheduling horizon
// of almost every packet event.
func (s *Sim) initQueue() {
	pkt := s.cfg.Host.MTU + s.cfg.Host.Header
	width, span := Time(1)<<40, Time(0)
	for _, l := range s.cfg.Links {
		ser := serTime(pkt, l.Rate)
		width = min(width, ser/2)
		span = max(span, 2*(l.Delay+ser))
	}
	s.q.init(max(width, 256), span)
}

// flowCountTimeout is the switches' flow-count idle timeout. The first
// algorithm with a parameter that sets it (cc.IntSpec.FlowCountTimeoutParam)
// decides: a positive value is the timeout; 0 is the larger of
// switch.flowCountTimeout and four times the largest base RTT, so that a
// flow sending one packet per RTT stays counted even when queueing has
// stretched its RTT to four base RTTs (with 1 ms links the fixed 100 µs
// would forget every flow between two of its packets). Without such an
// algorithm, switch.flowCountTimeout.
func (s *Sim) flowCountTimeout() Time {
	for i := range s.algos {
		a := &s.algos[i]
		if name := a.spec.Algo.INT.FlowCountTimeoutParam; name != "" {
			if v := a.params[name]; v > 0 {
				return Time(v * float64(Microsecond))
			}
			return max(s.cfg.Switch.FlowCountTimeout, 4*s.maxRTT)
		}
	}
	return s.cfg.Switch.FlowCountTimeout
}

func (s *Sim) buildAlgos() error {
	s.algos = make([]algoRun, len(s.cfg.Algos))
	for i, a := range s.cfg.Algos {
		if a.Algo == nil || a.Algo.NewSender == nil {
			return fmt.Errorf("sim: algorithm %d has no sender", i)
		}
		r := &s.algos[i]
		r.spec = a
		r.params = a.Params.Clone()
		if a.Algo.AckHigh(a.Params) {
			r.nicAck = classHigh
		} else {
			r.nicAck = classData
		}
		r.extraHdr = int32(a.Algo.INT.HeaderBytes)
		r.resched = a.Algo.RateChangeReschedules
		if s.cfg.Switch.INT {
			r.intFixed = int32(a.Algo.INT.FixedBytes)
			r.intPerHop = int32(a.Algo.INT.PerHopBytes)
		}
		if a.Algo.INT.FlowCount {
			s.flowCount = true
		}
		if a.Algo.NewReceiver != nil {
			r.rxOf = map[int32]int32{}
			s.hasRx = true
		}
		if a.Algo.Connections {
			r.conns = map[[2]int32]*cc.Conn{}
		}
		r.driven = a.Algo.ReceiverDriven
		r.srpt = a.Algo.SenderSRPT
		s.srpt = s.srpt || r.srpt
		r.spray = s.cfg.Switch.Spray || (a.Algo.SprayParam != "" && r.params[a.Algo.SprayParam] != 0)
		if a.Algo.Credit != nil && s.credit == nil {
			s.credit = a.Algo.Credit
		}
	}
	if s.credit != nil {
		if err := s.initCredits(); err != nil {
			return err
		}
	}
	// the switches push INT records only in a run with an algorithm that
	// reads them (its IntSpec adds INT bytes or needs the flow counter):
	// no other reads a packet's records
	read := s.flowCount
	for i := range s.algos {
		a := &s.algos[i]
		read = read || a.intFixed > 0 || a.intPerHop > 0
		s.intGrows = s.intGrows || a.intPerHop > 0
	}
	s.intOn = s.cfg.Switch.INT && read
	if s.flowCount {
		s.fc.init(len(s.ports), s.flowCountTimeout())
	}
	// event series summarised in the results, one per distinct name
	for i := range s.algos {
		a := &s.algos[i]
		for _, ser := range a.spec.Algo.Series {
			idx := int32(-1)
			if ser.Stats {
				for j := range s.sstats {
					if s.sstats[j].name == ser.Name {
						idx = int32(j)
					}
				}
				if idx < 0 {
					idx = int32(len(s.sstats))
					s.sstats = append(s.sstats, seriesStat{name: ser.Name})
				}
			}
			a.statOf = append(a.statOf, idx)
		}
	}
	// congestion points (QCN): one per switch egress port, of the first
	// algorithm in the run that has one
	s.cpAlgo = -1
	for i := range s.algos {
		a := s.algos[i].spec.Algo
		if a.NewCongestionPoint == nil || s.cpAlgo >= 0 {
			continue
		}
		s.cpAlgo = i
		for pid := range s.ports {
			p := &s.ports[pid]
			if p.host || p.cp != nil {
				continue
			}
			p.cp = a.NewCongestionPoint(cc.PortInfo{ID: int32(pid), Rate: p.rate, Name: s.PortName(int32(pid))}, s.algos[i].params)
			p.cpEnv = &cpEnv{s: s, p: int32(pid)}
		}
	}
	return nil
}

func (s *Sim) buildFlows() error {
	cfg := &s.cfg
	s.flows = make([]flowState, len(cfg.Flows))
	s.routes = make([]flowRoute, len(cfg.Flows))
	for i, fs := range cfg.Flows {
		if fs.Src < 0 || fs.Src >= len(cfg.Nodes) || fs.Dst < 0 || fs.Dst >= len(cfg.Nodes) ||
			cfg.Nodes[fs.Src].Kind != Host || cfg.Nodes[fs.Dst].Kind != Host {
			return fmt.Errorf("sim: flow %d: src and dst must be hosts", i)
		}
		if fs.Src == fs.Dst {
			return fmt.Errorf("sim: flow %d: src and dst are the same host", i)
		}
		if fs.Size <= 0 {
			return fmt.Errorf("sim: flow %d: size must be > 0", i)
		}
		if fs.Algo < 0 || fs.Algo >= len(s.algos) {
			return fmt.Errorf("sim: flow %d: unknown algorithm index %d", i, fs.Algo)
		}
		if !s.rt.reachable(s, int32(fs.Src), int32(fs.Dst)) {
			return fmt.Errorf("sim: flow %d: no path from %s to %s", i, cfg.Nodes[fs.Src].Name, cfg.Nodes[fs.Dst].Name)
		}
		f := &s.flows[i]
		f.id = int32(i)
		f.src, f.dst = int32(fs.Src), int32(fs.Dst)
		f.size = fs.Size
		f.algo = int32(fs.Algo)
		f.port = -1
		// 4-tuple hashes: sip, dip, sport (one per flow), dport 100, as in HPCC
		sport := uint32(10000 + i)
		f.hashData = hash4(uint32(fs.Src), uint32(fs.Dst), sport, 100)
		f.hashAck = hash4(uint32(fs.Dst), uint32(fs.Src), 100, sport)
		s.setFlowPath(f)
		if pid := s.rt.next(s, f.src, f.dst, f.hashData); pid >= 0 {
			f.lineRate = s.ports[pid].rate
		}
		f.hops = int(s.rt.hops(s, f.src, f.dst)) - 1
		if fs.Group >= 0 {
			s.groupLeft[fs.Group]++
		}
		s.pending++
		if fs.After >= 0 {
			s.waiting++
			s.groupAfter[fs.After] = append(s.groupAfter[fs.After], int32(i))
			continue
		}
		if fs.Start < 0 {
			return fmt.Errorf("sim: flow %d: negative start", i)
		}
		s.q.push(fs.Start, evFlowStart, int32(i), 0)
	}
	for g := range s.groupAfter {
		if s.groupLeft[g] == 0 {
			return fmt.Errorf("sim: flows wait for group %d, which has no flows", g)
		}
	}
	return nil
}

func (s *Sim) buildEvents() error {
	for i, e := range s.cfg.Events {
		if e.At < 0 {
			return fmt.Errorf("sim: event %d: negative time", i)
		}
		switch e.Kind {
		case EventParams:
			if e.Algo >= len(s.algos) {
				return fmt.Errorf("sim: event %d: unknown algorithm index %d", i, e.Algo)
			}
		case EventLinkDown, EventLinkUp, EventLoss:
			if _, ok := s.PortID(e.Port); !ok {
				return fmt.Errorf("sim: event %d: unknown port %q", i, e.Port)
			}
			if e.Kind == EventLoss && (e.Loss < 0 || e.Loss > 1) {
				return fmt.Errorf("sim: event %d: loss %g outside [0,1]", i, e.Loss)
			}
		default:
			return fmt.Errorf("sim: event %d: unknown kind %d", i, e.Kind)
		}
		s.q.push(e.At, evScript, int32(i), 0)
		s.scripts++
	}
	return nil
}

// Now is the current simulated time.
func (s *Sim) Now() Time { return s.now }

// End is the time the run stops at, as far as is known now.
func (s *Sim) End() Time { return s.end }

// Done reports whether the run has reached its end.
func (s *Sim) Done() bool { return s.stopped }

// Events is the number of events processed so far.
func (s *Sim) Events() uint64 { return s.events }

// FlowsFinished is the number of flows that have finished.
func (s *Sim) FlowsFinished() int { return s.finished }

// MaxBaseRTT is the maximum base RTT over all host pairs.
func (s *Sim) MaxBaseRTT() Time { return s.maxRTT }

// MaxBDP is the maximum bandwidth-delay product over all host pairs, in bytes.
func (s *Sim) MaxBDP() int64 { return s.maxBDP }

// RunUntil processes every event before time limit and returns with Now()
// at limit; when limit is (or is past) the end of the run, it also processes
// the events at the end and stops the run. Stopping short of the events at
// limit means that a change made between slices (ApplyParams) comes before
// them, exactly as a scripted event at that time does, so a live change and
// its replay give the same run. The clock never goes back: a limit before
// Now() does nothing.
func (s *Sim) RunUntil(limit Time) error {
	final := limit >= s.end
	if final {
		limit = s.end
	}
	if s.stopped || (!final && limit <= s.now) {
		return s.check
	}
	if s.par == nil && s.wantLanes > 1 {
		if nodeLane, look, why := s.parallelPlan(s.wantLanes); why == "" {
			s.startParallel(nodeLane, look)
		} else {
			s.oneLaneWhy = why
		}
		s.wantLanes = 0
	}
	if s.par != nil {
		s.runParallel(limit, final)
		return s.check
	}
	for !s.stopped {
		if s.q.len() == 0 {
			// nothing left to happen
			switch {
			case s.cfg.Duration == 0:
				s.stop("idle")
			case final:
				s.now = s.end
				s.stop("duration")
			default:
				s.now = limit
				return s.check
			}
			break
		}
		s.qLenSum += uint64(s.q.len())
		ev := s.q.pop()
		if ev.at > limit || (ev.at == limit && !final) {
			s.q.unpop(ev)
			if final {
				s.stopAtEnd()
				break
			}
			s.now = limit
			return s.check
		}
		s.now = ev.at
		s.events++
		if s.prefetch {
			s.prefetchNext()
		}
		s.dispatch(&ev)
	}
	return s.check
}

// prefetchPorts is the fabric size (ports, two per link) from which the
// engine prefetches. On a large fabric the ports and packets an event
// touches have left the caches since they were last used, and an event
// waits on them one after another (port, then its wire, then the packet);
// asking for the next events' memory while this one runs overlaps those
// waits. Measured in one process, runs alternated, medians: 1024 hosts
// (6144 ports) 1.15-1.44x, the 320-host WebSearch 1.09x, 432 hosts
// 1.04-1.09x, 128 hosts (768 ports) 1.04x; on the 16-host fat-tree (under
// 100 ports), whose working set stays in L2, it costs 4%.
const prefetchPorts = 512

// prefetchNext asks for the memory of the events that follow in the
// current bucket: the port of the one after next, and the packet at the
// head of the next one's wire (its port was asked for one event ago; the
// wire's slot itself may still miss, and asking for it a step earlier too
// measured no faster). A hint only: it changes no state.
func (s *Sim) prefetchNext() {
	if nx := s.q.peek(1); nx != nil && (nx.kind() == evArrive || nx.kind() == evKick) {
		prefetch(unsafe.Pointer(&s.ports[nx.obj()]))
		s.prefetches++
	}
	if nx := s.q.peek(0); nx != nil && nx.kind() == evArrive {
		if p := &s.ports[nx.obj()]; p.wire.n > 0 {
			prefetch(unsafe.Pointer(s.pk.at(p.wire.peek().id)))
			s.prefetches++
		}
	}
}

// Run runs to the end.
func (s *Sim) Run() error { return s.RunUntil(s.end) }

// Stop ends the run now (e.g. on Ctrl-C); results cover what was simulated.
func (s *Sim) Stop() { s.stop("stopped") }

// stopAtEnd ends a run that has reached its end (its duration, or the
// time cap) with events still to come.
func (s *Sim) stopAtEnd() {
	s.now = s.end
	if s.cfg.Duration > 0 {
		s.stop("duration")
	} else {
		s.stop("time cap (10 s)")
	}
}

func (s *Sim) stop(reason string) {
	if s.stopped {
		return
	}
	s.stopped = true
	s.end = s.now
	s.endReason = reason
	s.tel.finish(s)
}

func (s *Sim) dispatch(ev *event) {
	switch ev.kind() {
	case evArrive:
		s.onArrive(ev.obj(), ev.arg())
	case evKick:
		p := &s.ports[ev.obj()]
		if ev.arg() != p.kickGen || !p.kickPending {
			return
		}
		p.kickPending = false
		s.transmit(ev.obj())
	case evFlowStart:
		s.startFlow(ev.obj())
	case evTimer:
		s.onTimer(ev.obj(), ev.arg())
	case evRTO:
		s.onRTO(ev.obj(), ev.arg())
	case evSample:
		s.tel.sample(s)
	case evScript:
		s.runScript(int(ev.obj()))
	case evHalf:
		s.halfSnapshot()
	case evRxTimer:
		s.onRxTimer(ev.obj(), ev.arg())
	}
}

// violate records the first invariant violation.
func (s *Sim) violate(format string, args ...any) {
	if s.check == nil {
		s.check = fmt.Errorf("sim: invariant violated at %d ps: "+format, append([]any{s.now}, args...)...)
		s.checkAt = s.now
	}
}
