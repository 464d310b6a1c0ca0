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
