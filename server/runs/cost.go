package runs

import (
	"fmt"
	"math"
	"slices"

	"cclab/sim"
)

// Cost is the estimated size of a run, checked against the server's limits
// before the run is queued (admission control).
type Cost struct {
	Hosts   int     `json:"hosts"`
	Flows   int     `json:"flows"`
	Packets float64 `json:"packets"` // data packets to send: Σ ⌈size / mtu⌉
	// SimSeconds is the simulated time the run will cover: its duration, or
	// when it runs until every flow finishes, the last flow start plus the
	// largest flow's time at the slowest host link, capped at 10 s.
	SimSeconds float64 `json:"simSeconds"`
	// Samples estimates the telemetry samples stored: sampled ports × 2
	// series × sampling steps, plus 3 series per sampled flow over at least
	// its time at line rate.
	Samples float64 `json:"samples"`
	// ExpectSimSeconds is the simulated time the run is expected to reach:
	// its duration, or when it runs until every flow finishes, SimSeconds or
	// later when flows into one receiver share its link (a guide for the
	// user: pacing, progress; SimSeconds is what the limits check).
	ExpectSimSeconds float64 `json:"expectSimSeconds"`
	// Events is the engine events the run is expected to take (see
	// estimateEvents).
	Events float64 `json:"events"`
	// WallSeconds is the expected wall time as fast as possible: Events at
	// the engine's speed measured on this server (Speed), or the formula's
	// constant until it has runs to go by; a guide, not a limit.
	WallSeconds float64 `json:"wallSeconds"`
	// WallBasis says what WallSeconds is drawn from ("from 12 runs of this
	// size on this server").
	WallBasis string `json:"wallBasis"`

	learned bool // a learned algorithm runs (slower per event)
}

// Limits bound what one run may cost; zero means no limit.
type Limits struct {
	MaxHosts   int     // --max-hosts
	MaxFlows   int     // --max-flows
	MaxPackets float64 // --max-packets
	MaxSimTime sim.Time
	MaxSamples float64 // --max-samples
}

// DefaultLimits suit a class server: a 320-host fat-tree with WebSearch for
// tens of milliseconds fits; a run that would take hours does not.
func DefaultLimits() Limits {
	return Limits{
		MaxHosts:   4096,
		MaxFlows:   500_000,
		MaxPackets: 2e8,
		MaxSimTime: sim.MaxDuration,
		MaxSamples: 1e8,
	}
}

// Estimate computes the cost of a built scenario.
func Estimate(cfg *sim.Config) Cost {
	var c Cost
	isHost := make([]bool, len(cfg.Nodes))
	for i, n := range cfg.Nodes {
		if n.Kind == sim.Host {
			c.Hosts++
			isHost[i] = true
		}
	}
	c.Flows = len(cfg.Flows)
	var minHostRate int64 = math.MaxInt64
	for _, l := range cfg.Links {
		if (isHost[l.A] || isHost[l.B]) && l.Rate < minHostRate {
			minHostRate = l.Rate
		}
	}
	if minHostRate == math.MaxInt64 || minHostRate <= 0 {
		minHostRate = 1
	}
	mtu := cfg.Host.MTU
	if mtu <= 0 {
		mtu = 1000
	}
	starts, barrierEnd := schedule(cfg, minHostRate)
	var lastStart sim.Time
	var maxSize int64
	for i, f := range cfg.Flows {
		if starts[i] > lastStart {
			lastStart = starts[i]
		}
		if f.Size > maxSize {
			maxSize = f.Size
		}
	}
	end := cfg.Duration
	if end == 0 {
		end = max(barrierEnd, lastStart+sim.Time(float64(maxSize)*8/float64(minHostRate)*float64(sim.Second)))
		if end > sim.MaxDuration || end < 0 {
			end = sim.MaxDuration
		}
	}
	// a flow sends at most its size, and at most what its host link
	// carries between its (expected) start and the end of the run
	for i, f := range cfg.Flows {
		bytes := math.Min(float64(f.Size), math.Max(0, float64(end-starts[i])/float64(sim.Second)*float64(minHostRate)/8))
		c.Packets += math.Ceil(bytes / float64(mtu))
	}
	c.SimSeconds = float64(end) / float64(sim.Second)
	c.ExpectSimSeconds = c.SimSeconds
	if cfg.Duration == 0 {
		c.ExpectSimSeconds = float64(expectEnd(cfg, starts, end, minHostRate)) / float64(sim.Second)
	}
	c.Events = estimateEvents(cfg, c, starts, end, minHostRate, mtu)
	for _, a := range cfg.Algos {
		if a.Algo != nil && a.Algo.WithPolicy != nil {
			c.learned = true
		}
	}
	(*Speed)(nil).Apply(&c)
	if iv := cfg.Telemetry.Interval; iv > 0 {
		steps := float64(end) / float64(iv)
		ports := float64(2 * len(cfg.Links))
		if !cfg.Telemetry.AllQueues {
			ports = float64(len(cfg.Telemetry.Queues))
		}
		c.Samples = ports * 2 * steps
		for i, f := range cfg.Flows {
			if !cfg.Telemetry.AllFlows && !slices.Contains(cfg.Telemetry.Flows, i) {
				continue
			}
			active := float64(f.Size) * 8 / float64(minHostRate) * float64(sim.Second) / float64(iv)
			c.Samples += 3 * math.Max(1, math.Min(active, steps))
		}
	}
	return c
}

// expectEnd is when a run without a duration is expected to end: no sooner
// than end, nor than all the bytes into one receiver take through its link
// from the first one's start.
func expectEnd(cfg *sim.Config, starts []sim.Time, end sim.Time, hostRate int64) sim.Time {
	for _, d := range intoReceivers(cfg, starts) {
		end = max(end, d.first+sim.Time(d.bytes*8/float64(hostRate)*float64(sim.Second)))
	}
	return min(end, sim.MaxDuration)
}

// inbound is what a receiver is sent: from its first flow's (expected)
// start, so many bytes.
type inbound struct {
	first sim.Time
	bytes float64
}

// intoReceivers sums the flows into each receiver (by node index).
func intoReceivers(cfg *sim.Config, starts []sim.Time) map[int]*inbound {
	into := map[int]*inbound{}
	for i, f := range cfg.Flows {
		d := into[f.Dst]
		if d == nil {
			d = &inbound{first: starts[i]}
			into[f.Dst] = d
		}
		d.first = min(d.first, starts[i])
		d.bytes += float64(f.Size)
	}
	return into
}

// schedule is when each flow is expected to start: its start, or for a
// flow held by a barrier (After >= 0: MPI all-to-all iterations), the
// expected end of the group it waits for plus its delay; and the expected
// end of the last barrier group. A group is expected to end when its
// busiest host has sent or taken in its bytes at the host link's rate from
// the group's first start (all-to-all: every sender and receiver busy at
// once). Groups wait only on earlier ones (the generator numbers them so).
func schedule(cfg *sim.Config, hostRate int64) ([]sim.Time, sim.Time) {
	starts := make([]sim.Time, len(cfg.Flows))
	type group struct {
		first sim.Time
		load  map[int]float64 // bytes per host, sent or taken in (+n: dst)
		ended sim.Time
		seen  bool
	}
	groups := map[int]*group{}
	ids := []int{}
	for _, f := range cfg.Flows {
		if f.Group >= 0 && groups[f.Group] == nil {
			groups[f.Group] = &group{load: map[int]float64{}}
			ids = append(ids, f.Group)
		}
	}
	if len(groups) == 0 {
		for i, f := range cfg.Flows {
			starts[i] = f.Start
		}
		return starts, 0
	}
	slices.Sort(ids)
	startOf := func(f sim.FlowSpec) sim.Time {
		if f.After < 0 {
			return f.Start
		}
		if g := groups[f.After]; g != nil && g.seen {
			return g.ended + f.Start
		}
		return f.Start
	}
	n := len(cfg.Nodes)
	for _, id := range ids {
		g := groups[id]
		for i, f := range cfg.Flows {
			if f.Group != id {
				continue
			}
			starts[i] = startOf(f)
			if !g.seen || starts[i] < g.first {
				g.first = starts[i]
			}
			g.seen = true
			g.load[f.Src] += float64(f.Size)
			g.load[n+f.Dst] += float64(f.Size)
		}
		var busiest float64
		for _, b := range g.load {
			busiest = max(busiest, b)
		}
		g.ended = g.first + sim.Time(busiest*8/float64(hostRate)*float64(sim.Second))
	}
	var last sim.Time
	for i, f := range cfg.Flows {
		if f.Group < 0 {
			starts[i] = startOf(f)
		}
	}
	for _, g := range groups {
		last = max(last, g.ended)
	}
	return starts, last
}

// Expected engine events. A data packet costs about eventsPerHop events
// per switch on its path (queueing, transmission, the ACK's way back;
// measured 4 on one switch, 9 on two, 12-16 on fat-trees). A run with a
// duration sends at most what the receivers' links take in it. The engine
// runs about eventsPerSecond events a second on one core of a small
// topology, fewer on a large one (its state outgrows the caches: measured
// 10-14 M/s on 3-17 hosts, 5-10 M/s on 16-128, 2.7 M/s on 1024 hosts),
// and a learned algorithm (a neural network per decision) a third of
// that: the constant a server starts from, until Speed has measured runs.
const (
	eventsPerSecond = 10e6
	eventsPerHop    = 4.0
	learnedSlowdown = 3.0
)

// estimateEvents is the engine events a run is expected to take.
func estimateEvents(cfg *sim.Config, c Cost, starts []sim.Time, end sim.Time, hostRate, mtu int64) float64 {
	if c.Flows == 0 {
		return 0
	}
	// packets each receiver takes in: what is sent to it, at most its link
	// for the simulated time from the first flow's start into it
	var packets float64
	for _, d := range intoReceivers(cfg, starts) {
		b := d.bytes
		if cfg.Duration > 0 {
			b = math.Min(b, math.Max(0, float64(end-d.first)/float64(sim.Second)*float64(hostRate)/8))
		}
		packets += math.Ceil(b / float64(mtu))
	}
	packets = math.Min(packets, c.Packets)
	switches := len(cfg.Nodes) - c.Hosts
	hops := math.Min(5, 1+math.Log2(math.Max(1, float64(switches))))
	return packets * eventsPerHop * hops
}

// Check refuses a run that exceeds a limit, naming the limit (nil: within
// every limit).
func (l Limits) Check(c Cost) *Error {
	switch {
	case l.MaxHosts > 0 && c.Hosts > l.MaxHosts:
		return limited(Refused, "max-hosts", "topology",
			"%d hosts exceed this server's limit of %d (max-hosts)", c.Hosts, l.MaxHosts)
	case l.MaxFlows > 0 && c.Flows > l.MaxFlows:
		return limited(Refused, "max-flows", "workload",
			"%d flows exceed this server's limit of %d (max-flows)", c.Flows, l.MaxFlows)
	case l.MaxPackets > 0 && c.Packets > l.MaxPackets:
		return limited(Refused, "max-packets", "workload",
			"an estimated %s data packets exceed this server's limit of %s (max-packets); lower the load, the sizes or the duration",
			human(c.Packets), human(l.MaxPackets))
	case l.MaxSimTime > 0 && c.SimSeconds*float64(sim.Second) > float64(l.MaxSimTime):
		return limited(Refused, "max-sim-time", "duration",
			"%.6g s of simulated time exceed this server's limit of %.6g s (max-sim-time)",
			c.SimSeconds, float64(l.MaxSimTime)/float64(sim.Second))
	case l.MaxSamples > 0 && c.Samples > l.MaxSamples:
		return limited(Refused, "max-samples", "telemetry",
			"an estimated %s telemetry samples exceed this server's limit of %s (max-samples); sample fewer queues or flows, or less often",
			human(c.Samples), human(l.MaxSamples))
	}
	return nil
}

func human(v float64) string {
	switch {
	case v >= 1e9:
		return fmt.Sprintf("%.3g G", v/1e9)
	case v >= 1e6:
		return fmt.Sprintf("%.3g M", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.3g k", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}
