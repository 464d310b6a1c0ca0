// Package repro reproduces the seeds' experiments: each experiment names the
// library scenarios it runs (with edits), and turns their results into rows
// that put every number the paper states beside ours, with a verdict, and
// into figures. The CLI (`cclab reproduce`) runs them on every core; the
// server runs the same runs as lab runs and evaluates them from the store.
// Both evaluate through Outcome, so a row means the same thing in either.
package repro

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"

	"cclab/sim"
	"cclab/sim/report"
)

// Seed is one of the research works the lab reproduces.
type Seed struct {
	ID    string // "000"
	Name  string // "MPCC"
	Title string // the work's title
}

// Seeds are the works, in order; Experiments says which have experiments
// today.
var Seeds = []Seed{
	{"000", "MPCC", "Model predictive congestion control in RDMA-enabled high-speed datacenter networks (thesis)"},
	{"001", "FDCC", "Deep-RL congestion control with LSTM-TD3"},
	{"002", "RCC", "Receiver-driven congestion control: explicit window assignment and PI delay control"},
	{"003", "QCN", "Stability analysis of QCN: the Averaging Principle (SIGMETRICS 2011)"},
	{"004", "Dolce-RC", "DCQCN tuned online by a discounted-UCB bandit"},
}

// Run is one simulation an experiment needs: a library scenario with
// --set style edits and, when Algo is not empty, another algorithm.
type Run struct {
	Key      string   // unique within the experiment, e.g. "hpcc" or "n=64/dcqcn"
	Scenario string   // library id
	Algo     string   // "": the scenario's
	Sets     []string // PATH=VALUE edits, applied before Algo
	// Series lists the metrics whose samples the evaluation reads (all
	// their entities); the others are not kept.
	Series []string
}

// Label is how a run is named in reports and the lab: its scenario, edits
// and algorithm.
func (r Run) Label() string {
	s := r.Scenario
	if len(r.Sets) > 0 {
		s += " " + strings.Join(r.Sets, " ")
	}
	if r.Algo != "" {
		s += " --algo " + r.Algo
	}
	return s
}

// Experiment is one experiment of a seed.
type Experiment struct {
	Seed  string // "000"
	ID    string // unique over all seeds, e.g. "mpcc-exp1"
	Title string // the paper's name for it, e.g. "Exp. 1 (§5.2, Fig. 5.2): queue convergence"
	// Claim is what the paper says, in a sentence or two.
	Claim string
	// Reading says how we read what the paper leaves open (the extracts
	// in shared/spec/seeds mark these), and what our setting changes.
	Reading string
	// Quick marks experiments in the --quick set; QuickRuns, when set,
	// gives that set's smaller runs instead of Runs.
	Quick     bool
	Runs      func() []Run
	QuickRuns func() []Run
	// Rows evaluates the outcomes of every run (by key).
	Rows func(o Outcomes) []Row
	// Figures draws what the outcomes that exist so far show (a figure
	// leaves out a run that has not finished).
	Figures func(o Outcomes) []Figure
}

// RunsFor is the experiment's runs in the quick or the full set.
func (e *Experiment) RunsFor(quick bool) []Run {
	if quick && e.QuickRuns != nil {
		return e.QuickRuns()
	}
	return e.Runs()
}

// Outcome is what an evaluation reads of one finished run.
type Outcome struct {
	Summary *report.Summary
	Flows   []sim.FlowResult
	series  map[string]Series // "metric\x00entity"
}

// Series is one series of samples: times in seconds.
type Series struct {
	T, V []float64
}

// NewOutcome wraps a run's summary and flows; AddSample adds its series.
func NewOutcome(sum *report.Summary, flows []sim.FlowResult) *Outcome {
	return &Outcome{Summary: sum, Flows: flows, series: map[string]Series{}}
}

// AddSample appends one sample (t in seconds) to a series.
func (o *Outcome) AddSample(metric, entity string, t, v float64) {
	k := metric + "\x00" + entity
	s := o.series[k]
	s.T = append(s.T, t)
	s.V = append(s.V, v)
	o.series[k] = s
}

// Series is the samples of metric for entity (empty if none).
func (o *Outcome) Series(metric, entity string) Series {
	return o.series[metric+"\x00"+entity]
}

// Outcomes are an experiment's finished runs by key.
type Outcomes map[string]*Outcome

// Verdict is how our number stands against the paper's.
type Verdict string

const (
	Reproduced     Verdict = "reproduced"
	DirectionOnly  Verdict = "direction only"
	NotReproduced  Verdict = "not reproduced"
	NotComparable  Verdict = "not comparable" // e.g. wall-clock times of another machine and solver
	verdictUnknown Verdict = ""
)

// Value is a paper's or our value: a number with a unit, or a statement.
type Value struct {
	Num  float64
	Unit string // "µs", "%", "B", "Gbps", "" (a ratio or an index)
	Text string // a statement, or a number as the paper prints it
}

// Number is a numeric value.
func Number(v float64, unit string) Value { return Value{Num: v, Unit: unit} }

// Statement is a value that is not a number ("below DCQCN's").
func Statement(s string) Value { return Value{Num: math.NaN(), Text: s} }

// IsNum says whether the value is a number.
func (v Value) IsNum() bool { return !math.IsNaN(v.Num) && !math.IsInf(v.Num, 0) }

// String prints the value with its unit.
func (v Value) String() string {
	if !v.IsNum() {
		if v.Text != "" {
			return v.Text
		}
		return "—"
	}
	if v.Text != "" {
		return v.Text
	}
	s := formatNum(v.Num)
	switch v.Unit {
	case "":
		return s
	case "%":
		return s + "%"
	default:
		return s + " " + v.Unit
	}
}

// MarshalJSON writes a number as a number and a statement as a string.
func (v Value) MarshalJSON() ([]byte, error) {
	if v.IsNum() {
		return json.Marshal(v.Num)
	}
	return json.Marshal(v.String())
}

func formatNum(x float64) string {
	a := math.Abs(x)
	switch {
	case a == 0:
		return "0"
	case a >= 1000:
		return fmt.Sprintf("%.0f", x)
	case a >= 100:
		return fmt.Sprintf("%.1f", x)
	case a >= 1:
		return fmt.Sprintf("%.2f", x)
	default:
		return fmt.Sprintf("%.4g", x)
	}
}

// Row is one stated number (or claim) of the paper beside ours.
type Row struct {
	Seed       string  `json:"seed"`
	Experiment string  `json:"experiment"`
	Metric     string  `json:"metric"` // the paper's own names, e.g. "Table II, 256-to-1, DCQCN, PFC pause time"
	Paper      Value   `json:"paper"`
	Ours       Value   `json:"ours"`
	Unit       string  `json:"unit,omitempty"`
	Diff       *string `json:"diff,omitempty"` // ours − paper, as printed
	Verdict    Verdict `json:"verdict"`
	// Rule is the tolerance the verdict used and why.
	Rule string `json:"rule"`
	// Note explains a difference, or the reading of an ambiguity.
	Note string `json:"note,omitempty"`
	// Measured marks rows whose value is a wall-clock measurement (not
	// deterministic for a seed).
	WallClock bool `json:"wall_clock,omitempty"`
}

// Figure is a chart of an experiment: lines (x, y per series) or bars (one
// value per label and series).
type Figure struct {
	Name   string // file name without extension, e.g. "mpcc-exp1-queue"
	Title  string
	XLabel string
	YLabel string
	Bars   bool
	Lines  []Line // Bars: every line's X are indexes into Labels
	Labels []string
	LogY   bool
}

// Line is one series of a figure.
type Line struct {
	Name string
	X, Y []float64
}

// Experiments is every experiment the lab has, by seed.
func Experiments() []*Experiment {
	var all []*Experiment
	all = append(all, mpccExperiments()...)
	all = append(all, fdccExperiments()...)
	all = append(all, rccExperiments()...)
	all = append(all, qcnExperiments()...)
	all = append(all, dolceExperiments()...)
	return all
}

// Lookup returns an experiment by id.
func Lookup(id string) *Experiment {
	for _, e := range Experiments() {
		if e.ID == id {
			return e
		}
	}
	return nil
}

// Select resolves names (a seed id like "002", a seed name like "rcc", or
// an experiment id) to experiments, in registry order; no names means all.
// An unknown name is an error listing the valid ones.
func Select(names []string, quick bool) ([]*Experiment, error) {
	all := Experiments()
	want := map[string]bool{}
	for _, n := range names {
		n = strings.ToLower(strings.TrimSpace(n))
		found := false
		for _, s := range Seeds {
			if n == s.ID || n == strings.ToLower(s.Name) {
				has := false
				for _, e := range all {
					if e.Seed == s.ID {
						want[e.ID], has = true, true
					}
				}
				if !has {
					return nil, fmt.Errorf("seed %s (%s) has no experiments in the lab yet; seeds with experiments: %s", s.ID, s.Name, strings.Join(seedsWithExperiments(all), ", "))
				}
				found = true
			}
		}
		for _, e := range all {
			if n == e.ID {
				want[e.ID], found = true, true
			}
		}
		if !found {
			return nil, fmt.Errorf("unknown seed or experiment %q; seeds: %s; experiments: %s",
				n, strings.Join(seedsWithExperiments(all), ", "), strings.Join(ids(all), ", "))
		}
	}
	var out []*Experiment
	for _, e := range all {
		if len(names) == 0 && (!quick || e.Quick) || want[e.ID] {
			out = append(out, e)
		}
	}
	return out, nil
}

func seedsWithExperiments(all []*Experiment) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range Seeds {
		for _, e := range all {
			if e.Seed == s.ID && !seen[s.ID] {
				seen[s.ID] = true
				out = append(out, s.ID+" ("+strings.ToLower(s.Name)+")")
			}
		}
	}
	return out
}

func ids(all []*Experiment) []string {
	var out []string
	for _, e := range all {
		out = append(out, e.ID)
	}
	sort.Strings(out)
	return out
}

// SeedOf returns a seed by id.
func SeedOf(id string) Seed {
	for _, s := range Seeds {
		if s.ID == id {
			return s
		}
	}
	return Seed{ID: id}
}
