package cc

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// Learned congestion control: a sender whose decisions come from a trained
// policy (a neural network, package cc/fdcc). The state machine here does
// what the agent's environment does around the network: it turns ACKs into
// observations, gates the decisions, applies the action to the window and
// rate, computes the reward, and hands every step to a recorder when the
// lab is training. It does not know how the policy computes its output.

// Policy is a trained policy as a learned sender uses it. One Policy serves
// every flow of a run and must not change while it runs; each flow gets its
// own Actor (its scratch memory).
type Policy interface {
	// Shape is the observation size and the longest history the policy
	// takes.
	Shape() (obs, hist int)
	// Limit is the bound of the policy's output: Act returns values in
	// [-Limit, Limit].
	Limit() float64
	NewActor() Actor
}

// Actor evaluates a policy for one flow. hist holds up to the policy's
// history length of past observations, oldest first, row-major (obs values
// per row); only the first histLen rows are valid. obs is the current
// observation. Act must not keep the slices.
type Actor interface {
	Act(hist []float64, histLen int, obs []float64) float64
}

// Step is one decision of a learned sender, as a trainer records it.
type Step struct {
	Flow int32
	T    Time
	// Obs is the observation the decision was taken on (valid during the
	// call only).
	Obs []float64
	// Action is the policy output applied, exploration noise included, in
	// [-limit, limit].
	Action float64
	// Reward is the reward of the previous step's action, measured on this
	// step's observation; NaN on a flow's first step.
	Reward float64
	// Draining is the phase the reward was computed in (FDCC's staged
	// reward; always false for RL-CC).
	Draining bool
	// Frozen is set when the policy gave no usable output (the flow keeps
	// its window and rate; Action is 0).
	Frozen bool
}

// Learned configures a learned algorithm's registry entry.
type Learned struct {
	// Policy decides; nil makes every flow keep its initial window and rate
	// (the registry's entries always have one).
	Policy Policy
	// Noise, when > 0, adds Gaussian exploration noise of this standard
	// deviation (in units of the output limit) to every action, from a
	// stream seeded by Seed and the flow id. Training only.
	Noise float64
	// Random, when set, replaces the policy's output by a uniform draw in
	// [-limit, limit] from the same stream (a trainer's first episodes:
	// LSTM-TD3's start_steps). Training only.
	Random bool
	// Epsilon is the probability that a step's action is a uniform draw
	// instead of the noisy policy output (exploration that reaches the
	// actions a saturated policy never tries). Training only.
	Epsilon float64
	Seed    uint64
	// Record, when set, receives every step (training only). The engine
	// calls senders from one goroutine, so Record needs no locking within
	// one run.
	Record func(s *Step)
}

// learnedAgent is what FDCC and RL-CC share: the policy, the gating, the
// exploration stream, the history of observations and the freeze on a bad
// output.
type learnedAgent struct {
	opt     *Learned
	actor   Actor
	limit   float64
	nObs    int
	maxHist int
	hist    []float64 // maxHist rows, oldest first
	histLen int
	k       int // history length used (≤ maxHist)
	noise   *rand.Rand
	frozen  bool
	steps   int
	lastOut float64 // the last action applied, in [-limit, limit]
	step    Step    // what record hands the recorder (reused: no allocation per step)
}

func newLearnedAgent(opt *Learned, info FlowInfo, nObs int) learnedAgent {
	a := learnedAgent{opt: opt, nObs: nObs}
	if opt.Policy != nil {
		obs, h := opt.Policy.Shape()
		if obs == nObs {
			a.actor = opt.Policy.NewActor()
			a.maxHist = h
			a.limit = opt.Policy.Limit()
		}
	}
	a.hist = make([]float64, a.maxHist*nObs)
	a.k = a.maxHist
	if opt.Noise > 0 || opt.Random || opt.Epsilon > 0 {
		a.noise = rand.New(rand.NewPCG(opt.Seed, uint64(uint32(info.ID))))
	}
	return a
}

// setK sets the history length used, bounded by the policy's.
func (a *learnedAgent) setK(k int) { a.k = min(max(k, 0), a.maxHist) }

// act evaluates the policy on obs and the history; ok is false when the
// agent is frozen or the output is not a finite number (which freezes it).
func (a *learnedAgent) act(obs []float64) (out float64, ok bool) {
	if a.frozen || a.actor == nil {
		return 0, false
	}
	n := min(a.histLen, a.k)
	// The newest n rows end the history; the policy wants them first.
	start := (a.histLen - n) * a.nObs
	out = a.actor.Act(a.hist[start:], n, obs)
	if math.IsNaN(out) || math.IsInf(out, 0) {
		a.frozen = true
		return 0, false
	}
	switch {
	case a.opt.Random || (a.opt.Epsilon > 0 && a.noise.Float64() < a.opt.Epsilon):
		out = (2*a.noise.Float64() - 1) * a.limit
	case a.noise != nil:
		out += a.noise.NormFloat64() * a.opt.Noise * a.limit
	}
	return clamp(out, -a.limit, a.limit), true
}

// record hands one step to the trainer's recorder, if any.
func (a *learnedAgent) record(s Step) {
	if a.opt.Record == nil {
		return
	}
	a.step = s
	a.opt.Record(&a.step)
}

// push appends obs to the history, dropping the oldest row when full.
func (a *learnedAgent) push(obs []float64) {
	if a.maxHist == 0 {
		return
	}
	if a.histLen == a.maxHist {
		copy(a.hist, a.hist[a.nObs:])
		a.histLen--
	}
	copy(a.hist[a.histLen*a.nObs:], obs)
	a.histLen++
}

// checkShape says why a policy cannot decide for an algorithm whose
// observations have obs values and whose history is at most hist long.
func checkShape(p Policy, obs, hist int) error {
	o, h := p.Shape()
	switch {
	case o != obs:
		return fmt.Errorf("the policy takes observations of %d values; this algorithm's have %d", o, obs)
	case h > hist:
		return fmt.Errorf("the policy reads a history of %d observations; this algorithm keeps at most %d", h, hist)
	case !(p.Limit() > 0) || math.IsInf(p.Limit(), 0):
		return fmt.Errorf("the policy's output limit %v is not a positive number", p.Limit())
	}
	return nil
}

// multiplier is the thesis' rescaling of an output (FDCC §1.4, RL-CC's
// _parse_action): 1 + inc·out above zero, 1/(1 − dec·out) below.
func multiplier(out, inc, dec float64) float64 {
	if out >= 0 {
		return 1 + inc*out
	}
	return 1 / (1 - dec*out)
}

// finite replaces a NaN or infinite observation by 0 and bounds the rest.
func finite(v, bound float64) float64 {
	if math.IsNaN(v) {
		return 0
	}
	return clamp(v, -bound, bound)
}
