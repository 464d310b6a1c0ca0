package qp

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"
)

var inf = math.Inf(1)

// ---------------------------------------------------------------------------
// The MPCC problem

// The fixed parameters of the thesis' MPCC test vectors (A = 1).
const (
	mpccB   = 1.152
	mpccPBD = 3750.0
	mpccN   = 4.0
	mpccWf  = 937.5
)

// mpcc builds the MPCC window problem for queue state x, weights wq, wr and
// horizon P (scalar queue model with A = 1).
func mpcc(x, b, wq, wr float64, P int) *Problem {
	p := &Problem{
		N: P, M: P,
		H: make([]float64, P*P), G: make([]float64, P),
		LB: make([]float64, P), UB: make([]float64, P),
		A: make([]float64, P*P), LBA: make([]float64, P), UBA: make([]float64, P),
	}
	for i := range P {
		for j := range P {
			// H = 2(B²·WQ·LᵀL + WR·I) with (LᵀL)ᵢⱼ = P − max(i, j).
			p.H[i*P+j] = 2 * b * b * wq * float64(P-max(i, j))
			if i == j {
				p.H[i*P+j] += 2 * wr
			}
			if j <= i {
				p.A[i*P+j] = b // A = B·L
			}
		}
		p.G[i] = 2 * b * wq * x * float64(P-i)
		p.LB[i], p.UB[i] = -mpccWf, mpccPBD-mpccWf
		p.LBA[i], p.UBA[i] = -x, (mpccN-1)*mpccPBD-x
	}
	return p
}

func TestMPCCVectors(t *testing.T) {
	// The thesis prints U* with 3 decimals (2 in some rows); we compare to
	// within 0.01 for 3 printed decimals and 0.02 for 2, which allows for
	// the rounding of the printed value and nothing more.
	tests := []struct {
		x, wr float64
		P     int
		want  []float64 // nil when only the first element is printed, in first
		first float64
		tol   float64
	}{
		{11250, 1, 3, []float64{-937.5, -937.5, -937.5}, 0, 0.01},
		{11250, 10, 3, []float64{-937.5, -937.5, -924.48}, 0, 0.02},
		{11250, 100, 3, []float64{-366.219, -241.479, -119.943}, 0, 0.01},
		{300, 10, 3, []float64{-65.001, -39.067, -18.318}, 0, 0.01},
		{11250, 10, 5, []float64{-937.5, -937.5, -937.5, -937.5, -704.802}, 0, 0.01},
		{300, 10, 5, []float64{-75.630, -51.107, -33.367, -20.054, -9.403}, 0, 0.01},
		{11250, 100, 10, nil, -877.66, 0.02},
		{300, 10, 20, nil, -79.15, 0.02},
	}
	s := NewSolver(20, 20)
	for _, tc := range tests {
		name := fmt.Sprintf("x=%v/WR=%v/P=%d", tc.x, tc.wr, tc.P)
		t.Run(name, func(t *testing.T) {
			p := mpcc(tc.x, mpccB, 1, tc.wr, tc.P)
			for _, warm := range []bool{false, true} { // cold, then warm from itself
				if !warm {
					s.Reset()
				}
				u := make([]float64, tc.P)
				st, err := s.Solve(p, u)
				if err != nil || st != Optimal {
					t.Fatalf("Solve = %v, %v", st, err)
				}
				want := tc.want
				if want == nil {
					want = []float64{tc.first}
				}
				for i, w := range want {
					if math.Abs(u[i]-w) > tc.tol {
						t.Errorf("warm=%v: U[%d] = %.4f, want %v ± %v (U = %.3f)", warm, i, u[i], w, tc.tol, u)
					}
				}
				box, rows := s.Multipliers()
				if w := kktWorst(p, u, box, rows); w > 1e-7 {
					t.Errorf("KKT residual %.3g", w)
				}
			}
		})
	}
	t.Run("x=20000/infeasible", func(t *testing.T) {
		// 20000 − B·Wf = 18920 > (N−1)·PBD = 11250: the first row cannot be met.
		u := make([]float64, 5)
		st, err := s.Solve(mpcc(20000, mpccB, 1, 10, 5), u)
		if err != nil || st != Infeasible {
			t.Fatalf("Solve = %v, %v, want Infeasible", st, err)
		}
		if box, rows := s.Multipliers(); box != nil || rows != nil {
			t.Errorf("Multipliers after Infeasible = %v, %v, want nil", box, rows)
		}
	})
}

func TestUnconstrained(t *testing.T) {
	// With every bound infinite and P = 1, U = −B·WQ·x/(B²·WQ + WR).
	for _, x := range []float64{0, 300, 11250, 20000} {
		for _, wr := range []float64{1, 10, 100} {
			want := -mpccB * x / (mpccB*mpccB + wr)
			p := mpcc(x, mpccB, 1, wr, 1)
			p.LB, p.UB = nil, nil
			p.LBA[0], p.UBA[0] = -inf, inf
			q := *p
			q.M, q.A, q.LBA, q.UBA = 0, nil, nil, nil
			for _, pp := range []*Problem{p, &q} {
				s := NewSolver(1, 1)
				u := []float64{math.NaN()}
				st, err := s.Solve(pp, u)
				if err != nil || st != Optimal || s.Iterations() != 0 {
					t.Fatalf("Solve = %v, %v, %d iterations", st, err, s.Iterations())
				}
				if math.Abs(u[0]-want) > 1e-12*(1+math.Abs(want)) {
					t.Errorf("x=%v WR=%v M=%d: U = %v, want %v", x, wr, pp.M, u[0], want)
				}
			}
		}
	}
}

// ---------------------------------------------------------------------------
// KKT conditions

// kkt returns the relative KKT residuals of x with the multipliers box and
// rows (the sign convention of Multipliers):
//
//   - stat: ‖Hx + g + box + Aᵀrows‖∞ / S, where S is the largest sum of the
//     magnitudes of the terms of one component of that sum;
//   - feas: the largest violation of a bound, divided by that constraint's
//     scale ‖a‖₁·X + |bound| with X = max(‖x‖∞, 1);
//   - sign: the largest multiplier of the wrong sign (an upper multiplier on
//     a side that is +Inf and so on), divided by S;
//   - comp: the largest product of a relative multiplier |μ|/S and the
//     relative slack of the side it belongs to.
func kkt(p *Problem, x, box, rows []float64) (stat, feas, sign, comp float64) {
	n, m := p.N, p.M
	X := max(vnormInf(x[:n]), 1)
	res := make([]float64, n)
	mag := make([]float64, n)
	for i := range n {
		res[i] = p.G[i] + box[i]
		mag[i] = math.Abs(p.G[i]) + math.Abs(box[i])
		for j := range n {
			res[i] += p.H[i*n+j] * x[j]
			mag[i] += math.Abs(p.H[i*n+j] * x[j])
		}
	}
	for k := range m {
		for j := range n {
			res[j] += p.A[k*n+j] * rows[k]
			mag[j] += math.Abs(p.A[k*n+j] * rows[k])
		}
	}
	S := max(vnormInf(mag), 1e-300)
	stat = vnormInf(res) / S

	check := func(a []float64, v, lo, hi, mu float64) {
		a1 := 1.0
		if a != nil {
			a1 = 0
			for _, e := range a {
				a1 += math.Abs(e)
			}
		}
		// scale of a side; the floor only matters for a zero row with a
		// zero bound, where v = 0 exactly.
		sc := func(b float64) float64 { return max(a1*X+math.Abs(b), 1e-300) }
		if !math.IsInf(lo, 0) {
			feas = max(feas, (lo-v)/sc(lo))
		}
		if !math.IsInf(hi, 0) {
			feas = max(feas, (v-hi)/sc(hi))
		}
		switch {
		case mu > 0 && math.IsInf(hi, 1), mu < 0 && math.IsInf(lo, -1):
			sign = max(sign, math.Abs(mu)/S)
		case mu > 0:
			comp = max(comp, mu/S*math.Abs(hi-v)/sc(hi))
		case mu < 0:
			comp = max(comp, -mu/S*math.Abs(v-lo)/sc(lo))
		}
	}
	for i := range n {
		lo, hi := -inf, inf
		if p.LB != nil {
			lo = p.LB[i]
		}
		if p.UB != nil {
			hi = p.UB[i]
		}
		check(nil, x[i], lo, hi, box[i])
	}
	for k := range m {
		a := p.A[k*n : k*n+n]
		lo, hi := -inf, inf
		if p.LBA != nil {
			lo = p.LBA[k]
		}
		if p.UBA != nil {
			hi = p.UBA[k]
		}
		check(a, vdot(a, x), lo, hi, rows[k])
	}
	return
}

// kktWorst is the largest of the four residuals of kkt; NaN counts as +Inf
// so that a comparison with a tolerance cannot pass by accident.
func kktWorst(p *Problem, x, box, rows []float64) float64 {
	a, b, c, d := kkt(p, x, box, rows)
	w := max(a, b, c, d)
	if math.IsNaN(w) {
		return inf
	}
	return w
}

func vdot(a, b []float64) float64 {
	var t float64
	for i := range a {
		t += a[i] * b[i]
	}
	return t
}

func vnormInf(x []float64) float64 {
	var m float64
	for _, v := range x {
		m = max(m, math.Abs(v))
	}
	return m
}

// relDiff is ‖x − y‖∞ / (1 + ‖y‖∞).
func relDiff(x, y []float64) float64 {
	var d float64
	for i := range y {
		d = max(d, math.Abs(x[i]-y[i]))
	}
	return d / (1 + vnormInf(y))
}

// ---------------------------------------------------------------------------
// Random problems

// regime describes a family of random problems; every problem is feasible by
// construction: a point x0 is drawn first and every bound is placed around
// x0 or aᵀx0.
type regime struct {
	name       string
	count      int
	nMin, nMax int
	cond       float64 // condition number of H
	box        float64 // probability that a variable has box bounds
	mPerN      float64 // general rows per variable
	eq         float64 // probability that a row (or bound) is an equality
	twoSided   float64 // probability that a row has both sides
	inf        float64 // probability that a side of a two-sided bound is ±Inf
	degen      bool    // duplicate, scaled and combined rows, tight at x0
}

var regimes = []regime{
	{name: "box-only", count: 1500, nMin: 1, nMax: 20, cond: 10, box: 1, twoSided: 1},
	{name: "box-only-ill", count: 1000, nMin: 1, nMax: 20, cond: 1e4, box: 1, twoSided: 1, inf: 0.3},
	{name: "rows-only", count: 1500, nMin: 1, nMax: 20, cond: 10, mPerN: 1.5, twoSided: 0},
	{name: "box+rows", count: 1500, nMin: 1, nMax: 20, cond: 100, box: 0.7, mPerN: 1, twoSided: 0.5, inf: 0.2},
	{name: "equalities", count: 1000, nMin: 2, nMax: 20, cond: 100, box: 0.8, mPerN: 0.8, eq: 0.3, twoSided: 0.5},
	{name: "two-sided", count: 1000, nMin: 1, nMax: 20, cond: 100, box: 0.5, mPerN: 2, twoSided: 1},
	{name: "unbounded-sides", count: 1000, nMin: 1, nMax: 20, cond: 100, box: 1, mPerN: 1, twoSided: 1, inf: 0.5},
	{name: "degenerate", count: 1000, nMin: 2, nMax: 20, cond: 100, box: 0.5, mPerN: 1.5, eq: 0.1, twoSided: 0.5, degen: true},
	{name: "ill-conditioned", count: 1000, nMin: 1, nMax: 20, cond: 1e4, box: 0.7, mPerN: 1.5, eq: 0.1, twoSided: 0.5, inf: 0.2},
}

// randSPD returns a random symmetric positive definite n×n matrix Q·diag(λ)·Qᵀ
// with eigenvalues spread log-uniformly over [1, cond] (both ends included
// when n ≥ 2) and a random orthogonal Q.
func randSPD(r *rand.Rand, n int, cond float64) []float64 {
	q := make([]float64, n*n) // column c is q[c*n:]
	for c := range n {
		col := q[c*n : c*n+n]
		for i := range col {
			col[i] = r.NormFloat64()
		}
		for range 2 { // Gram–Schmidt, twice for orthogonality to rounding
			for k := range c {
				prev := q[k*n : k*n+n]
				t := vdot(prev, col)
				for i := range col {
					col[i] -= t * prev[i]
				}
			}
		}
		nc := math.Sqrt(vdot(col, col))
		for i := range col {
			col[i] /= nc
		}
	}
	lam := make([]float64, n)
	for i := range lam {
		lam[i] = math.Pow(cond, r.Float64())
	}
	if n >= 2 {
		lam[0], lam[1] = 1, cond
	}
	h := make([]float64, n*n)
	for i := range n {
		for j := i; j < n; j++ {
			var t float64
			for k := range n {
				t += lam[k] * q[k*n+i] * q[k*n+j]
			}
			h[i*n+j], h[j*n+i] = t, t
		}
	}
	return h
}

// randProblem draws a problem of regime g; x0 is a feasible point.
func randProblem(r *rand.Rand, g regime) (p *Problem, x0 []float64) {
	n := g.nMin + r.IntN(g.nMax-g.nMin+1)
	m := int(g.mPerN*float64(n)+0.5) + r.IntN(3)
	if g.mPerN == 0 {
		m = 0
	}
	p = &Problem{N: n, M: m, H: randSPD(r, n, g.cond), G: make([]float64, n), A: make([]float64, m*n)}
	x0 = make([]float64, n)
	for i := range x0 {
		x0[i] = r.NormFloat64()
	}
	width := func() float64 { return r.Float64() * r.Float64() * 2 }
	side := func() bool { return r.Float64() >= g.inf }

	if g.box > 0 {
		p.LB, p.UB = make([]float64, n), make([]float64, n)
		for i := range n {
			p.LB[i], p.UB[i] = -inf, inf
			if r.Float64() >= g.box {
				continue
			}
			switch {
			case r.Float64() < g.eq/3: // a fixed variable
				p.LB[i], p.UB[i] = x0[i], x0[i]
			case r.Float64() < g.twoSided:
				if side() {
					p.LB[i] = x0[i] - width()
				}
				if side() {
					p.UB[i] = x0[i] + width()
				}
			case r.IntN(2) == 0:
				p.LB[i] = x0[i] - width()
			default:
				p.UB[i] = x0[i] + width()
			}
		}
	}

	if m > 0 {
		p.LBA, p.UBA = make([]float64, m), make([]float64, m)
	}
	var tight []int // rows tight at x0, with the side: +1 lower, −1 upper, 0 both
	var tightSide []float64
	for k := range m {
		a := p.A[k*n : k*n+n]
		switch {
		case g.degen && k >= 2 && r.IntN(3) == 0:
			// A copy of an earlier row, scaled by ±1, 2 or 0.5, or the sum
			// of two earlier rows.
			i, j := r.IntN(k), r.IntN(k)
			switch r.IntN(4) {
			case 0:
				copy(a, p.A[i*n:i*n+n])
			case 1:
				for c := range a {
					a[c] = -p.A[i*n+c]
				}
			case 2:
				for c := range a {
					a[c] = 2 * p.A[i*n+c]
				}
			default:
				for c := range a {
					a[c] = p.A[i*n+c] + p.A[j*n+c]
				}
			}
		default:
			for c := range a {
				if g.degen || r.Float64() < 0.8 { // sparse rows sometimes
					a[c] = r.NormFloat64()
				}
			}
		}
		v := vdot(a, x0)
		p.LBA[k], p.UBA[k] = -inf, inf
		switch {
		case r.Float64() < g.eq:
			p.LBA[k], p.UBA[k] = v, v
			tight, tightSide = append(tight, k), append(tightSide, 0)
		case g.degen && r.IntN(2) == 0: // tight at x0
			if r.IntN(2) == 0 {
				p.LBA[k] = v
				tight, tightSide = append(tight, k), append(tightSide, 1)
			} else {
				p.UBA[k] = v
				tight, tightSide = append(tight, k), append(tightSide, -1)
			}
			if r.Float64() < g.twoSided {
				if p.LBA[k] == v {
					p.UBA[k] = v + width()
				} else {
					p.LBA[k] = v - width()
				}
			}
		case r.Float64() < g.twoSided:
			if side() {
				p.LBA[k] = v - width()
			}
			if side() {
				p.UBA[k] = v + width()
			}
		case r.IntN(2) == 0:
			p.LBA[k] = v - width()
		default:
			p.UBA[k] = v + width()
		}
	}

	if g.degen && r.IntN(2) == 0 {
		// Make x0 the minimiser with a degenerate multiplier vector: Hx0 + g =
		// Σ μ n over the tight rows, μ ≥ 0 (free for equalities), about half
		// of them zero (weakly active constraints).
		for i := range n {
			p.G[i] = -vdot(p.H[i*n:i*n+n], x0)
		}
		for t, k := range tight {
			mu := 0.0
			if r.IntN(2) == 0 {
				mu = r.Float64()
			}
			sg := tightSide[t]
			if sg == 0 {
				sg = float64(2*r.IntN(2) - 1)
			}
			for c := range n {
				p.G[c] += mu * sg * p.A[k*n+c]
			}
		}
		return p, x0
	}

	// Otherwise the unconstrained minimum is x0 plus a random offset, so
	// that typically several constraints are active.
	xu := make([]float64, n)
	for i := range xu {
		xu[i] = x0[i] + 2*r.NormFloat64()
	}
	for i := range n {
		p.G[i] = -vdot(p.H[i*n:i*n+n], xu)
	}
	return p, x0
}

// ---------------------------------------------------------------------------
// The second method: ADMM in the style of OSQP, with polishing

// refSolve solves p independently of the package: ADMM as in OSQP
// (Stellato et al., "OSQP: an operator splitting solver for quadratic
// programs", Math. Prog. Comp. 2020: σ = 1e-6, α = 1.6, ρ adapted every 25
// iterations, ρ·1e3 on equalities), and every 25 iterations a polishing
// step: the active set is guessed from the ADMM iterate, the KKT system of
// that set is solved directly (regularised, with iterative refinement), and
// the result is accepted if it satisfies the KKT conditions to 1e-9 — for a
// strictly convex QP that proves it is the minimiser. When the active rows
// are linearly dependent (degenerate problems) the multipliers of the
// polished system are not unique and may come out with a wrong sign; then
// ADMM runs on until its relative primal and dual residuals are below 1e-11.
// It returns the point and how it was obtained: refPolished, refConverged or
// refIterLimit (50,000 iterations without either).
func refSolve(p *Problem) (x []float64, how refKind) {
	n, m := p.N, p.N+p.M // the constraint matrix is C = [I; A]
	crow := func(i int) []float64 {
		if i >= n {
			return p.A[(i-n)*n : (i-n)*n+n]
		}
		return nil
	}
	cdot := func(i int, v []float64) float64 {
		if i < n {
			return v[i]
		}
		return vdot(crow(i), v)
	}
	cTadd := func(out []float64, i int, w float64) { // out += w·cᵢ
		if i < n {
			out[i] += w
			return
		}
		for j, a := range crow(i) {
			out[j] += w * a
		}
	}
	l, u := make([]float64, m), make([]float64, m)
	for i := range m {
		l[i], u[i] = -inf, inf
		switch {
		case i < n:
			if p.LB != nil {
				l[i] = p.LB[i]
			}
			if p.UB != nil {
				u[i] = p.UB[i]
			}
		default:
			if p.LBA != nil {
				l[i] = p.LBA[i-n]
			}
			if p.UBA != nil {
				u[i] = p.UBA[i-n]
			}
		}
	}

	const sigma, alpha = 1e-6, 1.6
	rhoBase := 0.1
	rho := make([]float64, m)
	setRho := func() {
		for i := range m {
			switch {
			case math.IsInf(l[i], -1) && math.IsInf(u[i], 1):
				rho[i] = 1e-6
			case l[i] == u[i]:
				rho[i] = 1e3 * rhoBase
			default:
				rho[i] = rhoBase
			}
		}
	}
	K := make([]float64, n*n)
	factorK := func() {
		for i := range n * n {
			K[i] = p.H[i]
		}
		for i := range n {
			K[i*n+i] += sigma
		}
		for i := range m {
			if i < n {
				K[i*n+i] += rho[i]
				continue
			}
			a := crow(i)
			for r := range n {
				for c := range n {
					K[r*n+c] += rho[i] * a[r] * a[c]
				}
			}
		}
		if !cholesky(K, n) {
			panic("refSolve: K not positive definite")
		}
	}
	setRho()
	factorK()

	x = make([]float64, n)
	z, y := make([]float64, m), make([]float64, m)
	xt, zt, rhs := make([]float64, n), make([]float64, m), make([]float64, n)
	px, cty := make([]float64, n), make([]float64, n)
	for it := 1; it <= 50000; it++ {
		for i := range n {
			rhs[i] = sigma*x[i] - p.G[i]
		}
		for i := range m {
			cTadd(rhs, i, rho[i]*z[i]-y[i])
		}
		copy(xt, rhs)
		cholSolve(K, n, xt)
		for i := range m {
			zt[i] = cdot(i, xt)
		}
		for i := range n {
			x[i] = alpha*xt[i] + (1-alpha)*x[i]
		}
		for i := range m {
			zh := alpha*zt[i] + (1-alpha)*z[i]
			zn := min(max(zh+y[i]/rho[i], l[i]), u[i])
			y[i] += rho[i] * (zh - zn)
			z[i] = zn
		}
		if it%25 != 0 {
			continue
		}
		if xp, ok := polish(p, l, u, z, y); ok {
			return xp, refPolished
		}
		// Adapt ρ to balance the relative primal and dual residuals.
		var prim, primS, dual, dualS float64
		for i := range m {
			cx := cdot(i, x)
			prim = max(prim, math.Abs(cx-z[i]))
			primS = max(primS, math.Abs(cx), math.Abs(z[i]))
		}
		clear(cty)
		for i := range m {
			cTadd(cty, i, y[i])
		}
		for i := range n {
			px[i] = vdot(p.H[i*n:i*n+n], x)
			dual = max(dual, math.Abs(px[i]+p.G[i]+cty[i]))
			dualS = max(dualS, math.Abs(px[i]), math.Abs(cty[i]), math.Abs(p.G[i]))
		}
		relPrim, relDual := prim/max(primS, 1e-30), dual/max(dualS, 1e-30)
		if relPrim <= 1e-11 && relDual <= 1e-11 {
			return x, refConverged
		}
		ratio := math.Sqrt(relPrim / max(relDual, 1e-30))
		if ratio > 5 || ratio < 0.2 {
			rhoBase = min(max(rhoBase*ratio, 1e-6), 1e6)
			setRho()
			factorK()
		}
	}
	return x, refIterLimit
}

// refKind says how refSolve obtained its point.
type refKind int

const (
	refPolished refKind = iota
	refConverged
	refIterLimit
)

// polish solves the KKT system of the active set guessed from an ADMM
// iterate (OSQP's rule: lower side active if zᵢ − lᵢ < −yᵢ, upper side if
// uᵢ − zᵢ < yᵢ) and reports whether the solution satisfies the KKT
// conditions to 1e-9.
func polish(p *Problem, l, u, z, y []float64) ([]float64, bool) {
	n := p.N
	var act []int
	var rhsB []float64
	for i := range l {
		switch {
		case z[i]-l[i] < -y[i]:
			act, rhsB = append(act, i), append(rhsB, l[i])
		case u[i]-z[i] < y[i]:
			act, rhsB = append(act, i), append(rhsB, u[i])
		}
	}
	k := len(act)
	dim := n + k
	row := func(i int) []float64 { // row i of C
		r := make([]float64, n)
		if i < n {
			r[i] = 1
		} else {
			copy(r, p.A[(i-n)*n:(i-n)*n+n])
		}
		return r
	}
	exact := make([]float64, dim*dim) // [H Cᵀ; C 0]
	for i := range n {
		copy(exact[i*dim:i*dim+n], p.H[i*n:i*n+n])
	}
	for j, c := range act {
		rc := row(c)
		for i := range n {
			exact[i*dim+n+j] = rc[i]
			exact[(n+j)*dim+i] = rc[i]
		}
	}
	const delta = 1e-8
	reg := slices.Clone(exact)
	for i := range dim {
		if i < n {
			reg[i*dim+i] += delta
		} else {
			reg[i*dim+i] -= delta
		}
	}
	piv := luFactor(reg, dim)
	rhs := make([]float64, dim)
	for i := range n {
		rhs[i] = -p.G[i]
	}
	copy(rhs[n:], rhsB)
	sol := make([]float64, dim)
	res := make([]float64, dim)
	for range 30 { // iterative refinement against the exact system
		for i := range dim {
			res[i] = rhs[i] - vdot(exact[i*dim:i*dim+dim], sol)
		}
		luSolve(reg, dim, piv, res)
		for i := range dim {
			sol[i] += res[i]
		}
	}
	x := sol[:n]
	box, rows := make([]float64, n), make([]float64, p.M)
	for j, c := range act {
		if c < n {
			box[c] += sol[n+j]
		} else {
			rows[c-n] += sol[n+j]
		}
	}
	return slices.Clone(x), kktWorst(p, x, box, rows) <= 1e-9
}

// cholesky factorises the SPD matrix a (n×n, row-major) in place into its
// lower Cholesky factor.
func cholesky(a []float64, n int) bool {
	for j := range n {
		s := a[j*n+j]
		for k := range j {
			s -= a[j*n+k] * a[j*n+k]
		}
		if s <= 0 {
			return false
		}
		a[j*n+j] = math.Sqrt(s)
		for i := j + 1; i < n; i++ {
			t := a[i*n+j]
			for k := range j {
				t -= a[i*n+k] * a[j*n+k]
			}
			a[i*n+j] = t / a[j*n+j]
		}
	}
	return true
}

// cholSolve solves LLᵀv = b in place.
func cholSolve(l []float64, n int, b []float64) {
	for i := range n {
		for k := range i {
			b[i] -= l[i*n+k] * b[k]
		}
		b[i] /= l[i*n+i]
	}
	for i := n - 1; i >= 0; i-- {
		for k := i + 1; k < n; k++ {
			b[i] -= l[k*n+i] * b[k]
		}
		b[i] /= l[i*n+i]
	}
}

// luFactor factorises a (n×n, row-major) in place with partial pivoting.
func luFactor(a []float64, n int) []int {
	piv := make([]int, n)
	for c := range n {
		pr := c
		for r := c + 1; r < n; r++ {
			if math.Abs(a[r*n+c]) > math.Abs(a[pr*n+c]) {
				pr = r
			}
		}
		piv[c] = pr
		if pr != c {
			for j := range n {
				a[c*n+j], a[pr*n+j] = a[pr*n+j], a[c*n+j]
			}
		}
		if a[c*n+c] == 0 {
			continue
		}
		for r := c + 1; r < n; r++ {
			f := a[r*n+c] / a[c*n+c]
			a[r*n+c] = f
			for j := c + 1; j < n; j++ {
				a[r*n+j] -= f * a[c*n+j]
			}
		}
	}
	return piv
}

func luSolve(a []float64, n int, piv []int, b []float64) {
	for c := range n {
		b[c], b[piv[c]] = b[piv[c]], b[c]
	}
	for i := range n {
		for k := range i {
			b[i] -= a[i*n+k] * b[k]
		}
	}
	for i := n - 1; i >= 0; i-- {
		for k := i + 1; k < n; k++ {
			b[i] -= a[i*n+k] * b[k]
		}
		b[i] /= a[i*n+i]
	}
}

// ---------------------------------------------------------------------------
// Random problems against KKT and the second method

func TestRandom(t *testing.T) {
	// Tolerances. KKT (stationarity, primal feasibility, dual sign,
	// complementarity, each relative as kkt defines it): 1e-7. The method
	// satisfies the active constraints to rounding and stops when no
	// constraint is violated by more than 1e-10 of its scale, so its
	// residuals are around 1e-12 even for cond(H) = 1e4; 1e-7 leaves room
	// for the ill-conditioned regimes without hiding a wrong active set,
	// which shows up as a residual of order one. Difference to the second
	// method: 1e-5 of 1 + ‖x‖∞. A polished reference satisfies the KKT
	// conditions to 1e-9, and by strong convexity two points that do so
	// differ by about cond(H)·1e-9 ≤ 1e-5 at most.
	total := 0
	var kinds [3]int           // by refKind
	var worstByKind [3]float64 // worst difference, by refKind
	worstKKT, worstDiff := 0.0, 0.0
	s := NewSolver(20, 62)
	for ri, g := range regimes {
		t.Run(g.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(2024, uint64(ri)))
			x := make([]float64, 20)
			var wk, wd float64
			var active, iters, withDrops int
			for it := range g.count {
				p, _ := randProblem(r, g)
				if it%2 == 0 { // half of them cold, half warm from the previous problem
					s.Reset()
				}
				st, err := s.Solve(p, x)
				if err != nil || st != Optimal {
					t.Fatalf("problem %d (n=%d m=%d): Solve = %v, %v", it, p.N, p.M, st, err)
				}
				box, rows := s.Multipliers()
				k := kktWorst(p, x, box, rows)
				if k > 1e-7 {
					a, b, c, d := kkt(p, x, box, rows)
					t.Errorf("problem %d (n=%d m=%d): KKT residual stat %.3g feas %.3g sign %.3g comp %.3g", it, p.N, p.M, a, b, c, d)
				}
				a := countActive(s)
				active += a
				iters += s.Iterations()
				if s.Iterations() > a {
					withDrops++
				}
				xr, how := refSolve(p)
				kinds[how]++
				diff := relDiff(x[:p.N], xr)
				if diff > 1e-5 {
					t.Errorf("problem %d (n=%d m=%d): differs from the second method by %.3g (reference kind %d)", it, p.N, p.M, diff, how)
				}
				wk, wd = max(wk, k), max(wd, diff)
				worstByKind[how] = max(worstByKind[how], diff)
			}
			t.Logf("%d problems: %.1f active constraints and %.1f iterations on average, %d with drops; worst KKT residual %.3g, worst difference to ADMM %.3g",
				g.count, float64(active)/float64(g.count), float64(iters)/float64(g.count), withDrops, wk, wd)
			total += g.count
			worstKKT, worstDiff = max(worstKKT, wk), max(worstDiff, wd)
		})
	}
	t.Logf("%d problems: worst KKT residual %.3g, worst difference to the second method %.3g; reference polished %d (worst difference %.3g), converged ADMM %d (%.3g), ADMM iteration limit %d",
		total, worstKKT, worstDiff, kinds[refPolished], worstByKind[refPolished], kinds[refConverged], worstByKind[refConverged], kinds[refIterLimit])
	if kinds[refIterLimit] > 0 {
		t.Errorf("the second method did not converge on %d problems", kinds[refIterLimit])
	}
	if total < 10000 {
		t.Errorf("only %d problems", total)
	}
}

// ---------------------------------------------------------------------------
// Infeasible and malformed problems

func TestInfeasible(t *testing.T) {
	one := func(n int) []float64 { // the all-ones row
		a := make([]float64, n)
		for i := range a {
			a[i] = 1
		}
		return a
	}
	eye := func(n int) []float64 {
		h := make([]float64, n*n)
		for i := range n {
			h[i*n+i] = 1
		}
		return h
	}
	tests := []struct {
		name string
		p    *Problem
	}{
		{"contradictory rows", &Problem{N: 2, M: 2, H: eye(2), G: []float64{1, -1},
			A: []float64{1, 1, 1, 1}, LBA: []float64{1, -inf}, UBA: []float64{inf, 0}}},
		{"opposite rows", &Problem{N: 2, M: 2, H: eye(2), G: []float64{0, 0},
			A: []float64{1, 2, -1, -2}, LBA: []float64{1, 0}, UBA: []float64{inf, inf}}},
		{"row beyond the box", &Problem{N: 3, M: 1, H: eye(3), G: []float64{0, 0, 0},
			LB: []float64{0, 0, 0}, UB: []float64{1, 1, 1}, A: one(3), LBA: []float64{3.5}, UBA: []float64{inf}}},
		{"inconsistent equalities", &Problem{N: 2, M: 2, H: eye(2), G: []float64{3, 4},
			A: []float64{1, 1, 2, 2}, LBA: []float64{1, 3}, UBA: []float64{1, 3}}},
		{"equality beyond a bound", &Problem{N: 2, M: 1, H: eye(2), G: []float64{0, 0},
			UB: []float64{1, inf}, A: []float64{1, 0}, LBA: []float64{2}, UBA: []float64{2}}},
		{"zero row with positive lower bound", &Problem{N: 2, M: 1, H: eye(2), G: []float64{1, 1},
			A: []float64{0, 0}, LBA: []float64{1e-3}, UBA: []float64{inf}}},
		{"pairwise feasible, jointly not", &Problem{N: 2, M: 1, H: eye(2), G: []float64{0, 0},
			LB: []float64{1, 1}, A: []float64{1, 1}, LBA: []float64{-inf}, UBA: []float64{1}}},
		{"fixed variables against a row", &Problem{N: 2, M: 1, H: eye(2), G: []float64{0, 0},
			LB: []float64{1, 2}, UB: []float64{1, 2}, A: []float64{1, -1}, LBA: []float64{0}, UBA: []float64{0}}},
		{"MPCC x=20000", mpcc(20000, mpccB, 1, 10, 5)},
		{"MPCC x=13000 P=20", mpcc(13000, mpccB, 1, 1, 20)},
	}
	s := NewSolver(20, 20)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := make([]float64, tc.p.N)
			for _, warm := range []bool{false, true} {
				if !warm {
					s.Reset()
				}
				st, err := s.Solve(tc.p, x)
				if err != nil || st != Infeasible {
					t.Fatalf("Solve = %v, %v, want Infeasible", st, err)
				}
			}
		})
	}

	// Random feasible problems made infeasible by one extra row that asks
	// for more than the box allows (aᵀx ≥ max over the box + margin) or for
	// the opposite of an existing equality.
	r := rand.New(rand.NewPCG(7, 7))
	g := regime{nMin: 1, nMax: 20, cond: 100, box: 1, mPerN: 1, eq: 0.2, twoSided: 0.5}
	x := make([]float64, 20)
	s = NewSolver(20, 62)
	for it := range 500 {
		p, _ := randProblem(r, g)
		n := p.N
		for i := range n { // a finite box
			if math.IsInf(p.LB[i], 0) {
				p.LB[i] = min(-1-5*r.Float64(), p.UB[i])
			}
			if math.IsInf(p.UB[i], 0) {
				p.UB[i] = max(1+5*r.Float64(), p.LB[i])
			}
		}
		a := make([]float64, n)
		top := 0.0
		for i := range a {
			a[i] = r.NormFloat64()
			top += max(a[i]*p.LB[i], a[i]*p.UB[i])
		}
		lo := top + 1e-6*(1+math.Abs(top)) + r.Float64()
		p.M++
		p.A = append(p.A, a...)
		p.LBA = append(p.LBA, lo)
		p.UBA = append(p.UBA, inf)
		// Put the bad row in a random position.
		k := r.IntN(p.M)
		for c := range n {
			p.A[k*n+c], p.A[(p.M-1)*n+c] = p.A[(p.M-1)*n+c], p.A[k*n+c]
		}
		p.LBA[k], p.LBA[p.M-1] = p.LBA[p.M-1], p.LBA[k]
		p.UBA[k], p.UBA[p.M-1] = p.UBA[p.M-1], p.UBA[k]
		s.Reset()
		if st, err := s.Solve(p, x); err != nil || st != Infeasible {
			t.Fatalf("random problem %d (n=%d m=%d): Solve = %v, %v, want Infeasible", it, p.N, p.M, st, err)
		}
	}
}

func TestMalformed(t *testing.T) {
	base := func() *Problem {
		return &Problem{N: 2, M: 1,
			H: []float64{2, 1, 1, 2}, G: []float64{1, -1},
			LB: []float64{-1, -1}, UB: []float64{1, 1},
			A: []float64{1, 1}, LBA: []float64{-1}, UBA: []float64{1}}
	}
	nan := math.NaN()
	tests := []struct {
		name   string
		change func(p *Problem)
		x      int // len(x); 0 means 2
		want   string
	}{
		{"nil", nil, 0, "nil Problem"},
		{"N=0", func(p *Problem) { p.N = 0 }, 0, "N = 0"},
		{"N>max", func(p *Problem) { p.N = 9 }, 0, "N = 9"},
		{"M<0", func(p *Problem) { p.M = -1 }, 0, "M = -1"},
		{"M>max", func(p *Problem) { p.M = 9 }, 0, "M = 9"},
		{"len H", func(p *Problem) { p.H = p.H[:3] }, 0, "len(H)"},
		{"len G", func(p *Problem) { p.G = p.G[:1] }, 0, "len(G)"},
		{"len LB", func(p *Problem) { p.LB = p.LB[:1] }, 0, "len(LB)"},
		{"len UB", func(p *Problem) { p.UB = append(p.UB, 1) }, 0, "len(UB)"},
		{"len A", func(p *Problem) { p.A = p.A[:1] }, 0, "len(A)"},
		{"len LBA", func(p *Problem) { p.LBA = nil; p.LBA = []float64{} }, 0, "len(LBA)"},
		{"len UBA", func(p *Problem) { p.UBA = []float64{1, 2} }, 0, "len(UBA)"},
		{"len x", func(p *Problem) {}, 1, "len(x)"},
		{"NaN H", func(p *Problem) { p.H[1] = nan }, 0, "H[1]"},
		{"Inf H", func(p *Problem) { p.H[3] = inf }, 0, "H[3]"},
		{"NaN G", func(p *Problem) { p.G[1] = nan }, 0, "G[1]"},
		{"Inf G", func(p *Problem) { p.G[0] = -inf }, 0, "G[0]"},
		{"NaN LB", func(p *Problem) { p.LB[1] = nan }, 0, "LB[1] is NaN"},
		{"NaN UB", func(p *Problem) { p.UB[0] = nan }, 0, "UB[0] is NaN"},
		{"NaN A", func(p *Problem) { p.A[1] = nan }, 0, "A[1]"},
		{"Inf A", func(p *Problem) { p.A[0] = inf }, 0, "A[0]"},
		{"NaN LBA", func(p *Problem) { p.LBA[0] = nan }, 0, "LBA[0] is NaN"},
		{"NaN UBA", func(p *Problem) { p.UBA[0] = nan }, 0, "UBA[0] is NaN"},
		{"LB>UB", func(p *Problem) { p.LB[1] = 2 }, 0, "LB[1] = 2 > UB[1] = 1"},
		{"LBA>UBA", func(p *Problem) { p.LBA[0] = 3 }, 0, "LBA[0] = 3 > UBA[0] = 1"},
		{"LB=+Inf", func(p *Problem) { p.LB[0], p.UB[0] = inf, inf }, 0, "LB[0] is +Inf"},
		{"UBA=-Inf", func(p *Problem) { p.LBA[0], p.UBA[0] = -inf, -inf }, 0, "UBA[0] is -Inf"},
		{"H indefinite", func(p *Problem) { p.H = []float64{1, 2, 2, 1} }, 0, "not positive definite"},
		{"H singular", func(p *Problem) { p.H = []float64{1, 1, 1, 1} }, 0, "not positive definite"},
		{"H negative", func(p *Problem) { p.H = []float64{-1, 0, 0, 1} }, 0, "not positive definite"},
		{"H asymmetric", func(p *Problem) { p.H = []float64{2, 1, 1.5, 2} }, 0, "not symmetric"},
	}
	s := NewSolver(2, 1)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var p *Problem
			if tc.change != nil {
				p = base()
				tc.change(p)
			}
			x := make([]float64, orDefault(tc.x, 2))
			st, err := s.Solve(p, x)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Solve = %v, %v; want an error containing %q", st, err, tc.want)
			}
			if st == Optimal {
				t.Errorf("status Optimal with an error")
			}
			// The solver still works, and a malformed H did not stay cached.
			x = make([]float64, 2)
			st, err = s.Solve(base(), x)
			if err != nil || st != Optimal {
				t.Fatalf("valid problem after the error: %v, %v", st, err)
			}
			box, rows := s.Multipliers()
			if w := kktWorst(base(), x, box, rows); w > 1e-12 {
				t.Errorf("valid problem after the error: KKT residual %.3g", w)
			}
		})
	}
}

// orDefault returns a if it is non-zero, else b.
func orDefault(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

func TestStatusString(t *testing.T) {
	for st, want := range map[Status]string{Optimal: "Optimal", Infeasible: "Infeasible", IterLimit: "IterLimit", 7: "Status(7)"} {
		if got := st.String(); got != want {
			t.Errorf("%d.String() = %q, want %q", int(st), got, want)
		}
	}
}

// ---------------------------------------------------------------------------
// Warm start

// solveSeq solves the problems in order with one solver, warm-started or
// (Reset before every solve) cold, and returns the points and the total
// number of iterations.
func solveSeq(t *testing.T, ps []*Problem, warm bool) (xs [][]float64, iters int) {
	t.Helper()
	s := NewSolver(20, 62)
	for i, p := range ps {
		if !warm {
			s.Reset()
		}
		x := make([]float64, p.N)
		st, err := s.Solve(p, x)
		if err != nil || st != Optimal {
			t.Fatalf("problem %d: Solve = %v, %v", i, st, err)
		}
		xs = append(xs, x)
		iters += s.Iterations()
	}
	return xs, iters
}

// perturb returns a copy of p with g moved by relative amounts up to eps
// and the finite sides of inequalities moved outwards by up to eps, so that
// the problem stays feasible; equalities are kept.
func perturb(r *rand.Rand, p *Problem, eps float64) *Problem {
	q := *p
	q.G = slices.Clone(p.G)
	for i := range q.G {
		q.G[i] += eps * (2*r.Float64() - 1) * (1 + math.Abs(q.G[i]))
	}
	widen := func(lo, hi []float64) ([]float64, []float64) {
		if lo == nil || hi == nil {
			return lo, hi // only the all-nil case occurs in randProblem
		}
		lo, hi = slices.Clone(lo), slices.Clone(hi)
		for i := range lo {
			if lo[i] == hi[i] {
				continue
			}
			lo[i] -= eps * r.Float64() * (1 + math.Abs(lo[i]))
			hi[i] += eps * r.Float64() * (1 + math.Abs(hi[i]))
		}
		return lo, hi
	}
	q.LB, q.UB = widen(p.LB, p.UB)
	q.LBA, q.UBA = widen(p.LBA, p.UBA)
	return &q
}

func TestWarmStart(t *testing.T) {
	// Warm start must not change the answer: the warm and cold points agree
	// to 1e-9 of 1 + ‖x‖∞ (both are the unique minimiser up to rounding,
	// which is about 1e-13 here; the paths differ, so the rounding does).
	const same = 1e-9

	t.Run("stable active set", func(t *testing.T) {
		// Problems whose cold solve drops constraints again, perturbed by
		// 1e-6 so that the active set does not change: warm start must
		// take strictly fewer iterations in total.
		r := rand.New(rand.NewPCG(11, 3))
		g := regime{nMin: 8, nMax: 20, cond: 100, box: 0.7, mPerN: 1.5, twoSided: 0.5, inf: 0.2}
		s := NewSolver(20, 62)
		x := make([]float64, 20)
		var totalWarm, totalCold, seqs int
		for seqs < 20 {
			p, _ := randProblem(r, g)
			s.Reset()
			if st, _ := s.Solve(p, x); st != Optimal {
				t.Fatalf("base problem: %v", st)
			}
			box, rows := s.Multipliers()
			active := 0
			for _, v := range append(slices.Clone(box), rows...) {
				if v != 0 {
					active++
				}
			}
			if s.Iterations() == active {
				continue // no drops in the cold solve: nothing for warm start to save
			}
			ps := []*Problem{p}
			for range 30 {
				ps = append(ps, perturb(r, p, 1e-6))
			}
			xw, iw := solveSeq(t, ps, true)
			xc, ic := solveSeq(t, ps, false)
			for i := range ps {
				if d := relDiff(xw[i], xc[i]); d > same {
					t.Errorf("sequence %d problem %d: warm and cold differ by %.3g", seqs, i, d)
				}
			}
			totalWarm += iw
			totalCold += ic
			seqs++
		}
		t.Logf("%d sequences of 31: %d iterations warm, %d cold", seqs, totalWarm, totalCold)
		if totalWarm >= totalCold {
			t.Errorf("warm start took %d iterations, cold %d: want fewer", totalWarm, totalCold)
		}
	})

	t.Run("random sequences", func(t *testing.T) {
		// Larger perturbations (1e-2) change the active set now and then;
		// warm start must still give the same points and, on average, no
		// more iterations.
		var totalWarm, totalCold int
		for ri, g := range regimes {
			r := rand.New(rand.NewPCG(99, uint64(ri)))
			for range 10 {
				p, _ := randProblem(r, g)
				ps := []*Problem{p}
				for range 20 {
					ps = append(ps, perturb(r, ps[len(ps)-1], 1e-2))
				}
				xw, iw := solveSeq(t, ps, true)
				xc, ic := solveSeq(t, ps, false)
				for i := range ps {
					if d := relDiff(xw[i], xc[i]); d > same {
						t.Errorf("%s: problem %d: warm and cold differ by %.3g", g.name, i, d)
					}
				}
				totalWarm += iw
				totalCold += ic
			}
		}
		t.Logf("%d iterations warm, %d cold", totalWarm, totalCold)
		if totalWarm > totalCold {
			t.Errorf("warm start took %d iterations, cold %d: want no more", totalWarm, totalCold)
		}
	})

	t.Run("MPCC stream", func(t *testing.T) {
		for _, P := range []int{3, 5, 10, 20} {
			var ps []*Problem
			for k := range 200 {
				ps = append(ps, mpcc(5000+30*float64(k), mpccB, 1, 1, P))
			}
			xw, iw := solveSeq(t, ps, true)
			xc, ic := solveSeq(t, ps, false)
			for i := range ps {
				if d := relDiff(xw[i], xc[i]); d > same {
					t.Errorf("P=%d problem %d: warm and cold differ by %.3g", P, i, d)
				}
			}
			t.Logf("P=%d: %d iterations warm, %d cold", P, iw, ic)
			if iw > ic {
				t.Errorf("P=%d: warm start took %d iterations, cold %d", P, iw, ic)
			}
		}
	})

	t.Run("dimensions change", func(t *testing.T) {
		// The active set of a problem with other N or M is not used.
		s := NewSolver(20, 20)
		x := make([]float64, 20)
		s.Solve(mpcc(11250, mpccB, 1, 10, 5), x)
		if st, _ := s.Solve(mpcc(11250, mpccB, 1, 10, 3), x); st != Optimal || math.Abs(x[2]+924.48) > 0.01 {
			t.Errorf("after a P=5 solve, P=3 gives %v %v", st, x[:3])
		}
	})
}

// ---------------------------------------------------------------------------
// Allocations and speed

func TestNoAllocs(t *testing.T) {
	s := NewSolver(20, 62)
	r := rand.New(rand.NewPCG(5, 5))
	ps := []*Problem{mpcc(11250, mpccB, 1, 10, 10), mpcc(300, mpccB, 1, 10, 10), mpcc(20000, mpccB, 1, 10, 10)}
	for _, g := range regimes {
		p, _ := randProblem(r, g)
		ps = append(ps, p)
	}
	x := make([]float64, 20)
	i := 0
	allocs := testing.AllocsPerRun(200, func() {
		// Cycling through the problems also exercises the factorisation of
		// a new H, infeasible problems and warm starts.
		s.Solve(ps[i%len(ps)], x)
		s.Multipliers()
		i++
	})
	if allocs != 0 {
		t.Errorf("%v allocations per Solve, want 0", allocs)
	}
}

// BenchmarkMPCC solves a stream of MPCC problems with a warm-started solver:
// B = 1.152, WQ:WR = 1:10, x cycling through 300 values from 0 to 15000
// bytes. Values above (N−1)·PBD + B·Wf = 12330 are infeasible (the first
// row cannot be met even at the smallest window), about 18% of the stream,
// so the stream also times the infeasible case. H does not change, so its
// factorisation is reused (BenchmarkMPCCNewH measures the other case).
// Besides ns/op it reports the median of the solve times, each measured
// with time.Now (whose own cost, some tens of ns, is in both figures).
//
// The thesis reports per-solve times with qpOASES of 255,952 / 343,525 /
// 469,736 / 916,831 ns for P = 3, 5, 10, 20. On a 2-core Xeon with
// Go 1.26 the medians here are about 205 / 365 / 1,170 / 3,900 ns, that is
// 1,250 / 940 / 400 / 235 times less (the thesis' machine, and whether its
// figures include qpOASES' setup, are not known here).
func BenchmarkMPCC(b *testing.B) {
	benchMPCC(b, false)
}

// BenchmarkMPCCNewH is BenchmarkMPCC with B varying by up to ±1% between
// solves, so that H changes and is factorised on every solve.
func BenchmarkMPCCNewH(b *testing.B) {
	benchMPCC(b, true)
}

func benchMPCC(b *testing.B, varyB bool) {
	for _, P := range []int{3, 5, 10, 20} {
		b.Run(fmt.Sprintf("P=%d", P), func(b *testing.B) {
			const k = 300
			ps := make([]*Problem, k)
			for i := range ps {
				bb := mpccB
				if varyB {
					bb *= 1 + 0.01*math.Sin(float64(i))
				}
				ps[i] = mpcc(15000*float64(i)/(k-1), bb, 1, 10, P)
			}
			s := NewSolver(P, P)
			x := make([]float64, P)
			times := make([]time.Duration, b.N)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				t0 := time.Now()
				s.Solve(ps[i%k], x)
				times[i] = time.Since(t0)
			}
			b.StopTimer()
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Nanoseconds()), "median-ns")
		})
	}
}

// ---------------------------------------------------------------------------
// Odds and ends

func TestIterLimit(t *testing.T) {
	// With the limit lowered below what the problem needs, Solve reports
	// IterLimit, and no multipliers; the default limit is enough.
	p := mpcc(11250, mpccB, 1, 10, 5) // 4 additions
	s := NewSolver(5, 5)
	x := make([]float64, 5)
	s.iterCap = 3
	if st, err := s.Solve(p, x); err != nil || st != IterLimit {
		t.Fatalf("Solve with 3 iterations = %v, %v, want IterLimit", st, err)
	}
	if box, rows := s.Multipliers(); box != nil || rows != nil {
		t.Errorf("Multipliers after IterLimit are not nil")
	}
	s.iterCap = 0
	if st, err := s.Solve(p, x); err != nil || st != Optimal || s.Iterations() != 4 {
		t.Fatalf("Solve = %v, %v after %d iterations, want Optimal after 4", st, err, s.Iterations())
	}
	// Also when the limit is hit while adding the warm-start constraints.
	s.iterCap = 2
	if st, err := s.Solve(p, x); err != nil || st != IterLimit {
		t.Fatalf("warm Solve with 2 iterations = %v, %v, want IterLimit", st, err)
	}
}

func TestWarmThenInfeasible(t *testing.T) {
	// A warm start from an Optimal solve that meets an infeasible problem
	// reports it, and keeps the warm-start set of the last Optimal solve.
	s := NewSolver(10, 10)
	x := make([]float64, 10)
	for _, xq := range []float64{11250, 20000, 12330 + 50, 11250} {
		s.Solve(mpcc(xq, mpccB, 1, 10, 10), x)
	}
	if st, _ := s.Solve(mpcc(20000, mpccB, 1, 10, 10), x); st != Infeasible {
		t.Errorf("x=20000: %v, want Infeasible", st)
	}
	if st, _ := s.Solve(mpcc(11250, mpccB, 1, 10, 10), x); st != Optimal || s.Iterations() != countActive(s) || countActive(s) == 0 {
		t.Errorf("x=11250 again: %v after %d iterations, want Optimal without drops", st, s.Iterations())
	}
}

func countActive(s *Solver) int {
	box, rows := s.Multipliers()
	k := 0
	for _, v := range append(slices.Clone(box), rows...) {
		if v != 0 {
			k++
		}
	}
	return k
}

func TestProblemUnchanged(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 1))
	s := NewSolver(20, 62)
	x := make([]float64, 20)
	for _, g := range regimes {
		p, _ := randProblem(r, g)
		q := *p
		for _, v := range []*[]float64{&q.H, &q.G, &q.LB, &q.UB, &q.A, &q.LBA, &q.UBA} {
			*v = slices.Clone(*v)
		}
		s.Solve(p, x)
		for i, pair := range [][2][]float64{{p.H, q.H}, {p.G, q.G}, {p.LB, q.LB}, {p.UB, q.UB}, {p.A, q.A}, {p.LBA, q.LBA}, {p.UBA, q.UBA}} {
			if !slices.Equal(pair[0], pair[1]) {
				t.Errorf("%s: Solve changed slice %d of the problem", g.name, i)
			}
		}
	}
}

func TestOverflowAndNewSolver(t *testing.T) {
	s := NewSolver(2, 1)
	p := &Problem{N: 2, M: 1, H: []float64{1, 0, 0, 1}, G: []float64{0, 0}, A: []float64{1e200, 1e200}, LBA: []float64{0}, UBA: []float64{1}}
	if _, err := s.Solve(p, make([]float64, 2)); err == nil || !strings.Contains(err.Error(), "row 0 of A") {
		t.Errorf("overflowing row: err = %v", err)
	}
	defer func() {
		if recover() == nil {
			t.Errorf("NewSolver(0, 0) did not panic")
		}
	}()
	NewSolver(0, 0)
}
