package sim_test

import "testing"

// TestShippedFDCC holds the policy the lab ships (cc/fdcc/shipped, used when
// a scenario names no weights) to issue 16's bar on the library's dumbbell
// incasts of 20 MB flows at 100 Gbps, starts Gaussian within 1 ms, against
// the baselines as the thesis runs them (DCQCN as its window variant,
// dcqcn_vwin; HPCC its own): every flow finishes; FDCC's 4-to-1 unfair ratio
// (max − mean)/mean of the flows' goodputs size ÷ FCT is below HPCC's; its
// 16-to-1 peak bottleneck queue is below DCQCN's; its mean FCT slowdown is at
// most 1.25× DCQCN's at both fan-ins. The bars are the issue's, not fitted:
// today FDCC's unfair ratio is 0.018 against HPCC's 0.377, its peak queue
// 206 KB against 556 KB, its slowdowns 1.16× and 1.08× DCQCN's
// (cc/fdcc/shipped/README.md). A policy that does not act fails the queue
// check: the first one trained, which never shrank a window below its
// one-BDP cap, held a 16-to-1 queue p99 of 1.28 MB against DCQCN's 522 KB.
func TestShippedFDCC(t *testing.T) {
	if testing.Short() {
		t.Skip("runs six 20 MB incasts (about 2 s)")
	}
	type outcome struct {
		unfair, peak, slowdown float64
	}
	measure := func(t *testing.T, name string, sets ...string) outcome {
		t.Helper()
		cfg := libraryConfig(t, name, "", sets...)
		_, res := run(t, cfg)
		var sum, best, slow float64
		for _, f := range res.Flows {
			if !f.Finished {
				t.Fatalf("%s %v: flow %d did not finish", name, sets, f.ID)
			}
			g := float64(f.Size) / float64(f.FCT)
			sum += g
			best = max(best, g)
			slow += float64(f.FCT) / float64(f.IdealFCT)
		}
		n := float64(len(res.Flows))
		o := outcome{unfair: (best - sum/n) / (sum / n), slowdown: slow / n}
		for _, p := range res.Ports {
			if p.Name == "s0->s1" {
				o.peak = float64(p.QueueMax)
			}
		}
		if o.peak == 0 {
			t.Fatalf("%s: no queue at the bottleneck s0->s1", name)
		}
		return o
	}
	dcqcn := `cc={"algorithm":"dcqcn","preset":"dcqcn_vwin"}`
	hpcc := `cc={"algorithm":"hpcc"}`
	for _, fanIn := range []string{"4to1", "16to1"} {
		t.Run(fanIn, func(t *testing.T) {
			name := "fdcc-dumbbell-" + fanIn
			f := measure(t, name)
			d := measure(t, name, dcqcn)
			t.Logf("FDCC: unfair %.4f, peak queue %.0f B, mean slowdown %.3f; DCQCN: %.4f, %.0f B, %.3f",
				f.unfair, f.peak, f.slowdown, d.unfair, d.peak, d.slowdown)
			if r := f.slowdown / d.slowdown; r > 1.25 {
				t.Errorf("FDCC's mean FCT slowdown %.3f is %.2f× DCQCN's %.3f (at most 1.25×)", f.slowdown, r, d.slowdown)
			}
			switch fanIn {
			case "4to1":
				h := measure(t, name, hpcc)
				t.Logf("HPCC: unfair %.4f", h.unfair)
				if f.unfair >= h.unfair {
					t.Errorf("FDCC's unfair ratio %.4f is not below HPCC's %.4f", f.unfair, h.unfair)
				}
			case "16to1":
				if f.peak >= d.peak {
					t.Errorf("FDCC's peak queue %.0f B is not below DCQCN's %.0f B", f.peak, d.peak)
				}
			}
		})
	}
}
