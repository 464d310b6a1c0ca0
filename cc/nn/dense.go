package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Dense is a fully connected layer, y = W·x + b, PyTorch's nn.Linear: W is
// Out×In row-major ("<name>.weight"), b has Out values ("<name>.bias").
type Dense struct {
	In, Out int
	W, B    *Param
}

// NewDense returns a layer with PyTorch's default initialisation: W and b
// drawn from U(−1/√In, 1/√In), W first, row by row, then b.
func NewDense(name string, in, out int, rng *rand.Rand) *Dense {
	if in <= 0 || out <= 0 {
		panic(fmt.Sprintf("nn: NewDense %s: sizes %d×%d", name, out, in))
	}
	d := &Dense{In: in, Out: out, W: NewParam(name+".weight", out, in), B: NewParam(name+".bias", out)}
	bound := 1 / math.Sqrt(float64(in))
	d.W.uniform(rng, bound)
	d.B.uniform(rng, bound)
	return d
}

// Params returns the layer's parameters, weight then bias.
func (d *Dense) Params() Params { return Params{d.W, d.B} }

// Clone returns a deep copy of the layer.
func (d *Dense) Clone() *Dense {
	return &Dense{In: d.In, Out: d.Out, W: d.W.Clone(), B: d.B.Clone()}
}

// Forward computes y = W·x + b for n rows: x holds n×In values, y n×Out.
func (d *Dense) Forward(y, x []float64, n int) {
	for r := range n {
		yr := y[r*d.Out : (r+1)*d.Out]
		copy(yr, d.B.Value)
		gemvAdd(yr, d.W.Value, x[r*d.In:(r+1)*d.In], d.Out, d.In)
	}
}

// Backward takes dy, the loss gradient with respect to the n rows of y
// that Forward computed from x, adds the parameters' gradients into W.Grad
// and B.Grad, and, when dx is not nil, writes the gradient with respect to
// x into dx (n×In values, overwritten).
func (d *Dense) Backward(dx, dy, x []float64, n int) {
	gb := d.B.Grad
	for r := range n {
		dyr := dy[r*d.Out : (r+1)*d.Out]
		gerAdd(d.W.Grad, d.Out, d.In, dyr, x[r*d.In:(r+1)*d.In])
		for o, g := range dyr {
			gb[o] += g
		}
	}
	if dx != nil {
		d.BackwardInput(dx, dy, n)
	}
}

// BackwardInput writes only the gradient with respect to the input,
// dx = Wᵀ·dy for n rows, leaving the parameters' gradients alone.
func (d *Dense) BackwardInput(dx, dy []float64, n int) {
	for r := range n {
		dxr := dx[r*d.In : (r+1)*d.In]
		clear(dxr)
		gemvTAdd(dxr, d.W.Value, dy[r*d.Out:(r+1)*d.Out], d.Out, d.In)
	}
}
