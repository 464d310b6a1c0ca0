package web

import (
	"fmt"
	"math"
	"strings"
)

// ScenarioClass is the class view of a shared scenario (/s/{id}/class):
// every run of it and of the copies edited from it, side by side.
type ScenarioClass struct {
	ScenarioID, Name string
	All              bool // every owner's runs (the instructor); else the viewer's own
	Instructor       bool
	Sort             string // "newest" or a metric name
	Truncated        bool
	Task             string   // the exercise's task, if it is one
	Locked           []string // the exercise's locked fields
	Metrics          []ClassMetric
	Rows             []ClassRow
}

// ClassMetric is a sortable column.
type ClassMetric struct{ Name, Label, Better string }

// ClassRow is one run.
type ClassRow struct {
	ID, Label, Name, Status, ScenarioID, Created, Color string
	Edited                                              bool
	Values                                              []string // by Metrics
	CDF                                                 [][2]float64
}

var classPalette = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22"}

// ClassColor is the colour of the i-th run's CDF.
func ClassColor(i int) string { return classPalette[i%len(classPalette)] }

// The CDF chart's geometry (SVG user units).
const (
	cdfW, cdfH                 = 640.0, 300.0
	cdfLeft, cdfRight          = 56.0, 16.0
	cdfTop, cdfBottom          = 12.0, 40.0
	cdfPlotW, cdfPlotH         = cdfW - cdfLeft - cdfRight, cdfH - cdfTop - cdfBottom
	cdfMinSlowdown     float64 = 1
)

// cdfMax is the largest slowdown of the drawn CDFs (the x axis is log10
// from 1 to it).
func (v ScenarioClass) cdfMax() float64 {
	m := 2.0
	for _, r := range v.Rows {
		for _, p := range r.CDF {
			m = math.Max(m, p[0])
		}
	}
	return math.Pow(10, math.Ceil(math.Log10(m)*4)/4)
}

func (v ScenarioClass) hasCDF() bool {
	for _, r := range v.Rows {
		if len(r.CDF) > 0 {
			return true
		}
	}
	return false
}

func (v ScenarioClass) cdfX(x float64) float64 {
	x = math.Max(x, cdfMinSlowdown)
	return cdfLeft + cdfPlotW*math.Log10(x)/math.Log10(v.cdfMax())
}

func cdfY(y float64) float64 { return cdfTop + cdfPlotH*(1-y) }

// cdfPoints is a run's CDF as an SVG polyline's points (a step function).
func (v ScenarioClass) cdfPoints(r ClassRow) string {
	var b strings.Builder
	prev := 0.0
	for i, p := range r.CDF {
		x := v.cdfX(p[0])
		if i == 0 {
			fmt.Fprintf(&b, "%.1f,%.1f ", x, cdfY(0))
		}
		fmt.Fprintf(&b, "%.1f,%.1f %.1f,%.1f ", x, cdfY(prev), x, cdfY(p[1]))
		prev = p[1]
	}
	return strings.TrimSpace(b.String())
}

// cdfTicks are the x axis ticks: 1, 2, 3, 5, 10, 20, 30, 50, ... up to the max.
func (v ScenarioClass) cdfTicks() []float64 {
	var out []float64
	for d := 1.0; d <= v.cdfMax()*1.0001; d *= 10 {
		for _, m := range []float64{1, 2, 3, 5} {
			if d*m <= v.cdfMax()*1.0001 {
				out = append(out, d*m)
			}
		}
	}
	return out
}

func cvNum(x float64) string    { return fmt.Sprintf("%.1f", x) }
func tickText(x float64) string { return fmt.Sprintf("%g", x) }

// runLabel is the name shown for a run: the student's label, else the
// run's short id.
func (r ClassRow) runLabel() string {
	if r.Label != "" {
		return r.Label
	}
	return "(no name) " + r.ID[:min(8, len(r.ID))]
}

// sortHref is the address of the view sorted by metric m.
func (v ScenarioClass) sortHref(m string) string {
	return "/s/" + v.ScenarioID + "/class?sort=" + m
}

func (v ScenarioClass) ariaSort(m ClassMetric) string {
	if v.Sort != m.Name {
		return "none"
	}
	if m.Better == "lower" {
		return "ascending"
	}
	return "descending"
}

func ariaCurrent(on bool) string {
	if on {
		return "page"
	}
	return "false"
}
