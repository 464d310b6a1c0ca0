package server

import (
	"strings"
	"testing"

	"cclab/store"
)

func TestCompareHumanUnits(t *testing.T) {
	for _, c := range []struct {
		name string
		v    float64
		want string
	}{
		{"switch_queues.p99", 301100, "301 KB"},
		{"queues.max", 1.5e6, "1.50 MB"},
		{"switch_queues.p50", 0, "0 B"},
		{"wall_seconds", 0.0123, "12.3 ms"},
		{"sim_seconds", 0.002, "2.00 ms"},
		{"events_per_second", 3.2e6, "3.20 M/s"},
		{"series_stats.qp_solve_ns.p50", 2500, "2.50 µs"},
		{"utilization.max", 0.987, "98.7%"},
		{"flows_finished", 12, "12"},
		{"fct_slowdown.p99", 3.011, "3.011"},
	} {
		if got := human(c.name, c.v); got != c.want {
			t.Errorf("human(%s, %v) = %q, want %q", c.name, c.v, got, c.want)
		}
	}
}

func TestComparePageBest(t *testing.T) {
	done := []string{store.StatusDone, store.StatusDone}
	if got := pageBest(compareRow{Name: "drops", Better: "lower", Best: []int{1}}, done); got != 1 {
		t.Errorf("one best: %d", got)
	}
	if got := pageBest(compareRow{Name: "drops", Better: "lower", Best: []int{0, 1}}, done); got != -1 {
		t.Errorf("a tie is marked: %d", got)
	}
	if got := pageBest(compareRow{Name: "wall_seconds", Better: "lower", Best: []int{0}}, done); got != -1 {
		t.Errorf("wall-clock is marked: %d", got)
	}
	if got := pageBest(compareRow{Name: "drops", Better: "lower", Best: []int{0}}, []string{store.StatusDone, store.StatusRunning}); got != -1 {
		t.Errorf("an unfinished comparison is marked: %d", got)
	}
}

func TestSameScenarioIgnoresCC(t *testing.T) {
	a, b, c := &store.Run{ScenarioID: "a"}, &store.Run{ScenarioID: "b"}, &store.Run{ScenarioID: "c"}
	da := []byte(`{"name":"x","cc":{"algorithm":"dcqcn","params":{"g":1}},"workload":[]}`)
	db := []byte(`{"workload":[], "cc":{"algorithm":"hpcc"},"name":"x"}`)
	dc := []byte(`{"name":"x","cc":{"algorithm":"hpcc"},"workload":[{}]}`)
	if !sameScenario([]*store.Run{a, b}, [][]byte{da, db}) {
		t.Error("runs differing only in cc are not the same scenario")
	}
	if !sameScenario([]*store.Run{a, a}, [][]byte{da, dc}) {
		t.Error("runs of one stored scenario are not the same scenario")
	}
	if sameScenario([]*store.Run{a, b, c}, [][]byte{da, db, dc}) {
		t.Error("runs of different workloads are the same scenario")
	}
}

func TestCompareColumns(t *testing.T) {
	run := func(id, algo, cc, params string) *store.Run {
		return &store.Run{ID: id, Algorithm: algo, Params: []byte(params),
			Scenario: []byte(`{"name":"x","topology":{"kind":"dumbbell","senders":2},"workload":[{"kind":"flows","flows":[{"src":"h0","dst":"r0","size":"1MB"}]}],"cc":` + cc + `}`)}
	}
	runs := []*store.Run{
		run("a", "dcqcn", `{"algorithm":"dcqcn"}`, `{"ai":20,"g":0.5}`),
		run("b", "dcqcn", `{"algorithm":"dcqcn","params":{"ai":40}}`, `{"ai":40,"g":0.5}`),
		run("c", "hpcc", `{"algorithm":"hpcc"}`, `{"ai":40,"eta":0.95}`),
	}
	cols, params := compareColumns(runs)
	var labels []string
	for _, c := range cols {
		labels = append(labels, c.Label)
	}
	if got := strings.Join(labels, "|"); got != "dcqcn, defaults|dcqcn, ai=40|hpcc" {
		t.Errorf("labels %s", got)
	}
	marked := func(i int) string {
		var out []string
		for _, p := range params[i].Items {
			if p.Differs {
				out = append(out, p.Name+"="+p.Value)
			}
		}
		return strings.Join(out, ",")
	}
	if marked(0) != "ai=20" || marked(1) != "ai=40" || marked(2) != "" {
		t.Errorf("marked %q %q %q", marked(0), marked(1), marked(2))
	}
}

func TestChangeRows(t *testing.T) {
	rows := changeRows(map[string]float64{"ai": 20}, []store.RunEvent{
		{AtPS: 3_000_000, Params: map[string]float64{"ai": 40}},
		{AtPS: 5_000_000, Params: map[string]float64{"ai": 60, "hai": 1}},
	})
	if len(rows) != 2 || rows[0].Value != "ai: 20 → 40" || rows[1].Value != "ai: 40 → 60, hai → 1" {
		t.Errorf("rows %+v", rows)
	}
}
