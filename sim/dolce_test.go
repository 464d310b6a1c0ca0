package sim_test

import (
	"fmt"
	"os"
	"sort"
	"testing"

	"cclab/sim"
)

// An 8-to-1 incast at 100 Gb/s with the paper's ECN thresholds: every flow
// learns (reward events at qualified CNPs, arms beyond the forced block),
// the arm gauge is sampled, the run is conservative, and a second run with
// the same seed is identical (the bandit is deterministic).
func TestDolceIncastLearns(t *testing.T) {
	build := func() sim.Config {
		tp := star(9, 100e9, sim.Microsecond)
		cfg := algoConfig(t, tp, "dolce", 100e9, map[string]float64{"qualifyInterval": 20})
		for i := 0; i < 8; i++ {
			cfg.Flows = append(cfg.Flows, tp.flow(fmt.Sprintf("h%d", i), "h8", 4_000_000, 0))
		}
		return cfg
	}
	type key struct {
		metric string
		flow   int32
	}
	runOnce := func() (map[key][]float64, []sim.Time) {
		col := &collector{}
		s, r := run(t, build(), col)
		if r.FlowsFinished() != 8 {
			t.Fatalf("%d of 8 flows finished", r.FlowsFinished())
		}
		out := map[key][]float64{}
		for _, smp := range col.s {
			name := s.MetricName(smp.Metric)
			if name == "dolce_arm" || name == "dolce_reward" {
				out[key{name, smp.Entity}] = append(out[key{name, smp.Entity}], smp.Value)
			}
		}
		var fct []sim.Time
		for _, f := range r.Flows {
			fct = append(fct, f.FCT)
		}
		return out, fct
	}
	s1, f1 := runOnce()
	s2, f2 := runOnce()
	for i := range f1 {
		if f1[i] != f2[i] {
			t.Fatalf("flow %d: FCT %d then %d: not deterministic", i, f1[i], f2[i])
		}
	}
	for flow := int32(0); flow < 8; flow++ {
		rw, arms := s1[key{"dolce_reward", flow}], s1[key{"dolce_arm", flow}]
		if len(rw) < 5 || len(arms) == 0 {
			t.Errorf("flow %d: %d rewards, %d arm samples", flow, len(rw), len(arms))
			continue
		}
		for _, x := range rw {
			if x < 0 || x > 1 {
				t.Errorf("flow %d: reward %v outside [0, 1]", flow, x)
			}
		}
		if fmt.Sprint(rw) != fmt.Sprint(s2[key{"dolce_reward", flow}]) {
			t.Errorf("flow %d: rewards differ between identical runs", flow)
		}
		if flow == 0 {
			t.Logf("flow 0: %d iterations, rewards %.3v…, arms sampled %v…", len(rw), rw[:5], arms[:min(len(arms), 12)])
		}
	}
}

// fctStats is the mean and nearest-rank p99 FCT (µs) over the given flows.
func fctStats(fcts []float64) (mean, p99 float64) {
	if len(fcts) == 0 {
		return 0, 0
	}
	v := append([]float64(nil), fcts...)
	sort.Float64s(v)
	for _, x := range v {
		mean += x
	}
	return mean / float64(len(v)), v[int(float64(len(v))*0.99)]
}

// The asserted comparison (the issue's): Cache Follower at 50% load on the
// k = 8, 200 Gb/s fat-tree with the paper's ECN thresholds, flows arriving
// for 0.5 ms (1 ms in the library scenario; halved to keep the test at a few
// seconds): Dolce-RC's mean FCT is not worse than DCQCN's by more than 5%.
// Both are measured over the flows that finished in both runs (a flow
// unfinished at the 4 ms stop would otherwise bias the mean); each run must
// finish at least 99% of its flows. The paper's k = 16 figures: 546 → 235 µs.
// DOLCE_FULL=1 runs the library scenario's full 1 ms of arrivals instead.
func TestDolceCacheFollower50VsDCQCN(t *testing.T) {
	sets := []string{"telemetry.interval=0s", "workload[0].until=500us", "duration=4ms"}
	if os.Getenv("DOLCE_FULL") != "" {
		sets = []string{"telemetry.interval=0s"}
	}
	results := map[string]*sim.Result{}
	for _, algo := range []string{"dcqcn", "dolce"} {
		cfg := libraryConfig(t, "dolce-fattree8-cachefollower50", algo, sets...)
		_, r := run(t, cfg)
		if n := len(r.Flows); r.FlowsFinished()*100 < n*99 {
			t.Errorf("%s: only %d of %d flows finished", algo, r.FlowsFinished(), n)
		}
		results[algo] = r
	}
	var common [2][]float64
	var all [2][]float64
	for i, algo := range []string{"dcqcn", "dolce"} {
		for j, f := range results[algo].Flows {
			if f.Finished {
				all[i] = append(all[i], float64(f.FCT)/float64(sim.Microsecond))
			}
			if results["dcqcn"].Flows[j].Finished && results["dolce"].Flows[j].Finished {
				common[i] = append(common[i], float64(f.FCT)/float64(sim.Microsecond))
			}
		}
	}
	dm, dp := fctStats(common[0])
	om, op := fctStats(common[1])
	am0, ap0 := fctStats(all[0])
	am1, ap1 := fctStats(all[1])
	t.Logf("Cache Follower 50%%, k=8, %d flows finished by both: DCQCN mean %.1f µs p99 %.1f µs; Dolce-RC mean %.1f µs p99 %.1f µs (paper, k=16: 546.48/3074.44 → 234.97/2024.28)",
		len(common[0]), dm, dp, om, op)
	t.Logf("over each run's own finished flows: DCQCN %d flows mean %.1f p99 %.1f; Dolce-RC %d flows mean %.1f p99 %.1f",
		len(all[0]), am0, ap0, len(all[1]), am1, ap1)
	// the bound: not worse than DCQCN by more than 5%
	if om > 1.05*dm {
		t.Errorf("Dolce-RC mean FCT %.1f µs is more than 5%% above DCQCN's %.1f µs", om, dm)
	}
	// and the effect the paper reports (−57% at 50% load; measured here
	// −56%): held to a ratio of 0.7, so losing most of it fails
	if om > 0.7*dm {
		t.Errorf("Dolce-RC mean FCT %.1f µs is not well below DCQCN's %.1f µs (ratio %.2f, want ≤ 0.7)", om, dm, om/dm)
	}
}

// Learning across messages (dolce-incast-repeat: 16 hosts each send a
// 256 KB message to one receiver every 500 µs, 20 rounds). A message lasts
// one round at most, about one fast-recovery phase: alone it iterates its
// bandit at most once, so the forced round robin's first picks are all that
// is ever learnt. With sharedQP the 16 host pairs' connections carry their
// bandit from round to round and reach the UCB rule (more than K = 4
// iterations each). What it buys here is measured, not asserted: every
// arm's reward is near 0 in most rounds (above 500 KB every packet is
// marked), and the link, not the arm, sets the messages' pace; both
// variants finish far ahead of DCQCN, whose first CNP halves every sender.
func TestDolceSharedQPLearns(t *testing.T) {
	type out struct {
		iters   map[string]int // iterations per host pair
		perFlow map[int32]int
		picks   [4]int
		fct     []float64
	}
	runOne := func(algo string, sets ...string) out {
		col := &collector{}
		s, r := run(t, libraryConfig(t, "dolce-incast-repeat", algo, sets...), col)
		o := out{iters: map[string]int{}, perFlow: map[int32]int{}}
		for _, smp := range col.s {
			if s.MetricName(smp.Metric) == "dolce_pick" {
				f := r.Flows[smp.Entity]
				o.iters[f.Src+">"+f.Dst]++
				o.perFlow[smp.Entity]++
				o.picks[int(smp.Value)]++
			}
		}
		for _, f := range r.Flows {
			if !f.Finished {
				t.Fatalf("%s %v: flow %d did not finish", algo, sets, f.ID)
			}
			o.fct = append(o.fct, float64(f.FCT)/float64(sim.Microsecond))
		}
		return o
	}
	shared := runOne("")
	alone := runOne("", "cc.params.sharedQP=false")
	dcqcn := runOne("dcqcn")
	most := 0
	for _, n := range shared.iters {
		most = max(most, n)
	}
	for id, n := range alone.perFlow {
		if n > 1 {
			t.Errorf("without sharedQP message %d iterated %d times, want at most once", id, n)
		}
	}
	if most <= 4 || len(shared.iters) != 16 {
		t.Errorf("with sharedQP: %d connections, at most %d iterations on one: the bandit never reaches its UCB rule", len(shared.iters), most)
	}
	for _, c := range []struct {
		name string
		o    out
	}{{"dolce sharedQP", shared}, {"dolce per message", alone}, {"dcqcn", dcqcn}} {
		m, p99 := fctStats(c.o.fct)
		n := 0
		for _, k := range c.o.iters {
			n += k
		}
		t.Logf("%-17s FCT mean %.1f µs p99 %.1f; %d iterations, arms picked %v", c.name, m, p99, n, c.o.picks)
	}
	if ms, _ := fctStats(shared.fct); ms >= func() float64 { m, _ := fctStats(dcqcn.fct); return m }() {
		t.Errorf("Dolce-RC with sharedQP (%.1f µs) is not ahead of DCQCN", ms)
	}
}

// Why Dolce-RC's peak queue on the 16-to-1 incast is several times DCQCN's:
// DCQCN's first CNP sets α = 1, so its first decrease check (4 µs later)
// halves every sender; Dolce-RC has no α estimate, and until a flow's first
// qualified CNP, one fast-recovery phase (300 µs) after it starts, arm 0 is
// in force (α = 0.002: a 0.1% cut per check), so the sixteen senders keep
// near line rate and fill the buffer until PFC stops them. Qualifying after
// 20 µs instead (dolce_5cnp) moves the flows to deeper arms early and more
// than halves the peak. Dolce-RC's own marking thresholds (7 KB / 500 KB,
// pmax 1, against DCQCN's 400 KB / 1600 KB / 0.2) are not the cause: DCQCN
// with them peaks lower still.
func TestDolceIncastPeak(t *testing.T) {
	peak := map[string]int64{}
	paused := map[string]float64{}
	for _, c := range []struct{ label, algo, preset string }{{"dcqcn", "dcqcn", ""}, {"dolce", "dolce", ""}, {"dolce_5cnp", "dolce", "dolce_5cnp"},
		{"dcqcn, Dolce-RC's marking", "dcqcn", "ecn"}} {
		sets := []string{"duration=1ms", "telemetry.interval=0s", `cc={"algorithm":"` + c.algo + `"}`}
		switch c.preset {
		case "ecn":
			sets = append(sets, `switch.ecn={"kmin":"7KB","kmax":"500KB","pmax":1}`)
		case "":
		default:
			sets = append(sets, "cc.preset="+c.preset)
		}
		_, r := run(t, libraryConfig(t, "incast-16to1-dcqcn", "", sets...))
		for _, p := range r.Ports {
			if p.Name == "s0->r0" {
				peak[c.label] = p.QueueMax
			}
			if p.Name == "h0->s0" {
				paused[c.label] = p.PauseFraction
			}
		}
		t.Logf("%-26s peak queue %.2f MB, h0 paused %.0f%% of the run", c.label, float64(peak[c.label])/1e6, 100*paused[c.label])
	}
	if peak["dolce"] < 2*peak["dcqcn"] || paused["dolce"] == 0 || paused["dcqcn"] != 0 {
		t.Errorf("Dolce-RC's peak %d B is not at least twice DCQCN's %d B with PFC pausing its senders", peak["dolce"], peak["dcqcn"])
	}
	if 2*peak["dcqcn, Dolce-RC's marking"] >= peak["dolce"] {
		t.Errorf("DCQCN with Dolce-RC's 7 KB / 500 KB marking peaks at %d B: the thresholds, not the cut, would explain Dolce-RC's %d B", peak["dcqcn, Dolce-RC's marking"], peak["dolce"])
	}
	if 2*peak["dolce_5cnp"] >= peak["dolce"] {
		t.Errorf("qualifying CNPs after 20 µs: peak %d B, not under half of %d B", peak["dolce_5cnp"], peak["dolce"])
	}
}

// Dolce-RC+'s dumbbell (the paper's §VI-B, Fig. 8), scaled down tenfold in
// sizes and times so that it runs in a second (110 MB long flows at 0, six
// 23 MB ones at 7.5 ms, 256 KB Poisson flows over 15 ms; the library
// scenario has the paper's 1.1 GB, 230 MB and 150 ms). The paper's claims,
// qualitative only: DCQCN sends the short flows at high rates, which hurts
// the long flows and the aggregate throughput; Dolce-RC+ suppresses the
// short flows' rates and finishes all flows much earlier. Asserted: every
// flow finishes; Dolce-RC+'s last flow finishes before 0.8 × DCQCN's; its
// short flows get a lower mean rate than under DCQCN; its bandit iterates
// on messages of every flow class and uses more than one arm.
func TestDolcePlusDumbbell(t *testing.T) {
	sets := []string{"telemetry.interval=100us", "workload[0].flows[0].size=110MB", "workload[0].flows[1].size=110MB", "workload[1].until=15ms"}
	for i := 2; i < 8; i++ {
		sets = append(sets, fmt.Sprintf("workload[0].flows[%d].size=23MB", i), fmt.Sprintf("workload[0].flows[%d].start=7.5ms", i))
	}
	type res struct {
		last      sim.Time
		shortRate float64 // mean of size/FCT over the short flows, b/s
		longDone  []sim.Time
		picks     map[int]int
		mcts      int
	}
	runOne := func(algo string) res {
		col := &collector{}
		s, r := run(t, libraryConfig(t, "dolceplus-dumbbell", algo, sets...), col)
		o := res{picks: map[int]int{}}
		n := 0
		for _, f := range r.Flows {
			if !f.Finished {
				t.Fatalf("%s: flow %d did not finish", algo, f.ID)
			}
			o.last = max(o.last, f.Finish)
			if f.Size == 256_000 {
				o.shortRate += float64(f.Size*8) / (float64(f.FCT) / float64(sim.Second))
				n++
			} else {
				o.longDone = append(o.longDone, f.Finish)
			}
		}
		o.shortRate /= float64(n)
		for _, smp := range col.s {
			switch s.MetricName(smp.Metric) {
			case "dolceplus_pick":
				o.picks[int(smp.Value)]++
			case "dolceplus_mct_ns":
				o.mcts++
			}
		}
		return o
	}
	plus, dcqcn := runOne(""), runOne("dcqcn")
	ms := func(x sim.Time) float64 { return float64(x) / float64(sim.Millisecond) }
	t.Logf("all flows done: Dolce-RC+ %.1f ms, DCQCN %.1f ms; short flows' mean rate: Dolce-RC+ %.1f Gb/s, DCQCN %.1f Gb/s",
		ms(plus.last), ms(dcqcn.last), plus.shortRate/1e9, dcqcn.shortRate/1e9)
	t.Logf("Dolce-RC+: %d message completions, arms picked %v", plus.mcts, plus.picks)
	if float64(plus.last) >= 0.8*float64(dcqcn.last) {
		t.Errorf("Dolce-RC+ finished everything at %.1f ms, not well before DCQCN's %.1f ms", ms(plus.last), ms(dcqcn.last))
	}
	if plus.shortRate >= dcqcn.shortRate {
		t.Errorf("Dolce-RC+ did not suppress the short flows: %.1f Gb/s against DCQCN's %.1f", plus.shortRate/1e9, dcqcn.shortRate/1e9)
	}
	if len(plus.picks) < 2 || plus.mcts == 0 {
		t.Errorf("Dolce-RC+'s bandit: %d completions, arms %v", plus.mcts, plus.picks)
	}
}
