package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// The gradient checks compare every analytic gradient with a central
// difference (f(x+h) − f(x−h)) / 2h, h = 1e-5, of a scalar loss
// L = Σ w·y with fixed random weights w. The relative error is
// |a − n| / max(|a|, |n|, 1e-3): relative for gradients above 1e-3, and
// absolute below, where the difference's own rounding (≈ 1e-11·|L|/h)
// would dominate a pure ratio.
const (
	fdStep   = 1e-5
	fdTol    = 1e-6
	fdFloor  = 1e-3
	testSeed = 42
)

func relErr(a, n float64) float64 {
	return math.Abs(a-n) / math.Max(math.Max(math.Abs(a), math.Abs(n)), fdFloor)
}

// checkGrad perturbs each value of x and compares the loss's central
// difference with analytic[i].
func checkGrad(t *testing.T, what string, x, analytic []float64, loss func() float64) {
	t.Helper()
	worst := 0.0
	for i := range x {
		old := x[i]
		x[i] = old + fdStep
		lp := loss()
		x[i] = old - fdStep
		lm := loss()
		x[i] = old
		num := (lp - lm) / (2 * fdStep)
		e := relErr(analytic[i], num)
		worst = max(worst, e)
		if e > fdTol {
			t.Errorf("%s[%d]: analytic %.12g, numeric %.12g, relative error %.3g", what, i, analytic[i], num, e)
		}
	}
	t.Logf("%s: %d values, worst relative error %.2g", what, len(x), worst)
}

func randVec(rng *rand.Rand, n int, scale float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = (2*rng.Float64() - 1) * scale
	}
	return v
}

func weighted(w, y []float64) float64 {
	s := 0.0
	for i := range w {
		s += w[i] * y[i]
	}
	return s
}

func TestDenseGradient(t *testing.T) {
	for _, tc := range []struct{ in, out, n int }{
		{1, 1, 1}, {3, 2, 4}, {5, 7, 3}, {8, 4, 1}, {9, 13, 6},
	} {
		t.Run(fmt.Sprintf("in%d_out%d_n%d", tc.in, tc.out, tc.n), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(testSeed, uint64(tc.in*100+tc.out)))
			d := NewDense("fc", tc.in, tc.out, rng)
			x := randVec(rng, tc.n*tc.in, 2)
			w := randVec(rng, tc.n*tc.out, 1)
			y := make([]float64, tc.n*tc.out)
			loss := func() float64 { d.Forward(y, x, tc.n); return weighted(w, y) }
			loss()
			d.Params().ZeroGrad()
			dx := make([]float64, len(x))
			d.Backward(dx, w, x, tc.n)
			checkGrad(t, "dx", x, dx, loss)
			for _, p := range d.Params() {
				checkGrad(t, p.Name, p.Value, p.Grad, loss)
			}
			// BackwardInput gives the same dx and leaves the gradients.
			g := append([]float64(nil), d.W.Grad...)
			dx2 := make([]float64, len(x))
			d.BackwardInput(dx2, w, tc.n)
			for i := range dx {
				if dx[i] != dx2[i] {
					t.Fatalf("BackwardInput dx[%d] = %v, Backward %v", i, dx2[i], dx[i])
				}
			}
			for i := range g {
				if g[i] != d.W.Grad[i] {
					t.Fatal("BackwardInput changed the weight gradient")
				}
			}
		})
	}
}

func TestActivationGradient(t *testing.T) {
	for _, tc := range []struct {
		name     string
		forward  func(y, x []float64)
		backward func(dx, dy, y []float64)
	}{
		{"relu", ReLU, ReLUBackward},
		{"tanh", Tanh, TanhBackward},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(testSeed, 7))
			x := randVec(rng, 20, 3)
			w := randVec(rng, 20, 1)
			y := make([]float64, 20)
			loss := func() float64 { tc.forward(y, x); return weighted(w, y) }
			loss()
			dx := make([]float64, 20)
			tc.backward(dx, w, y)
			checkGrad(t, "dx", x, dx, loss)
			// In place: y may be x, dx may be dy.
			tc.forward(y, x)
			z := append([]float64(nil), x...)
			tc.forward(z, z)
			dz := append([]float64(nil), w...)
			tc.backward(dz, dz, z)
			for i := range z {
				if z[i] != y[i] || dz[i] != dx[i] {
					t.Fatalf("in place differs at %d", i)
				}
			}
		})
	}
}

func TestReLUAtZero(t *testing.T) {
	y := []float64{0, 0}
	ReLU(y, []float64{0, -1})
	dx := []float64{9, 9}
	ReLUBackward(dx, []float64{1, 1}, y)
	if y[0] != 0 || y[1] != 0 || dx[0] != 0 || dx[1] != 0 {
		t.Fatalf("ReLU at 0: y %v dx %v, want zeros (PyTorch's subgradient)", y, dx)
	}
}

func TestLSTMGradient(t *testing.T) {
	for _, tc := range []struct {
		name      string
		in, H     int
		steps     int
		lens      []int
		inputSize float64
	}{
		{"single_step", 2, 3, 1, []int{1}, 1},
		{"full_length", 3, 4, 4, []int{4, 4}, 1},
		{"variable_lengths", 3, 4, 5, []int{5, 2, 0, 1, 3}, 1.5},
		{"all_empty", 2, 3, 3, []int{0, 0}, 1},
		{"eight_steps", 4, 5, 8, []int{8, 7, 1, 0}, 2},
		{"wide_input", 9, 2, 6, []int{6, 4}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(testSeed, uint64(len(tc.name))))
			l := NewLSTM("lstm", tc.in, tc.H, rng)
			n := len(tc.lens)
			x := randVec(rng, n*tc.steps*tc.in, tc.inputSize)
			w := randVec(rng, n*tc.H, 1)
			out := make([]float64, n*tc.H)
			var c LSTMCache
			loss := func() float64 { l.Forward(&c, out, x, tc.lens, n, tc.steps); return weighted(w, out) }
			loss()
			for s, L := range tc.lens {
				if L == 0 {
					for j := range tc.H {
						if out[s*tc.H+j] != 0 {
							t.Fatalf("sequence %d of length 0: out %v, want zeros", s, out[s*tc.H:(s+1)*tc.H])
						}
					}
				}
			}
			l.Params().ZeroGrad()
			dx := make([]float64, len(x))
			for i := range dx {
				dx[i] = math.NaN() // Backward must overwrite every value
			}
			l.Backward(&c, dx, w, x, tc.lens, n, tc.steps)
			checkGrad(t, "dx", x, dx, loss)
			for _, p := range l.Params() {
				checkGrad(t, p.Name, p.Value, p.Grad, loss)
			}
		})
	}
}

// TestLSTMPadding: values past a sequence's length change nothing.
func TestLSTMPadding(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed, 3))
	const in, H, steps = 3, 4, 6
	lens := []int{2, 6, 0}
	l := NewLSTM("lstm", in, H, rng)
	x := randVec(rng, 3*steps*in, 1)
	var c LSTMCache
	want := make([]float64, 3*H)
	l.Forward(&c, want, x, lens, 3, steps)
	for s, L := range lens {
		for k := (s*steps + L) * in; k < (s+1)*steps*in; k++ {
			x[k] = 1e6
		}
	}
	got := make([]float64, 3*H)
	l.Forward(&c, got, x, lens, 3, steps)
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("padding changed out[%d]: %v, want %v", i, got[i], want[i])
		}
	}
}

// TestLSTMCell checks one step against the gate equations written out for
// a 1-input, 1-unit LSTM, so the gate order (i, f, g, o) and the two
// biases are PyTorch's.
func TestLSTMCell(t *testing.T) {
	l := &LSTM{In: 1, Hidden: 1,
		WIH: &Param{Value: []float64{0.1, 0.2, 0.3, 0.4}, Grad: make([]float64, 4)},
		WHH: &Param{Value: []float64{-0.5, 0.6, -0.7, 0.8}, Grad: make([]float64, 4)},
		BIH: &Param{Value: []float64{0.01, 0.02, 0.03, 0.04}, Grad: make([]float64, 4)},
		BHH: &Param{Value: []float64{0.05, -0.06, 0.07, -0.08}, Grad: make([]float64, 4)},
	}
	x := []float64{2, -1}
	sig := func(v float64) float64 { return 1 / (1 + math.Exp(-v)) }
	h, c := 0.0, 0.0
	for _, xt := range x {
		i := sig(0.1*xt + 0.01 + -0.5*h + 0.05)
		f := sig(0.2*xt + 0.02 + 0.6*h - 0.06)
		g := math.Tanh(0.3*xt + 0.03 - 0.7*h + 0.07)
		o := sig(0.4*xt + 0.04 + 0.8*h - 0.08)
		c = f*c + i*g
		h = o * math.Tanh(c)
	}
	var cache LSTMCache
	out := []float64{0}
	l.Forward(&cache, out, x, []int{2}, 1, 2)
	if math.Abs(out[0]-h) > 1e-15 {
		t.Fatalf("h = %.17g, want %.17g", out[0], h)
	}
}

// TestLSTMCacheReuse: a warm cache allocates nothing.
func TestLSTMCacheReuse(t *testing.T) {
	rng := rand.New(rand.NewPCG(testSeed, 5))
	l := NewLSTM("lstm", 4, 8, rng)
	x := randVec(rng, 3*5*4, 1)
	lens := []int{5, 3, 0}
	out := make([]float64, 3*8)
	dx := make([]float64, len(x))
	var c LSTMCache
	l.Forward(&c, out, x, lens, 3, 5)
	l.Backward(&c, dx, out, x, lens, 3, 5)
	allocs := testing.AllocsPerRun(20, func() {
		l.Forward(&c, out, x, lens, 3, 5)
		l.Backward(&c, dx, out, x, lens, 3, 5)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per forward+backward, want 0", allocs)
	}
}
