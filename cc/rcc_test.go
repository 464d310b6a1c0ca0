package cc

import (
	"math"
	"testing"
)

// RCC's receiver state machine, driven packet by packet. Unless a case says
// otherwise: C = 100 Gbps, a fixed base one-way delay of 5 µs (threshold
// 6 µs, target 5.5 µs), a 10 µs round (fair share 125,000 B / N; last hop
// at B_R ≥ 0.95·125,000 = 118,750 B), 1000 B packets (no header, so that
// the byte counts are round).

func rccRx(t *testing.T, over map[string]float64) *RccReceiver {
	t.Helper()
	o := map[string]float64{"baseDelay": 5, "ewaRTT": 10}
	for k, v := range over {
		o[k] = v
	}
	a, p := resolve(t, "rcc", "", 100e9, o)
	return a.NewReceiver(p).(*RccReceiver)
}

// rxEnv records a receiver's series; its clock is set by the test.
type rxEnv struct {
	now    Time
	gauges map[[2]int64]float64 // (flow, series) -> value
	timers map[int]Time
}

func (e *rxEnv) Now() Time                  { return e.now }
func (e *rxEnv) SetTimer(slot int, at Time) { e.timers[slot] = at }
func (e *rxEnv) CancelTimer(slot int)       { delete(e.timers, slot) }
func (e *rxEnv) Event(int32, int, float64)  {}
func (e *rxEnv) Gauge(flow int32, series int, v float64) {
	if e.gauges != nil {
		e.gauges[[2]int64{int64(flow), int64(series)}] = v
	}
}

// rxNop is an environment that keeps nothing.
var rxNop = &rxEnv{}

// pkt is one data packet of flow at time at (µs) with one-way delay d (µs).
func pkt(flow int32, seq int64, at, d float64, first, last bool) *DataInfo {
	now := usec(at)
	return &DataInfo{Flow: flow, Seq: seq, Payload: 1000, Wire: 1000, Size: 1e9, SentAt: now - usec(d), Now: now,
		First: first, Last: last, InOrder: true, Src: flow}
}

// Eq. (1): in-network congestion after exactly n consecutive samples above
// base·(1+δ); a sample at or below the threshold resets the count. The
// packets come 1 µs apart (8 Gbps, far below η·C: never last-hop) after a
// warm-up packet at the base delay (the first packet of a round is
// extrapolated to line rate and so is classified last-hop).
func TestRCCDetection(t *testing.T) {
	cases := []struct {
		name   string
		n      float64
		delays []float64 // µs, one packet per µs after the warm-up
		enter  int       // index of the packet that enters PI, -1 none
	}{
		{"three above", 3, []float64{6.5, 6.5, 6.5}, 2},
		{"two above is not enough", 3, []float64{6.5, 6.5, 5.9, 6.5}, -1},
		{"reset then three", 3, []float64{6.5, 6.5, 5.5, 6.5, 6.5, 6.5}, 5},
		{"at the threshold does not count", 3, []float64{6.0, 6.0, 6.0, 6.0}, -1},
		{"n = 1", 1, []float64{6.01}, 0},
		{"n = 5", 5, []float64{7, 7, 7, 7, 7, 7}, 4},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := rccRx(t, map[string]float64{"n": c.n})
			if w := r.OnData(rxNop, pkt(1, 0, 0, 5, true, false)); w != 125_000 {
				t.Fatalf("warm-up window %d, want 125000", w)
			}
			got := -1
			for i, d := range c.delays {
				r.OnData(rxNop, pkt(1, int64(i+1)*1000, float64(i+1), d, false, false))
				if in, _, _ := r.InPI(1); in && got < 0 {
					got = i
				}
			}
			if got != c.enter {
				t.Errorf("entered PI at packet %d, want %d", got, c.enter)
			}
		})
	}
}

// Last hop versus in network: B_R against η·C·T, and the same delays
// classified differently by the receive rate.
func TestRCCClassification(t *testing.T) {
	r := rccRx(t, nil)
	T := 10 * Microsecond
	for _, c := range []struct {
		br   float64
		want bool
	}{{0, false}, {118_749, false}, {118_750, true}, {125_000, true}} {
		if got := r.LastHop(c.br, T); got != c.want {
			t.Errorf("LastHop(%.0f) = %v, want %v", c.br, got, c.want)
		}
	}
	// back-to-back packets at line rate (80 ns apart): the last hop is full,
	// so high delays never start PI and the window stays the fair share
	r = rccRx(t, nil)
	for i := 0; i < 400; i++ {
		w := r.OnData(rxNop, pkt(1, int64(i)*1000, float64(i)*0.08, 9, i == 0, false))
		if w != 125_000 {
			t.Fatalf("packet %d: window %d, want the fair share 125000", i, w)
		}
	}
	if in, _, _ := r.InPI(1); in {
		t.Error("line-rate arrivals were classified in-network")
	}
	// the same delays at 1 packet per µs: in network, PI after 3 packets
	r = rccRx(t, nil)
	r.OnData(rxNop, pkt(1, 0, 0, 5, true, false))
	for i := 1; i <= 3; i++ {
		r.OnData(rxNop, pkt(1, int64(i)*1000, float64(i), 9, false, false))
	}
	if in, _, _ := r.InPI(1); !in {
		t.Error("slow arrivals with high delay were not classified in-network")
	}
}

// N counts messages from their first to their last in-order packet; the
// fair share is C·RTT/N; a duplicate of a finished message is not counted
// and gets no window; a single-packet message counts for its own packet.
func TestRCCMessageCount(t *testing.T) {
	r := rccRx(t, map[string]float64{"pi": 0})
	steps := []struct {
		d       *DataInfo
		wantW   int64
		wantN   int
		comment string
	}{
		{pkt(1, 0, 0, 5, true, false), 125_000, 1, "flow 1 starts"},
		{pkt(2, 0, 1, 5, true, false), 62_500, 2, "flow 2 starts"},
		{pkt(3, 0, 2, 5, true, false), 41_667, 3, "flow 3 starts: 125000/3 rounded"},
		{pkt(1, 1000, 3, 5, false, false), 41_667, 3, "flow 1 continues"},
		{pkt(2, 1000, 4, 5, false, true), 41_667, 2, "flow 2 ends (its last packet still sees N = 3)"},
		{&DataInfo{Flow: 2, Seq: 0, Payload: 1000, Size: 2000, SentAt: usec(0), Now: usec(6), Src: 2}, 0, 2, "duplicate of finished flow 2"},
		{pkt(4, 0, 7, 5, true, true), 41_667, 2, "single-packet message 4"},
		{pkt(1, 2000, 8, 5, false, false), 62_500, 2, "flow 1 again"},
		{pkt(3, 1000, 9, 5, false, true), 62_500, 1, "flow 3 ends"},
		{pkt(1, 3000, 10, 5, false, false), 125_000, 1, "flow 1 alone"},
	}
	for _, s := range steps {
		if w := r.OnData(rxNop, s.d); w != s.wantW || r.N() != s.wantN {
			t.Errorf("%s: window %d N %d, want %d and %d", s.comment, w, r.N(), s.wantW, s.wantN)
		}
	}
}

// The explicit window assignment C·RTT/N with its options.
func TestRCCFairShare(t *testing.T) {
	cases := []struct {
		name string
		over map[string]float64
		n    int
		want float64
	}{
		{"25 G, 12 µs, N = 2", map[string]float64{"linkRate": 25_000, "ewaRTT": 12}, 2, 18_750},
		{"scaled by eta", map[string]float64{"linkRate": 25_000, "ewaRTT": 12, "ewaScale": 0.95}, 2, 17_812.5},
		{"100 G, 10 µs, N = 4", nil, 4, 31_250},
		{"floor at minWindow", map[string]float64{"minWindow": 1000}, 1000, 1000},
		{"no EWA: one line-rate window", map[string]float64{"ewa": 0}, 4, 125_000},
	}
	for _, c := range cases {
		r := rccRx(t, c.over)
		for i := 0; i < c.n; i++ {
			r.flows[int32(i)] = &rccFlow{}
		}
		if got := r.FairShare(r.rtt()); math.Abs(got-c.want) > 1e-6 {
			t.Errorf("%s: fair share %g, want %g", c.name, got, c.want)
		}
	}
	// learned: twice the smallest one-way delay seen at this receiver (3 µs
	// from source 7, then 2 µs from source 8): 100 G × 4 µs = 50,000 B
	r := rccRx(t, map[string]float64{"baseDelay": 0, "ewaRTT": 0})
	d := pkt(7, 0, 0, 3, true, false)
	d.Src = 7
	r.OnData(rxNop, d)
	d = pkt(8, 0, 1, 2, true, false)
	d.Src = 8
	if w := r.OnData(rxNop, d); w != 25_000 || r.rtt() != 4*Microsecond {
		t.Errorf("learned: window %d, round %d ps; want 25000 and 4 µs", w, r.rtt())
	}
}

// Eqs. (3)–(5) with the paper's gains: entering PI at the third sample of
// 6.5 µs (E = 1 µs): U = 1e4·1e-6 + 1e5·(1e-6 − 0) = 0.11 and
// W = 125000·(1 − tanh 0.11) = 111305 B. Per RTT the next update waits a
// round (10 µs); at 7.5 µs (E = 2 µs) U = 0.11 + 0.02 + 0.1 = 0.23 and
// W = 111305.19·(1 − tanh 0.23) = 86147 B. Per packet it happens at once.
func TestRCCPIUpdate(t *testing.T) {
	for _, perRTT := range []float64{1, 0} {
		r := rccRx(t, map[string]float64{"pidPerRTT": perRTT})
		r.OnData(rxNop, pkt(1, 0, 0, 5, true, false))
		r.OnData(rxNop, pkt(1, 1000, 1, 6.5, false, false))
		r.OnData(rxNop, pkt(1, 2000, 2, 6.5, false, false))
		if w := r.OnData(rxNop, pkt(1, 3000, 3, 6.5, false, false)); w != 111_305 {
			t.Fatalf("perRTT %v: first PI window %d, want 111305", perRTT, w)
		}
		if _, u, _ := r.InPI(1); math.Abs(u-0.11) > 1e-9 {
			t.Errorf("perRTT %v: U = %g, want 0.11", perRTT, u)
		}
		w := r.OnData(rxNop, pkt(1, 4000, 4, 7.5, false, false))
		if perRTT == 1 {
			if w != 111_305 {
				t.Errorf("per RTT: window changed between updates: %d", w)
			}
			w = r.OnData(rxNop, pkt(1, 5000, 13, 7.5, false, false)) // the round is over
		}
		if w != 86_147 {
			t.Errorf("perRTT %v: second PI window %d, want 86147", perRTT, w)
		}
		if _, u, _ := r.InPI(1); math.Abs(u-0.23) > 1e-9 {
			t.Errorf("perRTT %v: U = %g, want 0.23", perRTT, u)
		}
	}
}

// The PI window never exceeds the fair share: low delays grow it up to the
// cap (and the anti-windup holds U at 0 there); a second message halves
// the cap at once, between two PI updates.
func TestRCCFairShareCap(t *testing.T) {
	r := rccRx(t, map[string]float64{"pidPerRTT": 0})
	r.OnData(rxNop, pkt(1, 0, 0, 5, true, false))
	for i := 1; i <= 3; i++ {
		r.OnData(rxNop, pkt(1, int64(i)*1000, float64(i), 9, false, false)) // E = 3.5 µs
	}
	// U = (1e4 + 1e5)·3.5e-6 = 0.385, W = 125000·(1 − tanh 0.385)
	if _, _, w := r.InPI(1); math.Round(w) != 79_120 {
		t.Fatalf("E = 3.5 µs: window %.1f, want 79120", w)
	}
	var last int64
	for i := 4; i < 200; i++ {
		last = r.OnData(rxNop, pkt(1, int64(i)*1000, float64(i), 5, false, false)) // E = −0.5 µs
	}
	in, u, _ := r.InPI(1)
	if !in || last != 125_000 || u != 0 {
		t.Errorf("after low delays: in PI %v, window %d, U %g; want true, the cap 125000, 0", in, last, u)
	}
	r.OnData(rxNop, pkt(2, 0, 200, 5, true, false))
	if w := r.OnData(rxNop, pkt(1, 200_000, 201, 5.5, false, false)); w != 62_500 {
		t.Errorf("a second message: PI window %d, want the new cap 62500", w)
	}
	// no PI (RCC-EWA): always the fair share, whatever the delay
	r = rccRx(t, map[string]float64{"pi": 0})
	for i := 0; i < 10; i++ {
		if w := r.OnData(rxNop, pkt(1, int64(i)*1000, float64(i), 20, i == 0, false)); w != 125_000 {
			t.Fatalf("no PI: window %d at packet %d", w, i)
		}
	}
}

// The sender starts at line rate with one BDP and applies every assigned
// window; a window of 0 (none assigned) leaves it alone.
func TestRCCSender(t *testing.T) {
	a, p := resolve(t, "rcc", "", 100e9, nil)
	s := a.NewSender(FlowInfo{MaxBDP: 52_000}, p)
	env := newEnv()
	s.Start(env)
	if env.rate != Unlimited || env.window != 52_000 {
		t.Fatalf("start: rate %d window %d", env.rate, env.window)
	}
	s.OnAck(env, &Ack{Window: 6_500})
	if env.window != 6_500 {
		t.Errorf("window %d, want 6500", env.window)
	}
	s.OnAck(env, &Ack{})
	if env.window != 6_500 {
		t.Errorf("an ACK without a window changed it to %d", env.window)
	}
	if err := s.SetParam(env, "kp", 1); err != nil {
		t.Error(err)
	}
	if err := s.SetParam(env, "nope", 1); err == nil {
		t.Error("unknown parameter accepted")
	}
	r := a.NewReceiver(p)
	if err := r.SetParam("kd", 7e3); err != nil {
		t.Error(err)
	}
	if err := r.SetParam("nope", 1); err == nil {
		t.Error("receiver: unknown parameter accepted")
	}
}

// Live changes reach state already built: switching PI off takes a flow
// under PI back to the fair share at its next packet, and the round used
// for the fair share follows the delays seen, not a base set then unset.
func TestRCCLiveParams(t *testing.T) {
	r := rccRx(t, nil)
	r.OnData(rxNop, pkt(1, 0, 0, 5, true, false))
	r.OnData(rxNop, pkt(1, 1000, 1, 6.5, false, false))
	r.OnData(rxNop, pkt(1, 2000, 2, 6.5, false, false))
	if w := r.OnData(rxNop, pkt(1, 3000, 3, 6.5, false, false)); w != 111_305 {
		t.Fatalf("entering PI: window %d, want 111305", w)
	}
	if err := r.SetParam("pi", 0); err != nil {
		t.Fatal(err)
	}
	if w := r.OnData(rxNop, pkt(1, 4000, 4, 6.5, false, false)); w != 125_000 {
		t.Fatalf("after pi=0: window %d, want the fair share 125000", w)
	}
	if in, _, _ := r.InPI(1); in {
		t.Fatal("the flow is still under PI after pi=0")
	}

	// learned round: twice the smallest delay seen (2 µs here), whatever a
	// base set for a while said
	q := rccRx(t, map[string]float64{"baseDelay": 0.5, "ewaRTT": 0})
	q.OnData(rxNop, pkt(2, 0, 0, 2, true, false))
	if err := q.SetParam("baseDelay", 0); err != nil {
		t.Fatal(err)
	}
	// fair share over a 4 µs round: 100 Gbps × 4 µs / 8 = 50,000 B
	if w := q.OnData(rxNop, pkt(2, 1000, 10, 2, false, false)); w != 50_000 {
		t.Fatalf("after baseDelay back to 0: window %d, want 50000 (a 4 µs round)", w)
	}
}

// A flow whose packets arrive rounds apart is still tested for in-network
// congestion: a packet that comes alone after an idle gap starts a new
// round and says nothing of the link's rate (it used to be extrapolated to
// line rate, so such a flow was always classified last-hop).
func TestRCCIdleGap(t *testing.T) {
	r := rccRx(t, nil)
	r.OnData(rxNop, pkt(1, 0, 0, 5, true, false))
	for i := 1; i <= 3; i++ {
		// three rounds (30 µs) apart, each above the 6 µs threshold
		r.OnData(rxNop, pkt(1, int64(i)*1000, float64(30*i), 6.5, false, false))
	}
	if in, _, _ := r.InPI(1); !in {
		t.Error("packets rounds apart with high delays were not classified in-network")
	}
	// a burst at line rate after the gap is still last-hop from its second
	// packet on
	r = rccRx(t, nil)
	r.OnData(rxNop, pkt(1, 0, 0, 5, true, false))
	for i := 1; i <= 50; i++ {
		r.OnData(rxNop, pkt(1, int64(i)*1000, 100+float64(i)*0.08, 9, false, false))
	}
	if in, _, _ := r.InPI(1); in {
		t.Error("a line-rate burst after an idle gap was classified in-network")
	}
}

// B_R is the NIC's RX rate: the ACKs of the flows the receiver itself sends
// (OnRx) count with its data. Data at 91% of C alone is under η = 0.95, so
// high delays mean in-network congestion; with a 48 B ACK per data packet
// on the same link the NIC receives 95.4% of C and the last hop is full.
func TestRCCRxCountsAcks(t *testing.T) {
	for _, acks := range []bool{false, true} {
		r := rccRx(t, nil)
		env := &rxEnv{}
		for i := 0; i < 300; i++ {
			at := float64(i) * 0.088 // 1000 B every 88 ns: 90.9 Gbps
			env.now = usec(at)
			if acks && i > 0 {
				r.OnRx(env, 48)
			}
			r.OnData(env, pkt(1, int64(i)*1000, at, 9, i == 0, false))
		}
		in, _, _ := r.InPI(1)
		if in == acks {
			t.Errorf("ACKs counted %v: in PI %v, want %v", acks, in, !acks)
		}
	}
}

// The receiver reports, per flow, the window it assigned, N, whether the
// flow is under PI and its U, and B_R / (C·T).
func TestRCCReceiverSeries(t *testing.T) {
	r := rccRx(t, nil)
	env := &rxEnv{gauges: map[[2]int64]float64{}}
	g := func(flow int32, series int) (float64, bool) {
		v, ok := env.gauges[[2]int64{int64(flow), int64(series)}]
		return v, ok
	}
	r.OnData(env, pkt(2, 0, 0, 5, true, false))
	r.OnData(env, pkt(1, 0, 0.5, 5, true, false))
	for i := 1; i <= 3; i++ {
		r.OnData(env, pkt(1, int64(i)*1000, float64(i), 6.5, false, false))
	}
	w, _ := g(1, rccSeriesWindow)
	n, _ := g(1, rccSeriesN)
	pi, _ := g(1, rccSeriesPI)
	u, okU := g(1, rccSeriesU)
	util, _ := g(1, rccSeriesRxUtil)
	_, inPI, wantW := r.InPI(1)
	if w != math.Round(wantW) || n != 2 || pi != 1 || !okU || u != inPI {
		t.Errorf("flow 1: window %g (want %g), N %g, pi %g, u %g (set %v, want %g)", w, math.Round(wantW), n, pi, u, okU, inPI)
	}
	// 5000 B over 3 µs of a 10 µs round at 100 Gbps is far from full
	if util <= 0 || util >= 0.95 {
		t.Errorf("rx utilisation %g", util)
	}
	if pi, _ := g(2, rccSeriesPI); pi != 0 {
		t.Errorf("flow 2 reported under PI")
	}
	if _, ok := g(2, rccSeriesU); ok {
		t.Errorf("flow 2 reports a U before PI")
	}
}
