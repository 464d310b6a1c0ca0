package rl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sort"
	"sync"
	"time"

	"cclab/cc"
	"cclab/cc/fdcc"
	"cclab/scenarios"
	"cclab/sim"
)

// Config is a training run. Zero fields take the defaults of DefaultConfig.
type Config struct {
	Algo string // "fdcc" or "rlcc"
	// Method is the trainer: "td3" (the LSTM-TD3 learner, FDCC's) or
	// "adpg" (RL-CC's own, rlcc only; see ADPGConfig); "" takes the
	// algorithm's: td3 for fdcc, adpg for rlcc. Replay, Batch, Updates,
	// NStep, Noise, RandomEpisodes, Epsilon and TD3 are TD3's settings;
	// ADPG plays each round without exploration and takes one step after
	// it (Gamma is its discount too).
	Method string
	Hidden int // every hidden layer's width
	Seed   uint64

	// Episodes is the total number of episodes; Round of them are played
	// at once with one snapshot of the policy, then Updates × Round
	// gradient steps follow. Workers bounds the goroutines playing a
	// round (0: every core); it does not change the result.
	Episodes, Round, Updates, Workers int
	Batch, ReplaySteps                int
	NStep                             int     // n of the n-step return
	Gamma                             float64 // discount
	Noise                             float64 // exploration σ, in units of the output limit
	// RandomEpisodes are played with uniformly random actions before the
	// policy takes over (LSTM-TD3's start_steps: the critic first sees
	// every action, growing the window as well as shrinking it).
	RandomEpisodes int
	// Epsilon is the probability that a training step's action is uniformly
	// random (after the random episodes).
	Epsilon float64
	// Stages are the curriculum's fan-ins (thesis §1.8: 2, 4, 8, 16, 32);
	// stage s starts after s × StageEpisodes episodes. From stage 1 on,
	// half the episodes take the newest fan-in and half one of the earlier
	// ones, uniformly ("we add 4-to-1 fan-in traffic into training").
	Stages        []int
	StageEpisodes int
	Size          int64 // payload bytes per flow
	// Spread is the window the flows start in; 0: 1 ms, the thesis' "within
	// 1 ms" (§1.8). With 2 MB flows (160 µs at line rate) low fan-ins
	// overlap only in part, so an agent also spends long stretches alone
	// or with few competitors; a spread scaled with the size (100 µs) kept
	// them overlapped, and the policy it trained held a lone flow at 36% of
	// the link.
	Spread      sim.Time
	Limit       sim.Time // episode time cap; 0: 20 × the ideal incast time
	Rate, Delay string
	// Params are the algorithm's parameters in every episode (registry
	// names and units; the rest keep their defaults), e.g. fdcc's
	// shareReward.
	Params map[string]float64 `json:",omitempty"`
	TD3    fdcc.TD3Config
	ADPG   ADPGConfig
	// EvalEvery runs the evaluation episodes every so many episodes (0:
	// never); their results are in the progress and the learning curve.
	EvalEvery int
	Eval      []Episode // default: a lone flow, 4-to-1 and 16-to-1 of the training size
}

// DefaultConfig is `cclab train` with no flags for algo: its own
// trainer's settings (TD3 for fdcc, ADPG for rlcc).
func DefaultConfig(algo string) Config { return MethodConfig(algo, "") }

// MethodConfig is `cclab train` for algo with trainer method ("td3",
// "adpg"; "" the algorithm's own) and no other flag.
func MethodConfig(algo, method string) Config {
	// LSTM-TD3's defaults, and an actor penalty that keeps its tanh from
	// saturating (without it the first runs' actor sat at −2 everywhere
	// after 200 episodes: every window at one packet).
	td3 := fdcc.DefaultTD3Config()
	td3.PreActPenalty = 0.01
	c := Config{
		Algo: algo, Method: "td3", Hidden: 16, Seed: 1,
		Episodes: 2400, Round: 4, Updates: 25,
		Batch: 64, ReplaySteps: 200_000, NStep: 3, Gamma: 0.99, Noise: 0.1,
		Stages: []int{2, 4, 8, 16, 32}, StageEpisodes: 480,
		Size: 2_000_000, Rate: "100Gbps", Delay: "1us",
		TD3:            td3,
		RandomEpisodes: 100, Epsilon: 0.1,
		EvalEvery: 100,
	}
	if method == "adpg" || (method == "" && algo == "rlcc") {
		// RL-CC's own trainer and its settings (config/rlcc.yaml):
		// width 12, and its many-to-one training scenarios, 4-, 8- and
		// 32-to-1, mixed from the third episode on (rlcc.yaml plays them
		// all at once; the all-to-all ones have no counterpart in the
		// lab's incast episodes). One update per round of 4 episodes,
		// 1000 updates (rlcc.yaml's max_num_updates).
		c.Method, c.ADPG, c.Hidden = "adpg", DefaultADPGConfig(), 12
		c.Stages, c.StageEpisodes = []int{4, 8, 32}, 1
		c.Episodes, c.Round = 4000, 4
		c.RandomEpisodes, c.Noise, c.Epsilon = 0, 0, 0 // ADPG does not explore
	}
	return c
}

// Arch is the network shape the algorithm's policy has.
func (c *Config) Arch() (fdcc.Arch, error) {
	switch c.Algo {
	case "fdcc":
		return fdcc.Arch{Obs: 8, Hist: 8, Hidden: c.Hidden, ActLimit: 2}, nil
	case "rlcc":
		return fdcc.Arch{Obs: 2, Hist: 1, Hidden: c.Hidden, ActLimit: 1}, nil
	}
	return fdcc.Arch{}, fmt.Errorf("rl: algorithm %q cannot be trained (fdcc or rlcc)", c.Algo)
}

// validate checks the configuration and fills what it derives.
func (c *Config) validate() error {
	bad := func(field, msg string, a ...any) error {
		return fmt.Errorf("rl: %s: %s", field, fmt.Sprintf(msg, a...))
	}
	if _, err := c.Arch(); err != nil {
		return err
	}
	if c.Method == "" {
		c.Method = "td3"
		if c.Algo == "rlcc" {
			c.Method = "adpg"
		}
	}
	switch c.Method {
	case "td3":
	case "adpg":
		if c.Algo != "rlcc" {
			return bad("method", "adpg trains rlcc only (its action gradient is rlcc's rtt_reward)")
		}
		if c.ADPG == (ADPGConfig{}) {
			c.ADPG = DefaultADPGConfig()
		}
		if err := c.ADPG.validate(); err != nil {
			return err
		}
	default:
		return bad("method", "%q is not a trainer (td3 or adpg)", c.Method)
	}
	switch {
	case c.Hidden < 1 || c.Hidden > 512:
		return bad("hidden", "%d not in [1, 512]", c.Hidden)
	case c.Episodes < 1:
		return bad("episodes", "must be at least 1")
	case c.Round < 1 || c.Round > 256:
		return bad("round", "%d not in [1, 256]", c.Round)
	case c.Updates < 0:
		return bad("updates", "must not be negative")
	case c.Batch < 1:
		return bad("batch", "must be at least 1")
	case c.ReplaySteps < c.Batch:
		return bad("replay", "must hold at least a batch")
	case c.NStep < 1:
		return bad("nstep", "must be at least 1")
	case !(c.Gamma >= 0 && c.Gamma <= 1):
		return bad("gamma", "must be in [0, 1]")
	case c.EvalEvery < 0:
		return bad("eval-every", "must not be negative (0: never)")
	case c.Workers < 0:
		return bad("workers", "must not be negative (0: one per core)")
	case c.RandomEpisodes < 0:
		return bad("random-episodes", "must not be negative")
	case !(c.Epsilon >= 0 && c.Epsilon <= 1):
		return bad("epsilon", "must be in [0, 1]")
	case !(c.Noise >= 0 && c.Noise <= 10):
		return bad("noise", "must be in [0, 10]")
	case len(c.Stages) == 0:
		return bad("stages", "needs at least one fan-in")
	case c.StageEpisodes < 1:
		return bad("stage-episodes", "must be at least 1")
	case c.Size < 1000:
		return bad("size", "must be at least 1000 bytes")
	}
	for _, n := range c.Stages {
		if n < 1 || n > 1024 {
			return bad("stages", "fan-in %d not in [1, 1024]", n)
		}
	}
	if a, ok := cc.Lookup(c.Algo); ok && len(c.Params) > 0 {
		if _, errs := a.Resolve("", c.Params, 0); len(errs) > 0 {
			return bad("params."+errs[0].Param, "%s", errs[0].Msg)
		}
	}
	if c.Spread == 0 {
		c.Spread = sim.Time(cc.Millisecond)
	}
	return nil
}

// Progress is reported after every round.
type Progress struct {
	Episode    int // episodes played so far
	Episodes   int
	FanIn      int // the curriculum's newest fan-in
	Reward     float64
	CriticLoss float64
	ActorLoss  float64
	Q          float64
	Steps      int // agent steps in the round
	Replay     int // steps held
	Wall       time.Duration
	Eval       *Eval // when the round ran the evaluation
}

// Eval is what the evaluation episodes measured, played without
// exploration noise.
type Eval struct {
	Reward float64
	// Score ranks policies (lower is better): the mean over the
	// evaluation episodes of FCT slowdown ÷ fan-in (about 1 for a fair,
	// work-conserving incast) + the unfair ratio + the peak queue ÷ (fan-in
	// × BDP) (about 1 when every flow keeps a one-BDP window), plus 10 for
	// every episode with an unfinished flow: what the thesis measures its
	// agent by (Table 6.2). The lab's choice of how to pick a policy from a
	// run (the thesis gives none); the reward would pick a starving one,
	// and slowdown alone cannot tell a policy that holds a one-BDP window
	// from one that keeps the queue short.
	Score float64
	// Per evaluation episode, in order.
	Unfair   []float64 // (max − mean)/mean of per-flow goodput size/FCT
	PeakQ    []int64   // bytes, the bottleneck port's largest queue
	Slowdown []float64 // mean FCT / ideal FCT
	Finished []bool    // every flow finished
}

// Trainer is one training run in progress.
type Trainer struct {
	// best is the policy with the lowest evaluation score so far, from
	// episode bestEp (nil before the first evaluation).
	best      *fdcc.Policy
	bestScore float64
	bestEp    int

	cfg    Config
	arch   fdcc.Arch
	td3    *fdcc.TD3
	replay *Replay
	rng    *rand.Rand // batches and the curriculum
	pcg    *rand.PCG
	ep     int // episodes played
	wall   time.Duration
	curve  []Progress
}

// NewTrainer starts a training run from scratch.
func NewTrainer(cfg Config) (*Trainer, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	arch, _ := cfg.Arch()
	pcg := rand.NewPCG(cfg.Seed, 0x7a1)
	lc := cfg.TD3
	if cfg.Method == "adpg" {
		// ADPG trains the TD3 learner's actor with its Adam alone.
		lc.PiLR, lc.AdamEps = cfg.ADPG.LR, cfg.ADPG.Eps
	}
	td3, err := fdcc.NewTD3(arch, lc, cfg.Seed)
	if err != nil {
		return nil, fmt.Errorf("rl: %w", err)
	}
	t := &Trainer{cfg: cfg, arch: arch, td3: td3, replay: NewReplay(cfg.ReplaySteps, arch.Obs), pcg: pcg, rng: rand.New(pcg)}
	if len(t.cfg.Eval) == 0 {
		// A lone flow (it must fill the link), 4-to-1 and 16-to-1.
		for _, n := range []int{1, 4, 16} {
			t.cfg.Eval = append(t.cfg.Eval, Episode{FanIn: n, Size: cfg.Size, Rate: cfg.Rate, Delay: cfg.Delay, Spread: cfg.Spread, Seed: 1_000_000 + uint64(n), Params: cfg.Params})
		}
	}
	return t, nil
}

// Config is the run's configuration, defaults filled.
func (t *Trainer) Config() Config { return t.cfg }

// Episode is the number of episodes played.
func (t *Trainer) Episode() int { return t.ep }

// Curve is the learning curve so far, one point per round.
func (t *Trainer) Curve() []Progress { return t.curve }

// Policy is a snapshot of the current policy.
func (t *Trainer) Policy() *fdcc.Policy { return t.td3.Policy() }

// Best is the policy whose evaluation scored lowest so far, its score and
// the episode it was taken at; nil before the first evaluation.
func (t *Trainer) Best() (p *fdcc.Policy, score float64, episode int) {
	return t.best, t.bestScore, t.bestEp
}

// Algorithm is the registry entry of the trained algorithm with policy p
// and the given exploration, recording into rec.
func Algorithm(algo string, p cc.Policy, noise, epsilon float64, random bool, seed uint64, rec func(*cc.Step)) *cc.Algorithm {
	l := cc.Learned{Policy: p, Noise: noise, Epsilon: epsilon, Random: random, Seed: seed, Record: rec}
	if algo == "rlcc" {
		return cc.RLCC(l)
	}
	return cc.FDCC(l)
}

// fanIn draws episode ep's fan-in from the curriculum.
func (t *Trainer) fanIn(ep int) (n, newest int) {
	s := min(ep/t.cfg.StageEpisodes, len(t.cfg.Stages)-1)
	newest = t.cfg.Stages[s]
	if s == 0 || t.rng.IntN(2) == 0 {
		return newest, newest
	}
	return t.cfg.Stages[t.rng.IntN(s)], newest
}

func (t *Trainer) episode(n int, seed uint64) Episode {
	e := Episode{FanIn: n, Size: t.cfg.Size, Rate: t.cfg.Rate, Delay: t.cfg.Delay, Spread: t.cfg.Spread, Seed: seed, Limit: t.cfg.Limit, Params: t.cfg.Params}
	if e.Limit == 0 {
		// 20 × the time the incast needs at line rate, plus the spread.
		rate, _ := scenarios.ParseRate(t.cfg.Rate)
		e.Limit = t.cfg.Spread + sim.Time(20*float64(n)*float64(t.cfg.Size)*8/float64(rate)*float64(cc.Second))
	}
	return e
}

// play runs episodes in parallel with policy p; results come back in
// the order of eps.
func (t *Trainer) play(ctx context.Context, eps []Episode, p *fdcc.Policy, noise, epsilon float64, random bool) ([]*Outcome, error) {
	outs := make([]*Outcome, len(eps))
	errs := make([]error, len(eps))
	workers := t.cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i, e := range eps {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			mk := func(rec func(*cc.Step)) *cc.Algorithm {
				return Algorithm(t.cfg.Algo, cc.NetPolicy{P: p}, noise, epsilon, random, e.Seed, rec)
			}
			outs[i], errs[i] = RunEpisode(ctx, e, mk, t.arch.Obs)
		}()
	}
	wg.Wait()
	return outs, errors.Join(errs...)
}

// Round plays one round of episodes and the gradient steps after it.
func (t *Trainer) Round(ctx context.Context) (_ Progress, err error) {
	began := time.Now()
	k := min(t.cfg.Round, t.cfg.Episodes-t.ep)
	if k <= 0 {
		return Progress{}, fmt.Errorf("rl: all %d episodes are played", t.cfg.Episodes)
	}
	// A round that fails (e.g. cancelled) leaves the trainer as it was,
	// so that a checkpoint saved after it resumes exactly.
	saved, err := t.pcg.MarshalBinary()
	if err != nil {
		return Progress{}, fmt.Errorf("rl: %w", err)
	}
	defer func() {
		if err != nil {
			_ = t.pcg.UnmarshalBinary(saved)
		}
	}()
	eps := make([]Episode, k)
	newest := 0
	for i := range eps {
		n, nw := t.fanIn(t.ep + i)
		newest = nw
		eps[i] = t.episode(n, t.cfg.Seed<<20+uint64(t.ep+i))
	}
	adpg := t.cfg.Method == "adpg"
	noise, epsilon, random := t.cfg.Noise, t.cfg.Epsilon, t.ep < t.cfg.RandomEpisodes
	if adpg {
		noise, epsilon, random = 0, 0, false
	}
	var outs []*Outcome
	outs, err = t.play(ctx, eps, t.td3.Policy(), noise, epsilon, random)
	if err != nil {
		return Progress{}, err
	}
	p := Progress{Episode: t.ep + k, Episodes: t.cfg.Episodes, FanIn: newest}
	var rsum float64
	for _, o := range outs {
		if !adpg {
			t.replay.Add(o.Traj)
		}
		p.Steps += o.Steps
		rsum += o.Reward
	}
	p.Reward = rsum / float64(len(outs))
	p.Replay = t.replay.Steps()
	if adpg {
		// One ADPG step on the round's rollout (adpg.go); its loss is
		// the curve's actor loss. The TD3 steps below do not run.
		st := t.adpgUpdate(outs)
		p.ActorLoss = st.RewardLoss + st.ActionLoss
	}
	sp := Sampling{Hist: t.arch.Hist, K: t.arch.Hist, NStep: t.cfg.NStep, Gamma: t.cfg.Gamma}
	var b fdcc.Batch
	var nq, na int
	if !adpg && t.replay.Steps() >= t.cfg.Batch {
		for u := 0; u < t.cfg.Updates*k; u++ {
			t.replay.Sample(t.rng, t.cfg.Batch, sp, &b)
			st := t.td3.Update(&b)
			p.CriticLoss += st.CriticLoss
			p.Q += st.MeanQ
			nq++
			if st.ActorUpdated {
				p.ActorLoss += st.ActorLoss
				na++
			}
		}
	}
	if math.IsNaN(p.CriticLoss) || math.IsInf(p.CriticLoss, 0) || math.IsNaN(p.ActorLoss) {
		return Progress{}, fmt.Errorf("rl: training diverged at episode %d (critic loss %v, actor loss %v)", t.ep+k, p.CriticLoss, p.ActorLoss)
	}
	if nq > 0 {
		p.CriticLoss /= float64(nq)
		p.Q /= float64(nq)
	}
	if na > 0 {
		p.ActorLoss /= float64(na)
	}
	prev := t.ep
	t.ep += k
	if t.cfg.EvalEvery > 0 && (t.ep/t.cfg.EvalEvery > prev/t.cfg.EvalEvery || t.ep == t.cfg.Episodes) {
		// A cancelled evaluation does not undo the round: the round is
		// complete and its point is kept without an evaluation.
		if ev, eerr := t.Evaluate(ctx, t.td3.Policy()); eerr == nil {
			p.Eval = ev
			if t.best == nil || ev.Score < t.bestScore {
				t.best, t.bestScore, t.bestEp = t.td3.Policy(), ev.Score, t.ep
			}
		}
	}
	t.wall += time.Since(began)
	p.Wall = t.wall
	t.curve = append(t.curve, p)
	return p, nil
}

// Evaluate plays the evaluation episodes with p and no exploration.
func (t *Trainer) Evaluate(ctx context.Context, p *fdcc.Policy) (*Eval, error) {
	outs, err := t.play(ctx, t.cfg.Eval, p, 0, 0, false)
	if err != nil {
		return nil, err
	}
	ev := &Eval{}
	for _, o := range outs {
		ev.Reward += o.Reward / float64(len(outs))
		m := Measure(o.Result)
		ev.Unfair = append(ev.Unfair, m.Unfair)
		ev.PeakQ = append(ev.PeakQ, m.PeakQueue)
		ev.Slowdown = append(ev.Slowdown, m.Slowdown)
		ev.Finished = append(ev.Finished, o.Finished == o.Flows)
		s := m.Slowdown/float64(o.Flows) + m.Unfair
		if bdp := o.Result.MaxBDP; bdp > 0 {
			s += float64(m.PeakQueue) / float64(int64(o.Flows)*bdp)
		}
		if o.Finished < o.Flows {
			s += 10
		}
		ev.Score += s / float64(len(outs))
	}
	return ev, nil
}

// Metrics are an incast's summary numbers.
type Metrics struct {
	Unfair    float64 // (max − mean)/mean of per-flow goodput size/FCT, finished flows
	PeakQueue int64   // the largest queue of any switch port, bytes
	Slowdown  float64 // mean FCT / ideal FCT of finished flows
	Finished  int     // flows that finished (Unfair and Slowdown are 0 when none did)
}

// Measure summarises an incast's result.
func Measure(r *sim.Result) Metrics {
	var m Metrics
	var bw []float64
	var sd float64
	for _, f := range r.Flows {
		if !f.Finished || f.FCT <= 0 {
			continue
		}
		bw = append(bw, float64(f.Size)/float64(f.FCT))
		if f.IdealFCT > 0 {
			sd += float64(f.FCT) / float64(f.IdealFCT)
		}
	}
	if len(bw) > 0 {
		sort.Float64s(bw)
		var mean float64
		for _, v := range bw {
			mean += v
		}
		mean /= float64(len(bw))
		m.Unfair = (bw[len(bw)-1] - mean) / mean
		m.Slowdown = sd / float64(len(bw))
	}
	m.Finished = len(bw)
	for _, p := range r.Ports {
		if p.Switch && p.QueueMax > m.PeakQueue {
			m.PeakQueue = p.QueueMax
		}
	}
	return m
}
