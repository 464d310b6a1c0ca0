package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"cclab/store"
)

// TestSweepPages renders the sweeps' list and a sweep's page from what the
// API says of them, with its owner's buttons only for its owner; the lab
// carries the sweep panel and every page links to the list.
func TestSweepPages(t *testing.T) {
	s := newTestServer(t, Config{Concurrency: 2})
	code, data := s.do("GET", "/sweeps", nil)
	if code != 200 || !strings.Contains(string(data), `id="no-sweeps"`) {
		t.Fatalf("the empty list: %d %.300s", code, data)
	}
	// its owner and someone else, with tokens of their own (a page
	// request without one would be given a new one)
	var alice, bob struct{ Token string }
	s.must(201, "POST", "/api/token", nil, &alice)
	s.must(201, "POST", "/api/token", nil, &bob)
	owner := []string{"X-Cclab-Token", alice.Token}
	other := []string{"X-Cclab-Token", bob.Token}
	var created struct{ ID string }
	s.must(http.StatusCreated, "POST", "/api/sweeps", map[string]any{"scenarioId": "incast-8to1", "name": "jitter & size",
		"grid": []string{"workload[0].jitter=0us,10us", "workload[0].size=100KB,200KB"}, "seeds": "1-2"}, &created, owner...)
	s.waitSweep(created.ID, store.SweepDone, 60*time.Second)
	for _, tc := range []struct {
		path   string
		header []string
		status int
		want   []string
		not    []string
	}{
		{"/sweeps", nil, 200, []string{`id="sweeps-table"`, `href="/sweeps/` + created.ID + `"`, "jitter &amp; size",
			"workload[0].jitter × workload[0].size", `<span class="badge done">done</span>`, "8 / 8", `aria-current="page"`}, nil},
		{"/sweeps/" + created.ID, owner, 200, []string{"Sweep: jitter &amp; size", `href="/s/` + libraryIDOf(t, s, "incast-8to1") + `"`, ">incast-8to1<",
			"workload[0].jitter ∈ {0us, 10us} × workload[0].size ∈ {100KB, 200KB}", "2 seeds:", "1, 2",
			`value="8"`, "8 of 8 runs done", "/api/sweeps/" + created.ID + "/sweep.csv", "/api/sweeps/" + created.ID + "/sweep.json",
			`id="delete-btn"`, `id="cancel-btn" hidden`, `id="copy-link"`, `data-axes="2"`, `"id":"` + created.ID + `"`, `"mine":true`, "/static/js/sweep.js"},
			[]string{`id="foreign-note"`}},
		// someone else watches: no buttons that would be refused
		{"/sweeps/" + created.ID, other, 200, []string{`id="foreign-note"`, `"mine":false`, "/sweep.csv"}, []string{`id="delete-btn"`, `id="cancel-btn"`}},
		{"/sweeps/nope", nil, 404, []string{"no sweep"}, nil},
		{"/lab", nil, 200, []string{`id="sweep-btn"`, `id="sweep-panel"`, `id="sw-values-0"`, `id="sw-seeds"`, `href="/sweeps"`}, nil},
	} {
		code, data := s.do("GET", tc.path, nil, tc.header...)
		if code != tc.status {
			t.Fatalf("%s: status %d, want %d: %.300s", tc.path, code, tc.status, data)
		}
		for _, w := range tc.want {
			if !strings.Contains(string(data), w) {
				t.Errorf("%s lacks %q", tc.path, w)
			}
		}
		for _, w := range tc.not {
			if strings.Contains(string(data), w) {
				t.Errorf("%s has %q", tc.path, w)
			}
		}
	}
}

func libraryIDOf(t *testing.T, s *testServer, name string) string {
	t.Helper()
	var sc struct{ ID string }
	s.must(http.StatusOK, "GET", "/api/scenarios/"+name, nil, &sc)
	return sc.ID
}
