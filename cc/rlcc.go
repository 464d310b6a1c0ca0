package cc

import "math"

// RL-CC (C. Tessler et al., "Reinforcement Learning for Datacenter
// Congestion Control", AAAI 2022; arXiv 2102.09337), the thesis' learned
// baseline, as its public code (github.com/NVlabs/RLCC,
// reinforcement_learning/config/rlcc.yaml, env/utils/feature_history.py,
// agents/adpg.py) defines it. A per-flow agent controls the flow's rate
// multiplicatively: out ∈ [−1, 1] becomes m = 1 + 0.2·out or
// 1/(1 − 0.2·out) (action_multiplier_inc/dec 0.2; m ∈ [0.83, 1.2]) and
// rate ← min(rate·m, line rate). It observes two features (agent_features:
// action, rtt_reward) over a history of two steps (history_length 2):
//
//	0 the previous multiplier m (1 at the start)
//	1 rtt_reward = (max(RTT/base RTT − β, 0)·√(rate/line rate) − target)·scale
//	  with β = 1.5, target = 0.064, scale = 12.5
//
// and its reward is −|rtt_reward|: the distance of inflation·√rate from
// the target (the paper's r = −(target − inflation·√rate)², with the
// code's β shift and scale), in its L1 form. Two departures, both
// measured in training: squared with the scale, a 32-to-1 episode's
// rewards reach −4000 and the critic's loss 10⁶; squared without it, a
// starving flow (inflation below β) scores −0.004 against 0 at the target,
// and TD3 settles on the minimum rate. The paper's own trainer (ADPG)
// follows the sign of rtt_reward, which the L1 form keeps.
//
// Choices the paper leaves to its simulator, named here: RTT inflation is
// RTT ÷ the flow's base RTT; the agent decides at most once per gate × the
// previous RTT on an ACK (the paper's agent steps on each RTT probe); the
// window is the host in-flight window of one BDP every algorithm gets in
// the FDCC thesis (L538). The lab trains RL-CC with the paper's own
// trainer, ADPG (sim/rl/adpg.go: the gradient of its loss with respect to
// each action is the rtt_reward that followed it), on the lab's LSTM-TD3
// actor of width 12 (adpg.py: a 12×12 MLP); `cclab train rlcc --method
// td3` trains it with TD3 on the reward above instead, which settles on
// the minimum rate. The policy the registry's rlcc decides with ships in
// cc/fdcc/shipped/rlcc.safetensors (provenance and measurements in
// cc/fdcc/shipped/README.md).
// RLCC is the rlcc registry entry deciding with opt's policy.
func RLCC(opt Learned) *Algorithm {
	o := opt
	return &Algorithm{
		WithPolicy: func(p Policy) (*Algorithm, error) {
			if err := checkShape(p, rlccObs, 8); err != nil {
				return nil, err
			}
			return RLCC(Learned{Policy: p}), nil
		},
		Name:  "rlcc",
		Title: "RL-CC (deep-RL rate control, Tessler et al.)",
		Help: "A neural network trained by reinforcement learning multiplies the flow's rate by 0.83 to 1.2 on each step, " +
			"steering its RTT inflation × √rate to a target, so that flows share the link without a switch's help. " +
			"The lab ships a policy trained with the paper's ADPG (cclab train rlcc): on 4- and 16-to-1 incasts of 20 MB " +
			"every flow finishes with an FCT slowdown near the fan-in and the bottleneck queue holds near the target " +
			"instead of one window per flow; give another with cc.policy.",
		Param: []Param{
			{Name: "inc", Kind: KindNumber, Default: 0.2, Min: 0.001, Max: 1, Live: true, Help: "action_multiplier_inc: m = 1 + inc·out for out ≥ 0 (RL-CC: 0.2)."},
			{Name: "dec", Kind: KindNumber, Default: 0.2, Min: 0.001, Max: 1, Live: true, Help: "action_multiplier_dec: m = 1/(1 − dec·out) for out < 0 (RL-CC: 0.2)."},
			{Name: "beta", Kind: KindNumber, Default: 1.5, Min: 0, Max: 100, Live: true, Help: "β: RTT inflation below it counts as none (RL-CC: 1.5)."},
			{Name: "target", Kind: KindNumber, Default: 0.064, Min: 0, Max: 100, Live: true, Help: "Target of inflation·√rate (RL-CC: 0.064)."},
			{Name: "scale", Kind: KindNumber, Default: 12.5, Min: 0.001, Max: 1000, Live: true, Help: "Scale of rtt_reward (RL-CC: 12.5)."},
			{Name: "gate", Kind: KindNumber, Default: 0.5, Min: 0, Max: 10, Live: true, Help: "Least time between two decisions, in previous RTTs (the lab's choice, as FDCC)."},
			{Name: "maxWindow", Kind: KindNumber, Default: 1, Min: 0.01, Max: 100, Live: true, Help: "Host in-flight window in BDPs (FDCC thesis L538: one BDP for every algorithm)."},
			rateParam("minRate", 100, "Lowest rate (the lab's floor; RL-CC's simulator does not publish one)."),
		},
		INT:                   IntSpec{},
		RateChangeReschedules: true,
		Series: []SeriesSpec{
			{Name: "rlcc_action", Unit: "", Help: "The rate multiplier applied at the last step (observation 1 of the next)."},
			{Name: "rlcc_rtt_reward", Unit: "", Help: "Observation 2: (max(inflation − β, 0)·√rate − target)·scale."},
			{Name: "rlcc_reward", Unit: "", Help: "The reward −|rtt_reward| of the previous action (the L1 form of the paper's −(target − inflation·√rate)²)."},
			{Name: "rlcc_frozen", Unit: "", Help: "Logged once when the policy's output is not a number: the agent stops deciding and the flow keeps its rate.", Stats: true},
		},
		NewSender: func(info FlowInfo, p Params) Sender {
			r := &rlcc{info: info, learnedAgent: newLearnedAgent(&o, info, rlccObs)}
			for name, v := range p {
				r.set(name, v)
			}
			return r
		},
	}
}

const rlccObs = 2

type rlcc struct {
	learnedAgent
	info FlowInfo

	inc, dec, beta, target, scale, gate, maxWin, minRate float64

	rate    float64
	lastM   float64
	last    Time
	lastRTT Time
	obs     [rlccObs]float64
	reward  float64
	logged  bool
}

func (r *rlcc) set(name string, v float64) bool {
	switch name {
	case "inc":
		r.inc = v
	case "dec":
		r.dec = v
	case "beta":
		r.beta = v
	case "target":
		r.target = v
	case "scale":
		r.scale = v
	case "gate":
		r.gate = v
	case "maxWindow":
		r.maxWin = v
	case "minRate":
		r.minRate = v * mbps
	default:
		return false
	}
	return true
}

func (r *rlcc) SetParam(env Env, name string, v float64) error {
	if !r.set(name, v) {
		return &ParamError{Param: name, Msg: "unknown parameter of rlcc"}
	}
	if name == "maxWindow" && r.lastM != 0 {
		r.apply(env)
	}
	return nil
}

func (r *rlcc) apply(env Env) {
	env.SetRate(rateBps(r.rate))
	env.SetWindow(max(int64(r.maxWin*float64(r.info.MaxBDP)), r.info.MTU))
}

func (r *rlcc) Start(env Env) {
	r.rate = float64(r.info.LineRate)
	r.lastM = 1
	r.last = env.Now()
	r.reward = math.NaN()
	r.apply(env)
	env.Gauge(0, 1)
}

func (r *rlcc) OnAck(env Env, a *Ack) {
	now := env.Now()
	rtt := now - a.SentAt
	if r.steps > 0 && float64(now-r.last) < r.gate*float64(r.lastRTT) {
		return
	}
	line := float64(r.info.LineRate)
	infl := float64(rtt) / float64(r.info.BaseRTT)
	rr := (max(infl-r.beta, 0)*math.Sqrt(r.rate/line) - r.target) * r.scale
	r.obs = [rlccObs]float64{r.lastM, finite(rr, 1e6)}
	if r.steps > 0 {
		r.reward = -math.Abs(r.obs[1])
		env.Gauge(2, r.reward)
	}
	env.Gauge(1, r.obs[1])
	out, ok := r.act(r.obs[:])
	if !ok {
		if r.frozen && !r.logged {
			env.Event(3, 1)
			r.logged = true
		}
	} else {
		m := multiplier(out, r.inc, r.dec)
		r.lastM, r.lastOut = m, out
		r.rate = clamp(r.rate*m, min(r.minRate, line), line)
		r.apply(env)
		env.Gauge(0, m)
	}
	r.record(Step{Flow: r.info.ID, T: now, Obs: r.obs[:], Action: out, Reward: r.reward, Frozen: !ok})
	r.push(r.obs[:])
	r.steps++
	r.last, r.lastRTT = now, rtt
}
