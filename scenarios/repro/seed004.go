package repro

import (
	"fmt"
	"strings"
)

// Seed 004, Dolce-RC: the ns-3 tables (extract §3.5, R3 and R4).

type dolceCase struct {
	scenario, table, workload, load string
	dcqcnMean, dolceMean            float64 // µs
	dcqcnP99, dolceP99              float64 // µs; 0: not reported
	quick                           bool
}

var dolceCases = []dolceCase{
	{"dolce-fattree8-cachefollower30", "Table I", "Cache Follower", "30%", 481.43, 168.01, 3088.51, 1829.14, true},
	{"dolce-fattree8-cachefollower50", "Table I", "Cache Follower", "50%", 546.48, 234.97, 3074.44, 2024.28, false},
	{"dolce-fattree8-datamining30", "Table II", "Data Mining", "30%", 1509.33, 1288.00, 0, 0, true},
	{"dolce-fattree8-datamining50", "Table II", "Data Mining", "50%", 1465.95, 1250.19, 0, 0, false},
}

func dolceRuns(quick bool) []Run {
	var out []Run
	for _, c := range dolceCases {
		if quick && !c.quick {
			continue
		}
		for _, a := range []string{"dcqcn", "dolce"} {
			r := Run{Key: c.scenario + "/" + a, Scenario: c.scenario}
			if a == "dcqcn" {
				r.Algo = "dcqcn"
			}
			out = append(out, r)
		}
	}
	return out
}

func dolceExperiments() []*Experiment {
	return []*Experiment{{
		Seed:  "004",
		ID:    "dolce-fct",
		Title: "§V-B (Tables I and II): flow completion times against DCQCN",
		Claim: "On a k = 16 fat-tree, Dolce-RC lowers the mean FCT of Cache Follower flows by 65% (30% load) and 57% (50%), their " +
			"p99 by 41% and 34%, and the mean FCT of Data Mining flows by 15% at both loads.",
		Reading: "The dolce-fattree8-* scenarios are seconds-long stand-ins: a k = 8 fat-tree (128 hosts at 200 Gbps) with 1 ms of " +
			"arrivals, so absolute FCTs are not the paper's; the reductions compare. Dolce-RC runs with the library's settings " +
			"(per-message learning); DCQCN with the same ECN thresholds. The quick set runs the 30% loads.",
		Quick:     true,
		Runs:      func() []Run { return dolceRuns(false) },
		QuickRuns: func() []Run { return dolceRuns(true) },
		Rows: func(o Outcomes) []Row {
			r := newRows("dolce-fct")
			for _, c := range dolceCases {
				d, x := o[c.scenario+"/dcqcn"], o[c.scenario+"/dolce"]
				if d == nil || x == nil {
					continue // not in this (quick) set
				}
				df, xf := fctMicros(d.Flows), fctMicros(x.Flows)
				name := fmt.Sprintf("%s, %s %s", c.table, c.workload, c.load)
				for _, v := range []struct {
					who         string
					paper, ours float64
				}{{"DCQCN", c.dcqcnMean, meanOf(df)}, {"Dolce-RC", c.dolceMean, meanOf(xf)}} {
					row := r.within(name+", "+v.who+", mean FCT", v.paper, v.ours, "µs", 0.25*v.paper,
						"± 25%, were the fabrics alike")
					if row.Verdict != Reproduced {
						row.Note = "A k = 8 stand-in with 1 ms of arrivals: absolute FCTs scale with the fabric and the run's length."
					}
				}
				r.change(name+", mean FCT, Dolce-RC vs DCQCN", -reduction(c.dolceMean, c.dcqcnMean), pct(meanOf(xf), meanOf(df)), 10,
					"± 10 pp of the paper's reduction")
				if c.dcqcnP99 > 0 {
					r.change(name+", p99 FCT, Dolce-RC vs DCQCN", -reduction(c.dolceP99, c.dcqcnP99),
						pct(nearestRank(xf, 0.99), nearestRank(df, 0.99)), 10, "± 10 pp of the paper's reduction")
				}
			}
			return r.out
		},
		Figures: func(o Outcomes) []Figure {
			f := Figure{Name: "dolce-fct-mean", Title: "Tables I–II: mean FCT, DCQCN and Dolce-RC (k = 8 stand-ins)",
				YLabel: "mean FCT (µs)", Bars: true}
			var present []dolceCase
			for _, c := range dolceCases {
				if o[c.scenario+"/dcqcn"] != nil || o[c.scenario+"/dolce"] != nil {
					present = append(present, c)
					f.Labels = append(f.Labels, strings.TrimPrefix(c.scenario, "dolce-fattree8-"))
				}
			}
			for _, a := range []string{"dcqcn", "dolce"} {
				l := Line{Name: algoName(a)}
				for i, c := range present {
					if x := o[c.scenario+"/"+a]; x != nil {
						l.X = append(l.X, float64(i))
						l.Y = append(l.Y, meanOf(fctMicros(x.Flows)))
					}
				}
				f.Lines = append(f.Lines, l)
			}
			return []Figure{f}
		},
	}}
}
