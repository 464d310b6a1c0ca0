package repro

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"cclab/cc/fdcc"
	"cclab/sim"
)

// Seed 001, FDCC (K. Zhang, MSc thesis, U. Alberta 2023): Tables 6.1 and
// 6.2 and the claims of Figs. 6.1–6.5. The numbers are those of its extract
// (shared/spec/seeds/001-fdcc.md §3.5); the figures have none, so their
// claims are checked as claims.

func fdccExperiments() []*Experiment {
	return []*Experiment{fdccTable62(), fdccTable61(), fdccLongShort(), fdccJoin(), fdccMixBurst()}
}

// fdccAlgos are FDCC (the library scenarios' own algorithm) and the
// thesis' four baselines, in the thesis' table order after FDCC.
var fdccAlgos = []string{"fdcc", "dcqcn", "timely", "hpcc", "rlcc"}

// fdccBaselines are the algorithms FDCC is compared with.
var fdccBaselines = fdccAlgos[1:]

// fdccSets gives every algorithm the host in-flight window of about one
// BDP the thesis runs them all with (L538): DCQCN and TIMELY through
// run.py's window variants, HPCC its own window, FDCC and RL-CC their
// maxWindow of one BDP (their default).
func fdccSets(algo string) []string {
	switch algo {
	case "dcqcn":
		return []string{`cc={"algorithm":"dcqcn","preset":"dcqcn_vwin"}`}
	case "timely":
		return []string{`cc={"algorithm":"timely","preset":"timely_vwin"}`}
	case "fdcc":
		return nil
	}
	return []string{`cc={"algorithm":"` + algo + `"}`}
}

// shipsPolicy says whether the lab ships a trained policy for a learned
// algorithm (without one, its flows keep their line rate and window).
func shipsPolicy(algo string) bool {
	_, _, err := fdcc.Shipped(algo)
	return err == nil
}

// rlccNote explains RL-CC's rows if no RL-CC policy ships (one does:
// cc/fdcc/shipped/rlcc.safetensors, trained by ADPG; the note returns if
// it is removed).
func rlccNote(algo string) string {
	if algo != "rlcc" || shipsPolicy("rlcc") {
		return ""
	}
	return "No RL-CC policy ships (cc/fdcc/shipped/README.md): without one, rlcc keeps every flow at line rate with its " +
		"one-BDP window, so this row is that of a fixed window, not of a trained RL-CC."
}

// fdccPolicyReading is what every experiment's Reading says of FDCC's
// policy (one place to change when another policy ships).
const fdccPolicyReading = "FDCC decides with the policy the lab ships (`cclab train fdcc` at its defaults, " +
	"cc/fdcc/shipped/README.md): trained on 2 MB dumbbell incasts of 2 to 32 flows with Algorithm 1's probing reward counted " +
	"in fair shares (fdcc's shareReward; in the thesis' literal link-rate units a starved flow scores nearly what a fair one " +
	"does and training learns to starve flows) and windows floored to whole bytes (floorPackets off). RL-CC decides with " +
	"the policy the lab ships for it, trained by the paper's own ADPG (`cclab train rlcc`, same README)."

// goodputNote explains a goodput below the thesis' for the algorithms
// whose INT bytes (and, for HPCC, target utilisation) cap it.
func goodputNote(algo string) string {
	switch algo {
	case "fdcc":
		return "FDCC's 52 B of INT per packet (HPCC's 42 and a 2-byte flow number a hop) cap its goodput at 1000/1088 = 0.919."
	case "hpcc":
		return "HPCC's 42 B of INT per packet and its 95% target utilisation cap its goodput at 0.95 × 1000/1078 = 0.881."
	}
	return ""
}

// fdccKey names a run: "n=16/dcqcn".
func fdccKey(n int, algo string) string { return fmt.Sprintf("n=%d/%s", n, algo) }

// ---- metrics (§3.4) ----

// queueStats is the time average and the 99th percentile (nearest rank)
// of a queue's periodic samples, in bytes.
func queueStats(s Series) (avg, p99 float64) {
	v := append([]float64(nil), s.V...)
	sort.Float64s(v)
	return meanOf(v), nearestRank(v, 0.99)
}

// slowdowns is every finished flow's FCT slowdown (FCT ÷ ideal FCT),
// sorted.
func slowdowns(flows []sim.FlowResult) []float64 {
	var out []float64
	for _, f := range flows {
		if f.Finished && f.IdealFCT > 0 {
			out = append(out, float64(f.FCT)/float64(f.IdealFCT))
		}
	}
	sort.Float64s(out)
	return out
}

// flowGoodputs is every finished flow's goodput, size ÷ FCT, in bytes
// per second.
func flowGoodputs(flows []sim.FlowResult) []float64 {
	var out []float64
	for _, f := range flows {
		if f.Finished && f.FCT > 0 {
			out = append(out, float64(f.Size)/(float64(f.FCT)/float64(sim.Second)))
		}
	}
	return out
}

// unfairRatio is the thesis' (BWmax − BWavg)/BWavg (L551) of the flows'
// bandwidths (NaN without any).
func unfairRatio(bw []float64) float64 {
	if len(bw) == 0 {
		return math.NaN()
	}
	mean, top := meanOf(bw), bw[0]
	for _, x := range bw {
		top = math.Max(top, x)
	}
	return (top - mean) / mean
}

// normalisedGoodput is the payload of every finished flow over the span
// from the first start to the last finish, ÷ the bottleneck's rate (bits
// per second); NaN when nothing finished.
func normalisedGoodput(flows []sim.FlowResult, rate float64) float64 {
	var bytes float64
	first, last := sim.Time(math.MaxInt64), sim.Time(0)
	for _, f := range flows {
		first = min(first, f.Start)
		if f.Finished {
			bytes += float64(f.Size)
			last = max(last, f.Finish)
		}
	}
	if last <= first {
		return math.NaN()
	}
	return bytes * 8 / (float64(last-first) / float64(sim.Second)) / rate
}

// finishedCount is how many flows finished, of how many.
func finishedCount(flows []sim.FlowResult) (fin, all int) {
	for _, f := range flows {
		if f.Finished {
			fin++
		}
	}
	return fin, len(flows)
}

// fairShareFCTs is each flow's completion time on a link of rate (bytes
// per second) shared equally by the flows present (processor sharing), for
// flows of sizes (bytes) starting at starts (seconds): the FCTs of a
// perfectly fair, work-conserving congestion control.
func fairShareFCTs(starts, sizes []float64, rate float64) []float64 {
	n := len(starts)
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return starts[order[a]] < starts[order[b]] })
	rem := append([]float64(nil), sizes...)
	fct := make([]float64, n)
	var active []int
	next, t := 0, 0.0
	for next < n || len(active) > 0 {
		if len(active) == 0 {
			t = starts[order[next]]
		}
		for next < n && starts[order[next]] <= t {
			active = append(active, order[next])
			next++
		}
		share := rate / float64(len(active))
		least := math.Inf(1)
		for _, i := range active {
			least = math.Min(least, rem[i])
		}
		done := t + least/share
		until := done
		if next < n && starts[order[next]] < done {
			until = starts[order[next]]
		}
		keep := active[:0]
		for _, i := range active {
			if until == done && rem[i] <= least*(1+1e-12) {
				fct[i] = until - starts[i]
				continue
			}
			rem[i] -= (until - t) * share
			keep = append(keep, i)
		}
		active, t = keep, until
	}
	return fct
}

// fairShareUnfair is the unfair ratio a perfectly fair link of rate
// (bits per second) would give these flows' size ÷ FCT: the part of the
// ratio that comes from their staggered starts alone.
func fairShareUnfair(flows []sim.FlowResult, rate float64) float64 {
	var starts, sizes []float64
	for _, f := range flows {
		starts = append(starts, float64(f.Start)/float64(sim.Second))
		sizes = append(sizes, float64(f.Size))
	}
	fct := fairShareFCTs(starts, sizes, rate/8)
	bw := make([]float64, len(fct))
	for i := range fct {
		bw[i] = sizes[i] / fct[i]
	}
	return unfairRatio(bw)
}

// overlapUnfair is the unfair ratio of the flows' mean goodput while all
// of them are active (from the last start to the first finish), from their
// throughput_bps samples; ok is false without a common interval or samples.
func overlapUnfair(o *Outcome) (ratio, from, to float64, ok bool) {
	from, to = 0, math.Inf(1)
	for _, f := range o.Flows {
		from = math.Max(from, float64(f.Start)/float64(sim.Second))
		if f.Finished {
			to = math.Min(to, float64(f.Finish)/float64(sim.Second))
		}
	}
	var bw []float64
	for _, f := range o.Flows {
		m := meanOver(o.Series("throughput_bps", fmt.Sprint(f.ID)), from, to)
		if math.IsNaN(m) {
			return 0, from, to, false
		}
		bw = append(bw, m)
	}
	return unfairRatio(bw), from, to, to > from && len(bw) > 0
}

// incastPause is the share of the run an incast flow's path is paused by
// PFC, as the ports show it (the thesis measures pause time ÷ FCT per flow;
// our incast flows span most of the run): the mean pause fraction of the
// links from switches into the receiver's switch sw (a flow crosses one of
// them, chosen by ECMP) plus that of the senders' NIC ports. The two are
// where back-pressure from the receiver's port lands: on the fat-tree the
// aggregation switches' links into the receiver's access switch first.
func incastPause(o *Outcome, sw string) float64 {
	src := map[string]bool{}
	for _, f := range o.Flows {
		src[f.Src] = true
	}
	var into, nics []float64
	for port, v := range o.Summary.PFCPauseFraction {
		from, to, ok := strings.Cut(port, "->")
		switch {
		case !ok:
		case src[from]:
			nics = append(nics, v)
		case to == sw && !isHost(o, from):
			into = append(into, v)
		}
	}
	var p float64
	for _, v := range [][]float64{into, nics} {
		if len(v) > 0 {
			p += meanOf(v)
		}
	}
	return p
}

// isHost says whether a node is one of the run's flow endpoints or named
// like a host (h0.., r0..).
func isHost(o *Outcome, node string) bool {
	for _, f := range o.Flows {
		if f.Src == node || f.Dst == node {
			return true
		}
	}
	return len(node) > 1 && (node[0] == 'h' || node[0] == 'r') && node[1] >= '0' && node[1] <= '9'
}

// incast is Table 6.2's columns for one run, and its flow counts.
type incast struct {
	qAvg, q99, qMax, sdAvg, sd99, unfair, goodput float64
	finished, flows                               int
}

// incastOf evaluates an incast run whose bottleneck is port (100 Gbps).
func incastOf(o *Outcome, port string) incast {
	var m incast
	m.qAvg, m.q99 = queueStats(o.Series("queue_bytes", port))
	m.qMax = float64(o.Summary.Queues[port].Max)
	sd := slowdowns(o.Flows)
	m.sdAvg, m.sd99 = meanOf(sd), nearestRank(sd, 0.99)
	m.unfair = unfairRatio(flowGoodputs(o.Flows))
	m.goodput = normalisedGoodput(o.Flows, 100e9)
	m.finished, m.flows = finishedCount(o.Flows)
	return m
}

// fdccPayloadRate is the payload a 100 Gbps link carries in 1000 B
// packets with the 36 B data header (no INT), bits per second.
const fdccPayloadRate = 100e9 * 1000 / 1036

// ---- Table 6.2 ----

type table62Row struct{ qAvg, q99, sdAvg, sd99, unfair, goodput float64 }

// fdccTable62N are the thesis' fan-ins; the quick set runs the first two.
var fdccTable62N = []int{4, 16, 256, 1024}

// fdccTable62Paper is the thesis' Table 6.2 (L618–643).
var fdccTable62Paper = map[int]map[string]table62Row{
	4: {
		"dcqcn":  {42993.3, 48208, 4.0, 4.1, 0.00002, 0.96},
		"timely": {43653.6, 49632, 4.0, 4.0, 0.00002, 0.95},
		"hpcc":   {1089.1, 3354, 3.3, 4.3, 0.29881, 0.93},
		"rlcc":   {49564.8, 52546, 4.3, 4.3, 0.00001, 0.90},
		"fdcc":   {49275.3, 51128, 4.1, 4.1, 0.00002, 0.93},
	},
	16: {
		"dcqcn":  {135259.8, 151960, 15.4, 16.0, 0.03805, 0.99},
		"timely": {130874.7, 144672, 15.8, 16.2, 0.01845, 0.96},
		"hpcc":   {2804.3, 6708, 17.4, 17.6, 0.01279, 0.88},
		"rlcc":   {253288.8, 253786, 17.0, 17.0, 0.00003, 0.89},
		"fdcc":   {30716, 31525, 16.9, 16.9, 0.00002, 0.90},
	},
	256: {
		"dcqcn":  {1098612.9, 2882000, 253.0, 255.5, 0.00997, 0.96},
		"timely": {1372074.3, 4037088, 293.8, 296.1, 0.00762, 0.83},
		"hpcc":   {131961.3, 3274622, 294.5, 295.2, 0.00243, 0.83},
		"rlcc":   {4167130.2, 4286572.2, 255.1, 255.4, 0.00117, 0.95},
		"fdcc":   {3578233.5, 3688457.3, 254.5, 254.7, 0.00091, 0.96},
	},
	1024: {
		"dcqcn":  {6718384.9, 6764840, 975.4, 982.1, 0.00683, 0.99},
		"timely": {1914594.7, 6554592, 1026.1, 1028.3, 0.00218, 0.95},
		"hpcc":   {1347184.6, 6502288, 1089.2, 1091.4, 0.00195, 0.89},
		"rlcc":   {3085705.3, 6987246, 984.35, 986.5, 0.00225, 0.98},
		"fdcc":   {2495439.2, 6572722, 975.6, 977.1, 0.00153, 0.99},
	},
}

func table62Runs(ns []int) func() []Run {
	return func() []Run {
		var out []Run
		for _, n := range ns {
			for _, a := range fdccAlgos {
				series := []string{"queue_bytes@s0->s1"}
				if n <= 16 {
					series = append(series, "throughput_bps") // every flow: the unfair ratio while all are active
				}
				out = append(out, Run{Key: fdccKey(n, a), Scenario: fmt.Sprintf("fdcc-dumbbell-%dto1", n), Sets: fdccSets(a), Series: series})
			}
		}
		return out
	}
}

func fdccTable62() *Experiment {
	return &Experiment{
		Seed:  "001",
		ID:    "fdcc-table62",
		Title: "§6.3 (Table 6.2): dumbbell n-to-1 incasts of 20 MB flows",
		Claim: "At 4-to-1 FDCC is as fair as DCQCN (unfair ratio 0.00002) where HPCC is not (0.30); at 16-to-1 its queue " +
			"(30.7 KB) is far below DCQCN's (135 KB) and RL-CC's (253 KB); up to 1024-to-1 FCT slowdowns stay near n and " +
			"goodput at 0.9 or more.",
		Reading: "fdcc-dumbbell-{4,16,256,1024}to1: senders on one switch, the receiver on the other, joined by a 100 Gbps " +
			"bottleneck (s0->s1); every link 100 Gbps and 1 µs (the thesis gives no delays: HPCC's topologies' 1 µs), " +
			"1000 B payloads, a 32 MB buffer, DCQCN's ECN at 400 KB / 1600 KB / 0.2 (run.py). n = 4 and 16 use n senders; " +
			"256 and 1024 use the thesis' 64 senders with 4 and 16 flows each (its 64 receivers, idle but one, are left " +
			"out: they change nothing the incast crosses). Flows are 20 MB and start Gaussian within 1 ms (centred, " +
			"σ = 1/6 ms, clipped to the window: the thesis gives no σ). Every algorithm has a host window of about one " +
			"BDP (L538): DCQCN and TIMELY as run.py's window variants (dcqcn_vwin, timely_vwin), HPCC its own, FDCC and " +
			"RL-CC their one-BDP maxWindow. " + fdccPolicyReading + " Metrics (§3.4): Qlen is the bottleneck queue " +
			"sampled every 10 µs over the run (mean, and p99 nearest rank), bytes on the wire; FCT slowdown is FCT ÷ the " +
			"ideal FCT (base RTT + the bytes with headers at 100 Gbps), mean and p99 over the flows; the unfair ratio is " +
			"(BWmax − BWavg)/BWavg of the flows' goodputs size ÷ FCT (each row's note gives what a perfectly fair link " +
			"would give for the same starts and, for n ≤ 16, the ratio of the flows' mean goodputs while all are active, " +
			"the extract's \"bandwidth of each flow during an incast event\"); goodput is every flow's payload over the " +
			"incast's span (first start to last finish) ÷ 100 Gbps, so 1000 B in a 1036 B frame caps it at 0.965. " +
			"The quick set runs 4- and 16-to-1 whole.",
		Quick:     true,
		Runs:      table62Runs(fdccTable62N),
		QuickRuns: table62Runs(fdccTable62N[:2]),
		Rows:      table62Rows,
		Figures:   table62Figures,
	}
}

func table62Rows(o Outcomes) []Row {
	r := newRows("fdcc-table62")
	got := map[string]incast{}
	for _, n := range fdccTable62N {
		for _, a := range fdccAlgos {
			x := o[fdccKey(n, a)]
			if x == nil {
				continue
			}
			m := incastOf(x, "s0->s1")
			got[fdccKey(n, a)] = m
			p := fdccTable62Paper[n][a]
			name := fmt.Sprintf("Table 6.2, %d-to-1, %s", n, algoName(a))
			bdp := float64(x.Summary.MaxBDPBytes)
			for _, q := range []struct {
				stat        string
				paper, ours float64
			}{{"Qlen avg", p.qAvg, m.qAvg}, {"Qlen p99", p.q99, m.q99}} {
				row := r.within(name+", "+q.stat, q.paper, q.ours, "B", 0.5*q.paper,
					"± 50%: the thesis gives no link delays, buffer or ECN settings")
				switch {
				case row.Verdict != Reproduced && q.ours > q.paper && a == "rlcc" && shipsPolicy("rlcc"):
					row.Note = fmt.Sprintf("RL-CC's queue is not window-bound: it builds while the flows join, each at line rate with "+
						"a one-BDP window (%.0f KB) and cutting its rate by at most 1/1.2 a step, and once all have joined it "+
						"holds near its target, RTT inflation 1.5 + 0.064·√n.", bdp/1e3)
				case row.Verdict != Reproduced && q.ours > q.paper && a == "fdcc":
					row.Note = fmt.Sprintf("FDCC's queue is its policy's, not a window's: each flow joins at line rate with a "+
						"one-BDP window (%.0f KB) before its agent has decided, and the trained policy then holds a fraction "+
						"of a BDP; the thesis' BDP was probably smaller (see DCQCN's and TIMELY's rows).", bdp/1e3)
				case row.Verdict != Reproduced && q.ours > q.paper && a != "hpcc":
					row.Note = fmt.Sprintf("A window-bound queue holds about n − 1 windows: ours are one BDP of %.0f KB (1 µs links, "+
						"base RTT %.1f µs). The thesis' RL-CC queue, (n − 1) × 16.5–16.9 KB at both 4 and 16 flows, suggests its "+
						"BDP was about 17 KB (a base RTT near 1.4 µs); its delays, buffer and ECN thresholds are not given.",
						bdp/1e3, x.Summary.MaxBaseRTTns/1e3)
				}
				if note := rlccNote(a); note != "" {
					row.Note = strings.TrimSpace(note + " " + row.Note)
				}
			}
			r.within(name+", FCT slowdown avg", p.sdAvg, m.sdAvg, "", 0.15*p.sdAvg, "± 15%").Note = rlccNote(a)
			r.within(name+", FCT slowdown p99", p.sd99, m.sd99, "", 0.15*p.sd99, "± 15%").Note = rlccNote(a)
			row := r.within(name+", unfair ratio", p.unfair, m.unfair, "", 0.01, "± 0.01")
			if row.Verdict != Reproduced {
				ps := fairShareUnfair(x.Flows, fdccPayloadRate)
				row.Note = fmt.Sprintf("Ours is of size ÷ FCT, and the starts spread over 1 ms: a perfectly fair link would give these "+
					"starts %.4f.", ps)
				if u, from, to, ok := overlapUnfair(x); ok {
					row.Note += fmt.Sprintf(" Read as the flows' mean goodput while all %d are active (%.2f–%.2f ms), ours is %.4f.",
						n, from*1e3, to*1e3, u)
				}
			}
			if note := rlccNote(a); note != "" {
				row.Note = strings.TrimSpace(note + " " + row.Note)
			}
			row = r.within(name+", goodput", p.goodput, m.goodput, "", 0.05, "± 0.05")
			row.Note = rlccNote(a)
			if row.Verdict != Reproduced && goodputNote(a) != "" {
				row.Note = goodputNote(a)
			}
			r.claim(name+", every flow finishes", "all flows finish", fmt.Sprintf("%d of %d", m.finished, m.flows),
				m.finished == m.flows, "all")
		}
	}
	// the checks
	if f, h, ok := pair(got, fdccKey(4, "fdcc"), fdccKey(4, "hpcc")); ok {
		r.claim("4-to-1: FDCC's unfair ratio below HPCC's", "0.00002 vs 0.29881",
			fmt.Sprintf("%.4f vs %.4f", f.unfair, h.unfair), f.unfair < h.unfair, "below")
	}
	if f, d, ok := pair(got, fdccKey(16, "fdcc"), fdccKey(16, "dcqcn")); ok {
		r.claim("16-to-1: FDCC's peak queue below DCQCN's", "p99 31525 vs 151960 B",
			fmt.Sprintf("max %.0f vs %.0f B", f.qMax, d.qMax), f.qMax < d.qMax,
			"below (ours: the exact maximum; the thesis' largest statistic is its p99)")
	}
	if f, l, ok := pair(got, fdccKey(16, "fdcc"), fdccKey(16, "rlcc")); ok {
		r.claim("16-to-1: FDCC's mean queue below RL-CC's", "30716 vs 253289 B",
			fmt.Sprintf("%.0f vs %.0f B", f.qAvg, l.qAvg), f.qAvg < l.qAvg, "below").Note = rlccNote("rlcc")
	}
	for _, n := range fdccTable62N {
		if f, d, ok := pair(got, fdccKey(n, "fdcc"), fdccKey(n, "dcqcn")); ok {
			r.claim(fmt.Sprintf("%d-to-1: FDCC's mean FCT slowdown at most 1.25 × DCQCN's", n),
				fmt.Sprintf("%.1f vs %.1f", fdccTable62Paper[n]["fdcc"].sdAvg, fdccTable62Paper[n]["dcqcn"].sdAvg),
				fmt.Sprintf("%.2f vs %.2f", f.sdAvg, d.sdAvg), f.sdAvg <= 1.25*d.sdAvg, "≤ 1.25 ×")
		}
		if f, ok := got[fdccKey(n, "fdcc")]; ok {
			r.claim(fmt.Sprintf("%d-to-1: FDCC's goodput at least 0.9", n), fmt.Sprintf("%.2f", fdccTable62Paper[n]["fdcc"].goodput),
				fmt.Sprintf("%.3f", f.goodput), f.goodput >= 0.9, "≥ 0.9")
		}
	}
	return r.out
}

// pair returns two evaluated runs when both exist.
func pair(got map[string]incast, a, b string) (incast, incast, bool) {
	x, okA := got[a]
	y, okB := got[b]
	return x, y, okA && okB
}

func table62Figures(o Outcomes) []Figure {
	var figs []Figure
	for _, n := range fdccTable62N {
		f := Figure{Name: fmt.Sprintf("fdcc-queue-%dto1", n), Title: fmt.Sprintf("Table 6.2, %d-to-1: bottleneck queue", n),
			XLabel: "time (ms)", YLabel: "queue (KB)"}
		for _, a := range fdccAlgos {
			if x := o[fdccKey(n, a)]; x != nil {
				xs, ys := window(x.Series("queue_bytes", "s0->s1"), 0, math.Inf(1), 1e3)
				f.Lines = append(f.Lines, Line{Name: algoName(a), X: xs, Y: scaled(ys, 1e-3)})
			}
		}
		if len(f.Lines) > 0 {
			figs = append(figs, f)
		}
	}
	for _, a := range []string{"fdcc", "hpcc"} {
		if x := o[fdccKey(4, a)]; x != nil {
			figs = append(figs, flowFigure(x, fmt.Sprintf("fdcc-throughput-4to1-%s", a),
				fmt.Sprintf("Table 6.2, 4-to-1: per-flow goodput, %s", algoName(a)), len(x.Flows)))
		}
	}
	return figs
}

// flowFigure draws the goodput of the first k flows of a run over time.
func flowFigure(x *Outcome, name, title string, k int) Figure {
	f := Figure{Name: name, Title: title, XLabel: "time (ms)", YLabel: "goodput (Gbps)"}
	for i := 0; i < k && i < len(x.Flows); i++ {
		id := x.Flows[i].ID
		xs, ys := window(x.Series("throughput_bps", fmt.Sprint(id)), 0, math.Inf(1), 1e3)
		label := fmt.Sprintf("flow %d", id)
		if x.Flows[i].Tag == "long" || x.Flows[i].Tag == "short" {
			label = x.Flows[i].Tag + " flow"
		}
		f.Lines = append(f.Lines, Line{Name: label, X: xs, Y: scaled(ys, 1e-9)})
	}
	return f
}

// scaled multiplies values in place and returns them.
func scaled(v []float64, k float64) []float64 {
	for i := range v {
		v[i] *= k
	}
	return v
}

// ---- Table 6.1 and Fig. 6.3 ----

// fdccTable61N are the thesis' fat-tree fan-ins.
var fdccTable61N = []int{48, 192, 768}

// fdccTable61Paper is the thesis' Table 6.1 (L579–585): normalised goodput.
var fdccTable61Paper = map[int]map[string]float64{
	48:  {"dcqcn": 0.99, "timely": 0.99, "hpcc": 0.87, "rlcc": 0.98, "fdcc": 0.98},
	192: {"dcqcn": 0.98, "timely": 0.98, "hpcc": 0.88, "rlcc": 0.89, "fdcc": 0.93},
	768: {"dcqcn": 0.97, "timely": 0.96, "hpcc": 0.86, "rlcc": 0.88, "fdcc": 0.94},
}

// fattreePort is the receiver's port, the incast's last hop, on its
// access switch fattreeSwitch.
const fattreePort, fattreeSwitch = "leaf3->h48", "leaf3"

func table61Runs(ns []int, sets ...string) func() []Run {
	return func() []Run {
		var out []Run
		for _, n := range ns {
			for _, a := range fdccAlgos {
				out = append(out, Run{Key: fdccKey(n, a), Scenario: fmt.Sprintf("fdcc-fattree-%dto1", n),
					Sets: append(fdccSets(a), sets...), Series: []string{"queue_bytes@" + fattreePort}})
			}
		}
		return out
	}
}

func fdccTable61() *Experiment {
	return &Experiment{
		Seed:  "001",
		ID:    "fdcc-table61",
		Title: "§6.2 (Table 6.1, Fig. 6.3): n-to-1 incasts on the two-level fat-tree",
		Claim: "From the first three clusters to one receiver in the last, FDCC keeps normalised goodput at 0.93–0.98 where " +
			"HPCC gets 0.86–0.88; FDCC is the fairest and triggers the least PFC, while FDCC and HPCC both show larger FCT " +
			"slowdowns (INT overhead).",
		Reading: "fdcc-fattree-{48,192,768}to1: the thesis' fat-tree as a leaf-spine (4 access (leaf) switches × 16 hosts, " +
			"4 aggregation (spine) switches, each leaf linked once to each spine: the wiring is not given; 4:1 " +
			"oversubscribed), every link 100 Gbps and 1 µs, run.py's buffer and ECN. h0..h47 (the first three clusters) " +
			"send 20 MB each to h48, one, four or sixteen flows per host, starts Gaussian within 1 ms; algorithms and " +
			"windows as in fdcc-table62. " + fdccPolicyReading + " Goodput is every flow's payload over the " +
			"incast's span ÷ 100 Gbps (the receiver's link). Fig. 6.3 has no numbers: its claims are checked on our " +
			"unfair ratio (size ÷ FCT, as fdcc-table62), on PFC as the share of the run a flow's path is paused: the " +
			"mean pause fraction of the four aggregation→access links into the receiver's switch (a flow crosses one) " +
			"plus that of the senders' NIC ports (the thesis: pause time ÷ FCT per flow; our flows span most of the " +
			"run), and on mean FCT slowdown. " +
			"The quick set runs 48-to-1 with 1 MB flows starting within 50 µs (the 1 ms window scaled with the size, as " +
			"`cclab train` scales it).",
		Quick:     true,
		Runs:      table61Runs(fdccTable61N),
		QuickRuns: table61Runs(fdccTable61N[:1], "workload[0].size=1MB", "workload[0].jitter=50us"),
		Rows:      table61Rows,
		Figures:   table61Figures,
	}
}

func table61Rows(o Outcomes) []Row {
	r := newRows("fdcc-table61")
	for _, n := range fdccTable61N {
		got := map[string]incast{}
		pause := map[string]float64{}
		for _, a := range fdccAlgos {
			x := o[fdccKey(n, a)]
			if x == nil {
				continue
			}
			m := incastOf(x, fattreePort)
			got[a], pause[a] = m, incastPause(x, fattreeSwitch)
			name := fmt.Sprintf("Table 6.1, %d-to-1, %s", n, algoName(a))
			row := r.within(name+", normalised goodput", fdccTable61Paper[n][a], m.goodput, "", 0.05, "± 0.05")
			row.Note = rlccNote(a)
			if row.Verdict != Reproduced && goodputNote(a) != "" {
				row.Note = goodputNote(a)
			}
			r.claim(name+", every flow finishes", "all flows finish", fmt.Sprintf("%d of %d", m.finished, m.flows),
				m.finished == m.flows, "all")
		}
		if len(got) < len(fdccAlgos) {
			continue
		}
		f := got["fdcc"]
		fairest, least := true, true
		var unf, pau []string
		for _, a := range fdccAlgos {
			unf = append(unf, fmt.Sprintf("%s %.4f", algoName(a), got[a].unfair))
			pau = append(pau, fmt.Sprintf("%s %.1f%%", algoName(a), 100*pause[a]))
			if a != "fdcc" {
				fairest = fairest && f.unfair < got[a].unfair
				least = least && pause["fdcc"] < pause[a]
			}
		}
		r.claim(fmt.Sprintf("Fig. 6.3, %d-to-1, FDCC has the lowest unfair ratio", n), "FDCC the fairest",
			strings.Join(unf, ", "), fairest, "below every baseline")
		row := r.claim(fmt.Sprintf("Fig. 6.3, %d-to-1, FDCC's flows are paused least", n), "FDCC triggers less PFC",
			strings.Join(pau, ", "), least, "below every baseline")
		if pause["fdcc"] == 0 && !least {
			row.Note = "FDCC's flows are never paused, but neither are some baseline's: the claim cannot separate them here."
		}
		h := got["hpcc"]
		d, t := got["dcqcn"], got["timely"]
		larger := math.Min(f.sdAvg, h.sdAvg) > math.Max(d.sdAvg, t.sdAvg)
		r.claim(fmt.Sprintf("Fig. 6.3, %d-to-1, FDCC and HPCC have larger FCT slowdowns than DCQCN and TIMELY", n),
			"larger (INT overhead)", fmt.Sprintf("FDCC %.1f, HPCC %.1f vs DCQCN %.1f, TIMELY %.1f", f.sdAvg, h.sdAvg, d.sdAvg, t.sdAvg),
			larger, "both means above both")
	}
	return r.out
}

func table61Figures(o Outcomes) []Figure {
	f := Figure{Name: "fdcc-table61-goodput", Title: "Table 6.1: normalised goodput, fat-tree n-to-1",
		XLabel: "fan-in", YLabel: "goodput (÷ 100 Gbps)", Bars: true}
	for _, n := range fdccTable61N {
		f.Labels = append(f.Labels, fmt.Sprintf("%d-to-1", n))
	}
	for _, a := range fdccAlgos {
		l := Line{Name: algoName(a)}
		for i, n := range fdccTable61N {
			if x := o[fdccKey(n, a)]; x != nil {
				l.X = append(l.X, float64(i))
				l.Y = append(l.Y, normalisedGoodput(x.Flows, 100e9))
			}
		}
		f.Lines = append(f.Lines, l)
	}
	figs := []Figure{f}
	for _, n := range fdccTable61N {
		q := Figure{Name: fmt.Sprintf("fdcc-fattree-queue-%dto1", n), Title: fmt.Sprintf("Fig. 6.3, %d-to-1: the receiver's port queue", n),
			XLabel: "time (ms)", YLabel: "queue (KB)"}
		for _, a := range fdccAlgos {
			if x := o[fdccKey(n, a)]; x != nil {
				xs, ys := window(x.Series("queue_bytes", fattreePort), 0, math.Inf(1), 1e3)
				q.Lines = append(q.Lines, Line{Name: algoName(a), X: xs, Y: scaled(ys, 1e-3)})
			}
		}
		if len(q.Lines) > 0 {
			figs = append(figs, q)
		}
	}
	return figs
}

// ---- Fig. 6.1: long-short ----

// longShortWindow is where Fig. 6.1's utilisation is measured: from the
// short flow's start (1 ms) to 1 ms later, its life and the long flow's
// recovery.
const longShortFrom, longShortTo = 1e-3, 2e-3

// bottleneckGoodput is the flows' total goodput over [from, to), ÷ 100
// Gbps: the sum of their throughput_bps samples in the window over the
// number of sample instants in it (a flow is sampled only while active,
// so an absent flow counts as zero).
func bottleneckGoodput(x *Outcome, from, to float64) float64 {
	var sum float64
	instants := map[float64]bool{}
	for _, f := range x.Flows {
		s := x.Series("throughput_bps", fmt.Sprint(f.ID))
		for i, t := range s.T {
			if t >= from && t < to {
				sum += s.V[i]
				instants[t] = true
			}
		}
	}
	if len(instants) == 0 {
		return math.NaN()
	}
	return sum / float64(len(instants)) / 100e9
}

func fdccLongShort() *Experiment {
	runs := func() []Run {
		var out []Run
		for _, a := range fdccAlgos {
			out = append(out, Run{Key: a, Scenario: "fdcc-longshort", Sets: fdccSets(a), Series: []string{"throughput_bps", "queue_bytes@s0->s1"}})
		}
		return out
	}
	return &Experiment{
		Seed:  "001",
		ID:    "fdcc-fig61",
		Title: "§6.1 (Fig. 6.1): a long flow and a short flow",
		Claim: "A long flow runs in the background and a short flow starts at 1 ms and completes within 1.5 ms; FDCC utilises the " +
			"bottleneck link more efficiently than HPCC.",
		Reading: "fdcc-longshort: a dumbbell (100 Gbps, 1 µs), the long flow h0→r0 from 0, the short flow h1→r1 at 1 ms, the run " +
			"stopped at 3 ms. The thesis gives no short-flow size; we read \"completes within 1.5 ms\" as finishing by 1.5 ms " +
			"at half the link: 2 MB (0.34 ms at 47 Gbps of payload). Utilisation is the flows' total goodput from 1 ms to " +
			"2 ms (the short flow's life and the long flow's recovery) ÷ 100 Gbps, from 10 µs samples. Windows as in " +
			"fdcc-table62. " + fdccPolicyReading + " In the quick set whole.",
		Quick: true,
		Runs:  runs,
		Rows: func(o Outcomes) []Row {
			r := newRows("fdcc-fig61")
			u := map[string]float64{}
			var all []string
			for _, a := range fdccAlgos {
				if x := o[a]; x != nil {
					u[a] = bottleneckGoodput(x, longShortFrom, longShortTo)
					all = append(all, fmt.Sprintf("%s %.3f", algoName(a), u[a]))
				}
			}
			if _, ok := u["fdcc"]; !ok {
				return r.out
			}
			if _, ok := u["hpcc"]; ok {
				r.claim("Fig. 6.1, FDCC uses the bottleneck more than HPCC (goodput 1–2 ms ÷ 100 Gbps)", "FDCC more efficient",
					fmt.Sprintf("FDCC %.3f vs HPCC %.3f", u["fdcc"], u["hpcc"]), u["fdcc"] > u["hpcc"], "above")
			}
			r.compared("Fig. 6.1, goodput 1–2 ms ÷ 100 Gbps, every algorithm", "only FDCC and HPCC are drawn",
				strings.Join(all, ", "), "reported: the thesis compares FDCC with HPCC only")
			return r.out
		},
		Figures: func(o Outcomes) []Figure {
			var figs []Figure
			for _, a := range []string{"fdcc", "hpcc"} {
				if x := o[a]; x != nil {
					figs = append(figs, flowFigure(x, "fdcc-fig61-"+a, "Fig. 6.1: long and short flow goodput, "+algoName(a), 2))
				}
			}
			q := Figure{Name: "fdcc-fig61-queue", Title: "Fig. 6.1: bottleneck queue", XLabel: "time (ms)", YLabel: "queue (KB)"}
			for _, a := range fdccAlgos {
				if x := o[a]; x != nil {
					xs, ys := window(x.Series("queue_bytes", "s0->s1"), 0, math.Inf(1), 1e3)
					q.Lines = append(q.Lines, Line{Name: algoName(a), X: xs, Y: scaled(ys, 1e-3)})
				}
			}
			return append(figs, q)
		},
	}
}

// ---- Fig. 6.2: a flow joins every 35 ms ----

// joinStats evaluates a staggered-join run: phase k runs from flow k−1's
// start to flow k's (the last one to the end of the run). Over the phases
// with two or more flows it gives the lowest Jain's index of the flows'
// mean goodput in the phase's second half, and the fluctuation: each
// active flow's goodput standard deviation over the whole phase ÷ the
// fair share (100 Gbps ÷ flows), averaged over flows and phases.
func joinStats(x *Outcome) (minJain, fluct float64) {
	flows := append([]sim.FlowResult(nil), x.Flows...)
	sort.Slice(flows, func(a, b int) bool { return flows[a].Start < flows[b].Start })
	end := x.Summary.SimSeconds
	minJain = math.Inf(1)
	var fl []float64
	for k := 2; k <= len(flows); k++ {
		from := float64(flows[k-1].Start) / float64(sim.Second)
		to := end
		if k < len(flows) {
			to = float64(flows[k].Start) / float64(sim.Second)
		}
		var means []float64
		for _, f := range flows[:k] {
			s := x.Series("throughput_bps", fmt.Sprint(f.ID))
			means = append(means, meanOver(s, (from+to)/2, to))
			fl = append(fl, stdOver(s, from, to)/(100e9/float64(k)))
		}
		minJain = math.Min(minJain, jain(means))
	}
	return minJain, meanOf(fl)
}

// stdOver is the standard deviation of s's values with from ≤ t < to.
func stdOver(s Series, from, to float64) float64 {
	m := meanOver(s, from, to)
	sum, n := 0.0, 0
	for i, t := range s.T {
		if t >= from && t < to {
			sum += (s.V[i] - m) * (s.V[i] - m)
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return math.Sqrt(sum / float64(n))
}

func joinRuns(sets ...string) func() []Run {
	return func() []Run {
		var out []Run
		for _, a := range fdccAlgos {
			out = append(out, Run{Key: a, Scenario: "fdcc-join4", Sets: append(fdccSets(a), sets...), Series: []string{"throughput_bps"}})
		}
		return out
	}
}

func fdccJoin() *Experiment {
	return &Experiment{
		Seed:  "001",
		ID:    "fdcc-fig62",
		Title: "§6.1 (Fig. 6.2): four flows join one by one every 35 ms",
		Claim: "As four flows join a link one by one every 35 ms, FDCC shows smaller fluctuations when a new flow arrives and " +
			"shares the bandwidth more equally.",
		Reading: "fdcc-join4: four long flows h0..h3 → r0 on a dumbbell (100 Gbps, 1 µs), starting at 0, 35, 70 and 105 ms, the " +
			"run stopped at 140 ms; the thesis names neither the topology nor the algorithms compared, so all five run. " +
			"Goodput is sampled every 100 µs. Fluctuation: each active flow's goodput standard deviation over a phase ÷ " +
			"the fair share 100 Gbps/N, averaged over the flows and the phases with N = 2, 3, 4. Equality: the lowest " +
			"Jain's index, over those phases, of the flows' mean goodput in the phase's second half. Windows as in " +
			"fdcc-table62. " + fdccPolicyReading + " The quick set shortens the period to 2 ms (8 ms, 20 µs " +
			"samples).",
		Quick: true,
		Runs:  joinRuns(),
		QuickRuns: joinRuns(`workload[0].starts=["0s","2ms","4ms","6ms"]`, "duration=8ms", "telemetry.interval=20us",
			`workload[0].sizes=["100MB","100MB","100MB","100MB"]`),
		Rows: func(o Outcomes) []Row {
			r := newRows("fdcc-fig62")
			x := o["fdcc"]
			if x == nil {
				return r.out
			}
			fj, ff := joinStats(x)
			for _, a := range fdccBaselines {
				y := o[a]
				if y == nil {
					continue
				}
				j, f := joinStats(y)
				r.claim("Fig. 6.2, FDCC fluctuates less than "+algoName(a)+" when a flow joins", "smaller fluctuations",
					fmt.Sprintf("FDCC %.3f vs %.3f of the fair share", ff, f), ff < f, "below").Note = rlccNote(a)
				r.claim("Fig. 6.2, FDCC shares the link more equally than "+algoName(a)+" (lowest Jain's index)", "more equitable",
					fmt.Sprintf("FDCC %.4f vs %.4f", fj, j), fj > j+0.001, "above by more than 0.001 (less is sampling noise)").Note = rlccNote(a)
			}
			return r.out
		},
		Figures: func(o Outcomes) []Figure {
			var figs []Figure
			for _, a := range fdccAlgos {
				if x := o[a]; x != nil {
					figs = append(figs, flowFigure(x, "fdcc-fig62-"+a, "Fig. 6.2: per-flow goodput as flows join, "+algoName(a), 4))
				}
			}
			return figs
		},
	}
}

// ---- Figs. 6.4 and 6.5: WebSearch and FB_Hadoop ----

// fdccLoads are the loads of the mix-burst sweep ("20% to 80%"; the step is
// not given).
var fdccLoads = []int{20, 40, 60, 80}

// fdccMixCDFs are the two workloads: library scenario suffix, figure, name.
var fdccMixCDFs = []struct{ cdf, fig, name string }{{"websearch", "Fig. 6.4", "WebSearch"}, {"fbhadoop", "Fig. 6.5", "FB_Hadoop"}}

// shortFlow is the size under which a flow counts as short (the lab's two
// smallest size buckets).
const shortFlow = 100_000

// shortSlowdowns is the FCT slowdown of every finished short flow, clamped
// at 1 as HPCC's analysis does, sorted.
func shortSlowdowns(flows []sim.FlowResult) []float64 {
	var out []float64
	for _, f := range flows {
		if f.Finished && f.Size < shortFlow && f.IdealFCT > 0 {
			out = append(out, math.Max(1, float64(f.FCT)/float64(f.IdealFCT)))
		}
	}
	sort.Float64s(out)
	return out
}

func mixKey(cdf string, load int, algo string) string {
	return fmt.Sprintf("%s/load=%d/%s", cdf, load, algo)
}

func fdccMixBurst() *Experiment {
	return &Experiment{
		Seed:  "001",
		ID:    "fdcc-fig64",
		Title: "§6.3 (Figs. 6.4, 6.5): WebSearch and FB_Hadoop on the fat-tree, 20–80% load",
		Claim: "With Poisson arrivals of WebSearch and FB_Hadoop flows between all hosts of the fat-tree at 20% to 80% load, " +
			"FDCC consistently outperforms the others, with better control over the slowdown of short burst flows.",
		Reading: "fdcc-fattree-websearch and fdcc-fattree-fbhadoop: the fat-tree of fdcc-table61, every host sending to random " +
			"others with HPCC's traffic_gen (the thesis' inter-arrival formula, L606) at 20, 40, 60 and 80% of its link " +
			"(the step is not given) for 2 ms of arrivals (the duration is not given), run until every flow finishes. " +
			"Each access switch has 16 × 100 Gbps down and 4 × 100 Gbps up, so above about 33% load its uplinks are " +
			"overloaded while flows arrive. Short flows are those under 100 KB; their slowdown (FCT ÷ ideal FCT, at least " +
			"1) is compared at the median and p99. Windows as in fdcc-table62. " + fdccPolicyReading + " " +
			"Not in the quick set.",
		Runs: func() []Run {
			var out []Run
			for _, c := range fdccMixCDFs {
				for _, l := range fdccLoads {
					for _, a := range fdccAlgos {
						out = append(out, Run{Key: mixKey(c.cdf, l, a), Scenario: "fdcc-fattree-" + c.cdf,
							Sets: append(fdccSets(a), fmt.Sprintf("workload[0].load=%g", float64(l)/100))})
					}
				}
			}
			return out
		},
		Rows: func(o Outcomes) []Row {
			r := newRows("fdcc-fig64")
			for _, c := range fdccMixCDFs {
				for _, l := range fdccLoads {
					for _, st := range []struct {
						name string
						p    float64
					}{{"median", 0.5}, {"p99", 0.99}} {
						v := map[string]float64{}
						var all []string
						for _, a := range fdccAlgos {
							if x := o[mixKey(c.cdf, l, a)]; x != nil {
								v[a] = nearestRank(shortSlowdowns(x.Flows), st.p)
								all = append(all, fmt.Sprintf("%s %.2f", algoName(a), v[a]))
							}
						}
						if len(v) < len(fdccAlgos) {
							continue
						}
						lowest := true
						for _, a := range fdccBaselines {
							lowest = lowest && v["fdcc"] < v[a]
						}
						r.claim(fmt.Sprintf("%s, %s %d%%, FDCC's short-flow slowdown (%s) is the lowest", c.fig, c.name, l, st.name),
							"FDCC outperforms the others", strings.Join(all, ", "), lowest, "below every baseline").Note = rlccNote("rlcc")
					}
				}
			}
			return r.out
		},
		Figures: func(o Outcomes) []Figure {
			var figs []Figure
			for _, c := range fdccMixCDFs {
				f := Figure{Name: "fdcc-fig64-" + c.cdf, Title: c.fig + ": short-flow (< 100 KB) p99 FCT slowdown, " + c.name,
					XLabel: "load", YLabel: "p99 slowdown", Bars: true}
				for _, l := range fdccLoads {
					f.Labels = append(f.Labels, fmt.Sprintf("%d%%", l))
				}
				for _, a := range fdccAlgos {
					line := Line{Name: algoName(a)}
					for i, l := range fdccLoads {
						if x := o[mixKey(c.cdf, l, a)]; x != nil {
							line.X = append(line.X, float64(i))
							line.Y = append(line.Y, nearestRank(shortSlowdowns(x.Flows), 0.99))
						}
					}
					f.Lines = append(f.Lines, line)
				}
				figs = append(figs, f)
			}
			return figs
		},
	}
}
