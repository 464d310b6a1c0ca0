package sim_test

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"cclab/sim"
	"cclab/sim/report"
)

// Tests of MPCC in the engine against the thesis' experiments (issue 4).
// The scenarios are the built-in library entries, so what is tested here is
// what a student runs.

// libraryRun runs a library scenario with --set style edits and, when algo
// is not empty, another algorithm.
func libraryRun(t testing.TB, name, algo string, sets []string, obs ...sim.Observer) (*sim.Sim, *sim.Result, *sim.Config) {
	t.Helper()
	cfg := libraryConfig(t, name, algo, sets...)
	s, r := run(t, cfg, obs...)
	return s, r, &cfg
}

// queueSeries returns a port's queue samples (seconds, bytes).
func queueSeries(s *sim.Sim, c *collector, port string) ([]float64, []float64) {
	return series(s, c, "queue_bytes", port)
}

// convergence is the time from the start to the first sample after the
// queue's peak at which it is below one packet (the thesis' queue
// convergence time, L798).
func convergence(ts, q []float64, pkt float64) float64 {
	peak := 0
	for i := range q {
		if q[i] > q[peak] {
			peak = i
		}
	}
	for i := peak; i < len(q); i++ {
		if q[i] < pkt {
			return ts[i]
		}
	}
	return math.Inf(1)
}

func meanFrom(ts, v []float64, from float64) float64 {
	sum, n := 0.0, 0
	for i := range ts {
		if ts[i] >= from {
			sum += v[i]
			n++
		}
	}
	return sum / float64(n)
}

// exp1 runs an Exp. 1 library scenario with edits and returns the
// convergence time (s), the bottleneck's mean queue over the last quarter,
// and the result.
func exp1(t *testing.T, name string, sets ...string) (conv, mean, peak float64, s *sim.Sim, c *collector, r *sim.Result) {
	c = &collector{}
	s, r, cfg := libraryRun(t, name, "", sets, c)
	ts, q := queueSeries(s, c, "s0->s1")
	for _, v := range q {
		peak = math.Max(peak, v)
	}
	pkt := float64(cfg.Host.MTU + cfg.Host.Header + 32) // MPCC's 32 B of INT
	return convergence(ts, q, pkt), meanFrom(ts, q, 3.75e-3), peak, s, c, r
}

// Exp. 1 (thesis §5.2; 4-to-1 at 1 Gbps, 1 µs links, max BDP 3750 B by
// HPCC's formula, the library's mpcc-exp1):
//   - the bottleneck queue's mean over the last quarter of 5 ms is below
//     2 KB (one to two packets), and the four flows share the link (Jain ≥
//     0.99 over the second half); `none` on the same scenario (a fixed
//     window of one max BDP) fails the queue bound: it parks (N−1)·W ≈ 11 KB;
//   - the convergence time (the first time the queue is below one packet
//     after its peak) is the thesis' 1:1 value, 140.3 µs, within one packet
//     time at 1 Gbps (8.5 µs): the line-rate start puts 4 packets of every
//     flow in flight and MPCC sends nothing more until they have drained
//     but one: flow 0's first ACK reports an empty queue and N = 1 (its
//     packet left s0 in the picosecond the others arrived), so it keeps its
//     window and sends a fifth packet (147 µs: 17 packet times);
//   - it is the same at 1:1, 1:10 and 1:100, where the thesis has 140.3,
//     149.1 and 175.5 µs (one and about four packet times at 1 Gbps more).
//     The windows the controller picks do depend on the weights, but all
//     are below the one packet each flow still has in flight while the
//     burst drains (the fair window is 937.5 B), so none lets a packet out
//     earlier: the NIC's window works in whole packets;
//   - every solve's time is summarised in the results.
func TestMPCCExp1(t *testing.T) {
	var conv []float64
	for _, wr := range []string{"1", "10", "100"} {
		ct, mean, peak, s, c, r := exp1(t, "mpcc-exp1", "cc.params.wr="+wr)
		conv = append(conv, ct)
		var st sim.SeriesStats
		for _, x := range r.SeriesStats {
			if x.Name == "qp_solve_ns" {
				st = x
			}
		}
		// normalised throughput per flow over the second half (thesis:
		// 0.2464 in 2 ms bins): payload bits over the 1 Gbps line rate
		var norm []string
		for f := 0; f < 4; f++ {
			fts, thr := series(s, c, "throughput_bps", fmt.Sprint(f))
			norm = append(norm, fmt.Sprintf("%.4f", meanFrom(fts, thr, 2.5e-3)/1e9))
		}
		t.Logf("W_Q:W_R 1:%s: peak %.0f B, converged at %.1f µs, last-quarter mean queue %.0f B, Jain %.4f, normalised throughput %s, %d solves (p50 %.0f ns, p99 %.0f ns)",
			wr, peak, ct*1e6, mean, *r.Jain, strings.Join(norm, " "), st.Count, st.P50, st.P99)
		if mean >= 2000 {
			t.Errorf("1:%s: mean queue %.0f B over the last quarter, want < 2 KB", wr, mean)
		}
		if r.Jain == nil || *r.Jain < 0.99 {
			t.Errorf("1:%s: Jain %v over the second half, want ≥ 0.99", wr, r.Jain)
		}
		if st.Count == 0 {
			t.Errorf("1:%s: no qp_solve_ns summary", wr)
		}
	}
	if pktTime := 1068 * 8 / 1e9; math.Abs(conv[0]-140.334e-6) > pktTime {
		t.Errorf("1:1 converged at %.1f µs, the thesis' 140.3 µs ± one packet time (%.1f µs)", conv[0]*1e6, pktTime*1e6)
	}
	if conv[0] != conv[1] || conv[1] != conv[2] {
		t.Errorf("convergence %.1f / %.1f / %.1f µs at 1:1 / 1:10 / 1:100: the weights changed what the NIC sent", conv[0]*1e6, conv[1]*1e6, conv[2]*1e6)
	}
	_, mean, _, _, _, _ := func() (float64, float64, float64, *sim.Sim, *collector, *sim.Result) {
		c := &collector{}
		s, r, _ := libraryRun(t, "mpcc-exp1", "none", nil, c)
		ts, q := queueSeries(s, c, "s0->s1")
		return 0, meanFrom(ts, q, 3.75e-3), 0, s, c, r
	}()
	if mean < 2000 {
		t.Errorf("none: mean queue %.0f B, want it to fail the 2 KB bound", mean)
	} else {
		t.Logf("none: last-quarter mean queue %.0f B", mean)
	}
}

// Exp. 1 read literally (mpcc-exp1-literal: the thesis' "maxBDP = 30000
// bytes" as the model's P_BD, the window cap and the start): the fair
// window is 7500 B, several packets, and the thesis' ordering appears (claim
// C10: a larger W_R converges later, 140 < 149 < 176 µs), but not its times:
// about 0.4 ms at 1:1 and 1.5 ms at 1:10, and at 1:100 the queue never
// drains below one packet in 5 ms (the W_R term holds the windows so close
// to the fair share that a standing queue is cheaper).
func TestMPCCExp1Literal(t *testing.T) {
	var lit, litMean []float64
	for _, wr := range []string{"1", "10", "100"} {
		ct, mean, _, _, _, _ := exp1(t, "mpcc-exp1-literal", "cc.params.wr="+wr)
		lit, litMean = append(lit, ct), append(litMean, mean)
	}
	t.Logf("maxBDP 30000 B: converged at %.1f / %.1f / %.1f µs, last-quarter mean queue %.0f / %.0f / %.0f B at 1:1 / 1:10 / 1:100",
		lit[0]*1e6, lit[1]*1e6, lit[2]*1e6, litMean[0], litMean[1], litMean[2])
	if !(lit[0] < lit[1] && lit[1] < lit[2]) || !(litMean[0] <= litMean[1] && litMean[1] <= litMean[2]) {
		t.Errorf("maxBDP 30000 B: a larger W_R must converge strictly later and queue no less")
	}
}

// A flow cut to a zero window stays alive: sixteen flows into one 1 Gbps
// port (sixteen packets in flight are four times the 3750 B pipe, so the
// controller drives windows to 0) all finish, the windows do reach the
// one-byte floor, and the queue stays bounded by the one packet each flow
// may keep in flight (16 × 1080 B) plus the start's burst.
func TestMPCCKeepAliveInEngine(t *testing.T) {
	c := &collector{}
	s, r, _ := libraryRun(t, "mpcc-exp1", "", []string{"topology.senders=16", "duration=null",
		`workload=[{"kind":"incast","senders":16,"receiver":"r0","size":"200KB","start":"0s"}]`,
		"cc.params.wr=1"}, c)
	if n := r.FlowsFinished(); n != 16 {
		t.Fatalf("%d of 16 flows finished", n)
	}
	floor := 0
	for f := 0; f < 16; f++ {
		_, w := series(s, c, "cwnd_bytes", fmt.Sprint(f))
		for _, v := range w {
			if v == 1 {
				floor++
				break
			}
		}
	}
	ts, q := queueSeries(s, c, "s0->s1")
	late := 0.0
	for i := range ts {
		if ts[i] > 1e-3 {
			late = math.Max(late, q[i])
		}
	}
	t.Logf("%d of 16 flows reached the one-byte window; queue after 1 ms at most %.0f B; last flow done at %.2f ms",
		floor, late, float64(r.SimTime)/1e9)
	if floor == 0 {
		t.Error("no flow's window reached the floor: the test does not exercise the keep-alive")
	}
	if late > 16*1080+3750 {
		t.Errorf("queue %.0f B after 1 ms, above one packet per flow plus a BDP", late)
	}
}

// Fig. 3.5's setting (Exp. 1 with every link at 1 ms, extract §1.3 E0d):
// the queue at s0->s1 starts 1 ms after the senders (one link delay plus a
// packet time, 8.64 µs); the senders see it in the INT of their ACKs five
// link delays later, at 6 ms (thesis: "a delay of 6 ms"); ±0.2 ms covers
// the serialisation of the data and ACKs on five links and the 20 µs sample
// grid. MPCC then converges: over the last 20 ms of 60 the queue is below
// 2 KB on average (it drains the ~2 MB the line-rate start built in 6 ms).
func TestMPCCExp1Delay1ms(t *testing.T) {
	c := &collector{}
	s, _, _ := libraryRun(t, "mpcc-exp1-1ms", "", nil, c)
	onset := func(ts, v []float64) float64 {
		for i := range v {
			if v[i] > 0 {
				return ts[i]
			}
		}
		return math.Inf(1)
	}
	ts, q := queueSeries(s, c, "s0->s1")
	ti, qi := series(s, c, "mpcc_q_int_bytes", "0")
	tp, qp := series(s, c, "mpcc_q_pred_bytes", "0")
	tq, ti0, tp0 := onset(ts, q), onset(ti, qi), onset(tp, qp)
	mean := meanFrom(ts, q, 40e-3)
	// the model's prediction against the INT view, as forecasts of the true
	// queue, over the transient (6–30 ms, while the start's 2 MB drains)
	at := map[float64]float64{}
	for i := range ts {
		at[math.Round(ts[i]*1e6)] = q[i]
	}
	var errP, errI float64
	n := 0
	for i := range tp {
		if tp[i] < 6e-3 || tp[i] > 30e-3 {
			continue
		}
		if v, ok := at[math.Round(tp[i]*1e6)]; ok {
			errP += math.Abs(qp[i] - v)
			errI += math.Abs(qi[i] - v)
			n++
		}
	}
	errP, errI = errP/float64(n), errI/float64(n)
	t.Logf("queue at s0->s1 from %.3f ms; seen in INT from %.3f ms; predicted from %.3f ms; last-20-ms mean queue %.0f B; mean error over 6–30 ms: prediction %.0f B, INT %.0f B",
		tq*1e3, ti0*1e3, tp0*1e3, mean, errP, errI)
	// the predictor adds what is in flight to a view five link delays old:
	// it must be the clearly better forecast (measured: 0.61 of the error)
	if n < 100 || errP > 0.8*errI {
		t.Errorf("prediction error %.0f B against the INT view's %.0f B over %d samples: the model does not see ahead", errP, errI, n)
	}
	if tq < 1e-3 || tq > 1.05e-3 {
		t.Errorf("the queue starts at %.3f ms, want 1 ms + a packet time", tq*1e3)
	}
	if ti0 < 5.8e-3 || ti0 > 6.2e-3 {
		t.Errorf("the senders see the queue at %.3f ms, want 6 ms ± 0.2", ti0*1e3)
	}
	if mean >= 2000 {
		t.Errorf("mean queue %.0f B over the last 20 ms, want < 2 KB", mean)
	}
}

// A scripted wall clock (Config.WallClock) makes MPCC runs byte-for-byte reproducible, solve times
// included: two runs give the same samples, and every solve took exactly
// the clock's step.
func TestMPCCReproducibleWithScriptedClock(t *testing.T) {
	runOnce := func() (*sim.Sim, []sim.Sample, *sim.Result) {
		cfg := libraryConfig(t, "mpcc-exp1", "", "duration=1ms")
		var clock int64
		cfg.WallClock = func() int64 { clock += 100; return clock }
		c := &collector{}
		s, r := run(t, cfg, c)
		return s, c.s, r
	}
	s, a, r := runOnce()
	_, b, _ := runOnce()
	if len(a) != len(b) {
		t.Fatalf("%d vs %d samples", len(a), len(b))
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("sample %d differs: %+v vs %+v", i, a[i], b[i])
		}
	}
	m, _ := s.MetricID("qp_solve_ns")
	n := 0
	for _, x := range a {
		if x.Metric == m {
			n++
			if x.Value != 100 {
				t.Fatalf("solve time %g with a clock of 100 ns per read", x.Value)
			}
		}
	}
	if st := r.SeriesStats[0]; n == 0 || st.Count != int64(n) || st.P99 != 100 {
		t.Fatalf("%d solve samples, stats %+v", n, st)
	}
}

// phases splits a run at every flow start and finish.
func phases(r *sim.Result) []float64 {
	var at []float64
	for _, f := range r.Flows {
		at = append(at, float64(f.Start)/1e12)
		if f.Finished {
			at = append(at, float64(f.Finish)/1e12)
		}
	}
	sort.Float64s(at)
	return at
}

// jainOver is Jain's index of the flows' delivered bytes between from and to
// (from throughput samples), over the flows active the whole time.
func jainOver(s *sim.Sim, c *collector, r *sim.Result, from, to float64) (float64, int) {
	var sum, sq float64
	n := 0
	for _, f := range r.Flows {
		start, end := float64(f.Start)/1e12, math.Inf(1)
		if f.Finished {
			end = float64(f.Finish) / 1e12
		}
		if start > from || end < to {
			continue
		}
		ts, v := series(s, c, "throughput_bps", fmt.Sprint(f.ID))
		x := 0.0
		for i := range ts {
			if ts[i] > from && ts[i] <= to {
				x += v[i]
			}
		}
		sum += x
		sq += x * x
		n++
	}
	if n < 2 {
		return 1, n
	}
	return sum * sum / (float64(n) * sq), n
}

// Exp. 2 (thesis §5.3, flow sizes in MB so that it runs in about a second):
// after each join MPCC's queue peaks and falls back below 2 KB within 2 ms,
// and throughput re-converges to the new fair share: Jain ≥ 0.95 over the
// second half of every phase (between consecutive joins and finishes) with
// two flows or more. HPCC runs beside it and is reported (the thesis' HPCC
// parks (N−1)·4344 B because its INT decodes 1 Gbps as 25 Gbps, extract
// §4.2; the engine's INT carries the true rate, so ours need not).
func TestMPCCExp2(t *testing.T) {
	if testing.Short() {
		t.Skip("two 72 ms runs at 10 µs telemetry")
	}
	for _, algo := range []string{"mpcc", "hpcc"} {
		c := &collector{}
		s, r, _ := libraryRun(t, "mpcc-exp2", algo, nil, c)
		if n := r.FlowsFinished(); n != 4 {
			t.Fatalf("%s: %d of 4 flows finished", algo, n)
		}
		ts, q := queueSeries(s, c, "s0->s1")
		var lines []string
		for _, join := range []float64{0.010, 0.020, 0.030} {
			peak, peakAt := 0.0, join
			for i := range ts {
				if ts[i] >= join && ts[i] <= join+2e-3 && q[i] > peak {
					peak, peakAt = q[i], ts[i]
				}
			}
			back := math.Inf(1)
			for i := range ts {
				if ts[i] >= peakAt && q[i] < 2000 {
					back = ts[i] - join
					break
				}
			}
			lines = append(lines, fmt.Sprintf("join at %.0f ms: peak %.0f B, below 2 KB after %.0f µs", join*1e3, peak, back*1e6))
			if algo == "mpcc" && back > 2e-3 {
				t.Errorf("mpcc: after the join at %.0f ms the queue is not below 2 KB within 2 ms (%.0f µs)", join*1e3, back*1e6)
			}
		}
		at := phases(r)
		for i := 0; i+1 < len(at); i++ {
			a, b := at[i], at[i+1]
			if b-a < 1e-3 {
				continue
			}
			j, n := jainOver(s, c, r, (a+b)/2, b)
			if n < 2 {
				continue
			}
			mq := 0.0
			k := 0
			for x := range ts {
				if ts[x] >= (a+b)/2 && ts[x] < b {
					mq += q[x]
					k++
				}
			}
			lines = append(lines, fmt.Sprintf("phase %.1f–%.1f ms, %d flows: Jain %.4f, mean queue %.0f B", a*1e3, b*1e3, n, j, mq/float64(k)))
			if algo == "mpcc" && j < 0.95 {
				t.Errorf("mpcc: Jain %.4f over the second half of %.1f–%.1f ms, want ≥ 0.95", j, a*1e3, b*1e3)
			}
		}
		// the ideal: the link's payload rate (1 Gbps × 1000/1080) shared
		// equally by the active flows
		ideal := sharedFinish(r, 1e9/8*1000/1080)
		var fin []string
		for i, f := range r.Flows {
			got := float64(f.Finish) / 1e12
			fin = append(fin, fmt.Sprintf("%.1f (ideal %.1f)", got*1e3, ideal[i]*1e3))
			// 1%: each join costs one line-rate start and its ~150 µs drain,
			// and ACK clocking moves a flow's end by up to a packet per flow
			if algo == "mpcc" && math.Abs(got-ideal[i]) > 0.01*ideal[i] {
				t.Errorf("mpcc: flow %d finishes at %.2f ms, ideal sharing %.2f ms (±1%%)", i, got*1e3, ideal[i]*1e3)
			}
		}
		t.Logf("%s: flows finish at %s ms\n  %s", algo, strings.Join(fin, ", "), strings.Join(lines, "\n  "))
	}
	// the thesis' rule (keep the window when every queue is empty) leaves
	// bandwidth unused once a flow has left: reported
	_, r, _ := libraryRun(t, "mpcc-exp2", "", []string{"cc.params.growOnEmpty=false"})
	var fin []string
	for _, f := range r.Flows {
		fin = append(fin, fmt.Sprintf("%.1f", float64(f.Finish)/1e9))
	}
	t.Logf("mpcc with growOnEmpty=false (the thesis' keep rule alone): flows finish at %s ms", strings.Join(fin, ", "))
}

// sharedFinish is every flow's finish time (s) if a link of rate bytes/s
// were shared equally by the flows active at each moment.
func sharedFinish(r *sim.Result, rate float64) []float64 {
	n := len(r.Flows)
	left := make([]float64, n)
	start := make([]float64, n)
	done := make([]float64, n)
	for i, f := range r.Flows {
		left[i], start[i], done[i] = float64(f.Size), float64(f.Start)/1e12, -1
	}
	now := 0.0
	for {
		var act []int
		next := math.Inf(1)
		for i := range left {
			switch {
			case done[i] >= 0:
			case start[i] <= now:
				act = append(act, i)
			default:
				next = math.Min(next, start[i])
			}
		}
		if len(act) == 0 {
			if math.IsInf(next, 1) {
				return done
			}
			now = next
			continue
		}
		share := rate / float64(len(act))
		first := -1
		for _, i := range act {
			if first < 0 || left[i] < left[first] {
				first = i
			}
		}
		dt := math.Min(left[first]/share, next-now)
		for _, i := range act {
			left[i] -= share * dt
		}
		now += dt
		if left[first] <= 1e-6 {
			done[first] = now
		}
	}
}

// Exp. 3 (thesis §5.4): the 16-host fat-tree with WebSearch and FB_Hadoop
// at 30% and 60%, with and without the 8-to-1 incast, for MPCC, HPCC, DCQCN,
// TIMELY and DCTCP. Asserted: MPCC's p99 queue over all switch ports is
// below DCQCN's and TIMELY's in every scenario (the thesis' C4 restricted to
// the two schemes it beats most clearly), and below half a BDP. The queue percentiles and the FCT
// slowdowns by size are logged for the closing note.
func TestMPCCExp3(t *testing.T) {
	if testing.Short() {
		t.Skip("forty fat-tree runs")
	}
	algos := []string{"mpcc", "hpcc", "dcqcn", "timely", "dctcp"}
	for _, cdf := range []string{"websearch", "fbhadoop"} {
		for _, load := range []string{"30", "60"} {
			for _, incast := range []string{"", "-incast"} {
				name := "mpcc-exp3-" + cdf + load + incast
				p99 := map[string]int64{}
				rows := []string{name + " (switch queue p50/p99/p99.9 in B; FCT slowdown p50/p99 for <10K, 10-100K, 100K-1M, 1-10M, ≥10M)"}
				for _, algo := range algos {
					_, r, _ := libraryRun(t, name, algo, nil)
					sum := report.Summarize(r, nil, 0)
					if sum.FlowsUnfinished != 0 {
						t.Errorf("%s %s: %d flows unfinished", name, algo, sum.FlowsUnfinished)
					}
					q := r.SwitchQueues
					p99[algo] = q.P99
					row := fmt.Sprintf("%-6s %6d %7d %8d |", algo, q.P50, q.P99, q.P999)
					for _, b := range sum.FCTSlowdownBySize {
						if b.Count == 0 {
							row += "      -      |"
							continue
						}
						row += fmt.Sprintf(" %5.2f %6.2f |", *b.P50, *b.P99)
					}
					rows = append(rows, row)
				}
				t.Log(strings.Join(rows, "\n  "))
				for _, other := range []string{"dcqcn", "timely"} {
					if p99["mpcc"] >= p99[other] {
						t.Errorf("%s: MPCC's p99 switch queue %d B is not below %s's %d B", name, p99["mpcc"], other, p99[other])
					}
				}
				// and on its own terms: the controller drives queues to
				// zero, so its 99th percentile stays within half the
				// longest path's BDP (153 KB)
				if p99["mpcc"] > 76_500 {
					t.Errorf("%s: MPCC's p99 switch queue %d B exceeds half a BDP", name, p99["mpcc"])
				}
			}
		}
	}
}
