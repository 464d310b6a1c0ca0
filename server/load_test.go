package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"cclab/scenarios"
	"cclab/sim"
	"cclab/sim/report"
)

// headless runs a scenario document the way `cclab run` does and returns
// flows.csv and series.csv.
func headless(t *testing.T, doc []byte) (flows, series []byte) {
	t.Helper()
	sc, err := scenarios.Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := scenarios.Build(sc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := sim.New(*cfg)
	if err != nil {
		t.Fatal(err)
	}
	var sb, fb bytes.Buffer
	sw := report.NewSeriesWriter(&sb, s)
	s.Subscribe(sw)
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	if err := sw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteFlows(&fb, s.Result()); err != nil {
		t.Fatal(err)
	}
	return fb.Bytes(), sb.Bytes()
}

// sortedRows sorts a CSV's rows (the API orders series rows by time then
// series, the engine by time then its own order).
func sortedRows(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// TestLoadTwentyRuns submits 20 runs at once to a server that simulates 2
// at a time: all complete, no sample or flow is lost (each run's exports
// equal a headless run of the same scenario and seed), and never more than
// 2 ran at once.
func TestLoadTwentyRuns(t *testing.T) {
	const runs, slots = 20, 2
	s := newTestServer(t, Config{Concurrency: slots, ClientRuns: -1})
	sc := smallScenario("load", "dcqcn", "1ms")
	ids := make([]string, runs)
	var wg sync.WaitGroup
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			code, data := s.do("POST", "/api/runs", map[string]any{"scenario": sc, "seed": i + 1})
			var out struct{ ID string }
			if code != http.StatusCreated || json.Unmarshal(data, &out) != nil {
				t.Errorf("run %d: %d %s", i, code, data)
				return
			}
			ids[i] = out.ID
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	type span struct{ start, end time.Time }
	var spans []span
	for i, id := range ids {
		r := s.waitStatus(id, 60*time.Second, "done")
		spans = append(spans, span{*r.StartedAt, *r.FinishedAt})
		doc, err := scenarios.SetSeed(mustJSON(t, sc), uint64(i+1))
		if err != nil {
			t.Fatal(err)
		}
		wantFlows, wantSeries := headless(t, doc)
		_, flows := s.do("GET", "/api/runs/"+id+"/flows.csv", nil)
		_, series := s.do("GET", "/api/runs/"+id+"/series.csv", nil)
		if !bytes.Equal(flows, wantFlows) {
			t.Fatalf("run %d: flows.csv differs from the headless run", i)
		}
		if sortedRows(series) != sortedRows(wantSeries) {
			t.Fatalf("run %d: series.csv differs from the headless run (%d and %d bytes)", i, len(series), len(wantSeries))
		}
	}
	// the most runs at once: sweep over start and end instants
	type edge struct {
		at    time.Time
		delta int
	}
	var edges []edge
	for _, sp := range spans {
		edges = append(edges, edge{sp.start, +1}, edge{sp.end, -1})
	}
	sort.Slice(edges, func(i, j int) bool {
		if !edges[i].at.Equal(edges[j].at) {
			return edges[i].at.Before(edges[j].at)
		}
		return edges[i].delta < edges[j].delta
	})
	cur, most := 0, 0
	for _, e := range edges {
		cur += e.delta
		most = max(most, cur)
	}
	if most > slots {
		t.Fatalf("%d runs ran at once with %d slots", most, slots)
	}
	t.Logf("at most %d runs at once (%d slots)", most, slots)
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
