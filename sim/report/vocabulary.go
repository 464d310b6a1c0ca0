package report

import (
	"cclab/cc"
	"cclab/sim"
)

// The results' vocabulary, defined once and served to the browser
// (GET /api/vocabulary): every series a run can produce, with its unit and
// how charts condense it, and the flow-size buckets of the slowdown
// summary.

// Metric is one series name.
type Metric struct {
	Name  string `json:"name"`
	Label string `json:"label"`
	// Unit is "B", "bps", "ns", or "" (a count, a fraction or a flag).
	Unit string `json:"unit"`
	// Entity is what the series' entities are: "port" (port names) or
	// "flow" (flow ids).
	Entity string `json:"entity"`
	// Agg is how a chart bucket condenses samples: "max" or "mean".
	Agg string `json:"agg"`
	// Algorithm names the algorithm reporting it; empty for built-ins.
	Algorithm string `json:"algorithm,omitempty"`
	Help      string `json:"help"`
}

// SizeBucket is one flow-size bucket of fct_slowdown_by_size.
type SizeBucket struct {
	Lo    int64  `json:"lo_bytes"`
	Hi    *int64 `json:"hi_bytes"` // nil: no upper bound
	Label string `json:"label"`
}

// Vocabulary is what GET /api/vocabulary answers.
type Vocabulary struct {
	Metrics     []Metric     `json:"metrics"`
	SizeBuckets []SizeBucket `json:"sizeBuckets"`
}

// sizeLabels name the buckets of bucketEdges.
var sizeLabels = []string{"<10KB", "10KB-100KB", "100KB-1MB", "1MB-10MB", ">=10MB"}

// SizeBuckets lists the flow-size buckets, smallest first.
func SizeBuckets() []SizeBucket {
	out := make([]SizeBucket, len(bucketEdges))
	for i, lo := range bucketEdges {
		out[i] = SizeBucket{Lo: lo, Label: sizeLabels[i]}
		if i+1 < len(bucketEdges) {
			hi := bucketEdges[i+1]
			out[i].Hi = &hi
		}
	}
	return out
}

// Metrics lists every series name: the built-ins, then each registered
// algorithm's series (a name two algorithms share is listed once, with the
// first's unit and help).
func Metrics() []Metric {
	var out []Metric
	seen := map[string]bool{}
	for _, m := range sim.BuiltinMetrics {
		e, agg := "flow", "mean"
		if m.PerPort {
			e = "port"
		}
		if m.Max {
			agg = "max"
		}
		out = append(out, Metric{Name: m.Name, Label: m.Label, Unit: m.Unit, Entity: e, Agg: agg, Help: m.Help})
		seen[m.Name] = true
	}
	for _, a := range cc.Algorithms() {
		for _, s := range a.Series {
			if seen[s.Name] {
				continue
			}
			seen[s.Name] = true
			out = append(out, Metric{Name: s.Name, Label: s.Name, Unit: s.Unit, Entity: "flow", Agg: "mean", Algorithm: a.Name, Help: s.Help})
		}
	}
	return out
}

// MetricAgg is how charts condense a series: "max" for queues and pauses,
// "mean" for everything else (algorithm series included).
func MetricAgg(name string) string {
	for _, m := range sim.BuiltinMetrics {
		if m.Name == name && m.Max {
			return "max"
		}
	}
	return "mean"
}

// Vocab is the whole vocabulary.
func Vocab() Vocabulary { return Vocabulary{Metrics: Metrics(), SizeBuckets: SizeBuckets()} }
