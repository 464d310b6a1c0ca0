package fluid

import (
	"errors"
	"math"
	"testing"
)

// The frequency response's numeric margins agree with the closed forms:
// QCN's exact margin (ExactMargin) and Theorem 2's τ̂, which is exact for
// QCN-AIMD (its crossover solves a quadratic in ω²). At the margin the
// phase margin is zero; below it the Nyquist plot stays right of −1,
// above it it encircles −1.
func TestResponseMargins(t *testing.T) {
	l := Baseline().Linearise()
	ex, _ := l.ExactMargin()
	th, _ := l.TauHat()
	for _, tc := range []struct {
		loop   Loop
		margin float64
	}{{LoopQCN, ex}, {LoopQCNAIMD, th}} {
		f, err := l.Response(tc.loop, 0, 400)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(f.DelayMarginS-tc.margin) > 1e-9*tc.margin {
			t.Errorf("%s: delay margin from the response %.6g s, closed form %.6g s", tc.loop, f.DelayMarginS, tc.margin)
		}
		for _, c := range []struct {
			tau       float64
			encircles bool
		}{{0.9 * tc.margin, false}, {tc.margin, false}, {1.1 * tc.margin, true}} {
			f, err := l.Response(tc.loop, c.tau, 400)
			if err != nil {
				t.Fatal(err)
			}
			if c.tau == tc.margin && math.Abs(f.PhaseMarginDeg) > 1e-6 {
				t.Errorf("%s at its margin: phase margin %g°, want 0", tc.loop, f.PhaseMarginDeg)
			}
			if (f.PhaseMarginDeg < 0) != c.encircles && c.tau != tc.margin {
				t.Errorf("%s at %.1f µs: phase margin %.2f°", tc.loop, c.tau*1e6, f.PhaseMarginDeg)
			}
			if c.tau != tc.margin && f.NyquistEncircle != c.encircles {
				t.Errorf("%s at %.1f µs: encircles −1 = %v, want %v (gain margin %.2f dB)", tc.loop, c.tau*1e6, f.NyquistEncircle, c.encircles, f.GainMarginDB)
			}
			// the grid point nearest the crossover has |G| ≈ 1 (the grid is
			// 4 decades over 400 points: 2.3% apart)
			i := nearest(f.Omega, f.CrossoverRadS)
			if math.Abs(f.MagDB[i]) > 0.5 {
				t.Errorf("%s: %.2f dB at the grid point nearest the crossover", tc.loop, f.MagDB[i])
			}
			if g := math.Hypot(f.Re[i], f.Im[i]); math.Abs(20*math.Log10(g)-f.MagDB[i]) > 1e-9 {
				t.Errorf("%s: Nyquist and Bode disagree at ω = %g", tc.loop, f.Omega[i])
			}
		}
	}
}

func nearest(xs []float64, x float64) int {
	best := 0
	for i := range xs {
		if math.Abs(xs[i]-x) < math.Abs(xs[best]-x) {
			best = i
		}
	}
	return best
}

// The rightmost characteristic root crosses the imaginary axis at the
// delay margin, at the crossover frequency: left of it below the margin,
// right of it above.
func TestRootsCrossAtTheMargin(t *testing.T) {
	l := Baseline().Linearise()
	ex, _ := l.ExactMargin()
	wc, _ := l.Crossover()
	th, wh := l.TauHat()
	for _, tc := range []struct {
		loop       Loop
		margin, wc float64
	}{{LoopQCN, ex, wc}, {LoopQCNAIMD, th, wh}} {
		for _, c := range []struct {
			f    float64
			sign int
		}{{0.8, -1}, {1, 0}, {1.2, 1}} {
			r, err := l.Roots(tc.loop, c.f*tc.margin, 8)
			if err != nil || len(r) == 0 {
				t.Fatalf("%s: %v, %d roots", tc.loop, err, len(r))
			}
			re := real(r[0])
			switch c.sign {
			case 0:
				if math.Abs(re) > 1e-6*tc.wc || math.Abs(imag(r[0])-tc.wc) > 1e-6*tc.wc {
					t.Errorf("%s at the margin: rightmost root %v, want ±j%.6g", tc.loop, r[0], tc.wc)
				}
			default:
				if (re > 0) != (c.sign > 0) {
					t.Errorf("%s at %.1f × margin: rightmost root %v", tc.loop, c.f, r[0])
				}
			}
		}
	}
}

// Theorem 1 is sufficient: across sweeps of every parameter, the exact
// margin is never below τ*. And where Theorem 3's conditions hold,
// averaging helps: τ* > τ̂.
func TestSweeps(t *testing.T) {
	q := Baseline()
	for _, tc := range []struct {
		param   string
		lo, hi  float64
		log     bool
		theorem bool // check Theorem 3 on the way
	}{
		{"n", 1, 300, false, true},
		{"c", 1e9, 100e9, true, true},
		{"gd", 1.0 / 512, 1.0 / 32, true, true},
		{"w", 0.5, 8, true, false},
		{"ps", 0.002, 0.1, true, false},
		{"rai", 1e6, 40e6, true, true},
	} {
		vals, err := Span(tc.param, tc.lo, tc.hi, 60, tc.log)
		if err != nil {
			t.Fatal(err)
		}
		pts, err := Sweep(q, tc.param, vals)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pts {
			if p.ExactMarginUs < p.TauStarUs*(1-1e-9) {
				t.Errorf("%s = %g: exact margin %.2f µs below τ* %.2f µs", tc.param, p.Value, p.ExactMarginUs, p.TauStarUs)
			}
			if !tc.theorem {
				continue
			}
			x := q
			_ = x.Set(tc.param, p.Value)
			if l23, l24 := x.Theorem3(); l23 < 0.1 && l24 < 0.2 && !(p.TauStarUs > p.TauHatUs) {
				t.Errorf("%s = %g: Theorem 3's conditions hold but τ* %.2f ≤ τ̂ %.2f µs", tc.param, p.Value, p.TauStarUs, p.TauHatUs)
			}
		}
	}
}

func TestSweepErrors(t *testing.T) {
	q := Baseline()
	for _, tc := range []struct {
		param  string
		values []float64
		want   string
	}{
		{"n", []float64{2.5}, "n"},
		{"ps", []float64{0.01, 1.5}, "ps"},
		{"c", []float64{0}, "c"},
		{"colour", []float64{1}, "colour"},
		{"w", nil, "values"},
	} {
		_, err := Sweep(q, tc.param, tc.values)
		var pe *ParamError
		if !errors.As(err, &pe) || pe.Param != tc.want {
			t.Errorf("%s %v: %v", tc.param, tc.values, err)
		}
	}
	if _, err := Span("n", 0, 10, 5, true); err == nil {
		t.Error("a log span from 0 was accepted")
	}
}

func BenchmarkSweep100(b *testing.B) {
	q := Baseline()
	vals, _ := Span("n", 1, 100, 100, false)
	for i := 0; i < b.N; i++ {
		if _, err := Sweep(q, "n", vals); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkResponse200(b *testing.B) {
	l := Baseline().Linearise()
	for i := 0; i < b.N; i++ {
		if _, err := l.Response(LoopQCN, 350e-6, 200); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRoots(b *testing.B) {
	l := Baseline().Linearise()
	for i := 0; i < b.N; i++ {
		if _, err := l.Roots(LoopQCN, 350e-6, 8); err != nil {
			b.Fatal(err)
		}
	}
}
