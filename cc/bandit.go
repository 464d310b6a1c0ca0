package cc

import "math"

// DR-UCB, "Discounted and Random Exploratory UCB" (Ye et al., Dolce-RC,
// Algorithm 1): discounted UCB (Garivier & Moulines) with a forced
// round-robin exploration block at the start of every ⌊K/ε⌋ iterations.
//
// The paper's sums over the whole history are kept recursively (the same
// arithmetic, O(K) per iteration, no allocation):
//
//	after observing reward x for arm I:  S[i] *= γ, N[i] *= γ for every i;
//	                                     S[I] += x;  N[I] += 1;  t++
//	choosing the arm of iteration t:     r = t mod ⌊K/ε⌋; r < K → arm r, else
//	                                     argmax_i S[i]/N[i] + √(ξ·ln(ΣN)/N[i])
//
// S[i] is the paper's RewardACC (Σ γ^{t−1−τ} X_i(τ)·1(I_τ=i)), N[i] its
// ArmTriedNum n_i(t−1). Choices are deterministic: the forced block is a
// fixed round robin (the paper calls it random; it is not), an arm never
// pulled has an infinite index, and ties go to the lowest arm index. The log
// is natural (the paper does not say; [AMBIG]). ln(ΣN) is floored at 0.

// maxBanditArms bounds K so that the state is a fixed-size value.
const maxBanditArms = 8

// DRUCB is one DR-UCB learner. The zero value is not ready: call Init.
type DRUCB struct {
	K     int     // arms, 1..maxBanditArms
	Gamma float64 // discount factor γ in (0, 1]
	Eps   float64 // forced-exploration rate ε in (0, 1]
	Xi    float64 // exploration constant ξ (> 0.5 in the paper)

	S [maxBanditArms]float64 // discounted reward sums
	N [maxBanditArms]float64 // discounted pull counts
	T int64                  // iterations completed (rewards observed)
}

// Init resets the learner with K arms and its constants.
func (b *DRUCB) Init(k int, gamma, eps, xi float64) {
	if k < 1 {
		k = 1
	}
	if k > maxBanditArms {
		k = maxBanditArms
	}
	*b = DRUCB{K: k, Gamma: gamma, Eps: eps, Xi: xi}
}

// Period is ⌊K/ε⌋, the length of one forced-exploration cycle (at least
// K). With ε ≤ 0 only the first K iterations are forced (every arm is tried
// once, so that every N[i] > 0 before the UCB rule runs).
func (b *DRUCB) Period() int64 {
	if b.Eps <= 0 {
		return math.MaxInt64
	}
	p := math.Floor(float64(b.K) / b.Eps)
	if p < float64(b.K) {
		return int64(b.K)
	}
	if p > math.MaxInt64/2 {
		return math.MaxInt64
	}
	return int64(p)
}

// Select returns the arm of iteration T (Algorithm 1, lines 3–8). It does
// not change the state.
func (b *DRUCB) Select() int {
	if r := b.T % b.Period(); r < int64(b.K) {
		return int(r)
	}
	best, bestV := 0, math.Inf(-1)
	total := 0.0
	for i := 0; i < b.K; i++ {
		total += b.N[i]
	}
	lg := math.Log(total)
	if lg < 0 || math.IsNaN(lg) {
		lg = 0
	}
	for i := 0; i < b.K; i++ {
		v := b.Index(i, lg)
		if v > bestV {
			best, bestV = i, v
		}
	}
	return best
}

// Index is arm i's UCB index given ln(ΣN): +Inf for an arm never pulled
// (or whose discounted count has underflowed to 0).
func (b *DRUCB) Index(i int, logTotal float64) float64 {
	if b.N[i] <= 0 {
		return math.Inf(1)
	}
	return b.S[i]/b.N[i] + math.Sqrt(b.Xi*logTotal/b.N[i])
}

// Mean is arm i's discounted mean reward (0 if never pulled).
func (b *DRUCB) Mean(i int) float64 {
	if b.N[i] <= 0 {
		return 0
	}
	return b.S[i] / b.N[i]
}

// Update records reward x for arm (Algorithm 1, lines 9–10) and advances
// the iteration counter.
func (b *DRUCB) Update(arm int, x float64) {
	for i := 0; i < b.K; i++ {
		b.S[i] *= b.Gamma
		b.N[i] *= b.Gamma
	}
	if arm >= 0 && arm < b.K {
		b.S[arm] += x
		b.N[arm]++
	}
	b.T++
}
