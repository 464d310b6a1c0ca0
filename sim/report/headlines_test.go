package report

import (
	"encoding/json"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"cclab/sim"
)

// lookup reads a headline from summary.json as a JSON document, by its
// name alone: the literal model Headline.Value is checked against. A path
// is keys separated by dots, "key[i]" indexes a list, and a last "max" that
// is not a key is the largest value over a map of ports (of each port's
// "max" when the values are objects). A null, an empty map and an empty
// size bucket have no value.
func lookup(doc map[string]any, name string) (float64, bool) {
	var cur any = doc
	for _, key := range strings.Split(name, ".") {
		idx := -1
		if i := strings.IndexByte(key, '['); i >= 0 {
			idx, _ = strconv.Atoi(key[i+1 : len(key)-1])
			key = key[:i]
		}
		m, ok := cur.(map[string]any)
		if !ok {
			return 0, false
		}
		next, ok := m[key]
		if !ok && key == "max" {
			best, found := math.Inf(-1), false
			for _, v := range m {
				if o, ok := v.(map[string]any); ok {
					v = o["max"]
				}
				if f, ok := v.(float64); ok && f > best {
					best, found = f, true
				}
			}
			return best, found
		}
		cur = next
		if idx >= 0 {
			list, ok := cur.([]any)
			if !ok || idx >= len(list) {
				return 0, false
			}
			cur = list[idx]
			if b, ok := cur.(map[string]any); ok && b["count"] == 0.0 {
				return 0, false
			}
		}
	}
	v, ok := cur.(float64)
	return v, ok
}

// Every headline reads the number its name points at in summary.json, and
// has none where the document has none.
func TestHeadlines(t *testing.T) {
	jain := 0.875
	full := &sim.Result{
		SimTime: 2 * sim.Millisecond, Events: 1000, Jain: &jain,
		Flows: []sim.FlowResult{
			{ID: 0, Size: 5_000, FCT: 20 * sim.Microsecond, IdealFCT: 10 * sim.Microsecond, Finished: true, Started: true},
			{ID: 1, Size: 50_000, FCT: 90 * sim.Microsecond, IdealFCT: 30 * sim.Microsecond, Finished: true, Started: true},
			{ID: 2, Size: 20_000_000, IdealFCT: 2 * sim.Millisecond, Started: true},
		},
		Ports: []sim.PortResult{
			{Name: "s0->h1", QueueP50: 10, QueueP99: 2000, QueueMax: 3000, Utilization: 0.5, PauseFraction: 0.25},
			{Name: "s0->h2", QueueP50: 0, QueueP99: 7000, QueueMax: 9000, Utilization: 0.75, PauseFraction: 0},
		},
		SeriesStats:  []sim.SeriesStats{{Name: "qp_solve_ns", Count: 3, Mean: 1200, P50: 1000, P99: 2500, Max: 2600}},
		SwitchQueues: sim.QueueDist{Ports: 2, P50: 5, P90: 100, P99: 2000, P999: 8000, Max: 9000},
	}
	cases := []struct {
		name    string
		res     *sim.Result
		missing []string // headlines this summary has no value for
	}{
		{"everything", full, []string{"fct_slowdown_by_size[2].p50", "fct_slowdown_by_size[2].p99",
			"fct_slowdown_by_size[3].p50", "fct_slowdown_by_size[3].p99", "fct_slowdown_by_size[4].p50", "fct_slowdown_by_size[4].p99"}},
		{"empty", &sim.Result{}, []string{"fct_slowdown.mean", "fct_slowdown.p50", "fct_slowdown.p95", "fct_slowdown.p99",
			"fct_slowdown_by_size[0].p50", "fct_slowdown_by_size[0].p99", "fct_slowdown_by_size[1].p50", "fct_slowdown_by_size[1].p99",
			"fct_slowdown_by_size[2].p50", "fct_slowdown_by_size[2].p99", "fct_slowdown_by_size[3].p50", "fct_slowdown_by_size[3].p99",
			"fct_slowdown_by_size[4].p50", "fct_slowdown_by_size[4].p99", "queues.max", "utilization.max",
			"pfc_pause_fraction.max", "jain", "series_stats.qp_solve_ns.p50", "series_stats.qp_solve_ns.p99"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			sum := Summarize(tc.res, json.RawMessage(`{"name":"x"}`), 0)
			b, err := json.Marshal(sum)
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := json.Unmarshal(b, &doc); err != nil {
				t.Fatal(err)
			}
			seen := map[string]bool{}
			for _, h := range Headlines() {
				if seen[h.Name] {
					t.Errorf("%s listed twice", h.Name)
				}
				seen[h.Name] = true
				got, ok := h.Value(sum)
				want, wok := lookup(doc, h.Name)
				if ok != wok || got != want {
					t.Errorf("%s = %v (%v), summary.json has %v (%v)", h.Name, got, ok, want, wok)
				}
				if ok == slices.Contains(tc.missing, h.Name) {
					t.Errorf("%s: has a value %v, want %v", h.Name, ok, !ok)
				}
				if h.Better != "" && h.Better != "lower" && h.Better != "higher" {
					t.Errorf("%s: better %q", h.Name, h.Better)
				}
			}
		})
	}
	// the values themselves, for one: the literal model could share a bug
	sum := Summarize(full, nil, 0)
	for name, want := range map[string]float64{"queues.max": 9000, "utilization.max": 0.75, "pfc_pause_fraction.max": 0.25,
		"jain": 0.875, "series_stats.qp_solve_ns.p99": 2500, "fct_slowdown_by_size[1].p50": 3, "switch_queues.p99": 2000} {
		for _, h := range Headlines() {
			if h.Name == name {
				if got, ok := h.Value(sum); !ok || got != want {
					t.Errorf("%s = %v (%v), want %v", name, got, ok, want)
				}
			}
		}
	}
}
