package cc

import (
	"math"
	"testing"
)

// The registry entry: K arms at C/2^(K−1−i), Dolce-RC's bandit constants
// and thresholds, per-host-pair connections.
func TestDolcePlusRegistry(t *testing.T) {
	a, p := resolve(t, "dolceplus", "", 200e9, nil)
	if p["arms"] != 4 || p["messageSize"] != 8000 || p["gamma"] != 0.9998 || p["epsilon"] != 0.015 || p["xi"] != 0.5001 || p["sharedQP"] != 1 {
		t.Errorf("defaults %v", p)
	}
	if e := a.ECN; e == nil || e.Kmin != 7000 || e.Kmax != 500_000 || e.Pmax != 1 || !a.Connections {
		t.Errorf("ECN %+v, connections %v", a.ECN, a.Connections)
	}
	d := a.NewSender(FlowInfo{LineRate: 200e9, MaxBDP: 300_000, MTU: 1000, Header: 36}, p).(*dolcePlus)
	for i, want := range []float64{25e9, 50e9, 100e9, 200e9} {
		if got := d.rate(i); got != want {
			t.Errorf("arm %d: %g b/s, want %g", i, got, want)
		}
	}
}

// Messages are cut from the byte stream; each one's ACK is one bandit
// iteration with the reward of eq. (5), and the next message takes the
// bandit's new pick. The script: 1000 B packets, 8000 B messages, a 10 µs
// base RTT at 100 Gb/s (ideal MCT 10 µs + 8288 B at 100 Gb/s = 10.663 µs);
// every message is acknowledged 20 µs after its first packet left, arm 3's
// messages with 4 of 8 packets marked, the others unmarked. Rewards:
// arms 0–2 earn ideal/actual = 0.533, arm 3 0.533·(1 − 0.5)³ = 0.0666, so
// after the forced round robin (arms 0, 1, 2, 3) the UCB rule leaves arm 3
// (and, with ties broken to the lowest index, picks arm 0).
func TestDolcePlusMessages(t *testing.T) {
	a, p := resolve(t, "dolceplus", "", 100e9, map[string]float64{"sharedQP": 0})
	d := a.NewSender(FlowInfo{LineRate: 100e9, BaseRTT: 10 * Microsecond, MTU: 1000, Header: 36}, p).(*dolcePlus)
	env := newEnv()
	d.Start(env)
	if env.rate != 12_500_000_000 || env.window != Unlimited {
		t.Fatalf("start: rate %d window %d, want arm 0 (C/8) and no window", env.rate, env.window)
	}
	ideal := 10e-6 + 8288*8/100e9
	var arms []int
	seq := int64(0)
	for m := 0; m < 6; m++ {
		arm := d.arm
		arms = append(arms, arm)
		if want := rateBps(100e9 / math.Exp2(float64(3-arm))); env.rate != want {
			t.Fatalf("message %d: rate %d, want arm %d's %d", m, env.rate, arm, want)
		}
		start := env.now
		for k := 0; k < 8; k++ {
			d.OnSend(env, 1000, 1036, false)
			env.now += 100 * Nanosecond
		}
		env.now = start + 20*Microsecond
		for k := 0; k < 8; k++ {
			seq += 1000
			marked := 0
			if arm == 3 && k%2 == 0 {
				marked = 1
			}
			d.OnAck(env, &Ack{Seq: seq, Packets: 1, ECNMarked: marked})
		}
		r := env.events[dolcePlusSeriesReward]
		if len(r) != m+1 {
			t.Fatalf("message %d: %d rewards", m, len(r))
		}
		want := ideal / 20e-6
		if arm == 3 {
			want *= 0.125
		}
		if math.Abs(r[m]-want) > 1e-9 {
			t.Errorf("message %d (arm %d): reward %.6f, want %.6f", m, arm, r[m], want)
		}
		if mct := env.events[dolcePlusSeriesMCT][m]; mct != 20_000 {
			t.Errorf("message %d: MCT %g ns, want 20000", m, mct)
		}
	}
	want := []int{0, 1, 2, 3, 0, 1}
	for i := range want {
		if arms[i] != want[i] {
			t.Fatalf("arms %v, want %v", arms, want)
		}
	}
	if picks := env.events[dolcePlusSeriesPick]; len(picks) != 6 || picks[3] != 0 {
		t.Errorf("arm trace %v", picks)
	}
}

// With sharedQP the flows of one host pair share the bandit: a second flow
// starts where the first left off.
func TestDolcePlusSharedQP(t *testing.T) {
	a, p := resolve(t, "dolceplus", "", 100e9, nil)
	conn := &Conn{Src: 0, Dst: 1}
	info := FlowInfo{LineRate: 100e9, BaseRTT: 10 * Microsecond, MTU: 1000, Header: 36, Conn: conn}
	first := a.NewSender(info, p).(*dolcePlus)
	env := newEnv()
	first.Start(env)
	seq := int64(0)
	for m := 0; m < 3; m++ {
		for k := 0; k < 8; k++ {
			first.OnSend(env, 1000, 1036, false)
		}
		env.now += 20 * Microsecond
		seq += 8000
		first.OnAck(env, &Ack{Seq: seq, Packets: 8})
	}
	second := a.NewSender(info, p).(*dolcePlus)
	second.Start(newEnv())
	if second.l != first.l || second.l.bandit.T != 3 || second.arm != 3 {
		t.Errorf("second flow: shared %v, %d iterations, arm %d; want the first's learner after 3 iterations, arm 3", second.l == first.l, second.l.bandit.T, second.arm)
	}
}
