// Package rl trains the lab's learned congestion-control policies (FDCC and
// RL-CC, package cc) on the packet engine, FDCC with TD3 (package cc/fdcc)
// and RL-CC with its own trainer, ADPG (adpg.go; TD3 on request):
// episodes are independent engine runs, played in parallel with a frozen
// snapshot of the policy; TD3's steps go to a replay memory in a fixed
// order, and the gradient steps between rounds draw from it with their own
// seeded stream; ADPG takes one step on each round's episodes, added in
// their order. So a training run is the same for a seed whatever the
// number of cores.
package rl

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"cclab/cc"
	"cclab/scenarios"
	"cclab/sim"
)

// Episode is one training (or evaluation) run: an n-to-1 incast on a
// dumbbell whose senders and receiver hang off two switches joined by a
// bottleneck link of the same rate (the thesis' dumbbell, §1.8: "n flows
// are scheduled to send to the same destination within 1 ms").
type Episode struct {
	FanIn int
	Size  int64  // payload bytes per flow
	Rate  string // every link's rate, e.g. "100Gbps"
	Delay string // every link's propagation delay, e.g. "1us"
	// Spread is the window the flows start in; starts are Gaussian around
	// its middle with σ = Spread/6, clipped to it (the thesis' "within
	// 1 ms", see Config).
	Spread sim.Time
	// Limit ends the episode at this simulated time even if flows are
	// left (a poor early policy can starve them); 0: none.
	Limit sim.Time
	Seed  uint64
	// Params are the algorithm's parameters (registry names and units);
	// the rest keep their defaults.
	Params map[string]float64
}

// Scenario is the episode as a lab scenario (JSON), with algo as every
// flow's algorithm.
func (e Episode) Scenario(algo string) []byte {
	rng := rand.New(rand.NewPCG(e.Seed, 0x5eed))
	var flows []string
	for i := 0; i < e.FanIn; i++ {
		t := float64(e.Spread)/2 + rng.NormFloat64()*float64(e.Spread)/6
		t = math.Max(0, math.Min(float64(e.Spread), t))
		flows = append(flows, fmt.Sprintf(`{"src": "h%d", "dst": "r0", "size": "%dB", "start": "%dps"}`, i, e.Size, int64(t)))
	}
	params := ""
	if len(e.Params) > 0 {
		b, _ := json.Marshal(e.Params)
		params = fmt.Sprintf(`, "params": %s`, b)
	}
	dur := ""
	if e.Limit > 0 {
		dur = fmt.Sprintf(` "duration": "%dps",`, int64(e.Limit))
	}
	return fmt.Appendf(nil, `{
  "name": "train-%dto1",
  "description": "Training episode: %d-to-1 incast on a dumbbell.",
  "seed": %d,%s
  "topology": {"kind": "dumbbell", "senders": %d, "receivers": 1,
    "hostLink": {"rate": %q, "delay": %q}, "bottleneck": {"rate": %q, "delay": %q}},
  "cc": {"algorithm": %q%s},
  "workload": [{"kind": "flows", "flows": [%s]}]
}`, e.FanIn, e.FanIn, e.Seed, dur, e.FanIn, e.Rate, e.Delay, e.Rate, e.Delay, algo, params, strings.Join(flows, ",\n    "))
}

// Trajectory is what one flow's agent did in an episode: its observations,
// the actions it took on them and the rewards that followed.
// Reward[t] is the reward of Action[t-1] (NaN at t = 0); Valid[t] is false
// where the agent gave no action (frozen).
type Trajectory struct {
	Obs    []float64 // len(Action) × obs size
	Action []float64
	Reward []float64
	Valid  []bool
}

// Len is the number of steps.
func (t *Trajectory) Len() int { return len(t.Action) }

// Outcome is what an episode measured.
type Outcome struct {
	Traj     []Trajectory // by flow id
	Steps    int
	Reward   float64 // mean reward over every step that has one
	Finished int     // flows that finished
	Flows    int
	Result   *sim.Result
	Events   uint64
}

// RunEpisode plays one episode with the learned algorithm entry a (its
// Record is replaced by the episode's collector). It builds the scenario
// with algo's name, then swaps the registry's entry for a.
func RunEpisode(ctx context.Context, e Episode, newAlgo func(rec func(*cc.Step)) *cc.Algorithm, obs int) (*Outcome, error) {
	out := &Outcome{Flows: e.FanIn, Traj: make([]Trajectory, e.FanIn)}
	rec := func(s *cc.Step) {
		if int(s.Flow) >= len(out.Traj) {
			return
		}
		t := &out.Traj[s.Flow]
		t.Obs = append(t.Obs, s.Obs[:obs]...)
		t.Action = append(t.Action, s.Action)
		t.Reward = append(t.Reward, s.Reward)
		t.Valid = append(t.Valid, !s.Frozen)
	}
	a := newAlgo(rec)
	sc, err := scenarios.Parse(e.Scenario(a.Name))
	if err != nil {
		return nil, fmt.Errorf("rl: episode scenario: %w", err)
	}
	cfg, _, err := scenarios.Build(sc)
	if err != nil {
		return nil, fmt.Errorf("rl: building the episode: %w", err)
	}
	for i := range cfg.Algos {
		if cfg.Algos[i].Algo.Name == a.Name {
			cfg.Algos[i].Algo = a
		}
	}
	cfg.Telemetry = sim.TelemetryConfig{}
	s, err := sim.New(*cfg)
	if err != nil {
		return nil, fmt.Errorf("rl: episode: %w", err)
	}
	const slice = sim.Time(200 * cc.Microsecond)
	for !s.Done() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := s.RunUntil(s.Now() + slice); err != nil {
			return nil, fmt.Errorf("rl: episode: %w", err)
		}
	}
	out.Result = s.Result()
	out.Finished = out.Result.FlowsFinished()
	out.Events = s.Events()
	var sum float64
	var n int
	for i := range out.Traj {
		t := &out.Traj[i]
		out.Steps += t.Len()
		for _, r := range t.Reward {
			if !math.IsNaN(r) {
				sum += r
				n++
			}
		}
	}
	if n > 0 {
		out.Reward = sum / float64(n)
	}
	return out, nil
}

// RunAlgorithm plays the episode with a registered algorithm at its
// defaults (the baselines the learned ones are measured against).
func RunAlgorithm(ctx context.Context, e Episode, algo string) (*sim.Result, error) {
	sc, err := scenarios.Parse(e.Scenario(algo))
	if err != nil {
		return nil, fmt.Errorf("rl: episode scenario: %w", err)
	}
	cfg, _, err := scenarios.Build(sc)
	if err != nil {
		return nil, fmt.Errorf("rl: building the episode: %w", err)
	}
	cfg.Telemetry = sim.TelemetryConfig{}
	s, err := sim.New(*cfg)
	if err != nil {
		return nil, fmt.Errorf("rl: episode: %w", err)
	}
	for !s.Done() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := s.RunUntil(s.Now() + 200*sim.Time(cc.Microsecond)); err != nil {
			return nil, fmt.Errorf("rl: episode: %w", err)
		}
	}
	return s.Result(), nil
}
