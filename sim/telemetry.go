package sim

import (
	"fmt"
	"slices"
	"sort"
	"strconv"

	"cclab/cc"
)

// Metric identifies a telemetry series. The built-in ones come first; each
// algorithm series of the run gets an id after them (see MetricName).
type Metric uint16

// Built-in metrics, named as in the results contract.
const (
	MetricQueue      Metric = iota // queue_bytes, per port
	MetricThroughput               // throughput_bps, per flow
	MetricRate                     // rate_bps, per flow
	MetricCwnd                     // cwnd_bytes, per flow
	MetricPFC                      // pfc_pause, per port
	MetricECN                      // ecn_marks, per port
	MetricDrops                    // drops, per port
	numBuiltinMetrics
)

// MetricInfo describes a built-in series: its name, unit ("B", "bps", or
// "" for a count or a flag), whether its entities are ports (else flows),
// how a chart condenses many samples into one point (the largest for
// queues and pauses, so a spike is never averaged away; the mean
// otherwise), and what it measures. Algorithm series are described by
// their cc.SeriesSpec; they belong to flows and are averaged.
type MetricInfo struct {
	Name    string
	Label   string
	Unit    string
	PerPort bool
	Max     bool
	Help    string
}

// BuiltinMetrics lists the built-in series in metric-id order.
var BuiltinMetrics = [numBuiltinMetrics]MetricInfo{
	{"queue_bytes", "queue", "B", true, true, "Bytes queued in the egress port at the sample instant, all priorities, wire bytes."},
	{"throughput_bps", "throughput", "bps", false, false, "Payload bytes delivered to the receiver during the last interval × 8 / interval, each packet counted as it crosses the link into the receiver (so never above that link's rate); a flow's first sample covers only its part of the interval."},
	{"rate_bps", "sending rate", "bps", false, false, "The sender's pacing rate; omitted while unlimited."},
	{"cwnd_bytes", "window", "B", false, false, "The sender's window; omitted while the algorithm uses none."},
	{"pfc_pause", "PFC pause", "", true, true, "1 if the port is paused by PFC at the sample instant, else 0."},
	{"ecn_marks", "ECN marks", "", true, false, "Packets ECN-marked at the port during the last interval."},
	{"drops", "drops", "", true, false, "Packets dropped at the port during the last interval."},
}

// Sample is one value of one series: metric of entity (a port id for port
// metrics, a flow id for flow metrics) at simulated time T.
type Sample struct {
	T      Time
	Metric Metric
	Entity int32
	Value  float64
}

// Observer receives samples as the run produces them, in time order. The
// batch is reused after the call returns.
type Observer interface {
	Observe(batch []Sample)
}

type telemetry struct {
	interval  Time
	ports     []int32 // sampled ports
	flowSel   []bool  // sampled flows (nil: all)
	active    []int32 // sampled flows not yet reported to their end, by id
	act       []int32 // the active ones at a sample (buffer)
	ended     []int32 // the ones that ended since the previous sample (buffer)
	names     []string
	perPort   []bool
	observers []Observer
	buf       []Sample
	evBuf     []Sample
	pfc       bool
	ecn       bool
	drops     bool
}

func (t *telemetry) init(s *Sim) error {
	tc := s.cfg.Telemetry
	t.interval = tc.Interval
	for _, m := range BuiltinMetrics {
		t.names = append(t.names, m.Name)
		t.perPort = append(t.perPort, m.PerPort)
	}
	// algorithm series: one metric per distinct name in the run
	for i := range s.algos {
		a := &s.algos[i]
		for _, ser := range a.spec.Algo.Series {
			id := -1
			for j, n := range t.names {
				if n == ser.Name {
					id = j
					break
				}
			}
			if id < 0 {
				id = len(t.names)
				t.names = append(t.names, ser.Name)
				t.perPort = append(t.perPort, false)
			}
			a.series = append(a.series, Metric(id))
		}
	}
	if tc.AllQueues {
		for pid := range s.ports {
			t.ports = append(t.ports, int32(pid))
		}
	} else {
		for _, name := range tc.Queues {
			pid, ok := s.PortID(name)
			if !ok {
				return fmt.Errorf("sim: telemetry: unknown port %q", name)
			}
			t.ports = append(t.ports, pid)
		}
		sort.Slice(t.ports, func(i, j int) bool { return t.ports[i] < t.ports[j] })
	}
	if !tc.AllFlows {
		t.flowSel = make([]bool, len(s.flows))
		for _, id := range tc.Flows {
			if id < 0 || id >= len(s.flows) {
				return fmt.Errorf("sim: telemetry: unknown flow %d", id)
			}
			t.flowSel[id] = true
		}
	}
	t.pfc = s.cfg.Switch.PFC
	t.ecn = s.cfg.Switch.ECN.Enabled
	t.drops = !s.cfg.Switch.PFC
	for _, e := range s.cfg.Events {
		if e.Kind != EventParams {
			t.drops = true
		}
	}
	if t.interval > 0 {
		s.q.push(t.interval, evSample, 0, 0)
	}
	return nil
}

// Subscribe adds an observer; call before running.
func (s *Sim) Subscribe(o Observer) { s.tel.observers = append(s.tel.observers, o) }

// MetricName returns a metric's series name.
func (s *Sim) MetricName(m Metric) string {
	if int(m) < len(s.tel.names) {
		return s.tel.names[m]
	}
	return "metric" + strconv.Itoa(int(m))
}

// MetricID returns the id of a named series in this run.
func (s *Sim) MetricID(name string) (Metric, bool) {
	for i, n := range s.tel.names {
		if n == name {
			return Metric(i), true
		}
	}
	return 0, false
}

// PortMetric reports whether a metric's entities are ports (else flows).
func (s *Sim) PortMetric(m Metric) bool { return int(m) < len(s.tel.perPort) && s.tel.perPort[m] }

// EntityName names a sample's entity: the port name or the flow id.
func (s *Sim) EntityName(m Metric, e int32) string {
	if s.PortMetric(m) {
		return s.PortName(e)
	}
	return strconv.Itoa(int(e))
}

func (t *telemetry) flowStarted(s *Sim, id int32) {
	t.addActive(id)
	s.sampleFrom(&s.flows[id])
}

// sampleFrom starts a flow's throughput samples now.
func (s *Sim) sampleFrom(f *flowState) {
	f.sampledDel = s.flowCounted(f)
	f.sampledAt = s.now
}

// addActive adds a flow that has started to the sampled ones.
func (t *telemetry) addActive(id int32) {
	if t.flowSel != nil && !t.flowSel[id] {
		return
	}
	// keep active sorted by id; flows mostly start in id order
	i := len(t.active)
	t.active = append(t.active, id)
	for i > 0 && t.active[i-1] > id {
		t.active[i] = t.active[i-1]
		i--
	}
	t.active[i] = id
}

// rxRate is the rate of the link into a flow's receiver, bits per second.
func (s *Sim) rxRate(f *flowState) int64 {
	if ps := s.nodes[f.dst].ports; len(ps) > 0 {
		return s.ports[ps[0]].rate
	}
	return 0
}

// rxDeliver notes payload bytes delivered to a flow's receiver. For
// throughput_bps they count as arriving at the rate of the link into the
// receiver, one after another, rather than all at the instant the last
// bit lands: a sample interval shorter than a packet's time on that link
// would otherwise see 0 or several times the link rate.
func (s *Sim) rxDeliver(f *flowState, payload int32) {
	f.rxPending = s.rxPendingAt(f, s.now) + float64(payload)
	f.rxPendAt = s.now
}

// rxPendingAt is how much of the delivered payload is still to be counted
// at time now (draining at the receiver's link rate since rxPendAt).
func (s *Sim) rxPendingAt(f *flowState, now Time) float64 {
	if f.rxPending <= 0 {
		return 0
	}
	r := s.rxRate(f)
	if r <= 0 {
		return 0
	}
	left := f.rxPending - float64(now-f.rxPendAt)/float64(Second)*float64(r)/8
	return max(0, left)
}

// flowCounted is the payload throughput_bps has counted so far.
func (s *Sim) flowCounted(f *flowState) float64 {
	return float64(f.delivered) - s.rxPendingAt(f, s.now)
}

func (t *telemetry) event(s *Sim, m Metric, flow int32, v float64) {
	if len(t.observers) == 0 {
		return
	}
	if t.flowSel != nil && !t.flowSel[flow] {
		return
	}
	t.evBuf = append(t.evBuf, Sample{T: s.now, Metric: m, Entity: flow, Value: v})
	if len(t.evBuf) >= 4096 {
		t.flushEvents()
	}
}

func (t *telemetry) flushEvents() {
	if len(t.evBuf) == 0 {
		return
	}
	for _, o := range t.observers {
		o.Observe(t.evBuf)
	}
	t.evBuf = t.evBuf[:0]
}

// sample is the periodic tick.
func (t *telemetry) sample(s *Sim) {
	now := s.now
	if s.stalled() {
		s.stop("stalled: no unfinished flow has a path")
		return
	}
	if now+t.interval <= s.end {
		s.q.push(now+t.interval, evSample, 0, 0)
	}
	t.flushEvents()
	b := t.buf[:0]
	for _, pid := range t.ports {
		b = append(b, Sample{now, MetricQueue, pid, float64(s.ports[pid].bytes)})
	}
	if t.pfc {
		for _, pid := range t.ports {
			v := 0.0
			if s.ports[pid].paused != 0 {
				v = 1
			}
			b = append(b, Sample{now, MetricPFC, pid, v})
		}
	}
	if t.ecn {
		for _, pid := range t.ports {
			if p := &s.ports[pid]; p.ecn {
				b = append(b, Sample{now, MetricECN, pid, float64(p.marksTick)})
			}
		}
	}
	if t.drops {
		for _, pid := range t.ports {
			b = append(b, Sample{now, MetricDrops, pid, float64(s.ports[pid].dropsTick)})
		}
	}
	for _, pid := range t.ports {
		// only the sampled ports' counts are read (above); written only
		// when set: a write would take the line from the port's lane's
		// core in a parallel run
		if p := &s.ports[pid]; p.marksTick != 0 || p.dropsTick != 0 {
			p.marksTick, p.dropsTick = 0, 0
		}
	}
	// flows: the active ones get one row each per metric; those that
	// ended since the previous sample get their last throughput row
	// (below) and drop out
	act, ended, keep := t.act[:0], t.ended[:0], t.active[:0]
	for _, id := range t.active {
		if s.flows[id].state == flowActive {
			act = append(act, id)
			keep = append(keep, id)
		} else {
			ended = append(ended, id)
		}
	}
	t.act, t.ended = act, ended
	secs := float64(t.interval) / float64(Second)
	for _, id := range act {
		if f := &s.flows[id]; f.sampler != nil {
			f.sampler.OnSample(f.env)
			f.env.s.afterCC(f) // the flow's own lane in a parallel run
		}
	}
	for _, id := range act {
		f := &s.flows[id]
		// a flow that started during the interval: over its part of it
		c, dt := s.flowCounted(f), secs
		if f.sampledAt > now-t.interval && f.sampledAt < now {
			dt = float64(now-f.sampledAt) / float64(Second)
		}
		b = append(b, Sample{now, MetricThroughput, id, (c - f.sampledDel) * 8 / dt})
		f.sampledDel, f.sampledAt = c, now
	}
	// a flow that ended: its last part, over that part's own length (from
	// the previous sample, or its start, to when its bytes are counted);
	// one whose last bytes are still being counted (see rxDeliver) is
	// sampled as an active one and ends at a later sample
	for _, id := range ended {
		f := &s.flows[id]
		if s.countedBy(f) > now {
			dt := secs
			if f.sampledAt > now-t.interval {
				dt = float64(now-f.sampledAt) / float64(Second)
			}
			c := s.flowCounted(f)
			b = append(b, Sample{now, MetricThroughput, id, (c - f.sampledDel) * 8 / dt})
			f.sampledDel, f.sampledAt = c, now
			keep = append(keep, id)
			continue
		}
		b = t.lastThroughput(s, b, id, now)
	}
	slices.Sort(keep)
	t.active = keep
	for _, id := range act {
		if f := &s.flows[id]; f.rate != cc.Unlimited {
			b = append(b, Sample{now, MetricRate, id, float64(f.rate)})
		}
	}
	for _, id := range act {
		if f := &s.flows[id]; f.window != cc.Unlimited {
			b = append(b, Sample{now, MetricCwnd, id, float64(f.window)})
		}
	}
	for m := numBuiltinMetrics; int(m) < len(t.names); m++ {
		for _, id := range act {
			f := &s.flows[id]
			for k, am := range s.algos[f.algo].series {
				if am == m && f.gauges[k].set {
					b = append(b, Sample{now, m, id, f.gauges[k].v})
				}
			}
		}
	}
	t.buf = b
	if len(b) > 0 {
		for _, o := range t.observers {
			o.Observe(b)
		}
	}
}

// finish flushes what is buffered at the end of the run, and reports each
// sampled flow's throughput since the last sample, over that part's own
// length (a run that ends between samples, or with its last flow).
func (t *telemetry) finish(s *Sim) {
	t.flushEvents()
	if t.interval <= 0 || len(t.observers) == 0 {
		return
	}
	b := t.buf[:0]
	for _, id := range t.active {
		b = t.lastThroughput(s, b, id, s.now)
	}
	t.active = t.active[:0]
	t.buf = b
	if len(b) > 0 {
		for _, o := range t.observers {
			o.Observe(b)
		}
	}
}

// lastThroughput appends flow id's last throughput sample, at time at: the
// payload not yet reported over the time from the previous sample (or its
// start) to when it is all counted, or to at for a flow still active.
func (t *telemetry) lastThroughput(s *Sim, b []Sample, id int32, at Time) []Sample {
	f := &s.flows[id]
	end, c := at, s.flowCounted(f)
	if f.state != flowActive {
		end, c = s.countedBy(f), float64(f.delivered)
	}
	if end <= f.sampledAt {
		return b
	}
	b = append(b, Sample{at, MetricThroughput, id, (c - f.sampledDel) * 8 / (float64(end-f.sampledAt) / float64(Second))})
	f.sampledDel, f.sampledAt = c, at
	return b
}

// countedBy is when throughput_bps has counted all of an ended flow's
// payload: when it finished, or later while its last bytes still count at
// the receiver's link rate (rxDeliver).
func (s *Sim) countedBy(f *flowState) Time {
	end := f.finishAt
	if f.rxPending > 0 {
		if r := s.rxRate(f); r > 0 {
			end = max(end, f.rxPendAt+Time(f.rxPending*8/float64(r)*float64(Second)))
		}
	}
	return end
}
