package cc

import (
	"math"
	"math/rand/v2"
	"testing"
)

const gbps = 1e9

func newDCQCN(t *testing.T, preset string, over map[string]float64) *dcqcn {
	a, p := resolve(t, "dcqcn", preset, 100e9, over)
	return a.NewSender(FlowInfo{LineRate: 100e9, MaxBDP: 150_000}, p).(*dcqcn)
}

// The first CNP (HPCC rdma-hw.cc cnp_received_mlx): alpha = 1, the rate is
// kept (RateOnFirstCnp 1.0), and the decrease check comes 1 ns after an
// alpha update: at 4 µs + 1 ns, four alpha updates with no further CNP have
// run, so alpha = (1−g)^4 and the cut is by alpha/2. Reference behaviour:
// reference-simulators.md §1.3, "alpha is updated before the decrease".
func TestDCQCNFirstCNPAndOrder(t *testing.T) {
	d := newDCQCN(t, "", nil)
	env := newEnv()
	d.Start(env)
	if env.rate != 100e9 || env.window != Unlimited {
		t.Fatalf("start: rate %d window %d", env.rate, env.window)
	}
	env.now = 10 * Microsecond
	d.OnAck(env, &Ack{CNP: true})
	if env.rate != 100e9 || d.alpha != 1 {
		t.Fatalf("after the first CNP: rate %d alpha %g", env.rate, d.alpha)
	}
	if at := env.timers[dcqcnDecrease]; at != 14*Microsecond+Nanosecond {
		t.Fatalf("decrease check at %d, want 4 µs + 1 ns after the CNP", at)
	}
	env.fire(t, d, dcqcnDecrease)
	g := 1.0 / 256
	alpha := math.Pow(1-g, 4)
	if !near(d.alpha, alpha, 1e-12) {
		t.Fatalf("alpha %g at the first decrease, want (1-g)^4 = %g", d.alpha, alpha)
	}
	want := 100e9 * (1 - alpha/2)
	if !near(float64(env.rate), want, 1) {
		t.Fatalf("rate %d after the cut, want %.0f", env.rate, want)
	}
	// the target stays at the rate before the cut (clampTarget off, no
	// increase yet), and the increase timer is armed 300 µs later
	if d.target != 100e9 || env.timers[dcqcnIncrease] != env.now+300*Microsecond {
		t.Fatalf("target %g, increase timer %d", d.target, env.timers[dcqcnIncrease])
	}
}

// Alpha: (1−g)·alpha + g for an update period with a CNP, (1−g)·alpha
// without (UpdateAlphaMlx). The lazy evaluation must equal the periodic
// timer of the reference at every point, for random CNP arrivals.
func TestDCQCNAlphaMatchesPeriodicTimer(t *testing.T) {
	d := newDCQCN(t, "", nil)
	env := newEnv()
	d.Start(env)
	g := d.g
	r := rand.New(rand.NewPCG(3, 4))
	t0 := 5 * Microsecond
	env.now = t0
	d.OnAck(env, &Ack{CNP: true}) // first CNP at t0
	// the reference: a timer every 1 µs from t0
	refAlpha, refFlag, nextTick := 1.0, false, t0+Microsecond
	now := t0
	for step := 0; step < 5000; step++ {
		now += Time(r.IntN(3000)) * Nanosecond // 0..3 µs
		for nextTick <= now {
			if refFlag {
				refAlpha = (1-g)*refAlpha + g
			} else {
				refAlpha *= 1 - g
			}
			refFlag = false
			nextTick += Microsecond
		}
		env.now = now
		if r.IntN(3) == 0 {
			refFlag = true
			d.OnAck(env, &Ack{CNP: true})
		} else {
			d.OnSample(env)
		}
		if !near(d.alpha, refAlpha, 1e-9) {
			t.Fatalf("step %d at %d ps: lazy alpha %.12f, periodic %.12f", step, now, d.alpha, refAlpha)
		}
	}
	if env.gauges[dcqcnSeriesAlpha] != d.alpha {
		t.Error("alpha gauge not reported")
	}
}

// No CNP, no cut: a decrease check only cuts if a CNP came in its interval;
// then the increase timer walks fast recovery (rate ← (rate+target)/2),
// active increase (target += ai) and hyper increase (target += hai)
// (RateIncEventMlx with FastRecoveryTimes 1).
func TestDCQCNIncreasePhases(t *testing.T) {
	d := newDCQCN(t, "", nil)
	env := newEnv()
	d.Start(env)
	d.OnCNP(env)
	env.fire(t, d, dcqcnDecrease)
	if _, armed := env.timers[dcqcnDecrease]; armed {
		t.Fatal("a decrease check is armed with no CNP since the last one")
	}
	cut := d.rate
	target := d.target // 100 Gbps
	// stage 0 < fastRecovery (1): fast recovery
	env.fire(t, d, dcqcnIncrease)
	if !near(d.rate, (cut+target)/2, 1) || d.target != target {
		t.Fatalf("fast recovery: rate %g target %g", d.rate, d.target)
	}
	// the target is at line rate, so AI and HAI are capped; cut again to see them
	env.now += Microsecond
	d.OnCNP(env)
	env.fire(t, d, dcqcnDecrease)
	// stage was 1 (an increase happened), so the target is clamped to the rate
	if !near(d.target, (cut+target)/2, 1) {
		t.Fatalf("target after a cut that follows an increase: %g", d.target)
	}
	tgt := d.target
	env.fire(t, d, dcqcnIncrease) // stage 0: fast recovery
	env.fire(t, d, dcqcnIncrease) // stage 1 == fastRecovery: active, +20 Mb/s
	if !near(d.target, tgt+20e6, 1) {
		t.Fatalf("active increase: target %g, want %g", d.target, tgt+20e6)
	}
	env.fire(t, d, dcqcnIncrease) // stage 2: hyper, +200 Mb/s
	if !near(d.target, tgt+220e6, 1) {
		t.Fatalf("hyper increase: target %g, want %g", d.target, tgt+220e6)
	}
	if env.timers[dcqcnIncrease] != env.now+300*Microsecond {
		t.Fatal("increase timer not re-armed")
	}
}

// A second cut with no increase in between keeps the target (CLAMP_TARGET_RATE
// 0); with clampTarget on, every cut moves the target to the rate.
func TestDCQCNClampTarget(t *testing.T) {
	for _, clamp := range []float64{0, 1} {
		d := newDCQCN(t, "", map[string]float64{"clampTarget": clamp})
		env := newEnv()
		d.Start(env)
		d.OnCNP(env)
		env.fire(t, d, dcqcnDecrease)
		first := d.rate
		env.now += Microsecond
		d.OnCNP(env)
		env.fire(t, d, dcqcnDecrease)
		want := 100e9
		if clamp == 1 {
			want = first
		}
		if d.target != want {
			t.Errorf("clampTarget %g: target %g, want %g", clamp, d.target, want)
		}
	}
}

// The minimum rate bounds the cuts; the _vwin presets add the window of
// max BDP × rate / line rate; dcqcn_paper has the paper's timers.
func TestDCQCNPresets(t *testing.T) {
	d := newDCQCN(t, "dcqcn_paper_vwin", nil)
	env := newEnv()
	d.Start(env)
	if d.tAlpha != 50*Microsecond || d.tDec != 50*Microsecond || d.tInc != 55*Microsecond {
		t.Fatalf("paper timers: %d %d %d", d.tAlpha, d.tDec, d.tInc)
	}
	if env.window != 150_000 {
		t.Fatalf("window %d at line rate, want the max BDP", env.window)
	}
	for i := 0; i < 200; i++ {
		env.now += 100 * Microsecond
		d.OnCNP(env)
		env.fire(t, d, dcqcnDecrease)
	}
	if env.rate != 1e9 {
		t.Fatalf("rate %d after 200 cuts, want the 1 Gb/s minimum", env.rate)
	}
	if env.window != 1500 {
		t.Fatalf("window %d at 1%% of line rate, want 1500", env.window)
	}
	a, _ := Lookup("dcqcn")
	_, p := resolve(t, "dcqcn", "dcqcn_vwin", 100e9, nil)
	if a.AckHigh(p) {
		t.Error("dcqcn_vwin ACKs are high priority; run.py gives them data priority")
	}
	_, p = resolve(t, "dcqcn", "", 100e9, nil)
	if !a.AckHigh(p) {
		t.Error("dcqcn ACKs are not high priority")
	}
	// rate steps scale with the host link: at 25 Gbps, ai 5 Mb/s (run.py's 5 × bw/25)
	_, p = resolve(t, "dcqcn", "", 25e9, nil)
	if p.Get("ai") != 5 || p.Get("hai") != 50 || p.Get("minRate") != 250 {
		t.Errorf("at 25 Gbps: ai %g hai %g minRate %g", p.Get("ai"), p.Get("hai"), p.Get("minRate"))
	}
}
