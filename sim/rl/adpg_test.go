package rl

import (
	"context"
	"math"
	"strings"
	"testing"
)

// adpgLossDirect is adpg.py's _calculate_loss for one agent written out
// term by term, O(n²): the reference adpgLoss's prefix and suffix sums
// must agree with.
func adpgLossDirect(a, r []float64, gamma, rewardW, actionW, w float64) float64 {
	n := len(a)
	var rl, al float64
	for i := range n {
		R := 0.0
		for k := i; k < n; k++ {
			g := 1.0
			if gamma > 0 && gamma < 1 {
				g = math.Pow(gamma, float64(k-i))
			}
			R += g * r[k]
		}
		R /= float64(n - i)
		rl += a[i] * R
		if i < n-1 {
			d := 0.0
			for k := i + 1; k < n; k++ {
				d += actionW * 0.5 * (a[i] - a[k]) * (a[i] - a[k])
			}
			al += d / float64(n-i)
		}
	}
	return (rewardW*rl/float64(n) + al/float64(n)) * w
}

// TestADPGLoss checks adpgLoss on literal cases: its value against the
// term-by-term loss and a hand computation, its gradient against central
// differences.
func TestADPGLoss(t *testing.T) {
	// n = 2, γ = 0.5, no smoothing: R_0 = (r0 + 0.5·r1)/2 = (1 + 1)/2 = 1,
	// R_1 = r1 = 2; loss = (a0·1 + a1·2)/2 = (0.5 − 0.5)/2 = 0 at a = (0.5, −0.25),
	// gradient (R_0, R_1)/2 = (0.5, 1).
	da := make([]float64, 2)
	rl, al := adpgLoss([]float64{0.5, -0.25}, []float64{1, 2}, 0.5, 1, 0, 1, da)
	if rl != 0 || al != 0 || da[0] != 0.5 || da[1] != 1 {
		t.Fatalf("hand case: losses %v %v gradient %v, want 0 0 [0.5 1]", rl, al, da)
	}
	for _, tc := range []struct {
		name             string
		a, r             []float64
		gamma, rw, aw, w float64
	}{
		{"two steps", []float64{0.3, -0.7}, []float64{1.5, -0.8}, 0.99, 1, 1, 1},
		{"seven steps, weighted", []float64{0.1, 0.9, -0.4, -0.4, 0.2, 0.6, -1}, []float64{-0.8, -0.8, 3, 12, 0.1, -0.5, 2}, 0.99, 1, 1, 0.25},
		{"undiscounted (γ = 1), other weights", []float64{0.5, -0.1, 0.3, 0.8}, []float64{2, -1, 0.5, 0.5}, 1, 0.5, 2, 1},
		{"γ = 0 averages as adpg.py does", []float64{0.5, -0.1, 0.3}, []float64{2, -1, 0.5}, 0, 1, 1, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := len(tc.a)
			da := make([]float64, n)
			rl, al := adpgLoss(tc.a, tc.r, tc.gamma, tc.rw, tc.aw, tc.w, da)
			want := adpgLossDirect(tc.a, tc.r, tc.gamma, tc.rw, tc.aw, tc.w)
			if math.Abs(rl+al-want) > 1e-12 {
				t.Fatalf("loss %v + %v = %v, term by term %v", rl, al, rl+al, want)
			}
			const h = 1e-6
			for i := range n {
				a := append([]float64(nil), tc.a...)
				a[i] += h
				lp := adpgLossDirect(a, tc.r, tc.gamma, tc.rw, tc.aw, tc.w)
				a[i] -= 2 * h
				lm := adpgLossDirect(a, tc.r, tc.gamma, tc.rw, tc.aw, tc.w)
				if num := (lp - lm) / (2 * h); math.Abs(num-da[i]) > 1e-7 {
					t.Errorf("∂L/∂a[%d] = %v, central difference %v", i, da[i], num)
				}
			}
		})
	}
}

// adpgTrainer is a small RL-CC ADPG trainer.
func adpgTrainer(t *testing.T) *Trainer {
	t.Helper()
	c := DefaultConfig("rlcc")
	c.Hidden = 8
	return newTrainer(t, c)
}

// TestADPGDirection is ADPG's defining behaviour on a literal case: one
// update on a flow whose every next observation has rtt_reward > 0
// (RTT inflation × √rate above the target) lowers the policy's output on
// that input; rtt_reward < 0 (below it, e.g. inflation under β: −0.8)
// raises it, with every setting at its default (the smoothing term is
// near zero: only the first step, with no history, acts differently).
func TestADPGDirection(t *testing.T) {
	for _, tc := range []struct {
		rtt  float64
		down bool
	}{{2.5, true}, {0.3, true}, {-0.8, false}} {
		tr := adpgTrainer(t)
		obs := []float64{1.1, tc.rtt} // previous multiplier, rtt_reward
		const steps = 6
		traj := Trajectory{}
		for range steps {
			traj.Obs = append(traj.Obs, obs...)
			traj.Action = append(traj.Action, 0)
			traj.Reward = append(traj.Reward, -math.Abs(tc.rtt))
			traj.Valid = append(traj.Valid, true)
		}
		p := tr.Policy()
		s := p.NewScratch()
		before := p.Act(s, obs, 1, obs)
		st := tr.adpgUpdate([]*Outcome{{Traj: []Trajectory{traj}}})
		if st.Agents != 1 || st.Steps != steps-1 {
			t.Fatalf("rtt_reward %v: %d agents, %d steps; want 1 and %d (the last step has no next observation)", tc.rtt, st.Agents, st.Steps, steps-1)
		}
		q := tr.Policy()
		after := q.Act(q.NewScratch(), obs, 1, obs)
		if (after < before) != tc.down || after == before {
			t.Fatalf("rtt_reward %v: output %v → %v, want it %s", tc.rtt, before, after, map[bool]string{true: "lower", false: "higher"}[tc.down])
		}
	}
}

// TestADPGInputsAreWhatTheAgentSaw: on a played episode, the inputs ADPG
// rebuilds from a trajectory give, through the policy that played it,
// exactly the actions the flows took (ADPG plays without noise, so its
// rollout is on-policy), and each step's reward is the rtt_reward the
// sender logged on the next step.
func TestADPGInputsAreWhatTheAgentSaw(t *testing.T) {
	tr := adpgTrainer(t)
	e := tr.episode(3, 42)
	e.Size = 500_000
	p := tr.Policy()
	outs, err := tr.play(context.Background(), []Episode{e}, p, 0, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	O, H := tr.arch.Obs, tr.arch.Hist
	s := p.NewScratch()
	checked := 0
	for _, traj := range outs[0].Traj {
		n := adpgSteps(&traj, 1<<20)
		if n < 2 {
			t.Fatalf("a flow with %d ADPG steps", n)
		}
		hist, obs, r := make([]float64, n*H*O), make([]float64, n*O), make([]float64, n)
		lens := make([]int, n)
		adpgInputs(&traj, n, H, O, hist, lens, obs, r)
		for i := range n {
			if got := p.Act(s, hist[i*H*O:(i+1)*H*O], lens[i], obs[i*O:(i+1)*O]); got != traj.Action[i] {
				t.Fatalf("step %d: rebuilt input gives %v, the flow took %v", i, got, traj.Action[i])
			}
			// The sender's reward of action i is −|rtt_reward| of step i+1.
			if want := -math.Abs(r[i]); traj.Reward[i+1] != want {
				t.Fatalf("step %d: reward %v, sender logged %v", i, want, traj.Reward[i+1])
			}
			checked++
		}
	}
	t.Logf("%d steps checked", checked)
}

// TestADPGUpdateIsDeterministic: the same rollout gives the same policy
// bit for bit; an agent with fewer than two rewarded steps (adpg.py skips
// them) changes nothing.
func TestADPGUpdateIsDeterministic(t *testing.T) {
	tr := adpgTrainer(t)
	e := tr.episode(4, 7)
	e.Size = 300_000
	outs, err := tr.play(context.Background(), []Episode{e}, tr.Policy(), 0, 0, false)
	if err != nil {
		t.Fatal(err)
	}
	a, b := adpgTrainer(t), adpgTrainer(t)
	a.adpgUpdate(outs)
	b.adpgUpdate(outs)
	if string(mustPolicy(t, a)) != string(mustPolicy(t, b)) {
		t.Fatal("the same rollout gave two policies")
	}
	if string(mustPolicy(t, a)) == string(mustPolicy(t, tr)) {
		t.Fatal("the update changed nothing")
	}
	c := adpgTrainer(t)
	short := Trajectory{Obs: []float64{1, 3, 1, 3}, Action: []float64{0, 0}, Reward: []float64{math.NaN(), -3}, Valid: []bool{true, true}}
	if st := c.adpgUpdate([]*Outcome{{Traj: []Trajectory{short}}}); st.Agents != 0 {
		t.Fatalf("a one-reward flow counted as an agent: %+v", st)
	}
	if string(mustPolicy(t, c)) != string(mustPolicy(t, tr)) {
		t.Fatal("an update with no agent changed the policy")
	}
}

func TestADPGConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		algo string
		edit func(*Config)
		want string
	}{
		{"fdcc", func(c *Config) { c.Method = "adpg" }, "adpg trains rlcc only"},
		{"rlcc", func(c *Config) { c.Method = "ppo" }, `"ppo" is not a trainer`},
		{"rlcc", func(c *Config) { c.ADPG.LR = 0 }, "adpg.lr"},
		{"rlcc", func(c *Config) { c.ADPG.Clip = math.NaN() }, "adpg.clip"},
		{"rlcc", func(c *Config) { c.ADPG.MaxSteps = 1 }, "adpg.max-steps"},
	} {
		c := DefaultConfig(tc.algo)
		tc.edit(&c)
		_, err := NewTrainer(c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %q", tc.algo, err, tc.want)
		}
	}
	// The defaults: each algorithm's own trainer; an empty method too.
	for algo, want := range map[string]string{"fdcc": "td3", "rlcc": "adpg"} {
		c := DefaultConfig(algo)
		c.Method = ""
		if got := newTrainer(t, c).Config().Method; got != want {
			t.Errorf("%s trains with %q by default, want %q", algo, got, want)
		}
	}
	// ADPG's learner is the TD3 learner's actor with ADPG's Adam.
	tr := adpgTrainer(t)
	if got := tr.td3.Config(); got.PiLR != 0.01 || got.AdamEps != 1e-5 {
		t.Fatalf("ADPG learner config %+v, want rlcc.yaml's lr 0.01 and adpg.py's ε 1e-5", got)
	}
}
