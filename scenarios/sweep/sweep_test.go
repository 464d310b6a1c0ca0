package sweep

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"cclab/scenarios"
	"cclab/sim"
	"cclab/sim/report"
)

func TestSweepParseGrid(t *testing.T) {
	hundred := make([]string, 100)
	for i := range hundred {
		hundred[i] = "1"
	}
	tests := []struct {
		arg    string
		path   string
		values []string
		err    string // a substring of the error; "" for none
	}{
		{arg: "cc.params.wr=1, 10 ,100", path: "cc.params.wr", values: []string{"1", "10", "100"}},
		{arg: " switch.buffer =40Gbps", path: "switch.buffer", values: []string{"40Gbps"}},
		{arg: "topology.hostLink.rate=10Gbps,40Gbps", path: "topology.hostLink.rate", values: []string{"10Gbps", "40Gbps"}},
		{arg: "workload[0].load=0.1:0.3:0.1", path: "workload[0].load", values: []string{"0.1", "0.2", "0.3"}},
		{arg: "x=0.7:1:0.1", path: "x", values: []string{"0.7", "0.8", "0.9", "1"}},
		{arg: "x=0:1:0.25", path: "x", values: []string{"0", "0.25", "0.5", "0.75", "1"}},
		{arg: "x=-0.3:0.3:0.1", path: "x", values: []string{"-0.3", "-0.2", "-0.1", "0", "0.1", "0.2", "0.3"}},
		{arg: "x=1:10:4", path: "x", values: []string{"1", "5", "9"}},
		{arg: "x=5:5:1", path: "x", values: []string{"5"}},
		{arg: "x=1e-30:3e-30:1e-30", path: "x", values: []string{"1e-30", "2e-30", "3e-30"}},
		{arg: "x=1e6:3e6:1e6", path: "x", values: []string{"1e+06", "2e+06", "3e+06"}},
		{arg: "x=" + strings.Join(hundred, ","), path: "x", values: hundred},

		{arg: "cc.params.wr", err: `"cc.params.wr": want PATH=v1,v2,... or PATH=lo:hi:step`},
		{arg: "=1,2", err: `"=1,2": empty path`},
		{arg: "x=1,,3", err: `"x=1,,3": value 2 is empty`},
		{arg: "x=", err: `"x=": value 1 is empty`},
		{arg: "x=0:1:0", err: `"x=0:1:0": range step 0: want > 0`},
		{arg: "x=0:1:-1", err: `"x=0:1:-1": range step -1: want > 0`},
		{arg: "x=2:1:1", err: `"x=2:1:1": range lo 2 is above hi 1`},
		{arg: "x=a:1:1", err: `"x=a:1:1": range lo "a" is not a finite number`},
		{arg: "x=0:b:1", err: `"x=0:b:1": range hi "b" is not a finite number`},
		{arg: "x=0:1:NaN", err: `range step "NaN" is not a finite number`},
		{arg: "x=0:Inf:1", err: `range hi "Inf" is not a finite number`},
		{arg: "x=1:2", err: `"x=1:2": range "1:2": want lo:hi:step`},
		{arg: "x=0:100:1", err: `"x=0:100:1": range "0:100:1" has 101 values, at most 100`},
		{arg: "x=0:1e18:1e-18", err: "at most 100"},
		{arg: "x=1," + strings.Join(hundred, ","), err: `101 values, at most 100`},
	}
	for _, tt := range tests {
		a, err := ParseGrid(tt.arg)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseGrid(%q): error %v, want one containing %q", tt.arg, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseGrid(%q): %v", tt.arg, err)
			continue
		}
		if a.Path != tt.path || !slices.Equal(a.Values, tt.values) {
			t.Errorf("ParseGrid(%q) = %q %q, want %q %q", tt.arg, a.Path, a.Values, tt.path, tt.values)
		}
	}
}

func TestSweepParseSeeds(t *testing.T) {
	hundred := make([]uint64, 100)
	for i := range hundred {
		hundred[i] = uint64(i + 100)
	}
	tests := []struct {
		arg   string
		seeds []uint64
		err   string
	}{
		{arg: "1-5", seeds: []uint64{1, 2, 3, 4, 5}},
		{arg: "1,3,7", seeds: []uint64{1, 3, 7}},
		{arg: "4", seeds: []uint64{4}},
		{arg: "1-3,9", seeds: []uint64{1, 2, 3, 9}},
		{arg: " 9 , 2-3 ", seeds: []uint64{9, 2, 3}},
		{arg: "100-199", seeds: hundred},

		{arg: "", err: "no seeds"},
		{arg: "0", err: `seed "0": want a whole number >= 1`},
		{arg: "1,,2", err: "empty seed in the list"},
		{arg: "1,a", err: `seed "a": want a whole number >= 1`},
		{arg: "-1", err: `seed "-1": want a whole number >= 1`},
		{arg: "1-x", err: `seed "1-x": want a whole number >= 1`},
		{arg: "1-2-3", err: `seed "1-2-3": want a whole number >= 1`},
		{arg: "3-1", err: `seed range "3-1": 3 is above 1`},
		{arg: "1-3,2", err: `seed 2 (in "2") is given twice`},
		{arg: "1-101", err: `"1-101": more than 100 seeds`},
		{arg: "1-50,60-110", err: "more than 100 seeds"},
		{arg: "1-18446744073709551615", err: "more than 100 seeds"},
	}
	for _, tt := range tests {
		seeds, err := ParseSeeds(tt.arg)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("ParseSeeds(%q): error %v, want one containing %q", tt.arg, err, tt.err)
			}
			continue
		}
		if err != nil || !slices.Equal(seeds, tt.seeds) {
			t.Errorf("ParseSeeds(%q) = %v, %v; want %v", tt.arg, seeds, err, tt.seeds)
		}
	}
}

func TestSweepValidate(t *testing.T) {
	ok := Axis{Path: "cc.params.wr", Values: []string{"1", "10"}}
	tooMany := make([]string, MaxValuesPerAxis+1)
	for i := range tooMany {
		tooMany[i] = string(rune('a'+i%26)) + strings.Repeat("x", i/26)
	}
	manySeeds := make([]uint64, MaxSeeds+1)
	for i := range manySeeds {
		manySeeds[i] = uint64(i + 1)
	}
	tests := []struct {
		name   string
		spec   Spec
		fields []string // the FieldErrors' fields, in order; nil: valid
	}{
		{"valid", Spec{Axes: []Axis{ok, {Path: "workload[0].load", Values: []string{"0.3"}}}, Seeds: []uint64{1, 2}}, nil},
		{"no axes", Spec{Seeds: []uint64{1}}, []string{"axes"}},
		{"five axes", Spec{Axes: []Axis{ok, {"a", []string{"1"}}, {"b", []string{"1"}}, {"c", []string{"1"}}, {"d", []string{"1"}}}, Seeds: []uint64{1}}, []string{"axes"}},
		{"empty path", Spec{Axes: []Axis{ok, {"", []string{"1"}}}, Seeds: []uint64{1}}, []string{"axes[1].path"}},
		{"path twice", Spec{Axes: []Axis{ok, ok}, Seeds: []uint64{1}}, []string{"axes[1].path"}},
		{"seed axis", Spec{Axes: []Axis{{"seed", []string{"1"}}}, Seeds: []uint64{1}}, []string{"axes[0].path"}},
		{"path with =", Spec{Axes: []Axis{{"a=b", []string{"1"}}}, Seeds: []uint64{1}}, []string{"axes[0].path"}},
		{"path with space", Spec{Axes: []Axis{{"cc. params", []string{"1"}}}, Seeds: []uint64{1}}, []string{"axes[0].path"}},
		{"no values", Spec{Axes: []Axis{{"x", nil}}, Seeds: []uint64{1}}, []string{"axes[0].values"}},
		{"too many values", Spec{Axes: []Axis{{"x", tooMany}}, Seeds: []uint64{1}}, []string{"axes[0].values"}},
		{"empty value", Spec{Axes: []Axis{{"x", []string{"1", " "}}}, Seeds: []uint64{1}}, []string{"axes[0].values"}},
		{"value twice", Spec{Axes: []Axis{{"x", []string{"1", "1"}}}, Seeds: []uint64{1}}, []string{"axes[0].values"}},
		{"no seeds", Spec{Axes: []Axis{ok}}, []string{"seeds"}},
		{"seed 0", Spec{Axes: []Axis{ok}, Seeds: []uint64{0}}, []string{"seeds"}},
		{"seed twice", Spec{Axes: []Axis{ok}, Seeds: []uint64{3, 4, 3}}, []string{"seeds"}},
		{"too many seeds", Spec{Axes: []Axis{ok}, Seeds: manySeeds}, []string{"seeds"}},
		{"every problem", Spec{Axes: []Axis{{"", nil}, {"seed", []string{""}}}, Seeds: []uint64{0}},
			[]string{"axes[0].path", "axes[0].values", "axes[1].path", "axes[1].values", "seeds"}},
	}
	for _, tt := range tests {
		err := tt.spec.Validate()
		if tt.fields == nil {
			if err != nil {
				t.Errorf("%s: %v", tt.name, err)
			}
			continue
		}
		var se *scenarios.Error
		if !errors.As(err, &se) {
			t.Errorf("%s: error %v (%T), want a *scenarios.Error", tt.name, err, err)
			continue
		}
		var got []string
		for _, fe := range se.Errors {
			got = append(got, fe.Field)
			if fe.Error == "" {
				t.Errorf("%s: %s has no message", tt.name, fe.Field)
			}
		}
		if !slices.Equal(got, tt.fields) {
			t.Errorf("%s: fields %q (%v), want %q", tt.name, got, err, tt.fields)
		}
	}
}

func TestSweepPointsAndRuns(t *testing.T) {
	spec := Spec{Axes: []Axis{{"a", []string{"1", "2", "3"}}, {"b", []string{"x", "y"}}}, Seeds: []uint64{5, 6}}
	want := []Point{
		{0, []string{"1", "x"}}, {1, []string{"1", "y"}}, {2, []string{"2", "x"}},
		{3, []string{"2", "y"}}, {4, []string{"3", "x"}}, {5, []string{"3", "y"}},
	}
	got := spec.Points()
	if len(got) != len(want) {
		t.Fatalf("%d points, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i].Index != want[i].Index || !slices.Equal(got[i].Values, want[i].Values) {
			t.Errorf("point %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	for _, s := range []Spec{
		spec,
		{Axes: []Axis{{"a", []string{"1"}}}, Seeds: []uint64{1}},
		{Axes: []Axis{{"a", []string{"1", "2"}}, {"b", []string{"1", "2", "3"}}, {"c", []string{"1", "2"}}}, Seeds: []uint64{1, 2, 3}},
		{Axes: []Axis{{"a", nil}}, Seeds: []uint64{1}},
		{Axes: []Axis{{"a", []string{"1"}}}},
	} {
		if n := len(s.Points()) * len(s.Seeds); s.Runs() != n {
			t.Errorf("%+v: Runs() = %d, want %d", s, s.Runs(), n)
		}
	}
	// 4 axes of 2^16 values and 2 seeds: 2^65 runs saturate
	huge := make([]string, 1<<16)
	big := Spec{Axes: []Axis{{"a", huge}, {"b", huge}, {"c", huge}, {"d", huge}}, Seeds: []uint64{1, 2}}
	if n := big.Runs(); n != math.MaxInt {
		t.Errorf("Runs of 2^65 = %d, want MaxInt", n)
	}
}

func TestSweepApply(t *testing.T) {
	doc := []byte(`{"name": "x", "seed": 1, "cc": {"algorithm": "dcqcn"},
		"workload": [{"kind": "poisson", "load": 0.5}]}`)
	axes := []Axis{{"workload[0].load", []string{"0.3"}}, {"switch.buffer", []string{"4MB"}}, {"cc.params.ai", []string{"10"}}}
	out, err := Apply(doc, axes, Point{Index: 0, Values: []string{"0.3", "4MB", "10"}}, 7)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Seed     uint64
		Workload []struct{ Load float64 }
		Switch   struct{ Buffer string }
		CC       struct{ Params map[string]float64 }
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got.Seed != 7 || got.Workload[0].Load != 0.3 || got.Switch.Buffer != "4MB" || got.CC.Params["ai"] != 10 {
		t.Errorf("applied: %+v\n%s", got, out)
	}
	bad := []struct {
		name  string
		axes  []Axis
		p     Point
		field string
	}{
		{"index out of range", []Axis{{"workload[3].load", nil}}, Point{Values: []string{"1"}}, "workload[3]"},
		{"into a number", []Axis{{"seed.x", nil}}, Point{Values: []string{"1"}}, "seed.x"},
		{"seed axis", []Axis{{"seed", nil}}, Point{Values: []string{"1"}}, "seed"},
		{"values for other axes", []Axis{{"x", nil}}, Point{Index: 4, Values: []string{"1", "2"}}, ""},
	}
	for _, tt := range bad {
		_, err := Apply(doc, tt.axes, tt.p, 1)
		var se *scenarios.Error
		if !errors.As(err, &se) || se.Errors[0].Field != tt.field {
			t.Errorf("%s: error %v, want a *scenarios.Error at %q", tt.name, err, tt.field)
		}
	}
}

func TestSweepMetrics(t *testing.T) {
	ms := Metrics()
	var keys []string
	for _, m := range ms {
		keys = append(keys, m.Key)
		if m.Label == "" {
			t.Errorf("%s has no label", m.Key)
		}
	}
	want := []string{"fct_mean", "fct_p50", "fct_p99",
		"fct_p50_b0", "fct_p99_b0", "fct_p50_b1", "fct_p99_b1", "fct_p50_b2", "fct_p99_b2",
		"fct_p50_b3", "fct_p99_b3", "fct_p50_b4", "fct_p99_b4",
		"max_queue", "queue_p99", "pfc_pause_us", "goodput_gbps", "jain", "drops", "flows_unfinished"}
	if !slices.Equal(keys, want) {
		t.Errorf("keys %q,\nwant %q", keys, want)
	}
	labels := map[string]string{
		"fct_p99":      "FCT slowdown p99",
		"fct_p50_b0":   "FCT slowdown p50, <10 KB",
		"fct_p99_b1":   "FCT slowdown p99, 10-100 KB",
		"fct_p99_b2":   "FCT slowdown p99, 100 KB-1 MB",
		"fct_p50_b3":   "FCT slowdown p50, 1-10 MB",
		"fct_p99_b4":   "FCT slowdown p99, ≥10 MB",
		"pfc_pause_us": "PFC pause time, all ports",
	}
	units := map[string]string{"max_queue": "bytes", "queue_p99": "bytes", "pfc_pause_us": "µs", "goodput_gbps": "Gbps", "jain": "", "fct_p99_b4": ""}
	for _, m := range ms {
		if l, ok := labels[m.Key]; ok && m.Label != l {
			t.Errorf("%s label %q, want %q", m.Key, m.Label, l)
		}
		if u, ok := units[m.Key]; ok && m.Unit != u {
			t.Errorf("%s unit %q, want %q", m.Key, m.Unit, u)
		}
	}
}

func TestSweepExtract(t *testing.T) {
	r := &sim.Result{
		SimTime: 2 * sim.Millisecond,
		Drops:   3,
		Flows: []sim.FlowResult{
			{ID: 0, Size: 5_000, FCT: 20 * sim.Microsecond, IdealFCT: 10 * sim.Microsecond, Finished: true, Started: true},
			{ID: 1, Size: 50_000, FCT: 90 * sim.Microsecond, IdealFCT: 30 * sim.Microsecond, Finished: true, Started: true},
			{ID: 2, Size: 20_000_000, IdealFCT: 2 * sim.Millisecond, Started: true},
		},
		Ports: []sim.PortResult{
			{Name: "s0->h1", PauseFraction: 0.25},
			{Name: "s0->h2", PauseFraction: 0.5},
		},
		SwitchQueues: sim.QueueDist{Ports: 2, P99: 2000, Max: 9000},
	}
	got := Extract(report.Summarize(r, nil, 0))
	want := map[string]float64{
		"fct_mean": 2.5, "fct_p50": 3, "fct_p99": 3,
		"fct_p50_b0": 2, "fct_p99_b0": 2, "fct_p50_b1": 3, "fct_p99_b1": 3,
		"max_queue": 9000, "queue_p99": 2000,
		"pfc_pause_us": 1500, // (0.25 + 0.5) × 2 ms
		"goodput_gbps": 0.22, // 55 KB in 2 ms
		"drops":        3, "flows_unfinished": 1,
	}
	if len(got) != len(want) {
		t.Errorf("%d metrics %v, want %d", len(got), got, len(want))
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || math.Abs(g-w) > 1e-9*math.Abs(w) {
			t.Errorf("%s = %v (%v), want %v", k, g, ok, w)
		}
	}
	jain := 0.9
	r.Jain = &jain
	if got := Extract(report.Summarize(r, nil, 0)); got["jain"] != 0.9 {
		t.Errorf("jain = %v, want 0.9", got["jain"])
	}
	if got := Extract(nil); len(got) != 0 {
		t.Errorf("Extract(nil) = %v", got)
	}
}

// The pause time is summed in port order: a float sum in map order would
// differ between calls. p00's 1 s comes first; each 5e-11 µs after it is
// below half its ulp and lost, where added to each other first they are not.
func TestSweepExtractPauseIsReproducible(t *testing.T) {
	sum := &report.Summary{SimSeconds: 1, PFCPauseFraction: map[string]float64{"p00": 1}}
	for i := 1; i <= 20; i++ {
		sum.PFCPauseFraction[fmt.Sprintf("p%02d", i)] = 5e-17
	}
	for range 10 {
		if got := Extract(sum)["pfc_pause_us"]; got != 1e6 {
			t.Fatalf("pfc_pause_us = %v, want 1e6 (summed in port order)", got)
		}
	}
}

func TestSweepExtractNil(t *testing.T) {
	if got := Extract(nil); len(got) != 0 {
		t.Errorf("Extract(nil) = %v", got)
	}
}

func TestSweepAggregate(t *testing.T) {
	tests := []struct {
		values        []float64
		mean, lo, hi  float64
		n             int
		exactInterval bool
	}{
		// s = 1.5811, t(0.975, 4) = 2.7764, half-width 1.9632
		{[]float64{1, 2, 3, 4, 5}, 3, 3 - 1.9632, 3 + 1.9632, 5, false},
		// s = √2, t(0.975, 1) = 12.7062, half-width 12.7062
		{[]float64{1, 3}, 2, 2 - 12.7062, 2 + 12.7062, 2, false},
		// s = 3.0277, t(0.975, 9) = 2.2622, half-width 2.1659
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, 5.5, 5.5 - 2.1659, 5.5 + 2.1659, 10, false},
		{[]float64{7}, 7, 7, 7, 1, true},
		{[]float64{0.1, 0.1, 0.1}, 0.1, 0.1, 0.1, 3, true},
		{nil, 0, 0, 0, 0, true},
	}
	for _, tt := range tests {
		st := Aggregate(tt.values)
		tol := 1e-4
		if tt.exactInterval {
			tol = 0
		}
		if st.N != tt.n || math.Abs(st.Mean-tt.mean) > 1e-12 || math.Abs(st.Lo-tt.lo) > tol || math.Abs(st.Hi-tt.hi) > tol {
			t.Errorf("Aggregate(%v) = %+v, want mean %v [%v, %v] n %d", tt.values, st, tt.mean, tt.lo, tt.hi, tt.n)
		}
	}
}

func TestSweepSummarize(t *testing.T) {
	p := Point{Index: 3, Values: []string{"10"}}
	values := []map[string]float64{
		{"fct_p99": 2, "jain": 0.5, "drops": 0},
		nil, // not finished
		{"fct_p99": 4, "drops": 0},
	}
	r := Summarize(p, []string{"runs/p3-s1", "runs/p3-s2", "runs/p3-s3"}, values)
	if r.Index != 3 || r.Done != 2 || len(r.Runs) != 3 || r.Runs[1] != "runs/p3-s2" {
		t.Errorf("result %+v", r)
	}
	if st := r.Metrics["fct_p99"]; st.N != 2 || st.Mean != 3 || !(st.Lo < 3 && st.Hi > 3) {
		t.Errorf("fct_p99 %+v", st)
	}
	if st := r.Metrics["jain"]; st != (Stat{Mean: 0.5, Lo: 0.5, Hi: 0.5, N: 1}) {
		t.Errorf("jain from one seed %+v, want lo = hi = mean", st)
	}
	if st := r.Metrics["drops"]; st != (Stat{N: 2}) {
		t.Errorf("drops %+v", st)
	}
	if _, ok := r.Metrics["fct_mean"]; ok || len(r.Metrics) != 3 {
		t.Errorf("metrics %v: want only fct_p99, jain, drops", r.Metrics)
	}
	none := Summarize(p, []string{"", ""}, []map[string]float64{nil, nil})
	if none.Done != 0 || none.Metrics == nil || len(none.Metrics) != 0 {
		t.Errorf("no finished run: %+v", none)
	}
}

func TestSweepWriteCSV(t *testing.T) {
	spec := Spec{Axes: []Axis{{"cc.params.wr", []string{"1", "10"}}, {"name", []string{`say "hi"`}}}, Seeds: []uint64{1, 2}}
	points := []PointResult{
		{Point: Point{Index: 1, Values: []string{"10", `say "hi"`}}, Done: 1,
			Metrics: map[string]Stat{"flows_unfinished": {Mean: 2, Lo: 2, Hi: 2, N: 1}}},
		{Point: Point{Index: 0, Values: []string{"1", `say "hi"`}}, Done: 2,
			Metrics: map[string]Stat{"fct_mean": {Mean: 1.5, Lo: 0.25, Hi: 2.75, N: 2}, "max_queue": {Mean: 1.2e6, Lo: 1e6, Hi: 1.4e6, N: 2}}},
	}
	var buf bytes.Buffer
	if err := WriteCSV(&buf, spec, points); err != nil {
		t.Fatal(err)
	}
	header := "cc.params.wr,name,runs_done," +
		"fct_mean_mean,fct_mean_lo,fct_mean_hi,fct_p50_mean,fct_p50_lo,fct_p50_hi,fct_p99_mean,fct_p99_lo,fct_p99_hi," +
		"fct_p50_b0_mean,fct_p50_b0_lo,fct_p50_b0_hi,fct_p99_b0_mean,fct_p99_b0_lo,fct_p99_b0_hi," +
		"fct_p50_b1_mean,fct_p50_b1_lo,fct_p50_b1_hi,fct_p99_b1_mean,fct_p99_b1_lo,fct_p99_b1_hi," +
		"fct_p50_b2_mean,fct_p50_b2_lo,fct_p50_b2_hi,fct_p99_b2_mean,fct_p99_b2_lo,fct_p99_b2_hi," +
		"fct_p50_b3_mean,fct_p50_b3_lo,fct_p50_b3_hi,fct_p99_b3_mean,fct_p99_b3_lo,fct_p99_b3_hi," +
		"fct_p50_b4_mean,fct_p50_b4_lo,fct_p50_b4_hi,fct_p99_b4_mean,fct_p99_b4_lo,fct_p99_b4_hi," +
		"max_queue_mean,max_queue_lo,max_queue_hi,queue_p99_mean,queue_p99_lo,queue_p99_hi," +
		"pfc_pause_us_mean,pfc_pause_us_lo,pfc_pause_us_hi,goodput_gbps_mean,goodput_gbps_lo,goodput_gbps_hi," +
		"jain_mean,jain_lo,jain_hi,drops_mean,drops_lo,drops_hi,flows_unfinished_mean,flows_unfinished_lo,flows_unfinished_hi\n"
	// 20 metrics: fct_mean, 12 empty, max_queue, 6 empty (point 0);
	// 19 empty, flows_unfinished (point 1)
	row0 := `1,"say ""hi""",2,1.5,0.25,2.75` + strings.Repeat(",,,", 12) + ",1.2e+06,1e+06,1.4e+06" + strings.Repeat(",,,", 6) + "\n"
	row1 := `10,"say ""hi""",1,,,` + strings.Repeat(",,,", 18) + ",2,2,2\n"
	if got := buf.String(); got != header+row0+row1 {
		t.Errorf("sweep.csv:\n%s\nwant:\n%s", got, header+row0+row1)
	}
	bad := []struct {
		name   string
		points []PointResult
		err    string
	}{
		{"values for other axes", []PointResult{{Point: Point{Index: 2, Values: []string{"1"}}}}, "point 2 has 1 values for 2 axes"},
		{"point twice", []PointResult{{Point: Point{Index: 0, Values: []string{"1", "x"}}}, {Point: Point{Index: 0, Values: []string{"1", "x"}}}}, "point 0 is given twice"},
	}
	for _, tt := range bad {
		buf.Reset()
		err := WriteCSV(&buf, spec, tt.points)
		if err == nil || !strings.Contains(err.Error(), tt.err) || buf.Len() != 0 {
			t.Errorf("%s: error %v, %d bytes written; want %q and nothing", tt.name, err, buf.Len(), tt.err)
		}
	}
}
