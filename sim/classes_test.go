package sim_test

import (
	"fmt"
	"reflect"
	"testing"

	"cclab/sim"
)

// pktTime is the serialisation time of one full data packet (default MTU and
// header) at 100 Gbps.
func pktTime() sim.Time {
	h := sim.DefaultHost()
	return sim.Time((h.MTU + h.Header) * 8 * 1e12 / 100e9)
}

// wireTime is the time a flow of size bytes takes on a 100 Gbps link.
func wireTime(size int64) sim.Time {
	h := sim.DefaultHost()
	pkts := (size + h.MTU - 1) / h.MTU
	return sim.Time((size + pkts*h.Header) * 8 * 1e12 / 100e9)
}

func fct(t *testing.T, r *sim.Result, id int) sim.Time {
	t.Helper()
	f := r.Flows[id]
	if !f.Finished {
		t.Fatalf("flow %d did not finish", id)
	}
	return f.FCT
}

// With several data classes a switch port serves them in strict priority: a
// high-priority flow that joins a low-priority one at a shared bottleneck
// finishes exactly as if it were alone (it waits at most for the low
// packet being sent when it arrives), and the low one finishes later by the
// high one's whole time on the wire. With one class (or both in the same
// class) they share the FIFO and the high flow takes about twice as long.
func TestDataClassesStrictPriority(t *testing.T) {
	const lowSize, highSize = 1_000_000, 500_000
	const highStart = 20 * sim.Microsecond
	cases := []struct {
		name      string
		classes   int
		low, high int  // classes the senders ask for
		sameHost  bool // both flows from h0 (the NIC is strict priority too)
		strict    bool // expect strict priority
	}{
		{"one class", 1, 1, 0, false, false},
		{"two classes", 2, 1, 0, false, true},
		{"eight classes", 8, 7, 2, false, true},
		{"two classes, low asks for 7 (clamped)", 2, 7, 0, false, true},
		{"same class", 8, 3, 3, false, false},
		{"two classes, same sending host", 2, 1, 0, true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tp := star(3, 100e9, sim.Microsecond)
			pt := &sim.PrioTest{Class: func(flow int32, _ int64) int {
				if flow == 0 {
					return c.low
				}
				return c.high
			}}
			src := "h1"
			if c.sameHost {
				src = "h0"
			}
			cfg := baseConfig(t, tp, sim.PrioAlgo(pt))
			cfg.Switch.DataClasses = c.classes
			cfg.Telemetry = sim.TelemetryConfig{}
			low := tp.flow("h0", "h2", lowSize, 0)
			high := tp.flow(src, "h2", highSize, highStart)
			lone := func(f sim.FlowSpec) sim.Time {
				cfg := cfg
				f.Start = 0
				cfg.Flows = []sim.FlowSpec{f}
				_, r := run(t, cfg)
				return fct(t, r, 0)
			}
			loneLow, loneHigh := lone(low), lone(high)
			cfg.Flows = []sim.FlowSpec{low, high}
			_, r := run(t, cfg)
			fLow, fHigh := fct(t, r, 0), fct(t, r, 1)
			t.Logf("low %v (alone %v), high %v (alone %v)", fLow, loneLow, fHigh, loneHigh)
			if !c.strict {
				if fHigh < loneHigh*3/2 {
					t.Errorf("shared class: high flow took %v, alone %v: expected it to share the port", fHigh, loneHigh)
				}
				return
			}
			if d := fHigh - loneHigh; d < 0 || d > pktTime() {
				t.Errorf("high flow took %v, alone %v: more than one packet time (%v) apart", fHigh, loneHigh, pktTime())
			}
			want := loneLow + wireTime(highSize)
			if d := fLow - want; d < -2*pktTime() || d > 2*pktTime() {
				t.Errorf("low flow took %v, want its lone %v + the high flow's wire time %v = %v (± 2 packets)",
					fLow, loneLow, wireTime(highSize), want)
			}
		})
	}
}

// PFC pauses one class: a paced high-priority flow from h0 keeps its lone
// FCT while the low class of h0 and h1, which overloads the bottleneck, is
// paused at both senders. With one class the same paced flow is paused with
// the rest and waits behind the low flows' queue.
func TestDataClassesPFCPausesOneClass(t *testing.T) {
	for _, classes := range []int{1, 2, 8} {
		t.Run(fmt.Sprintf("classes=%d", classes), func(t *testing.T) {
			tp := star(3, 100e9, sim.Microsecond)
			pt := &sim.PrioTest{
				Class: func(flow int32, _ int64) int { return min(int(flow), 1) },
				Rate:  map[int32]int64{0: 20e9},
			}
			cfg := baseConfig(t, tp, sim.PrioAlgo(pt))
			cfg.Switch.DataClasses = classes
			cfg.Switch.Buffer = 2 << 20
			cfg.Telemetry = sim.TelemetryConfig{}
			paced := tp.flow("h0", "h2", 500_000, 0)
			cfg.Flows = []sim.FlowSpec{paced}
			_, r := run(t, cfg)
			lone := fct(t, r, 0)
			cfg.Flows = []sim.FlowSpec{paced, tp.flow("h0", "h2", 4_000_000, 0), tp.flow("h1", "h2", 4_000_000, 0)}
			_, r = run(t, cfg)
			got := fct(t, r, 0)
			p0, p1 := portResult(r, "s0->h0"), portResult(r, "s0->h1")
			t.Logf("paced flow %v (alone %v); pauses sent to h0 %d, to h1 %d; h0 paused %.3f of the run",
				got, lone, p0.PausesSent, p1.PausesSent, portResult(r, "h0->s0").PauseFraction)
			if r.Drops != 0 || r.FlowsFinished() != 3 {
				t.Fatalf("lossless run: %d drops, %d of 3 flows finished", r.Drops, r.FlowsFinished())
			}
			if p0.PausesSent == 0 || p1.PausesSent == 0 {
				t.Fatalf("the low class should have been paused at both senders")
			}
			if classes == 1 {
				if got < lone+10*sim.Microsecond {
					t.Errorf("one class: the paced flow took %v, alone %v: expected it to be held up", got, lone)
				}
				return
			}
			if d := got - lone; d < 0 || d > 2*pktTime() {
				t.Errorf("the paced high flow took %v, alone %v: PFC on the low class held it up", got, lone)
			}
		})
	}
}

// ECN marks on each class's own queue: a high-priority flow sharing a
// bottleneck with a low one whose queue is far above kmax is never marked;
// with one class both see the same queue and both are marked.
func TestDataClassesECNPerQueue(t *testing.T) {
	for _, classes := range []int{1, 2} {
		t.Run(fmt.Sprintf("classes=%d", classes), func(t *testing.T) {
			tp := star(3, 100e9, sim.Microsecond)
			pt := &sim.PrioTest{Class: func(flow int32, _ int64) int { return int(flow) }, Marked: make([]int, 2)}
			cfg := baseConfig(t, tp, sim.PrioAlgo(pt))
			cfg.Switch.DataClasses = classes
			cfg.Switch.ECN = sim.ECNConfig{Enabled: true, Kmin: 10_000, Kmax: 20_000, Pmax: 1}
			cfg.Telemetry = sim.TelemetryConfig{}
			cfg.Flows = []sim.FlowSpec{tp.flow("h0", "h2", 1_000_000, 0), tp.flow("h1", "h2", 1_000_000, 0)}
			_, r := run(t, cfg)
			t.Logf("marked: high %d, low %d; port marks %d", pt.Marked[0], pt.Marked[1], portResult(r, "s0->h2").Marks)
			if pt.Marked[1] == 0 {
				t.Fatalf("the low flow's queue went far above kmax and was never marked")
			}
			if classes == 1 && pt.Marked[0] == 0 {
				t.Errorf("one class: the flows share the queue, both should be marked")
			}
			if classes > 1 && pt.Marked[0] != 0 {
				t.Errorf("the high class's queue stays below kmin, yet %d of its packets were marked", pt.Marked[0])
			}
		})
	}
}

// eightClasses is an 8-to-1 incast in which flow i asks for class i, with a
// small buffer so that PFC pauses classes (4 MB, of which 8 × 9 ports'
// headroom and reserve take 3 MB), and ECN on.
func eightClasses(t testing.TB, size int64, pt *sim.PrioTest) sim.Config {
	tp := star(9, 100e9, sim.Microsecond)
	pt.Class = func(flow int32, _ int64) int { return int(flow) }
	cfg := baseConfig(t, tp, sim.PrioAlgo(pt))
	cfg.Switch.DataClasses = 8
	cfg.Switch.Buffer = 4 << 20
	cfg.Switch.ECN = sim.ECNConfig{Enabled: true, Kmin: 20_000, Kmax: 200_000, Pmax: 0.5}
	for i := 0; i < 8; i++ {
		cfg.Flows = append(cfg.Flows, tp.flow(fmt.Sprintf("h%d", i), "h8", size, 0))
	}
	return cfg
}

// Same seed, same run, with eight classes, PFC and ECN at work; and strict
// priority orders the equal flows' finishing times by class.
func TestDataClassesDeterministic(t *testing.T) {
	results := make([]*sim.Result, 2)
	samples := make([][]sim.Sample, 2)
	for i := range results {
		cfg := eightClasses(t, 1_000_000, &sim.PrioTest{Marked: make([]int, 8)})
		c := &collector{}
		_, results[i] = run(t, cfg, c)
		samples[i] = c.s
	}
	if !reflect.DeepEqual(results[0], results[1]) || !reflect.DeepEqual(samples[0], samples[1]) {
		t.Fatal("two runs of the same config differ")
	}
	r := results[0]
	pauses := int64(0)
	for _, p := range r.Ports {
		pauses += p.PausesSent
	}
	if pauses == 0 {
		t.Error("no PFC pause: the case does not exercise per-class PFC")
	}
	for i := 1; i < 8; i++ {
		if r.Flows[i].Finish <= r.Flows[i-1].Finish {
			t.Errorf("class %d finished at %v, not after class %d (%v)", i, r.Flows[i].Finish, i-1, r.Flows[i-1].Finish)
		}
	}
}

// The hot path allocates nothing per packet with eight classes either.
func TestNoAllocationPerPacketDataClasses(t *testing.T) {
	allocs := func(size int64) float64 {
		cfg := eightClasses(t, size, &sim.PrioTest{Marked: make([]int, 8)})
		cfg.Telemetry = sim.TelemetryConfig{}
		return testing.AllocsPerRun(2, func() {
			s, err := sim.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Run(); err != nil {
				t.Fatal(err)
			}
		})
	}
	a2, a3 := allocs(2_000_000), allocs(20_000_000)
	t.Logf("allocations per run: %.0f (16k packets), %.0f (160k)", a2, a3)
	if a3-a2 > 144 {
		t.Errorf("%.0f more allocations for 144,000 more packets: something allocates per packet", a3-a2)
	}
}

// switch.dataClasses outside 1 … 8 is refused, naming the field; with PFC
// each class has its own headroom and reserve, so a buffer that holds them
// for one class may not for eight.
func TestDataClassesValidation(t *testing.T) {
	// star(9) at 100 Gbps, 1 µs: 9 ports × (37.5 KB headroom + 4 KiB
	// reserve) = 374 KB per class
	for _, tt := range []struct {
		classes int
		buffer  int64
		field   string // "": accepted
	}{
		{-1, 32 << 20, "switch.dataClasses"},
		{9, 32 << 20, "switch.dataClasses"},
		{0, 1 << 20, ""},
		{1, 1 << 20, ""},
		{2, 1 << 20, ""},
		{3, 1 << 20, "switch.buffer"},
		{8, 1 << 20, "switch.buffer"},
		{8, 4 << 20, ""},
	} {
		tp := star(9, 100e9, sim.Microsecond)
		cfg := baseConfig(t, tp, noneAlgo(t, 1))
		cfg.Switch.DataClasses = tt.classes
		cfg.Switch.Buffer = tt.buffer
		_, err := sim.New(cfg)
		fe, ok := err.(*sim.FieldError)
		switch {
		case tt.field == "" && err != nil:
			t.Errorf("%d classes, %d B: %v", tt.classes, tt.buffer, err)
		case tt.field != "" && (!ok || fe.Field != tt.field):
			t.Errorf("%d classes, %d B: got %v, want a FieldError for %s", tt.classes, tt.buffer, err, tt.field)
		}
	}
}

// An algorithm that does not choose classes sends everything in the first
// data class: with eight classes configured its runs (PFC and ECN at work)
// are exactly those with one, once the buffer is larger by what the seven
// other classes set aside (headroom and reserve per port and class: on
// star(5) at 100 Gbps and 1 µs, 5 × (37.5 KB + 4 KiB) per class), so that
// the PFC threshold is the same; without PFC nothing is set aside.
func TestDataClassesUnusedChangeNothing(t *testing.T) {
	const perClass = 5 * (37_500 + 4096)
	for _, algo := range []string{"none", "dcqcn", "hpcc"} {
		for _, pfc := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s/pfc=%v", algo, pfc), func(t *testing.T) {
				var results []*sim.Result
				var samples [][]sim.Sample
				for _, classes := range []int{1, 8} {
					tp := star(5, 100e9, sim.Microsecond)
					var cfg sim.Config
					if algo == "none" {
						cfg = baseConfig(t, tp, noneAlgo(t, 0))
						cfg.Switch.ECN = sim.ECNConfig{Enabled: true, Kmin: 20_000, Kmax: 200_000, Pmax: 0.2}
					} else {
						cfg = algoConfig(t, tp, algo, 100e9, nil)
					}
					cfg.Switch.PFC = pfc
					cfg.Switch.Buffer = 1 << 20
					if pfc {
						cfg.Switch.Buffer += int64(classes-1) * perClass
					}
					cfg.Switch.DataClasses = classes
					for i := 0; i < 4; i++ {
						cfg.Flows = append(cfg.Flows, tp.flow(fmt.Sprintf("h%d", i), "h4", 2_000_000, sim.Time(i)*5*sim.Microsecond))
					}
					c := &collector{}
					_, r := run(t, cfg, c)
					results = append(results, r)
					samples = append(samples, c.s)
				}
				pauses := int64(0)
				for _, p := range results[0].Ports {
					pauses += p.PausesSent
				}
				t.Logf("%d pauses, %d drops", pauses, results[0].Drops)
				if !reflect.DeepEqual(results[0], results[1]) || !reflect.DeepEqual(samples[0], samples[1]) {
					t.Error("eight classes changed a run whose algorithm uses one")
				}
			})
		}
	}
}
