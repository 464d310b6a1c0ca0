package nn

import (
	"fmt"
	"math"
)

// Adam is the Adam optimiser as PyTorch's torch.optim.Adam computes it
// (no weight decay, no AMSGrad). For every value p with gradient g, at
// step t (counted from 1):
//
//	m ← β1·m + (1 − β1)·g        v ← β2·v + (1 − β2)·g²
//	p ← p − (LR / (1 − β1^t)) · m / (√v / √(1 − β2^t) + Eps)
type Adam struct {
	LR, Beta1, Beta2, Eps float64
	// Steps is the number of steps taken (PyTorch's "step").
	Steps int

	params Params
	m, v   [][]float64 // exp_avg, exp_avg_sq, one per parameter
}

// NewAdam returns an optimiser of ps with learning rate lr and PyTorch's
// defaults β1 0.9, β2 0.999, eps 1e-8.
func NewAdam(ps Params, lr float64) *Adam {
	a := &Adam{LR: lr, Beta1: 0.9, Beta2: 0.999, Eps: 1e-8, params: ps}
	for _, p := range ps {
		a.m = append(a.m, make([]float64, len(p.Value)))
		a.v = append(a.v, make([]float64, len(p.Value)))
	}
	return a
}

// Step takes one step from the parameters' current gradients.
func (a *Adam) Step() {
	a.Steps++
	t := float64(a.Steps)
	bc1 := 1 - math.Pow(a.Beta1, t)
	bc2 := 1 - math.Pow(a.Beta2, t)
	stepSize := a.LR / bc1
	bc2Sqrt := math.Sqrt(bc2)
	for i, p := range a.params {
		m, v := a.m[i], a.v[i]
		g := p.Grad[:len(p.Value)]
		m, v = m[:len(p.Value)], v[:len(p.Value)]
		for j, gj := range g {
			m[j] = a.Beta1*m[j] + (1-a.Beta1)*gj
			v[j] = a.Beta2*v[j] + (1-a.Beta2)*gj*gj
			p.Value[j] -= stepSize * m[j] / (math.Sqrt(v[j])/bc2Sqrt + a.Eps)
		}
	}
}

// Tensors returns the optimiser's state as tensors sharing its memory:
// prefix + "exp_avg." + parameter name and prefix + "exp_avg_sq." +
// parameter name (PyTorch's names for m and v), and prefix + "step", a
// scalar holding Steps.
func (a *Adam) Tensors(prefix string) []Tensor {
	var ts []Tensor
	for i, p := range a.params {
		ts = append(ts,
			Tensor{Name: prefix + "exp_avg." + p.Name, Shape: p.Shape, Data: a.m[i]},
			Tensor{Name: prefix + "exp_avg_sq." + p.Name, Shape: p.Shape, Data: a.v[i]})
	}
	return append(ts, Tensor{Name: prefix + "step", Shape: []int{}, Data: []float64{float64(a.Steps)}})
}

// Load restores the state Tensors saved under prefix from f. The
// hyperparameters (LR, betas, Eps) are not in the file; the caller sets
// them.
func (a *Adam) Load(f *File, prefix string) error {
	for i, p := range a.params {
		m, err := f.Lookup(prefix+"exp_avg."+p.Name, p.Shape...)
		if err != nil {
			return err
		}
		v, err := f.Lookup(prefix+"exp_avg_sq."+p.Name, p.Shape...)
		if err != nil {
			return err
		}
		for j, x := range v {
			if x < 0 {
				return fmt.Errorf("nn: tensor %sexp_avg_sq.%s: value %d is negative (%v)", prefix, p.Name, j, x)
			}
		}
		copy(a.m[i], m)
		copy(a.v[i], v)
	}
	s, err := f.Lookup(prefix + "step")
	if err != nil {
		return err
	}
	if s[0] < 0 || s[0] > 1<<53 || s[0] != math.Trunc(s[0]) {
		return fmt.Errorf("nn: tensor %sstep: %v is not a step count", prefix, s[0])
	}
	a.Steps = int(s[0])
	return nil
}
