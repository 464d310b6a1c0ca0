package fluid

import (
	"errors"
	"math"
	"testing"
)

// The p → 0 limits of the increase terms (1/B and 1/(T·R_C)) join the
// general expressions continuously.
func TestDCQCNTermsLimit(t *testing.T) {
	d := DCQCNBaseline()
	rc := d.C / (8 * d.Packet) / 2
	a0, b0, c0, d0, e0 := d.terms(0, rc)
	a, b, c, dd, e := d.terms(1e-12, rc)
	for _, x := range [][2]float64{{b0, b}, {c0, c}, {d0, dd}, {e0, e}} {
		if math.Abs(x[0]-x[1]) > 1e-6*x[0] {
			t.Errorf("limit %g, at p = 1e-12 %g", x[0], x[1])
		}
	}
	if a0 != 0 || a > 1e-9 {
		t.Errorf("a(0) = %g, a(1e-12) = %g", a0, a)
	}
}

// At the fixed point every derivative vanishes: R_C* = C/N, and the
// R_T − R_C both rate equations need agree.
func TestDCQCNFixedPoint(t *testing.T) {
	d := DCQCNBaseline()
	st, p, err := d.FixedPoint()
	if err != nil {
		t.Fatal(err)
	}
	rc := d.C / (8 * d.Packet) / float64(d.N)
	rai := d.RAI / (8 * d.Packet)
	a, b, c, dd, e := d.terms(p, rc)
	drc := -rc*st.Alpha/(2*d.Tau)*a + (st.RT-rc)/2*rc*(b+dd)
	drt := -(st.RT-d.Beta*rc)/d.Tau*a + rai*rc*(c+e)
	if math.Abs(drc) > 1e-6*rc/d.Tau || math.Abs(drt) > 1e-6*rc/d.Tau {
		t.Errorf("derivatives at the fixed point: dR_C %g, dR_T %g (packets/s²)", drc, drt)
	}
	if st.RC != rc || !(st.Q > d.Kmin && st.Q < d.Kmax) {
		t.Errorf("fixed point %+v, p* %g", st, p)
	}
	// Dolce-RC with β = 1 and α fixed at DCQCN's α* has the same fixed
	// point: the two readings of the equations agree.
	dolce := d
	dolce.FixedAlpha = st.Alpha
	st2, p2, err := dolce.FixedPoint()
	if err != nil || math.Abs(p2-p) > 1e-9*p || math.Abs(st2.RT-st.RT) > 1e-9*st.RT {
		t.Errorf("Dolce-RC at β = 1, α = α*: p* %g vs %g, R_T %g vs %g, %v", p2, p, st2.RT, st.RT, err)
	}
	// β > 1 raises the target above the cut rate, so the same α needs more
	// marking to balance: p* grows with β.
	dolce.Beta = 1.2
	_, p3, err := dolce.FixedPoint()
	if err != nil || !(p3 > p) {
		t.Errorf("β = 1.2: p* %g, β = 1: %g (%v)", p3, p, err)
	}
}

// Two flows starting at line rate settle at the fixed point (Zhu et al.
// find DCQCN stable for N = 2 at τ* = 85 µs): the last 20 ms of a 200 ms
// run average within 1% of C/N and within 10% of Q* (the queue keeps a
// small residual ripple), and the step is fine enough that halving it
// moves the queue by less than 1% of its peak (the start overshoots
// Kmax, where marking jumps to 1, and the step's error is largest there:
// 0.4% measured).
func TestDCQCNConverges(t *testing.T) {
	d := DCQCNBaseline()
	st, _, err := d.FixedPoint()
	if err != nil {
		t.Fatal(err)
	}
	line := d.C / (8 * d.Packet)
	start := DCQCNState{RC: line, RT: line, Alpha: 1}
	run := func(dt float64) *DCQCNTrajectory {
		tr, err := d.Integrate(start, 0.2, dt, 1e-4)
		if err != nil {
			t.Fatal(err)
		}
		return tr
	}
	tr := run(1e-6)
	var q, r float64
	n := 0
	for i, x := range tr.T {
		if x >= 0.18 {
			q += tr.Q[i]
			r += tr.RC[i]
			n++
		}
	}
	q /= float64(n)
	r /= float64(n)
	if want := d.C / float64(d.N); math.Abs(r-want) > 0.01*want {
		t.Errorf("rate %.4g bps, want C/N = %.4g", r, want)
	}
	if math.Abs(q-st.Q) > 0.1*st.Q {
		t.Errorf("queue %.0f B, fixed point %.0f B", q, st.Q)
	}
	fine := run(0.5e-6)
	worst, peak := 0.0, 0.0
	for i := range tr.Q {
		worst = math.Max(worst, math.Abs(tr.Q[i]-fine.Q[i]))
		peak = math.Max(peak, tr.Q[i])
	}
	if worst > 0.01*peak {
		t.Errorf("halving the step moved the queue by %.0f B (peak %.0f B)", worst, peak)
	}
}

func TestDCQCNValidate(t *testing.T) {
	for _, tc := range []struct {
		mod   func(*DCQCN)
		param string
	}{
		{func(d *DCQCN) { d.C = 0 }, "c"},
		{func(d *DCQCN) { d.N = 0 }, "n"},
		{func(d *DCQCN) { d.Delay = -1 }, "delay"},
		{func(d *DCQCN) { d.Kmin = d.Kmax }, "kmin"},
		{func(d *DCQCN) { d.Pmax = 0 }, "pmax"},
		{func(d *DCQCN) { d.Beta = 0 }, "beta"},
		{func(d *DCQCN) { d.FixedAlpha = 2 }, "fixedAlpha"},
		{func(d *DCQCN) { d.Timer = math.NaN() }, "timer"},
	} {
		d := DCQCNBaseline()
		tc.mod(&d)
		_, _, err := d.FixedPoint()
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Param != tc.param {
			t.Errorf("%s: %v", tc.param, err)
		}
	}
	d := DCQCNBaseline()
	if _, err := d.Integrate(DCQCNState{}, 0.01, 20e-6, 1e-4); err == nil {
		t.Error("a step over τ/4 was accepted")
	}
}
