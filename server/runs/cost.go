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
	// WallSeconds is the expected wall time as fast as possible (see
	// estimateWall): a guide for the user, not a limit.
	WallSeconds float64 `json:"wallSeconds"`
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
	var lastStart sim.Time
	var maxSize int64
	for _, f := range cfg.Flows {
		if f.Start > lastStart {
			lastStart = f.Start
		}
		if f.Size > maxSize {
			maxSize = f.Size
		}
	}
	end := cfg.Duration
	if end == 0 {
		end = lastStart + sim.Time(float64(maxSize)*8/float64(minHostRate)*float64(sim.Second))
		if end > sim.MaxDuration || end < 0 {
			end = sim.MaxDuration
		}
	}
	// a flow sends at most its size, and at most what its host link
	// carries between its start and the end of the run
	for _, f := range cfg.Flows {
		bytes := float64(f.Size)
		if f.After < 0 {
			bytes = math.Min(bytes, math.Max(0, float64(end-f.Start)/float64(sim.Second)*float64(minHostRate)/8))
		}
		c.Packets += math.Ceil(bytes / float64(mtu))
	}
	c.SimSeconds = float64(end) / float64(sim.Second)
	c.ExpectSimSeconds = c.SimSeconds
	if cfg.Duration == 0 {
		c.ExpectSimSeconds = float64(expectEnd(cfg, end, minHostRate)) / float64(sim.Second)
	}
	c.WallSeconds = estimateWall(cfg, c, end, minHostRate, mtu)
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
func expectEnd(cfg *sim.Config, end sim.Time, hostRate int64) sim.Time {
	type dst struct {
		first sim.Time
		bytes float64
	}
	into := map[int]*dst{}
	for _, f := range cfg.Flows {
		d := into[f.Dst]
		if d == nil {
			d = &dst{first: f.Start}
			into[f.Dst] = d
		}
		d.first = min(d.first, f.Start)
		d.bytes += float64(f.Size)
	}
	for _, d := range into {
		end = max(end, d.first+sim.Time(d.bytes*8/float64(hostRate)*float64(sim.Second)))
	}
	return min(end, sim.MaxDuration)
}

// Expected wall time. The engine runs about eventsPerSecond events a
// second on one core of a small topology, fewer on a large one (its state
// outgrows the caches: measured 10-14 M/s on 3-17 hosts, 5-10 M/s on 16-128,
// 2.7 M/s on 1024 hosts), and a learned algorithm (a neural network per
// decision) a third to a sixth of that. A data packet costs about
// eventsPerHop events per switch on its path (queueing, transmission, the
// ACK's way back; measured 4 on one switch, 9 on two, 12-16 on fat-trees).
// A run with a duration sends at most what the receivers' links take in it.
// Against the library run on 2 shared cores: mostly within a factor of 2
// (mpcc-exp3-*: 1.2-2.4 s for 1.2-3.1 s measured; fattree1024-permutation-
// hpcc 5.1 s for 3.1 s; fdcc-fattree-48to1 5.8 s for 6.7 s), up to 6 times
// over on the 1024-host data-mining runs (36 s for 5.7 s).
const (
	eventsPerSecond = 10e6
	eventsPerHop    = 4.0
)

// estimateWall is the expected wall time of a run as fast as possible.
func estimateWall(cfg *sim.Config, c Cost, end sim.Time, hostRate, mtu int64) float64 {
	if c.Flows == 0 {
		return 0
	}
	// packets each receiver takes in: what is sent to it, at most its link
	// for the simulated time
	toDst := map[int]float64{}
	for _, f := range cfg.Flows {
		toDst[f.Dst] += float64(f.Size)
	}
	capBytes := float64(end) / float64(sim.Second) * float64(hostRate) / 8
	var packets float64
	for _, b := range toDst {
		if cfg.Duration > 0 {
			b = math.Min(b, capBytes)
		}
		packets += math.Ceil(b / float64(mtu))
	}
	packets = math.Min(packets, c.Packets)
	switches := len(cfg.Nodes) - c.Hosts
	hops := math.Min(5, 1+math.Log2(math.Max(1, float64(switches))))
	rate := eventsPerSecond / (1 + float64(c.Hosts)/256)
	for _, a := range cfg.Algos {
		if a.Algo != nil && a.Algo.WithPolicy != nil {
			rate /= 3
			break
		}
	}
	return packets * eventsPerHop * hops / rate
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
