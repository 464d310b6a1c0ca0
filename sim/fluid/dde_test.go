package fluid

import (
	"errors"
	"math"
	"testing"
)

// qRange is the queue's range over [from, end] of a run started off the
// fixed point (empty queue, R_C 10% above C/N).
func qRange(t *testing.T, m Model, rtt, from float64) (lo, hi float64) {
	t.Helper()
	q := Baseline()
	q.RTT = rtt
	st := q.FixedPoint(m)
	st.Q, st.RC = 0, st.RC*1.1
	tr, err := q.Integrate(m, st, 0.1, 0.5e-6, 10e-6)
	if err != nil {
		t.Fatal(err)
	}
	lo, hi = math.Inf(1), math.Inf(-1)
	for i, x := range tr.T {
		if x > from {
			lo, hi = math.Min(lo, tr.Q[i]), math.Max(hi, tr.Q[i])
		}
	}
	return lo, hi
}

// The nonlinear fluid models (forward Euler, 0.5 µs steps, 100 ms, the
// queue over the last 20 ms) against the linear margins and against the
// extract's independent run of the same equations (shared/spec/seeds/
// 003-qcn.md §2.6: QCN 20.8–23.3 packets at 200 µs, a minimum of 14 at
// 250 µs, empty at 350 µs; QCN-AIMD flat at 22.4 and empty from 250 µs).
func TestFluidAgainstTheMargins(t *testing.T) {
	type band struct{ lo, hi, tol float64 }
	for _, tc := range []struct {
		m    Model
		rtt  float64
		want band
		why  string
	}{
		{ModelQCNAIMD, 50e-6, band{22.37, 22.37, 0.01}, "below τ̂ = 216 µs: settles at its fixed point Q̂ = Q_eq + 0.37"},
		{ModelQCNAIMD, 100e-6, band{22.37, 22.37, 0.01}, "below τ̂"},
		{ModelQCNAIMD, 250e-6, band{0, 27.6, 0.5}, "above τ̂: oscillates and the queue empties"},
		{ModelQCNAIMD, 350e-6, band{0, 29.0, 0.5}, "above τ̂"},
		{ModelQCN, 50e-6, band{22.0, 22.02, 0.01}, "below τ*: near Q_eq (a small limit cycle: the fixed point sits 7e-4 packets above F_b = 0)"},
		{ModelQCN, 200e-6, band{20.8, 23.3, 0.1}, "the extract's 20.8–23.3"},
		{ModelQCN, 250e-6, band{14.3, 25.8, 0.5}, "just past the exact margin (251 µs): the extract's minimum of 14"},
		{ModelQCN, 350e-6, band{0, 29.8, 0.5}, "far past it: the queue empties, as in the extract"},
	} {
		lo, hi := qRange(t, tc.m, tc.rtt, 0.08)
		if math.Abs(lo-tc.want.lo) > tc.want.tol || math.Abs(hi-tc.want.hi) > tc.want.tol {
			t.Errorf("%s at %.0f µs: queue in [%.3f, %.3f], want [%.2f, %.2f] ± %g (%s)",
				tc.m, tc.rtt*1e6, lo, hi, tc.want.lo, tc.want.hi, tc.want.tol, tc.why)
		}
	}
}

// The step is small enough: halving it changes the queue by under 0.05
// packets over 20 ms (measured 0.032), and a run started at the fixed
// point stays there exactly.
func TestIntegratorStep(t *testing.T) {
	q := Baseline()
	q.RTT = 100e-6
	st := q.FixedPoint(ModelQCNAIMD)
	st.Q = 0
	a, err := q.Integrate(ModelQCNAIMD, st, 0.02, 0.5e-6, 10e-6)
	if err != nil {
		t.Fatal(err)
	}
	b, err := q.Integrate(ModelQCNAIMD, st, 0.02, 0.25e-6, 10e-6)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Q) != len(b.Q) || len(a.Q) != 2001 {
		t.Fatalf("%d and %d samples, want 2001", len(a.Q), len(b.Q))
	}
	d := 0.0
	for i := range a.Q {
		d = math.Max(d, math.Abs(a.Q[i]-b.Q[i]))
	}
	if d > 0.05 {
		t.Errorf("halving the step moved the queue by %.4f packets", d)
	}
	for _, m := range []Model{ModelQCN, ModelQCNAIMD} {
		fp := q.FixedPoint(m)
		tr, err := q.Integrate(m, fp, 0.02, 0.5e-6, 10e-6)
		if err != nil {
			t.Fatal(err)
		}
		for i := range tr.Q {
			if math.Abs(tr.Q[i]-fp.Q) > 1e-9 || math.Abs(tr.RC[i]-fp.RC) > 1e-6 {
				t.Fatalf("%s left its fixed point at %.6f s: Q %g (Q* %g)", m, tr.T[i], tr.Q[i], fp.Q)
			}
		}
	}
}

func TestIntegrateErrors(t *testing.T) {
	q := Baseline()
	st := q.FixedPoint(ModelQCN)
	for _, tc := range []struct {
		m                   Model
		duration, dt, every float64
		param               string
	}{
		{"tcp", 0.01, 1e-6, 1e-5, "model"},
		{ModelQCN, 0.01, 0, 1e-5, "dt"},
		{ModelQCN, 0.01, 100e-6, 1e-4, "dt"}, // over a quarter of the 350 µs RTT
		{ModelQCN, 0, 1e-6, 1e-5, "duration"},
		{ModelQCN, 0.01, 1e-6, 1e-7, "every"},
	} {
		_, err := q.Integrate(tc.m, st, tc.duration, tc.dt, tc.every)
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Param != tc.param {
			t.Errorf("%s: %v", tc.param, err)
		}
	}
}
