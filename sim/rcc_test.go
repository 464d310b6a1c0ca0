package sim_test

import (
	"fmt"
	"os"
	"sort"
	"testing"

	"cclab/sim"
	"cclab/sim/report"
)

// RCC in the engine (seed 002). Every run is a library scenario with its
// fixed seed; each tolerance is justified where it is asserted.

// pauseMean is the mean PFC pause fraction over the senders' NIC ports
// (h*->s0): how much of the run the senders were held by PAUSE frames (the
// extract flags the paper's "pause time %" as undefined; this is our
// reading).
func pauseMean(r *sim.Result) float64 {
	var sum float64
	n := 0
	for _, p := range r.Ports {
		if !p.Switch && len(p.Name) > 1 && p.Name[0] == 'h' {
			sum += p.PauseFraction
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// 256 × 200 KB into one 100 Gbps port (rcc-incast-256to1, starts spread over
// 20 µs). Every sender starts at line rate with one BDP, so the first wave
// (≈ 256 × 56 KB) reaches the receiver's port under any scheme; what differs
// is how fast it drains. RCC assigns C·RTT/N on the first ACKs, HPCC needs
// several RTTs: RCC's maximum queue must be below HPCC's (measured 13.75 MB
// vs 14.23 MB; the assertion is strict, with no slack, because the margin
// is the scheme's, not noise: the run is deterministic). FCT p50/p99 are
// reported beside HPCC's (the paper: −5.2% / −4.1%). DCQCN and TIMELY have
// no window, send their 200 KB at line rate, overflow the 32 MB buffer's
// PFC thresholds and pause the senders; RCC must pause less than both (the
// paper's Table II at 256: 0.3% vs 42.1% and 54.9%; measured: 0% vs 25.5%
// and 27.5% of the run, mean over the senders' NIC ports). Under -short
// only RCC and HPCC run.
func TestRCCIncast256(t *testing.T) {
	type row struct {
		maxQ          int64
		p50, p99, avg float64
		pause         float64
	}
	rows := map[string]row{}
	algos := []string{"rcc", "hpcc", "dcqcn", "timely"}
	if testing.Short() {
		algos = algos[:2]
	}
	for _, algo := range algos {
		cfg := libraryConfig(t, "rcc-incast-256to1", algo, "telemetry.interval=0s")
		_, r := run(t, cfg)
		checkBuffers(t, cfg, r)
		sum := report.Summarize(r, nil, 0)
		if sum.FlowsUnfinished != 0 {
			t.Fatalf("%s: %d flows unfinished", algo, sum.FlowsUnfinished)
		}
		var fct []float64
		for _, f := range r.Flows {
			fct = append(fct, float64(f.Finish-f.Start)/1e6) // µs
		}
		sort.Float64s(fct)
		rw := row{maxQ: portResult(r, "s0->r0").QueueMax, p50: fct[len(fct)/2], p99: fct[len(fct)*99/100],
			avg: mean(fct), pause: pauseMean(r)}
		rows[algo] = rw
		t.Logf("%-6s max queue %8d B | FCT µs avg %7.1f p50 %7.1f p99 %7.1f | sender pause %.1f%%",
			algo, rw.maxQ, rw.avg, rw.p50, rw.p99, 100*rw.pause)
	}
	rcc, hpcc := rows["rcc"], rows["hpcc"]
	t.Logf("RCC vs HPCC: p50 %+.1f%%, p99 %+.1f%% (paper: −5.2%%, −4.1%%)",
		100*(rcc.p50/hpcc.p50-1), 100*(rcc.p99/hpcc.p99-1))
	if rcc.maxQ >= hpcc.maxQ {
		t.Errorf("RCC's max queue %d B is not below HPCC's %d B", rcc.maxQ, hpcc.maxQ)
	}
	if testing.Short() {
		return
	}
	for _, other := range []string{"dcqcn", "timely"} {
		if rcc.pause >= rows[other].pause {
			t.Errorf("RCC's pause fraction %.2f%% is not below %s's %.2f%%", 100*rcc.pause, other, 100*rows[other].pause)
		}
	}
}

// Four long flows join one receiver 1 ms apart (rcc-fairness-4flows):
// explicit assignment gives each newcomer C·RTT/N on the next ACK, so
// Jain's index over the second half of every phase must be ≥ 0.99 (the
// paper reports 0.998–0.999; measured 1.0000), and the flows together
// carry ≥ 90% of the link (measured 94.7 Gbps of goodput: 1000 B payloads
// in 1056 B frames cap it at 94.7); in each second half the queue stays
// under 10 KB (measured ≤ 8.4 KB: the shares sum to one BDP computed from
// the data packets' one-way delay, slightly above the true RTT's).
func TestRCCFairness4Flows(t *testing.T) {
	cfg := libraryConfig(t, "rcc-fairness-4flows", "")
	c := &collector{}
	s, r := run(t, cfg, c)
	ms := 1e-3
	for ph := 1; ph <= 4; ph++ {
		from, to := (float64(ph)-0.5)*ms, float64(ph)*ms
		j, n := jainOver(s, c, r, from, to)
		var total float64
		for _, f := range r.Flows {
			ts, v := series(s, c, "throughput_bps", fmt.Sprint(f.ID))
			var x []float64
			for i := range ts {
				if ts[i] > from && ts[i] <= to {
					x = append(x, v[i])
				}
			}
			if len(x) > 0 {
				total += mean(x)
			}
		}
		qt, qv := series(s, c, "queue_bytes", "s0->r0")
		var qmax float64
		for i := range qt {
			if qt[i] > from && qt[i] <= to && qv[i] > qmax {
				qmax = qv[i]
			}
		}
		t.Logf("phase %d (%d flows): Jain %.4f, %.1f Gbps, queue ≤ %.0f B", ph, n, j, total/1e9, qmax)
		if qmax > 10_000 {
			t.Errorf("phase %d: the receiver's queue reached %.0f B in the second half (want < 10 KB)", ph, qmax)
		}
		if j < 0.99 {
			t.Errorf("phase %d: Jain %.4f < 0.99", ph, j)
		}
		if total < 0.9*100e9*1000/1056 {
			t.Errorf("phase %d: %.1f Gbps carried, under 90%% of the 94.7 Gbps of goodput", ph, total/1e9)
		}
	}
	// each newcomer's first window (one BDP at line rate) lands at once; the
	// peak is bounded by the windows: the others' shares plus that BDP
	if q := portResult(r, "s0->r0").QueueMax; q > 2*r.MaxBDP {
		t.Errorf("the receiver's queue peaked at %d B, above two BDPs (%d B)", q, 2*r.MaxBDP)
	}
}

// rcc-multibottleneck: f0 h0→r0 and f1 h1→r1 share s0→s1 from 0.5 ms,
// neither receiver's link full, so the delay rise is in-network and the PI
// controller runs. Over 1.0–1.5 ms the queue at s0→s1 must settle near the
// PI target: base·δ/2 of delay = 3.25 µs · 0.1 ≈ 4.1 KB at 100 G; we allow
// [0.5×, 2×] the target (measured 5.2 KB: the once-per-RTT update rides
// above and below it). The ablation without PI (rcc_no_pi: the fair share
// of each receiver is a whole BDP) must hold a standing queue ≥ 10× larger
// (measured 96 KB), and with PI the link must stay ≥ 85% used (measured
// 88.5 of 94.7 Gbps). Flows under PI are not asserted fair: Eq. (5)'s
// multiplicative update keeps the ratio of their windows (measured 29.7 vs
// 57.3 Gbps), see the contract notes.
func TestRCCMultiBottleneckPI(t *testing.T) {
	type res struct{ q, gbps float64 }
	measure := func(preset string) res {
		cfg := libraryConfig(t, "rcc-multibottleneck", "", "duration=1.5ms", "cc.preset="+preset)
		c := &collector{}
		s, r := run(t, cfg, c)
		ts, q := series(s, c, "queue_bytes", "s0->s1")
		var qs []float64
		for i := range ts {
			if ts[i] > 1e-3 {
				qs = append(qs, q[i])
			}
		}
		var total float64
		for _, f := range r.Flows[:2] {
			ts, v := series(s, c, "throughput_bps", fmt.Sprint(f.ID))
			var x []float64
			for i := range ts {
				if ts[i] > 1e-3 {
					x = append(x, v[i])
				}
			}
			total += mean(x)
		}
		return res{mean(qs), total / 1e9}
	}
	pi, nopi := measure(""), measure("rcc_no_pi")
	target := 100e9 / 8 * 3.25e-6 * 0.2 / 2
	t.Logf("s0->s1 mean queue: RCC %.0f B (target %.0f B), %.1f Gbps; rcc_no_pi %.0f B, %.1f Gbps",
		pi.q, target, pi.gbps, nopi.q, nopi.gbps)
	if pi.q < 0.5*target || pi.q > 2*target {
		t.Errorf("RCC's queue %.0f B outside [0.5, 2] × the target %.0f B", pi.q, target)
	}
	if nopi.q < 10*pi.q {
		t.Errorf("without PI the queue (%.0f B) is not ≥ 10× RCC's (%.0f B)", nopi.q, pi.q)
	}
	if pi.gbps < 0.85*94.7 {
		t.Errorf("RCC carried %.1f Gbps through s0->s1, under 85%% of 94.7", pi.gbps)
	}
}

// The paper's large-scale comparison (Fig. 9, web search): average FCT of
// RCC, HPCC, DCQCN and TIMELY on HPCC's 320-host fat-tree. Minutes of work,
// so it runs only with RCC_FATTREE=1 (and not under -short; ~2 min for the
// eight runs on 2 cores). RCC runs as the library scenario has it, with the
// paper's 12 µs base RTT as its round (ewaRTT); the baselines replace the
// scenario's cc object (as --algo does). Asserted: RCC's mean FCT is below
// DCQCN's and TIMELY's and within 5% of HPCC's, and RCC without PI beats
// HPCC (paper, full RCC: 9% / 30% / 45% lower than HPCC / DCQCN / TIMELY;
// measured: RCC 218.7 µs, HPCC 220.9, DCQCN 239.3, TIMELY 254.6, so −1% /
// −9% / −14%; RCC-EWA 201.5). The gap to the paper is the PI path: most
// flows that enter it were caught in a burst at their own last hop (the
// delay threshold, δ × the one-way base ≈ 1.2 µs of queueing, is crossed
// within a microsecond while B_R needs most of a round at line rate to
// reach η), and stay in it (sticky) with small windows. With the paper's
// 12 µs taken as the base of the one-way delay (baseDelay) the threshold is
// 8.4 µs of queueing, PI almost never engages at 30% load, and RCC comes
// out as RCC-EWA.
func TestRCCFatTree320(t *testing.T) {
	if testing.Short() || os.Getenv("RCC_FATTREE") == "" {
		t.Skip("set RCC_FATTREE=1 to run the 320-host comparison")
	}
	avg := map[string]float64{}
	runs := []struct {
		label, algo string
		sets        []string
	}{
		{"rcc", "", nil}, {"hpcc", "hpcc", nil}, {"dcqcn", "dcqcn", nil}, {"timely", "timely", nil},
		{"rcc_no_pi", "", []string{"cc.preset=rcc_no_pi"}}, {"rcc_no_ewa", "", []string{"cc.preset=rcc_no_ewa"}},
		// the paper's 12 µs base RTT as the base of the one-way delay (a
		// detection threshold of 14.4 µs), and the learned base with a round
		// of its own instead of the paper's 12 µs (what --algo rcc runs)
		{"rcc baseDelay=12us", "", []string{"cc.params.baseDelay=12"}}, {"rcc ewaRTT=learned", "", []string{"cc.params.ewaRTT=0"}},
	}
	for _, rn := range runs {
		cfg := libraryConfig(t, "rcc-fattree320-websearch", rn.algo, append([]string{"telemetry.interval=0s"}, rn.sets...)...)
		_, r := run(t, cfg)
		var fct []float64
		for _, f := range r.Flows {
			if f.Finished {
				fct = append(fct, float64(f.Finish-f.Start)/1e6)
			}
		}
		if len(fct) != len(r.Flows) {
			t.Errorf("%s: %d of %d flows finished", rn.label, len(fct), len(r.Flows))
		}
		sort.Float64s(fct)
		avg[rn.label] = mean(fct)
		t.Logf("%-20s %d/%d flows: FCT avg %.1f µs, p50 %.1f, p99 %.1f", rn.label, len(fct), len(r.Flows),
			avg[rn.label], fct[len(fct)/2], fct[len(fct)*99/100])
	}
	for _, v := range []string{"rcc", "rcc_no_pi", "rcc baseDelay=12us"} {
		for _, other := range []string{"hpcc", "dcqcn", "timely"} {
			t.Logf("%s vs %s: %+.1f%% average FCT (paper, RCC: −9%%, −30%%, −45%%)", v, other, 100*(avg[v]/avg[other]-1))
		}
	}
	if avg["rcc"] >= avg["dcqcn"] || avg["rcc"] >= avg["timely"] || avg["rcc"] > 1.05*avg["hpcc"] {
		t.Errorf("RCC %.1f µs: want below DCQCN (%.1f) and TIMELY (%.1f) and within 5%% of HPCC (%.1f)",
			avg["rcc"], avg["dcqcn"], avg["timely"], avg["hpcc"])
	}
	if avg["rcc_no_pi"] >= avg["hpcc"] {
		t.Errorf("RCC without PI %.1f µs, HPCC %.1f: want it below", avg["rcc_no_pi"], avg["hpcc"])
	}
}
