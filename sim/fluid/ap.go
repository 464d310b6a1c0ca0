package fluid

// The Averaging Principle sandbox of seed 003 (§1 and §3.1 of the paper;
// the extract shared/spec/seeds/003-qcn.md §3 and §5 item 5): a generic
// sampled control loop around a continuous LTI plant, driven by the
// standard integral controller (1), the AP controller, the PD controller
// (25)–(26) and the PD controller with the dither (27)–(28) (Controller 2
// of Theorem 4).

import (
	"fmt"
	"math"
	"sort"
)

// Controller names accepted by the sandbox.
const (
	APStandard = "standard"  // (1): u((n+1)T) = u(nT) + K e(nT)
	APAveraged = "ap"        // feedback change I_T ← I_C, I_C ← I_C + K e(nT); averaging I_C ← (1−α) I_C + α I_T
	APPD       = "pd"        // (25)–(26): u_m ← u_m + K w(nT), w = e/2 + (e − e_prev)/4
	APPDDither = "pd-dither" // (25)–(28): u_m plus the dither ±K e(nT)/4 on the two halves of the interval
)

// Placement of the loop delay and timing of the control update; the paper
// is silent on both (Fig. 1 is not in the text).
const (
	APDelayOutput    = "output"    // e(nT) = r − y(nT − τ): the delay sits on the measured output (default)
	APDelayInput     = "input"     // e(nT) = r − y(nT), the plant sees u(t − τ)
	APUpdateNow      = "immediate" // the update computed from e(nT) drives the plant from nT on (default)
	APUpdateNextStep = "next"      // eq. (1) literally: it drives the plant from (n+1)T on
)

// APConfig is the sandbox's loop. The zero value is not usable: start from
// DefaultAPConfig (a JSON body decoded over it keeps the defaults of the
// fields it leaves out). Empty DelayAt and Update mean their defaults; an
// empty AvgAt with Averagings 0 means one averaging at the midpoint.
//
// Defaults and readings where the paper is silent:
//   - DelayAt "output": e(nT) = r − y(nT − τ), the delay on the measured
//     output. The input placement gives the same closed loop shifted in
//     time (the delay commutes with the LTI plant: u(t) is identical and
//     y_input(t) = y_output(t − τ)), so its stability is the same.
//   - Update "immediate": the change computed from e(nT) is applied at nT
//     (the extract's own check). "next" applies it at (n+1)T as eq. (1)
//     reads literally; that is the immediate loop with τ + T.
//
// With both defaults the standard controller is stable up to 6.16 s and
// the AP controller up to 14.77 s of delay (APMargins; at 15 s the AP loop
// grows by 0.07% a period, marginal to the eye): the paper's "AP remains
// stable for delays up to τ = 15 s" and Fig. 3b's "standard unstable at
// 8 s". With "next" every margin is 1 s (one T) shorter.
type APConfig struct {
	K   float64   `json:"k"`   // controller gain K (paper: 1/8)
	T   float64   `json:"t"`   // sampling period T, s (paper: 1)
	Num []float64 `json:"num"` // plant numerator, descending powers of s (paper: s + 1)
	Den []float64 `json:"den"` // plant denominator, descending powers of s (paper: s³ + 1.6s² + 0.8s + 0.6)
	Ref float64   `json:"ref"` // step reference r (paper: 1)

	DelayAt string `json:"delayAt,omitempty"` // "output" (default) or "input"
	Update  string `json:"update,omitempty"`  // "immediate" (default) or "next"

	// Remark 4's extensions of the AP controller.
	Alpha      float64   `json:"alpha"`                // averaging weight α: I_C ← (1−α) I_C + α I_T (paper: 1/2)
	AvgAt      []float64 `json:"avgAt,omitempty"`      // averaging instants as fractions of T after nT, increasing in (0, 1) (paper: [0.5])
	Averagings int       `json:"averagings,omitempty"` // with AvgAt empty: this many averagings evenly spaced at j/(n+1) T

	MaxDelayS float64 `json:"maxDelayS"` // the margin search's upper limit, s (default 30; at most 100 T)
}

// DefaultAPConfig is the paper's example (§1, Figs. 3 and 11): P(s) =
// (s+1)/(s³+1.6s²+0.8s+0.6), K = 1/8, T = 1 s, a unit step, midpoint
// averaging by 1/2.
func DefaultAPConfig() APConfig {
	return APConfig{
		K: 1.0 / 8, T: 1, Num: []float64{1, 1}, Den: []float64{1, 1.6, 0.8, 0.6}, Ref: 1,
		DelayAt: APDelayOutput, Update: APUpdateNow, Alpha: 0.5, MaxDelayS: 30,
	}
}

// APResult is one controller's delay margin.
type APResult struct {
	Name            string  `json:"name"`
	MaxStableDelayS float64 `json:"maxStableDelayS"`
}

// StepTrace is a step response sampled every `every` seconds: time (s),
// plant output y and plant input u (the input the plant sees, after any
// input delay).
type StepTrace struct {
	T []float64 `json:"t"`
	Y []float64 `json:"y"`
	U []float64 `json:"u"`
}

// apMaxOrder bounds the plant's order and apMaxLag the delay in periods
// (the search's matrices grow with both).
const (
	apMaxOrder = 12
	apMaxLag   = 100
)

func apFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// Validate reports the first field outside the sandbox's domain as a
// *ParamError named by its JSON key.
func (cfg APConfig) Validate() error {
	bad := func(name, format string, args ...any) error {
		return &ParamError{name, fmt.Sprintf(format, args...)}
	}
	switch {
	case !(cfg.K > 0) || !apFinite(cfg.K):
		return bad("k", "the gain must be positive and finite, got %g", cfg.K)
	case !(cfg.T > 0) || !apFinite(cfg.T):
		return bad("t", "the sampling period must be positive and finite (s), got %g", cfg.T)
	case !apFinite(cfg.Ref):
		return bad("ref", "the reference must be finite, got %g", cfg.Ref)
	case cfg.DelayAt != "" && cfg.DelayAt != APDelayOutput && cfg.DelayAt != APDelayInput:
		return bad("delayAt", "no placement %q; placements: output, input", cfg.DelayAt)
	case cfg.Update != "" && cfg.Update != APUpdateNow && cfg.Update != APUpdateNextStep:
		return bad("update", "no update timing %q; timings: immediate, next", cfg.Update)
	case !(cfg.Alpha > 0 && cfg.Alpha <= 1):
		return bad("alpha", "the averaging weight must lie in (0, 1], got %g", cfg.Alpha)
	case cfg.Averagings < 0 || cfg.Averagings > 64:
		return bad("averagings", "the number of averagings must lie in [0, 64], got %d", cfg.Averagings)
	case len(cfg.AvgAt) > 0 && cfg.Averagings != 0 && cfg.Averagings != len(cfg.AvgAt):
		return bad("averagings", "%d averagings but %d instants in avgAt", cfg.Averagings, len(cfg.AvgAt))
	case !(cfg.MaxDelayS > 0) || !apFinite(cfg.MaxDelayS):
		return bad("maxDelayS", "the search limit must be positive (s), got %g", cfg.MaxDelayS)
	case cfg.MaxDelayS/cfg.T > apMaxLag:
		return bad("maxDelayS", "the search limit is at most %d sampling periods, got %g s with T = %g s", apMaxLag, cfg.MaxDelayS, cfg.T)
	}
	for i, f := range cfg.AvgAt {
		if !(f > 0 && f < 1) || i > 0 && !(f > cfg.AvgAt[i-1]) {
			return bad("avgAt", "the averaging instants must increase strictly within (0, 1), got %v", cfg.AvgAt)
		}
	}
	_, err := newAPPlant(cfg.Num, cfg.Den)
	return err
}

// avgFractions is the averaging instants as fractions of T.
func (cfg APConfig) avgFractions() []float64 {
	if len(cfg.AvgAt) > 0 {
		return cfg.AvgAt
	}
	n := max(cfg.Averagings, 1)
	f := make([]float64, n)
	for j := range f {
		f[j] = float64(j+1) / float64(n+1)
	}
	return f
}

// ---- the plant: controllable canonical form, exact zero-order hold ----

type apPlant struct {
	n int
	a [][]float64 // n×n
	b []float64   // n
	c []float64   // n
}

// trimLead drops leading zero coefficients.
func trimLead(p []float64) []float64 {
	for len(p) > 0 && p[0] == 0 {
		p = p[1:]
	}
	return p
}

// newAPPlant builds the controllable canonical realisation of num/den
// (descending powers): x' = A x + B u, y = C x.
func newAPPlant(num, den []float64) (*apPlant, error) {
	for _, v := range num {
		if !apFinite(v) {
			return nil, &ParamError{"num", fmt.Sprintf("coefficients must be finite, got %v", num)}
		}
	}
	for _, v := range den {
		if !apFinite(v) {
			return nil, &ParamError{"den", fmt.Sprintf("coefficients must be finite, got %v", den)}
		}
	}
	d, m := trimLead(den), trimLead(num)
	n := len(d) - 1
	switch {
	case n < 1:
		return nil, &ParamError{"den", fmt.Sprintf("the denominator must have degree at least 1, got %v", den)}
	case n > apMaxOrder:
		return nil, &ParamError{"den", fmt.Sprintf("the plant's order is at most %d, got %d", apMaxOrder, n)}
	case len(m) == 0:
		return nil, &ParamError{"num", "the numerator is zero"}
	case len(m)-1 >= n:
		return nil, &ParamError{"num", fmt.Sprintf("the plant must be strictly proper: numerator degree %d, denominator degree %d", len(m)-1, n)}
	}
	p := &apPlant{n: n, a: make([][]float64, n), b: make([]float64, n), c: make([]float64, n)}
	for i := range p.a {
		p.a[i] = make([]float64, n)
		if i+1 < n {
			p.a[i][i+1] = 1
		}
	}
	for j := 0; j < n; j++ { // last row: −a_n … −a_1 over the monic denominator
		p.a[n-1][j] = -d[n-j] / d[0]
	}
	p.b[n-1] = 1
	for k := 0; k < len(m); k++ { // c_k multiplies s^k
		p.c[k] = m[len(m)-1-k] / d[0]
	}
	return p, nil
}

func (p *apPlant) output(x []float64) float64 {
	y := 0.0
	for i, v := range x {
		y += p.c[i] * v
	}
	return y
}

// apZOH is the exact discretisation over one hold of length h: x(t+h) =
// Phi x(t) + Gam u with u constant.
type apZOH struct {
	phi [][]float64
	gam []float64
}

// zoh computes Phi = e^{Ah} and Gam = ∫₀ʰ e^{As} ds B as blocks of the
// exponential of the augmented matrix [[A, B], [0, 0]] h.
func (p *apPlant) zoh(h float64) apZOH {
	n := p.n
	m := apNewMat(n + 1)
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			m[i][j] = p.a[i][j] * h
		}
		m[i][n] = p.b[i] * h
	}
	e := apExpm(m)
	z := apZOH{phi: apNewMat(n), gam: make([]float64, n)}
	for i := 0; i < n; i++ {
		copy(z.phi[i], e[i][:n])
		z.gam[i] = e[i][n]
	}
	return z
}

func (z apZOH) step(x, tmp []float64, u float64) {
	for i := range tmp {
		s := z.gam[i] * u
		for j, v := range x {
			s += z.phi[i][j] * v
		}
		tmp[i] = s
	}
	copy(x, tmp)
}

func apNewMat(n int) [][]float64 {
	m := make([][]float64, n)
	for i := range m {
		m[i] = make([]float64, n)
	}
	return m
}

func apMatMul(a, b [][]float64) [][]float64 {
	n := len(a)
	c := apNewMat(n)
	for i := 0; i < n; i++ {
		for k := 0; k < n; k++ {
			if a[i][k] == 0 {
				continue
			}
			aik, bk, ci := a[i][k], b[k], c[i]
			for j := 0; j < n; j++ {
				ci[j] += aik * bk[j]
			}
		}
	}
	return c
}

func apNorm1(a [][]float64) float64 {
	best := 0.0
	for j := range a {
		s := 0.0
		for i := range a {
			s += math.Abs(a[i][j])
		}
		best = math.Max(best, s)
	}
	return best
}

// apExpm is e^M by scaling and squaring: M/2^s has 1-norm at most 1/2,
// its Taylor series is summed until a term no longer changes the sum in
// double precision (at most 30 terms), then squared s times.
func apExpm(m [][]float64) [][]float64 {
	n := len(m)
	s := 0
	if nrm := apNorm1(m); nrm > 0.5 {
		s = int(math.Ceil(math.Log2(nrm / 0.5)))
	}
	scale := math.Ldexp(1, -s)
	a := apNewMat(n)
	for i := range m {
		for j := range m[i] {
			a[i][j] = m[i][j] * scale
		}
	}
	sum, term := apNewMat(n), apNewMat(n)
	for i := 0; i < n; i++ {
		sum[i][i], term[i][i] = 1, 1
	}
	for k := 1; k <= 30; k++ {
		term = apMatMul(term, a)
		small := true
		for i := range term {
			for j := range term[i] {
				term[i][j] /= float64(k)
				if math.Abs(term[i][j]) > 1e-17*math.Abs(sum[i][j]) && term[i][j] != 0 {
					small = false
				}
				sum[i][j] += term[i][j]
			}
		}
		if small {
			break
		}
	}
	for ; s > 0; s-- {
		sum = apMatMul(sum, sum)
	}
	return sum
}

// ---- the controllers ----

// apCtrl is a controller's state, linear in the error samples:
//
//	standard:  s[0] = u
//	ap:        s[0] = I_C, s[1] = I_T
//	pd:        s[0] = u_m, s[1] = e((n−1)T)
//	pd-dither: s[0] = u_m, s[1] = e((n−1)T), s[2] = ũ_d, the dither now
type apCtrl struct {
	kind     string
	k, alpha float64
	mids     []float64 // in-interval events, fractions of T
	s        [3]float64
}

func newAPCtrl(cfg APConfig, kind string) (*apCtrl, error) {
	c := &apCtrl{kind: kind, k: cfg.K, alpha: cfg.Alpha}
	switch kind {
	case APStandard, APPD:
	case APAveraged:
		c.mids = cfg.avgFractions()
	case APPDDither:
		c.mids = []float64{0.5} // (27): the dither changes sign at nT + T/2
	default:
		return nil, &ParamError{"controller", fmt.Sprintf("no controller %q; controllers: standard, ap, pd, pd-dither", kind)}
	}
	return c, nil
}

func (c *apCtrl) dim() int {
	switch c.kind {
	case APStandard:
		return 1
	case APPDDither:
		return 3
	}
	return 2
}

// output is the controller's output u(t).
func (c *apCtrl) output() float64 {
	if c.kind == APPDDither {
		return c.s[0] + c.s[2]
	}
	return c.s[0]
}

// feedback is the change at nT driven by e(nT).
func (c *apCtrl) feedback(e float64) {
	switch c.kind {
	case APStandard: // (1)
		c.s[0] += c.k * e
	case APAveraged: // I_T ← I_C, I_C ← I_C + K e(nT)
		c.s[1] = c.s[0]
		c.s[0] += c.k * e
	case APPD, APPDDither: // (25)–(26)
		w := e/2 + (e-c.s[1])/4
		c.s[0] += c.k * w
		c.s[1] = e
		c.s[2] = c.k / 4 * e // (27), first half
	}
}

// mid is the in-interval change number j.
func (c *apCtrl) mid(j int) {
	switch c.kind {
	case APAveraged: // I_C ← (1−α) I_C + α I_T (α = 1/2: the midpoint average)
		c.s[0] = (1-c.alpha)*c.s[0] + c.alpha*c.s[1]
	case APPDDither: // (27), second half
		c.s[2] = -c.s[2]
	}
}

// ---- stability: the one-period map of the sampled loop ----

// apLoop is the sampled closed loop with the delay on the measured output
// and immediate updates; tau is the effective delay (τ, plus T for the
// "next" timing). Its state at nT⁻ (before anything happens at nT) is
// z = [x; controller state; the L = ⌈τ/T⌉ measured outputs y(mT − τ),
// m = n … n+L−1, taken but not yet used]. Within a period the events are:
// the measurement y((n+L)T − τ) at offset φ = LT − τ, the feedback change
// at 0 (it uses y(nT − τ)), the in-interval changes at their fractions of
// T; between events the plant input is constant and the plant moves by
// its exact zero-order hold. (A measurement and a change at the same
// instant commute: the plant is strictly proper, so y is continuous.)
type apLoop struct {
	plant *apPlant
	ctrl  *apCtrl
	t     float64
	lag   int
	ev    []apEvent // sorted by offset
	holds []apZOH   // holds[i] runs from ev[i] to ev[i+1] (the last to T)
}

type apEvent struct {
	at   float64 // offset within the period, s
	kind int     // 0 measure, 1 feedback, 2 in-interval change
	j    int
}

func newAPLoop(cfg APConfig, p *apPlant, kind string, tau float64) (*apLoop, error) {
	c, err := newAPCtrl(cfg, kind)
	if err != nil {
		return nil, err
	}
	lag := int(math.Ceil(tau/cfg.T - 1e-9))
	phi := float64(lag)*cfg.T - tau
	if phi < 1e-9*cfg.T {
		phi = 0
	}
	l := &apLoop{plant: p, ctrl: c, t: cfg.T, lag: lag}
	l.ev = append(l.ev, apEvent{at: phi, kind: 0}, apEvent{at: 0, kind: 1})
	for j, f := range c.mids {
		l.ev = append(l.ev, apEvent{at: f * cfg.T, kind: 2, j: j})
	}
	sort.SliceStable(l.ev, func(a, b int) bool {
		if l.ev[a].at != l.ev[b].at {
			return l.ev[a].at < l.ev[b].at
		}
		return l.ev[a].kind < l.ev[b].kind
	})
	cache := map[float64]apZOH{}
	for i := range l.ev {
		end := cfg.T
		if i+1 < len(l.ev) {
			end = l.ev[i+1].at
		}
		h := end - l.ev[i].at
		z, ok := cache[h]
		if !ok {
			z = p.zoh(h)
			cache[h] = z
		}
		l.holds = append(l.holds, z)
	}
	return l, nil
}

func (l *apLoop) dim() int { return l.plant.n + l.ctrl.dim() + l.lag }

// period advances z by one period with reference r.
func (l *apLoop) period(z []float64, r float64) {
	n, nc := l.plant.n, l.ctrl.dim()
	x := z[:n]
	copy(l.ctrl.s[:nc], z[n:n+nc])
	fifo := make([]float64, 0, l.lag+1)
	fifo = append(fifo, z[n+nc:]...)
	tmp := make([]float64, n)
	// the first event is at offset 0 (the feedback change, or a
	// measurement when φ = 0), so the period is covered by the holds
	for i, e := range l.ev {
		switch e.kind {
		case 0:
			fifo = append(fifo, l.plant.output(x))
		case 1:
			l.ctrl.feedback(r - fifo[0])
			fifo = fifo[1:]
		case 2:
			l.ctrl.mid(e.j)
		}
		l.holds[i].step(x, tmp, l.ctrl.output())
	}
	copy(z[n:n+nc], l.ctrl.s[:nc])
	copy(z[n+nc:], fifo)
}

// monodromy is the matrix of the homogeneous one-period map (r = 0).
func (l *apLoop) monodromy() [][]float64 {
	d := l.dim()
	m := apNewMat(d)
	z := make([]float64, d)
	for j := 0; j < d; j++ {
		clear(z)
		z[j] = 1
		l.period(z, 0)
		for i := 0; i < d; i++ {
			m[i][j] = z[i]
		}
	}
	return m
}

// apSpectralRadius is ρ(M) = lim ‖M^k‖^{1/k} (Gelfand), evaluated at
// k = 2^48 by repeated squaring with the norm factored out at each step.
// The estimate's error in log ρ is (log c + p log k)/k from the transient
// constant c and a Jordan block of size p+1, below 1e-12 here, plus
// rounding of the order of the eigenvalue's condition number times 1e-16.
// The power iteration's alternative fails to converge on the complex
// dominant pairs an oscillating loop has; the norm of the power does not.
func apSpectralRadius(m [][]float64) float64 {
	a := apNewMat(len(m))
	for i := range m {
		copy(a[i], m[i])
	}
	logScale := 0.0 // log of the factor taken out of M^(2^j)
	normalise := func() bool {
		nrm := apNorm1(a)
		if nrm == 0 || !apFinite(nrm) {
			return false
		}
		for i := range a {
			for j := range a[i] {
				a[i][j] /= nrm
			}
		}
		logScale += math.Log(nrm)
		return true
	}
	if !normalise() {
		return 0
	}
	const squarings = 48
	for j := 0; j < squarings; j++ {
		a = apMatMul(a, a)
		logScale *= 2
		if !normalise() {
			return 0 // nilpotent: every eigenvalue is 0
		}
	}
	return math.Exp(math.Ldexp(logScale, -squarings))
}

// stableAt reports whether the loop with controller kind is asymptotically
// stable at delay tau: the sampled loop is a linear T-periodic system, and
// it is stable exactly when its monodromy matrix has spectral radius < 1.
func (cfg APConfig) stableAt(p *apPlant, kind string, tau float64) (bool, float64, error) {
	l, err := newAPLoop(cfg, p, kind, cfg.effectiveDelay(tau))
	if err != nil {
		return false, 0, err
	}
	rho := apSpectralRadius(l.monodromy())
	return rho < 1, rho, nil
}

func (cfg APConfig) effectiveDelay(tau float64) float64 {
	if cfg.Update == APUpdateNextStep {
		return tau + cfg.T
	}
	return tau
}

// The margin search: τ on a grid of apScanStep, then bisection of the
// first unstable step to apResolution.
const (
	apScanStep   = 0.1
	apResolution = 0.01
)

// MaxStableDelay is controller kind's delay margin: the largest τ (to
// 0.01 s, rounded down) such that the loop is stable at every delay of the
// 0.1 s grid from 0 to τ, the last step refined by bisection. It is 0 when
// the loop is unstable without delay and MaxDelayS when no instability
// shows up to the limit. (Delay systems can regain stability at larger
// delays; the first loss is the margin.)
func (cfg APConfig) MaxStableDelay(kind string) (float64, error) {
	if err := cfg.Validate(); err != nil {
		return 0, err
	}
	p, _ := newAPPlant(cfg.Num, cfg.Den)
	if _, err := newAPCtrl(cfg, kind); err != nil {
		return 0, err
	}
	stable := func(tau float64) bool {
		ok, _, _ := cfg.stableAt(p, kind, tau)
		return ok
	}
	if !stable(0) {
		return 0, nil
	}
	lo := 0.0
	steps := int(math.Floor(cfg.MaxDelayS/apScanStep + 1e-9))
	for i := 1; i <= steps; i++ {
		hi := float64(i) * apScanStep
		if stable(hi) {
			lo = hi
			continue
		}
		for hi-lo > apResolution*(1+1e-9) {
			mid := (lo + hi) / 2
			if stable(mid) {
				lo = mid
			} else {
				hi = mid
			}
		}
		return math.Floor(lo/apResolution+1e-9) / math.Round(1/apResolution), nil // whole hundredths
	}
	return cfg.MaxDelayS, nil
}

// APMargins is the delay margin of each controller: standard, ap, pd and
// pd-dither, in that order (pd-dither equals ap when α = 1/2 and the one
// averaging is at the midpoint: Theorem 4).
func APMargins(cfg APConfig) ([]APResult, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	var out []APResult
	for _, k := range []string{APStandard, APAveraged, APPD, APPDDither} {
		m, err := cfg.MaxStableDelay(k)
		if err != nil {
			return nil, err
		}
		out = append(out, APResult{Name: k, MaxStableDelayS: m})
	}
	return out, nil
}

// ---- the step response: an event-driven run in continuous time ----

// apMaxPoints bounds a trace's samples and periods.
const apMaxPoints = 1_000_000

// StepResponse runs the loop with controller ctrl and delay tau (s) from
// rest (x = 0, u = 0, y(t) = 0 for t < 0) for duration seconds and samples
// it every `every` seconds. The plant moves by its exact zero-order hold
// between events (measurements, control changes, the delayed input's
// changes, samples), so the trace has no integration error. A response
// that overflows is an error.
func (cfg APConfig) StepResponse(ctrl string, tau, duration, every float64) (*StepTrace, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	switch {
	case !(tau >= 0) || !apFinite(tau) || tau/cfg.T > apMaxPoints:
		return nil, &ParamError{"tau", fmt.Sprintf("the delay must be zero or positive and at most %d sampling periods (s), got %g", apMaxPoints, tau)}
	case !(duration > 0) || !apFinite(duration):
		return nil, &ParamError{"duration", fmt.Sprintf("must be positive (s), got %g", duration)}
	case duration/cfg.T > apMaxPoints:
		return nil, &ParamError{"duration", fmt.Sprintf("at most %d sampling periods, got %g s", apMaxPoints, duration)}
	case !(every > 0) || !apFinite(every) || duration/every > apMaxPoints:
		return nil, &ParamError{"every", fmt.Sprintf("the sampling interval must be positive with at most %d samples, got %g s", apMaxPoints, every)}
	}
	p, _ := newAPPlant(cfg.Num, cfg.Den)
	c, err := newAPCtrl(cfg, ctrl)
	if err != nil {
		return nil, err
	}
	T := cfg.T
	tauOut, tauIn := tau, 0.0
	if cfg.DelayAt == APDelayInput {
		tauOut, tauIn = 0, tau
	}
	if cfg.Update == APUpdateNextStep {
		tauIn += T
	}
	type change struct{ at, u float64 }
	var (
		x       = make([]float64, p.n)
		tmp     = make([]float64, p.n)
		uPlant  = 0.0
		pending []change  // the controller's changes on their way to the plant
		meas    []float64 // y(mT − τ_out) taken, not yet used
		mNext   = 0       // the next measurement is y(mNext T − τ_out)
		nPeriod = 0       // the next feedback change is at nPeriod T
		jMid    = 0       // the next in-interval change of period nPeriod−1
		kSample = 0
		now     = 0.0
		cache   = map[float64]apZOH{}
		tr      = &StepTrace{}
	)
	nSamples := int(math.Floor(duration/every + 1e-9))
	measAt := func() float64 { return float64(mNext)*T - tauOut }
	ctrlAt := func() float64 {
		if nPeriod > 0 && jMid < len(c.mids) {
			return (float64(nPeriod-1) + c.mids[jMid]) * T
		}
		return float64(nPeriod) * T
	}
	emit := func(at float64) { pending = append(pending, change{at + tauIn, c.output()}) }
	// measurements before t = 0 see the plant at rest
	for measAt() < 0 {
		meas = append(meas, 0)
		mNext++
	}
	for kSample <= nSamples {
		sampleAt := float64(kSample) * every
		next := math.Min(math.Min(measAt(), ctrlAt()), sampleAt)
		if len(pending) > 0 {
			next = math.Min(next, pending[0].at)
		}
		if h := next - now; h > 0 {
			z, ok := cache[h]
			if !ok {
				z = p.zoh(h)
				if len(cache) < 64 {
					cache[h] = z
				}
			}
			z.step(x, tmp, uPlant)
			now = next
			if y := p.output(x); !apFinite(y) {
				return tr, fmt.Errorf("fluid: the %s loop's response overflowed at t = %.6g s", ctrl, now)
			}
		}
		switch {
		case measAt() <= now:
			meas = append(meas, p.output(x))
			mNext++
		case ctrlAt() <= now:
			if nPeriod > 0 && jMid < len(c.mids) {
				c.mid(jMid)
				jMid++
			} else {
				c.feedback(cfg.Ref - meas[0])
				meas = meas[1:]
				nPeriod++
				jMid = 0
			}
			emit(now)
		case len(pending) > 0 && pending[0].at <= now:
			uPlant = pending[0].u
			pending = pending[1:]
		default:
			tr.T = append(tr.T, now)
			tr.Y = append(tr.Y, p.output(x))
			tr.U = append(tr.U, uPlant)
			kSample++
		}
	}
	return tr, nil
}
