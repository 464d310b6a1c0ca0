package fluid

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand"
	"testing"
)

func apMustPlant(t testing.TB, cfg APConfig) *apPlant {
	t.Helper()
	p, err := newAPPlant(cfg.Num, cfg.Den)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The paper's example (§1, Fig. 3): standard unstable and AP stable at
// τ = 8 s; PD (25)–(26) behaves as AP (Fig. 11); the dithered PD is AP
// (Theorem 4). The extract's independent RK4 run: standard stable at 6 s
// and unstable from 7 s, AP stable through 14 s, marginal at 15 s and
// unstable at 16 s.
func TestAPStableAt(t *testing.T) {
	cfg := DefaultAPConfig()
	p := apMustPlant(t, cfg)
	for _, tc := range []struct {
		ctrl   string
		tau    float64
		stable bool
	}{
		{APStandard, 0, true}, {APAveraged, 0, true}, {APPD, 0, true},
		{APStandard, 6, true}, {APStandard, 7, false}, {APStandard, 8, false},
		{APAveraged, 8, true}, {APPD, 8, true}, {APPDDither, 8, true},
		{APAveraged, 14, true}, {APPD, 14, true},
		{APAveraged, 16, false}, {APPD, 16, false},
	} {
		ok, rho, err := cfg.stableAt(p, tc.ctrl, tc.tau)
		if err != nil {
			t.Fatal(err)
		}
		if ok != tc.stable {
			t.Errorf("%s at τ = %g s: stable %v (ρ = %.6f), want %v", tc.ctrl, tc.tau, ok, rho, tc.stable)
		}
	}
}

// The delay margins. The paper states AP's at one-second resolution ("AP
// remains stable for delays up to τ = 15 s") and the extract's run calls
// 15 s marginal: 15 ± 0.5 s is the resolution of the claim. (Ours is
// 14.77 s; at 15 s the loop grows by 0.066% a period.)
func TestAPMargins(t *testing.T) {
	cfg := DefaultAPConfig()
	res, err := APMargins(cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	var names []string
	for _, r := range res {
		got[r.Name] = r.MaxStableDelayS
		names = append(names, r.Name)
	}
	t.Logf("margins: %v", res)
	if len(names) != 4 || names[0] != APStandard || names[1] != APAveraged || names[2] != APPD || names[3] != APPDDither {
		t.Fatalf("order %v", names)
	}
	if s := got[APStandard]; !(s >= 6 && s < 7) {
		t.Errorf("standard: %.2f s, want in [6, 7) (stable at 6, unstable from 7) and below 8", s)
	}
	if a := got[APAveraged]; math.Abs(a-15) > 0.5 {
		t.Errorf("ap: %.2f s, want 15 ± 0.5", a)
	}
	if got[APPDDither] != got[APAveraged] {
		t.Errorf("pd-dither %.2f s differs from ap %.2f s (Theorem 4)", got[APPDDither], got[APAveraged])
	}
	if d := math.Abs(got[APPD] - got[APAveraged]); d > 0.1 {
		t.Errorf("pd %.2f s vs ap %.2f s: the dither should barely matter (Fig. 11)", got[APPD], got[APAveraged])
	}
	// "next" (eq. (1) read literally) is the immediate loop with τ + T
	next := cfg
	next.Update = APUpdateNextStep
	for _, k := range []string{APStandard, APAveraged} {
		m, err := next.MaxStableDelay(k)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(m-(got[k]-cfg.T)) > apResolution+1e-9 {
			t.Errorf("%s with next-step updates: %.2f s, want %.2f", k, m, got[k]-cfg.T)
		}
	}
}

// The extensions of Remark 4 run, and averaging helps in each form.
func TestAPExtensions(t *testing.T) {
	base := DefaultAPConfig()
	base.MaxDelayS = 20
	std, err := base.MaxStableDelay(APStandard)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		mod  func(*APConfig)
	}{
		{"α = 1/4", func(c *APConfig) { c.Alpha = 0.25 }},
		{"averaging at T/4", func(c *APConfig) { c.AvgAt = []float64{0.25} }},
		{"two averagings", func(c *APConfig) { c.Averagings = 2 }},
		{"three averagings at 0.2, 0.5, 0.8", func(c *APConfig) { c.AvgAt = []float64{0.2, 0.5, 0.8} }},
	} {
		cfg := base
		tc.mod(&cfg)
		m, err := cfg.MaxStableDelay(APAveraged)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: ap margin %.2f s (standard %.2f s)", tc.name, m, std)
		if !(m > std) {
			t.Errorf("%s: ap margin %.2f s not above standard's %.2f s", tc.name, m, std)
		}
	}
	// one averaging at the midpoint, spelled three ways
	a := base
	a.Averagings = 1
	b := base
	b.AvgAt = []float64{0.5}
	ma, _ := a.MaxStableDelay(APAveraged)
	mb, _ := b.MaxStableDelay(APAveraged)
	m0, _ := base.MaxStableDelay(APAveraged)
	if ma != m0 || mb != m0 {
		t.Errorf("midpoint averaging: %g, %g, %g", m0, ma, mb)
	}
}

// Controller 1 of §3.3 written out from the paper, for the tests.
type apController1 struct{ u2 float64 }

func (c *apController1) step(k, e float64) (u1, u2 float64) {
	u1 = c.u2 + k*e
	c.u2 = (u1 + c.u2) / 2
	return u1, c.u2
}

// Theorem 4: the AP controller (Controller 1) and the dithered PD
// controller (Controller 2, (25)–(28)) map the same error sequence from the
// same initial condition to the same input, sample by sample, on both
// halves of every interval.
func TestTheorem4OpenLoop(t *testing.T) {
	cfg := DefaultAPConfig()
	rng := rand.New(rand.NewSource(3))
	c1 := &apController1{}
	ap, _ := newAPCtrl(cfg, APAveraged)
	pd, _ := newAPCtrl(cfg, APPDDither)
	worst := 0.0
	for n := 0; n < 20000; n++ {
		e := 4*rng.Float64() - 2
		u1, u2 := c1.step(cfg.K, e)
		ap.feedback(e)
		pd.feedback(e)
		first := [3]float64{u1, ap.output(), pd.output()}
		ap.mid(0)
		pd.mid(0)
		second := [3]float64{u2, ap.output(), pd.output()}
		for _, h := range [][3]float64{first, second} {
			worst = math.Max(worst, math.Max(math.Abs(h[0]-h[1]), math.Abs(h[0]-h[2])))
		}
	}
	t.Logf("max |u1 − u2| over 20000 intervals: %.3g", worst)
	if worst >= 1e-12 {
		t.Errorf("Controller 1 and 2 differ by %.3g", worst)
	}
}

// … and in the closed loop (Fig. 11, with the dither kept): the same plant
// input and output at every sample, at 0 and 8 s of delay.
func TestTheorem4ClosedLoop(t *testing.T) {
	cfg := DefaultAPConfig()
	for _, tau := range []float64{0, 8} {
		a, err := cfg.StepResponse(APAveraged, tau, 300, 0.25)
		if err != nil {
			t.Fatal(err)
		}
		b, err := cfg.StepResponse(APPDDither, tau, 300, 0.25)
		if err != nil {
			t.Fatal(err)
		}
		worst := 0.0
		for i := range a.T {
			worst = math.Max(worst, math.Max(math.Abs(a.U[i]-b.U[i]), math.Abs(a.Y[i]-b.Y[i])))
		}
		if worst >= 1e-12 || len(a.T) != 1201 {
			t.Errorf("τ = %g s: %d samples, max difference %.3g", tau, len(a.T), worst)
		}
	}
}

// The zero-order hold is exact: for 1/(s+1) it is e^{−h} and 1 − e^{−h};
// for the paper's plant it composes (Φ(a)Φ(b) = Φ(a+b)) and agrees with a
// fine RK4 run of the unit step.
func TestAPZeroOrderHold(t *testing.T) {
	p1, _ := newAPPlant([]float64{1}, []float64{1, 1})
	for _, h := range []float64{1e-3, 0.5, 1, 7.3} {
		z := p1.zoh(h)
		if math.Abs(z.phi[0][0]-math.Exp(-h)) > 1e-15 || math.Abs(z.gam[0]-(1-math.Exp(-h))) > 1e-15 {
			t.Errorf("1/(s+1), h = %g: Φ %v Γ %v", h, z.phi[0][0], z.gam[0])
		}
	}
	cfg := DefaultAPConfig()
	p := apMustPlant(t, cfg)
	x, tmp := make([]float64, 3), make([]float64, 3)
	p.zoh(0.3).step(x, tmp, 1)
	p.zoh(0.7).step(x, tmp, 1)
	y1 := append([]float64(nil), x...)
	x2 := make([]float64, 3)
	p.zoh(1).step(x2, tmp, 1)
	for i := range x2 {
		if math.Abs(y1[i]-x2[i]) > 1e-14 {
			t.Errorf("composition: %v vs %v", y1, x2)
		}
	}
	// RK4 of x' = Ax + B, 10 s in 1 ms steps (error ~1e-13)
	f := func(x []float64) []float64 {
		d := make([]float64, 3)
		for i := range d {
			d[i] = p.b[i]
			for j := range x {
				d[i] += p.a[i][j] * x[j]
			}
		}
		return d
	}
	xr := make([]float64, 3)
	h := 1e-3
	for k := 0; k < 10000; k++ {
		k1 := f(xr)
		k2 := f(apAxpy(xr, k1, h/2))
		k3 := f(apAxpy(xr, k2, h/2))
		k4 := f(apAxpy(xr, k3, h))
		for i := range xr {
			xr[i] += h / 6 * (k1[i] + 2*k2[i] + 2*k3[i] + k4[i])
		}
	}
	xe := make([]float64, 3)
	p.zoh(10).step(xe, tmp, 1)
	if d := math.Abs(p.output(xr) - p.output(xe)); d > 1e-11 {
		t.Errorf("y(10 s): exact %.15f, RK4 %.15f", p.output(xe), p.output(xr))
	}
}

func apAxpy(x, d []float64, h float64) []float64 {
	out := make([]float64, len(x))
	for i := range x {
		out[i] = x[i] + h*d[i]
	}
	return out
}

func TestAPSpectralRadius(t *testing.T) {
	c, s := 0.9*math.Cos(1), 0.9*math.Sin(1)
	for _, tc := range []struct {
		name string
		m    [][]float64
		want float64
	}{
		{"rotation scaled by 0.9", [][]float64{{c, -s}, {s, c}}, 0.9},
		{"Jordan block at 0.99", [][]float64{{0.99, 1}, {0, 0.99}}, 0.99},
		{"companion of (z−0.5)(z+0.8)(z−0.3)", [][]float64{{0, 1, 0}, {0, 0, 1}, {-0.12, 0.49, 0}}, 0.8},
		{"just above 1", [][]float64{{1.0001, 0}, {0, -0.2}}, 1.0001},
		{"nilpotent", [][]float64{{0, 1}, {0, 0}}, 0},
	} {
		if got := apSpectralRadius(tc.m); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("%s: %.12f, want %g", tc.name, got, tc.want)
		}
	}
}

// The continuous-time run and the one-period map are separate code: the
// run's envelope |y − r| grows or decays by the monodromy's spectral radius
// per period.
func TestAPGrowthMatchesSpectralRadius(t *testing.T) {
	cfg := DefaultAPConfig()
	p := apMustPlant(t, cfg)
	peak := func(tr *StepTrace, from, to float64) float64 {
		m := 0.0
		for i, x := range tr.T {
			if x >= from && x < to {
				m = math.Max(m, math.Abs(tr.Y[i]-cfg.Ref))
			}
		}
		return m
	}
	for _, tc := range []struct {
		ctrl string
		tau  float64
	}{{APStandard, 8}, {APAveraged, 8}, {APAveraged, 15}, {APPD, 12}} {
		_, rho, _ := cfg.stableAt(p, tc.ctrl, tc.tau)
		tr, err := cfg.StepResponse(tc.ctrl, tc.tau, 400, 0.05)
		if err != nil {
			t.Fatal(err)
		}
		rate := math.Pow(peak(tr, 340, 400)/peak(tr, 100, 160), 1.0/240)
		t.Logf("%s at %g s: envelope %.6f a period, ρ %.6f", tc.ctrl, tc.tau, rate, rho)
		if math.Abs(rate-rho) > 2e-3 || (rate > 1) != (rho > 1) {
			t.Errorf("%s at %g s: envelope %.5f a period, ρ %.5f", tc.ctrl, tc.tau, rate, rho)
		}
	}
}

// The delay on the plant's input gives the output-delay loop shifted by τ
// (u identical, y_in(t) = y_out(t − τ)); "next" updates give the immediate
// loop with τ + T, shifted by T.
func TestAPPlacementAndTiming(t *testing.T) {
	shifted := func(name string, a, b *StepTrace, lag int) {
		t.Helper()
		worst := 0.0
		for i := lag; i < len(a.T); i++ {
			worst = math.Max(worst, math.Max(math.Abs(a.Y[i]-b.Y[i-lag]), math.Abs(a.U[i]-b.U[i-lag])))
		}
		if worst > 1e-12 {
			t.Errorf("%s: differs by %.3g", name, worst)
		}
	}
	out := DefaultAPConfig()
	in := out
	in.DelayAt = APDelayInput
	for _, k := range []string{APStandard, APAveraged} {
		a, _ := in.StepResponse(k, 3.5, 100, 0.25)
		b, _ := out.StepResponse(k, 3.5, 100, 0.25)
		shifted(k+" input vs output", a, b, 14)
		next := out
		next.Update = APUpdateNextStep
		c, _ := next.StepResponse(k, 2, 100, 0.25)
		d, _ := out.StepResponse(k, 3, 100, 0.25)
		shifted(k+" next vs immediate", c, d, 4)
	}
	// before the delayed input reaches it, the plant rests
	a, _ := in.StepResponse(APAveraged, 3.5, 10, 0.5)
	for i, x := range a.T {
		if x < 3.5 && (a.Y[i] != 0 || a.U[i] != 0) {
			t.Errorf("t = %g: y %g u %g before the input arrives", x, a.Y[i], a.U[i])
		}
	}
}

// Bad input names its field.
func TestAPValidate(t *testing.T) {
	for _, tc := range []struct {
		mod   func(*APConfig)
		ctrl  string
		tau   float64
		param string
	}{
		{func(c *APConfig) { c.K = 0 }, APAveraged, 1, "k"},
		{func(c *APConfig) { c.T = 0 }, APAveraged, 1, "t"},
		{func(c *APConfig) { c.T = -1 }, APAveraged, 1, "t"},
		{func(c *APConfig) { c.Num = []float64{1, 0, 0, 1} }, APAveraged, 1, "num"},
		{func(c *APConfig) { c.Num = []float64{0} }, APAveraged, 1, "num"},
		{func(c *APConfig) { c.Den = []float64{0, 0} }, APAveraged, 1, "den"},
		{func(c *APConfig) { c.Den = []float64{1, math.NaN()} }, APAveraged, 1, "den"},
		{func(c *APConfig) { c.DelayAt = "middle" }, APAveraged, 1, "delayAt"},
		{func(c *APConfig) { c.Update = "later" }, APAveraged, 1, "update"},
		{func(c *APConfig) { c.Alpha = 0 }, APAveraged, 1, "alpha"},
		{func(c *APConfig) { c.AvgAt = []float64{0.6, 0.4} }, APAveraged, 1, "avgAt"},
		{func(c *APConfig) { c.AvgAt = []float64{1} }, APAveraged, 1, "avgAt"},
		{func(c *APConfig) { c.Averagings, c.AvgAt = 2, []float64{0.5} }, APAveraged, 1, "averagings"},
		{func(c *APConfig) { c.MaxDelayS = 1000 }, APAveraged, 1, "maxDelayS"},
		{func(c *APConfig) {}, "bang-bang", 1, "controller"},
		{func(c *APConfig) {}, APAveraged, -1, "tau"},
		{func(c *APConfig) {}, APAveraged, 1e12, "tau"},
	} {
		cfg := DefaultAPConfig()
		tc.mod(&cfg)
		_, err := cfg.StepResponse(tc.ctrl, tc.tau, 10, 0.1)
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Param != tc.param {
			t.Errorf("%s: error %v", tc.param, err)
		}
	}
	cfg := DefaultAPConfig()
	for _, tc := range []struct {
		duration, every float64
		param           string
	}{{0, 0.1, "duration"}, {10, 0, "every"}, {10, 1e-9, "every"}} {
		_, err := cfg.StepResponse(APStandard, 1, tc.duration, tc.every)
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Param != tc.param {
			t.Errorf("%s: error %v", tc.param, err)
		}
	}
	if _, err := APMargins(APConfig{}); err == nil {
		t.Error("the zero config passed")
	}
	// an unstable run that overflows is an error, not Inf
	if _, err := cfg.StepResponse(APStandard, 20, 200000, 100); err == nil {
		t.Error("an overflowing response passed")
	}
}

// A JSON body decoded over the defaults changes only the fields it names.
func TestAPConfigJSON(t *testing.T) {
	cfg := DefaultAPConfig()
	if err := json.Unmarshal([]byte(`{"k":0.25,"delayAt":"input","avgAt":[0.25,0.75]}`), &cfg); err != nil {
		t.Fatal(err)
	}
	if cfg.K != 0.25 || cfg.T != 1 || len(cfg.Den) != 4 || cfg.DelayAt != APDelayInput || len(cfg.AvgAt) != 2 || cfg.Alpha != 0.5 {
		t.Errorf("decoded %+v", cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Error(err)
	}
}

func BenchmarkAPMargins(b *testing.B) {
	cfg := DefaultAPConfig()
	for i := 0; i < b.N; i++ {
		if _, err := APMargins(cfg); err != nil {
			b.Fatal(err)
		}
	}
}
