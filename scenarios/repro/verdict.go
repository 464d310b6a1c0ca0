package repro

import (
	"fmt"
	"math"
)

// rows builds an experiment's rows; every verdict rule lives here.
type rows struct {
	seed, exp string
	out       []Row
}

func newRows(e string) *rows {
	x := Lookup(e)
	if x == nil {
		panic("repro: no experiment " + e)
	}
	return &rows{seed: x.Seed, exp: e}
}

func (r *rows) add(row Row) *Row {
	row.Seed, row.Experiment = r.seed, r.exp
	r.out = append(r.out, row)
	return &r.out[len(r.out)-1]
}

func diffString(paper, ours float64, unit string) *string {
	d := ours - paper
	s := formatNum(d)
	if d > 0 {
		s = "+" + s
	}
	switch unit {
	case "":
	case "%":
		s += " pp"
	default:
		s += " " + unit
	}
	if paper != 0 && unit != "%" {
		s += fmt.Sprintf(" (%+.1f%%)", 100*d/math.Abs(paper))
	}
	return &s
}

// within: reproduced when |ours − paper| ≤ tol, else not reproduced.
func (r *rows) within(metric string, paper, ours float64, unit string, tol float64, rule string) *Row {
	v := NotReproduced
	if math.Abs(ours-paper) <= tol {
		v = Reproduced
	}
	if math.IsNaN(ours) {
		v = NotReproduced
	}
	return r.add(Row{Metric: metric, Paper: Number(paper, unit), Ours: Number(ours, unit), Unit: unit,
		Diff: diffString(paper, ours, unit), Verdict: v, Rule: rule})
}

// change compares a relative change in percent (negative: lower than the
// baseline): reproduced within tol percentage points, direction only when
// the sign agrees, else not reproduced.
func (r *rows) change(metric string, paperPct, oursPct, tol float64, rule string) *Row {
	v := NotReproduced
	switch {
	case math.Abs(oursPct-paperPct) <= tol:
		v = Reproduced
	case paperPct*oursPct > 0:
		v = DirectionOnly
	}
	return r.add(Row{Metric: metric, Paper: Number(paperPct, "%"), Ours: Number(oursPct, "%"), Unit: "%",
		Diff: diffString(paperPct, oursPct, "%"), Verdict: v, Rule: rule})
}

// upTo compares an "up to X%" reduction with ours at the one load we run:
// reproduced when ours reaches paper − tol, direction only when ours is a
// reduction at all (same sign).
func (r *rows) upTo(metric string, paperPct, oursPct, tol float64, rule string) *Row {
	v := NotReproduced
	switch {
	case oursPct >= paperPct-tol:
		v = Reproduced
	case oursPct > 0:
		v = DirectionOnly
	}
	return r.add(Row{Metric: metric, Paper: Value{Num: paperPct, Unit: "%", Text: fmt.Sprintf("up to %s%%", formatNum(paperPct))},
		Ours: Number(oursPct, "%"), Unit: "%", Diff: diffString(paperPct, oursPct, "%"), Verdict: v, Rule: rule})
}

// claim is a statement of the paper that holds or does not.
// between is a reduction the paper gives as a range over its loads:
// reproduced when ours is within [lo − tol, hi + tol], direction only when
// it is a reduction outside it.
func (r *rows) between(metric string, lo, hi, ours, tol float64, rule string) *Row {
	v := NotReproduced
	switch {
	case ours >= lo-tol && ours <= hi+tol:
		v = Reproduced
	case ours > 0:
		v = DirectionOnly
	}
	return r.add(Row{Metric: metric, Paper: Statement(fmt.Sprintf("%g–%g%%", lo, hi)), Ours: Number(ours, "%"), Unit: "%",
		Verdict: v, Rule: rule})
}

func (r *rows) claim(metric, paper, ours string, holds bool, rule string) *Row {
	v := NotReproduced
	if holds {
		v = Reproduced
	}
	return r.add(Row{Metric: metric, Paper: Statement(paper), Ours: Statement(ours), Verdict: v, Rule: rule})
}

// compared is a comparison the paper does not make in numbers (the lab's
// two models side by side): reported, never a verdict.
func (r *rows) compared(metric, paper, ours, rule string) *Row {
	return r.add(Row{Metric: metric, Paper: Statement(paper), Ours: Statement(ours), Verdict: NotComparable, Rule: rule})
}

// measured is a number that cannot be compared in absolute terms (another
// machine's wall clock); direction says whether its trend agrees.
func (r *rows) measured(metric string, paper, ours float64, unit string, rule string) *Row {
	return r.add(Row{Metric: metric, Paper: Number(paper, unit), Ours: Number(ours, unit), Unit: unit,
		Verdict: NotComparable, Rule: rule, WallClock: true})
}

func pct(a, b float64) float64 { return 100 * (a/b - 1) }

// reduction is how much lower a is than b, in percent of b.
func reduction(a, b float64) float64 { return 100 * (1 - a/b) }
