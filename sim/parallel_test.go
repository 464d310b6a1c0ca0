package sim_test

import (
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"cclab/scenarios"
	"cclab/sim"
)

// A run in lanes (sim.SetLanes) must be the sequential run, byte for byte:
// the same results, the same telemetry samples in the same order, and the
// same bytes in the network at every slice's end. The cases cover what
// the lanes must get exactly right: packets crossing between lanes (every
// fat-tree here sends most of its traffic across pods), PFC pauses and
// DCQCN's and HPCC's feedback across the cut, a run that stops when its
// last flow finishes (the permutation's flows finish within a few
// microseconds of each other, several in one window), one stopped at a
// duration with packets still in flight, runs driven in slices (as the
// CLI and the server drive them), and three and four lanes.
func TestLanesGiveTheSequentialRun(t *testing.T) {
	ref := func(algo string) func(testing.TB) sim.Config {
		return func(t testing.TB) sim.Config {
			cfg, _, err := scenarios.Build(refScenario(t, algo))
			if err != nil {
				t.Fatal(err)
			}
			return *cfg
		}
	}
	lib := func(name, algo string, sets ...string) func(testing.TB) sim.Config {
		return func(t testing.TB) sim.Config { return libraryConfig(t, name, algo, sets...) }
	}
	cases := []struct {
		name  string
		cfg   func(testing.TB) sim.Config
		lanes int
		slice sim.Time // 0: one RunUntil to the end
		long  bool     // skipped with -short
	}{
		{"reference16-dcqcn", ref("dcqcn"), 2, 0, true},
		{"reference16-hpcc", ref("hp"), 2, 0, true},
		{"reference16-dctcp", ref("dctcp"), 2, 0, true},
		{"reference16-dcqcn-slices", ref("dcqcn"), 2, 37 * sim.Microsecond, true},
		{"fattree16-dcqcn-2ms", lib("fattree16-websearch30", "dcqcn", "duration=2ms"), 2, 0, false},
		{"fattree16-dctcp-until-done", lib("fattree16-websearch30", "dctcp", "workload[0].until=1ms"), 2, 0, false},
		{"fattree16-hpcc-slices-3-lanes", lib("fattree16-websearch30", "hpcc", "duration=1ms"), 3, 100 * sim.Microsecond, false},
		{"host-links-shorter-than-the-cut", shortHostLinks, 2, 0, false},
		{"idle-end-without-telemetry", idleEnd, 2, 0, false},
		{"one-lane-sends-every-flow", oneLaneSends, 2, 0, false},
		{"permutation-k8-2-lanes", permutationK8, 2, 0, false},
		{"permutation-k8-4-lanes", permutationK8, 4, 0, false},
		{"permutation-k8-4-lanes-slices", permutationK8, 4, 13 * sim.Microsecond, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.long && testing.Short() {
				t.Skip("-short: a 101 ms replay")
			}
			cfg := tc.cfg(t)
			one, oneSamples := runSliced(t, cfg, 1, tc.slice)
			many, manySamples := runSliced(t, cfg, tc.lanes, tc.slice)
			if n, why := many.sim.Lanes(); n != tc.lanes {
				t.Fatalf("went in %d lanes (%s), want %d", n, why, tc.lanes)
			}
			if one.res.Events == 0 || (cfg.Telemetry.Interval > 0 && len(oneSamples) == 0) {
				t.Fatalf("nothing ran: %d events, %d samples", one.res.Events, len(oneSamples))
			}
			if !reflect.DeepEqual(one.res, many.res) {
				t.Errorf("results differ:\n%s", firstDifference(one.res, many.res))
			}
			if len(oneSamples) != len(manySamples) {
				t.Fatalf("%d samples in one lane, %d in %d", len(oneSamples), len(manySamples), tc.lanes)
			}
			for i := range oneSamples {
				if oneSamples[i] != manySamples[i] {
					t.Fatalf("sample %d: one lane %+v, %d lanes %+v", i, oneSamples[i], tc.lanes, manySamples[i])
				}
			}
			if !reflect.DeepEqual(one.cons, many.cons) {
				t.Errorf("bytes in the network at the slices' ends differ:\none lane %+v\n%d lanes %+v", one.cons, tc.lanes, many.cons)
			}
		})
	}
}

// shortHostLinks has links into hosts (100 ns) shorter than those between
// lanes (1 µs), and its last flow stays in one rack: the lanes' windows
// must be no longer than a link into a host for the run to end at that
// flow's last ACK.
func shortHostLinks(t testing.TB) sim.Config {
	tp := fatTreeK(4, 100e9, sim.Microsecond)
	cfg := baseConfig(t, tp, noneAlgo(t, 1))
	for i := range cfg.Links {
		if cfg.Nodes[cfg.Links[i].A].Kind == sim.Host || cfg.Nodes[cfg.Links[i].B].Kind == sim.Host {
			cfg.Links[i].Delay = 100 * sim.Nanosecond
		}
	}
	cfg.Flows = append(cfg.Flows, tp.flow("h0", "h15", 100_000, 0), tp.flow("h2", "h3", 1_000_000, 0))
	return cfg
}

// idleEnd drops packets with no retransmission timer and no telemetry, so
// the run ends idle with flows unfinished, at its last event.
func idleEnd(t testing.TB) sim.Config {
	tp := fatTreeK(4, 100e9, sim.Microsecond)
	cfg := baseConfig(t, tp, noneAlgo(t, 4))
	cfg.Telemetry = sim.TelemetryConfig{}
	cfg.Host.RTO = 0
	cfg.Switch.PFC = false
	cfg.Switch.Buffer = 200_000
	for i := 0; i < 8; i++ {
		cfg.Flows = append(cfg.Flows, tp.flow(fmt.Sprintf("h%d", i), "h15", 1_000_000, 0))
	}
	return cfg
}

// oneLaneSends has every flow's sender in lane 0.
func oneLaneSends(t testing.TB) sim.Config {
	tp := fatTreeK(4, 100e9, sim.Microsecond)
	cfg := baseConfig(t, tp, noneAlgo(t, 1))
	for i := 0; i < 4; i++ {
		cfg.Flows = append(cfg.Flows, tp.flow(fmt.Sprintf("h%d", i), fmt.Sprintf("h%d", 15-i), 300_000, 0))
	}
	return cfg
}

type slicedRun struct {
	sim  *sim.Sim
	res  *sim.Result
	cons []sim.Conservation // at every slice's end
}

// runSliced runs cfg in lanes, in slices of slice (0: in one), checking
// the byte balance at every slice's end.
func runSliced(t *testing.T, cfg sim.Config, lanes int, slice sim.Time) (slicedRun, []sim.Sample) {
	t.Helper()
	base := runtime.NumGoroutine()
	s, err := sim.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var c collector
	s.Subscribe(&c)
	s.SetLanes(lanes)
	r := slicedRun{sim: s}
	for !s.Done() {
		limit := s.End()
		if slice > 0 {
			limit = min(s.Now()+slice, s.End())
		}
		if err := s.RunUntil(limit); err != nil {
			t.Fatal(err)
		}
		cons := s.Conservation()
		if err := cons.Check(); err != nil {
			t.Fatalf("%d lanes, at %d ps: %v", lanes, s.Now(), err)
		}
		r.cons = append(r.cons, cons)
	}
	r.res = s.Result()
	// every lane's goroutine has stopped with the slice that started it
	for i := 0; runtime.NumGoroutine() > base; i++ {
		if i == 100 {
			t.Fatalf("%d lanes: %d goroutines after the run, %d before", lanes, runtime.NumGoroutine(), base)
		}
		time.Sleep(time.Millisecond)
	}
	return r, c.s
}

// firstDifference names the first field of two results that differs.
func firstDifference(a, b *sim.Result) string {
	va, vb := reflect.ValueOf(*a), reflect.ValueOf(*b)
	for i := 0; i < va.NumField(); i++ {
		if !reflect.DeepEqual(va.Field(i).Interface(), vb.Field(i).Interface()) {
			fa, fb := fmt.Sprintf("%+v", va.Field(i).Interface()), fmt.Sprintf("%+v", vb.Field(i).Interface())
			if len(fa) > 300 {
				fa, fb = fa[:300]+"…", fb[:300]+"…"
			}
			return fmt.Sprintf("%s: %s\nvs %s", va.Type().Field(i).Name, fa, fb)
		}
	}
	return "(no field differs)"
}

// A run whose state the lanes do not split goes in one lane, says why, and
// is the run it would have been.
func TestLanesFallBackToOne(t *testing.T) {
	cases := []struct {
		name string
		cfg  func(testing.TB) sim.Config
		why  string
	}{
		{"timely", func(t testing.TB) sim.Config {
			return libraryConfig(t, "fattree16-websearch30", "timely", "duration=300us")
		}, "algorithm timely"},
		{"homa", func(t testing.TB) sim.Config {
			return libraryConfig(t, "fattree16-websearch30", "homa", "duration=300us")
		}, "a receiver-side algorithm"},
		{"random loss", func(t testing.TB) sim.Config {
			cfg := libraryConfig(t, "fattree16-websearch30", "dcqcn", "duration=300us")
			l := cfg.Links[len(cfg.Links)-1]
			port := cfg.Nodes[l.A].Name + "->" + cfg.Nodes[l.B].Name
			cfg.Events = append(cfg.Events, sim.EventSpec{At: 100 * sim.Microsecond, Kind: sim.EventLoss, Port: port, Loss: 0.01})
			return cfg
		}, "scripted events"},
		{"one rack", func(t testing.TB) sim.Config {
			tp := star(8, 100e9, sim.Microsecond)
			cfg := baseConfig(t, tp, noneAlgo(t, 1))
			cfg.Flows = append(cfg.Flows, tp.flow("h0", "h7", 100_000, 0))
			return cfg
		}, "fewer racks than lanes"},
		{"short links into hosts", func(t testing.TB) sim.Config {
			cfg := shortHostLinks(t)
			for i := range cfg.Links {
				if cfg.Links[i].Delay < sim.Microsecond {
					cfg.Links[i].Delay = 50 * sim.Nanosecond
				}
			}
			return cfg
		}, "links into hosts shorter than 100 ns (in a run until its last flow)"},
		{"short links", func(t testing.TB) sim.Config {
			tp := fatTreeK(4, 100e9, 50*sim.Nanosecond)
			cfg := baseConfig(t, tp, noneAlgo(t, 1))
			cfg.Flows = append(cfg.Flows, tp.flow("h0", "h15", 100_000, 0))
			return cfg
		}, "links between lanes shorter than 100 ns"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg(t)
			one, _ := runSliced(t, cfg, 1, 0)
			two, _ := runSliced(t, cfg, 2, 0)
			if n, why := two.sim.Lanes(); n != 1 || why != tc.why {
				t.Fatalf("Lanes() = %d, %q; want 1, %q", n, why, tc.why)
			}
			if !reflect.DeepEqual(one.res, two.res) {
				t.Errorf("results differ:\n%s", firstDifference(one.res, two.res))
			}
		})
	}
}

// The lanes are pods: the reference's 16-host fat-tree (two pods of two
// racks, two core switches) splits into its pods, each with one core
// switch (the flows give s25 more work than s24, and it goes to the lane
// with less, lane 0), and the lookahead is its core links' 1 µs.
func TestLanesArePods(t *testing.T) {
	cfg, _, err := scenarios.Build(refScenario(t, "dcqcn"))
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	if n := s.SuggestLanes(16); n != 2 {
		t.Fatalf("SuggestLanes(16) = %d, want 2 (one per two racks)", n)
	}
	if n := s.SuggestLanes(1); n != 1 {
		t.Fatalf("SuggestLanes(1) = %d, want 1", n)
	}
	lanes, look := s.PlanLanes(2)
	want := map[int][]string{
		0: {"h0", "h1", "h2", "h3", "h4", "h5", "h6", "h7", "s16", "s17", "s20", "s21", "s25"},
		1: {"h8", "h9", "h10", "h11", "h12", "h13", "h14", "h15", "s18", "s19", "s22", "s23", "s24"},
	}
	for l, names := range want {
		for _, n := range names {
			if lanes[n] != l {
				t.Errorf("%s in lane %d, want %d", n, lanes[n], l)
			}
		}
	}
	if len(lanes) != 26 {
		t.Errorf("%d nodes placed, want 26", len(lanes))
	}
	if look != sim.Microsecond {
		t.Errorf("lookahead %d ps, want 1 µs", look)
	}
}

// The partition's estimate of each node's work (loads) against a literal
// count: one flow of 10 packets across the k = 4 fat-tree puts its 10
// data packets at its 7 nodes (host, ToR, agg, core, agg, ToR, host) and
// its ACKs (one per ackEvery packets) at the 7 of the way back; a run's
// duration caps the packets at what the line rate sends in it (4.5
// packets' time: 5).
func TestLanesLoads(t *testing.T) {
	for _, c := range []struct {
		name    string
		packets float64 // the flow's data packets as estimated
		cut     bool    // the run's duration cuts the flow short
	}{
		{"whole flow", 10, false},
		{"cut by the duration", 5, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			tp := fatTreeK(4, 100e9, sim.Microsecond)
			cfg := baseConfig(t, tp, noneAlgo(t, 1))
			mtu := int64(cfg.Host.MTU)
			cfg.Flows = append(cfg.Flows, tp.flow("h0", "h15", 10*mtu, 0))
			if c.cut {
				cfg.Duration = sim.Time(4.5 * float64(mtu) * 8 / 100e9 * float64(sim.Second))
			}
			s, err := sim.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			w := s.Loads()
			both := c.packets + c.packets/float64(cfg.Host.AckEvery)
			var switches float64
			for name, v := range w {
				switch {
				case name == "h0" || name == "h15" || name == "tor0" || name == "tor7":
					if v != both {
						t.Errorf("%s: %g, want %g (data and ACKs)", name, v, both)
					}
				case name[0] == 'h':
					if v != 0 {
						t.Errorf("%s: %g, want 0 (no flow)", name, v)
					}
				default:
					switches += v
				}
			}
			// the five switches of each way, less the two ToRs counted above
			if want := 3 * both; switches != want {
				t.Errorf("aggregation and core switches: %g in all, want %g", switches, want)
			}
		})
	}
}

// The top tier is dealt out to even the lanes' work: the 320-host
// WebSearch fabric has 5 pods in 2 lanes, so one pod's racks are split and
// its aggregation switches go with lane 0, which then has more work by its
// racks alone; dealing the 16 cores by their work evens the lanes to
// within the heaviest core's work (dealt alternately, heaviest first, they
// differ by 3.0 M packet visits, against 0.3 M for that core).
func TestLanesEvenTheWork(t *testing.T) {
	s, err := sim.New(libraryConfig(t, "rcc-fattree320-websearch", "hpcc"))
	if err != nil {
		t.Fatal(err)
	}
	lanes, _ := s.PlanLanes(2)
	if lanes == nil {
		t.Fatal("the 320-host fabric does not split into 2 lanes")
	}
	var load [2]float64
	heaviest := 0.0
	for name, w := range s.Loads() {
		load[lanes[name]] += w
		if strings.HasPrefix(name, "core") {
			heaviest = max(heaviest, w)
		}
	}
	if heaviest == 0 {
		t.Fatal("no core switch has work")
	}
	if d := math.Abs(load[0] - load[1]); d > heaviest {
		t.Errorf("lanes' work %.0f and %.0f differ by %.0f, more than the heaviest core's %.0f", load[0], load[1], d, heaviest)
	}
}
