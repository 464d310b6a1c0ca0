package sim_test

import (
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"

	"cclab/cc"
	"cclab/sim"
)

// probe is a test algorithm: it records what the engine tells it and does
// what the test asks (a fixed rate and window, timers, a receiver window, a
// congestion point that always answers).
type probe struct {
	rate, window int64
	acks         []cc.Ack
	ints         [][]cc.IntHop
	cnps         int
	qcn          []cc.QCNFeedback
	timerAt      []sim.Time
	sends        int
	timerEvery   sim.Time
	params       map[string]float64
	toggle       bool
}

func (p *probe) Start(env cc.Env) {
	env.SetRate(p.rate)
	env.SetWindow(p.window)
	if p.timerEvery > 0 {
		env.SetTimer(1, env.Now()+p.timerEvery)
	}
	env.Gauge(0, 42)
}

func (p *probe) OnAck(env cc.Env, a *cc.Ack) {
	c := *a
	c.INT = nil
	p.acks = append(p.acks, c)
	p.ints = append(p.ints, append([]cc.IntHop(nil), a.INT...))
	env.Event(1, float64(len(p.acks)))
}
func (p *probe) OnCNP(env cc.Env)                    { p.cnps++ }
func (p *probe) OnQCN(env cc.Env, fb cc.QCNFeedback) { p.qcn = append(p.qcn, fb) }
func (p *probe) OnTimer(env cc.Env, slot int) {
	p.timerAt = append(p.timerAt, env.Now())
	env.SetTimer(1, env.Now()+p.timerEvery)
}
func (p *probe) OnSend(env cc.Env, payload, wire int64, retx bool) {
	p.sends++
	if p.toggle {
		// change the rate on every send: the engine must not start another
		// transmission from inside this callback
		if p.sends%2 == 0 {
			env.SetRate(cc.Unlimited)
		} else {
			env.SetRate(200e9)
		}
	}
}
func (p *probe) SetParam(env cc.Env, name string, v float64) error {
	p.params[name] = v
	if name == "rateGbps" {
		env.SetRate(int64(v * 1e9))
	}
	return nil
}

// probeRx is a receiver that assigns a fixed window, counts what its NIC
// takes in, and (with timerAfter) arms a timer after a flow's first packet
// that reports an event for it.
type probeRx struct {
	window     int64
	timerAfter sim.Time
	dataWire   int64 // bytes of its data packets (OnData)
	otherWire  int64 // bytes of everything else (OnRx)
	timerFlow  int32
	timerAt    sim.Time
	fired      []sim.Time
}

func (r *probeRx) OnData(env cc.ReceiverEnv, d *cc.DataInfo) int64 {
	r.dataWire += d.Wire
	env.Gauge(d.Flow, 2, float64(d.Seq+d.Payload)) // probe_rx_bytes: bytes received in order so far
	if r.timerAfter > 0 && d.First {
		r.timerFlow, r.timerAt = d.Flow, d.Now+r.timerAfter
		env.SetTimer(1, r.timerAt)
	}
	return r.window
}
func (r *probeRx) OnRx(env cc.ReceiverEnv, wire int64) { r.otherWire += wire }
func (r *probeRx) OnTimer(env cc.ReceiverEnv, slot int) {
	r.fired = append(r.fired, env.Now())
	env.Event(r.timerFlow, 3, float64(slot)) // probe_rx_timer
}
func (r *probeRx) SetParam(name string, v float64) error { return nil }

type probeCP struct{ every, n int }

func (c *probeCP) OnEnqueue(env cc.CPEnv, qlen, pkt int64) (int, bool) {
	c.n++
	return 7, c.every > 0 && c.n%c.every == 0
}
func (c *probeCP) SetParam(name string, v float64) error { return nil }

type probeOpts struct {
	rate, window int64
	timerEvery   sim.Time
	ackHigh      bool
	intSpec      cc.IntSpec
	rxWindow     int64
	rxTimer      sim.Time
	rxs          *[]*probeRx // receivers made, when not nil
	cpEvery      int
	toggle       bool
	stats        bool // summarise probe_acks in the results
}

// probeAlgo returns an algorithm whose senders are recorded in *got.
func probeAlgo(o probeOpts, got *[]*probe) sim.AlgoSpec {
	a := &cc.Algorithm{
		Name:            "probe",
		AckHighPriority: o.ackHigh,
		INT:             o.intSpec,
		Param: []cc.Param{{Name: "rateGbps", Kind: cc.KindNumber, Min: 0, Max: 1000, Default: 0, Live: true},
			{Name: "countTimeout", Kind: cc.KindTime, Unit: "us", Min: 0, Max: 1e6, Default: 0, Live: true}},
		Series: []cc.SeriesSpec{{Name: "probe_gauge"}, {Name: "probe_acks", Stats: o.stats}, {Name: "probe_rx_bytes"}, {Name: "probe_rx_timer"}},
		NewSender: func(info cc.FlowInfo, p cc.Params) cc.Sender {
			pr := &probe{rate: o.rate, window: o.window, timerEvery: o.timerEvery, params: map[string]float64{}, toggle: o.toggle}
			*got = append(*got, pr)
			return pr
		},
	}
	if o.rxWindow > 0 {
		a.NewReceiver = func(cc.Params) cc.Receiver {
			r := &probeRx{window: o.rxWindow, timerAfter: o.rxTimer}
			if o.rxs != nil {
				*o.rxs = append(*o.rxs, r)
			}
			return r
		}
	}
	if o.cpEvery > 0 {
		a.NewCongestionPoint = func(cc.PortInfo, cc.Params) cc.CongestionPoint { return &probeCP{every: o.cpEvery} }
	}
	return sim.AlgoSpec{Algo: a, Params: cc.Params{"rateGbps": 0, "countTimeout": 0}}
}

// INT: every ACK echoes one record per switch with the port's rate, the
// dequeue time, cumulative bytes, queue, and the active flow count when the
// algorithm asks for flow counting; the echoed send timestamp gives the RTT.
func TestINTEcho(t *testing.T) {
	var got []*probe
	tp := dumbbell(1, 1e9, sim.Microsecond)
	cfg := baseConfig(t, tp, probeAlgo(probeOpts{rate: cc.Unlimited, window: cc.Unlimited,
		intSpec: cc.IntSpec{FixedBytes: 32, FlowCount: true}}, &got))
	cfg.Flows = []sim.FlowSpec{tp.flow("h0", "r0", 20_000, 0)}
	_, r := run(t, cfg)
	p := got[0]
	// the ACK that completes the flow ends it and is not handed to the algorithm
	if len(p.acks) != 19 {
		t.Fatalf("%d ACKs delivered for 20 packets with ackEvery 1, want 19", len(p.acks))
	}
	wire := 1000 + cfg.Host.Header + 32 // payload, header (36 B, HPCC's), the probe's 32 B of INT
	for i, a := range p.acks {
		if a.Seq != int64(i+1)*1000 || a.Packets != 1 || a.NACK || a.CNP {
			t.Fatalf("ack %d: %+v", i, a)
		}
		hops := p.ints[i]
		if len(hops) != 2 {
			t.Fatalf("ack %d: %d INT hops, want 2 (s0, s1)", i, len(hops))
		}
		for h, hop := range hops {
			if hop.Rate != 1e9 || hop.Flows != 1 {
				t.Errorf("ack %d hop %d: rate %d flows %d", i, h, hop.Rate, hop.Flows)
			}
			// each port had sent i earlier data packets of this flow
			if hop.TxBytes != int64(i)*wire {
				t.Errorf("ack %d hop %d: txBytes %d, want %d", i, h, hop.TxBytes, int64(i)*wire)
			}
			if hop.Qlen != 0 {
				t.Errorf("ack %d hop %d: qlen %d for a lone flow", i, h, hop.Qlen)
			}
		}
		// s0 dequeues the packet when it has arrived: one serialisation and
		// one link after it left h0
		ser := sim.Time(wire * 8000) // ps at 1 Gbps
		if want := a.SentAt + ser + sim.Microsecond; hops[0].TS != want {
			t.Errorf("ack %d: s0 dequeue at %d, want %d", i, hops[0].TS, want)
		}
	}
	if got, want := r.Flows[0].FCT, r.Flows[0].IdealFCT; got > want*102/100 {
		t.Errorf("FCT %d vs ideal %d", got, want)
	}
}

// The active-flow counter forgets a flow once it has been idle for the
// timeout (MPCC thesis A.1): two flows share s0->s1, the second starts late;
// the counts seen by the first flow go 1 -> 2 -> 1.
func TestFlowCountIdleTimeout(t *testing.T) {
	var got []*probe
	tp := dumbbell(2, 10e9, sim.Microsecond)
	cfg := baseConfig(t, tp, probeAlgo(probeOpts{rate: cc.Unlimited, window: 20_000,
		intSpec: cc.IntSpec{FixedBytes: 32, FlowCount: true}}, &got))
	cfg.Switch.FlowCountTimeout = 20 * sim.Microsecond
	cfg.Flows = []sim.FlowSpec{
		tp.flow("h0", "r0", 1_000_000, 0),
		tp.flow("h1", "r0", 100_000, 100*sim.Microsecond),
	}
	run(t, cfg)
	var seq []int32
	for _, hops := range got[0].ints {
		n := hops[0].Flows // s0->s1, shared by both flows
		if len(seq) == 0 || seq[len(seq)-1] != n {
			seq = append(seq, n)
		}
	}
	if fmt.Sprint(seq) != "[1 2 1]" {
		t.Errorf("flow counts seen by flow 0: %v, want [1 2 1]", seq)
	}
}

// An algorithm parameter can own the flow counters' idle timeout
// (cc.IntSpec.FlowCountTimeoutParam, MPCC's countTimeout): at 0 the switch's
// timeout (here 1 s, so the second flow is never forgotten) holds; a live
// change to 20 µs at 400 µs makes the counters forget it 20 µs after its
// last packet (it sends 100 KB from 100 µs: about 100 µs at 10 Gbps).
func TestFlowCountTimeoutParam(t *testing.T) {
	for _, live := range []bool{false, true} {
		var got []*probe
		tp := dumbbell(2, 10e9, sim.Microsecond)
		cfg := baseConfig(t, tp, probeAlgo(probeOpts{rate: cc.Unlimited, window: 20_000,
			intSpec: cc.IntSpec{FixedBytes: 32, FlowCount: true, FlowCountTimeoutParam: "countTimeout"}}, &got))
		cfg.Switch.FlowCountTimeout = sim.Second
		cfg.Flows = []sim.FlowSpec{
			tp.flow("h0", "r0", 1_000_000, 0),
			tp.flow("h1", "r0", 100_000, 100*sim.Microsecond),
		}
		want := "[1 2]"
		if live {
			cfg.Events = []sim.EventSpec{{At: 400 * sim.Microsecond, Kind: sim.EventParams, Algo: -1,
				Params: map[string]float64{"countTimeout": 20}}}
			want = "[1 2 1]"
		}
		run(t, cfg)
		var seq []int32
		for _, hops := range got[0].ints {
			if n := hops[0].Flows; len(seq) == 0 || seq[len(seq)-1] != n {
				seq = append(seq, n)
			}
		}
		if fmt.Sprint(seq) != want {
			t.Errorf("live change %v: flow counts seen by flow 0: %v, want %s", live, seq, want)
		}
	}
}

// An event series that asks for it is summarised in the results (count,
// mean, nearest-rank p50 and p99, max) even with telemetry off: the probe
// reports 1, 2, …, n at its n-th ACK, for each of two flows of 20 packets
// (19 ACKs reach the algorithm: the last one finishes the flow).
func TestSeriesStats(t *testing.T) {
	var got []*probe
	tp := dumbbell(2, 10e9, sim.Microsecond)
	cfg := baseConfig(t, tp, probeAlgo(probeOpts{rate: cc.Unlimited, window: cc.Unlimited, stats: true}, &got))
	cfg.Telemetry.Interval = 0
	cfg.Flows = []sim.FlowSpec{tp.flow("h0", "r0", 20_000, 0), tp.flow("h1", "r0", 20_000, 0)}
	_, r := run(t, cfg)
	if len(r.SeriesStats) != 1 {
		t.Fatalf("series stats %+v", r.SeriesStats)
	}
	st := r.SeriesStats[0]
	// values 1..19 twice: sorted, rank ⌊38·0.5⌋ = 19 is 10, rank ⌊38·0.99⌋ = 37 is 19
	if st.Name != "probe_acks" || st.Count != 38 || st.Mean != 10 || st.P50 != 10 || st.P99 != 19 || st.Max != 19 {
		t.Fatalf("stats %+v, want 38 values, mean 10, p50 10, p99 19, max 19", st)
	}
}

// Pacing: a flow whose algorithm sets 20 Gbps on a 100 Gbps NIC sends its
// wire bytes at 20 Gbps; a live parameter change moves it to 50 Gbps.
func TestPacingAndLiveRate(t *testing.T) {
	var got []*probe
	tp := star(2, 100e9, sim.Microsecond)
	cfg := baseConfig(t, tp, probeAlgo(probeOpts{rate: 20e9, window: cc.Unlimited}, &got))
	cfg.Flows = []sim.FlowSpec{tp.flow("h0", "h1", 5_000_000, 0)}
	cfg.Events = []sim.EventSpec{{At: 1 * sim.Millisecond, Kind: sim.EventParams, Algo: -1, Params: map[string]float64{"rateGbps": 50}}}
	c := &collector{}
	s, r := run(t, cfg, c)
	ts, thr := series(s, c, "throughput_bps", "0")
	var before, after []float64
	for i := range ts {
		switch {
		case ts[i] > 0.1e-3 && ts[i] < 0.95e-3:
			before = append(before, thr[i])
		case ts[i] > 1.1e-3 && ts[i] < float64(r.Flows[0].Finish)/1e12-20e-6:
			after = append(after, thr[i])
		}
	}
	for _, c := range []struct {
		v    []float64
		rate float64
	}{{before, 20e9}, {after, 50e9}} {
		want := c.rate * 1000 / float64(1000+cfg.Host.Header)
		// 1%: the pacer spaces packets by exactly their wire time at the rate;
		// each 10 µs sample counts whole packets, averaged over many samples.
		if got := mean(c.v); math.Abs(got-want)/want > 0.01 {
			t.Errorf("goodput %.4g, want %.4g (paced at %.0f Gbps)", got, want, c.rate/1e9)
		}
	}
	if got[0].params["rateGbps"] != 50 {
		t.Error("parameter change not delivered")
	}
	_, rate := series(s, c, "rate_bps", "0")
	if rate[0] != 20e9 || rate[len(rate)-1] != 50e9 {
		t.Errorf("rate_bps series from %g to %g", rate[0], rate[len(rate)-1])
	}
	_, g := series(s, c, "probe_gauge", "0")
	if len(g) == 0 || g[0] != 42 {
		t.Errorf("algorithm gauge series %v", g[:min(3, len(g))])
	}
	_, ev := series(s, c, "probe_acks", "0")
	if len(ev) != len(got[0].acks) {
		t.Errorf("%d algorithm event samples for %d ACKs", len(ev), len(got[0].acks))
	}
}

// Windows: with a window of 4 packets the flow never has more than 4000
// payload bytes unacknowledged; a receiver-assigned window rides in the ACKs.
func TestWindowAndReceiverWindow(t *testing.T) {
	var got []*probe
	tp := dumbbell(1, 10e9, 10*sim.Microsecond)
	cfg := baseConfig(t, tp, probeAlgo(probeOpts{rate: cc.Unlimited, window: 4000, rxWindow: 12345}, &got))
	cfg.Flows = []sim.FlowSpec{tp.flow("h0", "r0", 400_000, 0)}
	_, r := run(t, cfg)
	for i, a := range got[0].acks {
		if a.SndNxt-a.SndUna > 4000 {
			t.Fatalf("ack %d: %d bytes outstanding with a 4000 B window", i, a.SndNxt-a.SndUna)
		}
		if a.Window != 12345 {
			t.Fatalf("ack %d carries window %d, want the receiver's 12345", i, a.Window)
		}
	}
	// 4 packets per RTT of ~64 µs: the window, not the link, sets the pace
	data, ack := sim.Time(1000+cfg.Host.Header), sim.Time(cfg.Host.Ack)
	rtt := float64(6*10*sim.Microsecond+3*data*800+3*ack*800) / 1e12
	want := 400_000 / 4000 * rtt
	gotT := float64(r.Flows[0].FCT) / 1e12
	if math.Abs(gotT-want)/want > 0.05 {
		t.Errorf("window-limited FCT %.1f µs, want ~%.1f µs (100 RTTs)", gotT*1e6, want*1e6)
	}
}

// A receiver-side algorithm gets an environment like a sender's: its gauge
// and event series are charted per flow, its timers fire at the time it
// set, and its NIC's RX reaches it: every packet the host takes in, data
// through OnData and the rest (here the ACKs of the flow the host sends)
// through OnRx, each exactly once.
func TestReceiverEnv(t *testing.T) {
	var got []*probe
	var rxs []*probeRx
	tp := star(2, 100e9, sim.Microsecond)
	cfg := baseConfig(t, tp, probeAlgo(probeOpts{rate: cc.Unlimited, window: cc.Unlimited, rxWindow: 1 << 40,
		rxTimer: 5 * sim.Microsecond, rxs: &rxs}, &got))
	cfg.Flows = []sim.FlowSpec{tp.flow("h0", "h1", 100_000, 0), tp.flow("h1", "h0", 50_000, 2*sim.Microsecond)}
	c := &collector{}
	s, _ := run(t, cfg, c)
	if len(rxs) != 2 {
		t.Fatalf("%d receivers, want one per receiving host", len(rxs))
	}
	at1, at0 := rxs[0], rxs[1] // h1 receives first
	data := func(size int64) int64 { return size + size/1000*cfg.Host.Header }
	// h1 takes in flow 0's data and the ACKs of flow 1 (one per packet)
	if at1.dataWire != data(100_000) || at1.otherWire != 50*cfg.Host.Ack {
		t.Errorf("h1's receiver: data %d B (want %d), other %d B (want %d)", at1.dataWire, data(100_000), at1.otherWire, 50*cfg.Host.Ack)
	}
	if at0.dataWire != data(50_000) || at0.otherWire != 100*cfg.Host.Ack {
		t.Errorf("h0's receiver: data %d B (want %d), other %d B (want %d)", at0.dataWire, data(50_000), at0.otherWire, 100*cfg.Host.Ack)
	}
	for _, rx := range rxs {
		if len(rx.fired) != 1 || rx.fired[0] != rx.timerAt {
			t.Errorf("timer fired at %v, want once at %d", rx.fired, rx.timerAt)
		}
	}
	gts, gv := series(s, c, "probe_rx_bytes", "0")
	if len(gv) == 0 || gv[len(gv)-1] <= 0 || gv[len(gv)-1] > 100_000 {
		t.Errorf("flow 0's receiver gauge: %v at %v", gv, gts)
	}
	ets, _ := series(s, c, "probe_rx_timer", "1")
	if len(ets) != 1 || sim.Time(ets[0]*1e12+0.5) != rxs[1].timerAt {
		t.Errorf("flow 1's receiver event at %v s, want once at %d ps", ets, rxs[1].timerAt)
	}
}

// Timers fire at the times the algorithm set, and stop with the flow.
func TestTimers(t *testing.T) {
	var got []*probe
	tp := star(2, 100e9, sim.Microsecond)
	cfg := baseConfig(t, tp, probeAlgo(probeOpts{rate: cc.Unlimited, window: cc.Unlimited, timerEvery: 7 * sim.Microsecond}, &got))
	cfg.Flows = []sim.FlowSpec{tp.flow("h0", "h1", 1_000_000, 3*sim.Microsecond)}
	_, r := run(t, cfg)
	p := got[0]
	for i, at := range p.timerAt {
		if want := 3*sim.Microsecond + sim.Time(i+1)*7*sim.Microsecond; at != want {
			t.Fatalf("timer %d at %d, want %d", i, at, want)
		}
	}
	if last := p.timerAt[len(p.timerAt)-1]; last > r.Flows[0].Finish {
		t.Errorf("timer fired at %d after the flow finished at %d", last, r.Flows[0].Finish)
	}
	if p.sends != 1000 {
		t.Errorf("OnSend called %d times for 1000 packets", p.sends)
	}
}

// ACKs every 4 packets (and always for the last); CNPs flagged on the ACK of
// every marked packet by default, or at most one per interval, standalone
// when the packet is not acknowledged.
func TestAckEveryAndCNP(t *testing.T) {
	cases := []struct {
		name        string
		ackEvery    int
		cnpInterval sim.Time
	}{
		{"every ack, cnp per mark", 1, 0},
		{"ack every 4, cnp per mark", 4, 0},
		{"ack every 4, cnp 50us", 4, 50 * sim.Microsecond},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []*probe
			tp := star(3, 100e9, sim.Microsecond)
			cfg := baseConfig(t, tp, probeAlgo(probeOpts{rate: cc.Unlimited, window: cc.Unlimited, ackHigh: true}, &got))
			cfg.Host.AckEvery = tc.ackEvery
			cfg.Host.CNPInterval = tc.cnpInterval
			cfg.Switch.ECN = sim.ECNConfig{Enabled: true, Kmin: 5000, Kmax: 5000, Pmax: 1}
			cfg.Flows = []sim.FlowSpec{tp.flow("h0", "h2", 1_000_003, 0), tp.flow("h1", "h2", 1_000_000, 0)}
			_, r := run(t, cfg)
			var marks int64
			for _, p := range r.Ports {
				marks += p.Marks
			}
			if marks == 0 {
				t.Fatal("no ECN marks: the case needs a queue above kmax")
			}
			p := got[0]
			pkts := 1001
			// every ackEvery-th packet and the last one are acknowledged; the
			// final ACK completes the flow and is not delivered to the algorithm
			wantAcks := (pkts+tc.ackEvery-1)/tc.ackEvery - 1
			if len(p.acks) != wantAcks {
				t.Errorf("%d ACKs delivered, want %d", len(p.acks), wantAcks)
			}
			var flagged, marked, covered int
			for _, a := range p.acks {
				covered += a.Packets
				marked += a.ECNMarked
				if a.CNP {
					flagged++
				}
			}
			lastPkts := pkts - (wantAcks * tc.ackEvery) // packets the final ACK covers
			if covered+lastPkts != pkts {
				t.Errorf("delivered ACKs cover %d packets, want %d", covered, pkts-lastPkts)
			}
			if !r.Flows[0].Finished {
				t.Error("flow unfinished")
			}
			cnps := flagged + p.cnps
			switch {
			case tc.cnpInterval == 0:
				if cnps != marked {
					t.Errorf("%d CNPs (%d on ACKs, %d standalone) for %d marked packets", cnps, flagged, p.cnps, marked)
				}
				if tc.ackEvery > 1 && p.cnps == 0 {
					t.Error("no standalone CNP although most marked packets are not acknowledged")
				}
			default:
				d := float64(r.Flows[0].FCT)
				max := int(d/float64(tc.cnpInterval)) + 1
				if cnps == 0 || cnps > max {
					t.Errorf("%d CNPs in %.0f µs with a %d µs interval (at most %d)", cnps, d/1e6, tc.cnpInterval/sim.Microsecond, max)
				}
			}
		})
	}
}

// Random loss on a link: out-of-order arrivals trigger NACKs, the sender
// goes back N and every flow completes.
func TestLossGoBackN(t *testing.T) {
	var got []*probe
	tp := dumbbell(2, 10e9, sim.Microsecond)
	cfg := baseConfig(t, tp, probeAlgo(probeOpts{rate: cc.Unlimited, window: 20_000}, &got))
	cfg.Events = []sim.EventSpec{{At: 0, Kind: sim.EventLoss, Port: "s0->s1", Loss: 0.01}}
	cfg.Flows = []sim.FlowSpec{tp.flow("h0", "r0", 2_000_000, 0), tp.flow("h1", "r0", 2_000_000, 0)}
	_, r := run(t, cfg)
	if r.Drops == 0 {
		t.Fatal("no loss")
	}
	nacks := 0
	for _, p := range got {
		for _, a := range p.acks {
			if a.NACK {
				nacks++
			}
		}
	}
	for _, f := range r.Flows {
		if !f.Finished {
			t.Errorf("flow %d unfinished", f.ID)
		}
	}
	if nacks == 0 || r.Retransmitted == 0 {
		t.Errorf("%d drops but %d NACKs and %d bytes retransmitted", r.Drops, nacks, r.Retransmitted)
	}
}

// A congestion point's feedback travels to the source of the sampled packet.
func TestCongestionPointFeedback(t *testing.T) {
	var got []*probe
	tp := star(2, 100e9, sim.Microsecond)
	cfg := baseConfig(t, tp, probeAlgo(probeOpts{rate: cc.Unlimited, window: cc.Unlimited, cpEvery: 10}, &got))
	cfg.Flows = []sim.FlowSpec{tp.flow("h0", "h1", 100_000, 0)}
	run(t, cfg)
	if n := len(got[0].qcn); n != 10 {
		t.Fatalf("%d feedback messages for 100 packets sampled 1 in 10", n)
	}
	if fb := got[0].qcn[0]; fb.Fb != 7 {
		t.Errorf("feedback %+v", fb)
	}
}

// Base RTT and BDP: global (maximum over host pairs) by default, the flow's
// own path on request.
func TestBDPGlobalOrPath(t *testing.T) {
	var infos []cc.FlowInfo
	tp := mpccFatTree()
	a := &cc.Algorithm{Name: "info", NewSender: func(info cc.FlowInfo, p cc.Params) cc.Sender {
		infos = append(infos, info)
		return &probe{rate: cc.Unlimited, window: cc.Unlimited, params: map[string]float64{}}
	}}
	for _, perPath := range []bool{false, true} {
		infos = nil
		cfg := baseConfig(t, tp, sim.AlgoSpec{Algo: a, Params: cc.Params{}})
		cfg.Host.BDPPerPath = perPath
		cfg.Flows = []sim.FlowSpec{tp.flow("h0", "h1", 1000, 0), tp.flow("h0", "h5", 1000, 0), tp.flow("h0", "h12", 1000, 0)}
		run(t, cfg)
		// HPCC's pairRtt: 2 × propagation + one 1000 B payload per hop; the
		// MPCC extract's table gives 4160/8200/12240 ns and 52/102.5/153 KB.
		want := []struct {
			rtt sim.Time
			bdp int64
		}{{4160 * sim.Nanosecond, 52_000}, {8200 * sim.Nanosecond, 102_500}, {12240 * sim.Nanosecond, 153_000}}
		for i, info := range infos {
			w := want[2]
			if perPath {
				w = want[i]
			}
			if info.BaseRTT != w.rtt || info.MaxBDP != w.bdp {
				t.Errorf("perPath=%v flow %d: RTT %d BDP %d, want %d %d", perPath, i, info.BaseRTT, info.MaxBDP, w.rtt, w.bdp)
			}
		}
	}
}

// ACK class at the switches: by default ACKs travel in their data's class,
// as in HPCC's simulator, so an ACK coming back through a port with a
// standing data queue waits behind it whatever its algorithm's ACK priority;
// with switch.ackClass "high" it skips the queue and the flow finishes
// within a few µs of its ideal.
func TestAckClassAtSwitches(t *testing.T) {
	cases := []struct {
		name              string
		nicHigh, switchHi bool
		fast              bool
	}{
		{"data class", false, false, false},
		{"NIC high priority only", true, false, false},
		{"high class at switches", false, true, true},
		{"both", true, true, true},
	}
	fct := map[string]sim.Time{}
	for _, tc := range cases {
		var got []*probe
		tp := star(3, 100e9, sim.Microsecond)
		cfg := baseConfig(t, tp, probeAlgo(probeOpts{rate: cc.Unlimited, window: cc.Unlimited, ackHigh: tc.nicHigh}, &got))
		cfg.Switch.AckHigh = tc.switchHi
		// h0 -> h1 is the probed flow; h2 -> h0 and h1 -> h0 build a standing
		// queue at s0->h0, the port h0's ACKs come back through
		cfg.Flows = []sim.FlowSpec{
			tp.flow("h0", "h1", 200_000, 50*sim.Microsecond),
			tp.flow("h2", "h0", 5_000_000, 0), tp.flow("h1", "h0", 5_000_000, 0),
		}
		_, r := run(t, cfg)
		fct[tc.name] = r.Flows[0].FCT
		// the reverse queue is ~50 µs deep when the probe starts
		if fast := r.Flows[0].FCT < r.Flows[0].IdealFCT+10*sim.Microsecond; fast != tc.fast {
			t.Errorf("%s: FCT %d ps against ideal %d ps; want fast = %v", tc.name, r.Flows[0].FCT, r.Flows[0].IdealFCT, tc.fast)
		}
	}
	if fct["data class"] != fct["NIC high priority only"] {
		t.Errorf("the NIC's ACK priority changed a run without PFC pauses at the receiver: %d vs %d ps", fct["data class"], fct["NIC high priority only"])
	}
}

// ACK priority at the NIC (HPCC's ACK_HIGH_PRIO): a receiver whose NIC is
// paused by PFC holds ACKs of the data class with its data, but sends
// high-priority ACKs. h1 receives the probed flow from h0 and itself sends
// to h3 together with h2 through a shallow buffer, so s0 pauses h1's NIC
// again and again; the probe, held to a window of ten packets, is clocked by
// its ACKs and finishes later when they wait out those pauses.
func TestAckPriorityAtNIC(t *testing.T) {
	run1 := func(high bool) (*sim.Result, sim.Time) {
		var got []*probe
		tp := star(4, 100e9, sim.Microsecond)
		probe := probeAlgo(probeOpts{rate: cc.Unlimited, window: 10_000, ackHigh: high}, &got)
		bulk := probeAlgo(probeOpts{rate: cc.Unlimited, window: cc.Unlimited}, &got)
		cfg := baseConfig(t, tp, probe)
		cfg.Algos = append(cfg.Algos, bulk)
		cfg.Switch.Buffer = 1 << 20
		f := tp.flow("h0", "h1", 1_000_000, 100*sim.Microsecond)
		b1, b2 := tp.flow("h1", "h3", 20_000_000, 0), tp.flow("h2", "h3", 20_000_000, 0)
		b1.Algo, b2.Algo = 1, 1
		cfg.Flows = []sim.FlowSpec{f, b1, b2}
		_, r := run(t, cfg)
		return r, r.Flows[0].FCT
	}
	rLow, low := run1(false)
	_, high := run1(true)
	paused := 0.0
	for _, p := range rLow.Ports {
		if p.Name == "h1->s0" {
			paused = p.PauseFraction
		}
	}
	t.Logf("h1's NIC paused %.0f%% of the run; probe FCT %.1f µs with data-class ACKs, %.1f µs with high-priority ACKs",
		100*paused, float64(low)/1e6, float64(high)/1e6)
	if paused < 0.1 {
		t.Fatalf("h1's NIC paused %.1f%% of the run: the test needs a paused receiver", 100*paused)
	}
	if float64(high) > 0.8*float64(low) {
		t.Errorf("FCT with high-priority ACKs at the NIC %d ps, with data-class ACKs %d ps: want the first well below", high, low)
	}
}

// A sender that changes its rate from OnSend (as QCN's byte counter does)
// must not make the NIC transmit twice at once: the flow can never beat the
// serialisation of its bytes at line rate.
func TestRateChangeInOnSend(t *testing.T) {
	var got []*probe
	tp := star(2, 100e9, sim.Microsecond)
	cfg := baseConfig(t, tp, probeAlgo(probeOpts{rate: cc.Unlimited, window: cc.Unlimited, toggle: true}, &got))
	cfg.Flows = []sim.FlowSpec{tp.flow("h0", "h1", 1_000_000, 0)}
	_, r := run(t, cfg)
	minFCT := 1000 * sim.Time(1000+cfg.Host.Header) * 80 // 1000 packets at 80 ps/B
	if r.Flows[0].FCT < minFCT {
		t.Errorf("FCT %d ps is below the %d ps the NIC needs to serialise the flow", r.Flows[0].FCT, minFCT)
	}
	if got[0].sends != 1000 {
		t.Errorf("%d sends for 1000 packets", got[0].sends)
	}
}

// The retransmission timer never fires in a run that cannot lose packets
// (HPCC's simulator has none), and when kept on it adapts to the RTT, so a
// flow behind a standing queue of several milliseconds is not resent.
func TestNoSpuriousTimeouts(t *testing.T) {
	cases := []struct {
		name     string
		lossless bool // keep the timer on although nothing can be lost
		delay    sim.Time
		late     bool // a flow joins behind a standing queue
	}{
		{"1 Gbps, 1 ms links", false, sim.Millisecond, false},
		{"1 Gbps, 1 ms links, timer kept on", true, sim.Millisecond, false},
		{"late flow behind a standing queue", false, sim.Microsecond, true},
		{"late flow, timer kept on", true, sim.Microsecond, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got []*probe
			tp := dumbbell(5, 1e9, tc.delay)
			cfg := baseConfig(t, tp, probeAlgo(probeOpts{rate: cc.Unlimited, window: cc.Unlimited}, &got))
			cfg.Host.RTOLossless = tc.lossless
			cfg.Flows = []sim.FlowSpec{tp.flow("h0", "r0", 1_000_000, 0)}
			if tc.late {
				for i := 1; i < 4; i++ {
					cfg.Flows = append(cfg.Flows, tp.flow(fmt.Sprintf("h%d", i), "r0", 1_000_000, 0))
				}
				cfg.Flows = append(cfg.Flows, tp.flow("h4", "r0", 200_000, 3*sim.Millisecond))
			}
			_, r := run(t, cfg)
			if r.Drops != 0 {
				t.Fatalf("%d drops in a lossless run", r.Drops)
			}
			for _, f := range r.Flows {
				if !f.Finished || f.Timeouts != 0 || f.Retx != 0 {
					t.Errorf("flow %d: finished %v, %d timeouts, %d B resent", f.ID, f.Finished, f.Timeouts, f.Retx)
				}
			}
		})
	}
}

// Random loss with PFC on: PAUSE and RESUME frames are spared, so no port
// stays paused for good and every flow finishes (by NACK or timeout).
func TestPFCWithLoss(t *testing.T) {
	tp := star(5, 100e9, sim.Microsecond)
	cfg := baseConfig(t, tp, noneAlgo(t, 0))
	cfg.Switch.Buffer = 600_000
	cfg.Events = []sim.EventSpec{{At: 0, Kind: sim.EventLoss, Port: "h0->s0", Loss: 0.3}, {At: 0, Kind: sim.EventLoss, Port: "s0->h4", Loss: 0.05}}
	for i := 0; i < 4; i++ {
		cfg.Flows = append(cfg.Flows, tp.flow(fmt.Sprintf("h%d", i), "h4", 500_000, 0))
	}
	_, r := run(t, cfg)
	var pauses int64
	for _, p := range r.Ports {
		pauses += p.PausesSent
	}
	if pauses == 0 || r.Drops == 0 {
		t.Fatalf("the case needs pauses and losses: %d pauses, %d drops", pauses, r.Drops)
	}
	if r.FlowsFinished() != 4 || r.EndReason != "all flows finished" {
		t.Errorf("%d of 4 flows finished; end: %s", r.FlowsFinished(), r.EndReason)
	}
}

// A window smaller than ackEvery packets does not stall: the packet that
// fills the window asks for an ACK (RoCE's AckReq).
func TestAckEveryBeyondWindow(t *testing.T) {
	fct := map[int]sim.Time{}
	for _, every := range []int{1, 8} {
		var got []*probe
		tp := star(2, 100e9, sim.Microsecond)
		cfg := baseConfig(t, tp, probeAlgo(probeOpts{rate: cc.Unlimited, window: 3900}, &got))
		cfg.Host.AckEvery = every
		cfg.Host.RTOLossless = true
		cfg.Flows = []sim.FlowSpec{tp.flow("h0", "h1", 100_000, 0)}
		_, r := run(t, cfg)
		if f := r.Flows[0]; !f.Finished || f.Timeouts != 0 {
			t.Fatalf("ackEvery %d: finished %v with %d timeouts", every, f.Finished, f.Timeouts)
		}
		fct[every] = r.Flows[0].FCT
	}
	// with AckReq the window is acknowledged as soon as it is full (without
	// it, each window waited for the 1 ms timeout: 25 windows, ~47 ms). One
	// ACK per window instead of per packet delays the first three packets'
	// acknowledgement by up to three packet times (3 × 84 ns) on a ~4.2 µs
	// RTT, so the window-limited flow is up to ~6% slower: allow 10%.
	if d := math.Abs(float64(fct[8]-fct[1])) / float64(fct[1]); d > 0.10 {
		t.Errorf("FCT %d ps with ackEvery 8 vs %d ps with 1", fct[8], fct[1])
	}
}

// A live parameter change between slices gives the same run as the scripted
// event it is recorded as.
func TestLiveChangeMatchesReplay(t *testing.T) {
	tp := star(3, 100e9, sim.Microsecond)
	cfg := baseConfig(t, tp, noneAlgo(t, 1))
	cfg.Duration = 200 * sim.Microsecond
	cfg.Flows = []sim.FlowSpec{tp.flow("h0", "h2", 5_000_000, 0), tp.flow("h1", "h2", 5_000_000, 0)}
	const at = 50 * sim.Microsecond // also a telemetry tick
	change := map[string]float64{"windowBDPs": 2}

	live, _ := sim.New(cfg)
	cl := &collector{}
	live.Subscribe(cl)
	if err := live.RunUntil(at); err != nil {
		t.Fatal(err)
	}
	if err := live.ApplyParams(-1, change); err != nil {
		t.Fatal(err)
	}
	if err := live.Run(); err != nil {
		t.Fatal(err)
	}

	cfg.Events = []sim.EventSpec{{At: at, Kind: sim.EventParams, Algo: -1, Params: change}}
	replay, _ := sim.New(cfg)
	cr := &collector{}
	replay.Subscribe(cr)
	if err := replay.Run(); err != nil {
		t.Fatal(err)
	}
	lr, rr := live.Result(), replay.Result()
	if rr.Events != lr.Events+1 {
		t.Errorf("events: live %d, replay %d (the scripted event is one more)", lr.Events, rr.Events)
	}
	lr.Events = rr.Events
	if !reflect.DeepEqual(lr, rr) || !reflect.DeepEqual(cl.s, cr.s) {
		t.Error("the live change and its replay differ")
	}
}

// PFC keeps short links lossless: the headroom covers what arrives while a
// PAUSE waits behind a packet and the upstream finishes its own.
func TestShortLinksLossless(t *testing.T) {
	for _, d := range []sim.Time{0, 10 * sim.Nanosecond, 100 * sim.Nanosecond, sim.Microsecond} {
		tp := star(9, 100e9, d)
		cfg := baseConfig(t, tp, noneAlgo(t, 0))
		cfg.Switch.Buffer = 1 << 20
		for i := 0; i < 8; i++ {
			cfg.Flows = append(cfg.Flows, tp.flow(fmt.Sprintf("h%d", i), "h8", 1_000_000, 0))
		}
		_, r := run(t, cfg)
		if r.Drops != 0 || r.FlowsFinished() != 8 {
			t.Errorf("link delay %d ps: %d drops, %d of 8 finished", d, r.Drops, r.FlowsFinished())
		}
	}
}

// A flow that starts while its host link is down still learns its line rate
// and path length from the topology.
func TestFlowInfoWhileLinkDown(t *testing.T) {
	var infos []cc.FlowInfo
	a := &cc.Algorithm{Name: "info", NewSender: func(info cc.FlowInfo, p cc.Params) cc.Sender {
		infos = append(infos, info)
		return &probe{rate: cc.Unlimited, window: cc.Unlimited, params: map[string]float64{}}
	}}
	tp := star(2, 25e9, sim.Microsecond)
	cfg := baseConfig(t, tp, sim.AlgoSpec{Algo: a, Params: cc.Params{}})
	cfg.Events = []sim.EventSpec{{At: 0, Kind: sim.EventLinkDown, Port: "h0->s0"}, {At: 20 * sim.Microsecond, Kind: sim.EventLinkUp, Port: "h0->s0"}}
	cfg.Flows = []sim.FlowSpec{tp.flow("h0", "h1", 10_000, 5*sim.Microsecond)}
	_, r := run(t, cfg)
	if len(infos) != 1 || infos[0].LineRate != 25e9 || infos[0].Hops != 1 {
		t.Errorf("flow info %+v", infos)
	}
	if !r.Flows[0].Finished {
		t.Error("flow did not finish after the link came back")
	}
}

// A run without a duration whose unfinished flows have lost every path, with
// no scripted event left to bring a link back, stops as stalled instead of
// sampling on to the 10 s cap.
func TestStalledRunStops(t *testing.T) {
	tp := star(3, 100e9, sim.Microsecond)
	cfg := baseConfig(t, tp, noneAlgo(t, 1))
	cfg.Events = []sim.EventSpec{{At: 20 * sim.Microsecond, Kind: sim.EventLinkDown, Port: "s0->h2"}}
	cfg.Flows = []sim.FlowSpec{tp.flow("h0", "h1", 100_000, 0), tp.flow("h0", "h2", 10_000_000, 0)}
	_, r := run(t, cfg)
	if !r.Flows[0].Finished || r.Flows[1].Finished {
		t.Fatalf("finished: %v %v", r.Flows[0].Finished, r.Flows[1].Finished)
	}
	if !strings.HasPrefix(r.EndReason, "stalled") || r.SimTime > 100*sim.Microsecond {
		t.Errorf("ended %q at %d ps", r.EndReason, r.SimTime)
	}
}

// bareSender implements only cc.Sender: no optional hook. It arms one
// timer all the same, which must fire into nothing.
type bareSender struct{ rate, window int64 }

func (b *bareSender) Start(env cc.Env) {
	env.SetRate(b.rate)
	env.SetWindow(b.window)
	env.SetTimer(1, env.Now()+7*sim.Microsecond)
}
func (b *bareSender) OnAck(cc.Env, *cc.Ack)                  {}
func (b *bareSender) SetParam(cc.Env, string, float64) error { return nil }

// Standalone CNPs, QCN feedback and timers reach a sender without the
// hook as nothing: the run is the one of a sender whose hooks do nothing
// (the probe at a fixed rate and window).
func TestEventsWithoutHooks(t *testing.T) {
	runWith := func(bare bool) (*sim.Sim, *sim.Result) {
		var got []*probe
		tp := star(3, 100e9, sim.Microsecond)
		spec := probeAlgo(probeOpts{rate: cc.Unlimited, window: cc.Unlimited, ackHigh: true, cpEvery: 10, timerEvery: 7 * sim.Microsecond}, &got)
		if bare {
			a := *spec.Algo
			a.NewSender = func(cc.FlowInfo, cc.Params) cc.Sender { return &bareSender{rate: cc.Unlimited, window: cc.Unlimited} }
			spec.Algo = &a
		}
		cfg := baseConfig(t, tp, spec)
		cfg.Host.AckEvery = 4
		cfg.Switch.ECN = sim.ECNConfig{Enabled: true, Kmin: 5000, Kmax: 5000, Pmax: 1}
		cfg.Flows = []sim.FlowSpec{tp.flow("h0", "h2", 1_000_003, 0), tp.flow("h1", "h2", 1_000_000, 0)}
		s, r := run(t, cfg)
		var cnps, qcns, timers int
		for _, p := range got {
			cnps, qcns, timers = cnps+p.cnps, qcns+len(p.qcn), timers+len(p.timerAt)
		}
		if !bare && (cnps == 0 || qcns == 0 || timers == 0) {
			t.Fatalf("probe: %d standalone CNPs, %d QCN messages, %d timers: the case needs each", cnps, qcns, timers)
		}
		return s, r
	}
	sp, rp := runWith(false)
	sb, rb := runWith(true)
	if !reflect.DeepEqual(rb.Flows, rp.Flows) {
		t.Errorf("flows without hooks:\n%+v\nwith no-op hooks:\n%+v", rb.Flows, rp.Flows)
	}
	cp, cb := sp.Conservation(), sb.Conservation()
	for k, name := range cb.Kinds {
		if name == "cnp" || name == "qcn" {
			if cb.Consumed[k] == 0 || cb.Consumed[k] != cp.Consumed[k] {
				t.Errorf("%s bytes consumed: %d without hooks, %d with", name, cb.Consumed[k], cp.Consumed[k])
			}
		}
	}
}
