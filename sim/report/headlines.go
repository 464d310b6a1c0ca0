package report

import (
	"fmt"
	"math"
)

// Headline is one number of a summary that runs are compared on.
type Headline struct {
	Name  string // its path in summary.json, e.g. "fct_slowdown.p99"
	Label string
	// Better is "lower" or "higher", or "" for a fact that is not a score
	// (no run is marked best on it).
	Better string
	// Value reads it; false when the summary has none (no finished flow,
	// an empty bucket, a series the run did not produce).
	Value func(*Summary) (float64, bool)
}

// Headlines lists the numbers runs are compared on, in display order.
func Headlines() []Headline {
	hs := []Headline{
		{"flows_finished", "flows finished", "higher", func(s *Summary) (float64, bool) { return float64(s.FlowsFinished), true }},
		{"flows_unfinished", "flows unfinished", "lower", func(s *Summary) (float64, bool) { return float64(s.FlowsUnfinished), true }},
		{"fct_slowdown.mean", "FCT slowdown, mean", "lower", slowdown(func(st *Stats) float64 { return st.Mean })},
		{"fct_slowdown.p50", "FCT slowdown, p50", "lower", slowdown(func(st *Stats) float64 { return st.P50 })},
		{"fct_slowdown.p95", "FCT slowdown, p95", "lower", slowdown(func(st *Stats) float64 { return st.P95 })},
		{"fct_slowdown.p99", "FCT slowdown, p99", "lower", slowdown(func(st *Stats) float64 { return st.P99 })},
	}
	for i, b := range SizeBuckets() {
		hs = append(hs,
			Headline{fmt.Sprintf("fct_slowdown_by_size[%d].p50", i), "FCT slowdown p50, " + b.Label, "lower", bucket(i, func(b *Bucket) *float64 { return b.P50 })},
			Headline{fmt.Sprintf("fct_slowdown_by_size[%d].p99", i), "FCT slowdown p99, " + b.Label, "lower", bucket(i, func(b *Bucket) *float64 { return b.P99 })})
	}
	return append(hs,
		Headline{"switch_queues.p50", "switch queue p50 (bytes)", "lower", func(s *Summary) (float64, bool) { return float64(s.SwitchQueues.P50), true }},
		Headline{"switch_queues.p99", "switch queue p99 (bytes)", "lower", func(s *Summary) (float64, bool) { return float64(s.SwitchQueues.P99), true }},
		Headline{"switch_queues.max", "switch queue max (bytes)", "lower", func(s *Summary) (float64, bool) { return float64(s.SwitchQueues.Max), true }},
		Headline{"queues.max", "largest queue of any port (bytes)", "lower", func(s *Summary) (float64, bool) {
			return largest(s.Queues, func(q QueueStats) float64 { return float64(q.Max) })
		}},
		Headline{"utilization.max", "busiest port's utilisation", "higher", func(s *Summary) (float64, bool) {
			return largest(s.Utilization, func(v float64) float64 { return v })
		}},
		Headline{"pfc_pause_fraction.max", "most paused port's pause fraction", "lower", func(s *Summary) (float64, bool) {
			return largest(s.PFCPauseFraction, func(v float64) float64 { return v })
		}},
		Headline{"drops", "packets dropped", "lower", func(s *Summary) (float64, bool) { return float64(s.Drops), true }},
		Headline{"jain", "Jain's fairness (second half)", "higher", func(s *Summary) (float64, bool) { return deref(s.Jain) }},
		Headline{"series_stats.qp_solve_ns.p50", "QP solve time p50 (ns)", "lower", seriesStat("qp_solve_ns", func(st SeriesStat) *float64 { return st.P50 })},
		Headline{"series_stats.qp_solve_ns.p99", "QP solve time p99 (ns)", "lower", seriesStat("qp_solve_ns", func(st SeriesStat) *float64 { return st.P99 })},
		Headline{"sim_seconds", "simulated seconds", "", func(s *Summary) (float64, bool) { return s.SimSeconds, true }},
		Headline{"wall_seconds", "wall-clock seconds", "lower", func(s *Summary) (float64, bool) { return s.WallSeconds, true }},
		Headline{"events_per_second", "events per second", "higher", func(s *Summary) (float64, bool) { return s.EventsPerSecond, true }},
	)
}

func deref(v *float64) (float64, bool) {
	if v == nil {
		return 0, false
	}
	return *v, true
}

func slowdown(get func(*Stats) float64) func(*Summary) (float64, bool) {
	return func(s *Summary) (float64, bool) {
		if s.FCTSlowdown == nil {
			return 0, false
		}
		return get(s.FCTSlowdown), true
	}
}

// bucket reads a value of size bucket i; an empty bucket has none.
func bucket(i int, get func(*Bucket) *float64) func(*Summary) (float64, bool) {
	return func(s *Summary) (float64, bool) {
		if i >= len(s.FCTSlowdownBySize) || s.FCTSlowdownBySize[i].Count == 0 {
			return 0, false
		}
		return deref(get(&s.FCTSlowdownBySize[i]))
	}
}

func seriesStat(name string, get func(SeriesStat) *float64) func(*Summary) (float64, bool) {
	return func(s *Summary) (float64, bool) {
		st, ok := s.SeriesStats[name]
		if !ok {
			return 0, false
		}
		return deref(get(st))
	}
}

// largest is the largest value of a map of ports (none when it is empty).
func largest[V any](m map[string]V, f func(V) float64) (float64, bool) {
	best, found := math.Inf(-1), false
	for _, v := range m {
		if x := f(v); x > best {
			best, found = x, true
		}
	}
	return best, found
}
