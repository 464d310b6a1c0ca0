// Package qp solves small dense strictly convex quadratic programs
//
//	minimise   ½ xᵀHx + gᵀx
//	subject to lb  ≤ x  ≤ ub     (box)
//	           lbA ≤ Ax ≤ ubA    (general rows)
//
// with H symmetric positive definite. It is written for the hot path of MPCC,
// which solves one such problem (n ≈ 10) per received ACK, so a Solve
// allocates nothing and reuses the factorisation of H when H has not changed.
//
// # Method
//
// The solver is the dual active-set method of D. Goldfarb and A. Idnani, "A
// numerically stable dual method for solving strictly convex quadratic
// programs", Mathematical Programming 27 (1983) 1–33. Every box bound and
// every side of a general row is a one-sided constraint nᵀx ≥ b (an upper
// side aᵀx ≤ ub is −aᵀx ≥ −ub); a row or bound with equal sides is a single
// equality constraint whose multiplier is free in sign and which is never
// dropped. The method starts from the unconstrained minimum x = −H⁻¹g, which is
// optimal for the dual problem with no constraint active, and keeps dual
// feasibility while it repeatedly takes the most violated constraint p
// (violation measured as a distance, (b − nᵀx)/‖n‖₂) and moves along the
// primal direction z = J₂J₂ᵀn_p and the dual direction r = R⁻¹J₁ᵀn_p: either
// a full step that makes p active, or a partial step after which an active
// constraint whose multiplier reached zero is dropped. If p is linearly
// dependent on the active constraints (z = 0) and no active constraint can be
// dropped, the problem is infeasible. When no constraint is violated the
// iterate is the minimiser.
//
// With H = LLᵀ (Cholesky) and the QR factorisation L⁻¹N = Q[R; 0] of the
// active normals N, the method keeps J = L⁻ᵀQ = [J₁ J₂] and the upper
// triangular R. Adding or dropping a constraint updates J and R with Givens
// rotations; nothing is refactorised during a solve.
//
// # Tolerances
//
// A one-sided constraint nᵀx ≥ b counts as violated when
//
//	b − nᵀx > 1e-10 · (‖n‖₂·X + |b|),
//
// where X is the largest ‖x‖∞ of the iterates of the current solve (starting
// with the unconstrained minimum). The right-hand side bounds the rounding
// error of nᵀx − b, which grows with the largest iterate because x is
// updated in place, with a wide margin (the tests still pass with 1e-15 in
// place of 1e-10, and fail with 0), so a constraint that is satisfied in
// exact arithmetic, for instance a duplicate of an active row, is never taken
// as violated. The minimiser therefore satisfies every constraint to within
// that tolerance, and the active ones to rounding. A constraint is linearly
// dependent on the active set when ‖J₂ᵀn‖ ≤ 1e-10·‖Jᵀn‖, that is when the part
// of n outside the span of the active normals is below 1e-10 of n, both
// measured in the H⁻¹ norm. H is rejected as not positive definite when a
// Cholesky pivot falls below 1e-14 of its diagonal entry, that is roughly when
// its condition number exceeds 1e14, and as not symmetric when
// |Hᵢⱼ − Hⱼᵢ| > 1e-12·(|Hᵢⱼ| + |Hⱼᵢ|).
//
// # Warm start
//
// A Solver remembers the active set of its last Optimal solve. When the next
// problem has the same N and M it first adds those constraints, in the order
// in which they were active, each one only if it is violated at that moment,
// with the ordinary steps of the method, and then continues with the usual
// most-violated rule. Every step is a step of the method, so warm start does
// not change the minimiser, only the number of iterations; when successive
// problems have the same active set, as in MPCC, no constraint is added and
// dropped again. Reset forgets the active set.
//
// # Cost
//
// Factorising H costs O(n³) and is skipped when H equals that of the
// previous solve; the unconstrained minimum costs O(n²). Each iteration
// (one constraint added or dropped) costs O(n² + nm): O(nm) to find the most
// violated constraint, O(n²) to form Jᵀn (O(n) for a box bound), z and r
// and to apply the Givens rotations. The number of iterations is the number
// of active constraints at the solution plus twice the number of constraints
// that were added and dropped again; a warm start with the right active set
// needs no drops.
package qp

import (
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Status is the outcome of a solve.
type Status int

const (
	Optimal    Status = iota // x is the minimiser
	Infeasible               // the constraints admit no point
	IterLimit                // gave up after the iteration limit (report, never silently return garbage)
)

// String returns the name of the status.
func (s Status) String() string {
	switch s {
	case Optimal:
		return "Optimal"
	case Infeasible:
		return "Infeasible"
	case IterLimit:
		return "IterLimit"
	}
	return "Status(" + strconv.Itoa(int(s)) + ")"
}

// Problem is a QP in dense row-major form. Slices are read, never kept or changed.
type Problem struct {
	N, M     int
	H        []float64 // N×N, symmetric positive definite
	G        []float64 // N
	LB, UB   []float64 // N; ±Inf allowed; nil means unbounded
	A        []float64 // M×N
	LBA, UBA []float64 // M; ±Inf allowed; nil means unbounded
}

// Tolerances; the package comment explains them.
const (
	feasTol = 1e-10 // relative violation that counts as violated
	depTol  = 1e-10 // relative size of J₂ᵀn below which n is dependent
	pdTol   = 1e-14 // relative Cholesky pivot below which H is not positive definite
	symTol  = 1e-12 // relative asymmetry of H that is rejected
)

// Solver holds the workspace for problems up to maxN variables and maxM rows.
// It is not safe for concurrent use; use one Solver per goroutine.
//
// Constraints are numbered 0..N-1 for the box bounds of x[0..N-1] and
// N..N+M-1 for the general rows. Matrices of the current problem are stored
// with stride N, so they occupy the first N·N entries of their buffers.
type Solver struct {
	maxN, maxM int
	n          int // N of the current problem

	// Cache of the last factorised H.
	hN int       // order of the cached factor; 0 if there is none
	hc []float64 // that H, row-major
	j0 []float64 // L⁻ᵀ for that H, column-major (column c is j0[c*N:][:N])

	jm   []float64 // J, column-major
	rm   []float64 // R, column-major: R[i][c] = rm[c*N+i], upper triangular
	x    []float64 // iterate
	d    []float64 // Jᵀn_p
	z    []float64 // primal step direction
	r    []float64 // dual step direction
	nrm  []float64 // ‖a_k‖₂ of the general rows
	side []int8    // per constraint: 0 inactive, +1 lower side active, -1 upper side active
	xmax float64   // X: largest ‖x‖∞ of the iterates of this solve

	// Active set, in order of addition.
	q   int
	act []int     // constraint numbers
	sgn []float64 // +1 for the lower side (n = a), -1 for the upper side (n = -a)
	eq  []bool    // equality constraint: never dropped, multiplier free in sign
	u   []float64 // multipliers, Hx + g = Σ u_j n_j

	// Warm-start active set of the last Optimal solve.
	warmN, warmM int // its dimensions; warmN == 0 if there is none
	warmQ        int
	warm         []int
	warmS        []float64

	box, rows []float64 // multipliers of the last Optimal solve
	optimal   bool
	iters     int
	maxIter   int // iteration limit of the current solve
	iterCap   int // if > 0, the iteration limit instead of the default (for tests)
}

// NewSolver returns a solver for problems with at most maxN variables and
// maxM general rows. It panics if maxN < 1 or maxM < 0.
func NewSolver(maxN, maxM int) *Solver {
	if maxN < 1 || maxM < 0 {
		panic("qp: NewSolver needs maxN ≥ 1 and maxM ≥ 0")
	}
	nn := maxN * maxN
	return &Solver{
		maxN:  maxN,
		maxM:  maxM,
		hc:    make([]float64, nn),
		j0:    make([]float64, nn),
		jm:    make([]float64, nn),
		rm:    make([]float64, nn),
		x:     make([]float64, maxN),
		d:     make([]float64, maxN),
		z:     make([]float64, maxN),
		r:     make([]float64, maxN),
		nrm:   make([]float64, maxM),
		side:  make([]int8, maxN+maxM),
		act:   make([]int, maxN),
		sgn:   make([]float64, maxN),
		eq:    make([]bool, maxN),
		u:     make([]float64, maxN),
		warm:  make([]int, maxN),
		warmS: make([]float64, maxN),
		box:   make([]float64, maxN),
		rows:  make([]float64, maxM),
	}
}

// Reset forgets the warm-start active set.
func (s *Solver) Reset() { s.warmN, s.warmM, s.warmQ = 0, 0, 0 }

// Iterations is the number of constraint additions and drops of the last solve.
func (s *Solver) Iterations() int { return s.iters }

// Multipliers returns views (valid until the next Solve) of the Lagrange
// multipliers of the last Optimal solve, one per box bound and one per
// general row, signed so that positive means the upper side is active and
// negative the lower side, zero inactive. With them the KKT conditions read
// Hx + g + box + Aᵀ·rows = 0. After a solve that was not Optimal both are nil.
func (s *Solver) Multipliers() (box, rows []float64) {
	if !s.optimal {
		return nil, nil
	}
	return s.box, s.rows
}

// Solve writes the minimiser into x (len ≥ p.N). It allocates nothing.
// err is non-nil only for a malformed problem (dimensions larger than the
// workspace or inconsistent with the slices, NaN, lb > ub, H not positive
// definite), and names what is wrong; then Status is meaningless (it is
// Infeasible). When the status is Infeasible or IterLimit, x holds the last
// iterate, which satisfies the constraints that were active but not all.
func (s *Solver) Solve(p *Problem, x []float64) (Status, error) {
	s.optimal = false
	s.iters = 0
	if err := s.check(p, x); err != nil {
		return Infeasible, err
	}
	n, m := p.N, p.M
	s.n = n
	s.maxIter = 100 + 10*(n+m) // generous: random problems need less than 2(n+m)
	if s.iterCap > 0 {
		s.maxIter = s.iterCap
	}

	// Unconstrained minimum x = −J₀J₀ᵀg, J = J₀, no constraint active.
	copy(s.jm[:n*n], s.j0[:n*n])
	xs, d := s.x[:n], s.d[:n]
	for c := range n {
		d[c] = dot(s.j0[c*n:c*n+n], p.G)
	}
	clear(xs)
	for c := range n {
		axpy(xs, -d[c], s.j0[c*n:c*n+n])
	}
	s.xmax = normInf(xs)
	s.q = 0
	clear(s.side[:n+m])

	st := s.run(p)
	copy(x[:n], xs)
	if st != Optimal {
		return st, nil
	}

	// Multipliers in the caller's sign convention, and the warm-start set.
	box, rows := s.box[:n], s.rows[:m]
	clear(box)
	clear(rows)
	for j := range s.q {
		k, v := s.act[j], -s.sgn[j]*s.u[j]
		if k < n {
			box[k] = v
		} else {
			rows[k-n] = v
		}
	}
	s.box, s.rows = box, rows
	copy(s.warm, s.act[:s.q])
	copy(s.warmS, s.sgn[:s.q])
	s.warmN, s.warmM, s.warmQ = n, m, s.q
	s.optimal = true
	return Optimal, nil
}

// run is the main loop: warm-start additions, then most-violated additions
// until no constraint is violated.
func (s *Solver) run(p *Problem) Status {
	n, m := p.N, p.M
	if s.warmN == n && s.warmM == m {
		// The warm-start constraints are distinct, so none is active yet
		// when its turn comes.
		for i := range s.warmQ {
			k, sg := s.warm[i], s.warmS[i]
			b, nk, ok := s.bound(p, k, sg)
			if !ok {
				continue // that side is now infinite
			}
			viol := b - sg*s.value(p, k)
			if viol < 0 && isEq(p, k) { // an equality violated on the other side
				sg, b, viol = -sg, -b, -viol
			}
			if viol > feasTol*(nk*s.xmax+math.Abs(b)) {
				if st := s.add(p, k, sg, viol); st != Optimal {
					return st
				}
			}
		}
	}
	for {
		k, sg, viol := s.mostViolated(p)
		if k < 0 {
			return Optimal
		}
		if st := s.add(p, k, sg, viol); st != Optimal {
			return st
		}
	}
}

// bound returns the right-hand side b of the one-sided constraint sg·aₖᵀx ≥ b
// (b = lb for sg = +1, −ub for sg = −1) and ‖aₖ‖₂; ok is false if that side
// is infinite.
func (s *Solver) bound(p *Problem, k int, sg float64) (b, nk float64, ok bool) {
	n := p.N
	var lo, hi []float64
	i := k
	nk = 1
	if k < n {
		lo, hi = p.LB, p.UB
	} else {
		i = k - n
		lo, hi = p.LBA, p.UBA
		nk = s.nrm[i]
	}
	if sg > 0 {
		if lo == nil || math.IsInf(lo[i], -1) {
			return 0, nk, false
		}
		return lo[i], nk, true
	}
	if hi == nil || math.IsInf(hi[i], 1) {
		return 0, nk, false
	}
	return -hi[i], nk, true
}

// isEq reports whether constraint k has equal lower and upper sides.
func isEq(p *Problem, k int) bool {
	if k < p.N {
		return p.LB != nil && p.UB != nil && p.LB[k] == p.UB[k]
	}
	k -= p.N
	return p.LBA != nil && p.UBA != nil && p.LBA[k] == p.UBA[k]
}

// value returns aₖᵀx for the current iterate.
func (s *Solver) value(p *Problem, k int) float64 {
	n := p.N
	if k < n {
		return s.x[k]
	}
	k -= n
	return dot(p.A[k*n:k*n+n], s.x[:n])
}

// mostViolated returns the inactive constraint with the largest violation
// (b − nᵀx)/‖n‖₂ beyond the tolerance, its side and its violation b − nᵀx;
// k < 0 if there is none.
func (s *Solver) mostViolated(p *Problem) (k int, sg, viol float64) {
	n, m := p.N, p.M
	x := s.x[:n]
	side := s.side[:n+m]
	tol := feasTol * s.xmax
	k = -1
	best := 0.0
	if p.LB != nil || p.UB != nil {
		lb, ub := p.LB, p.UB
		for i, v := range x {
			if side[i] != 0 {
				continue
			}
			if lb != nil && lb[i] > v {
				if e := lb[i] - v; e > tol+feasTol*math.Abs(lb[i]) && e > best {
					k, sg, viol, best = i, 1, e, e
				}
			} else if ub != nil && v > ub[i] {
				if e := v - ub[i]; e > tol+feasTol*math.Abs(ub[i]) && e > best {
					k, sg, viol, best = i, -1, e, e
				}
			}
		}
	}
	if m == 0 {
		return k, sg, viol
	}
	lb, ub := p.LBA, p.UBA
	for i := range m {
		if side[n+i] != 0 {
			continue
		}
		v := dot(p.A[i*n:i*n+n], x)
		nk := s.nrm[i]
		if lb != nil && lb[i] > v {
			if e := lb[i] - v; e > tol*nk+feasTol*math.Abs(lb[i]) && e > best*nk {
				k, sg, viol, best = n+i, 1, e, e/nk
			}
		} else if ub != nil && v > ub[i] {
			if e := v - ub[i]; e > tol*nk+feasTol*math.Abs(ub[i]) && e > best*nk {
				k, sg, viol, best = n+i, -1, e, e/nk
			}
		}
	}
	return k, sg, viol
}

// add makes the violated constraint k (side sg, violation viol = b − nᵀx > 0)
// active: step 2 of Goldfarb and Idnani, repeated after every partial step
// until the full step is taken. It returns Optimal when k has been added.
func (s *Solver) add(p *Problem, k int, sg, viol float64) Status {
	n := p.N
	d, z, r := s.d[:n], s.z[:n], s.r[:n]
	eqk := isEq(p, k)
	up := 0.0 // multiplier of k so far
	for {
		if s.iters >= s.maxIter {
			return IterLimit
		}
		q := s.q
		s.jtn(p, k, sg)

		// ‖J₂ᵀn‖² and ‖Jᵀn‖²; n is dependent on the active normals if the
		// first is negligible.
		var d1, d2 float64
		for _, v := range d[:q] {
			d1 += v * v
		}
		for _, v := range d[q:] {
			d2 += v * v
		}
		dependent := d2 <= depTol*depTol*(d1+d2)

		// Dual direction r = R⁻¹d₁ by back substitution, column by column.
		rq := r[:q]
		copy(rq, d[:q])
		for c := q - 1; c >= 0; c-- {
			col := s.rm[c*n : c*n+c+1]
			rq[c] /= col[c]
			axpy(rq[:c], -rq[c], col[:c])
		}

		// Partial step t1: the largest dual step keeping the multipliers of
		// the active inequalities non-negative; l is the one that blocks it.
		t1, l := math.Inf(1), -1
		for j, rj := range rq {
			if rj > 0 && !s.eq[j] {
				if t := s.u[j] / rj; t < t1 {
					t1, l = t, j
				}
			}
		}

		// Full step t2 = −s_p/(zᵀn) with zᵀn = ‖J₂ᵀn‖².
		t2 := math.Inf(1)
		if !dependent {
			t2 = max(viol, 0) / d2
			clear(z)
			for c := q; c < n; c++ {
				axpy(z, d[c], s.jm[c*n:c*n+n])
			}
		}
		if l < 0 && dependent {
			return Infeasible
		}

		t := min(t1, t2)
		if !dependent {
			s.step(t, z)
		}
		for j, rj := range rq {
			s.u[j] -= t * rj
		}
		up += t
		s.iters++
		if t2 <= t1 {
			s.push(k, sg, eqk, up)
			return Optimal
		}
		s.u[l] = 0
		s.drop(l)
		b, _, _ := s.bound(p, k, sg)
		viol = b - sg*s.value(p, k)
	}
}

// jtn sets d = Jᵀn for the normal n = sg·aₖ.
func (s *Solver) jtn(p *Problem, k int, sg float64) {
	n := p.N
	d := s.d[:n]
	if k < n {
		for c := range d {
			d[c] = sg * s.jm[c*n+k]
		}
		return
	}
	a := p.A[(k-n)*n : (k-n)*n+n]
	for c := range d {
		d[c] = sg * dot(s.jm[c*n:c*n+n], a)
	}
}

// step moves x by t·z and updates X.
func (s *Solver) step(t float64, z []float64) {
	x := s.x[:len(z)]
	xm := s.xmax
	for i, v := range z {
		x[i] += t * v
		xm = max(xm, math.Abs(x[i]))
	}
	s.xmax = xm
}

// push appends constraint k with multiplier u to the active set. d holds
// Jᵀn; Givens rotations of the columns q..n-1 of J reduce d[q+1:] to zero,
// and d[:q+1] becomes the new column of R.
func (s *Solver) push(k int, sg float64, eq bool, u float64) {
	n, q := s.n, s.q
	d := s.d[:n]
	for c := n - 1; c > q; c-- {
		b := d[c]
		if b == 0 {
			continue
		}
		a := d[c-1]
		h := math.Sqrt(a*a + b*b)
		cs, sn := a/h, b/h
		d[c-1], d[c] = h, 0
		rot(s.jm[(c-1)*n:c*n], s.jm[c*n:c*n+n], cs, sn)
	}
	copy(s.rm[q*n:q*n+q+1], d[:q+1])
	s.act[q], s.sgn[q], s.eq[q], s.u[q] = k, sg, eq, u
	s.side[k] = int8(sg)
	s.q = q + 1
}

// drop removes the active constraint at position l: its column of R is
// deleted and the Hessenberg part that remains is made triangular again with
// Givens rotations of rows of R and columns of J.
func (s *Solver) drop(l int) {
	n, q := s.n, s.q
	s.side[s.act[l]] = 0
	for c := l; c < q-1; c++ {
		copy(s.rm[c*n:c*n+c+2], s.rm[(c+1)*n:(c+1)*n+c+2])
		s.act[c], s.sgn[c], s.eq[c], s.u[c] = s.act[c+1], s.sgn[c+1], s.eq[c+1], s.u[c+1]
	}
	q--
	s.q = q
	for c := l; c < q; c++ {
		a, b := s.rm[c*n+c], s.rm[c*n+c+1]
		if b == 0 {
			continue
		}
		h := math.Sqrt(a*a + b*b)
		cs, sn := a/h, b/h
		s.rm[c*n+c], s.rm[c*n+c+1] = h, 0
		for cc := c + 1; cc < q; cc++ {
			va, vb := s.rm[cc*n+c], s.rm[cc*n+c+1]
			s.rm[cc*n+c], s.rm[cc*n+c+1] = cs*va+sn*vb, cs*vb-sn*va
		}
		rot(s.jm[c*n:c*n+n], s.jm[(c+1)*n:(c+1)*n+n], cs, sn)
	}
}

// rot applies the plane rotation (a, b) ← (c·a + s·b, c·b − s·a).
func rot(a, b []float64, c, s float64) {
	b = b[:len(a)]
	for i, va := range a {
		vb := b[i]
		a[i] = c*va + s*vb
		b[i] = c*vb - s*va
	}
}

func dot(a, b []float64) float64 {
	b = b[:len(a)]
	var t float64
	for i, v := range a {
		t += v * b[i]
	}
	return t
}

// axpy sets y += a·x.
func axpy(y []float64, a float64, x []float64) {
	x = x[:len(y)]
	for i := range y {
		y[i] += a * x[i]
	}
}

func normInf(x []float64) float64 {
	var m float64
	for _, v := range x {
		m = max(m, math.Abs(v))
	}
	return m
}

// check validates p and x, computes the row norms and, unless H equals the
// cached one, factorises H.
func (s *Solver) check(p *Problem, x []float64) error {
	if p == nil {
		return errors.New("qp: nil Problem")
	}
	n, m := p.N, p.M
	switch {
	case n < 1 || n > s.maxN:
		return fmt.Errorf("qp: N = %d outside [1, %d]", n, s.maxN)
	case m < 0 || m > s.maxM:
		return fmt.Errorf("qp: M = %d outside [0, %d]", m, s.maxM)
	case len(p.H) != n*n:
		return fmt.Errorf("qp: len(H) = %d, want N·N = %d", len(p.H), n*n)
	case len(p.G) != n:
		return fmt.Errorf("qp: len(G) = %d, want N = %d", len(p.G), n)
	case p.LB != nil && len(p.LB) != n:
		return fmt.Errorf("qp: len(LB) = %d, want N = %d", len(p.LB), n)
	case p.UB != nil && len(p.UB) != n:
		return fmt.Errorf("qp: len(UB) = %d, want N = %d", len(p.UB), n)
	case len(p.A) != m*n:
		return fmt.Errorf("qp: len(A) = %d, want M·N = %d", len(p.A), m*n)
	case p.LBA != nil && len(p.LBA) != m:
		return fmt.Errorf("qp: len(LBA) = %d, want M = %d", len(p.LBA), m)
	case p.UBA != nil && len(p.UBA) != m:
		return fmt.Errorf("qp: len(UBA) = %d, want M = %d", len(p.UBA), m)
	case len(x) < n:
		return fmt.Errorf("qp: len(x) = %d, want ≥ N = %d", len(x), n)
	}
	for i, v := range p.G {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("qp: G[%d] = %v is not finite", i, v)
		}
	}
	if err := checkBounds("LB", "UB", p.LB, p.UB, n); err != nil {
		return err
	}
	if err := checkBounds("LBA", "UBA", p.LBA, p.UBA, m); err != nil {
		return err
	}
	for i := range m {
		row := p.A[i*n : i*n+n]
		nk := math.Sqrt(dot(row, row))
		if math.IsNaN(nk) || math.IsInf(nk, 0) {
			for j, v := range row {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					return fmt.Errorf("qp: A[%d] (row %d, column %d) = %v is not finite", i*n+j, i, j, v)
				}
			}
			return fmt.Errorf("qp: row %d of A is too large (its norm overflows)", i)
		}
		s.nrm[i] = nk
	}
	if s.hN == n && equal(s.hc[:n*n], p.H) {
		return nil
	}
	s.hN = 0
	return s.factor(p.H, n)
}

// checkBounds checks a pair of bound vectors of length k (nil: unbounded).
func checkBounds(lo, hi string, l, u []float64, k int) error {
	for i := range k {
		a, b := math.Inf(-1), math.Inf(1)
		if l != nil {
			a = l[i]
		}
		if u != nil {
			b = u[i]
		}
		switch {
		case math.IsNaN(a):
			return fmt.Errorf("qp: %s[%d] is NaN", lo, i)
		case math.IsNaN(b):
			return fmt.Errorf("qp: %s[%d] is NaN", hi, i)
		case math.IsInf(a, 1):
			return fmt.Errorf("qp: %s[%d] is +Inf", lo, i)
		case math.IsInf(b, -1):
			return fmt.Errorf("qp: %s[%d] is -Inf", hi, i)
		case a > b:
			return fmt.Errorf("qp: %s[%d] = %v > %s[%d] = %v", lo, i, a, hi, i, b)
		}
	}
	return nil
}

func equal(a, b []float64) bool {
	b = b[:len(a)]
	for i, v := range a {
		if v != b[i] {
			return false
		}
	}
	return true
}

// factor checks H, computes its Cholesky factor L (in jm as scratch) and
// stores J₀ = L⁻ᵀ in j0 and H in hc.
func (s *Solver) factor(h []float64, n int) error {
	for i := range n {
		for j := 0; j <= i; j++ {
			a, b := h[i*n+j], h[j*n+i]
			if math.IsNaN(a) || math.IsInf(a, 0) {
				return fmt.Errorf("qp: H[%d] (row %d, column %d) = %v is not finite", i*n+j, i, j, a)
			}
			if math.IsNaN(b) || math.IsInf(b, 0) {
				return fmt.Errorf("qp: H[%d] (row %d, column %d) = %v is not finite", j*n+i, j, i, b)
			}
			if math.Abs(a-b) > symTol*(math.Abs(a)+math.Abs(b)) {
				return fmt.Errorf("qp: H is not symmetric: H[%d][%d] = %v, H[%d][%d] = %v", i, j, a, j, i, b)
			}
		}
	}

	// Cholesky H = LLᵀ from the lower triangle; L is row-major in jm.
	l := s.jm[:n*n]
	for j := range n {
		lj := l[j*n : j*n+j]
		piv := h[j*n+j] - dot(lj, lj)
		if !(piv > pdTol*h[j*n+j]) || !(h[j*n+j] > 0) {
			return fmt.Errorf("qp: H is not positive definite (Cholesky pivot %d is %.3g)", j, piv)
		}
		ljj := math.Sqrt(piv)
		l[j*n+j] = ljj
		for i := j + 1; i < n; i++ {
			l[i*n+j] = (h[i*n+j] - dot(l[i*n:i*n+j], lj)) / ljj
		}
	}

	// Y = L⁻¹ (lower triangular) by forward substitution, row by row; row c
	// of Y is column c of J₀ = L⁻ᵀ, stored at j0[c*n:].
	y := s.j0[:n*n]
	clear(y)
	for i := range n {
		yi := y[i*n : i*n+n]
		li := l[i*n : i*n+i]
		for k, v := range li {
			axpy(yi[:k+1], -v, y[k*n:k*n+k+1])
		}
		inv := 1 / l[i*n+i]
		for c := range yi[:i] {
			yi[c] *= inv
		}
		yi[i] = inv
	}
	copy(s.hc[:n*n], h)
	s.hN = n
	return nil
}
