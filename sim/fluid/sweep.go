package fluid

import (
	"fmt"
	"math"
)

// SweepPoint is the margins at one value of a swept parameter, in µs.
type SweepPoint struct {
	Value         float64 `json:"value"`
	TauStarUs     float64 `json:"tauStarUs"`
	TauHatUs      float64 `json:"tauHatUs"`
	ExactMarginUs float64 `json:"exactMarginUs"`
}

// MaxSweep bounds the points of one sweep.
const MaxSweep = 10000

// Sweep evaluates τ*, τ̂ and the exact margin of q with param (one of
// Params) set to each of values in turn. A value outside the model's
// domain is an error naming the parameter and the value.
func Sweep(q QCN, param string, values []float64) ([]SweepPoint, error) {
	if len(values) == 0 || len(values) > MaxSweep {
		return nil, &ParamError{"values", fmt.Sprintf("between 1 and %d values, got %d", MaxSweep, len(values))}
	}
	out := make([]SweepPoint, 0, len(values))
	for _, v := range values {
		p := q
		if err := p.Set(param, v); err != nil {
			return nil, err
		}
		if err := p.Validate(); err != nil {
			return nil, fmt.Errorf("%s = %g: %w", param, v, err)
		}
		l := p.Linearise()
		ts, _ := l.TauStar(false)
		th, _ := l.TauHat()
		ex, err := l.ExactMargin()
		if err != nil {
			return nil, fmt.Errorf("%s = %g: %w", param, v, err)
		}
		out = append(out, SweepPoint{Value: v, TauStarUs: ts * 1e6, TauHatUs: th * 1e6, ExactMarginUs: ex * 1e6})
	}
	return out, nil
}

// Span is n values from lo to hi, evenly spaced or (log) geometrically;
// whole numbers only for N.
func Span(param string, lo, hi float64, n int, log bool) ([]float64, error) {
	if n < 1 || n > MaxSweep {
		return nil, &ParamError{"points", fmt.Sprintf("between 1 and %d points, got %d", MaxSweep, n)}
	}
	if math.IsNaN(lo) || math.IsNaN(hi) || math.IsInf(lo, 0) || math.IsInf(hi, 0) || hi < lo {
		return nil, &ParamError{"to", fmt.Sprintf("want from ≤ to, both finite; got %g and %g", lo, hi)}
	}
	if log && !(lo > 0) {
		return nil, &ParamError{"from", fmt.Sprintf("a logarithmic span starts above 0, got %g", lo)}
	}
	out := make([]float64, n)
	for i := range out {
		f := 0.0
		if n > 1 {
			f = float64(i) / float64(n-1)
		}
		if log {
			out[i] = lo * math.Pow(hi/lo, f)
		} else {
			out[i] = lo + (hi-lo)*f
		}
		if param == "n" {
			out[i] = math.Round(out[i])
		}
	}
	return out, nil
}
