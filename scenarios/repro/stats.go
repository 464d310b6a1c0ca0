package repro

import (
	"fmt"
	"math"
	"sort"

	"cclab/sim"
)

// meanOver is the mean of s's values with from ≤ t < to.
func meanOver(s Series, from, to float64) float64 {
	sum, n := 0.0, 0
	for i, t := range s.T {
		if t >= from && t < to {
			sum += s.V[i]
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return sum / float64(n)
}

// onset is the first time the series is above zero (+Inf if never).
func onset(s Series) float64 {
	for i, v := range s.V {
		if v > 0 {
			return s.T[i]
		}
	}
	return math.Inf(1)
}

// convergence is the first time after the series' peak at which it is
// below level (the MPCC thesis' queue convergence time, L798).
func convergence(s Series, level float64) float64 {
	peak := 0
	for i := range s.V {
		if s.V[i] > s.V[peak] {
			peak = i
		}
	}
	for i := peak; i < len(s.V); i++ {
		if s.V[i] < level {
			return s.T[i]
		}
	}
	return math.Inf(1)
}

// window keeps the part of a series with from ≤ t < to, times scaled.
func window(s Series, from, to, scale float64) (x, y []float64) {
	for i, t := range s.T {
		if t >= from && t < to {
			x = append(x, t*scale)
			y = append(y, s.V[i])
		}
	}
	return x, y
}

// jain is Jain's fairness index of xs.
func jain(xs []float64) float64 {
	var sum, sq float64
	for _, x := range xs {
		sum += x
		sq += x * x
	}
	if sq == 0 {
		return math.NaN()
	}
	return sum * sum / (float64(len(xs)) * sq)
}

// fctMicros is every finished flow's FCT in µs, sorted.
func fctMicros(flows []sim.FlowResult) []float64 {
	var out []float64
	for _, f := range flows {
		if f.Finished {
			out = append(out, float64(f.Finish-f.Start)/float64(sim.Microsecond))
		}
	}
	sort.Float64s(out)
	return out
}

// nearestRank is v[int(n·p)] of sorted values (HPCC's analysis' percentile).
func nearestRank(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	i := int(float64(len(sorted)) * p)
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return sorted[i]
}

func meanOf(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := 0.0
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

func us(sec float64) string { return fmt.Sprintf("%.1f µs", sec*1e6) }
