package runs

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"cclab/scenarios"
	"cclab/sim"
)

// The expected wall time orders the library as measured (see
// estimateWall): MPCC Exp. 1 is a blink, the 1024-host permutation takes
// seconds, the 1024-to-1 FDCC incast over 30 s (the lab asks first).
func TestEstimateWall(t *testing.T) {
	want := map[string][2]float64{
		"mpcc-exp1":                    {0, 0.5},
		"incast-16to1-dcqcn":           {0.01, 0.5},
		"mpcc-exp3-websearch30":        {0.5, 3},
		"fattree1024-permutation-hpcc": {1, 20},
		"fdcc-dumbbell-1024to1":        {30, 3600},
	}
	for _, e := range scenarios.Library() {
		w, ok := want[e.ID]
		if !ok {
			continue
		}
		c, err := Compile(e.Source, Limits{}, "")
		if err != nil {
			t.Fatal(err)
		}
		c.Release()
		if got := c.Cost.WallSeconds; got < w[0] || got > w[1] {
			t.Errorf("%s: expected %.3g s, want within [%g, %g]", e.ID, got, w[0], w[1])
		}
		delete(want, e.ID)
	}
	if len(want) > 0 {
		t.Errorf("not in the library: %v", want)
	}
}

// The estimate against the whole library as measured (testdata/
// library-measured.txt: each scenario run once as fast as possible, its
// events and simulated time from summary.json). Events: every run that
// finished is within 2.5 times of its estimate (measured 0.47-2.05 times
// the estimate: a data packet's ~4 events per switch hop leave out ACK,
// CNP and timer events, which weigh most in the tiniest runs (MPCC Exp. 1,
// 10k events, 2.05) and least where PFC and drops add none
// (rcc-multibottleneck, 0.47); 2.5 leaves room for the engine to change
// a little without refreshing the table); a run stopped at 45 s had done
// at most 2.5 times its estimate so far. Simulated time of the all-to-all
// (barrier) workloads, both the one the limits check (SimSeconds) and the
// one the user is shown (ExpectSimSeconds): within 2.5 times too
// (leafspine-alltoall-none ends 2.4 times later than its iterations'
// busiest host alone would take: the incast at each receiver;
// dolce-alltoall-ppn16 had reached 16 ms of the 18 ms expected when
// stopped). Before barrier groups were chained, SimSeconds took a held
// flow's delay after its barrier for its start: 5.12 µs, one 64 KB flow's
// time, for every all-to-all (3150 times under for ppn16).
func TestEstimateAgainstTheLibrary(t *testing.T) {
	const factor = 2.5
	raw, err := os.ReadFile("testdata/library-measured.txt")
	if err != nil {
		t.Fatal(err)
	}
	type measured struct {
		done         bool
		events       float64
		wall, simSec float64
	}
	runs := map[string]measured{}
	for _, line := range strings.Split(string(raw), "\n") {
		f := strings.Fields(line)
		if len(f) != 5 || strings.HasPrefix(line, "#") {
			continue
		}
		var m measured
		m.done = f[1] == "done"
		m.events, _ = strconv.ParseFloat(f[2], 64)
		m.wall, _ = strconv.ParseFloat(f[3], 64)
		m.simSec, _ = strconv.ParseFloat(f[4], 64)
		runs[f[0]] = m
	}
	barrier := map[string]bool{"leafspine-alltoall-none": true, "dolce-alltoall-ppn16": true, "dolce-alltoall-ppn40": true}
	checked := 0
	for _, e := range scenarios.Library() {
		m, ok := runs[e.ID]
		if !ok {
			t.Errorf("%s: not measured (add it to testdata/library-measured.txt)", e.ID)
			continue
		}
		c, err := Check(e.Source, Limits{}, "", scenarios.BuildOptions{})
		if err != nil {
			t.Fatal(err)
		}
		est := c.Cost.Events
		ratio := m.events / est
		t.Logf("%-32s %5d hosts: %.3g events measured, %.3g estimated (×%.2f)%s", e.ID, c.Cost.Hosts, m.events, est, ratio, map[bool]string{false: ", stopped at 45 s"}[m.done])
		if ratio > factor || (m.done && ratio < 1/factor) {
			t.Errorf("%s: %.3g events measured, %.3g estimated: ×%.2f, beyond %g", e.ID, m.events, est, ratio, factor)
		}
		if barrier[e.ID] {
			for _, exp := range []float64{c.Cost.SimSeconds, c.Cost.ExpectSimSeconds} {
				sr := m.simSec / exp
				t.Logf("%-32s simulated %.3g s, expected %.3g s (×%.2f)", e.ID, m.simSec, exp, sr)
				if sr > factor || (m.done && sr < 1/factor) {
					t.Errorf("%s: simulated %.3g s, expected %.3g s: ×%.2f, beyond %g", e.ID, m.simSec, exp, sr, factor)
				}
			}
		}
		checked++
	}
	if checked != len(runs) {
		t.Errorf("%d measured runs, %d in the library", len(runs), checked)
	}
}

// A flow larger than the run can carry counts what its host link carries
// to the end of the run, also without a duration (the run then ends at
// sim.MaxDuration at the latest), so it is not refused for its size.
func TestEstimateCapsHugeFlows(t *testing.T) {
	doc := `{"name": "huge", "topology": {"kind": "dumbbell", "senders": 1, "hostLink": {"rate": "10Gbps", "delay": "1us"}},
		"cc": {"algorithm": "none"}, "workload": [{"kind": "flows", "flows": [{"src": "h0", "dst": "r0", "size": "1000GB", "start": "0s"}]}]}`
	c, err := Check([]byte(doc), DefaultLimits(), "", scenarios.BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	most := float64(sim.MaxDuration) / float64(sim.Second) * 10e9 / 8 / 1000
	if c.Cost.Packets > most+1 || c.Refused != nil {
		t.Fatalf("%.3g packets (at most %.3g), refused %v", c.Cost.Packets, most, c.Refused)
	}
}
