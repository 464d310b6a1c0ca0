package report

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"cclab/cc"
	"cclab/sim"
)

func TestNanos(t *testing.T) {
	cases := []struct {
		ps   sim.Time
		want string
	}{
		{0, "0"}, {1000, "1"}, {20960, "20.96"}, {862704000, "862704"}, {1, "0.001"}, {1500, "1.5"}, {-2500, "-2.5"},
	}
	for _, c := range cases {
		if got := Nanos(c.ps); got != c.want {
			t.Errorf("Nanos(%d) = %q, want %q", c.ps, got, c.want)
		}
	}
}

// HPCC's analysis: nearest rank v[int(n*p)].
func TestPercentile(t *testing.T) {
	v := []float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	for p, want := range map[float64]float64{0: 1, 0.5: 6, 0.95: 10, 0.99: 10, 0.1: 2} {
		if got := Percentile(v, p); got != want {
			t.Errorf("p%.2f = %g, want %g", p, got, want)
		}
	}
}

func TestSummarizeAndFlows(t *testing.T) {
	r := &sim.Result{
		SimTime: 2 * sim.Millisecond,
		Flows: []sim.FlowResult{
			{ID: 0, Src: "h0", Dst: "h1", Size: 5_000, Start: 0, Finish: 20 * sim.Microsecond, FCT: 20 * sim.Microsecond, IdealFCT: 10 * sim.Microsecond, Finished: true, Started: true, Algorithm: "none"},
			{ID: 1, Src: "h0", Dst: "h1", Size: 5_000, Start: 0, Finish: 9 * sim.Microsecond, FCT: 9 * sim.Microsecond, IdealFCT: 10 * sim.Microsecond, Finished: true, Started: true, Algorithm: "none"},
			{ID: 2, Src: "h1", Dst: "h0", Size: 20_000_000, Start: 1500, IdealFCT: 2 * sim.Millisecond, Started: true, Algorithm: "none"},
			{ID: 3, Src: "h1", Dst: "h0", Size: 1, Start: -1, IdealFCT: sim.Microsecond, Algorithm: "none"},
		},
		Ports: []sim.PortResult{{Name: "s0->h1", QueueP50: 10, QueueP99: 2000, QueueMax: 3000, Utilization: 0.5, PauseFraction: 0.25}},
	}
	s := Summarize(r, []byte(`{"name":"x"}`), 0)
	if s.FlowsTotal != 4 || s.FlowsFinished != 2 || s.FlowsUnfinished != 2 {
		t.Errorf("flows %d/%d/%d", s.FlowsTotal, s.FlowsFinished, s.FlowsUnfinished)
	}
	// slowdowns 2 and 0.9, the second clamped to 1
	if s.FCTSlowdown == nil || s.FCTSlowdown.Mean != 1.5 || s.FCTSlowdown.P50 != 2 {
		t.Errorf("slowdown %+v", s.FCTSlowdown)
	}
	b := s.FCTSlowdownBySize
	if len(b) != 5 || b[0].Count != 2 || b[4].Count != 0 || b[4].Hi != nil || b[4].Mean != nil || *b[0].Hi != 10_000 {
		t.Errorf("buckets %+v", b)
	}
	// 10 KB of finished payload in 2 ms: 0.04 Gbps
	if s.GoodputGbps != 0.04 {
		t.Errorf("goodput %g Gbps, want 0.04", s.GoodputGbps)
	}
	if g := Summarize(&sim.Result{Flows: r.Flows}, nil, 0).GoodputGbps; g != 0 {
		t.Errorf("goodput without simulated time: %g, want 0", g)
	}
	if q := s.Queues["s0->h1"]; q.P99 != 2000 || s.PFCPauseFraction["s0->h1"] != 0.25 || s.Utilization["s0->h1"] != 0.5 {
		t.Errorf("port stats %+v", s)
	}
	var buf bytes.Buffer
	if err := WriteFlows(&buf, r); err != nil {
		t.Fatal(err)
	}
	want := FlowsHeader + "\n" +
		"0,h0,h1,5000,0,20000,20000,10000,2,none\n" +
		"1,h0,h1,5000,0,9000,9000,10000,0.9,none\n" +
		"2,h1,h0,20000000,1.5,,,2000000,,none\n" +
		"3,h1,h0,1,,,,1000,,none\n"
	if buf.String() != want {
		t.Errorf("flows.csv:\n%s\nwant:\n%s", buf.String(), want)
	}
	buf.Reset()
	if err := WriteSummary(&buf, s); err != nil || !strings.Contains(buf.String(), `"jain": null`) {
		t.Errorf("summary.json: %v\n%s", err, buf.String())
	}
}

// The vocabulary lists every built-in series and every registered
// algorithm's, each once, with a port or flow entity and a chart
// aggregation; its size buckets are the summary's.
func TestVocabulary(t *testing.T) {
	v := Vocab()
	seen := map[string]Metric{}
	for _, m := range v.Metrics {
		if _, dup := seen[m.Name]; dup {
			t.Errorf("%s listed twice", m.Name)
		}
		seen[m.Name] = m
		if (m.Entity != "port" && m.Entity != "flow") || (m.Agg != "max" && m.Agg != "mean") {
			t.Errorf("%+v", m)
		}
	}
	for _, want := range []struct{ name, entity, agg, unit string }{
		{"queue_bytes", "port", "max", "B"}, {"pfc_pause", "port", "max", ""}, {"throughput_bps", "flow", "mean", "bps"},
		{"qp_solve_ns", "flow", "mean", "ns"}, {"rcc_window_bytes", "flow", "mean", "B"},
	} {
		m, ok := seen[want.name]
		if !ok || m.Entity != want.entity || m.Agg != want.agg || m.Unit != want.unit {
			t.Errorf("%s: %+v", want.name, m)
		}
	}
	for _, a := range cc.Algorithms() {
		for _, s := range a.Series {
			if _, ok := seen[s.Name]; !ok {
				t.Errorf("%s's series %s missing", a.Name, s.Name)
			}
		}
	}
	sum := Summarize(&sim.Result{}, nil, 0)
	if len(v.SizeBuckets) != len(sum.FCTSlowdownBySize) {
		t.Fatalf("%d size buckets, the summary has %d", len(v.SizeBuckets), len(sum.FCTSlowdownBySize))
	}
	for i, b := range v.SizeBuckets {
		s := sum.FCTSlowdownBySize[i]
		if b.Lo != s.Lo || (b.Hi == nil) != (s.Hi == nil) || (b.Hi != nil && *b.Hi != *s.Hi) || b.Label == "" {
			t.Errorf("bucket %d: %+v, summary %+v", i, b, s)
		}
	}
}

// FlowRows are the rows of flows.csv: every cell of the CSV is the JSON
// value (times and FCTs in ns), and an empty cell is a null.
func TestFlowRowsMatchCSV(t *testing.T) {
	flows := []sim.FlowResult{
		{ID: 0, Src: "h0", Dst: "h1", Size: 5_000, Start: 1500, Finish: 21500, FCT: 20 * sim.Microsecond, IdealFCT: 10 * sim.Microsecond, Finished: true, Started: true, Algorithm: "hpcc"},
		{ID: 1, Src: "h1", Dst: "h0", Size: 20_000_000, Start: 0, IdealFCT: 2 * sim.Millisecond, Started: true, Algorithm: "dcqcn"},
		{ID: 2, Src: "h1", Dst: "h0", Size: 1, Start: -1, IdealFCT: sim.Microsecond, Algorithm: "none"},
	}
	var buf bytes.Buffer
	if err := WriteFlows(&buf, &sim.Result{Flows: flows}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")[1:]
	rows := FlowRows(flows)
	if len(rows) != len(lines) {
		t.Fatalf("%d rows, %d CSV lines", len(rows), len(lines))
	}
	num := func(v *float64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatFloat(*v, 'f', -1, 64)
	}
	for i, r := range rows {
		got := strings.Join([]string{strconv.Itoa(r.FlowID), r.Src, r.Dst, strconv.FormatInt(r.SizeBytes, 10),
			num(r.StartNs), num(r.FinishNs), num(r.FCTNs), num(&r.IdealFCTNs), num(r.Slowdown), r.CC}, ",")
		if got != lines[i] {
			t.Errorf("row %d: %s\nCSV:   %s", i, got, lines[i])
		}
	}
}
