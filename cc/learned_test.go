package cc

import (
	"math"
	"testing"
)

// scriptPolicy answers with the outputs it is given, in turn, and keeps
// what it was asked.
type scriptPolicy struct {
	obs, hist int
	limit     float64
	outs      []float64
	asked     []askedAct
}

type askedAct struct {
	hist    []float64
	histLen int
	obs     []float64
}

func (p *scriptPolicy) Shape() (int, int) { return p.obs, p.hist }
func (p *scriptPolicy) Limit() float64    { return p.limit }
func (p *scriptPolicy) NewActor() Actor   { return p }
func (p *scriptPolicy) Act(hist []float64, histLen int, obs []float64) float64 {
	p.asked = append(p.asked, askedAct{append([]float64(nil), hist[:histLen*p.obs]...), histLen, append([]float64(nil), obs...)})
	if len(p.outs) == 0 {
		return 0
	}
	v := p.outs[0]
	p.outs = p.outs[1:]
	return v
}

// recordInto keeps copies of the steps a learned sender records.
func recordInto(steps *[]Step) func(*Step) {
	return func(s *Step) {
		c := *s
		c.Obs = append([]float64(nil), s.Obs...)
		*steps = append(*steps, c)
	}
}

func learnedParams(t *testing.T, a *Algorithm, over map[string]float64) Params {
	t.Helper()
	p, errs := a.Resolve("", over, 100e9)
	if len(errs) > 0 {
		t.Fatal(errs[0])
	}
	return p
}

// fdccInfo is a 100 Gbps flow with a 10 µs base RTT: BDP 125 000 B.
var fdccInfo = FlowInfo{ID: 3, Size: 1e7, LineRate: 100e9, BaseRTT: 10 * Microsecond, MaxBDP: 125_000, MTU: 1000, Header: 48}

// ihop is an INT record of a 100 Gbps port.
func ihop(q, tx int64, ts Time) IntHop {
	return IntHop{Qlen: q, TxBytes: tx, TS: ts, Rate: 100e9, Flows: 4}
}

func TestFDCCObservationsActionsAndReward(t *testing.T) {
	pol := &scriptPolicy{obs: 8, hist: 8, limit: 2, outs: []float64{-2, 1, 2}}
	var steps []Step
	a := FDCC(Learned{Policy: pol, Record: recordInto(&steps)})
	env := newEnv()
	// The thesis' literal readings: whole packets, link-rate units.
	s := a.NewSender(fdccInfo, learnedParams(t, a, map[string]float64{"floorPackets": 1, "shareReward": 0}))
	s.Start(env)
	if env.rate != 100e9 || env.window != 125_000 {
		t.Fatalf("start: rate %d window %d, want line rate and one BDP", env.rate, env.window)
	}

	// Step 1 at 12 µs: RTT 12 µs; hop 1 holds 62 500 B (half its BDP).
	env.now = 12 * Microsecond
	s.OnAck(env, &Ack{Seq: 10_000, SentAt: 0, INT: []IntHop{ihop(0, 0, 11*Microsecond), ihop(62_500, 0, 11*Microsecond)}})
	// out −2: m = 1/(1 + 0.5·2) = 0.5; window 62 500 B → floored to 62 000.
	if env.window != 62_000 {
		t.Fatalf("step 1 window %d, want 62000", env.window)
	}
	wantRate := int64(62_000 * 8 / 10e-6)
	if env.rate != wantRate {
		t.Fatalf("step 1 rate %d, want WIN/baseRTT = %d", env.rate, wantRate)
	}
	if got := steps[0].Obs; !near(got[0], 1.2, 1e-12) || !near(got[1], 0.5, 1e-12) || got[2] != 0 || got[3] != 0 || got[6] != 1 || got[7] != 0 {
		t.Fatalf("step 1 observation %v", got)
	}
	if !math.IsNaN(steps[0].Reward) {
		t.Fatalf("step 1 reward %v, want NaN (no previous action)", steps[0].Reward)
	}

	// An ACK 3 µs later is gated out (gate 0.5 × 12 µs = 6 µs).
	env.now = 15 * Microsecond
	s.OnAck(env, &Ack{Seq: 20_000, SentAt: 3 * Microsecond})
	if len(steps) != 1 {
		t.Fatalf("%d steps after a gated ACK, want 1", len(steps))
	}

	// Step 2 at 22 µs: RTT 11 µs; hop 1 sent 100 000 B in 10 µs (80 Gbps)
	// and holds 25 000 B; hop 0 is idle. 60 000 B acknowledged in 10 µs.
	env.now = 22 * Microsecond
	s.OnAck(env, &Ack{Seq: 70_000, SentAt: 11 * Microsecond, INT: []IntHop{ihop(0, 0, 21*Microsecond), ihop(25_000, 100_000, 21*Microsecond)}})
	o := steps[1].Obs
	want := []float64{1.1, 0.2, 0.8, 60_000 * 8 / 10e-6 / 100e9, (1.1 - 1.2) / 1, (0.2 - 0.5) / 1, 0.496, -1}
	for i := range want {
		if !near(o[i], want[i], 1e-9) {
			t.Fatalf("step 2 observation %d = %v, want %v (all: %v)", i, o[i], want[i], o)
		}
	}
	// Probing (0.2 + 0.8 − 1 ≤ 0.5): G + 1/RTT − (G − 1/N)², N = 4.
	g := want[3]
	if r := steps[1].Reward; !near(r, g+1/1.1-(g-0.25)*(g-0.25), 1e-12) || steps[1].Draining {
		t.Fatalf("step 2 reward %v draining %v", r, steps[1].Draining)
	}
	// The policy saw the first observation as history.
	if got := pol.asked[1]; got.histLen != 1 || !near(got.hist[0], 1.2, 1e-12) {
		t.Fatalf("step 2 history %v (len %d)", got.hist, got.histLen)
	}
	// out 1: m = 1.5: 93 000 B.
	if env.window != 93_000 {
		t.Fatalf("step 2 window %d, want 93000", env.window)
	}

	// Step 3: a queue of 2 BDPs is draining; reward −RTT. out 2 (m = 2)
	// is capped at one BDP, floored to 125 000.
	env.now = 40 * Microsecond
	s.OnAck(env, &Ack{Seq: 100_000, SentAt: 10 * Microsecond, INT: []IntHop{ihop(0, 0, 39*Microsecond), ihop(250_000, 325_000, 39*Microsecond)}})
	if r := steps[2].Reward; !steps[2].Draining || !near(r, -3, 1e-12) {
		t.Fatalf("step 3 reward %v draining %v, want −3 draining", r, steps[2].Draining)
	}
	if env.window != 125_000 || env.rate != 100e9 {
		t.Fatalf("step 3 window %d rate %d, want one BDP at line rate", env.window, env.rate)
	}
}

// The lab's defaults: windows floored to whole bytes, and the probing
// reward in fair shares, x + 1/RTT − (x − 1)² with x = GOODPUT·N.
func TestFDCCDefaultReadings(t *testing.T) {
	pol := &scriptPolicy{obs: 8, hist: 8, limit: 2, outs: []float64{-2, 1}}
	var steps []Step
	a := FDCC(Learned{Policy: pol, Record: recordInto(&steps)})
	env := newEnv()
	s := a.NewSender(fdccInfo, learnedParams(t, a, nil))
	s.Start(env)
	env.now = 12 * Microsecond
	s.OnAck(env, &Ack{Seq: 10_000, SentAt: 0, INT: []IntHop{ihop(62_500, 0, 11*Microsecond)}})
	// m = 0.5: 62 500 B, not floored to 62 000.
	if env.window != 62_500 {
		t.Fatalf("step 1 window %d, want 62500", env.window)
	}
	env.now = 22 * Microsecond
	s.OnAck(env, &Ack{Seq: 70_000, SentAt: 11 * Microsecond, INT: []IntHop{ihop(25_000, 100_000, 21*Microsecond)}})
	// 60 000 B in 10 µs at 100 Gbps: GOODPUT 0.48, N = 4, x = 1.92.
	x := 60_000 * 8 / 10e-6 / 100e9 * 4
	if r := steps[1].Reward; !near(r, x+1/1.1-(x-1)*(x-1), 1e-12) || steps[1].Draining {
		t.Fatalf("step 2 reward %v draining %v, want %v probing", r, steps[1].Draining, x+1/1.1-(x-1)*(x-1))
	}
	// m = 1.5: 93 750 B.
	if env.window != 93_750 {
		t.Fatalf("step 2 window %d, want 93750", env.window)
	}
}

// A policy answering NaN freezes the flow's agent, FDCC's and RL-CC's
// alike: it keeps the window and rate of its last valid step, logs one
// frozen event and is not asked again.
func TestLearnedFreezesOnNaN(t *testing.T) {
	for _, tc := range []struct {
		name   string
		algo   func(Learned) *Algorithm
		pol    *scriptPolicy
		over   map[string]float64
		frozen int   // the frozen event's series
		window int64 // RL-CC's stays its one-BDP host window
		rate   int64
	}{
		{"fdcc", FDCC, &scriptPolicy{obs: 8, hist: 8, limit: 2, outs: []float64{-2, math.NaN(), 2}},
			map[string]float64{"floorPackets": 1}, fdccSeriesFrozen, 62_000, int64(62_000 * 8 / 10e-6)},
		// out −1: m = 1/1.2 of the line rate.
		{"rlcc", RLCC, &scriptPolicy{obs: 2, hist: 1, limit: 1, outs: []float64{-1, math.NaN(), 1}},
			nil, 3, 125_000, 83_333_333_333},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := tc.algo(Learned{Policy: tc.pol})
			env := newEnv()
			s := a.NewSender(fdccInfo, learnedParams(t, a, tc.over))
			s.Start(env)
			var rate int64
			for i := 1; i <= 3; i++ {
				env.now = Time(i) * 20 * Microsecond
				s.OnAck(env, &Ack{Seq: int64(i) * 1000, SentAt: env.now - 10*Microsecond})
				if i == 1 {
					rate = env.rate
				}
			}
			if env.window != tc.window || env.rate != rate || !near(float64(rate), float64(tc.rate), 1) {
				t.Fatalf("window %d rate %d after a NaN, want the last valid %d and %d (first step's rate %d)", env.window, env.rate, tc.window, tc.rate, rate)
			}
			if got := env.events[tc.frozen]; len(got) != 1 {
				t.Fatalf("frozen events %v, want one", got)
			}
			if len(tc.pol.asked) != 2 {
				t.Fatalf("policy asked %d times, want 2 (frozen after the NaN)", len(tc.pol.asked))
			}
		})
	}
}

func TestFDCCCompoundReading(t *testing.T) {
	for _, tc := range []struct {
		compound float64
		want     int64
	}{{0, 31_000}, {1, 15_000}} {
		pol := &scriptPolicy{obs: 8, hist: 8, limit: 2, outs: []float64{-2, -2}}
		a := FDCC(Learned{Policy: pol})
		env := newEnv()
		s := a.NewSender(fdccInfo, learnedParams(t, a, map[string]float64{"compound": tc.compound, "floorPackets": 1}))
		s.Start(env)
		env.now = 20 * Microsecond
		s.OnAck(env, &Ack{SentAt: 10 * Microsecond})
		// Reading (b): 125 000 × 0.5 = 62 500 → 62 000, then the window
		// stays ×0.5 → 31 000. Reading (a): ×0.5 then ×0.25.
		env.now = 40 * Microsecond
		s.OnAck(env, &Ack{SentAt: 30 * Microsecond})
		if env.window != tc.want {
			t.Fatalf("compound=%v: window %d, want %d", tc.compound, env.window, tc.want)
		}
	}
}

func TestRLCCRateControl(t *testing.T) {
	pol := &scriptPolicy{obs: 2, hist: 1, limit: 1, outs: []float64{-1, 1}}
	var steps []Step
	a := RLCC(Learned{Policy: pol, Record: recordInto(&steps)})
	env := newEnv()
	s := a.NewSender(fdccInfo, learnedParams(t, a, nil))
	s.Start(env)
	// RTT 30 µs: inflation 3; rtt_reward = ((3 − 1.5)·√1 − 0.064)·12.5.
	env.now = 30 * Microsecond
	s.OnAck(env, &Ack{SentAt: 0})
	rr := (1.5 - 0.064) * 12.5
	if o := steps[0].Obs; o[0] != 1 || !near(o[1], rr, 1e-12) {
		t.Fatalf("observation %v, want [1 %v]", o, rr)
	}
	// out −1: m = 1/1.2.
	if want := rateBps(100e9 / 1.2); env.rate != want {
		t.Fatalf("rate %d, want %d", env.rate, want)
	}
	env.now = 60 * Microsecond
	s.OnAck(env, &Ack{SentAt: 50 * Microsecond}) // inflation 1: no delay counted
	rate := 1 / 1.2
	rr2 := (0 - 0.064) * 12.5
	if o := steps[1].Obs; !near(o[0], 1/1.2, 1e-12) || !near(o[1], rr2, 1e-12) || !near(steps[1].Reward, -math.Abs(rr2), 1e-12) {
		t.Fatalf("step 2 %v reward %v", o, steps[1].Reward)
	}
	if !near(float64(env.rate), 100e9*math.Min(rate*1.2, 1), 1) {
		t.Fatalf("rate %d, want the line rate", env.rate)
	}
	if pol.asked[1].histLen != 1 || pol.asked[1].hist[0] != 1 {
		t.Fatalf("history %v", pol.asked[1])
	}
}
