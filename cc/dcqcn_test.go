package cc

import (
	"math"
	"math/rand/v2"
	"testing"
)

func newDCQCN(t *testing.T, preset string, over map[string]float64) *dcqcn {
	a, p := resolve(t, "dcqcn", preset, 100e9, over)
	return a.NewSender(FlowInfo{LineRate: 100e9, MaxBDP: 150_000}, p).(*dcqcn)
}

// The first CNP (HPCC rdma-hw.cc cnp_received_mlx): alpha = 1, the rate is
// kept (RateOnFirstCnp 1.0), and the decrease check comes 1 ns after an
// alpha update: at 4 µs + 1 ns, four alpha updates with no further CNP have
// run, so alpha = (1−g)^4 and the cut is by alpha/2. Reference behaviour:
// HPCC's rdma-hw.cc: alpha is updated before the decrease (its issue #52).
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

// refDCQCN is rdma-hw.cc's DCQCN written literally, with its three periodic
// timers (alpha update, decrease check, rate increase) as events; a timer
// that fires reschedules itself with the period in force at that moment.
type refDCQCN struct {
	rate, target, alpha, g, ai, hai, minRate, line float64
	first, aCNP, dCNP, clamp                       bool
	stage, fr                                      int
	tA, tD, tI                                     Time
	nextA, nextD, nextI                            Time // -1: not scheduled
}

func (r *refDCQCN) cnp(now Time) { // cnp_received_mlx
	r.aCNP, r.dCNP = true, true
	if r.first {
		r.alpha, r.aCNP, r.first = 1, false, false
		r.nextA = now + r.tA
		r.nextD = now + r.tD + Nanosecond
		r.target = r.rate
	}
}

// runUntil processes the timers due before t.
func (r *refDCQCN) runUntil(t Time) {
	for {
		at, which := Time(-1), -1
		for i, next := range []Time{r.nextA, r.nextD, r.nextI} {
			if next >= 0 && next < t && (at < 0 || next < at) {
				at, which = next, i
			}
		}
		switch which {
		case -1:
			return
		case 0: // UpdateAlphaMlx
			if r.aCNP {
				r.alpha = (1-r.g)*r.alpha + r.g
			} else {
				r.alpha *= 1 - r.g
			}
			r.aCNP = false
			r.nextA += r.tA
		case 1: // CheckRateDecreaseMlx
			r.nextD += r.tD
			if r.dCNP {
				if r.clamp || r.stage != 0 {
					r.target = r.rate
				}
				r.rate = math.Max(r.minRate, r.rate*(1-r.alpha/2))
				r.stage, r.dCNP = 0, false
				r.nextI = at + r.tI
			}
		case 2: // RateIncEventTimerMlx
			r.nextI += r.tI
			switch {
			case r.stage < r.fr:
			case r.stage == r.fr:
				r.target = math.Min(r.target+r.ai, r.line)
			default:
				r.target = math.Min(r.target+r.hai, r.line)
			}
			r.rate = r.rate/2 + r.target/2
			r.stage++
		}
	}
}

// fireUntil delivers the algorithm's timers due before until, in time order.
func fireUntil(t *testing.T, s Sender, env *scriptEnv, until Time) {
	for {
		at, slot := Time(-1), -1
		for sl, next := range env.timers {
			if next < until && (at < 0 || next < at || (next == at && sl < slot)) {
				at, slot = next, sl
			}
		}
		if slot < 0 {
			return
		}
		env.fire(t, s, slot)
	}
}

// The lazy timers give exactly the reference's periodic ones: rate, target,
// alpha and stage agree after every CNP, over random bursts and long gaps,
// for both timer presets, and across live changes of g and of the alpha
// and decrease periods (a tick already due keeps its time, later ones use
// the new period, and past ticks keep the old g).
func TestDCQCNMatchesPeriodicTimers(t *testing.T) {
	for _, preset := range []string{"", "dcqcn_paper"} {
		for seed := uint64(1); seed <= 10; seed++ {
			d := newDCQCN(t, preset, nil)
			env := newEnv()
			d.Start(env)
			ref := &refDCQCN{rate: 100e9, target: 100e9, alpha: 1, g: d.g, ai: d.ai, hai: d.hai, minRate: d.minRate,
				line: 100e9, first: true, fr: d.fastRecovery, tA: d.tAlpha, tD: d.tDec, tI: d.tInc, nextA: -1, nextD: -1, nextI: -1}
			r := rand.New(rand.NewPCG(seed, 99))
			now := Time(1234567)
			for step := 0; step < 2000; step++ {
				gaps := []Time{Time(r.IntN(2000)) * Nanosecond, Time(r.IntN(100)) * Microsecond,
					Time(r.IntN(2000)) * Microsecond, Time(r.IntN(20)) * Nanosecond}
				now += gaps[r.IntN(4)] + Time(r.IntN(997)) + 1
				fireUntil(t, d, env, now)
				ref.runUntil(now)
				env.now = now
				switch r.IntN(40) {
				case 0: // a live change of g
					g := []float64{1.0 / 256, 1.0 / 16, 1.0 / 64}[r.IntN(3)]
					if err := d.SetParam(env, "g", g*1); err != nil {
						t.Fatal(err)
					}
					ref.g = g
				case 1: // of the alpha period
					p := []float64{1, 3, 50}[r.IntN(3)]
					d.SetParam(env, "alphaTimer", p)
					ref.tA = Time(p * float64(Microsecond))
				case 2: // of the decrease interval
					p := []float64{4, 7, 50}[r.IntN(3)]
					d.SetParam(env, "decreaseInterval", p)
					ref.tD = Time(p * float64(Microsecond))
				default:
					d.OnCNP(env)
					ref.cnp(now)
				}
				alpha, _ := d.alphaAt(now)
				if !near(d.rate, ref.rate, 1e-3) || !near(d.target, ref.target, 1e-3) || !near(alpha, ref.alpha, 1e-9) || d.stage != ref.stage {
					t.Fatalf("preset %q seed %d step %d at %d ps: lazy rate %.9g target %.9g alpha %.9f stage %d; periodic %.9g %.9g %.9f %d",
						preset, seed, step, now, d.rate, d.target, alpha, d.stage, ref.rate, ref.target, ref.alpha, ref.stage)
				}
			}
		}
	}
}

// Reading alpha for telemetry does not apply the ticks (the sampling
// interval must not change the run's arithmetic).
func TestDCQCNSampleDoesNotMutate(t *testing.T) {
	d := newDCQCN(t, "", nil)
	env := newEnv()
	d.Start(env)
	d.OnCNP(env)
	before := *d
	env.now = 37 * Microsecond
	d.OnSample(env)
	if *d != before {
		t.Fatal("OnSample changed the state")
	}
	want, _ := d.alphaAt(env.now)
	if env.gauges[dcqcnSeriesAlpha] != want || want >= 1 {
		t.Fatalf("gauge %g, alpha now %g", env.gauges[dcqcnSeriesAlpha], want)
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
