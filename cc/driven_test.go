package cc

import (
	"math"
	"testing"
)

// drivenRx is a receiver-driven receiver's engine as a test sees it: the
// control packets it sent, its timers, and the first gap the test sets.
type drivenRx struct {
	rxEnv
	ctrls []Ctrl
	gap   [2]int64
}

func (e *drivenRx) SendCtrl(c Ctrl)                    { e.ctrls = append(e.ctrls, c) }
func (e *drivenRx) FirstGap(flow int32) (int64, int64) { return e.gap[0], e.gap[1] }

func newDrivenRx() *drivenRx {
	return &drivenRx{rxEnv: rxEnv{timers: map[int]Time{}, gauges: map[[2]int64]float64{}}}
}

// Homa's unscheduled cut-offs, by hand: sizes 1 KB (half the messages),
// 10 KB (30%) and 100 KB (20%) with RTTbytes 20 KB carry 500 + 3000 + 4000
// = 7500 unscheduled bytes of 23,500 per message: 32% of 8 levels is 3
// unscheduled levels (2.55 rounded), 5 scheduled. Equal unscheduled bytes
// per level put the first cut-off where 2500 B are reached (at 10 KB) and
// the second at 5000 B (at 100 KB); anything larger takes the last.
func TestHomaPrios(t *testing.T) {
	w := &Workload{Sizes: []int64{1000, 10_000, 100_000}, Weights: []float64{0.5, 0.3, 0.2}}
	h := newHomaPrios(w, 20_000, 8, 0)
	if h.unsched != 3 || len(h.cut) != 2 || h.cut[0] != 10_000 || h.cut[1] != 100_000 {
		t.Fatalf("prios %+v, want 3 unscheduled levels cut at 10 KB and 100 KB", h)
	}
	for _, tt := range []struct {
		size int64
		prio int
	}{{500, 0}, {1000, 0}, {10_000, 0}, {10_001, 1}, {100_000, 1}, {1_000_000, 2}} {
		if got := h.prio(tt.size); got != tt.prio {
			t.Errorf("prio(%d) = %d, want %d", tt.size, got, tt.prio)
		}
	}
	if h := newHomaPrios(w, 20_000, 8, 6); h.unsched != 6 {
		t.Errorf("unschedPrios 6: %d unscheduled levels", h.unsched)
	}
	if h := newHomaPrios(w, 20_000, 1, 0); h.unsched != 1 || h.prio(1e9) != 0 {
		t.Errorf("one class: %+v, want everything at level 0", h)
	}
	// every message shorter than RTTbytes: all bytes unscheduled, still one
	// scheduled level left
	if h := newHomaPrios(w, 1e9, 8, 0); h.unsched != 7 {
		t.Errorf("all unscheduled: %d unscheduled levels, want 7", h.unsched)
	}
}

// Homa's receiver grants in SRPT order, one message per sender, up to the
// overcommitment: three messages, two of them from sender 2; with
// overcommitment 2 it grants sender 2's shorter message (20 KB left to
// grant) and sender 1's (90 KB), not sender 2's other one (40 KB), each up
// to what arrived + RTTbytes and with its place among the two; when the
// shorter one completes, sender 2's other message takes its place.
func TestHomaReceiverGrants(t *testing.T) {
	a, p := resolve(t, "homa", "", 100e9, map[string]float64{"overcommit": 2})
	r := a.NewReceiver(p).(*homaReceiver)
	env := newDrivenRx()
	echo := int64(10_000) | 10_000<<32 | 5<<56 // unscheduled 10 KB, RTTbytes 10 KB, 5 scheduled levels
	data := func(flow, src int32, size int64) {
		r.OnData(env, &DataInfo{Flow: flow, Src: src, Seq: 0, Payload: 1000, Size: size, Received: 1000, Echo: echo})
	}
	data(1, 1, 100_000)
	data(3, 2, 30_000)
	data(2, 2, 50_000)
	last := map[int32]Ctrl{}
	for _, c := range env.ctrls {
		if c.Kind != homaGrant {
			t.Fatalf("control %+v is not a grant", c)
		}
		last[c.Flow] = c
	}
	if _, ok := last[2]; ok {
		t.Errorf("granted message 2, whose sender's shorter message 3 is granted")
	}
	for _, tt := range []struct {
		flow int32
		aux  int64 // k<<16 | place
	}{{3, 2<<16 + 0}, {1, 2<<16 | 1}} {
		c, ok := last[tt.flow]
		if !ok {
			t.Fatalf("message %d not granted", tt.flow)
		}
		if c.Value != 11_000 || c.Aux != tt.aux || c.Class != 0 || c.Wire != 48 {
			t.Errorf("message %d's grant %+v, want offset 11000 (1000 in + 10 KB), aux %#x, class 0, 48 B", tt.flow, c, tt.aux)
		}
	}
	env.ctrls = nil
	r.OnComplete(env, 3)
	if len(env.ctrls) == 0 || env.ctrls[0].Flow != 2 || env.ctrls[0].Value != 11_000 || env.ctrls[0].Aux != 2<<16+0 {
		t.Errorf("after message 3 completed: %+v, want message 2 granted first in place", env.ctrls)
	}
	// a sender turns the place into a level: k = 2 granted messages take
	// the two lowest levels of 8, the first the higher (6)
	s := a.NewSender(FlowInfo{ID: 2, Size: 50_000, MTU: 1000, MaxBDP: 10_000, Classes: 8,
		Workload: &Workload{Sizes: []int64{50_000}, Weights: []float64{1}}}, p).(*homaSender)
	senv := newEnv()
	s.Start(senv)
	if senv.limit != 10_000 || s.DataClass(senv, 0) != 0 {
		t.Errorf("sender starts with limit %d, level %d: want RTTbytes unscheduled at level 0", senv.limit, s.DataClass(senv, 0))
	}
	s.OnCtrl(senv, &Ctrl{Kind: homaGrant, Value: 11_000, Aux: 2<<16 + 0})
	if senv.limit != 11_000 || s.DataClass(senv, 10_000) != 6 {
		t.Errorf("after a grant: limit %d, level %d; want 11000 and 6", senv.limit, s.DataClass(senv, 10_000))
	}
	// a RESEND covers only what the sender was allowed to send
	s.OnCtrl(senv, &Ctrl{Kind: homaResend, Value: 3000, Aux: 40_000})
	if senv.resend != [2]int64{3000, 11_000} {
		t.Errorf("resend %v, want [3000 11000)", senv.resend)
	}
}

// Homa's incast optimisation: a flow that starts with more than
// incastThreshold flows arriving at its receiver sends incastUnsched.
func TestHomaIncast(t *testing.T) {
	a, p := resolve(t, "homa", "", 100e9, nil)
	for _, tt := range []struct {
		incoming int
		limit    int64
	}{{1, 50_000}, {8, 50_000}, {9, 300}} {
		s := a.NewSender(FlowInfo{Size: 1e6, MTU: 1000, MaxBDP: 50_000, Classes: 8, Incoming: tt.incoming}, p)
		env := newEnv()
		s.Start(env)
		if env.limit != tt.limit {
			t.Errorf("%d arriving: unscheduled limit %d, want %d", tt.incoming, env.limit, tt.limit)
		}
	}
}

// ExpressPass' Algorithm 1 on one flow, by hand (α = 1/2, w_init = 1/16,
// target 10%): no loss raises the rate to (1 − w)·r + w·(1 + 0.1) =
// 0.5375; a second increase first moves w half-way to 0.5 (0.28125), then
// r = 0.695703125; 50% loss cuts r to r·0.5·1.1 and halves w.
func TestExpressPassFeedback(t *testing.T) {
	a, p := resolve(t, "expresspass", "", 100e9, nil)
	r := a.NewReceiver(p).(*xpReceiver)
	env := newDrivenRx()
	r.OnCtrl(env, &Ctrl{Flow: 7, Kind: xpRequest, Value: 1e6, Aux: 10_000 | 1036<<32})
	f := r.flows[7]
	if f == nil || f.rate != 0.5 || f.w != 1.0/16 || f.rtt != 10*Microsecond {
		t.Fatalf("flow after its request: %+v", f)
	}
	// the maximum credit rate is one credit per (48 + 1036) B at 100 Gbps
	if math.Abs(f.gapMax-86_720) > 1e-6 {
		t.Errorf("gap at the maximum rate %.1f ps, want 86720", f.gapMax)
	}
	step := func(total, dropped int64) {
		f.total, f.dropped = total, dropped
		r.update(env, f)
	}
	step(100, 0)
	if math.Abs(f.rate-0.5375) > 1e-12 || f.w != 1.0/16 {
		t.Errorf("first increase: rate %v w %v, want 0.5375 and 1/16", f.rate, f.w)
	}
	step(100, 0)
	if math.Abs(f.w-0.28125) > 1e-12 || math.Abs(f.rate-0.695703125) > 1e-12 {
		t.Errorf("second increase: rate %v w %v, want 0.695703125 and 0.28125", f.rate, f.w)
	}
	step(100, 50)
	if math.Abs(f.rate-0.695703125*0.5*1.1) > 1e-12 || math.Abs(f.w-0.140625) > 1e-12 {
		t.Errorf("50%% loss: rate %v w %v, want %v and 0.140625", f.rate, f.w, 0.695703125*0.5*1.1)
	}
	// too few credits accounted for (under half a period's worth) waits
	before := f.rate
	step(2, 1)
	if f.rate != before {
		t.Errorf("updated on 2 credits: rate %v", f.rate)
	}
	// echoes: only credits sent since the last update count, gaps are loss
	f.total, f.dropped, f.mark, f.expect = 0, 0, 10, 0
	for _, e := range []int64{3, 4, 11, 14} {
		r.OnData(env, &DataInfo{Flow: 7, Echo: e})
	}
	if f.total != 5 || f.dropped != 3 {
		t.Errorf("echoes 3, 4, 11, 14 after mark 10: %d accounted, %d lost; want 5 (10–14) and 3 (10, 12, 13)", f.total, f.dropped)
	}
}

// An ExpressPass sender sends one packet per credit, echoing the credit's
// number, stops credits once everything is sent, and spends credits on
// a range the receiver asks for again before new data.
func TestExpressPassSender(t *testing.T) {
	a, p := resolve(t, "expresspass", "", 100e9, nil)
	s := a.NewSender(FlowInfo{ID: 1, Size: 2000, MTU: 1000, Header: 36, BaseRTT: 5 * Microsecond}, p).(*xpSender)
	env := newEnv()
	s.Start(env)
	if env.limit != 0 || len(env.ctrls) != 1 || env.ctrls[0].Kind != xpRequest || env.ctrls[0].Value != 2000 ||
		env.ctrls[0].Aux != 5000|1036<<32 {
		t.Fatalf("start: limit %d, controls %+v", env.limit, env.ctrls)
	}
	s.OnCtrl(env, &Ctrl{Kind: xpCredit, Value: 0, Credit: true})
	s.OnCtrl(env, &Ctrl{Kind: xpCredit, Value: 1, Credit: true})
	if env.limit != 2000 || env.echo != 0 {
		t.Errorf("two credits: limit %d, echo %d; want 2000 and credit 0", env.limit, env.echo)
	}
	s.OnSend(env, 1000, 1036, false)
	if env.echo != 1 {
		t.Errorf("after the first packet the echo is %d, want credit 1", env.echo)
	}
	s.OnSend(env, 1000, 1036, false)
	if n := len(env.ctrls); n != 2 || env.ctrls[1].Kind != xpStop {
		t.Errorf("everything sent: controls %+v, want a stop", env.ctrls)
	}
	s.OnCtrl(env, &Ctrl{Kind: xpResend, Value: 1000, Aux: 2000})
	s.OnCtrl(env, &Ctrl{Kind: xpCredit, Value: 9, Credit: true})
	if env.resend != [2]int64{1000, 2000} || env.limit != 2000 {
		t.Errorf("a credit after a RESEND: resend %v, limit %d; want [1000 2000) and no new data", env.resend, env.limit)
	}
}
