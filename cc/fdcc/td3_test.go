package fdcc

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

// batches returns count random batches of n samples with history lengths
// drawn uniformly from [0, Hist].
func batches(seed uint64, a Arch, n, count int) []*Batch {
	rng := rand.New(rand.NewPCG(seed, 77))
	bs := make([]*Batch, count)
	for i := range bs {
		lens := make([]int, n)
		for j := range lens {
			lens[j] = rng.IntN(a.Hist + 1)
		}
		bs[i] = randBatch(rng, a, lens)
	}
	return bs
}

func mustTD3(t testing.TB, a Arch, cfg TD3Config, seed uint64) *TD3 {
	td, err := NewTD3(a, cfg, seed)
	if err != nil {
		t.Fatal(err)
	}
	return td
}

func checkpointBytes(t testing.TB, td *TD3) []byte {
	var buf bytes.Buffer
	if err := SaveCheckpoint(&buf, td, nil); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestUpdateDeterministic: the same seed and batches give the same learner
// bit for bit; another seed does not.
func TestUpdateDeterministic(t *testing.T) {
	a := Arch{Obs: 4, Hist: 4, Hidden: 6, ActLimit: 2}
	bs := batches(1, a, 16, 6)
	run := func(seed uint64) ([]byte, []Stats) {
		td := mustTD3(t, a, DefaultTD3Config(), seed)
		var st []Stats
		for _, b := range bs {
			st = append(st, td.Update(b))
		}
		return checkpointBytes(t, td), st
	}
	c1, s1 := run(7)
	c2, s2 := run(7)
	c3, _ := run(8)
	if !bytes.Equal(c1, c2) {
		t.Fatal("two runs with the same seed differ")
	}
	for i := range s1 {
		if s1[i] != s2[i] {
			t.Fatalf("update %d: stats %+v, then %+v", i, s1[i], s2[i])
		}
		if s1[i].ActorUpdated != (i%2 == 0) {
			t.Errorf("update %d: actor updated %v with policy delay 2", i, s1[i].ActorUpdated)
		}
	}
	if bytes.Equal(c1, c3) {
		t.Fatal("another seed gives the same learner")
	}
}

// TestCheckpointResume: N updates, save, load, M updates equals N+M
// updates bit for bit (networks, targets, Adam state, update count and the
// noise stream: the two final checkpoints are the same bytes).
func TestCheckpointResume(t *testing.T) {
	a := Arch{Obs: 3, Hist: 5, Hidden: 7, ActLimit: 1}
	cfg := DefaultTD3Config()
	cfg.PolicyDelay = 3
	bs := batches(2, a, 12, 10)
	const n = 4 // N updates before the save (not a multiple of the delay)

	whole := mustTD3(t, a, cfg, 21)
	var want []Stats
	for _, b := range bs {
		want = append(want, whole.Update(b))
	}

	first := mustTD3(t, a, cfg, 21)
	for _, b := range bs[:n] {
		first.Update(b)
	}
	saved := checkpointBytes(t, first)
	resumed, meta, err := LoadCheckpoint(bytes.NewReader(saved))
	if err != nil {
		t.Fatal(err)
	}
	if meta[metaUpdates] != fmt.Sprint(n) || resumed.Updates() != n {
		t.Fatalf("resumed at %d updates (meta %q), want %d", resumed.Updates(), meta[metaUpdates], n)
	}
	if resumed.Config() != cfg || resumed.Arch() != a {
		t.Fatalf("resumed config %+v arch %+v", resumed.Config(), resumed.Arch())
	}
	for i, b := range bs[n:] {
		if got := resumed.Update(b); got != want[n+i] {
			t.Fatalf("update %d after resuming: %+v, uninterrupted %+v", n+i, got, want[n+i])
		}
	}
	if !bytes.Equal(checkpointBytes(t, resumed), checkpointBytes(t, whole)) {
		t.Fatal("resumed learner differs from the uninterrupted one")
	}
}

func TestCheckpointErrors(t *testing.T) {
	a := Arch{Obs: 2, Hist: 2, Hidden: 3, ActLimit: 1}
	td := mustTD3(t, a, DefaultTD3Config(), 1)
	td.Update(batches(3, a, 4, 1)[0])
	good := checkpointBytes(t, td)
	if err := SaveCheckpoint(&bytes.Buffer{}, td, map[string]string{"fdcc.mine": "x"}); err == nil {
		t.Error("a reserved metadata key was accepted")
	}
	// Drop a tensor, add one, or change the metadata, by rewriting the file.
	edit := func(f func(tensors map[string][]float64, shapes map[string][]int, meta map[string]string)) []byte {
		return rewrite(t, good, f)
	}
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"missing Adam moment", edit(func(ts map[string][]float64, _ map[string][]int, _ map[string]string) {
			delete(ts, "adam_q.exp_avg_sq.q2.post_combined_layers.2.bias")
		}), "adam_q.exp_avg_sq.q2.post_combined_layers.2.bias is missing"},
		{"missing target", edit(func(ts map[string][]float64, _ map[string][]int, _ map[string]string) {
			delete(ts, "target.q1.mem_lstm_layers.0.weight_hh_l0")
		}), "target.q1.mem_lstm_layers.0.weight_hh_l0 is missing"},
		{"unexpected tensor", edit(func(ts map[string][]float64, sh map[string][]int, _ map[string]string) {
			ts["q3.cur_feature_layers.0.bias"] = []float64{1, 2, 3}
			sh["q3.cur_feature_layers.0.bias"] = []int{3}
		}), "q3.cur_feature_layers.0.bias is unexpected"},
		{"bad noise state", edit(func(_ map[string][]float64, _ map[string][]int, m map[string]string) {
			m[metaRNG] = "zz"
		}), metaRNG},
		{"bad config", edit(func(_ map[string][]float64, _ map[string][]int, m map[string]string) {
			m[metaPolyak] = "1.5"
		}), "Polyak"},
		{"a policy, not a checkpoint", func() []byte {
			var buf bytes.Buffer
			if err := SavePolicy(&buf, td.Policy(), nil); err != nil {
				t.Fatal(err)
			}
			return buf.Bytes()
		}(), "format"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := LoadCheckpoint(bytes.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestLearnsOneStep: TD3 learns a one-step task, reward −(a − f(o))² with
// f(o) = 0.6·o₀ − 0.3·o₁ and Disc 0, from uniformly random actions, with a
// history of distractors. After 500 updates of batch 64 (hidden size 32,
// seed 1) the policy's mean absolute error over 1000 fixed test inputs is
// under 0.05 (0.032 when written; 0.29 untrained, 0.043 after 300
// updates, 0.025 after 900).
func TestLearnsOneStep(t *testing.T) {
	a := Arch{Obs: 2, Hist: 2, Hidden: 32, ActLimit: 1}
	td := mustTD3(t, a, DefaultTD3Config(), 1)
	rng := rand.New(rand.NewPCG(1, 2))
	f := func(o []float64) float64 { return 0.6*o[0] - 0.3*o[1] }
	const N = 64
	b := &Batch{N: N,
		Hist: make([]float64, N*a.Hist*a.Obs), Obs: make([]float64, N*a.Obs), HistLen: make([]int, N),
		Act: make([]float64, N), Ret: make([]float64, N), Disc: make([]float64, N),
		NextHist: make([]float64, N*a.Hist*a.Obs), NextObs: make([]float64, N*a.Obs), NextHistLen: make([]int, N)}
	fill := func(v []float64) {
		for i := range v {
			v[i] = 2*rng.Float64() - 1
		}
	}
	meanErr := func() float64 {
		p := td.Policy()
		s := p.NewScratch()
		r := rand.New(rand.NewPCG(3, 4)) // the same test inputs every time
		e := 0.0
		for range 1000 {
			o := []float64{2*r.Float64() - 1, 2*r.Float64() - 1}
			h := []float64{2*r.Float64() - 1, 2*r.Float64() - 1}
			e += math.Abs(p.Act(s, h, r.IntN(2), o) - f(o))
		}
		return e / 1000
	}
	before := meanErr()
	for range 500 {
		fill(b.Hist)
		fill(b.Obs)
		fill(b.Act)
		fill(b.NextHist)
		fill(b.NextObs)
		for i := range N {
			b.HistLen[i] = rng.IntN(a.Hist + 1)
			b.NextHistLen[i] = min(b.HistLen[i]+1, a.Hist)
			d := b.Act[i] - f(b.Obs[i*a.Obs:])
			b.Ret[i] = -d * d
		}
		td.Update(b)
	}
	after := meanErr()
	t.Logf("mean |π(o) − f(o)|: %.4f before, %.4f after 500 updates", before, after)
	if after > 0.05 {
		t.Fatalf("mean error %.4f after training, want < 0.05", after)
	}
}

func TestUpdateAllocs(t *testing.T) {
	a := Arch{Obs: 4, Hist: 4, Hidden: 8, ActLimit: 1}
	td := mustTD3(t, a, DefaultTD3Config(), 1)
	b := batches(4, a, 32, 1)[0]
	td.Update(b)
	td.Update(b)
	if n := testing.AllocsPerRun(10, func() { td.Update(b) }); n != 0 {
		t.Fatalf("Update: %v allocations after warm-up, want 0", n)
	}
}

func TestUpdatePanicsOnBadBatch(t *testing.T) {
	a := Arch{Obs: 2, Hist: 2, Hidden: 3, ActLimit: 1}
	td := mustTD3(t, a, DefaultTD3Config(), 1)
	for _, tc := range []struct {
		name  string
		spoil func(b *Batch)
	}{
		{"short Act", func(b *Batch) { b.Act = b.Act[:1] }},
		{"history too long", func(b *Batch) { b.HistLen[0] = 3 }},
		{"empty", func(b *Batch) { b.N = 0 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := batches(5, a, 2, 1)[0]
			tc.spoil(b)
			defer func() {
				if recover() == nil {
					t.Fatal("no panic")
				}
			}()
			td.Update(b)
		})
	}
}

func TestNewTD3Errors(t *testing.T) {
	good := Arch{Obs: 2, Hist: 2, Hidden: 3, ActLimit: 1}
	for _, tc := range []struct {
		name string
		arch Arch
		cfg  func(c *TD3Config)
		want string
	}{
		{"no obs", Arch{Hist: 1, Hidden: 1, ActLimit: 1}, nil, "Obs"},
		{"no hist", Arch{Obs: 1, Hidden: 1, ActLimit: 1}, nil, "Hist"},
		{"no hidden", Arch{Obs: 1, Hist: 1, ActLimit: 1}, nil, "Hidden"},
		{"NaN limit", Arch{Obs: 1, Hist: 1, Hidden: 1, ActLimit: math.NaN()}, nil, "ActLimit"},
		{"polyak", good, func(c *TD3Config) { c.Polyak = -0.1 }, "Polyak"},
		{"lr", good, func(c *TD3Config) { c.QLR = 0 }, "QLR"},
		{"delay", good, func(c *TD3Config) { c.PolicyDelay = 0 }, "PolicyDelay"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultTD3Config()
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			if _, err := NewTD3(tc.arch, cfg, 1); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestPolicySnapshot: Policy is a copy that training does not change.
func TestPolicySnapshot(t *testing.T) {
	a := Arch{Obs: 2, Hist: 2, Hidden: 4, ActLimit: 1}
	td := mustTD3(t, a, DefaultTD3Config(), 1)
	p := td.Policy()
	obs := []float64{0.5, -0.5}
	before := p.Act(p.NewScratch(), nil, 0, obs)
	for _, b := range batches(6, a, 8, 4) {
		td.Update(b)
	}
	if after := p.Act(p.NewScratch(), nil, 0, obs); after != before {
		t.Fatalf("snapshot changed from %v to %v", before, after)
	}
	if now := td.Policy().Act(p.NewScratch(), nil, 0, obs); now == before {
		t.Fatal("training did not change the actor")
	}
}

// TestWorkers: the number of workers changes nothing (run with -race).
func TestWorkers(t *testing.T) {
	a := Arch{Obs: 3, Hist: 4, Hidden: 5, ActLimit: 1}
	bs := batches(8, a, 10, 3)              // 10 rows: parts of 2 and 3
	bs = append(bs, batches(9, a, 3, 1)...) // fewer rows than parts
	var want []byte
	for _, w := range []int{1, 2, 3, 4} {
		td := mustTD3(t, a, DefaultTD3Config(), 3)
		td.SetWorkers(w)
		for _, b := range bs {
			td.Update(b)
		}
		got := checkpointBytes(t, td)
		if want == nil {
			want = got
		} else if !bytes.Equal(got, want) {
			t.Fatalf("%d workers differ from 1", w)
		}
	}
}

func BenchmarkUpdate(b *testing.B) {
	for _, c := range []struct{ H, workers int }{{16, 1}, {32, 1}, {16, 2}, {32, 2}} {
		b.Run(fmt.Sprintf("hidden%d_batch64_workers%d", c.H, c.workers), func(b *testing.B) {
			a := Arch{Obs: 8, Hist: 8, Hidden: c.H, ActLimit: 2}
			td := mustTD3(b, a, DefaultTD3Config(), 1)
			td.SetWorkers(c.workers)
			bs := batches(1, a, 64, 4)
			td.Update(bs[0]) // warm-up: the buffers grow on the first call
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				td.Update(bs[i%len(bs)])
				i++
			}
		})
	}
}

// TestStepActor: StepActor clips every actor gradient to ±clip, then moves
// the actor and only the actor; the step count of its Adam is saved, and
// AdamEps survives a checkpoint.
func TestStepActor(t *testing.T) {
	a := Arch{Obs: 2, Hist: 1, Hidden: 4, ActLimit: 1}
	cfg := DefaultTD3Config()
	cfg.PiLR, cfg.AdamEps = 0.01, 1e-5
	td := mustTD3(t, a, cfg, 4)
	before := checkpointBytes(t, td)
	q1 := append([]float64(nil), td.q1.params[0].Value...)
	hist, lens, obs := []float64{0.3, -0.2, 0, 0}, []int{1, 0}, []float64{1, 2, -1, 0.5}
	td.ZeroActorGrad()
	td.AddActorGrad(hist, lens, obs, func(y, dy []float64) float64 {
		for i := range dy {
			dy[i] = 1000 // far beyond the clip
		}
		return 0
	})
	big := false
	for _, p := range td.actor.params {
		for _, g := range p.Grad {
			big = big || math.Abs(g) > 0.5
		}
	}
	if !big {
		t.Fatal("the test's gradient is within the clip already")
	}
	td.StepActor(0.5)
	for _, p := range td.actor.params {
		for _, g := range p.Grad {
			if math.Abs(g) > 0.5 {
				t.Fatalf("%s: gradient %v after clipping to 0.5", p.Name, g)
			}
		}
	}
	if td.piOpt.Steps != 1 || td.Updates() != 0 {
		t.Fatalf("actor Adam steps %d, updates %d; want 1 and 0", td.piOpt.Steps, td.Updates())
	}
	for i, v := range td.q1.params[0].Value {
		if v != q1[i] {
			t.Fatal("StepActor moved a critic")
		}
	}
	after := checkpointBytes(t, td)
	if bytes.Equal(before, after) {
		t.Fatal("StepActor changed nothing")
	}
	back, _, err := LoadCheckpoint(bytes.NewReader(after))
	if err != nil {
		t.Fatal(err)
	}
	if back.Config() != cfg || back.piOpt.Eps != 1e-5 || back.qOpt.Eps != 1e-5 {
		t.Fatalf("loaded config %+v, Adam ε %v %v", back.Config(), back.piOpt.Eps, back.qOpt.Eps)
	}
}
