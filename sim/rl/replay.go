package rl

import (
	"math"
	"math/rand/v2"
	"slices"

	"cclab/cc/fdcc"
)

// Replay is the replay memory: whole trajectories in the order they were
// added, the oldest dropped once more than Cap steps are held. A sample is
// a step t of a trajectory with a valid action and at least one step after
// it; its n-step return and the state it bootstraps from are built from the
// trajectory when the batch is drawn, with the history the policy saw
// (LSTM-TD3's replay of ⟨o, a, r, o'⟩ plus the histories before o and o').
type Replay struct {
	Cap   int
	obs   int
	trajs []Trajectory
	ends  []int // ends[i]: steps held in trajs[0..i]
	steps int   // steps held
}

// NewReplay makes a replay memory for observations of obs values.
func NewReplay(capSteps, obs int) *Replay { return &Replay{Cap: capSteps, obs: obs} }

// Add appends the trajectories with at least two steps.
func (r *Replay) Add(ts []Trajectory) {
	for _, t := range ts {
		if t.Len() < 2 {
			continue
		}
		r.trajs = append(r.trajs, t)
		r.steps += t.Len()
	}
	for r.steps > r.Cap && len(r.trajs) > 1 {
		r.steps -= r.trajs[0].Len()
		r.trajs[0] = Trajectory{}
		r.trajs = r.trajs[1:]
	}
	r.ends = r.ends[:0]
	n := 0
	for i := range r.trajs {
		n += r.trajs[i].Len()
		r.ends = append(r.ends, n)
	}
}

// Steps is the number of steps held.
func (r *Replay) Steps() int { return r.steps }

// Trajectories returns the trajectories held, oldest first (shared, not
// copied).
func (r *Replay) Trajectories() []Trajectory { return r.trajs }

// Sampling draws n-step samples into a batch.
type Sampling struct {
	Hist  int     // history length the networks take
	K     int     // history length used (≤ Hist)
	NStep int     // n of the n-step return
	Gamma float64 // discount
}

// Sample fills b with n samples drawn uniformly over the steps held.
func (r *Replay) Sample(rng *rand.Rand, n int, sp Sampling, b *fdcc.Batch) {
	o := r.obs
	resize := func(s []float64, k int) []float64 {
		if cap(s) < k {
			return make([]float64, k)
		}
		s = s[:k]
		clear(s)
		return s
	}
	b.N = n
	b.Hist = resize(b.Hist, n*sp.Hist*o)
	b.NextHist = resize(b.NextHist, n*sp.Hist*o)
	b.Obs = resize(b.Obs, n*o)
	b.NextObs = resize(b.NextObs, n*o)
	b.Act = resize(b.Act, n)
	b.Ret = resize(b.Ret, n)
	b.Disc = resize(b.Disc, n)
	if cap(b.HistLen) < n {
		b.HistLen = make([]int, n)
		b.NextHistLen = make([]int, n)
	}
	b.HistLen, b.NextHistLen = b.HistLen[:n], b.NextHistLen[:n]
	for i := 0; i < n; i++ {
		var t *Trajectory
		var s int
		for {
			// Uniform over steps: pick a step index over all steps held,
			// then find its trajectory.
			k := rng.IntN(r.steps)
			j, _ := slices.BinarySearch(r.ends, k+1)
			if j > 0 {
				k -= r.ends[j-1]
			}
			t, s = &r.trajs[j], k
			if s+1 < t.Len() && t.Valid[s] {
				break
			}
		}
		m := min(sp.NStep, t.Len()-1-s)
		ret, g := 0.0, 1.0
		for j := 1; j <= m; j++ {
			if rw := t.Reward[s+j]; !math.IsNaN(rw) {
				ret += g * rw
			}
			g *= sp.Gamma
		}
		b.Ret[i], b.Disc[i], b.Act[i] = ret, g, t.Action[s]
		fill := func(hist, cur []float64, hl *int, at int) {
			copy(cur, t.Obs[at*o:(at+1)*o])
			h := min(at, sp.K)
			*hl = h
			copy(hist, t.Obs[(at-h)*o:at*o])
		}
		fill(b.Hist[i*sp.Hist*o:(i+1)*sp.Hist*o], b.Obs[i*o:(i+1)*o], &b.HistLen[i], s)
		fill(b.NextHist[i*sp.Hist*o:(i+1)*sp.Hist*o], b.NextObs[i*o:(i+1)*o], &b.NextHistLen[i], s+m)
	}
}
