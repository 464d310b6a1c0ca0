package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"cclab/cc/fdcc"
	"cclab/scenarios"
	"cclab/sim/rl"
)

// cmdTrain trains FDCC or RL-CC (seed 001) on the curriculum of dumbbell
// incasts and writes the policy, its learning curve and checkpoints.
func cmdTrain(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("train", flag.ContinueOnError)
	fs.SetOutput(stderr)
	def := rl.DefaultConfig("fdcc")
	adpg := rl.DefaultConfig("rlcc")
	out := fs.String("out", "", "directory for policy.safetensors, curve.csv, train.json and checkpoint/ (required)")
	resume := fs.Bool("resume", false, "continue the run whose checkpoint is in --out (its settings; --episodes may raise the total)")
	method := fs.String("method", "", "trainer: td3 (LSTM-TD3) or adpg (RL-CC's own, rlcc only); default td3 for fdcc, adpg for rlcc. "+
		"Flags not given take the method's defaults (the ones shown are TD3's; ADPG's differ where noted)")
	episodes := fs.Int("episodes", def.Episodes, fmt.Sprintf("episodes in all (adpg: %d)", adpg.Episodes))
	hidden := fs.Int("hidden", def.Hidden, fmt.Sprintf("width of every hidden layer (adpg: %d)", adpg.Hidden))
	seed := fs.Uint64("seed", def.Seed, "seed of the whole run")
	stageEps := fs.Int("stage-episodes", def.StageEpisodes, fmt.Sprintf("episodes per curriculum stage (adpg: %d)", adpg.StageEpisodes))
	stages := fs.String("stages", "2,4,8,16,32", "the curriculum's fan-ins (adpg: 4,8,32)")
	size := fs.String("size", "2MB", "payload per flow")
	round := fs.Int("round", def.Round, "episodes played at once with one snapshot of the policy (changes the result; adpg: one update per round)")
	updates := fs.Int("updates", def.Updates, "gradient steps per episode (td3)")
	batch := fs.Int("batch", def.Batch, "samples per gradient step (td3)")
	nstep := fs.Int("nstep", def.NStep, "n of the n-step return (td3)")
	noise := fs.Float64("noise", def.Noise, "exploration noise σ, in units of the output limit (td3)")
	randomEps := fs.Int("random-episodes", def.RandomEpisodes, "first episodes played with uniformly random actions (td3)")
	preact := fs.Float64("preact-penalty", def.TD3.PreActPenalty, "weight of the actor's pre-tanh penalty (td3)")
	lr := fs.Float64("lr", def.TD3.PiLR, fmt.Sprintf("Adam's learning rate, actor and critics (adpg: the actor's, %g)", adpg.ADPG.LR))
	epsilon := fs.Float64("epsilon", def.Epsilon, "probability that a training step's action is uniformly random (td3)")
	every := fs.Int("checkpoint-every", 20, "save a checkpoint every so many episodes (and at the end, and on Ctrl-C)")
	evalEvery := fs.Int("eval-every", def.EvalEvery, "evaluate the policy on a lone flow, 4-to-1 and 16-to-1 every so many episodes (0: never)")
	workers := fs.Int("workers", 0, "episodes simulated at once (0: one per core; does not change the result)")
	quiet := fs.Bool("quiet", false, "no progress bar")
	spread := fs.String("spread", "", "window the flows of an episode start in (default: 1ms, the thesis' \"within 1 ms\")")
	params := map[string]float64{}
	fs.Func("set", "an algorithm parameter in every episode, NAME=VALUE (repeatable; e.g. shareReward=0)", func(v string) error {
		name, val, ok := strings.Cut(v, "=")
		f, err := strconv.ParseFloat(strings.TrimSpace(val), 64)
		if !ok || err != nil {
			return fmt.Errorf("want NAME=VALUE, got %q", v)
		}
		params[strings.TrimSpace(name)] = f
		return nil
	})
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || (pos[0] != "fdcc" && pos[0] != "rlcc") {
		return &usageError{"want the algorithm to train: fdcc or rlcc"}
	}
	if *out == "" {
		return &usageError{"--out DIR is required"}
	}
	ckpt := filepath.Join(*out, "checkpoint")
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	var t *rl.Trainer
	if *resume {
		n := 0
		if set["episodes"] {
			n = *episodes
		}
		if t, err = rl.Resume(ckpt, n); err != nil {
			return err
		}
		if t.Config().Algo != pos[0] {
			return &usageError{fmt.Sprintf("the checkpoint in %s trains %s, not %s", ckpt, t.Config().Algo, pos[0])}
		}
	} else {
		if *method != "" && *method != "td3" && *method != "adpg" {
			return &usageError{fmt.Sprintf("--method: %q is not a trainer (td3 or adpg)", *method)}
		}
		if set["lr"] && !(*lr > 0) {
			return &usageError{fmt.Sprintf("--lr: %v is not positive", *lr)}
		}
		// The method's defaults, then the flags given.
		cfg := rl.MethodConfig(pos[0], *method)
		cfg.Method = cmp.Or(*method, cfg.Method)
		for _, f := range []struct {
			name  string
			apply func()
		}{
			{"episodes", func() { cfg.Episodes = *episodes }},
			{"hidden", func() { cfg.Hidden = *hidden }},
			{"seed", func() { cfg.Seed = *seed }},
			{"stage-episodes", func() { cfg.StageEpisodes = *stageEps }},
			{"round", func() { cfg.Round = *round }},
			{"updates", func() { cfg.Updates = *updates }},
			{"batch", func() { cfg.Batch = *batch }},
			{"nstep", func() { cfg.NStep = *nstep }},
			{"noise", func() { cfg.Noise = *noise }},
			{"eval-every", func() { cfg.EvalEvery = *evalEvery }},
			{"random-episodes", func() { cfg.RandomEpisodes = *randomEps }},
			{"preact-penalty", func() { cfg.TD3.PreActPenalty = *preact }},
			{"lr", func() { cfg.TD3.PiLR, cfg.TD3.QLR, cfg.ADPG.LR = *lr, *lr, *lr }},
			{"epsilon", func() { cfg.Epsilon = *epsilon }},
		} {
			if set[f.name] {
				f.apply()
			}
		}
		cfg.Workers = *workers
		if len(params) > 0 {
			cfg.Params = params // no method's defaults set any
		}
		if set["size"] {
			if cfg.Size, err = scenarios.ParseSize(*size); err != nil {
				return &usageError{"--size: " + err.Error()}
			}
		}
		if *spread != "" {
			d, err := scenarios.ParseTime(*spread)
			if err != nil || d <= 0 {
				return &usageError{fmt.Sprintf("--spread: %q is not a positive duration", *spread)}
			}
			cfg.Spread = d
		}
		if set["stages"] {
			cfg.Stages = nil
			for _, f := range strings.Split(*stages, ",") {
				n, err := strconv.Atoi(strings.TrimSpace(f))
				if err != nil {
					return &usageError{fmt.Sprintf("--stages: %q is not a fan-in", f)}
				}
				cfg.Stages = append(cfg.Stages, n)
			}
		}
		if t, err = rl.NewTrainer(cfg); err != nil {
			return &usageError{err.Error()}
		}
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	cfg := t.Config()
	fmt.Fprintf(stderr, "training %s with %s: %d episodes (from %d), hidden %d, seed %d, curriculum %v × %d episodes\n",
		cfg.Algo, cfg.Method, cfg.Episodes, t.Episode(), cfg.Hidden, cfg.Seed, cfg.Stages, cfg.StageEpisodes)
	lastSave := t.Episode()
	finish := func(interrupted bool) error {
		if err := t.Save(ckpt); err != nil {
			return err
		}
		if err := writeTrainOutputs(*out, t, interrupted, args); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: %d of %d episodes in %.0f s; policy in %s\n", cfg.Algo, t.Episode(), cfg.Episodes,
			curveWall(t).Seconds(), filepath.Join(*out, "policy.safetensors"))
		return nil
	}
	for t.Episode() < cfg.Episodes {
		p, err := t.Round(ctx)
		if err != nil {
			if errors.Is(err, context.Canceled) {
				if !*quiet {
					fmt.Fprintln(stderr)
				}
				if err := finish(true); err != nil {
					return err
				}
				return errInterrupted
			}
			return err
		}
		if !*quiet {
			fmt.Fprintf(stderr, "\r%s", progressLine(p, cfg.Method))
			if p.Eval != nil {
				fmt.Fprintf(stderr, "\n  eval: %s\n", evalLine(p.Eval))
			}
		}
		if t.Episode()-lastSave >= *every {
			if err := t.Save(ckpt); err != nil {
				return err
			}
			if err := writeTrainOutputs(*out, t, false, args); err != nil {
				return err
			}
			lastSave = t.Episode()
		}
	}
	if !*quiet {
		fmt.Fprintln(stderr)
	}
	return finish(false)
}

func progressLine(p rl.Progress, method string) string {
	const width = 24
	n := p.Episode * width / max(p.Episodes, 1)
	loss := fmt.Sprintf("critic loss %.4g", p.CriticLoss)
	if method == "adpg" {
		loss = fmt.Sprintf("ADPG loss %+.4g", p.ActorLoss)
	}
	return fmt.Sprintf("[%s%s] episode %d/%d  stage %d-to-1  reward %+.3f  %s  %.0f s   ",
		strings.Repeat("#", n), strings.Repeat(".", width-n), p.Episode, p.Episodes, p.FanIn, p.Reward, loss, p.Wall.Seconds())
}

func evalLine(e *rl.Eval) string {
	var b strings.Builder
	fmt.Fprintf(&b, "score %.3f reward %+.3f", e.Score, e.Reward)
	for i := range e.Unfair {
		fmt.Fprintf(&b, " | unfair %.4f peak queue %d B slowdown %.2f finished %v", e.Unfair[i], e.PeakQ[i], e.Slowdown[i], e.Finished[i])
	}
	return b.String()
}

func curveWall(t *rl.Trainer) time.Duration {
	c := t.Curve()
	if len(c) == 0 {
		return 0
	}
	return c[len(c)-1].Wall
}

// writePolicy writes a policy file atomically.
func writePolicy(path string, p *fdcc.Policy, meta map[string]string) error {
	f, err := os.Create(path + ".tmp")
	if err != nil {
		return err
	}
	if err := fdcc.SavePolicy(f, p, meta); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(path+".tmp", path)
}

// writeTrainOutputs writes the policy, the learning curve and train.json.
func writeTrainOutputs(dir string, t *rl.Trainer, interrupted bool, args []string) error {
	cfg := t.Config()
	meta := map[string]string{
		"algo":     cfg.Algo,
		"episodes": strconv.Itoa(t.Episode()),
		"seed":     strconv.FormatUint(cfg.Seed, 10),
		"command":  "cclab train " + strings.Join(args, " "),
		"wall_s":   strconv.FormatFloat(curveWall(t).Seconds(), 'f', 0, 64),
	}
	// policy.safetensors is the policy the evaluations ranked best (the
	// last one when the run has not evaluated); final.safetensors the last.
	best, score, ep := t.Best()
	chosen := t.Policy()
	bestMeta := maps.Clone(meta)
	if best != nil {
		chosen = best
		bestMeta["episodes"] = strconv.Itoa(ep)
		bestMeta["eval_score"] = strconv.FormatFloat(score, 'g', 6, 64)
	}
	if err := writePolicy(filepath.Join(dir, "policy.safetensors"), chosen, bestMeta); err != nil {
		return err
	}
	if err := writePolicy(filepath.Join(dir, "final.safetensors"), t.Policy(), meta); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "curve.csv"), rl.CurveCSV(t.Curve(), cfg.Eval), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "train.json"), rl.TrainJSON(t, interrupted, meta["command"]), 0o644)
}
