package rl

import (
	"bytes"
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"cclab/cc"
	"cclab/cc/fdcc"
	"cclab/sim"
)

// TestReplaySampleNStep checks a drawn sample against a hand-built
// trajectory: the n-step return, its discount, the action and the
// histories before the state and the state it bootstraps from.
func TestReplaySampleNStep(t *testing.T) {
	// One trajectory of 5 steps of 2-value observations: obs t = (t, 10t);
	// reward t = t (reward 0 is NaN, as a flow's first step has none).
	tr := Trajectory{Obs: []float64{0, 0, 1, 10, 2, 20, 3, 30, 4, 40}, Action: []float64{0.1, 0.2, 0.3, 0.4, 0.5},
		Reward: []float64{math.NaN(), 1, 2, 3, 4}, Valid: []bool{true, true, true, true, true}}
	r := NewReplay(100, 2)
	r.Add([]Trajectory{tr, {Obs: []float64{9, 9}, Action: []float64{1}, Reward: []float64{math.NaN()}, Valid: []bool{true}}})
	if r.Steps() != 5 {
		t.Fatalf("steps %d, want 5 (a one-step trajectory has no transition)", r.Steps())
	}
	sp := Sampling{Hist: 3, K: 2, NStep: 2, Gamma: 0.5}
	var b fdcc.Batch
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[float64]bool{}
	for i := 0; i < 50; i++ {
		r.Sample(rng, 1, sp, &b)
		s := int(math.Round(b.Act[0]*10)) - 1
		seen[b.Act[0]] = true
		if s > 3 {
			t.Fatalf("sampled the last step %d, which has no next state", s)
		}
		m := min(2, 4-s)
		want, g := 0.0, 1.0
		for j := 1; j <= m; j++ {
			want += g * float64(s+j)
			g *= 0.5
		}
		if b.Ret[0] != want || b.Disc[0] != g {
			t.Fatalf("step %d: return %v discount %v, want %v %v", s, b.Ret[0], b.Disc[0], want, g)
		}
		if b.Obs[0] != float64(s) || b.NextObs[0] != float64(s+m) {
			t.Fatalf("step %d: obs %v next %v", s, b.Obs[:2], b.NextObs[:2])
		}
		if hl := min(s, 2); b.HistLen[0] != hl || (hl > 0 && b.Hist[2*(hl-1)] != float64(s-1)) {
			t.Fatalf("step %d: history %v len %d", s, b.Hist, b.HistLen[0])
		}
		if hl := min(s+m, 2); b.NextHistLen[0] != hl || b.NextHist[2*(hl-1)] != float64(s+m-1) {
			t.Fatalf("step %d: next history %v len %d", s, b.NextHist, b.NextHistLen[0])
		}
	}
	if len(seen) != 4 {
		t.Fatalf("sampled actions %v, want all four steps that have a successor", seen)
	}
}

// tinyConfig is a few tiny episodes of algo with its own trainer, or
// with TD3 for "rlcc-td3".
func tinyConfig(algo string) Config {
	method := ""
	if algo == "rlcc-td3" {
		algo, method = "rlcc", "td3"
	}
	c := MethodConfig(algo, method)
	c.Hidden, c.Episodes, c.Round, c.Updates, c.Batch = 8, 4, 2, 3, 8
	c.Stages, c.StageEpisodes = []int{2, 3}, 2
	c.Size, c.Spread = 30_000, 3*sim.Time(cc.Microsecond)/2 // the spread 30 KB flows had before it was 1 ms: they overlap
	c.EvalEvery = 4
	if c.Method == "td3" {
		c.RandomEpisodes = 2
	} else {
		c.Size = 200_000 // enough steps per flow for ADPG's rollouts
	}
	return c
}

// TestTrainSmoke is CI's training run: a few tiny episodes, for FDCC
// (TD3), RL-CC (ADPG) and RL-CC with TD3. The losses are finite, the
// policy's weights change, every episode's flows finish, and a second run
// with the same seed gives the same curve and policy whatever the number
// of workers.
func TestTrainSmoke(t *testing.T) {
	for _, algo := range []string{"fdcc", "rlcc", "rlcc-td3"} {
		t.Run(algo, func(t *testing.T) {
			run := func(workers int) (*Trainer, []Progress) {
				c := tinyConfig(algo)
				c.Workers = workers
				tr, err := NewTrainer(c)
				if err != nil {
					t.Fatal(err)
				}
				for tr.Episode() < c.Episodes {
					if _, err := tr.Round(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
				return tr, tr.Curve()
			}
			first := mustPolicy(t, newTrainer(t, tinyConfig(algo)))
			tr, curve := run(1)
			if len(curve) != 2 {
				t.Fatalf("%d curve points, want 2 rounds", len(curve))
			}
			adpg := tr.Config().Method == "adpg"
			if want := map[string]string{"fdcc": "td3", "rlcc": "adpg", "rlcc-td3": "td3"}[algo]; tr.Config().Method != want {
				t.Fatalf("trained with %q, want %q", tr.Config().Method, want)
			}
			for _, p := range curve {
				if p.Steps == 0 || math.IsNaN(p.CriticLoss) || math.IsInf(p.CriticLoss, 0) || math.IsNaN(p.Reward) {
					t.Fatalf("round %+v", p)
				}
				// ADPG has no critic and a loss on every round; it keeps
				// no replay memory.
				if adpg && (p.CriticLoss != 0 || p.ActorLoss == 0 || math.IsNaN(p.ActorLoss) || math.IsInf(p.ActorLoss, 0) || p.Replay != 0) {
					t.Fatalf("ADPG round %+v", p)
				}
			}
			if ev := curve[len(curve)-1].Eval; ev == nil || len(ev.Finished) != 3 { // 1, 4 and 16-to-1
				t.Fatalf("last round's evaluation %+v", ev)
			}
			if reflect.DeepEqual(first, mustPolicy(t, tr)) {
				t.Fatal("training did not change the policy")
			}
			tr2, curve2 := run(3)
			for i := range curve {
				a, b := curve[i], curve2[i]
				a.Wall, b.Wall = 0, 0
				if !reflect.DeepEqual(a, b) {
					t.Fatalf("round %d differs with 3 workers:\n%+v\n%+v", i, a, b)
				}
			}
			if !reflect.DeepEqual(mustPolicy(t, tr), mustPolicy(t, tr2)) {
				t.Fatal("same seed, different policy")
			}
		})
	}
}

// TestResumeIsExact: train 2 rounds, save, resume, train 1 more equals 3
// rounds straight, with TD3 and with ADPG.
func TestResumeIsExact(t *testing.T) {
	for _, algo := range []string{"fdcc", "rlcc"} {
		t.Run(algo, func(t *testing.T) { testResumeIsExact(t, algo) })
	}
}

func testResumeIsExact(t *testing.T, algo string) {
	c := tinyConfig(algo)
	c.Episodes, c.EvalEvery = 6, 2
	straight := newTrainer(t, c)
	for straight.Episode() < 6 {
		if _, err := straight.Round(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	part := newTrainer(t, c)
	for part.Episode() < 4 {
		if _, err := part.Round(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	if err := part.Save(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := Resume(dir, 3); err == nil || !strings.Contains(err.Error(), "played 4 already") {
		t.Fatalf("resuming to 3 episodes after 4: error %v", err)
	}
	resumed, err := Resume(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if resumed.Config().Method != straight.Config().Method {
		t.Fatalf("resumed with %q, started with %q", resumed.Config().Method, straight.Config().Method)
	}
	if _, err := resumed.Round(context.Background()); err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(mustPolicy(t, part), mustPolicy(t, resumed)) {
		t.Fatal("the resumed round did not train")
	}
	if !reflect.DeepEqual(mustPolicy(t, straight), mustPolicy(t, resumed)) {
		t.Fatal("resumed run's policy differs from the straight run's")
	}
	// The best policy so far survives the checkpoint.
	sb, ss, se := straight.Best()
	rb, rs, re := resumed.Best()
	if sb == nil || rb == nil || ss != rs || se != re {
		t.Fatalf("best: straight %v %v at %d, resumed %v %v at %d", sb != nil, ss, se, rb != nil, rs, re)
	}
	var x, y bytes.Buffer
	if err := fdcc.SavePolicy(&x, sb, nil); err != nil {
		t.Fatal(err)
	}
	if err := fdcc.SavePolicy(&y, rb, nil); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(x.Bytes(), y.Bytes()) {
		t.Fatal("resumed run's best policy differs")
	}
}

func TestCancelledRoundLeavesTrainer(t *testing.T) {
	c := tinyConfig("fdcc")
	tr := newTrainer(t, c)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := tr.Round(ctx); err == nil {
		t.Fatal("a cancelled round succeeded")
	}
	if tr.Episode() != 0 || len(tr.Curve()) != 0 {
		t.Fatalf("cancelled round counted: episode %d", tr.Episode())
	}
	ref := newTrainer(t, c)
	if _, err := tr.Round(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := ref.Round(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(mustPolicy(t, tr), mustPolicy(t, ref)) {
		t.Fatal("a cancelled round changed what followed")
	}
}

func TestConfigErrorsNameTheField(t *testing.T) {
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Algo = "dcqcn" }, `"dcqcn" cannot be trained`},
		{func(c *Config) { c.Hidden = 0 }, "hidden"},
		{func(c *Config) { c.Stages = []int{2, 0} }, "stages"},
		{func(c *Config) { c.Gamma = math.NaN() }, "gamma"},
		{func(c *Config) { c.Size = 10 }, "size"},
		{func(c *Config) { c.Params = map[string]float64{"nope": 1} }, "params.nope"},
		{func(c *Config) { c.EvalEvery = -5 }, "eval-every"},
		{func(c *Config) { c.Workers = -1 }, "workers"},
		{func(c *Config) { c.Params = map[string]float64{"alpha": 7} }, "params.alpha"},
	} {
		c := DefaultConfig("fdcc")
		tc.edit(&c)
		_, err := NewTrainer(c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("error %v, want one naming %q", err, tc.want)
		}
	}
}

// Config.Params reach every episode's algorithm: the thesis' literal
// reward (shareReward 0) and the lab's fair-share one give different
// rewards on the same episode.
func TestParamsReachEpisodes(t *testing.T) {
	rewards := map[float64]float64{}
	for _, share := range []float64{0, 1} {
		c := DefaultConfig("fdcc")
		c.Episodes, c.Round, c.Updates, c.EvalEvery, c.Stages, c.Size = 1, 1, 0, 0, []int{4}, 200_000
		c.Params = map[string]float64{"shareReward": share}
		tr := newTrainer(t, c)
		p, err := tr.Round(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		rewards[share] = p.Reward
	}
	if rewards[0] == rewards[1] {
		t.Fatalf("shareReward 0 and 1 gave the same mean reward %v", rewards[0])
	}
}

func newTrainer(t *testing.T, c Config) *Trainer {
	t.Helper()
	tr, err := NewTrainer(c)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// mustPolicy is the trainer's current policy as bytes.
func mustPolicy(t *testing.T, tr *Trainer) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := fdcc.SavePolicy(&b, tr.Policy(), nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestResumeBeforeADPG: a checkpoint written before the Method setting
// (trainer.json without it) was TD3's, and resumes as TD3 even for RL-CC,
// whose default is now ADPG.
func TestResumeBeforeADPG(t *testing.T) {
	tr := newTrainer(t, tinyConfig("rlcc-td3"))
	if _, err := tr.Round(context.Background()); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := tr.Save(dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "trainer.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	old := strings.Replace(string(raw), `"Method": "td3",`, "", 1)
	if old == string(raw) {
		t.Fatal("trainer.json has no Method to remove")
	}
	if err := os.WriteFile(path, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	back, err := Resume(dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	if back.Config().Method != "td3" {
		t.Fatalf("an old RL-CC checkpoint resumed with %q", back.Config().Method)
	}
}
