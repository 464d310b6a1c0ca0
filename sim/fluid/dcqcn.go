package fluid

import (
	"errors"
	"fmt"
	"math"
)

// DCQCN is the fluid model of DCQCN by Zhu, Ghobadi, Misra, Padhye ("ECN
// or delay: lessons learnt from analysis of DCQCN and TIMELY", CoNEXT
// 2016, §3), in the form Dolce-RC's Appendix B writes it (seed 004, eqs.
// 15–16, extract §1.3): N identical flows share one bottleneck of capacity
// C whose RED/ECN marking probability p(q) rises from 0 at Kmin to Pmax at
// Kmax (1 above it); feedback reaches the sources after the control-loop
// delay τ*. Rates are in packets per second of Packet bytes.
//
// With Beta = 1 and FixedAlpha < 0 it is DCQCN (α follows its own ODE,
// eq. 5 of Zhu et al.). Dolce-RC sets the target to β·R_C on a cut and
// holds α fixed at the value its bandit picked (FixedAlpha in [0, 1]).
// Two printing errors of Appendix B are corrected as the extract derives:
// the first term of (15) uses τ·R_C(t−τ*) as its exponent, like (16), and
// "(p − τ*)" reads p(t − τ*).
type DCQCN struct {
	C          float64 `json:"c"`          // bits/s
	N          int     `json:"n"`          // flows
	Packet     float64 `json:"packet"`     // bytes
	Delay      float64 `json:"delay"`      // τ*, the control-loop delay, seconds
	Kmin       float64 `json:"kmin"`       // bytes
	Kmax       float64 `json:"kmax"`       // bytes
	Pmax       float64 `json:"pmax"`       // marking probability at Kmax
	G          float64 `json:"g"`          // α's EWMA gain
	Tau        float64 `json:"tau"`        // τ, the rate-decrease (CNP) interval, seconds
	TauPrime   float64 `json:"tauPrime"`   // τ', the α update interval, seconds
	Timer      float64 `json:"timer"`      // T, the rate-increase timer, seconds
	ByteCount  float64 `json:"byteCount"`  // B, the byte counter, bytes
	F          float64 `json:"f"`          // fast-recovery steps
	RAI        float64 `json:"rai"`        // additive increase, bits/s
	Beta       float64 `json:"beta"`       // Dolce-RC's β (1: DCQCN)
	FixedAlpha float64 `json:"fixedAlpha"` // Dolce-RC's fixed α; negative: α has its own dynamics (DCQCN)
	Buffer     float64 `json:"buffer,omitempty"`
}

// DCQCNBaseline is the DCQCN paper's parameters as Zhu et al. analyse
// them: 40 Gbps, two flows, 1000 B packets, τ* = 85 µs, ECN 5 KB / 200 KB
// / 1%, g = 1/256, τ = 50 µs, τ' = 55 µs, T = 55 µs, B = 10 MB, F = 5,
// R_AI = 40 Mbps.
func DCQCNBaseline() DCQCN {
	return DCQCN{C: 40e9, N: 2, Packet: 1000, Delay: 85e-6, Kmin: 5e3, Kmax: 200e3, Pmax: 0.01,
		G: 1.0 / 256, Tau: 50e-6, TauPrime: 55e-6, Timer: 55e-6, ByteCount: 10e6, F: 5, RAI: 40e6,
		Beta: 1, FixedAlpha: -1}
}

// Validate reports every parameter outside the model's domain.
func (d DCQCN) Validate() error {
	var errs []error
	pos := func(name string, v float64, unit string) {
		if !(v > 0) || math.IsInf(v, 0) {
			errs = append(errs, &ParamError{name, fmt.Sprintf("must be positive (%s), got %g", unit, v)})
		}
	}
	pos("c", d.C, "bits/s")
	if d.N < 1 {
		errs = append(errs, &ParamError{"n", fmt.Sprintf("at least one flow, got %d", d.N)})
	}
	pos("packet", d.Packet, "bytes")
	pos("tau", d.Tau, "seconds")
	pos("tauPrime", d.TauPrime, "seconds")
	pos("timer", d.Timer, "seconds")
	pos("byteCount", d.ByteCount, "bytes")
	pos("kmax", d.Kmax, "bytes")
	if !(d.Delay >= 0) || math.IsInf(d.Delay, 0) {
		errs = append(errs, &ParamError{"delay", fmt.Sprintf("the control-loop delay must be zero or positive (seconds), got %g", d.Delay)})
	}
	if !(d.Kmin >= 0 && d.Kmin < d.Kmax) {
		errs = append(errs, &ParamError{"kmin", fmt.Sprintf("want 0 ≤ kmin < kmax, got %g and %g bytes", d.Kmin, d.Kmax)})
	}
	if !(d.Pmax > 0 && d.Pmax <= 1) {
		errs = append(errs, &ParamError{"pmax", fmt.Sprintf("must lie in (0, 1], got %g", d.Pmax)})
	}
	if !(d.G > 0 && d.G <= 1) {
		errs = append(errs, &ParamError{"g", fmt.Sprintf("must lie in (0, 1], got %g", d.G)})
	}
	if !(d.F >= 0) || math.IsInf(d.F, 0) {
		errs = append(errs, &ParamError{"f", fmt.Sprintf("must be zero or positive, got %g", d.F)})
	}
	if !(d.RAI >= 0) || math.IsInf(d.RAI, 0) {
		errs = append(errs, &ParamError{"rai", fmt.Sprintf("must be zero or positive (bits/s), got %g", d.RAI)})
	}
	if !(d.Beta > 0 && d.Beta <= 2) {
		errs = append(errs, &ParamError{"beta", fmt.Sprintf("must lie in (0, 2], got %g", d.Beta)})
	}
	if d.FixedAlpha > 1 || math.IsNaN(d.FixedAlpha) {
		errs = append(errs, &ParamError{"fixedAlpha", fmt.Sprintf("negative (α has its own dynamics) or in [0, 1], got %g", d.FixedAlpha)})
	}
	if !(d.Buffer >= 0) || math.IsInf(d.Buffer, 0) {
		errs = append(errs, &ParamError{"buffer", fmt.Sprintf("zero (no cap) or positive (bytes), got %g", d.Buffer)})
	}
	return errors.Join(errs...)
}

// mark is RED's marking probability at a queue of q bytes.
func (d DCQCN) mark(q float64) float64 {
	switch {
	case q <= d.Kmin:
		return 0
	case q <= d.Kmax:
		return d.Pmax * (q - d.Kmin) / (d.Kmax - d.Kmin)
	}
	return 1
}

// terms are the model's five per-packet factors at marking probability p
// and delayed rate rcD (packets/s): a, the probability of at least one
// mark in τ; b and d the increase events per packet of the byte counter
// and the timer; c and e the same, past fast recovery (Zhu et al.'s
// (12); the limits at p = 0 are 1/B and 1/(T·R_C)).
func (d DCQCN) terms(p, rcD float64) (a, b, c, dd, e float64) {
	bp := d.ByteCount / d.Packet
	tr := d.Timer * rcD
	if p <= 0 {
		return 0, 1 / bp, 1 / bp, 1 / math.Max(tr, 1e-300), 1 / math.Max(tr, 1e-300)
	}
	l := math.Log1p(-p) // ln(1 − p); p = 1 gives −Inf, handled by the limits below
	a = -math.Expm1(d.Tau * rcD * l)
	b = p / math.Expm1(-bp*l)
	c = math.Exp(d.F*bp*l) * b
	if tr > 0 {
		dd = p / math.Expm1(-tr*l)
		e = math.Exp(d.F*tr*l) * dd
	}
	if p >= 1 {
		a, b, c, dd, e = 1, 0, 0, 0, 0
	}
	return a, b, c, dd, e
}

// alphaTarget is where α's ODE pulls it at marking probability p and
// rate rc (packets/s): the probability 1 − (1 − p)^{τ' R_C} that an α
// period sees a mark.
func (d DCQCN) alphaTarget(p, rc float64) float64 {
	if p <= 0 {
		return 0
	}
	return -math.Expm1(d.TauPrime * rc * math.Log1p(-math.Min(p, 1-1e-16)))
}

// DCQCNState is the model's state (and its history before t = 0).
type DCQCNState struct {
	Q     float64 `json:"q"`     // bytes
	RC    float64 `json:"rc"`    // packets/s
	RT    float64 `json:"rt"`    // packets/s
	Alpha float64 `json:"alpha"` // α
}

// FixedPoint is the model's equilibrium: R_C* = C/N, and the marking
// probability p* that balances decrease and increase, found by bisection
// (Zhu et al. (12)–(14); Dolce-RC's (17)–(20) with its β and fixed α).
// It is an error when no p* in (0, 1) balances them (the queue then sits
// above Kmax or the link is not saturated).
func (d DCQCN) FixedPoint() (DCQCNState, float64, error) {
	if err := d.Validate(); err != nil {
		return DCQCNState{}, 0, err
	}
	rc := d.C / (8 * d.Packet) / float64(d.N)
	rai := d.RAI / (8 * d.Packet)
	alpha := func(p float64) float64 {
		if d.FixedAlpha >= 0 {
			return d.FixedAlpha
		}
		return d.alphaTarget(p, rc)
	}
	// balance(p) = decrease − increase of R_T − R_C at the fixed point:
	// the R_C equation needs R_T − R_C = α a / (τ (b + d)); the R_T
	// equation gives R_T − β R_C = τ R_AI R_C (c + e) / a.
	balance := func(p float64) float64 {
		a, b, c, dd, e := d.terms(p, rc)
		need := alpha(p) * a / (d.Tau * (b + dd))
		have := (d.Beta-1)*rc + d.Tau*rai*rc*(c+e)/a
		return need - have
	}
	lo, hi := 1e-12, 1-1e-12
	if balance(lo) > 0 || balance(hi) < 0 {
		return DCQCNState{}, 0, errors.New("fluid: DCQCN has no fixed point with a marking probability in (0, 1) for these parameters")
	}
	for i := 0; i < 200 && hi-lo > 1e-15; i++ {
		m := (lo + hi) / 2
		if balance(m) < 0 {
			lo = m
		} else {
			hi = m
		}
	}
	p := (lo + hi) / 2
	a, b, _, dd, _ := d.terms(p, rc)
	st := DCQCNState{RC: rc, Alpha: alpha(p)}
	st.RT = rc + st.Alpha*a/(d.Tau*(b+dd))
	if p <= d.Pmax {
		st.Q = d.Kmin + p/d.Pmax*(d.Kmax-d.Kmin)
	} else {
		st.Q = d.Kmax // RED jumps from Pmax to 1 at Kmax
	}
	return st, p, nil
}

// DCQCNTrajectory is a run of the DCQCN model: time (s), queue (bytes),
// rates (bits/s), α and the marking probability.
type DCQCNTrajectory struct {
	T     []float64 `json:"t"`
	Q     []float64 `json:"q"`
	RC    []float64 `json:"rc"`
	RT    []float64 `json:"rt"`
	Alpha []float64 `json:"alpha"`
	P     []float64 `json:"p"`
}

// Integrate runs the model from start (rates in packets/s) with a fixed
// forward-Euler step dt, the delayed terms read from a history ring of the
// last τ*, the queue projected at 0 (and capped at Buffer if set).
func (d DCQCN) Integrate(start DCQCNState, duration, dt, every float64) (*DCQCNTrajectory, error) {
	if err := d.Validate(); err != nil {
		return nil, err
	}
	switch {
	case !(dt > 0) || dt > d.Tau/4:
		return nil, &ParamError{"dt", fmt.Sprintf("the step must be positive and at most a quarter of τ, got %g s", dt)}
	case !(duration > 0) || duration/dt > 1e8:
		return nil, &ParamError{"duration", fmt.Sprintf("must be positive and at most 1e8 steps, got %g s", duration)}
	case !(every >= dt):
		return nil, &ParamError{"every", fmt.Sprintf("the sampling interval must be at least the step, got %g s", every)}
	}
	c := d.C / (8 * d.Packet)
	rai := d.RAI / (8 * d.Packet)
	n := float64(d.N)
	lag := int(math.Round(d.Delay / dt))
	histRC := make([]float64, lag+1)
	histP := make([]float64, lag+1)
	q, rc, rt, al := start.Q, start.RC, start.RT, start.Alpha
	if d.FixedAlpha >= 0 {
		al = d.FixedAlpha
	}
	for i := range histRC {
		histRC[i], histP[i] = rc, d.mark(q)
	}
	tr := &DCQCNTrajectory{}
	bits := 8 * d.Packet
	sample := func(k int) {
		tr.T = append(tr.T, float64(k)*dt)
		tr.Q = append(tr.Q, q)
		tr.RC = append(tr.RC, rc*bits)
		tr.RT = append(tr.RT, rt*bits)
		tr.Alpha = append(tr.Alpha, al)
		tr.P = append(tr.P, d.mark(q))
	}
	sample(0)
	steps := int(math.Round(duration / dt))
	every1 := max(1, int(math.Round(every/dt)))
	for k := 0; k < steps; k++ {
		slot := k % (lag + 1)
		rcD, p := histRC[slot], histP[slot]
		a, b, cc, dd, e := d.terms(p, rcD)
		drt := -(rt-d.Beta*rc)/d.Tau*a + rai*rcD*(cc+e)
		drc := -rc*al/(2*d.Tau)*a + (rt-rc)/2*rcD*(b+dd)
		dal := 0.0
		if d.FixedAlpha < 0 {
			dal = d.G / d.TauPrime * (d.alphaTarget(p, rcD) - al)
		}
		dq := (n*rc - c) * d.Packet // bytes/s
		if q <= 0 && dq < 0 {
			dq = 0
		}
		q = math.Max(0, q+dq*dt)
		if d.Buffer > 0 && q > d.Buffer {
			q = d.Buffer
		}
		rc = math.Max(0, rc+drc*dt)
		rt = math.Max(0, rt+drt*dt)
		al = math.Min(1, math.Max(0, al+dal*dt))
		if math.IsNaN(q+rc+rt+al) || math.IsInf(q+rc+rt+al, 0) {
			return tr, fmt.Errorf("fluid: the DCQCN model diverged at t = %.6g s (step %g s)", float64(k+1)*dt, dt)
		}
		histRC[slot], histP[slot] = rc, d.mark(q)
		if (k+1)%every1 == 0 {
			sample(k + 1)
		}
	}
	return tr, nil
}
