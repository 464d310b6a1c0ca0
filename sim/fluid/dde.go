package fluid

import (
	"fmt"
	"math"
)

// Model selects the fluid model's source equations.
type Model string

const (
	ModelQCN     Model = "qcn"      // (4)-(8): R_C and R_T, fast recovery then active increase
	ModelQCNAIMD Model = "qcn_aimd" // (20) with (6)-(8): additive increase, no averaging
)

// Trajectory is a fluid run sampled every Every seconds: time (s), queue
// (packets), current and target rate (packets/s), feedback F_b (packets).
type Trajectory struct {
	T  []float64 `json:"t"`
	Q  []float64 `json:"q"`
	RC []float64 `json:"rc"`
	RT []float64 `json:"rt"`
	Fb []float64 `json:"fb"`
}

// Start is the state a run starts in (and its history before t = 0).
type Start struct {
	Q  float64 `json:"q"`  // packets
	RC float64 `json:"rc"` // packets/s
	RT float64 `json:"rt"` // packets/s
}

// FixedPoint is the model's equilibrium as a start.
func (q QCN) FixedPoint(m Model) Start {
	l := q.Linearise()
	if m == ModelQCNAIMD {
		return Start{Q: l.QHat, RC: l.RC, RT: l.RC}
	}
	return Start{Q: l.Q, RC: l.RC, RT: l.RT}
}

// EmptyStart is an empty queue with every source at its fair share C/N
// (and R_T = R_C): the start of the lab's fluid runs.
func (q QCN) EmptyStart() Start {
	fair := q.C / (8 * q.Packet) / float64(q.N)
	return Start{RC: fair, RT: fair}
}

// increase terms of (4), (5) and (20) per unit of R_C(t−τ): the limits at
// p = 0 are 1/100 (footnote 6).
func incr(p float64) float64 {
	if p == 0 {
		return 1.0 / 100
	}
	return p / (math.Pow(1-p, -100) - 1)
}

func incrAI(p float64) float64 {
	if p == 0 {
		return 1.0 / 100
	}
	return math.Pow(1-p, 500) * p / (math.Pow(1-p, -100) - 1)
}

// Integrate runs the delay-differential model from start for duration
// seconds with a fixed step dt (forward Euler; the delayed terms read a
// history ring of the past RTT, the queue is projected at 0), sampling every
// `every` seconds. A state that stops being finite is an error, not NaN.
func (q QCN) Integrate(m Model, start Start, duration, dt, every float64) (*Trajectory, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	if m != ModelQCN && m != ModelQCNAIMD {
		return nil, &ParamError{"model", fmt.Sprintf("no model %q; models: qcn, qcn_aimd", m)}
	}
	switch {
	case !(dt > 0) || dt > q.RTT/4 && q.RTT > 0:
		return nil, &ParamError{"dt", fmt.Sprintf("the step must be positive and at most a quarter of the RTT, got %g s", dt)}
	case !(duration > 0):
		return nil, &ParamError{"duration", fmt.Sprintf("must be positive, got %g s", duration)}
	case !(every >= dt):
		return nil, &ParamError{"every", fmt.Sprintf("the sampling interval must be at least the step, got %g s", every)}
	}
	c := q.C / (8 * q.Packet)
	rai := q.RAI / (8 * q.Packet)
	n := float64(q.N)
	fb := func(Q, rc float64) float64 { return Q - q.Qeq + q.W/(c*q.Ps)*(n*rc-c) }
	// the history of R_C and F_b over the last RTT, in steps
	lag := int(math.Round(q.RTT / dt))
	histRC := make([]float64, lag+1)
	histFb := make([]float64, lag+1)
	Q, rc, rt := start.Q, start.RC, start.RT
	for i := range histRC {
		histRC[i], histFb[i] = rc, fb(Q, rc)
	}
	steps := int(math.Round(duration / dt))
	sampleEvery := max(1, int(math.Round(every/dt)))
	tr := &Trajectory{}
	sample := func(k int) {
		tr.T = append(tr.T, float64(k)*dt)
		tr.Q = append(tr.Q, Q)
		tr.RC = append(tr.RC, rc)
		tr.RT = append(tr.RT, rt)
		tr.Fb = append(tr.Fb, fb(Q, rc))
	}
	sample(0)
	for k := 0; k < steps; k++ {
		slot := k % (lag + 1) // the oldest entry: the state one RTT ago
		rcD, fbD := histRC[slot], histFb[slot]
		pr := 0.0
		if fbD > 0 {
			pr = q.Ps
		}
		var drc, drt float64
		switch m {
		case ModelQCN:
			drc = -q.Gd*fbD*rc*rcD*pr + (rt-rc)/2*rcD*incr(pr)
			drt = -(rt-rc)*rcD*pr + rai*rcD*incrAI(pr)
		case ModelQCNAIMD:
			drc = -q.Gd*fbD*rc*rcD*pr + rai*rcD*incr(pr)
		}
		dq := n*rc - c
		if Q <= 0 && dq < 0 {
			dq = 0
		}
		Q += dq * dt
		if Q < 0 {
			Q = 0
		}
		if q.Buffer > 0 && Q > q.Buffer {
			Q = q.Buffer // drop-tail: what does not fit is lost
		}
		rc += drc * dt
		rt += drt * dt
		if m == ModelQCNAIMD {
			rt = rc
		}
		if math.IsNaN(Q+rc+rt) || math.IsInf(Q+rc+rt, 0) {
			return tr, fmt.Errorf("fluid: the %s model diverged at t = %.6g s (step %g s)", m, float64(k+1)*dt, dt)
		}
		histRC[slot], histFb[slot] = rc, fb(Q, rc)
		if (k+1)%sampleEvery == 0 {
			sample(k + 1)
		}
	}
	return tr, nil
}
