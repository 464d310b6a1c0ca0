package sim

import (
	"fmt"
	"math/bits"
)

// ingressBytes is the buffer a data class holds through one ingress port,
// as HPCC's SwitchMmu's ingress_bytes and hdrm_bytes.
type ingressBytes struct {
	bytes int64 // in the reserve and the shared buffer
	hdrm  int64 // in the headroom
}

// qhist is a time-weighted histogram of a queue's length, updated at every
// exact change of the queue. Lengths below 256 bytes have their own bucket;
// above, each power of two is split into 128 buckets, so a bucket's lower
// bound is within 0.8% of any length in it.
type qhist struct {
	last Time
	// a write-combining cache of the two buckets added to most recently: a
	// queue moves between a few lengths most of the time, so most updates
	// stay in these fields instead of touching a random line of t (kilobytes
	// per port on a deep queue). Integer sums make the result exact.
	cb  [2]int32
	cdt [2]Time
	t   []Time // time spent in each bucket, not counting the cache
}

const histSub = 7 // 2^7 buckets per power of two

func bucketOf(v int64) int {
	if v < 256 {
		return int(v)
	}
	e := 63 - bits.LeadingZeros64(uint64(v)) // >= 8
	return 256 + (e-8)<<histSub + int((v>>(e-histSub))&(1<<histSub-1))
}

func bucketLow(b int) int64 {
	if b < 256 {
		return int64(b)
	}
	b -= 256
	e := b>>histSub + 8
	m := int64(b&(1<<histSub-1)) | 1<<histSub
	return m << (e - histSub)
}

// advance accounts the time since the last call at level.
func (h *qhist) advance(level int64, now Time) {
	if dt := now - h.last; dt > 0 {
		switch b := int32(bucketOf(level)); b {
		case h.cb[0]:
			h.cdt[0] += dt
		case h.cb[1]:
			h.cdt[1] += dt
		default:
			h.add(int(h.cb[1]), h.cdt[1])
			h.cb[1], h.cdt[1] = h.cb[0], h.cdt[0]
			h.cb[0], h.cdt[0] = b, dt
		}
	}
	h.last = now
}

func (h *qhist) add(b int, dt Time) {
	if dt == 0 {
		return
	}
	if b >= len(h.t) {
		n := b + 1
		if n < 2*len(h.t) {
			n = 2 * len(h.t)
		}
		t := make([]Time, n)
		copy(t, h.t)
		h.t = t
	}
	h.t[b] += dt
}

// flush empties the cache into t; call it before reading t.
func (h *qhist) flush() {
	for i := range h.cb {
		h.add(int(h.cb[i]), h.cdt[i])
		h.cdt[i] = 0
	}
}

// percentile returns the time-weighted nearest-rank percentile: the smallest
// length whose cumulative time exceeds p of the total.
func (h *qhist) percentile(p float64) int64 {
	var total Time
	for _, d := range h.t {
		total += d
	}
	if total == 0 {
		return 0
	}
	target := Time(float64(total) * p)
	var cum Time
	for b, d := range h.t {
		cum += d
		if cum > target {
			return bucketLow(b)
		}
	}
	return bucketLow(len(h.t) - 1)
}

// seriesStat summarises every value of one event series (cc.SeriesSpec.Stats)
// in a histogram with qhist's buckets: exact below 256, within 0.8% above.
type seriesStat struct {
	name   string
	counts []int64
	n      int64
	sum    float64
	max    float64
}

func (st *seriesStat) add(v float64) {
	if v != v { // NaN
		return
	}
	b := 0
	if v >= 1 {
		b = bucketOf(int64(min(v, 1<<62)))
	}
	if b >= len(st.counts) {
		n := max(b+1, 2*len(st.counts))
		c := make([]int64, n)
		copy(c, st.counts)
		st.counts = c
	}
	st.counts[b]++
	if st.n == 0 || v > st.max {
		st.max = v
	}
	st.n++
	st.sum += v
}

// percentile is the nearest-rank percentile (the value of rank ⌊n·p⌋ in
// sorted order), reported as its bucket's lower bound.
func (st *seriesStat) percentile(p float64) float64 {
	rank := int64(float64(st.n) * p)
	if rank >= st.n {
		rank = st.n - 1
	}
	var cum int64
	for b, c := range st.counts {
		cum += c
		if cum > rank {
			return float64(bucketLow(b))
		}
	}
	return st.max
}

// SeriesStats summarises one event series over the run.
type SeriesStats struct {
	Name  string
	Count int64
	Mean  float64
	P50   float64 // nearest rank, exact below 256 and within 0.8% above
	P99   float64
	Max   float64 // exact
}

// QueueDist is the time-weighted distribution of the queue length over a set
// of egress ports: each port contributes every instant of the run, so the
// fraction at or below a length is the share of port-time spent there (what
// sampling every port at a very fine interval would give).
type QueueDist struct {
	Ports               int
	P50, P90, P99, P999 int64 // bucket lower bounds, as PortResult's percentiles
	Max                 int64 // exact
	CDF                 []CDFPoint
}

// CDFPoint is the fraction of port-time with a queue of at most Bytes.
type CDFPoint struct {
	Bytes    int64
	Fraction float64
}

// cdfPoints are the lengths at which QueueDist.CDF is reported.
var cdfPoints = []int64{0, 1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000, 500_000,
	1_000_000, 2_000_000, 5_000_000, 10_000_000}

// queueDist merges the histograms of the switch egress ports (already
// advanced to the end of the run).
func (s *Sim) queueDist() QueueDist {
	var merged qhist
	d := QueueDist{}
	for pid := range s.ports {
		p := &s.ports[pid]
		if p.host {
			continue
		}
		d.Ports++
		d.Max = max(d.Max, p.qmax)
		if len(p.hist.t) > len(merged.t) {
			t := make([]Time, len(p.hist.t))
			copy(t, merged.t)
			merged.t = t
		}
		for b, dt := range p.hist.t {
			merged.t[b] += dt
		}
	}
	d.P50, d.P90, d.P99, d.P999 = merged.percentile(0.5), merged.percentile(0.9), merged.percentile(0.99), merged.percentile(0.999)
	var total Time
	for _, dt := range merged.t {
		total += dt
	}
	if total == 0 {
		return d
	}
	for _, x := range cdfPoints {
		// buckets whose lengths are all ≤ x: those below x's own bucket, and
		// x's bucket when x is its lower bound's exact value (below 256)
		var cum Time
		lim := bucketOf(x)
		for b := 0; b < len(merged.t) && b <= lim; b++ {
			if b == lim && bucketLow(b) != x {
				break
			}
			cum += merged.t[b]
		}
		d.CDF = append(d.CDF, CDFPoint{Bytes: x, Fraction: float64(cum) / float64(total)})
	}
	return d
}

// FlowResult is one flow's outcome.
type FlowResult struct {
	ID        int
	Src, Dst  string
	Size      int64
	Start     Time
	Finish    Time // valid when Finished
	Finished  bool
	Started   bool
	FCT       Time
	IdealFCT  Time
	Algorithm string
	Tag       string
	Retx      int64 // payload bytes sent more than once
	Timeouts  int
}

// PortResult summarises one egress port over the run.
type PortResult struct {
	Name          string
	QueueP50      int64
	QueueP99      int64
	QueueMax      int64
	Utilization   float64 // fraction of the run the port was transmitting
	PauseFraction float64 // fraction of the run the port was paused by PFC
	Drops         int64
	Marks         int64
	DataPackets   int64 // data packets that left the port (switch ports)
	TxBytes       int64 // bytes the port has put on its link
	PausesSent    int64 // PAUSE frames this port sent upstream
	CreditDrops   int64 // credits its full credit queue dropped (cc.CreditSpec), not counted in Drops
	Switch        bool  // the port belongs to a switch
}

// Result is everything a finished (or stopped) run measured.
type Result struct {
	SimTime    Time
	Events     uint64
	EndReason  string
	Flows      []FlowResult
	Ports      []PortResult
	Drops      int64
	Jain       *float64 // nil when fewer than two flows span the second half
	MaxBaseRTT Time
	MaxBDP     int64
	// MaxSwitchBuffer is the highest buffer occupancy (admitted data bytes)
	// seen at any switch.
	MaxSwitchBuffer int64
	Retransmitted   int64 // payload bytes
	// SeriesStats summarises the algorithm event series that ask for it
	// (cc.SeriesSpec.Stats), such as MPCC's qp_solve_ns.
	SeriesStats []SeriesStats
	// SwitchQueues is the queue-length distribution over every switch
	// egress port (the MPCC thesis' queue CDF over all switches).
	SwitchQueues QueueDist
}

// FlowsFinished counts the finished flows.
func (r *Result) FlowsFinished() int {
	n := 0
	for _, f := range r.Flows {
		if f.Finished {
			n++
		}
	}
	return n
}

// Result builds the run's results; call it after the run has stopped.
func (s *Sim) Result() *Result {
	end := s.now
	r := &Result{SimTime: end, Events: s.events, EndReason: s.endReason, Drops: s.cnt.drops,
		MaxBaseRTT: s.maxRTT, MaxBDP: s.maxBDP, Retransmitted: s.cnt.retx}
	for i := range s.flows {
		f := &s.flows[i]
		fs := &s.cfg.Flows[i]
		fr := FlowResult{ID: i, Src: s.nodes[f.src].name, Dst: s.nodes[f.dst].name, Size: f.size,
			Start: fs.Start, IdealFCT: f.idealFCT, Algorithm: s.algos[f.algo].spec.Algo.Name, Tag: fs.Tag,
			Retx: f.retxBytes, Timeouts: f.timeouts, Started: f.state != flowPending}
		if f.state != flowPending {
			fr.Start = f.startAt
		} else if fs.After >= 0 {
			fr.Start = -1 // waits on a barrier: its start is not known
		}
		if f.state == flowDone {
			fr.Finished = true
			fr.Finish = f.finishAt
			fr.FCT = f.finishAt - f.startAt
		}
		r.Flows = append(r.Flows, fr)
	}
	for pid := range s.ports {
		p := &s.ports[pid]
		p.hist.advance(p.bytes, end)
		p.hist.flush()
		pr := PortResult{Name: s.PortName(int32(pid)), QueueP50: p.hist.percentile(0.5),
			QueueP99: p.hist.percentile(0.99), QueueMax: p.qmax, Drops: p.drops, Marks: p.marks, DataPackets: p.dataPkts, TxBytes: p.txBytes,
			PausesSent: p.pausesSent, CreditDrops: p.crDrops, Switch: !p.host}
		if end > 0 {
			busy := p.busy
			if over := p.busyUntil - end; over > 0 {
				busy -= over // the packet in flight at the end counts up to the end
			}
			pr.Utilization = float64(busy) / float64(end)
			paused := p.pausedTotal
			if p.paused != 0 {
				paused += end - p.pausedSince
			}
			pr.PauseFraction = float64(paused) / float64(end)
		}
		r.Ports = append(r.Ports, pr)
	}
	for i := range s.nodes {
		if s.nodes[i].mmu.maxUsed > r.MaxSwitchBuffer {
			r.MaxSwitchBuffer = s.nodes[i].mmu.maxUsed
		}
	}
	r.Jain = s.jain(end)
	r.SwitchQueues = s.queueDist()
	for i := range s.sstats {
		st := &s.sstats[i]
		ss := SeriesStats{Name: st.name, Count: st.n}
		if st.n > 0 {
			ss.Mean, ss.P50, ss.P99, ss.Max = st.sum/float64(st.n), st.percentile(0.5), st.percentile(0.99), st.max
		}
		r.SeriesStats = append(r.SeriesStats, ss)
	}
	return r
}

// halfSnapshot records every flow's delivered bytes at half the duration.
func (s *Sim) halfSnapshot() {
	for i := range s.flows {
		f := &s.flows[i]
		f.halfDel = f.delivered
		f.halfActive = f.state == flowActive
	}
}

// jain is Jain's fairness index over the flows active for the whole second
// half of a run with a duration, on their throughput in that half.
func (s *Sim) jain(end Time) *float64 {
	if s.cfg.Duration <= 0 || end < s.cfg.Duration {
		return nil
	}
	var sum, sq float64
	n := 0
	for i := range s.flows {
		f := &s.flows[i]
		if !f.halfActive || (f.state == flowDone && f.finishAt < end) {
			continue
		}
		x := float64(f.delivered - f.halfDel)
		sum += x
		sq += x * x
		n++
	}
	if n < 2 || sq == 0 {
		return nil
	}
	j := sum * sum / (float64(n) * sq)
	return &j
}

// Conservation is the byte balance of the run, from counters kept at the
// places bytes enter and leave the network and from a scan of every queue
// and link: Created = Consumed + Dropped + Queued + OnWire must hold for every
// packet kind.
type Conservation struct {
	Kinds    []string
	Created  []int64
	Consumed []int64
	Dropped  []int64
	Queued   []int64
	OnWire   []int64
	// packets: allocated from the pool vs found in queues and on links
	PacketsLive  int
	PacketsFound int
}

// Conservation scans the network and returns the balance.
func (s *Sim) Conservation() Conservation {
	c := Conservation{Kinds: pktKindNames[:]}
	n := int(numPktKinds)
	c.Created = append([]int64(nil), s.cnt.created[:]...)
	c.Consumed = append([]int64(nil), s.cnt.consumed[:]...)
	c.Dropped = append([]int64(nil), s.cnt.dropped[:]...)
	c.Queued = make([]int64, n)
	c.OnWire = make([]int64, n)
	for pid := range s.ports {
		p := &s.ports[pid]
		qp, wp := s.poolOf(p.node), s.poolOf(p.peer)
		for cl := 0; cl < nQueue; cl++ {
			for i := 0; i < int(p.q[cl].n); i++ {
				pk := qp.at(p.q[cl].at(i))
				c.Queued[pk.kind] += int64(pk.size)
				c.PacketsFound++
			}
		}
		for i := 0; i < int(p.wire.n); i++ {
			pk := wp.at(p.wire.at(i).id)
			c.OnWire[pk.kind] += int64(pk.size)
			c.PacketsFound++
		}
	}
	c.PacketsLive = s.pk.live
	if s.par != nil {
		for _, l := range s.par.lanes {
			c.PacketsLive += l.pk.live
		}
	}
	return c
}

// Check returns an error describing the first imbalance, or nil.
func (c Conservation) Check() error {
	for k := range c.Kinds {
		if c.Created[k] != c.Consumed[k]+c.Dropped[k]+c.Queued[k]+c.OnWire[k] {
			return fmt.Errorf("%s bytes: created %d != consumed %d + dropped %d + queued %d + on wire %d",
				c.Kinds[k], c.Created[k], c.Consumed[k], c.Dropped[k], c.Queued[k], c.OnWire[k])
		}
	}
	if c.PacketsLive != c.PacketsFound {
		return fmt.Errorf("packets: %d allocated but %d found in queues and on links", c.PacketsLive, c.PacketsFound)
	}
	return nil
}
