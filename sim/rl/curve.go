package rl

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// CurveCSV is the learning curve as CSV: one row per round, with the
// evaluation's columns (per evaluation episode, named by its fan-in) left
// empty on rounds that did not evaluate.
func CurveCSV(curve []Progress, eval []Episode) []byte {
	var b strings.Builder
	b.WriteString("episode,fan_in,reward,critic_loss,actor_loss,q,steps,replay,wall_s,eval_reward,eval_score")
	for _, e := range eval {
		fmt.Fprintf(&b, ",unfair_%dto1,peak_queue_%dto1_B,slowdown_%dto1,finished_%dto1", e.FanIn, e.FanIn, e.FanIn, e.FanIn)
	}
	b.WriteByte('\n')
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for _, p := range curve {
		fmt.Fprintf(&b, "%d,%d,%s,%s,%s,%s,%d,%d,%s,", p.Episode, p.FanIn, f(p.Reward), f(p.CriticLoss), f(p.ActorLoss), f(p.Q), p.Steps, p.Replay, f(p.Wall.Seconds()))
		if p.Eval == nil {
			b.WriteString(strings.Repeat(",", 1+4*len(eval)))
		} else {
			b.WriteString(f(p.Eval.Reward) + "," + f(p.Eval.Score))
			for i := range eval {
				if i < len(p.Eval.Unfair) {
					fmt.Fprintf(&b, ",%s,%d,%s,%t", f(p.Eval.Unfair[i]), p.Eval.PeakQ[i], f(p.Eval.Slowdown[i]), p.Eval.Finished[i])
				} else {
					b.WriteString(",,,,")
				}
			}
		}
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// TrainJSON describes a training run for the file beside its policy: the
// command that reproduces it, its settings, how far it got and how long
// it took.
func TrainJSON(t *Trainer, interrupted bool, command string) []byte {
	type out struct {
		Command     string  `json:"command"`
		Algo        string  `json:"algo"`
		Seed        uint64  `json:"seed"`
		Episodes    int     `json:"episodes"`
		Played      int     `json:"played"`
		Interrupted bool    `json:"interrupted"`
		WallSeconds float64 `json:"wallSeconds"`
		Config      Config  `json:"config"`
	}
	cfg := t.Config()
	o := out{Command: command, Algo: cfg.Algo, Seed: cfg.Seed, Episodes: cfg.Episodes, Played: t.Episode(), Interrupted: interrupted, Config: cfg}
	if c := t.Curve(); len(c) > 0 {
		o.WallSeconds = c[len(c)-1].Wall.Seconds()
	}
	data, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		return []byte(fmt.Sprintf("{\"error\": %q}\n", err.Error()))
	}
	return append(data, '\n')
}
