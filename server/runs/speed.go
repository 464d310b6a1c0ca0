package runs

import (
	"fmt"
	"math"
	"sync"
)

// Speed is the engine's measured speed on this server: the events a second
// of the runs that ran here as fast as possible, which the expected wall
// time of a run to come is drawn from (Apply). The engine's cost per event
// grows with the network (its state outgrows the caches), so a run's speed
// is normalised to a small network's, × (1 + hosts/256) as the formula's
// constant is, and the estimate weighs runs of a similar size most. A
// learned algorithm's run (a neural network per decision) counts × 3.
// Until it has a run, the estimate is the formula's constant.
type Speed struct {
	mu      sync.Mutex
	samples []speedSample // the newest maxSpeedSamples, oldest first
}

type speedSample struct {
	hosts int
	norm  float64 // events a second, normalised to a small network
}

const (
	// maxSpeedSamples bounds the runs the model keeps (the newest).
	maxSpeedSamples = 200
	// minSpeedEvents and minSpeedWall leave out runs too short to time:
	// building the engine and writing the results outweigh their events.
	minSpeedEvents = 1e5
	minSpeedWall   = 0.05
	// priorWeight is how much the formula's constant counts against the
	// measured runs: one similar run outweighs it.
	priorWeight = 0.5
)

// NewSpeed is a model with no runs measured yet.
func NewSpeed() *Speed { return &Speed{} }

func normalise(hosts int, learned bool, eps float64) float64 {
	n := eps * (1 + float64(hosts)/256)
	if learned {
		n *= learnedSlowdown
	}
	return n
}

// Add records a run that ran as fast as possible: its hosts, whether a
// learned algorithm ran it, its events and wall seconds. Runs too short to
// time are left out (false).
func (s *Speed) Add(hosts int, learned bool, events uint64, wall float64) bool {
	if s == nil || float64(events) < minSpeedEvents || wall < minSpeedWall {
		return false
	}
	x := speedSample{hosts: hosts, norm: normalise(hosts, learned, float64(events)/wall)}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.samples = append(s.samples, x)
	if len(s.samples) > maxSpeedSamples {
		s.samples = s.samples[len(s.samples)-maxSpeedSamples:]
	}
	return true
}

// similarity weighs a measured run of h hosts for a run of hosts: 1 for
// the same size, 0.5 at 4 times more or fewer, 0.06 at 16 times.
func similarity(hosts, h int) float64 {
	d := math.Log((1+float64(hosts))/(1+float64(h))) / math.Log(4)
	return math.Pow(2, -d*d)
}

// Rate is the expected events a second of a run of hosts (learned: a
// learned algorithm's) and the number of measured runs it draws on (those
// of a similar size: within 4 times the hosts; 0: the formula's constant
// alone, runs of other sizes left out). It is the weighted geometric mean of the measured runs'
// normalised speeds, the constant counting priorWeight.
func (s *Speed) Rate(hosts int, learned bool) (float64, int) {
	sum, wsum, n := priorWeight*math.Log(eventsPerSecond), priorWeight, 0
	if s != nil {
		s.mu.Lock()
		for _, x := range s.samples {
			w := similarity(hosts, x.hosts)
			sum += w * math.Log(x.norm)
			wsum += w
			if w >= 0.5 {
				n++
			}
		}
		s.mu.Unlock()
	}
	if n == 0 {
		return eventsPerSecond / normalise(hosts, learned, 1), 0
	}
	return math.Exp(sum/wsum) / normalise(hosts, learned, 1), n
}

// Apply sets a cost's expected wall time from the measured speed, and says
// what it is based on.
func (s *Speed) Apply(c *Cost) {
	rate, n := s.Rate(c.Hosts, c.learned)
	c.WallSeconds = wallFrom(c.Events, rate)
	switch n {
	case 0:
		c.WallBasis = "at the engine's typical speed: no run of this size timed on this server yet"
	case 1:
		c.WallBasis = "from 1 run of this size on this server"
	default:
		c.WallBasis = fmt.Sprintf("from %d runs of this size on this server", n)
	}
}

func wallFrom(events, rate float64) float64 {
	if events <= 0 || rate <= 0 {
		return 0
	}
	return events / rate
}
