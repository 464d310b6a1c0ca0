package cc

import "testing"

func newDolce(t *testing.T, preset string, over map[string]float64) (*dolce, *scriptEnv) {
	t.Helper()
	a, p := resolve(t, "dolce", preset, 100e9, over)
	d := a.NewSender(FlowInfo{LineRate: 100e9, MaxBDP: 150_000}, p).(*dolce)
	env := newEnv()
	d.Start(env)
	return d, env
}

// The registry entry: the derived arms, the paper's bandit constants and
// ECN thresholds, the presets, and DCQCN's α parameters gone.
func TestDolceRegistry(t *testing.T) {
	a, p := resolve(t, "dolce", "", 100e9, nil)
	want := map[string]float64{
		"alpha0": 0.002, "beta0": 1.0, "alpha1": 0.141, "beta1": 1.1,
		"alpha2": 0.280, "beta2": 1.2, "alpha3": 0.420, "beta3": 1.3,
		"gamma": 0.9998, "epsilon": 0.015, "xi": 0.5001, "qualifyInterval": 0,
		"ai": 20, "hai": 200, "minRate": 1000, "decreaseInterval": 4, "increaseTimer": 300, "fastRecovery": 1,
	}
	for name, v := range want {
		if got, ok := p[name]; !ok || got != v {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, v)
		}
	}
	for _, gone := range []string{"g", "alphaTimer", "clampTarget"} {
		if _, ok := a.FindParam(gone); ok {
			t.Errorf("%s is DCQCN's α machinery, removed in Dolce-RC", gone)
		}
	}
	if e := a.ECN; e == nil || e.Kmin != 7000 || e.Kmax != 500_000 || e.Pmax != 1 {
		t.Errorf("ECN defaults %+v, want 7 KB / 500 KB / 1", a.ECN)
	}
	if len(a.Series) != 4 || a.Series[dolceSeriesArm].Name != "dolce_arm" || a.Series[dolceSeriesReward].Name != "dolce_reward" ||
		a.Series[dolceSeriesPick].Name != "dolce_pick" || !a.Connections {
		t.Errorf("series %+v", a.Series)
	}
	for _, pr := range []string{"dolce_5cnp", "dolce_dcqcn_arms"} {
		if _, ok := a.FindPreset(pr); !ok {
			t.Errorf("preset %s missing", pr)
		}
	}
	// the defaults lie on the line α = 0.002 + 1.39·(β − 1), rounded
	for i := 0; i < dolceArms; i++ {
		al, be := dolceDefaultArms[i][0], dolceDefaultArms[i][1]
		if !near(al, 0.002+1.39*(be-1), 0.0015) {
			t.Errorf("arm %d (%g, %g) is off the eq. 20 line", i, al, be)
		}
	}
}

// The revised cut (eqs. 1 and 2) for every arm, from a rate of 50 Gb/s:
// R_T = min(β·R_C, line), R_C = (1 − α/2)·R_C, at the decrease check.
func TestDolceCut(t *testing.T) {
	cases := []struct {
		arm          int
		preset       string
		rate, target float64
	}{
		{0, "", 49.95e9, 50e9},                   // α 0.002, β 1.0
		{1, "", 46.475e9, 55e9},                  // α 0.141, β 1.1
		{2, "", 43e9, 60e9},                      // α 0.280, β 1.2
		{3, "", 39.5e9, 65e9},                    // α 0.420, β 1.3
		{3, "dolce_dcqcn_arms", 37.5e9, 50e9},    // α 1/2, β 1
		{0, "dolce_dcqcn_arms", 48.4375e9, 50e9}, // α 1/16, β 1
	}
	for _, c := range cases {
		d, env := newDolce(t, c.preset, nil)
		env.now = 10 * Microsecond
		d.OnCNP(env) // the first CNP: rateOnFirstCNP 1, decrease check 4 µs + 1 ns later
		d.rate = 50e9
		d.l.arm = c.arm
		env.fire(t, d, dcqcnDecrease)
		if env.now != 14*Microsecond+Nanosecond {
			t.Fatalf("decrease check at %d", env.now)
		}
		if !near(d.rate, c.rate, 1) || !near(d.target, c.target, 1) || env.rate != rateBps(c.rate) {
			t.Errorf("arm %d %q: rate %.0f target %.0f (env %d), want %.0f %.0f", c.arm, c.preset, d.rate, d.target, env.rate, c.rate, c.target)
		}
		if env.timers[dcqcnIncrease] != env.now+300*Microsecond || d.stage != 0 {
			t.Errorf("arm %d: increase timer %d stage %d", c.arm, env.timers[dcqcnIncrease], d.stage)
		}
	}
	// β·R_C above the line rate is capped
	d, env := newDolce(t, "", nil)
	d.l.arm = 3
	d.OnCNP(env)
	env.fire(t, d, dcqcnDecrease)
	if d.target != 100e9 || !near(d.rate, 79e9, 1) {
		t.Errorf("from line rate, arm 3: target %.0f rate %.0f, want 100e9 79e9", d.target, d.rate)
	}
}

// Qualified CNPs drive the bandit: the reward is 1 − marked/sent over the
// interval, an unqualified CNP only cuts, and the arm sequence starts with
// DR-UCB's forced block 0, 1, 2, 3.
func TestDolceIterations(t *testing.T) {
	type step struct {
		at           Time // µs
		sends        int
		marked       int
		cnp          bool
		reward       float64 // -1: no iteration expected
		arm          int     // arm in force afterwards
		iterationsTo int64
	}
	cases := []struct {
		name  string
		over  map[string]float64
		steps []step
	}{
		{"fast-recovery phase (300 µs)", nil, []step{
			{at: 100, sends: 100, marked: 10, cnp: true, reward: -1, arm: 0, iterationsTo: 0},   // too early
			{at: 300, sends: 100, marked: 5, cnp: true, reward: 0.925, arm: 1, iterationsTo: 1}, // 1 − 15/200
			{at: 500, sends: 50, marked: 50, cnp: true, reward: -1, arm: 1, iterationsTo: 1},    // 200 µs < 300
			{at: 600, sends: 50, marked: 0, cnp: true, reward: 0.5, arm: 2, iterationsTo: 2},    // 1 − 50/100
			{at: 900, sends: 0, marked: 3, cnp: true, reward: -1, arm: 2, iterationsTo: 2},      // no sends: no evidence
			{at: 950, sends: 10, marked: 40, cnp: true, reward: 0, arm: 3, iterationsTo: 3},     // clamped at 0
			{at: 1300, sends: 80, marked: 0, cnp: false, reward: -1, arm: 3, iterationsTo: 3},   // an ACK without CNP
			{at: 1300, sends: 0, marked: 0, cnp: true, reward: 1, arm: 3, iterationsTo: 4},      // UCB: arm 3's mean 1 is best
		}},
		{"dolce_5cnp (20 µs)", map[string]float64{"qualifyInterval": 20}, []step{
			{at: 10, sends: 10, marked: 1, cnp: true, reward: -1, arm: 0, iterationsTo: 0},
			{at: 20, sends: 10, marked: 1, cnp: true, reward: 0.9, arm: 1, iterationsTo: 1},
			{at: 39, sends: 10, marked: 0, cnp: true, reward: -1, arm: 1, iterationsTo: 1},
			{at: 40, sends: 10, marked: 5, cnp: true, reward: 0.75, arm: 2, iterationsTo: 2},
		}},
	}
	for _, c := range cases {
		d, env := newDolce(t, "", c.over)
		for i, s := range c.steps {
			env.now = s.at * Microsecond
			for k := 0; k < s.sends; k++ {
				d.OnSend(env, 1000, 1048, false)
			}
			before := len(env.events[dolceSeriesReward])
			d.OnAck(env, &Ack{ECNMarked: s.marked, CNP: s.cnp})
			ev := env.events[dolceSeriesReward]
			switch {
			case s.reward < 0 && len(ev) != before:
				t.Errorf("%s step %d: unexpected iteration, reward %v", c.name, i, ev[len(ev)-1])
			case s.reward >= 0 && (len(ev) != before+1 || !near(ev[len(ev)-1], s.reward, 1e-12)):
				t.Errorf("%s step %d: rewards %v, want a new %v", c.name, i, ev, s.reward)
			}
			if d.l.arm != s.arm || d.l.bandit.T != s.iterationsTo {
				t.Errorf("%s step %d: arm %d after %d iterations, want %d after %d", c.name, i, d.l.arm, d.l.bandit.T, s.arm, s.iterationsTo)
			}
		}
	}
}

// The qualification interval follows fastRecovery × increaseTimer live,
// unless set; the bandit constants change live; unknown names fail.
func TestDolceParams(t *testing.T) {
	d, env := newDolce(t, "", nil)
	cases := []struct {
		name string
		v    float64
		want Time // qualifyTime afterwards
	}{
		{"increaseTimer", 55, 55 * Microsecond},
		{"fastRecovery", 5, 275 * Microsecond},
		{"qualifyInterval", 20, 20 * Microsecond},
		{"increaseTimer", 300, 20 * Microsecond},
		{"qualifyInterval", 0, 1500 * Microsecond},
	}
	for _, c := range cases {
		if err := d.SetParam(env, c.name, c.v); err != nil {
			t.Fatal(err)
		}
		if got := d.qualifyTime(); got != c.want {
			t.Errorf("after %s=%g: qualify %d, want %d", c.name, c.v, got, c.want)
		}
	}
	for _, c := range []struct {
		name string
		v    float64
		got  func() float64
	}{
		{"gamma", 0.99, func() float64 { return d.l.bandit.Gamma }},
		{"epsilon", 0.1, func() float64 { return d.l.bandit.Eps }},
		{"xi", 2, func() float64 { return d.l.bandit.Xi }},
		{"alpha2", 0.9, func() float64 { return d.alpha[2] }},
		{"beta3", 0.7, func() float64 { return d.beta[3] }},
	} {
		if err := d.SetParam(env, c.name, c.v); err != nil || c.got() != c.v {
			t.Errorf("%s: %v, err %v", c.name, c.got(), err)
		}
	}
	if d.l.bandit.Period() != 40 {
		t.Errorf("period %d after epsilon 0.1, want 40", d.l.bandit.Period())
	}
	for _, bad := range []string{"g", "alphaTimer", "clampTarget", "alpha4", "beta", "wr"} {
		if err := d.SetParam(env, bad, 1); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
	d.OnSample(env)
	if env.gauges[dolceSeriesArm] != 0 || env.gauges[dolceSeriesTarget] != 100e9 {
		t.Errorf("gauges %v", env.gauges)
	}
}

// With sharedQP the messages of one host pair share a connection's learner:
// what one message learns is in force for the next (and for a concurrent
// one), while another host pair, or a run without sharedQP, starts afresh.
func TestDolceSharedQP(t *testing.T) {
	build := func(shared bool, conn *Conn) (*dolce, *scriptEnv) {
		a, p := resolve(t, "dolce", "", 100e9, map[string]float64{"sharedQP": b2f(shared), "qualifyInterval": 10})
		d := a.NewSender(FlowInfo{LineRate: 100e9, MaxBDP: 150_000, Conn: conn}, p).(*dolce)
		env := newEnv()
		d.Start(env)
		return d, env
	}
	// iterate drives a message through qualified CNPs, 10 µs apart, each
	// reward interval with 10 packets sent and `marked` marked
	iterate := func(d *dolce, env *scriptEnv, n int, marked int) {
		for i := 0; i < n; i++ {
			env.now += 10 * Microsecond
			for k := 0; k < 10; k++ {
				d.OnSend(env, 1000, 1036, false)
			}
			d.OnAck(env, &Ack{ECNMarked: marked, CNP: true})
		}
	}
	pair := &Conn{Src: 1, Dst: 2}
	first, env1 := build(true, pair)
	iterate(first, env1, 6, 0) // arms 0..3 forced, then the UCB rule
	second, env2 := build(true, pair)
	env2.now = env1.now
	if second.l != first.l || second.l.bandit.T != 6 || second.l.arm != first.l.arm {
		t.Fatalf("second message of the pair: learner shared %v, %d iterations, arm %d (first: %d)",
			second.l == first.l, second.l.bandit.T, second.l.arm, first.l.arm)
	}
	iterate(second, env2, 2, 5)
	if first.l.bandit.T != 8 {
		t.Errorf("the first message does not see the second's iterations: T = %d", first.l.bandit.T)
	}
	if got := env2.events[dolceSeriesPick]; len(got) != 2 {
		t.Errorf("arm trace of the second message: %v, want its 2 picks", got)
	}
	other, _ := build(true, &Conn{Src: 1, Dst: 3})
	alone, _ := build(false, pair)
	if other.l == first.l || other.l.bandit.T != 0 || alone.l == first.l || alone.l.bandit.T != 0 {
		t.Errorf("another pair or sharedQP off must start afresh: T %d and %d", other.l.bandit.T, alone.l.bandit.T)
	}
}
