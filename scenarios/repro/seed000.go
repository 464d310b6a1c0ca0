package repro

import (
	"fmt"
	"math"
	"strings"
)

// Seed 000, the MPCC thesis. The numbers are those its extract collects
// (shared/spec/seeds/000-mpcc.md §3.6); the library scenarios say which
// reading of the thesis each one takes.

// mpccPkt is one data packet on the wire under MPCC: 1000 B of payload,
// the 36 B data header and 32 B of INT; at 1 Gbps it takes 8.5 µs.
const mpccPkt = 1068.0

func mpccExperiments() []*Experiment {
	return []*Experiment{mpccE0d(), mpccExp1(), mpccHorizon(), mpccExp2(), mpccExp3()}
}

func mpccE0d() *Experiment {
	return &Experiment{
		Seed:  "000",
		ID:    "mpcc-fig3.5",
		Title: "Fig. 3.5 (§3.3, E0d): the delayed model, 1 ms links",
		Claim: "With every link at 1 ms, the queue at switch 1 starts 1 ms after the senders start, and the senders " +
			"see it in their ACKs' INT after 6 ms (one link to the switch, five more back to the sender).",
		Reading: "mpcc-exp1-1ms: Exp. 1's dumbbell with 1 ms links. The quick set simulates 8 ms instead of 60.",
		Quick:   true,
		Runs: func() []Run {
			return []Run{{Key: "mpcc", Scenario: "mpcc-exp1-1ms", Series: []string{"queue_bytes@s0->s1", "mpcc_q_int_bytes@0", "mpcc_q_pred_bytes@0"}}}
		},
		QuickRuns: func() []Run {
			return []Run{{Key: "mpcc", Scenario: "mpcc-exp1-1ms", Sets: []string{"duration=8ms"},
				Series: []string{"queue_bytes@s0->s1", "mpcc_q_int_bytes@0", "mpcc_q_pred_bytes@0"}}}
		},
		Rows: func(o Outcomes) []Row {
			r := newRows("mpcc-fig3.5")
			x := o["mpcc"]
			q := onset(x.Series("queue_bytes", "s0->s1"))
			seen := onset(x.Series("mpcc_q_int_bytes", "0"))
			r.within("Fig. 3.5, queue onset at switch 1", 1, q*1e3, "ms", 0.05,
				"± 50 µs: a packet time (8.6 µs) and the scenario's 20 µs sample grid")
			r.within("Fig. 3.5, sender observes the switch-1 queue", 6, seen*1e3, "ms", 0.2,
				"± 0.2 ms: the serialisation of data and ACKs on five links and the 20 µs sample grid")
			return r.out
		},
		Figures: func(o Outcomes) []Figure {
			x := o["mpcc"]
			if x == nil {
				return nil
			}
			f := Figure{Name: "mpcc-fig3.5-queue", Title: "Fig. 3.5: queue at switch 1, its INT view and MPCC's prediction",
				XLabel: "time (ms)", YLabel: "queue (bytes)"}
			for _, s := range []struct{ name, metric, ent string }{
				{"queue at s0->s1", "queue_bytes", "s0->s1"}, {"INT view (flow 0)", "mpcc_q_int_bytes", "0"},
				{"prediction (flow 0)", "mpcc_q_pred_bytes", "0"}} {
				xs, ys := window(x.Series(s.metric, s.ent), 0, 1, 1e3)
				f.Lines = append(f.Lines, Line{Name: s.name, X: xs, Y: ys})
			}
			return []Figure{f}
		},
	}
}

var mpccWeights = []struct{ wr, label string }{{"1", "1:1"}, {"10", "1:10"}, {"100", "1:100"}}

func mpccExp1() *Experiment {
	return &Experiment{
		Seed:  "000",
		ID:    "mpcc-exp1",
		Title: "Exp. 1 (§5.2, Fig. 5.2): queue convergence under W_Q:W_R",
		Claim: "Four synchronised flows start at line rate into one 1 Gbps link. MPCC drives the queue to zero rapidly " +
			"(140.3 / 149.1 / 175.5 µs at W_Q:W_R = 1:1 / 1:10 / 1:100: a larger W_R converges later) while every flow " +
			"keeps a normalised throughput of 0.2464.",
		Reading: "mpcc-exp1 reads the thesis' \"maxBDP = 30000 bytes\" as 30 µs × 1 Gbps = 3750 B (HPCC's formula), so the fair " +
			"window (937.5 B) is below one packet; mpcc-exp1-literal keeps 30000 B. Convergence is the first sample after the " +
			"queue's peak below one packet (1068 B). Throughput is payload bits over the second half, normalised to 1 Gbps.",
		Quick: true,
		Runs: func() []Run {
			var out []Run
			for _, w := range mpccWeights {
				out = append(out, Run{Key: "wr=" + w.wr, Scenario: "mpcc-exp1", Sets: []string{"cc.params.wr=" + w.wr},
					Series: []string{"queue_bytes@s0->s1", "throughput_bps"}})
			}
			return out
		},
		Rows: func(o Outcomes) []Row {
			r := newRows("mpcc-exp1")
			paper := []float64{140.334, 149.133, 175.530}
			var conv []float64
			for i, w := range mpccWeights {
				x := o["wr="+w.wr]
				c := convergence(x.Series("queue_bytes", "s0->s1"), mpccPkt) * 1e6
				conv = append(conv, c)
				row := r.within(fmt.Sprintf("§5.2.1, W_Q:W_R = %s, queue convergence time", w.label), paper[i], c, "µs", 8.544,
					"± one packet time at 1 Gbps (8.5 µs): the NIC's window lets whole packets out")
				if row.Verdict != Reproduced {
					row.Note = "Every window the controller picks is below the one packet each flow still has in flight while the " +
						"start's burst drains (the fair window is 937.5 B), so no weight lets a packet out earlier: all ratios converge " +
						"together. Under the literal 30000 B reading the ordering appears, but not these times (mpcc-exp1-literal)."
				}
			}
			r.claim("§5.2.1, a larger W_R converges later (1:1 < 1:10 < 1:100)", "140.3 < 149.1 < 175.5 µs",
				fmt.Sprintf("%.1f / %.1f / %.1f µs", conv[0], conv[1], conv[2]), conv[0] < conv[1] && conv[1] < conv[2],
				"strict ordering").Note = "The weights change the windows, not the packets the NIC sends (see the times above)."
			var thr []float64
			for f := 0; f < 4; f++ {
				thr = append(thr, meanOver(o["wr=1"].Series("throughput_bps", fmt.Sprint(f)), 2.5e-3, math.Inf(1))/1e9)
			}
			row := r.within("§5.2.1, normalised throughput per flow (1:1)", 0.2464, meanOf(thr), "", 0.004,
				"± 0.004: one packet per flow in a 2 ms bin")
			if row.Verdict != Reproduced {
				row.Note = fmt.Sprintf("Ours is payload over the line rate; 1000 B of payload ride in 1068 B frames, so a full link "+
					"gives at most %.4f per flow. The thesis' 0.9856 in total suggests it counts more than the payload.", 0.25*1000/mpccPkt)
			}
			last := meanOver(o["wr=1"].Series("queue_bytes", "s0->s1"), 3.75e-3, math.Inf(1))
			r.claim("Fig. 5.2, the queue at switch 1 converges to zero (1:1, last quarter)", "≈ 0",
				fmt.Sprintf("mean %.0f B", last), last < 2000, "mean below 2 KB (under two packets) over the last 1.25 ms")
			return r.out
		},
		Figures: func(o Outcomes) []Figure {
			f := Figure{Name: "mpcc-exp1-queue", Title: "Exp. 1: queue at switch 1 by W_Q:W_R",
				XLabel: "time (µs)", YLabel: "queue (bytes)"}
			for _, w := range mpccWeights {
				if x := o["wr="+w.wr]; x != nil {
					xs, ys := window(x.Series("queue_bytes", "s0->s1"), 0, 400e-6, 1e6)
					f.Lines = append(f.Lines, Line{Name: w.label, X: xs, Y: ys})
				}
			}
			return []Figure{f}
		},
	}
}

var mpccHorizons = []struct {
	p     string
	paper float64 // ns
}{{"3", 255952}, {"5", 343525}, {"10", 469736}, {"20", 916831}}

func mpccHorizon() *Experiment {
	return &Experiment{
		Seed:  "000",
		ID:    "mpcc-horizon",
		Title: "Exp. 1 (§5.2.2): prediction horizon P at W_Q:W_R = 1:10",
		Claim: "The average QP solve time grows with the horizon (255,952 / 343,525 / 469,736 / 916,831 ns at P = 3 / 5 / 10 / 20), " +
			"and the convergence time does not change.",
		Reading: "Solve times are wall-clock times of our Go solver on this machine; the thesis' are qpOASES inside ns-3 on " +
			"unstated hardware, so only their trend compares.",
		Runs: func() []Run {
			var out []Run
			for _, h := range mpccHorizons {
				out = append(out, Run{Key: "p=" + h.p, Scenario: "mpcc-exp1", Sets: []string{"cc.params.wr=10", "cc.params.horizon=" + h.p},
					Series: []string{"queue_bytes@s0->s1"}})
			}
			return out
		},
		Rows: func(o Outcomes) []Row {
			r := newRows("mpcc-horizon")
			var conv, solve []float64
			for _, h := range mpccHorizons {
				x := o["p="+h.p]
				mean := math.NaN()
				if st, ok := x.Summary.SeriesStats["qp_solve_ns"]; ok && st.Mean != nil {
					mean = *st.Mean
				}
				solve = append(solve, mean)
				conv = append(conv, convergence(x.Series("queue_bytes", "s0->s1"), mpccPkt)*1e6)
				r.measured("§5.2.2, P = "+h.p+", average QP solve time", h.paper, mean, "ns",
					"not comparable: another solver on another machine")
			}
			grows := solve[0] < solve[1] && solve[1] < solve[2] && solve[2] < solve[3]
			row := r.claim("§5.2.2, QP solve time grows with P", "255,952 < 343,525 < 469,736 < 916,831 ns",
				fmt.Sprintf("%.0f / %.0f / %.0f / %.0f ns", solve[0], solve[1], solve[2], solve[3]), grows, "strictly increasing")
			row.WallClock = true
			same := conv[0] == conv[1] && conv[1] == conv[2] && conv[2] == conv[3]
			r.claim("§5.2.2, convergence time does not change with P", "consistent across P",
				fmt.Sprintf("%.1f / %.1f / %.1f / %.1f µs", conv[0], conv[1], conv[2], conv[3]), same, "equal at every P")
			return r.out
		},
	}
}

func mpccExp2() *Experiment {
	return &Experiment{
		Seed:  "000",
		ID:    "mpcc-exp2",
		Title: "Exp. 2 (§5.3, Figs. 5.3–5.4): flows joining and leaving",
		Claim: "Four flows join 10 ms apart. HPCC's queue at switch 1 is \"always long and occupied\" at (N − 1) × 4344 B; " +
			"MPCC's peaks after each join and is driven back to zero while the flows converge to their fair share.",
		Reading: "mpcc-exp2 reads the flow sizes 4.9 / 2.4 / 1.4 / 0.3 GB as MB, so that the run takes 72 ms (the joins 10 ms " +
			"apart fit a plot only then). HPCC's standing queue is its mean over the second half of each phase with N flows.",
		Quick: true,
		Runs: func() []Run {
			return []Run{
				{Key: "mpcc", Scenario: "mpcc-exp2", Algo: "mpcc", Series: []string{"queue_bytes@s0->s1", "throughput_bps"}},
				{Key: "hpcc", Scenario: "mpcc-exp2", Algo: "hpcc", Series: []string{"queue_bytes@s0->s1"}},
			}
		},
		Rows: func(o Outcomes) []Row {
			r := newRows("mpcc-exp2")
			hq := o["hpcc"].Series("queue_bytes", "s0->s1")
			// phases with N = 2, 3, 4 flows: [10, 20), [20, 30), [30, the first finish)
			ends := []float64{0.020, 0.030, firstFinish(o["hpcc"])}
			for i, n := range []int{2, 3, 4} {
				from := 0.010 * float64(n-1)
				m := meanOver(hq, (from+ends[i])/2, ends[i])
				row := r.within(fmt.Sprintf("Fig. 5.4(b), HPCC queue at switch 1, N = %d", n), float64(n-1)*4344, m, "B", mpccPkt,
					"± one packet (1068 B)")
				if row.Verdict != Reproduced {
					row.Note = "The thesis' HPCC decodes the INT's 1 Gbps as 25 Gbps (extract §4.2), which leaves it a standing queue; " +
						"our INT carries the true rate, so HPCC holds the queue near its η target instead."
				}
			}
			mq := o["mpcc"].Series("queue_bytes", "s0->s1")
			var back []string
			ok := true
			for _, join := range []float64{0.010, 0.020, 0.030} {
				peak, peakAt := 0.0, join
				for i, t := range mq.T {
					if t >= join && t <= join+2e-3 && mq.V[i] > peak {
						peak, peakAt = mq.V[i], t
					}
				}
				b := math.Inf(1)
				for i, t := range mq.T {
					if t >= peakAt && mq.V[i] < 2000 {
						b = t - join
						break
					}
				}
				ok = ok && b <= 2e-3
				back = append(back, us(b))
			}
			r.claim("Fig. 5.4(a), MPCC's queue is driven back to zero after each join", "peaks, then quickly reduced to zero",
				"below 2 KB after "+strings.Join(back, ", "), ok, "below 2 KB within 2 ms of every join")
			var js []string
			fair := true
			first := firstFinish(o["mpcc"])
			for _, ph := range [][2]float64{{0.015, 0.020}, {0.025, 0.030}, {(0.030 + first) / 2, first}} {
				var xs []float64
				for f := 0; f < 4; f++ {
					v := meanOver(o["mpcc"].Series("throughput_bps", fmt.Sprint(f)), ph[0], ph[1])
					if v > 0 {
						xs = append(xs, v)
					}
				}
				j := jain(xs)
				fair = fair && j >= 0.95
				js = append(js, fmt.Sprintf("%.3f", j))
			}
			r.claim("Fig. 5.3(a), MPCC's flows converge to the fair share after each join", "stable fair share",
				"Jain "+strings.Join(js, ", "), fair, "Jain ≥ 0.95 over the second half of each phase with 2, 3, 4 flows")
			return r.out
		},
		Figures: func(o Outcomes) []Figure {
			f := Figure{Name: "mpcc-exp2-queue", Title: "Exp. 2: queue at switch 1, MPCC and HPCC",
				XLabel: "time (ms)", YLabel: "queue (bytes)"}
			for _, k := range []string{"mpcc", "hpcc"} {
				if x := o[k]; x != nil {
					xs, ys := window(x.Series("queue_bytes", "s0->s1"), 0, 1, 1e3)
					f.Lines = append(f.Lines, Line{Name: strings.ToUpper(k), X: xs, Y: ys})
				}
			}
			return []Figure{f}
		},
	}
}

// firstFinish is the time (s) the first flow finished.
func firstFinish(x *Outcome) float64 {
	first := math.Inf(1)
	for _, f := range x.Flows {
		if f.Finished {
			first = math.Min(first, float64(f.Finish)/1e12)
		}
	}
	return first
}

var exp3Algos = []string{"mpcc", "hpcc", "dcqcn", "timely", "dctcp"}

type exp3Panel struct{ scenario, queueFig, fctFig string }

var exp3Panels = []exp3Panel{
	{"mpcc-exp3-websearch30", "5.6(a)", "5.7(a)"}, {"mpcc-exp3-websearch60", "5.6(b)", "5.7(b)"},
	{"mpcc-exp3-websearch30-incast", "5.6(c)", "5.7(c)"}, {"mpcc-exp3-websearch60-incast", "5.6(d)", "5.7(d)"},
	{"mpcc-exp3-fbhadoop30", "5.8(a)", "5.9(a)"}, {"mpcc-exp3-fbhadoop60", "5.8(b)", "5.9(b)"},
	{"mpcc-exp3-fbhadoop30-incast", "5.8(c)", "5.9(c)"}, {"mpcc-exp3-fbhadoop60-incast", "5.8(d)", "5.9(d)"},
}

func mpccExp3() *Experiment {
	return &Experiment{
		Seed:  "000",
		ID:    "mpcc-exp3",
		Title: "Exp. 3 (§5.4, Figs. 5.6–5.9): the 16-host fat-tree",
		Claim: "On WebSearch and FB_Hadoop at 30% and 60% load, with and without an 8-to-1 incast, MPCC \"consistently maintains the " +
			"minimum queue length\" over all switches (C4) and \"always achieves less FCT slow down than TIMELY and DCQCN\" (C1).",
		Reading: "The thesis gives no numbers here, only figures: its claims are checked as orderings. The queue is the time-weighted " +
			"p99 over every switch egress port; \"FCT slow down\" is read as the mean slowdown over all flows.",
		Runs: func() []Run {
			var out []Run
			for _, p := range exp3Panels {
				for _, a := range exp3Algos {
					out = append(out, Run{Key: p.scenario + "/" + a, Scenario: p.scenario, Algo: a})
				}
			}
			return out
		},
		Rows: func(o Outcomes) []Row {
			r := newRows("mpcc-exp3")
			for _, p := range exp3Panels {
				q := map[string]int64{}
				fct := map[string]float64{}
				var qs, fs []string
				for _, a := range exp3Algos {
					s := o[p.scenario+"/"+a].Summary
					q[a] = s.SwitchQueues.P99
					fct[a] = math.NaN()
					if s.FCTSlowdown != nil {
						fct[a] = s.FCTSlowdown.Mean
					}
					qs = append(qs, fmt.Sprintf("%s %.1f KB", a, float64(q[a])/1e3))
					fs = append(fs, fmt.Sprintf("%s %.2f", a, fct[a]))
				}
				least := true
				for _, a := range exp3Algos[1:] {
					least = least && q["mpcc"] <= q[a]
				}
				row := r.claim("Fig. "+p.queueFig+", "+p.scenario+", MPCC has the minimum switch queue (p99)", "minimum of the five",
					strings.Join(qs, ", "), least, "MPCC's p99 at most every other scheme's")
				if !least {
					row.Note = "HPCC holds the queues near-empty at light load here: our HPCC is the reference simulator's, whose INT " +
						"carries the true link rate; the thesis' HPCC read 1 Gbps as 25 Gbps (see Exp. 2) and kept standing queues."
				}
				below := fct["mpcc"] < fct["dcqcn"] && fct["mpcc"] < fct["timely"]
				row = r.claim("Fig. "+p.fctFig+", "+p.scenario+", MPCC's FCT slowdown below DCQCN's and TIMELY's", "below both",
					strings.Join(fs, ", "), below, "mean slowdown strictly below both")
				if !below {
					row.Note = "Read as the mean slowdown over all flows; the thesis' statistic and size bins are not given."
				}
			}
			return r.out
		},
		Figures: func(o Outcomes) []Figure {
			f := Figure{Name: "mpcc-exp3-queue-p99", Title: "Exp. 3: p99 switch queue by scenario",
				YLabel: "p99 queue (KB)", Bars: true, LogY: true}
			for _, p := range exp3Panels {
				f.Labels = append(f.Labels, strings.TrimPrefix(p.scenario, "mpcc-exp3-"))
			}
			for _, a := range exp3Algos {
				l := Line{Name: a}
				for i, p := range exp3Panels {
					if x := o[p.scenario+"/"+a]; x != nil {
						l.X = append(l.X, float64(i))
						l.Y = append(l.Y, float64(x.Summary.SwitchQueues.P99)/1e3)
					}
				}
				f.Lines = append(f.Lines, l)
			}
			return []Figure{f}
		},
	}
}
