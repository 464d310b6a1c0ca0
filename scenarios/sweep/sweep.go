// Package sweep runs a scenario over a grid of parameter values and a set
// of seeds: it parses and checks the grid, expands it to runs (each a
// scenario document with the point's values and the seed set through
// scenarios.ApplySets), reads each run's summary.json metrics and
// aggregates them per grid point across the seeds (mean and 95% confidence
// interval), and writes the result as sweep.csv. The CLI (cclab sweep) and
// the server share it.
package sweep

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"gonum.org/v1/gonum/stat/distuv"

	"cclab/scenarios"
	"cclab/sim/report"
)

// Axis is one swept parameter: a scenario path as scenarios.ApplySets takes it
// ("cc.params.wr", "workload[0].load", "switch.buffer") and its values as the
// literal text ApplySets parses ("10", "0.3", "40Gbps").
type Axis struct {
	Path   string   `json:"path"`
	Values []string `json:"values"`
}

// Spec is what a sweep runs.
type Spec struct {
	Axes  []Axis   `json:"axes"`
	Seeds []uint64 `json:"seeds"`
}

// Limits.
const (
	MaxValuesPerAxis = 100
	MaxAxes          = 4
	MaxSeeds         = 100
)

// ParseGrid parses a --grid argument: "PATH=v1,v2,..." (a list; values
// kept as written, trimmed) or "PATH=lo:hi:step" (a numeric range, lo and
// hi inclusive, step > 0, values formatted with
// strconv.FormatFloat(v, 'g', -1, 64) after rounding away float drift, e.g.
// 0.1:0.3:0.1 -> 0.1,0.2,0.3). A right-hand side with a ':' and no ',' is a
// range. Errors name the argument.
func ParseGrid(arg string) (Axis, error) {
	path, rhs, found := strings.Cut(arg, "=")
	if !found {
		return Axis{}, fmt.Errorf("%q: want PATH=v1,v2,... or PATH=lo:hi:step", arg)
	}
	path = strings.TrimSpace(path)
	if path == "" {
		return Axis{}, fmt.Errorf("%q: empty path before '='", arg)
	}
	if strings.Contains(rhs, ":") && !strings.Contains(rhs, ",") {
		values, err := parseRange(rhs)
		if err != nil {
			return Axis{}, fmt.Errorf("%q: %w", arg, err)
		}
		return Axis{Path: path, Values: values}, nil
	}
	parts := strings.Split(rhs, ",")
	if len(parts) > MaxValuesPerAxis {
		return Axis{}, fmt.Errorf("%q: %d values, at most %d", arg, len(parts), MaxValuesPerAxis)
	}
	values := make([]string, len(parts))
	for i, p := range parts {
		values[i] = strings.TrimSpace(p)
		if values[i] == "" {
			return Axis{}, fmt.Errorf("%q: value %d is empty", arg, i+1)
		}
	}
	return Axis{Path: path, Values: values}, nil
}

// parseRange expands "lo:hi:step".
func parseRange(rhs string) ([]string, error) {
	parts := strings.Split(rhs, ":")
	if len(parts) != 3 {
		return nil, fmt.Errorf("range %q: want lo:hi:step", rhs)
	}
	var bounds [3]float64
	for i, name := range []string{"lo", "hi", "step"} {
		s := strings.TrimSpace(parts[i])
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, fmt.Errorf("range %s %q is not a finite number", name, s)
		}
		bounds[i] = v
	}
	lo, hi, step := bounds[0], bounds[1], bounds[2]
	if step <= 0 {
		return nil, fmt.Errorf("range step %g: want > 0", step)
	}
	if lo > hi {
		return nil, fmt.Errorf("range lo %g is above hi %g", lo, hi)
	}
	// a step count that is whole but for float drift counts as whole:
	// (0.3-0.1)/0.1 is 1.9999999999999998
	steps := math.Floor((hi-lo)/step + 1e-9)
	if steps+1 > MaxValuesPerAxis {
		return nil, fmt.Errorf("range %q has %.0f values, at most %d", rhs, steps+1, MaxValuesPerAxis)
	}
	values := make([]string, 0, int(steps)+1)
	for i := 0; i <= int(steps); i++ {
		values = append(values, strconv.FormatFloat(roundDrift(lo+float64(i)*step, step), 'g', -1, 64))
	}
	return values, nil
}

// roundDrift rounds v to a millionth of step (in significant digits, so at
// any scale), which takes away the drift of lo + i*step:
// 0.1 + 2*0.1 is 0.30000000000000004, rounded 0.3.
func roundDrift(v, step float64) float64 {
	if v == 0 {
		return 0 // also no "-0"
	}
	digits := math.Floor(math.Log10(math.Abs(v))) - math.Floor(math.Log10(step)) + 7
	switch {
	case digits < 1:
		return 0 // below a millionth of the step: drift around 0
	case digits >= 17:
		return v // as precise as a float64 is
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', int(digits), 64), 64)
	if err != nil {
		return v
	}
	return r
}

// ParseSeeds parses "1-5", "1,3,7", "4", or mixes "1-3,9": seeds >= 1,
// distinct, in the given order, at most MaxSeeds. Errors name the bad part.
func ParseSeeds(arg string) ([]uint64, error) {
	if strings.TrimSpace(arg) == "" {
		return nil, fmt.Errorf("no seeds: want e.g. 1-5 or 1,3,7")
	}
	var seeds []uint64
	seen := map[uint64]bool{}
	for _, part := range strings.Split(arg, ",") {
		part = strings.TrimSpace(part)
		lo, hi, err := parseSeedPart(part)
		if err != nil {
			return nil, err
		}
		if hi-lo >= MaxSeeds || len(seeds)+int(hi-lo)+1 > MaxSeeds {
			return nil, fmt.Errorf("%q: more than %d seeds", arg, MaxSeeds)
		}
		for s := lo; s <= hi; s++ {
			if seen[s] {
				return nil, fmt.Errorf("seed %d (in %q) is given twice", s, part)
			}
			seen[s] = true
			seeds = append(seeds, s)
		}
	}
	return seeds, nil
}

// parseSeedPart parses "4" or "1-5".
func parseSeedPart(part string) (lo, hi uint64, err error) {
	if part == "" {
		return 0, 0, fmt.Errorf("empty seed in the list")
	}
	a, b, isRange := strings.Cut(part, "-")
	lo, err = parseSeed(part, a)
	if err != nil {
		return 0, 0, err
	}
	if !isRange {
		return lo, lo, nil
	}
	if hi, err = parseSeed(part, b); err != nil {
		return 0, 0, err
	}
	if lo > hi {
		return 0, 0, fmt.Errorf("seed range %q: %d is above %d", part, lo, hi)
	}
	return lo, hi, nil
}

func parseSeed(part, s string) (uint64, error) {
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("seed %q: want a whole number >= 1", part)
	}
	return n, nil
}

// Validate checks a Spec: 1..MaxAxes axes, each with a non-empty path and
// 1..MaxValuesPerAxis values (none empty, none twice), no path twice, no
// "seed" axis, 1..MaxSeeds distinct seeds >= 1. It returns a
// *scenarios.Error whose FieldErrors name fields as "axes[0].path",
// "axes[1].values", "seeds".
func (s Spec) Validate() error {
	var errs []scenarios.FieldError
	add := func(field, format string, args ...any) {
		errs = append(errs, scenarios.FieldError{Field: field, Error: fmt.Sprintf(format, args...)})
	}
	if len(s.Axes) == 0 || len(s.Axes) > MaxAxes {
		add("axes", "%d axes, want 1 to %d", len(s.Axes), MaxAxes)
	}
	paths := map[string]int{}
	for i, a := range s.Axes {
		field := "axes[" + strconv.Itoa(i) + "]"
		if err := checkPath(a.Path); err != "" {
			add(field+".path", "%s", err)
		} else if j, ok := paths[a.Path]; ok {
			add(field+".path", "%q is swept twice (also axes[%d])", a.Path, j)
		} else {
			paths[a.Path] = i
		}
		if len(a.Values) == 0 || len(a.Values) > MaxValuesPerAxis {
			add(field+".values", "%d values, want 1 to %d", len(a.Values), MaxValuesPerAxis)
			continue
		}
		seen := map[string]bool{}
		for j, v := range a.Values {
			switch {
			case strings.TrimSpace(v) == "":
				add(field+".values", "value %d is empty", j+1)
			case seen[v]:
				add(field+".values", "value %q is given twice", v)
			}
			seen[v] = true
		}
	}
	if len(s.Seeds) == 0 || len(s.Seeds) > MaxSeeds {
		add("seeds", "%d seeds, want 1 to %d", len(s.Seeds), MaxSeeds)
	}
	seen := map[uint64]bool{}
	for _, seed := range s.Seeds {
		switch {
		case seed == 0:
			add("seeds", "seed 0: want >= 1")
		case seen[seed]:
			add("seeds", "seed %d is given twice", seed)
		}
		seen[seed] = true
	}
	if len(errs) > 0 {
		return &scenarios.Error{Errors: errs}
	}
	return nil
}

// checkPath returns what is wrong with an axis path, or "".
func checkPath(path string) string {
	switch {
	case path == "":
		return "empty path"
	case strings.ContainsFunc(path, unicode.IsSpace):
		return fmt.Sprintf("path %q contains white space", path)
	case strings.Contains(path, "="):
		return fmt.Sprintf("path %q contains '='", path)
	}
	first, _, _ := strings.Cut(path, ".")
	first, _, _ = strings.Cut(first, "[")
	if first == "seed" {
		return "the seed is swept by the seeds, not by an axis"
	}
	return ""
}

// Point is one grid point: the values of its axes.
type Point struct {
	Index  int      `json:"index"`
	Values []string `json:"values"` // one per axis
}

// Points is the grid's cartesian product, the first axis varying slowest;
// Point.Index counts from 0. Check Runs first: a grid of the largest valid
// size has 100^4 points.
func (s Spec) Points() []Point {
	n := 1
	for _, a := range s.Axes {
		n *= len(a.Values)
	}
	points := make([]Point, n)
	for i := range points {
		values := make([]string, len(s.Axes))
		rest := i
		for j := len(s.Axes) - 1; j >= 0; j-- {
			vs := s.Axes[j].Values
			values[j] = vs[rest%len(vs)]
			rest /= len(vs)
		}
		points[i] = Point{Index: i, Values: values}
	}
	return points
}

// Runs is len(Points()) * len(Seeds), computed without building the
// points; it saturates at math.MaxInt.
func (s Spec) Runs() int {
	n := len(s.Seeds)
	for _, a := range s.Axes {
		n = mulSat(n, len(a.Values))
	}
	return n
}

func mulSat(a, b int) int {
	if a == 0 || b == 0 {
		return 0
	}
	if a > math.MaxInt/b {
		return math.MaxInt
	}
	return a * b
}

// Apply returns the scenario document doc with the point's values set at
// the axes' paths and "seed" set to seed, through scenarios.ApplySets (so
// errors are *scenarios.Error naming the path). The seed is set last.
func Apply(doc []byte, axes []Axis, p Point, seed uint64) ([]byte, error) {
	if len(p.Values) != len(axes) {
		return nil, &scenarios.Error{Errors: []scenarios.FieldError{{
			Error: fmt.Sprintf("point %d has %d values for %d axes", p.Index, len(p.Values), len(axes))}}}
	}
	sets := make([]string, 0, len(axes)+1)
	for i, a := range axes {
		if msg := checkPath(a.Path); msg != "" {
			return nil, &scenarios.Error{Errors: []scenarios.FieldError{{Field: a.Path, Error: msg}}}
		}
		sets = append(sets, a.Path+"="+p.Values[i])
	}
	sets = append(sets, "seed="+strconv.FormatUint(seed, 10))
	return scenarios.ApplySets(doc, sets)
}

// Metric is one summary metric a sweep aggregates.
type Metric struct {
	Key   string `json:"key"`
	Label string `json:"label"` // human: "FCT slowdown p99", "FCT slowdown p99, 10-100 KB"
	Unit  string `json:"unit"`  // "", "bytes", "µs", "Gbps"
}

// Metrics lists every metric in a fixed order: the overall FCT slowdown
// (fct_mean, fct_p50, fct_p99), its p50 and p99 per size bucket of
// report.SizeBuckets (fct_p50_b0, fct_p99_b0, ..., fct_p99_b4), then
// max_queue and queue_p99 (switch_queues.max and .p99, bytes),
// pfc_pause_us (total pause time over the ports), goodput_gbps, jain,
// drops and flows_unfinished.
func Metrics() []Metric {
	ms := []Metric{
		{"fct_mean", "FCT slowdown mean", ""},
		{"fct_p50", "FCT slowdown p50", ""},
		{"fct_p99", "FCT slowdown p99", ""},
	}
	for i, b := range report.SizeBuckets() {
		size := sizeRange(b.Lo, b.Hi)
		ms = append(ms,
			Metric{fmt.Sprintf("fct_p50_b%d", i), "FCT slowdown p50, " + size, ""},
			Metric{fmt.Sprintf("fct_p99_b%d", i), "FCT slowdown p99, " + size, ""})
	}
	return append(ms,
		Metric{"max_queue", "Switch queue max", "bytes"},
		Metric{"queue_p99", "Switch queue p99", "bytes"},
		Metric{"pfc_pause_us", "PFC pause time, all ports", "µs"},
		Metric{"goodput_gbps", "Goodput", "Gbps"},
		Metric{"jain", "Jain's fairness (second half)", ""},
		Metric{"drops", "Packets dropped", ""},
		Metric{"flows_unfinished", "Flows unfinished", ""},
	)
}

// sizeRange names a size bucket in decimal units: "<10 KB", "10-100 KB",
// "100 KB-1 MB", "≥10 MB".
func sizeRange(lo int64, hi *int64) string {
	if hi == nil {
		return "≥" + sizeText(lo)
	}
	if lo == 0 {
		return "<" + sizeText(*hi)
	}
	l, h := sizeText(lo), sizeText(*hi)
	lu, hu := l[strings.IndexByte(l, ' '):], h[strings.IndexByte(h, ' '):]
	if lu == hu {
		return strings.TrimSuffix(l, lu) + "-" + h
	}
	return l + "-" + h
}

// sizeText writes bytes with the largest decimal unit that divides them.
func sizeText(b int64) string {
	for _, u := range []struct {
		n    int64
		name string
	}{{1_000_000_000, "GB"}, {1_000_000, "MB"}, {1_000, "KB"}} {
		if b >= u.n && b%u.n == 0 {
			return strconv.FormatInt(b/u.n, 10) + " " + u.name
		}
	}
	return strconv.FormatInt(b, 10) + " B"
}

// Extract reads a run's summary.json values for every metric it has (a
// metric whose source is absent or null - no finished flow in a bucket, no
// jain - is left out of the map).
func Extract(sum *report.Summary) map[string]float64 {
	m := map[string]float64{}
	if sum == nil {
		return m
	}
	if st := sum.FCTSlowdown; st != nil {
		m["fct_mean"], m["fct_p50"], m["fct_p99"] = st.Mean, st.P50, st.P99
	}
	for i, b := range sum.FCTSlowdownBySize {
		if b.Count == 0 {
			continue
		}
		if b.P50 != nil {
			m[fmt.Sprintf("fct_p50_b%d", i)] = *b.P50
		}
		if b.P99 != nil {
			m[fmt.Sprintf("fct_p99_b%d", i)] = *b.P99
		}
	}
	m["max_queue"] = float64(sum.SwitchQueues.Max)
	m["queue_p99"] = float64(sum.SwitchQueues.P99)
	// summed in port order: a float sum in map order would not be
	// reproducible
	ports := make([]string, 0, len(sum.PFCPauseFraction))
	for p := range sum.PFCPauseFraction {
		ports = append(ports, p)
	}
	sort.Strings(ports)
	pause := 0.0
	for _, p := range ports {
		pause += sum.PFCPauseFraction[p] * sum.SimSeconds * 1e6
	}
	m["pfc_pause_us"] = pause
	m["goodput_gbps"] = sum.GoodputGbps
	if sum.Jain != nil {
		m["jain"] = *sum.Jain
	}
	m["drops"] = float64(sum.Drops)
	m["flows_unfinished"] = float64(sum.FlowsUnfinished)
	return m
}

// Stat is a metric across a point's seeds: the mean and the 95% confidence
// interval of the mean (Student's t with n-1 degrees of freedom:
// mean ± t(0.975, n-1)·s/√n); with n = 1, Lo = Hi = Mean.
type Stat struct {
	Mean float64 `json:"mean"`
	Lo   float64 `json:"lo"`
	Hi   float64 `json:"hi"`
	N    int     `json:"n"`
}

// Aggregate is the Stat of values; no values give the zero Stat (N 0), and
// equal values an interval of width 0.
func Aggregate(values []float64) Stat {
	n := len(values)
	if n == 0 {
		return Stat{}
	}
	if allEqual(values) {
		return Stat{Mean: values[0], Lo: values[0], Hi: values[0], N: n}
	}
	sum := 0.0
	for _, v := range values {
		sum += v
	}
	mean := sum / float64(n)
	ss := 0.0
	for _, v := range values {
		ss += (v - mean) * (v - mean)
	}
	sd := math.Sqrt(ss / float64(n-1))
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(n - 1)}.Quantile(0.975)
	half := t * sd / math.Sqrt(float64(n))
	return Stat{Mean: mean, Lo: mean - half, Hi: mean + half, N: n}
}

func allEqual(values []float64) bool {
	for _, v := range values[1:] {
		if v != values[0] {
			return false
		}
	}
	return true
}

// PointResult is one grid point's outcome.
type PointResult struct {
	Point
	Runs    []string        `json:"runs"`    // run ids or output dirs, one per seed, in seed order ("" if not made)
	Done    int             `json:"done"`    // runs finished (status done)
	Metrics map[string]Stat `json:"metrics"` // over the finished runs' values
}

// Summarize aggregates a point's runs: values[i] is the Extract of the
// i-th seed's run, nil if that run has not finished. A metric no finished
// run has is left out of Metrics.
func Summarize(p Point, runs []string, values []map[string]float64) PointResult {
	r := PointResult{Point: p, Runs: append([]string{}, runs...), Metrics: map[string]Stat{}}
	for _, v := range values {
		if v != nil {
			r.Done++
		}
	}
	for _, m := range Metrics() {
		var xs []float64
		for _, v := range values {
			if x, ok := v[m.Key]; ok {
				xs = append(xs, x)
			}
		}
		if len(xs) > 0 {
			r.Metrics[m.Key] = Aggregate(xs)
		}
	}
	return r
}

// WriteCSV writes sweep.csv: a header, then one row per point in index
// order. Columns: one per axis (header: the axis path), "runs_done", then
// for every metric of Metrics() key_mean, key_lo, key_hi (empty cells where
// the point has no value). Floats are formatted 'g' -1.
func WriteCSV(w io.Writer, spec Spec, points []PointResult) error {
	metrics := Metrics()
	header := make([]string, 0, len(spec.Axes)+1+3*len(metrics))
	for _, a := range spec.Axes {
		header = append(header, a.Path)
	}
	header = append(header, "runs_done")
	for _, m := range metrics {
		header = append(header, m.Key+"_mean", m.Key+"_lo", m.Key+"_hi")
	}
	sorted := slices.Clone(points)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Index < sorted[j].Index })
	for i, p := range sorted {
		if len(p.Values) != len(spec.Axes) {
			return fmt.Errorf("sweep.csv: point %d has %d values for %d axes", p.Index, len(p.Values), len(spec.Axes))
		}
		if i > 0 && sorted[i-1].Index == p.Index {
			return fmt.Errorf("sweep.csv: point %d is given twice", p.Index)
		}
	}
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return fmt.Errorf("sweep.csv: %w", err)
	}
	g := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, p := range sorted {
		row := append(make([]string, 0, len(header)), p.Values...)
		row = append(row, strconv.Itoa(p.Done))
		for _, m := range metrics {
			if st, ok := p.Metrics[m.Key]; ok && st.N > 0 {
				row = append(row, g(st.Mean), g(st.Lo), g(st.Hi))
			} else {
				row = append(row, "", "", "")
			}
		}
		if err := cw.Write(row); err != nil {
			return fmt.Errorf("sweep.csv: %w", err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("sweep.csv: %w", err)
	}
	return nil
}
