package cc

import (
	"strings"
	"testing"
)

// tcpFlow drives a tcp sender the way the engine would, one ACK per
// packet: it keeps SndUna/SndNxt/SndMax and a clock advancing one RTT per
// round.
type tcpFlow struct {
	t        *testing.T
	s        Sender
	env      *scriptEnv
	mss      int64
	una, max int64
}

const tcpMSS = 1000

func newTCP(t *testing.T, over map[string]float64) *tcpFlow {
	t.Helper()
	a, p := resolve(t, "tcp", "", 10e9, over)
	s := a.NewSender(FlowInfo{LineRate: 10e9, MaxBDP: 150_000, MTU: tcpMSS, Size: 1e12}, p)
	f := &tcpFlow{t: t, s: s, env: newEnv(), mss: tcpMSS}
	f.env.now = Microsecond
	s.Start(f.env)
	return f
}

func (f *tcpFlow) cwnd() int64 { return f.env.window }

// round sends a full window and acknowledges every packet of it, one ACK
// per packet, each acknowledging one MSS; the clock moves one RTT.
func (f *tcpFlow) round() {
	sent := f.una
	f.max = f.una + f.cwnd()
	f.env.now += 100 * Microsecond
	for sent < f.max {
		sent += f.mss
		f.ack(f.mss, false)
	}
}

// ack delivers one ACK (or NACK) acknowledging newly bytes.
func (f *tcpFlow) ack(newly int64, nack bool) {
	f.una += newly
	if f.max < f.una {
		f.max = f.una
	}
	nxt := f.max
	if nack {
		nxt = f.una // the engine goes back before the sender hears of it
	}
	f.s.OnAck(f.env, &Ack{Seq: f.una, NACK: nack, NewlyAcked: newly, Packets: 1,
		SentAt: f.env.now - 100*Microsecond, SndNxt: nxt, SndUna: f.una, SndMax: f.max})
}

func (f *tcpFlow) timeout() {
	f.s.(TimeoutHandler).OnTimeout(f.env, Timeout{SndUna: f.una, SndMax: f.max})
}

func (f *tcpFlow) ssthresh() float64 { return f.env.gauges[tcpSeriesSsthresh] }

// Start: RFC 6928's 10 segments, at line rate, unlimited ssthresh.
func TestTCPStart(t *testing.T) {
	f := newTCP(t, nil)
	if f.cwnd() != 10*tcpMSS || f.env.rate != Unlimited || f.ssthresh() != 0 {
		t.Fatalf("start: window %d rate %d ssthresh %g", f.cwnd(), f.env.rate, f.ssthresh())
	}
	f = newTCP(t, map[string]float64{"initWindow": 2})
	if f.cwnd() != 2*tcpMSS {
		t.Fatalf("initWindow 2: window %d", f.cwnd())
	}
}

// Window growth per RTT: slow start doubles it (from 10 segments: 20, 40,
// 80, 160), stops at ssthresh, and congestion avoidance adds one MSS per
// round. With the per-ACK increment MSS²/cwnd and the window growing within
// the round, a round adds a little less than one MSS (W·MSS/(W+…)): within
// 5% of it at these windows.
func TestTCPGrowthPerRTT(t *testing.T) {
	cases := []struct {
		name   string
		over   map[string]float64
		rounds int
		want   []float64 // window in segments after each round
		tol    float64   // segments
	}{
		{"slow start doubles", nil, 4, []float64{20, 40, 80, 160}, 0},
		// round 2: ten ACKs reach 30, the ten others add 10·MSS/30
		{"slow start stops at ssthresh", map[string]float64{"initSsthresh": 30}, 3, []float64{20, 30.33, 31.32}, 0.05},
		{"avoidance +1 MSS", map[string]float64{"initSsthresh": 10}, 5, []float64{11, 12, 13, 14, 15}, 0.05 * 5},
		{"avoidance at 100 segments", map[string]float64{"initWindow": 100, "initSsthresh": 100}, 3, []float64{101, 102, 103}, 0.05},
		{"capped by maxWindow", map[string]float64{"maxWindow": 25_000}, 3, []float64{20, 25, 25}, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newTCP(t, c.over)
			for i := 0; i < c.rounds; i++ {
				f.round()
				got := float64(f.cwnd()) / tcpMSS
				if !near(got, c.want[i], c.tol+1.0/tcpMSS) {
					t.Fatalf("round %d: window %.3f segments, want %.3f ± %.2f", i+1, got, c.want[i], c.tol)
				}
			}
		})
	}
}

// One cut per window of losses: the first NACK halves the window
// (ssthresh = cwnd/2) and sets recover = SndMax; NACKs and partial ACKs
// below recover change nothing (no second cut, no growth); the ACK that
// reaches recover ends recovery; the next NACK cuts again.
func TestTCPOneCutPerWindow(t *testing.T) {
	f := newTCP(t, nil)
	f.round()
	f.round() // 40 segments
	f.max = f.una + f.cwnd()
	recover := f.max
	f.ack(0, true)
	if f.cwnd() != 20*tcpMSS || f.ssthresh() != 20*tcpMSS {
		t.Fatalf("first NACK: window %d ssthresh %g, want 20000 20000", f.cwnd(), f.ssthresh())
	}
	if len(f.env.events[tcpSeriesLoss]) != 1 || f.env.events[tcpSeriesLoss][0] != 1 {
		t.Fatalf("loss events %v, want [1]", f.env.events[tcpSeriesLoss])
	}
	steps := []struct {
		newly int64
		nack  bool
		want  int64 // window after the step
	}{
		{0, true, 20 * tcpMSS},                                     // a second NACK in the same window: ignored
		{5 * tcpMSS, false, 20 * tcpMSS},                           // partial ACK: no growth
		{5 * tcpMSS, true, 20 * tcpMSS},                            // partial ACK on a NACK: ignored
		{recover - f.una - 10*tcpMSS - tcpMSS, false, 20 * tcpMSS}, // one MSS short of recover
	}
	for i, st := range steps {
		f.ack(st.newly, st.nack)
		if f.cwnd() != st.want {
			t.Fatalf("step %d: window %d, want %d", i, f.cwnd(), st.want)
		}
	}
	if f.una >= recover {
		t.Fatalf("test script: SndUna %d already past recover %d", f.una, recover)
	}
	f.ack(tcpMSS, false) // SndUna = recover: recovery over, this ACK does not grow
	if f.una != recover || f.cwnd() != 20*tcpMSS {
		t.Fatalf("full ACK: SndUna %d (recover %d), window %d", f.una, recover, f.cwnd())
	}
	f.ack(tcpMSS, false) // congestion avoidance: + MSS²/cwnd
	if f.cwnd() != 20*tcpMSS+tcpMSS*tcpMSS/(20*tcpMSS) {
		t.Fatalf("after recovery: window %d, want 20050", f.cwnd())
	}
	f.ack(0, true)
	if f.cwnd() != 10025 || len(f.env.events[tcpSeriesLoss]) != 2 {
		t.Fatalf("NACK after recovery: window %d (want 10025), %d cuts", f.cwnd(), len(f.env.events[tcpSeriesLoss]))
	}
}

// The cut never goes below 2 MSS (RFC 5681's floor on ssthresh).
func TestTCPCutFloor(t *testing.T) {
	f := newTCP(t, map[string]float64{"initWindow": 3})
	f.ack(0, true)
	if f.cwnd() != 2*tcpMSS || f.ssthresh() != 2*tcpMSS {
		t.Fatalf("NACK at 3 segments: window %d ssthresh %g, want 2000 2000", f.cwnd(), f.ssthresh())
	}
}

// A retransmission timeout: window 1 MSS, ssthresh half the window before,
// then slow start up to ssthresh and avoidance after it. A timeout in a
// window already cut (by a NACK or a first timeout) keeps that ssthresh.
func TestTCPTimeout(t *testing.T) {
	f := newTCP(t, nil)
	f.round()
	f.round() // 40 segments
	f.max = f.una + f.cwnd()
	f.timeout()
	if f.cwnd() != tcpMSS || f.ssthresh() != 20*tcpMSS {
		t.Fatalf("timeout: window %d ssthresh %g, want 1000 20000", f.cwnd(), f.ssthresh())
	}
	if ev := f.env.events[tcpSeriesLoss]; len(ev) != 1 || ev[0] != 2 {
		t.Fatalf("loss events %v, want [2]", ev)
	}
	f.timeout() // backed-off second timeout: ssthresh held
	if f.cwnd() != tcpMSS || f.ssthresh() != 20*tcpMSS {
		t.Fatalf("second timeout: window %d ssthresh %g, want 1000 20000", f.cwnd(), f.ssthresh())
	}
	// slow start from one segment below recover: ACKs grow the window
	for _, want := range []int64{2, 3, 4} {
		f.ack(tcpMSS, false)
		if f.cwnd() != want*tcpMSS {
			t.Fatalf("slow start after timeout: window %d, want %d", f.cwnd(), want*tcpMSS)
		}
	}
	f.ack(0, true) // a NACK of data sent before the timeout: ignored
	if f.cwnd() != 4*tcpMSS {
		t.Fatalf("NACK below recover after a timeout: window %d", f.cwnd())
	}

	// a timeout during a NACK's recovery keeps the NACK's ssthresh
	f = newTCP(t, nil)
	f.round() // 20 segments
	f.max = f.una + f.cwnd()
	f.ack(0, true) // cwnd 10, ssthresh 10
	f.timeout()
	if f.cwnd() != tcpMSS || f.ssthresh() != 10*tcpMSS {
		t.Fatalf("timeout in recovery: window %d ssthresh %g, want 1000 10000", f.cwnd(), f.ssthresh())
	}
	f.ack(tcpMSS, false) // the timeout lifts the NACK's freeze: slow start
	if f.cwnd() != 2*tcpMSS {
		t.Fatalf("slow start after a timeout in recovery: window %d", f.cwnd())
	}
}

// Pacing: the rate follows pacingGain × cwnd / srtt once an RTT is known;
// off, the line rate.
func TestTCPPacing(t *testing.T) {
	f := newTCP(t, map[string]float64{"pacing": 1, "pacingGain": 2})
	if f.env.rate != Unlimited {
		t.Fatalf("no RTT yet: rate %d, want line rate", f.env.rate)
	}
	f.round() // every ACK's RTT is 100 µs; window 20 segments
	want := 2 * 20_000 * 8 / 100e-6
	if !near(float64(f.env.rate), want, 1) {
		t.Fatalf("paced rate %d, want %g", f.env.rate, want)
	}
	if err := f.s.SetParam(f.env, "pacing", 0); err != nil || f.env.rate != Unlimited {
		t.Fatalf("pacing off: rate %d, err %v", f.env.rate, err)
	}
}

// Bad values are refused by the registry, each error naming its parameter;
// an unknown name is refused live too.
func TestTCPParams(t *testing.T) {
	a, _ := Lookup("tcp")
	cases := []struct {
		name string
		v    float64
		err  string
	}{
		{"initWindow", 0, "initWindow: 0 out of range [1, 1e+06]"},
		{"initWindow", 2.5, "initWindow: must be a whole number, got 2.5"},
		{"initSsthresh", -1, "initSsthresh: -1 out of range"},
		{"maxWindow", -5, "maxWindow: -5 out of range"},
		{"pacing", 2, "pacing: 2 out of range [0, 1]"},
		{"pacingGain", 0, "pacingGain: 0 out of range [0.1, 10]"},
		{"cwnd", 1, "cwnd: unknown parameter of tcp"},
	}
	for _, c := range cases {
		_, errs := a.Resolve("", map[string]float64{c.name: c.v}, 10e9)
		if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), c.err) {
			t.Errorf("%s = %g: errors %v, want %q", c.name, c.v, errs, c.err)
		}
	}
	f := newTCP(t, nil)
	if err := f.s.SetParam(f.env, "cwnd", 1); err == nil || !strings.Contains(err.Error(), `"cwnd"`) {
		t.Errorf("SetParam(cwnd): %v", err)
	}
	if err := f.s.SetParam(f.env, "maxWindow", 5000); err != nil || f.cwnd() != 5000 {
		t.Errorf("live maxWindow 5000: window %d, err %v", f.cwnd(), err)
	}
}
