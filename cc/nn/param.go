package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Param is one named tensor of a model: its shape, its values and the
// gradient of a loss with respect to them (same length as Value).
type Param struct {
	Name  string
	Shape []int
	Value []float64
	Grad  []float64
}

// NewParam returns a zero parameter of the given shape.
func NewParam(name string, shape ...int) *Param {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return &Param{
		Name:  name,
		Shape: append([]int(nil), shape...),
		Value: make([]float64, n),
		Grad:  make([]float64, n),
	}
}

// Clone returns a deep copy of p (values and gradient).
func (p *Param) Clone() *Param {
	return &Param{
		Name:  p.Name,
		Shape: append([]int(nil), p.Shape...),
		Value: append([]float64(nil), p.Value...),
		Grad:  append([]float64(nil), p.Grad...),
	}
}

// uniform fills p's values from U(−bound, bound).
func (p *Param) uniform(rng *rand.Rand, bound float64) {
	for i := range p.Value {
		p.Value[i] = (2*rng.Float64() - 1) * bound
	}
}

// Params is an ordered list of parameters: a model's, or several models'.
type Params []*Param

// Size is the number of values in all the parameters.
func (ps Params) Size() int {
	n := 0
	for _, p := range ps {
		n += len(p.Value)
	}
	return n
}

// Find returns the parameter named name, or nil.
func (ps Params) Find(name string) *Param {
	for _, p := range ps {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// ZeroGrad sets every gradient to zero.
func (ps Params) ZeroGrad() {
	for _, p := range ps {
		clear(p.Grad)
	}
}

// check panics unless ps and src match name for name and size for size.
func (ps Params) check(op string, src Params) {
	if len(ps) != len(src) {
		panic(fmt.Sprintf("nn: %s: %d parameters, source has %d", op, len(ps), len(src)))
	}
	for i, p := range ps {
		if p.Name != src[i].Name || len(p.Value) != len(src[i].Value) {
			panic(fmt.Sprintf("nn: %s: parameter %d is %s (%d values), source has %s (%d values)",
				op, i, p.Name, len(p.Value), src[i].Name, len(src[i].Value)))
		}
	}
}

// CopyValues copies src's values into ps. The lists must match name for
// name and size for size (it panics otherwise: a programming error).
func (ps Params) CopyValues(src Params) {
	ps.check("CopyValues", src)
	for i, p := range ps {
		copy(p.Value, src[i].Value)
	}
}

// Polyak moves ps towards src: p ← rho·p + (1 − rho)·s, as the target
// networks of DDPG and TD3 are updated ("polyak averaging"). The lists must
// match as for CopyValues.
func (ps Params) Polyak(src Params, rho float64) {
	ps.check("Polyak", src)
	for i, p := range ps {
		s := src[i].Value
		for j := range p.Value {
			p.Value[j] = rho*p.Value[j] + (1-rho)*s[j]
		}
	}
}

// AddGrads adds src's gradients into ps' (to reduce gradients computed on
// parts of a batch). The lists must match as for CopyValues.
func (ps Params) AddGrads(src Params) {
	ps.check("AddGrads", src)
	for i, p := range ps {
		s := src[i].Grad
		for j := range p.Grad {
			p.Grad[j] += s[j]
		}
	}
}

// Tensors returns the parameters' values as tensors named prefix + name.
// The tensors share the parameters' memory (nothing is copied).
func (ps Params) Tensors(prefix string) []Tensor {
	ts := make([]Tensor, len(ps))
	for i, p := range ps {
		ts[i] = Tensor{Name: prefix + p.Name, Shape: p.Shape, Data: p.Value}
	}
	return ts
}

// Load copies every parameter's values from f's tensor named prefix +
// name. A missing tensor or one of another shape is an error naming it; on
// error some parameters may have been loaded already.
func (ps Params) Load(f *File, prefix string) error {
	for _, p := range ps {
		v, err := f.Lookup(prefix+p.Name, p.Shape...)
		if err != nil {
			return err
		}
		copy(p.Value, v)
	}
	return nil
}

// CheckFinite returns an error naming the first parameter that holds a NaN
// or an infinity, or nil.
func (ps Params) CheckFinite() error {
	for _, p := range ps {
		for i, v := range p.Value {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("nn: parameter %s: value %d is %v", p.Name, i, v)
			}
		}
	}
	return nil
}
