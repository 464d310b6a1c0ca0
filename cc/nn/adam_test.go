package nn

import (
	"bytes"
	"math"
	"strings"
	"testing"
)

// TestAdam checks two steps against values worked out by hand from
// PyTorch's update with lr 0.1 (β1 0.9, β2 0.999, eps 1e-8) on
// p = (1, −2), gradients (0.5, −0.1) then (−0.25, 0.3).
//
// Step 1: m = 0.1·g, v = 0.001·g², the bias corrections are 0.1 and
// 0.001, so p −= (0.1/0.1)·0.1·g / (|g| + 1e-8):
// p₀ = 1 − 0.05/0.50000001 = 0.90000000199999996…,
// p₁ = −2 + 0.01/0.10000001 = −1.90000000999999900….
//
// Step 2: m = (0.02, 0.021), v = (0.00031225, 0.00009999), corrections
// 1 − 0.81 = 0.19 and 1 − 0.998001 = 0.001999:
// p −= (0.1/0.19)·m / (√(v/0.001999) + 1e-8), giving
// p₀ = 0.87336629870784616…, p₁ = −1.94941899112006578….
func TestAdam(t *testing.T) {
	p := NewParam("p", 2)
	p.Value[0], p.Value[1] = 1, -2
	a := NewAdam(Params{p}, 0.1)
	for _, step := range []struct {
		grad, want, m, v [2]float64
	}{
		{[2]float64{0.5, -0.1}, [2]float64{0.90000000199999996, -1.900000009999999}, [2]float64{0.05, -0.01}, [2]float64{0.00025, 0.00001}},
		{[2]float64{-0.25, 0.3}, [2]float64{0.87336629870784616, -1.9494189911200658}, [2]float64{0.02, 0.021}, [2]float64{0.00031225, 0.00009999}},
	} {
		copy(p.Grad, step.grad[:])
		a.Step()
		for i := range 2 {
			if math.Abs(p.Value[i]-step.want[i]) > 1e-15 {
				t.Errorf("step %d: p[%d] = %.17g, want %.17g", a.Steps, i, p.Value[i], step.want[i])
			}
			if math.Abs(a.m[0][i]-step.m[i]) > 1e-14*math.Abs(step.m[i]) || math.Abs(a.v[0][i]-step.v[i]) > 1e-14*step.v[i] {
				t.Errorf("step %d: m, v [%d] = %v, %v, want %v, %v", a.Steps, i, a.m[0][i], a.v[0][i], step.m[i], step.v[i])
			}
		}
	}
}

// TestAdamState: saving and loading the state resumes exactly.
func TestAdamState(t *testing.T) {
	grads := [][]float64{{0.3, -1}, {0.2, 0.1}, {-0.7, 0.05}, {1, 1}, {-0.01, 2}}
	run := func(p *Param, a *Adam, gs [][]float64) {
		for _, g := range gs {
			copy(p.Grad, g)
			a.Step()
		}
	}
	p := NewParam("w", 2)
	a := NewAdam(Params{p}, 0.01)
	run(p, a, grads)

	q := NewParam("w", 2)
	b := NewAdam(Params{q}, 0.01)
	run(q, b, grads[:2])
	var buf bytes.Buffer
	if err := WriteSafetensors(&buf, append(Params{q}.Tensors("model."), b.Tensors("opt.")...), nil); err != nil {
		t.Fatal(err)
	}
	f, err := ReadSafetensors(&buf)
	if err != nil {
		t.Fatal(err)
	}
	r := NewParam("w", 2)
	c := NewAdam(Params{r}, 0.01)
	if err := (Params{r}).Load(f, "model."); err != nil {
		t.Fatal(err)
	}
	if err := c.Load(f, "opt."); err != nil {
		t.Fatal(err)
	}
	if c.Steps != 2 {
		t.Fatalf("loaded %d steps, want 2", c.Steps)
	}
	run(r, c, grads[2:])
	for i := range p.Value {
		if p.Value[i] != r.Value[i] {
			t.Fatalf("resumed w[%d] = %v, uninterrupted %v", i, r.Value[i], p.Value[i])
		}
	}
	// A missing moment names its tensor.
	g, _ := ReadSafetensors(bytes.NewReader(handFile))
	if err := c.Load(g, "opt."); err == nil || !strings.Contains(err.Error(), "opt.exp_avg.w") {
		t.Fatalf("error %v, want one naming opt.exp_avg.w", err)
	}
}

func TestParamsOps(t *testing.T) {
	mk := func(v ...float64) Params {
		p := NewParam("a", len(v))
		copy(p.Value, v)
		return Params{p}
	}
	dst, src := mk(1, 2), mk(3, -2)
	dst.Polyak(src, 0.75)
	if dst[0].Value[0] != 1.5 || dst[0].Value[1] != 1 {
		t.Errorf("polyak: %v, want [1.5 1]", dst[0].Value)
	}
	dst.CopyValues(src)
	if dst[0].Value[0] != 3 || dst[0].Value[1] != -2 {
		t.Errorf("copy: %v", dst[0].Value)
	}
	src[0].Grad[0], dst[0].Grad[0] = 1, 2
	dst.AddGrads(src)
	if dst[0].Grad[0] != 3 {
		t.Errorf("add grads: %v", dst[0].Grad)
	}
	c := dst[0].Clone()
	c.Value[0] = 100
	if dst[0].Value[0] == 100 {
		t.Error("Clone shares values")
	}
	dst.ZeroGrad()
	if dst[0].Grad[0] != 0 {
		t.Error("ZeroGrad")
	}
	if dst.CheckFinite() != nil {
		t.Error("finite values reported")
	}
	dst[0].Value[1] = math.Inf(1)
	if err := dst.CheckFinite(); err == nil || !strings.Contains(err.Error(), "parameter a") {
		t.Errorf("CheckFinite: %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("Polyak of mismatched lists did not panic")
		}
	}()
	dst.Polyak(mk(1, 2, 3), 0.5)
}
