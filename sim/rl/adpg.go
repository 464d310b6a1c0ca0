package rl

import (
	"fmt"
	"math"
)

// ADPG is RL-CC's own trainer (Tessler et al., AAAI 2022; its code,
// github.com/NVlabs/RLCC, reinforcement_learning/agents/adpg.py with the
// settings of config/rlcc.yaml). It has no critic: the gradient of the
// loss with respect to each action is the observed rtt_reward itself, so
// the policy lowers its output wherever the flow's RTT inflation × √rate
// ended above the target and raises it wherever it ended below
// (including every step whose inflation is under β, where rtt_reward is
// −target·scale < 0). As adpg.py's _calculate_loss defines it, for one
// rollout of N agents (flows) sharing the policy, agent j having n steps
// with actions a_i = tanh(network output) ∈ [−1, 1] and rewards r_i, the
// rtt_reward (env/utils/feature_history.py, calc_adpg_reward) measured on
// the observation after action i:
//
//	R_i  = mean over k = 0 … n−1−i of γ^k·r_{i+k}     (the "average reward to go"; γ = discount 0.99)
//	L_j  = c_r · (1/n) Σ_i a_i·R_i
//	     + c_a · (1/n) Σ_{i<n−1} (1/(n−i)) Σ_{k>i} ½(a_i − a_k)²
//	loss = (1/N) Σ_j L_j
//
// R_i is data (no gradient flows into it); the second term, "action
// smoothing", pulls an agent's actions towards each other, and gradients
// flow through both of its actions. Then every gradient value is clipped
// to ±gradient_clip (0.5, clip_grad_value_) and Adam (lr 0.01, ε 1e-5)
// takes one step. The rollout is played with the deterministic policy:
// ADPG adds no exploration noise. adpg.py's network is a 12 × 12 ReLU MLP
// without biases, with orthogonal initialisation, on the raw observation
// (no normalisation).
//
// The lab's mapping: the networks are the lab's LSTM-TD3 actor (package
// cc/fdcc, whose memory branch reads the previous observation, so the
// policy sees RL-CC's history of two), of width Config.Hidden (12 by
// default for RL-CC, adpg.py's width), initialised as PyTorch's layers
// default; a rollout is one round's episodes, each flow an agent, and
// one Adam step follows each round. (adpg.py's rollouts are slices of
// long-running simulations: 1024 simulator steps for the first 50
// updates, then until every agent has 15 rewards; the lab's episodes are
// whole incasts, every flow finishing.) adpg.py's max_batch_size caps
// the steps an agent contributes (the first 8192).
type ADPGConfig struct {
	LR       float64 // Adam's learning rate (rlcc.yaml: learning_rate 0.01)
	Eps      float64 // Adam's ε (adpg.py: 1e-5)
	Clip     float64 // every gradient value clipped to ±Clip; 0: none (gradient_clip 0.5)
	RewardW  float64 // reward_loss_coeff (1)
	ActionW  float64 // action_loss_coeff (1)
	MaxSteps int     // steps an agent contributes at most (max_batch_size 8192)
}

// DefaultADPGConfig is rlcc.yaml's ADPG.
func DefaultADPGConfig() ADPGConfig {
	return ADPGConfig{LR: 0.01, Eps: 1e-5, Clip: 0.5, RewardW: 1, ActionW: 1, MaxSteps: 8192}
}

func (c ADPGConfig) validate() error {
	ok := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 }
	switch {
	case !ok(c.LR) || c.LR == 0:
		return fmt.Errorf("rl: adpg.lr: %v is not positive", c.LR)
	case !ok(c.Eps):
		return fmt.Errorf("rl: adpg.eps: %v is negative", c.Eps)
	case !ok(c.Clip):
		return fmt.Errorf("rl: adpg.clip: %v is negative", c.Clip)
	case !ok(c.RewardW) || !ok(c.ActionW):
		return fmt.Errorf("rl: adpg: loss weights %v, %v must not be negative", c.RewardW, c.ActionW)
	case c.MaxSteps < 2:
		return fmt.Errorf("rl: adpg.max-steps: %d, want at least 2", c.MaxSteps)
	}
	return nil
}

// rttRewardObs is the index of rtt_reward in RL-CC's observation
// (cc/rlcc.go: 0 the previous multiplier, 1 rtt_reward).
const rttRewardObs = 1

// adpgSteps is the number of steps of tr an ADPG agent contributes: the
// steps whose action was the policy's (up to the first frozen one) and
// that have a next observation, whose rtt_reward is their reward; at most
// max.
func adpgSteps(tr *Trajectory, max int) int {
	n := 0
	for n < tr.Len()-1 && tr.Valid[n] {
		n++
	}
	return min(n, max)
}

// adpgLoss computes one agent's ADPG loss on its actions a and rewards r
// (same length n ≥ 1), weighted by w (1/N), and writes its gradient with
// respect to each a_i into da. It takes O(n): the smoothing term's sums
// over later actions are suffix sums, its sums over earlier ones prefix
// sums.
func adpgLoss(a, r []float64, gamma, rewardW, actionW, w float64, da []float64) (rewardLoss, actionLoss float64) {
	n := len(a)
	nf := float64(n)
	// R_i: the discounted sum G_i = r_i + γ·G_{i+1}, over n − i terms.
	// adpg.py discounts only for 0 < γ < 1; otherwise it averages r[i:].
	g := gamma
	if !(gamma > 0 && gamma < 1) {
		g = 1
	}
	G := 0.0
	for i := n - 1; i >= 0; i-- {
		G = r[i] + g*G
		R := G / float64(n-i)
		rewardLoss += a[i] * R
		da[i] = rewardW * R / nf * w
	}
	rewardLoss *= rewardW / nf * w
	// Smoothing: row i is (1/(n−i)) Σ_{k>i} ½(a_i − a_k)²; with
	// S = Σ_{k>i} a_k, Q = Σ_{k>i} a_k², c = n−1−i:
	//   Σ_{k>i} (a_i − a_k)² = c·a_i² − 2·a_i·S + Q
	//   ∂row_i/∂a_i = (c·a_i − S)/(n−i)
	//   ∂row_i/∂a_k = −(a_i − a_k)/(n−i) for k > i, summed over i < k with
	//   P = Σ_{i<k} a_i/(n−i), W = Σ_{i<k} 1/(n−i): a_k·W − P.
	if actionW == 0 || n < 2 {
		return rewardLoss, 0
	}
	k := actionW / nf * w
	var S, Q float64
	for i := n - 1; i >= 0; i-- {
		c := float64(n - 1 - i)
		inv := 1 / float64(n-i)
		actionLoss += 0.5 * (c*a[i]*a[i] - 2*a[i]*S + Q) * inv
		da[i] += k * (c*a[i] - S) * inv
		S += a[i]
		Q += a[i] * a[i]
	}
	var P, W float64
	for i := range n {
		da[i] += k * (a[i]*W - P)
		inv := 1 / float64(n-i)
		P += a[i] * inv
		W += inv
	}
	return rewardLoss, actionLoss * k
}

// adpgStats is what one ADPG update reports.
type adpgStats struct {
	RewardLoss, ActionLoss float64
	Agents, Steps          int
}

// adpgUpdate does ADPG's policy update on a round's outcomes: every flow
// with at least two rewarded steps is an agent, in the order of the
// episodes and of their flows; their gradients are added in that order,
// clipped, and Adam takes one step. With no agent it changes nothing.
func (t *Trainer) adpgUpdate(outs []*Outcome) adpgStats {
	var st adpgStats
	cfg := t.cfg.ADPG
	for _, o := range outs {
		for i := range o.Traj {
			if adpgSteps(&o.Traj[i], cfg.MaxSteps) >= 2 {
				st.Agents++
			}
		}
	}
	if st.Agents == 0 {
		return st
	}
	O, H := t.arch.Obs, t.arch.Hist
	L := t.arch.ActLimit
	w := 1 / float64(st.Agents)
	var hist, obs, r, acts []float64
	var lens []int
	t.td3.ZeroActorGrad()
	for _, o := range outs {
		for j := range o.Traj {
			tr := &o.Traj[j]
			n := adpgSteps(tr, cfg.MaxSteps)
			if n < 2 {
				continue
			}
			st.Steps += n
			hist, obs = grow(hist, n*H*O), grow(obs, n*O)
			r, acts = grow(r, n), grow(acts, n)
			if cap(lens) < n {
				lens = make([]int, n)
			}
			lens = lens[:n]
			adpgInputs(tr, n, H, O, hist, lens, obs, r)
			t.td3.AddActorGrad(hist, lens, obs, func(y, dy []float64) float64 {
				// The actor outputs y = L·tanh(u); ADPG's action is tanh(u).
				for i, v := range y {
					acts[i] = v / L
				}
				rl, al := adpgLoss(acts, r, t.cfg.Gamma, cfg.RewardW, cfg.ActionW, w, dy)
				for i := range dy {
					dy[i] /= L
				}
				st.RewardLoss += rl
				st.ActionLoss += al
				return rl + al
			})
		}
	}
	t.td3.StepActor(cfg.Clip)
	return st
}

// adpgInputs writes the first n steps of tr as the actor's inputs (hist
// n×H×O, lens n, obs n×O) and their rewards r (n): each step's input is
// what the agent saw, its observation and the (up to H) observations
// before it, as Replay.Sample builds them; its reward the rtt_reward of
// the next observation.
func adpgInputs(tr *Trajectory, n, H, O int, hist []float64, lens []int, obs, r []float64) {
	for s := range n {
		copy(obs[s*O:(s+1)*O], tr.Obs[s*O:(s+1)*O])
		h := min(s, H)
		lens[s] = h
		copy(hist[s*H*O:], tr.Obs[(s-h)*O:s*O])
		r[s] = tr.Obs[(s+1)*O+rttRewardObs]
	}
}

func grow(b []float64, n int) []float64 {
	if cap(b) < n {
		return make([]float64, n)
	}
	return b[:n]
}
