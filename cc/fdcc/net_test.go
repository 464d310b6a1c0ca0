package fdcc

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// The gradient checks compare every analytic gradient with a central
// difference (f(x+h) − f(x−h)) / 2h, h = 1e-5, of a scalar loss; the
// relative error |a − n| / max(|a|, |n|, 1e-3) must stay under 1e-6
// (absolute below 1e-3, where the difference's own rounding dominates a
// ratio), as in package nn.
const (
	fdStep  = 1e-5
	fdTol   = 1e-6
	fdFloor = 1e-3
)

func checkGrad(t *testing.T, what string, x, analytic []float64, loss func() float64) {
	t.Helper()
	worst := 0.0
	for i := range x {
		old := x[i]
		x[i] = old + fdStep
		lp := loss()
		x[i] = old - fdStep
		lm := loss()
		x[i] = old
		num := (lp - lm) / (2 * fdStep)
		e := math.Abs(analytic[i]-num) / math.Max(math.Max(math.Abs(analytic[i]), math.Abs(num)), fdFloor)
		worst = max(worst, e)
		if e > fdTol {
			t.Errorf("%s[%d]: analytic %.12g, numeric %.12g, relative error %.3g", what, i, analytic[i], num, e)
		}
	}
	t.Logf("%s: %d values, worst relative error %.2g", what, len(x), worst)
}

func randVec(rng *rand.Rand, n int, scale float64) []float64 {
	v := make([]float64, n)
	for i := range v {
		v[i] = (2*rng.Float64() - 1) * scale
	}
	return v
}

// randBatch returns a batch whose histories have the given lengths (the
// next histories one longer, up to Hist); rows past a length hold large
// garbage, which must never be read.
func randBatch(rng *rand.Rand, a Arch, lens []int) *Batch {
	N := len(lens)
	b := &Batch{
		N:    N,
		Hist: randVec(rng, N*a.Hist*a.Obs, 1), Obs: randVec(rng, N*a.Obs, 1),
		HistLen: append([]int(nil), lens...), Act: randVec(rng, N, a.ActLimit),
		Ret: randVec(rng, N, 1), Disc: make([]float64, N),
		NextHist: randVec(rng, N*a.Hist*a.Obs, 1), NextObs: randVec(rng, N*a.Obs, 1),
		NextHistLen: make([]int, N),
	}
	for i, L := range lens {
		b.NextHistLen[i] = min(L+1, a.Hist)
		b.Disc[i] = 0.99
		for k := (i*a.Hist + L) * a.Obs; k < (i+1)*a.Hist*a.Obs; k++ {
			b.Hist[k] = 1e3
		}
		for k := (i*a.Hist + b.NextHistLen[i]) * a.Obs; k < (i+1)*a.Hist*a.Obs; k++ {
			b.NextHist[k] = 1e3
		}
	}
	return b
}

func TestNetGradient(t *testing.T) {
	for _, tc := range []struct {
		name   string
		arch   Arch
		lens   []int
		critic bool
	}{
		{"actor", Arch{Obs: 3, Hist: 4, Hidden: 5, ActLimit: 2}, []int{4, 2, 0, 1, 3}, false},
		{"critic", Arch{Obs: 3, Hist: 4, Hidden: 5, ActLimit: 2}, []int{4, 2, 0, 1, 3}, true},
		{"actor_hist1", Arch{Obs: 2, Hist: 1, Hidden: 3, ActLimit: 1}, []int{1, 0}, false},
		{"critic_hist8", Arch{Obs: 2, Hist: 8, Hidden: 4, ActLimit: 0.5}, []int{8, 5, 0}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(11, uint64(len(tc.name))))
			a := tc.arch
			n := newNet(a, tc.critic, "net", rng)
			b := randBatch(rng, a, tc.lens)
			N := b.N
			w := randVec(rng, N, 1)
			var wk work
			loss := func() float64 {
				y := n.forward(&wk, b.Hist, b.HistLen, b.Obs, b.Act, N)
				s := 0.0
				for i := range y {
					s += w[i] * y[i]
				}
				return s
			}
			loss()
			n.params.ZeroGrad()
			n.backward(&wk, w, N, true)
			dhist := append([]float64(nil), wk.dhist...)
			dobs := append([]float64(nil), wk.dobs...)
			dact := append([]float64(nil), wk.dact...)
			checkGrad(t, "hist", b.Hist, dhist, loss)
			checkGrad(t, "obs", b.Obs, dobs, loss)
			if tc.critic {
				checkGrad(t, "act", b.Act, dact, loss)
				// actionGrad gives the same action gradient alone.
				loss()
				grads := append([]float64(nil), n.params[0].Grad...)
				n.actionGrad(&wk, w, N)
				for i := range dact {
					if wk.dact[i] != dact[i] {
						t.Errorf("actionGrad[%d] = %v, backward %v", i, wk.dact[i], dact[i])
					}
				}
				for i, g := range n.params[0].Grad {
					if g != grads[i] {
						t.Fatal("actionGrad changed a parameter gradient")
					}
				}
			}
			for _, p := range n.params {
				checkGrad(t, p.Name, p.Value, p.Grad, loss)
			}
		})
	}
}

// TestTD3Gradients checks the learner's two losses: the critics' gradient
// of mean((Q1 − y)²) + mean((Q2 − y)²) for a fixed target y, and the
// actor's gradient of −mean Q1(h, o, π(h, o)) through the critic.
func TestTD3Gradients(t *testing.T) {
	for _, penalty := range []float64{0, 0.3} {
		t.Run(fmt.Sprint("preact=", penalty), func(t *testing.T) { testTD3Gradients(t, penalty) })
	}
}

func testTD3Gradients(t *testing.T, penalty float64) {
	a := Arch{Obs: 3, Hist: 3, Hidden: 4, ActLimit: 1.5}
	cfg := DefaultTD3Config()
	cfg.PreActPenalty = penalty
	td, err := NewTD3(a, cfg, 5)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(5, 5))
	b := randBatch(rng, a, []int{3, 0, 1, 2, 3, 1})
	td.targets(b)
	td.criticGrads(b)
	var w1, w2 work
	criticLoss := func() float64 {
		q1 := td.q1.forward(&w1, b.Hist, b.HistLen, b.Obs, b.Act, b.N)
		q2 := td.q2.forward(&w2, b.Hist, b.HistLen, b.Obs, b.Act, b.N)
		l := 0.0
		for i := range b.N {
			l += (q1[i]-td.y[i])*(q1[i]-td.y[i]) + (q2[i]-td.y[i])*(q2[i]-td.y[i])
		}
		return l / float64(b.N)
	}
	for _, p := range td.qParams {
		checkGrad(t, p.Name, p.Value, append([]float64(nil), p.Grad...), criticLoss)
	}
	td.actorGrads(b)
	var wa, wq work
	actorLoss := func() float64 {
		pi := append([]float64(nil), td.actor.forward(&wa, b.Hist, b.HistLen, b.Obs, nil, b.N)...)
		q := td.q1.forward(&wq, b.Hist, b.HistLen, b.Obs, pi, b.N)
		l := 0.0
		for i, v := range q {
			l -= v
			l += penalty * wa.out[i] * wa.out[i]
		}
		return l / float64(b.N)
	}
	for _, p := range td.actor.params {
		checkGrad(t, p.Name, p.Value, append([]float64(nil), p.Grad...), actorLoss)
	}
}

func newPolicy(t testing.TB, a Arch, seed uint64) *Policy {
	td, err := NewTD3(a, DefaultTD3Config(), seed)
	if err != nil {
		t.Fatal(err)
	}
	return td.Policy()
}

// TestActMatchesBatch: Act gives bit for bit the batched forward's output,
// with only the valid history rows passed.
func TestActMatchesBatch(t *testing.T) {
	a := Arch{Obs: 8, Hist: 8, Hidden: 16, ActLimit: 2}
	p := newPolicy(t, a, 3)
	rng := rand.New(rand.NewPCG(3, 3))
	lens := []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 8, 3}
	b := randBatch(rng, a, lens)
	var w work
	want := p.actor.forward(&w, b.Hist, b.HistLen, b.Obs, nil, b.N)
	s := p.NewScratch()
	for i, L := range lens {
		hist := b.Hist[i*a.Hist*a.Obs : (i*a.Hist+L)*a.Obs]
		got := p.Act(s, hist, L, b.Obs[i*a.Obs:(i+1)*a.Obs])
		if math.Float64bits(got) != math.Float64bits(want[i]) {
			t.Errorf("sample %d (history %d): Act %v, batch %v", i, L, got, want[i])
		}
		if math.Abs(got) > a.ActLimit {
			t.Errorf("sample %d: %v outside ±%v", i, got, a.ActLimit)
		}
	}
}

// TestEmptyHistory: a history of length 0 reads as one zero observation,
// as the reference's clamped gather on a zero-padded history does.
func TestEmptyHistory(t *testing.T) {
	a := Arch{Obs: 4, Hist: 3, Hidden: 8, ActLimit: 1}
	p := newPolicy(t, a, 9)
	s := p.NewScratch()
	obs := []float64{0.3, -0.2, 0.9, 0.1}
	empty := p.Act(s, nil, 0, obs)
	zero := p.Act(s, make([]float64, 4), 1, obs)
	if empty != zero {
		t.Fatalf("length 0: %v; one zero row: %v", empty, zero)
	}
	if other := p.Act(s, []float64{1, 1, 1, 1}, 1, obs); other == empty {
		t.Fatal("the history changes nothing")
	}
}

func TestActAllocs(t *testing.T) {
	for _, H := range []int{8, 64} {
		a := Arch{Obs: 8, Hist: 8, Hidden: H, ActLimit: 2}
		p := newPolicy(t, a, 1)
		rng := rand.New(rand.NewPCG(1, 1))
		hist, obs := randVec(rng, a.Hist*a.Obs, 1), randVec(rng, a.Obs, 1)
		s := p.NewScratch()
		for _, L := range []int{0, 5, 8} {
			if n := testing.AllocsPerRun(50, func() { p.Act(s, hist, L, obs) }); n != 0 {
				t.Fatalf("hidden %d, history %d: Act made %v allocations, want 0", H, L, n)
			}
		}
	}
}

// TestActConcurrent: one Policy serves many goroutines (run with -race).
func TestActConcurrent(t *testing.T) {
	a := Arch{Obs: 8, Hist: 8, Hidden: 8, ActLimit: 2}
	p := newPolicy(t, a, 1)
	rng := rand.New(rand.NewPCG(1, 2))
	hist, obs := randVec(rng, a.Hist*a.Obs, 1), randVec(rng, a.Obs, 1)
	want := p.Act(p.NewScratch(), hist, 8, obs)
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			s := p.NewScratch()
			for range 50 {
				if got := p.Act(s, hist, 8, obs); got != want {
					errs <- fmt.Errorf("got %v, want %v", got, want)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

func TestActPanicsOnBadInput(t *testing.T) {
	a := Arch{Obs: 2, Hist: 2, Hidden: 4, ActLimit: 1}
	p := newPolicy(t, a, 1)
	s := p.NewScratch()
	for _, tc := range []struct {
		name    string
		hist    []float64
		histLen int
		obs     []float64
	}{
		{"short obs", nil, 0, []float64{1}},
		{"history too long", make([]float64, 6), 3, []float64{1, 2}},
		{"negative length", nil, -1, []float64{1, 2}},
		{"history short of its length", make([]float64, 3), 2, []float64{1, 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			p.Act(s, tc.hist, tc.histLen, tc.obs)
		})
	}
}

func BenchmarkAct(b *testing.B) {
	for _, H := range []int{8, 16, 32, 64} {
		b.Run(fmt.Sprintf("hidden%d", H), func(b *testing.B) {
			a := Arch{Obs: 8, Hist: 8, Hidden: H, ActLimit: 2}
			p := newPolicy(b, a, 1)
			rng := rand.New(rand.NewPCG(1, 1))
			hist, obs := randVec(rng, a.Hist*a.Obs, 1), randVec(rng, a.Obs, 1)
			s := p.NewScratch()
			b.ReportAllocs()
			for b.Loop() {
				p.Act(s, hist, 8, obs)
			}
		})
	}
}

// TestAddActorGrad checks the actor-only path a caller-given action
// gradient takes: two AddActorGrad calls on two parts of a batch add up to
// the gradient of the whole loss L = Σ c_i·y_i + ½ Σ y_i², which depends
// on the outputs, as ADPG's smoothing term does.
func TestAddActorGrad(t *testing.T) {
	a := Arch{Obs: 2, Hist: 1, Hidden: 5, ActLimit: 1.5}
	td := mustTD3(t, a, DefaultTD3Config(), 9)
	rng := rand.New(rand.NewPCG(9, 9))
	b := randBatch(rng, a, []int{1, 0, 1, 1, 0})
	c := randVec(rng, b.N, 1)
	part := func(lo, hi int) (hist []float64, lens []int, obs []float64) {
		h, o := a.Hist*a.Obs, a.Obs
		return b.Hist[lo*h : hi*h], b.HistLen[lo:hi], b.Obs[lo*o : hi*o]
	}
	lossOn := func(lo int) func(y, dy []float64) float64 {
		return func(y, dy []float64) float64 {
			l := 0.0
			for i, v := range y {
				l += c[lo+i]*v + 0.5*v*v
				dy[i] = c[lo+i] + v
			}
			return l
		}
	}
	td.ZeroActorGrad()
	h, l, o := part(0, 2)
	got := td.AddActorGrad(h, l, o, lossOn(0))
	h, l, o = part(2, b.N)
	got += td.AddActorGrad(h, l, o, lossOn(2))
	var w work
	loss := func() float64 {
		y := td.actor.forward(&w, b.Hist, b.HistLen, b.Obs, nil, b.N)
		s := 0.0
		for i, v := range y {
			s += c[i]*v + 0.5*v*v
		}
		return s
	}
	if want := loss(); math.Abs(got-want) > 1e-12 {
		t.Fatalf("AddActorGrad's losses sum to %v, the whole batch's is %v", got, want)
	}
	for _, p := range td.actor.params {
		checkGrad(t, p.Name, p.Value, append([]float64(nil), p.Grad...), loss)
	}
	for _, p := range td.qParams {
		for _, g := range p.Grad {
			if g != 0 {
				t.Fatalf("AddActorGrad touched critic gradient %s", p.Name)
			}
		}
	}
}
