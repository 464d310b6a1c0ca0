package fdcc

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"cclab/cc/nn"
)

// TD3Config holds TD3's hyperparameters. DefaultTD3Config gives
// LSTM-TD3's defaults (lstm_td3_main.py); the discount γ is not here: the
// caller folds it into each sample's Batch.Disc, and the batch size is the
// caller's too.
type TD3Config struct {
	// Polyak is ρ of the target networks' update θ' ← ρ·θ' + (1 − ρ)·θ.
	Polyak float64
	// PiLR and QLR are the actor's and the critics' Adam learning rates.
	PiLR, QLR float64
	// TargetNoise is the standard deviation of the target policy's
	// smoothing noise, and NoiseClip its bound, both in units of
	// Arch.ActLimit (as Fujimoto's TD3; LSTM-TD3 uses them unscaled, the
	// same when ActLimit is 1).
	TargetNoise, NoiseClip float64
	// PolicyDelay: the actor and the targets are updated on one Update
	// call in PolicyDelay, starting with the first.
	PolicyDelay int
	// PreActPenalty adds PreActPenalty × mean(u²) to the actor's loss, u
	// the actor's output before its tanh (DDPG practice, e.g. OpenAI
	// baselines' action regularisation): without it a tanh actor can
	// saturate at its limit, where its gradient vanishes and it never
	// comes back. 0 (LSTM-TD3's default) leaves the loss as TD3's.
	PreActPenalty float64
	// AdamEps is both optimisers' ε; 0 is PyTorch's default, 1e-8
	// (LSTM-TD3 keeps it; RL-CC's ADPG, agents/adpg.py, uses 1e-5).
	AdamEps float64
}

// DefaultTD3Config returns LSTM-TD3's defaults: polyak 0.995, pi_lr =
// q_lr = 1e-3, target_noise 0.2, noise_clip 0.5, policy_delay 2.
func DefaultTD3Config() TD3Config {
	return TD3Config{Polyak: 0.995, PiLR: 1e-3, QLR: 1e-3, TargetNoise: 0.2, NoiseClip: 0.5, PolicyDelay: 2}
}

// Validate returns an error for a value outside its range.
func (c TD3Config) Validate() error {
	ok := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case !ok(c.Polyak) || c.Polyak < 0 || c.Polyak > 1:
		return fmt.Errorf("fdcc: TD3 config: Polyak %v is not in [0, 1]", c.Polyak)
	case !ok(c.PiLR) || c.PiLR <= 0:
		return fmt.Errorf("fdcc: TD3 config: PiLR %v is not positive", c.PiLR)
	case !ok(c.QLR) || c.QLR <= 0:
		return fmt.Errorf("fdcc: TD3 config: QLR %v is not positive", c.QLR)
	case !ok(c.TargetNoise) || c.TargetNoise < 0:
		return fmt.Errorf("fdcc: TD3 config: TargetNoise %v is negative", c.TargetNoise)
	case !ok(c.NoiseClip) || c.NoiseClip < 0:
		return fmt.Errorf("fdcc: TD3 config: NoiseClip %v is negative", c.NoiseClip)
	case !ok(c.PreActPenalty) || c.PreActPenalty < 0:
		return fmt.Errorf("fdcc: TD3 config: PreActPenalty %v is negative", c.PreActPenalty)
	case !ok(c.AdamEps) || c.AdamEps < 0:
		return fmt.Errorf("fdcc: TD3 config: AdamEps %v is negative", c.AdamEps)
	case c.PolicyDelay < 1:
		return fmt.Errorf("fdcc: TD3 config: PolicyDelay %d is below 1", c.PolicyDelay)
	}
	return nil
}

// Batch is a mini-batch of N transitions, row-major. Sample i is: its
// history Hist[i·Hist·Obs:], of which the first HistLen[i] rows are valid
// (the rest zero or anything: never read); its observation Obs[i·Obs:];
// the action taken Act[i]; the return Ret[i] (the reward, or the n-step
// discounted sum of rewards); the discount Disc[i] of the bootstrap, γ^m
// times (1 − done); and the next step's history, length and observation
// (usually the history with Obs[i] appended, the oldest row dropped when
// full, so NextHistLen[i] = min(HistLen[i] + 1, Hist)).
type Batch struct {
	N           int
	Hist, Obs   []float64
	HistLen     []int
	Act         []float64
	Ret, Disc   []float64
	NextHist    []float64
	NextObs     []float64
	NextHistLen []int
}

// Stats reports one Update.
type Stats struct {
	// CriticLoss is the sum of the two critics' mean squared errors
	// against the target (the reference's LossQ).
	CriticLoss float64
	// ActorUpdated tells whether this call updated the actor (and the
	// targets); ActorLoss, −mean Q1(s, π(s)), is 0 otherwise.
	ActorUpdated bool
	ActorLoss    float64
	// MeanQ is the mean of Q1(s, a) over the batch, MeanTarget the mean
	// of the target y.
	MeanQ, MeanTarget float64
}

// TD3 is the LSTM-TD3 learner: an actor, twin critics, their target
// networks, and Adam for the actor and for the critics. It is not safe
// for concurrent use; Policy hands out snapshots that are.
type TD3 struct {
	arch Arch
	cfg  TD3Config

	actor, q1, q2             *net
	targActor, targQ1, targQ2 *net
	qParams                   nn.Params // q1's then q2's
	piOpt, qOpt               *nn.Adam

	pcg *rand.PCG // the target-noise stream's state
	rng *rand.Rand

	updates int // Update calls so far
	workers int // goroutines Update uses (1: the caller's)

	shards [numShards]*shard
	noise  []float64 // one target-noise draw per sample
	y      []float64 // the critics' target

	wActor work      // AddActorGrad's activations
	dy     []float64 // AddActorGrad's output gradient
}

// numShards is the number of parts Update splits a batch into. Each part's
// gradients are computed on their own and added in part order, so results
// depend on this constant but not on the number of workers.
const numShards = 4

// shard computes one part of a batch. Its networks share the learner's
// parameter values and have gradients of their own; the target networks,
// only run forward, are the learner's.
type shard struct {
	actor, q1, q2    *net
	qParams          nn.Params
	wa, wq1, wq2, wt work
	a, dq1, dq2      []float64

	lo, hi                       int // rows [lo, hi) of the batch
	sumY, l1, l2, sumQ, sumActor float64
}

// NewTD3 returns a learner with freshly initialised networks (PyTorch's
// default initialisation, drawn from a PCG stream seeded with seed, in the
// order actor, q1, q2), targets equal to them, and the target-noise
// stream, which continues the same PCG stream.
func NewTD3(arch Arch, cfg TD3Config, seed uint64) (*TD3, error) {
	if err := arch.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	t := &TD3{arch: arch, cfg: cfg, pcg: rand.NewPCG(seed, 0x6664636374643301)}
	t.rng = rand.New(t.pcg)
	t.actor = newNet(arch, false, "actor", t.rng)
	t.q1 = newNet(arch, true, "q1", t.rng)
	t.q2 = newNet(arch, true, "q2", t.rng)
	t.targActor, t.targQ1, t.targQ2 = t.actor.clone(), t.q1.clone(), t.q2.clone()
	t.qParams = append(append(nn.Params{}, t.q1.params...), t.q2.params...)
	t.piOpt = nn.NewAdam(t.actor.params, t.cfg.PiLR)
	t.qOpt = nn.NewAdam(t.qParams, t.cfg.QLR)
	if cfg.AdamEps > 0 {
		t.piOpt.Eps, t.qOpt.Eps = cfg.AdamEps, cfg.AdamEps
	}
	for k := range t.shards {
		sh := &shard{actor: t.actor.shadow(), q1: t.q1.shadow(), q2: t.q2.shadow()}
		sh.qParams = append(append(nn.Params{}, sh.q1.params...), sh.q2.params...)
		t.shards[k] = sh
	}
	t.workers = 1
	return t, nil
}

// SetWorkers sets the number of goroutines Update splits its work across
// (at most the number of parts, 4; 1, the default, runs everything on the
// caller's goroutine). The results are the same bit for bit whatever the
// number. On the lab's 2-core machine two workers made Update 1.3 to 1.8
// times faster (batch 64, hidden 16 and 32), when nothing else ran. The
// number is not saved in checkpoints.
func (t *TD3) SetWorkers(n int) { t.workers = min(max(n, 1), numShards) }

// The phases of an update that run shard by shard.
const (
	phaseTargets = iota
	phaseCritics
	phaseActor
)

// each runs phase on every shard for batch b, on t.workers goroutines.
func (t *TD3) each(phase int, b *Batch) {
	if t.workers <= 1 {
		for _, sh := range t.shards {
			t.runShard(phase, b, sh)
		}
		return
	}
	var wg sync.WaitGroup
	for w := range t.workers {
		wg.Go(func() {
			for k := w; k < numShards; k += t.workers {
				t.runShard(phase, b, t.shards[k])
			}
		})
	}
	wg.Wait()
}

// runShard runs phase on the shard's part of b.
func (t *TD3) runShard(phase int, b *Batch, sh *shard) {
	p := rows(b, t.arch, sh.lo, sh.hi)
	switch phase {
	case phaseTargets:
		t.shardTargets(sh, &p)
	case phaseCritics:
		t.shardCriticGrads(sh, &p, b.N)
	case phaseActor:
		t.shardActorGrads(sh, &p, b.N)
	}
}

// Arch returns the networks' architecture.
func (t *TD3) Arch() Arch { return t.arch }

// Config returns the hyperparameters.
func (t *TD3) Config() TD3Config { return t.cfg }

// Updates returns the number of Update calls so far.
func (t *TD3) Updates() int { return t.updates }

// Policy returns a deep copy of the current actor: a snapshot that stays
// as it is while training goes on.
func (t *TD3) Policy() *Policy { return &Policy{arch: t.arch, actor: t.actor.clone()} }

// checkBatch panics unless b's slices have the sizes N and the
// architecture give. (History lengths are checked as they are used.)
func (t *TD3) checkBatch(b *Batch) {
	a := t.arch
	N := b.N
	if N < 1 {
		panic(fmt.Sprintf("fdcc: Update: batch of %d", N))
	}
	for _, c := range [...]struct {
		what      string
		got, want int
	}{
		{"Hist", len(b.Hist), N * a.Hist * a.Obs}, {"Obs", len(b.Obs), N * a.Obs},
		{"HistLen", len(b.HistLen), N}, {"Act", len(b.Act), N}, {"Ret", len(b.Ret), N},
		{"Disc", len(b.Disc), N}, {"NextHist", len(b.NextHist), N * a.Hist * a.Obs},
		{"NextObs", len(b.NextObs), N * a.Obs}, {"NextHistLen", len(b.NextHistLen), N},
	} {
		if c.got != c.want {
			panic(fmt.Sprintf("fdcc: Update: batch of %d: %s has %d values, want %d", N, c.what, c.got, c.want))
		}
	}
}

// Update does one TD3 gradient step on b (LSTM-TD3's update):
//
//	a' = clip(π'(h', o') + clip(ε, ±NoiseClip·L), ±L),  ε ~ N(0, (TargetNoise·L)²), L = ActLimit
//	y  = Ret + Disc · min(Q1'(h', o', a'), Q2'(h', o', a'))
//	critics: one Adam step on mean((Q1(h, o, a) − y)²) + mean((Q2(h, o, a) − y)²)
//
// The thesis prints its critic loss (4.2) without the square and with the
// target networks' Q inside; that is taken as a typo for TD3's mean
// squared error, which is what the reference code minimises. Then, on
// every PolicyDelay-th call starting with the first (the reference's
// timer % policy_delay == 0), one Adam step on the actor maximising
// mean Q1(h, o, π(h, o)) (with the critics just updated), and the polyak
// update of the three targets.
//
// The batch is split into 4 fixed parts whose gradients are added in
// order (see SetWorkers); after the first call with a given batch size,
// Update allocates nothing (with one worker). It panics on a malformed
// batch.
func (t *TD3) Update(b *Batch) Stats {
	t.checkBatch(b)
	var st Stats
	st.MeanTarget = t.targets(b)
	st.CriticLoss, st.MeanQ = t.criticGrads(b)
	t.qOpt.Step()
	if t.updates%t.cfg.PolicyDelay == 0 {
		st.ActorUpdated = true
		st.ActorLoss = t.actorGrads(b)
		t.piOpt.Step()
		t.targActor.params.Polyak(t.actor.params, t.cfg.Polyak)
		t.targQ1.params.Polyak(t.q1.params, t.cfg.Polyak)
		t.targQ2.params.Polyak(t.q2.params, t.cfg.Polyak)
	}
	t.updates++
	return st
}

// rows returns the part [lo, hi) of b.
func rows(b *Batch, a Arch, lo, hi int) Batch {
	h, o := a.Hist*a.Obs, a.Obs
	return Batch{N: hi - lo,
		Hist: b.Hist[lo*h : hi*h], Obs: b.Obs[lo*o : hi*o], HistLen: b.HistLen[lo:hi],
		Act: b.Act[lo:hi], Ret: b.Ret[lo:hi], Disc: b.Disc[lo:hi],
		NextHist: b.NextHist[lo*h : hi*h], NextObs: b.NextObs[lo*o : hi*o], NextHistLen: b.NextHistLen[lo:hi]}
}

// split assigns each shard its rows of a batch of n.
func (t *TD3) split(n int) {
	for k, sh := range t.shards {
		sh.lo, sh.hi = k*n/numShards, (k+1)*n/numShards
	}
}

// targets computes the critics' target y into t.y and returns its mean.
// It draws the target-policy noise first, one value per sample in order.
func (t *TD3) targets(b *Batch) float64 {
	N := b.N
	t.noise = growf(t.noise, N)
	t.y = growf(t.y, N)
	sd, clip := t.cfg.TargetNoise*t.arch.ActLimit, t.cfg.NoiseClip*t.arch.ActLimit
	for i := range t.noise {
		t.noise[i] = clamp(t.rng.NormFloat64()*sd, -clip, clip)
	}
	t.split(N)
	t.each(phaseTargets, b)
	sum := 0.0
	for _, sh := range t.shards {
		sum += sh.sumY
	}
	return sum / float64(N)
}

// shardTargets computes the targets of the shard's part p of the batch.
func (t *TD3) shardTargets(sh *shard, p *Batch) {
	sh.sumY = 0
	if p.N == 0 {
		return
	}
	n, L := p.N, t.arch.ActLimit
	sh.a = growf(sh.a, n)
	ap := t.targActor.forward(&sh.wt, p.NextHist, p.NextHistLen, p.NextObs, nil, n)
	for i := range n {
		sh.a[i] = clamp(ap[i]+t.noise[sh.lo+i], -L, L)
	}
	y := t.y[sh.lo:sh.hi]
	copy(y, t.targQ1.forward(&sh.wt, p.NextHist, p.NextHistLen, p.NextObs, sh.a, n))
	q2 := t.targQ2.forward(&sh.wt, p.NextHist, p.NextHistLen, p.NextObs, sh.a, n)
	for i := range n {
		y[i] = p.Ret[i] + p.Disc[i]*min(y[i], q2[i])
		sh.sumY += y[i]
	}
}

// criticGrads sets the critics' gradients to those of the critic loss
// against t.y, and returns the loss and the mean of Q1.
func (t *TD3) criticGrads(b *Batch) (loss, meanQ float64) {
	t.each(phaseCritics, b)
	t.qParams.ZeroGrad()
	var l1, l2, sumQ float64
	for _, sh := range t.shards {
		t.qParams.AddGrads(sh.qParams)
		l1 += sh.l1
		l2 += sh.l2
		sumQ += sh.sumQ
	}
	N := float64(b.N)
	return (l1 + l2) / N, sumQ / N
}

// shardCriticGrads computes the critics' gradients on the shard's part p
// of a batch of total samples.
func (t *TD3) shardCriticGrads(sh *shard, p *Batch, total int) {
	sh.l1, sh.l2, sh.sumQ = 0, 0, 0
	sh.qParams.ZeroGrad()
	if p.N == 0 {
		return
	}
	n, N := p.N, float64(total)
	sh.dq1 = growf(sh.dq1, n)
	sh.dq2 = growf(sh.dq2, n)
	q1 := sh.q1.forward(&sh.wq1, p.Hist, p.HistLen, p.Obs, p.Act, n)
	q2 := sh.q2.forward(&sh.wq2, p.Hist, p.HistLen, p.Obs, p.Act, n)
	y := t.y[sh.lo:sh.hi]
	for i := range n {
		e1, e2 := q1[i]-y[i], q2[i]-y[i]
		sh.l1 += e1 * e1
		sh.l2 += e2 * e2
		sh.dq1[i] = 2 * e1 / N
		sh.dq2[i] = 2 * e2 / N
		sh.sumQ += q1[i]
	}
	sh.q1.backward(&sh.wq1, sh.dq1, n, false)
	sh.q2.backward(&sh.wq2, sh.dq2, n, false)
}

// actorGrads sets the actor's gradients to those of −mean Q1(h, o, π(h, o))
// and returns that loss. The critics' gradients are left alone.
func (t *TD3) actorGrads(b *Batch) float64 {
	t.each(phaseActor, b)
	t.actor.params.ZeroGrad()
	sum := 0.0
	for _, sh := range t.shards {
		t.actor.params.AddGrads(sh.actor.params)
		sum += sh.sumActor
	}
	return sum / float64(b.N)
}

// shardActorGrads computes the actor's gradients on the shard's part p of
// a batch of total samples.
func (t *TD3) shardActorGrads(sh *shard, p *Batch, total int) {
	sh.sumActor = 0
	sh.actor.params.ZeroGrad()
	if p.N == 0 {
		return
	}
	n, N := p.N, float64(total)
	sh.a = growf(sh.a, n)
	sh.dq1 = growf(sh.dq1, n)
	copy(sh.a, sh.actor.forward(&sh.wa, p.Hist, p.HistLen, p.Obs, nil, n))
	sh.wa.preReg = 2 * t.cfg.PreActPenalty / N
	for i := range n {
		sh.sumActor += t.cfg.PreActPenalty * sh.wa.out[i] * sh.wa.out[i]
	}
	q := sh.q1.forward(&sh.wq1, p.Hist, p.HistLen, p.Obs, sh.a, n)
	for i := range n {
		sh.sumActor -= q[i]
		sh.dq1[i] = -1 / N
	}
	sh.q1.actionGrad(&sh.wq1, sh.dq1, n)
	sh.actor.backward(&sh.wa, sh.wq1.dact, n, false)
}

// ZeroActorGrad clears the actor's parameter gradients, before a series
// of AddActorGrad calls.
func (t *TD3) ZeroActorGrad() { t.actor.params.ZeroGrad() }

// AddActorGrad runs the actor on n = len(histLen) samples laid out as a
// Batch's (hist n×Hist×Obs, the first histLen[i] rows of sample i valid;
// obs n×Obs) and adds to its parameter gradients those of a loss L of its
// outputs y_i = π(h_i, o_i). grad is handed y and writes ∂L/∂y_i into dy
// (both of length n, valid during the call only); its return value, L,
// is AddActorGrad's. This is the path TD3's actor update takes with
// ∂L/∂y_i = −∂Q1/∂a / N; a learner whose gradient with respect to the
// action is given analytically (RL-CC's ADPG, package sim/rl) supplies
// its own. No pre-tanh penalty is added. It panics on inputs of the
// wrong size.
func (t *TD3) AddActorGrad(hist []float64, histLen []int, obs []float64, grad func(y, dy []float64) float64) float64 {
	a, n := t.arch, len(histLen)
	if n == 0 {
		return grad(nil, nil)
	}
	if len(hist) != n*a.Hist*a.Obs || len(obs) != n*a.Obs {
		panic(fmt.Sprintf("fdcc: AddActorGrad: %d samples with %d history and %d observation values, want %d and %d",
			n, len(hist), len(obs), n*a.Hist*a.Obs, n*a.Obs))
	}
	w := &t.wActor
	w.preReg = 0
	y := t.actor.forward(w, hist, histLen, obs, nil, n)
	t.dy = growf(t.dy, n)
	clear(t.dy)
	loss := grad(y, t.dy)
	t.actor.backward(w, t.dy, n, false)
	return loss
}

// StepActor takes one Adam step on the actor from its gradients; with
// clip > 0 it first clips every gradient value to [−clip, clip] (PyTorch's
// clip_grad_value_). The critics, the targets and Updates are untouched.
func (t *TD3) StepActor(clip float64) {
	if clip > 0 {
		for _, p := range t.actor.params {
			for i, g := range p.Grad {
				p.Grad[i] = clamp(g, -clip, clip)
			}
		}
	}
	t.piOpt.Step()
}

func clamp(v, lo, hi float64) float64 { return min(max(v, lo), hi) }
