package fluid

import (
	"errors"
	"fmt"
	"math"
)

// Loop selects one of the two loop transfer functions.
type Loop string

const (
	LoopQCN     Loop = "qcn"      // G(s) of (15)
	LoopQCNAIMD Loop = "qcn_aimd" // Ĝ(s) of App. B
)

// GainHat is |Ĝ(jω)| of QCN-AIMD's loop.
func (l Linear) GainHat(w float64) float64 {
	return l.A3 * math.Sqrt(w*w+l.Gamma*l.Gamma) / (w * math.Sqrt(w*w+l.Hat*l.Hat))
}

// PhaseHat is θ̂(ω) = −∠Ĝ(jω) with delay tau.
func (l Linear) PhaseHat(w, tau float64) float64 {
	return w*tau + math.Pi/2 + math.Atan(w/l.Hat) - math.Atan(w/l.Gamma)
}

// gainPhase is |G| and −∠G of the chosen loop.
func (l Linear) gainPhase(loop Loop, w, tau float64) (gain, theta float64) {
	if loop == LoopQCNAIMD {
		return l.GainHat(w), l.PhaseHat(w, tau)
	}
	return l.Gain(w), l.Phase(w, tau)
}

// crossover is the 0-dB frequency of the chosen loop, by bisection on a
// logarithmic bracket (both gains fall monotonically from infinity).
func (l Linear) crossover(loop Loop) (float64, error) {
	lo, hi := 1e-9, 1e-9
	for g, _ := l.gainPhase(loop, hi, 0); g > 1; g, _ = l.gainPhase(loop, hi, 0) {
		lo, hi = hi, hi*2
		if hi > 1e18 {
			return 0, errors.New("fluid: the loop gain never falls to 1")
		}
	}
	for hi/lo > 1+1e-12 {
		mid := math.Sqrt(lo * hi)
		if g, _ := l.gainPhase(loop, mid, 0); g > 1 {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Sqrt(lo * hi), nil
}

// Frequency is the frequency response of a loop with its delay, on a
// logarithmic grid, for Bode and Nyquist plots.
type Frequency struct {
	Loop     Loop      `json:"loop"`
	TauS     float64   `json:"tauS"`
	Omega    []float64 `json:"omega"`    // rad/s
	MagDB    []float64 `json:"magDb"`    // 20 log10 |G(jω)|
	PhaseDeg []float64 `json:"phaseDeg"` // ∠G(jω), unwrapped, degrees
	Re       []float64 `json:"re"`       // Nyquist: Re G(jω)
	Im       []float64 `json:"im"`       // Nyquist: Im G(jω)
	// The 0-dB crossover and the phase there; the phase margin is
	// 180° + that phase.
	CrossoverRadS   float64 `json:"crossoverRadS"`
	CrossoverPhase  float64 `json:"crossoverPhaseDeg"`
	PhaseMarginDeg  float64 `json:"phaseMarginDeg"`
	DelayMarginS    float64 `json:"delayMarginS"` // the delay that would bring the phase at the crossover to −180°
	Phase180RadS    float64 `json:"phase180RadS"` // the lowest frequency where the phase reaches −180° (0: none on the grid)
	GainMarginDB    float64 `json:"gainMarginDb"` // −20 log10 |G| there (0 when Phase180RadS is 0)
	NyquistEncircle bool    `json:"nyquistEncircles"`
}

// Response evaluates the loop on points frequencies spaced logarithmically
// over four decades around its crossover (two each side).
func (l Linear) Response(loop Loop, tau float64, points int) (*Frequency, error) {
	if loop != LoopQCN && loop != LoopQCNAIMD {
		return nil, &ParamError{"loop", fmt.Sprintf("no loop %q; loops: qcn, qcn_aimd", loop)}
	}
	if !(tau >= 0) || math.IsInf(tau, 0) {
		return nil, &ParamError{"rtt", fmt.Sprintf("the delay must be zero or positive, got %g s", tau)}
	}
	if points < 2 || points > 10000 {
		return nil, &ParamError{"points", fmt.Sprintf("between 2 and 10000 frequencies, got %d", points)}
	}
	wc, err := l.crossover(loop)
	if err != nil {
		return nil, err
	}
	f := &Frequency{Loop: loop, TauS: tau, CrossoverRadS: wc}
	lo, hi := math.Log(wc/100), math.Log(wc*100)
	for i := 0; i < points; i++ {
		w := math.Exp(lo + (hi-lo)*float64(i)/float64(points-1))
		g, th := l.gainPhase(loop, w, tau)
		f.Omega = append(f.Omega, w)
		f.MagDB = append(f.MagDB, 20*math.Log10(g))
		f.PhaseDeg = append(f.PhaseDeg, -th*180/math.Pi)
		f.Re = append(f.Re, g*math.Cos(-th))
		f.Im = append(f.Im, g*math.Sin(-th))
	}
	_, thc := l.gainPhase(loop, wc, tau)
	_, th0 := l.gainPhase(loop, wc, 0)
	f.CrossoverPhase = -thc * 180 / math.Pi
	f.PhaseMarginDeg = 180 + f.CrossoverPhase
	f.DelayMarginS = (math.Pi - th0) / wc
	// the phase crossover: the first grid interval where θ passes π,
	// refined by bisection
	for i := 1; i < points; i++ {
		_, a := l.gainPhase(loop, f.Omega[i-1], tau)
		_, b := l.gainPhase(loop, f.Omega[i], tau)
		if a < math.Pi && b >= math.Pi {
			x, y := f.Omega[i-1], f.Omega[i]
			for y/x > 1+1e-12 {
				m := math.Sqrt(x * y)
				if _, t := l.gainPhase(loop, m, tau); t < math.Pi {
					x = m
				} else {
					y = m
				}
			}
			f.Phase180RadS = y
			g, _ := l.gainPhase(loop, y, tau)
			f.GainMarginDB = -20 * math.Log10(g)
			break
		}
	}
	// With one open-loop pole at 0 and the others stable, the closed loop
	// is unstable exactly when the Nyquist plot passes left of −1: the gain
	// is above 1 where the phase first reaches −180°.
	f.NyquistEncircle = f.Phase180RadS > 0 && f.GainMarginDB < 0
	return f, nil
}

// Roots finds characteristic roots of the loop's quasi-polynomial, the
// rightmost first: s(s² + βs + α) + e^{−sτ} a3 (s + b)(s + γ) for QCN and
// s(s + â) + e^{−sτ} a3 (s + γ) for QCN-AIMD. It runs Newton's method from
// a grid of starts covering Re s ∈ [−4ω_c, ω_c], Im s ∈ [0, 8ω_c] (roots
// come in conjugate pairs; only Im ≥ 0 is returned), so it finds the roots
// that decide stability near the crossover; it does not prove there are no
// others. At most max roots are returned.
func (l Linear) Roots(loop Loop, tau float64, max int) ([]complex128, error) {
	if loop != LoopQCN && loop != LoopQCNAIMD {
		return nil, &ParamError{"loop", fmt.Sprintf("no loop %q; loops: qcn, qcn_aimd", loop)}
	}
	if !(tau >= 0) || math.IsInf(tau, 0) {
		return nil, &ParamError{"rtt", fmt.Sprintf("the delay must be zero or positive, got %g s", tau)}
	}
	wc, err := l.crossover(loop)
	if err != nil {
		return nil, err
	}
	ct := complex(tau, 0)
	a3, b, g := complex(l.A3, 0), complex(l.B, 0), complex(l.Gamma, 0)
	al, be, h := complex(l.Alpha, 0), complex(l.Beta, 0), complex(l.Hat, 0)
	f := func(s complex128) (v, d complex128) {
		e := cexp(-s * ct)
		if loop == LoopQCNAIMD {
			v = s*(s+h) + e*a3*(s+g)
			d = 2*s + h + e*a3*(1-ct*(s+g))
			return v, d
		}
		v = s*(s*s+be*s+al) + e*a3*(s+b)*(s+g)
		d = 3*s*s + 2*be*s + al + e*a3*((2*s+b+g)-ct*(s+b)*(s+g))
		return v, d
	}
	var roots []complex128
	const nRe, nIm = 12, 24
	for i := 0; i < nRe; i++ {
		for j := 0; j < nIm; j++ {
			s := complex(wc*(-4+5*float64(i)/(nRe-1)), wc*8*float64(j)/(nIm-1))
			ok := false
			for it := 0; it < 60; it++ {
				v, d := f(s)
				if d == 0 {
					break
				}
				step := v / d
				s -= step
				if cabs(step) <= 1e-12*(cabs(s)+wc) {
					ok = true
					break
				}
			}
			if !ok || imag(s) < -1e-9*wc || real(s) != real(s) {
				continue
			}
			if v, _ := f(s); cabs(v) > 1e-6*math.Pow(cabs(s)+wc, 3) {
				continue
			}
			if imag(s) < 0 {
				s = complex(real(s), 0)
			}
			dup := false
			for _, r := range roots {
				if cabs(r-s) <= 1e-6*(cabs(s)+wc) {
					dup = true
					break
				}
			}
			if !dup {
				roots = append(roots, s)
			}
		}
	}
	// rightmost first
	for i := 1; i < len(roots); i++ {
		for j := i; j > 0 && real(roots[j]) > real(roots[j-1]); j-- {
			roots[j], roots[j-1] = roots[j-1], roots[j]
		}
	}
	if len(roots) > max {
		roots = roots[:max]
	}
	return roots, nil
}

func cexp(z complex128) complex128 {
	e := math.Exp(real(z))
	s, c := math.Sincos(imag(z))
	return complex(e*c, e*s)
}

func cabs(z complex128) float64 { return math.Hypot(real(z), imag(z)) }
