package cc

import (
	"math"
	"math/rand/v2"
	"testing"
)

// ⌊K/ε⌋, the forced-exploration period (Algorithm 1, line 3).
func TestDRUCBPeriod(t *testing.T) {
	cases := []struct {
		k    int
		eps  float64
		want int64
	}{
		{4, 0.015, 266}, // the paper's constants: arms 0..3 forced at t mod 266 < 4
		{4, 0.01, 400},
		{4, 0.4, 10},
		{3, 0.5, 6},
		{4, 1, 4},             // every iteration forced: pure round robin
		{4, 0, math.MaxInt64}, // no forced block after the first K
		{1, 0.015, 66},        // one arm
		{20, 0.015, 533},      // K is capped at maxBanditArms = 8: ⌊8/0.015⌋
	}
	for _, c := range cases {
		var b DRUCB
		b.Init(c.k, 0.9998, c.eps, 0.5001)
		if got := b.Period(); got != c.want {
			t.Errorf("K=%d ε=%g: period %d, want %d", c.k, c.eps, got, c.want)
		}
	}
}

// A scripted run with deterministic rewards per arm {0.2, 0.9, 0.5, 0.1},
// γ = 0.9, ε = 0.4 (period 10), ξ = 0.5001. The expected choices were
// computed by hand from Algorithm 1 (an independent float64 rendering): the
// forced blocks at t = 0..3 and 10..13, UCB elsewhere (the closest UCB
// decision, at t = 16, wins by 0.013).
func TestDRUCBScripted(t *testing.T) {
	var b DRUCB
	b.Init(4, 0.9, 0.4, 0.5001)
	rew := []float64{0.2, 0.9, 0.5, 0.1}
	want := []int{0, 1, 2, 3, 1, 1, 2, 1, 0, 1, 0, 1, 2, 3, 1, 1, 1, 2, 1, 1}
	for step, w := range want {
		a := b.Select()
		if a != w {
			t.Fatalf("t=%d: arm %d, want %d", step, a, w)
		}
		b.Update(a, rew[a])
	}
	wantS := []float64{0.1672632513714599, 4.969726990670034, 0.854627649914783, 0.07167430188851844}
	wantN := []float64{0.8363162568572994, 5.521918878522259, 1.709255299829566, 0.7167430188851842}
	for i := range wantS {
		if !near(b.S[i], wantS[i], 1e-12) || !near(b.N[i], wantN[i], 1e-12) {
			t.Errorf("arm %d: S %v N %v, want %v %v", i, b.S[i], b.N[i], wantS[i], wantN[i])
		}
	}
	if b.T != 20 {
		t.Errorf("T = %d, want 20", b.T)
	}
}

// The discounted sums (Algorithm 1, line 10) and the UCB index, literally.
func TestDRUCBUpdateAndIndex(t *testing.T) {
	var b DRUCB
	b.Init(2, 0.5, 1, 0.5)
	b.Update(0, 1)   // S = [1, 0], N = [1, 0]
	b.Update(1, 0.5) // S = [0.5, 0.5], N = [0.5, 1]
	cases := []struct {
		name      string
		got, want float64
	}{
		{"S0", b.S[0], 0.5}, {"S1", b.S[1], 0.5},
		{"N0", b.N[0], 0.5}, {"N1", b.N[1], 1},
		{"mean0", b.Mean(0), 1}, {"mean1", b.Mean(1), 0.5},
		// ln(1.5) = 0.4054651; arm 0: 1 + √(0.5·0.4054651/0.5) = 1.6367614
		{"index0", b.Index(0, math.Log(1.5)), 1.6367614217},
		// arm 1: 0.5 + √(0.5·0.4054651/1) = 0.9502583
		{"index1", b.Index(1, math.Log(1.5)), 0.9502583193},
	}
	for _, c := range cases {
		if !near(c.got, c.want, 1e-9) {
			t.Errorf("%s = %.10f, want %.10f", c.name, c.got, c.want)
		}
	}
	var fresh DRUCB
	fresh.Init(3, 0.9, 0.01, 0.5)
	if !math.IsInf(fresh.Index(2, 1), 1) || fresh.Mean(2) != 0 {
		t.Error("an arm never pulled must have an infinite index and mean 0")
	}
}

// Ties go to the lowest arm: equal rewards keep choosing arm 0 after the
// forced block.
func TestDRUCBTieBreak(t *testing.T) {
	var b DRUCB
	b.Init(4, 1, 0.01, 0.5001)
	var got []int
	for i := 0; i < 8; i++ {
		a := b.Select()
		got = append(got, a)
		b.Update(a, 0.5)
	}
	// after the forced 0..3 every arm has the same mean; the pulled arm's
	// bonus shrinks, so the choice cycles through the arms in index order
	want := []int{0, 1, 2, 3, 0, 1, 2, 3}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("choices %v, want %v", got, want)
		}
	}
}

// banditRegret runs DR-UCB with the paper's constants on Bernoulli arms whose
// means at step t are mean(t), and returns the expected (pseudo-)regret
// against the best arm of each step: Σ_t max_i μ_i(t) − μ_{I_t}(t).
func banditRegret(seed uint64, steps int, mean func(t int) [4]float64) float64 {
	return banditRegretGamma(seed, steps, 0.9998, mean)
}

func banditRegretGamma(seed uint64, steps int, gamma float64, mean func(t int) [4]float64) float64 {
	rng := rand.New(rand.NewPCG(seed, 0xd01ce))
	var b DRUCB
	b.Init(4, gamma, 0.015, 0.5001)
	reg := 0.0
	for t := 0; t < steps; t++ {
		mu := mean(t)
		best := math.Max(math.Max(mu[0], mu[1]), math.Max(mu[2], mu[3]))
		a := b.Select()
		reg += best - mu[a]
		x := 0.0
		if rng.Float64() < mu[a] {
			x = 1
		}
		b.Update(a, x)
	}
	return reg
}

// regretBound is the bound the tests state for DR-UCB with K arms of gaps Δ_i
// over T steps (derivation): a suboptimal arm wins the UCB step only while
// its bonus covers its gap; allowing the estimates an error of Δ_i/2, that is
// while its discounted count n_i < 4ξL/Δ_i², L = ln(1/(1−γ)) (ln Σn at its
// steady state). n_i counts about the last 1/(1−γ) steps, so the arm is
// pulled at most 4ξL(1−γ)/Δ_i² of the time, costing Δ_i each; forced
// exploration pulls every arm once per ⌊K/ε⌋ steps. Plus one warm-up of
// 4ξL/Δ_i pulls-times-gap per arm while the counts build up:
//
//	Reg(T) ≤ T·[Σ_i Δ_i/⌊K/ε⌋ + 4ξL(1−γ)·Σ_{i≠*} 1/Δ_i] + Σ_{i≠*} 4ξL/Δ_i
//
// This is the concrete form of the paper's (1−ε)O(√T) + εT (Theorem 1) for a
// fixed γ: with γ fixed the UCB part is linear in T with a small slope.
func regretBound(gaps []float64, steps int) float64 {
	const gamma, eps, xi = 0.9998, 0.015, 0.5001
	L := math.Log(1 / (1 - gamma))
	period := math.Floor(4 / eps)
	rate, warm := 0.0, 0.0
	for _, d := range gaps {
		rate += d / period
		if d > 0 {
			rate += 4 * xi * L * (1 - gamma) / d
			warm += 4 * xi * L / d
		}
	}
	return float64(steps)*rate + warm
}

// Stationary Bernoulli arms μ = {0.7, 0.4, 0.9, 0.8} (the best is not arm 0,
// so tie-breaking cannot help), T = 50,000, five fixed seeds. Stated bound
// (regretBound): 50,000 × (0.8/266 + 4·0.5001·8.517·2e-4·17) + 0.5001·4·
// 8.517·17 = 3,336. A uniformly random policy would lose 50,000 × 0.2 =
// 10,000; we also require at most a quarter of that.
func TestDRUCBRegretStationary(t *testing.T) {
	mu := [4]float64{0.7, 0.4, 0.9, 0.8}
	const steps = 50_000
	bound := regretBound([]float64{0.2, 0.5, 0, 0.1}, steps)
	if !near(bound, 3336, 1) {
		t.Fatalf("bound %.1f, want 3336 (see the comment)", bound)
	}
	for seed := uint64(1); seed <= 5; seed++ {
		reg := banditRegret(seed, steps, func(int) [4]float64 { return mu })
		t.Logf("seed %d: regret %.0f (bound %.0f, uniform random 10000)", seed, reg, bound)
		if reg > bound || reg > 2500 {
			t.Errorf("seed %d: regret %.0f over the bound %.0f or a quarter of random's", seed, reg, bound)
		}
	}
}

// Drifting arms: the best arm changes every 15,000 steps (C_T = 3 changes
// in T = 60,000), so regret is measured against the best arm of each step.
// Stated bound: the stationary bound for every segment (gaps 0.1/0.3/0.5
// in each) plus, per change, one memory window at the largest gap:
// C_T·Δ_max/(1−γ) = 3 × 0.5 × 5000 = 7,500 — the time the discounted
// statistics take to forget the old best arm.
func TestDRUCBRegretDrifting(t *testing.T) {
	segments := [][4]float64{
		{0.9, 0.6, 0.4, 0.8},
		{0.4, 0.9, 0.6, 0.8},
		{0.6, 0.4, 0.8, 0.9},
		{0.8, 0.6, 0.9, 0.4},
	}
	const seg, steps = 15_000, 60_000
	bound := 0.0
	for range segments {
		bound += regretBound([]float64{0, 0.1, 0.3, 0.5}, seg)
	}
	bound += 3 * 0.5 / (1 - 0.9998)
	// a uniformly random policy loses the mean gap of each segment, 0.225
	// per step: 13,500 here
	random := 0.0
	for _, mu := range segments {
		best := math.Max(math.Max(mu[0], mu[1]), math.Max(mu[2], mu[3]))
		random += float64(seg) * (best - (mu[0]+mu[1]+mu[2]+mu[3])/4)
	}
	for seed := uint64(1); seed <= 5; seed++ {
		mean := func(t int) [4]float64 { return segments[t/seg] }
		reg := banditRegret(seed, steps, mean)
		// the discount is what lets it follow the changes: the same
		// bandit without it (γ = 1) keeps pulling the old best arm
		undiscounted := banditRegretGamma(seed, steps, 1, mean)
		t.Logf("seed %d: dynamic regret %.0f (bound %.0f; undiscounted %.0f; uniform random %.0f)", seed, reg, bound, undiscounted, random)
		if reg > bound || reg > random/5 {
			t.Errorf("seed %d: dynamic regret %.0f over the bound %.0f or a fifth of random's %.0f", seed, reg, bound, random)
		}
		if undiscounted < 2*reg {
			t.Errorf("seed %d: without the discount regret is %.0f, not clearly worse than %.0f", seed, undiscounted, reg)
		}
	}
}
