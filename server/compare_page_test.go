package server

import (
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
