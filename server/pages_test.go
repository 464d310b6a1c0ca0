package server

import (
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestPages renders every page and fragment, with the content each must
// carry, and the 4xx of bad requests.
func TestPages(t *testing.T) {
	s := newTestServer(t, Config{})
	a := s.startRun(map[string]any{"scenarioId": "incast-8to1", "cc": map[string]any{"algorithm": "hpcc"}})
	b := s.startRun(map[string]any{"scenarioId": "incast-8to1", "cc": map[string]any{"algorithm": "dcqcn"}})
	s.waitStatus(a, 30*time.Second, "done")
	x := s.startRun(map[string]any{"scenarioId": "incast-8to1", "cc": map[string]any{"algorithm": "expresspass"}})
	s.waitStatus(b, 30*time.Second, "done")
	s.waitStatus(x, 30*time.Second, "done")
	cards := regexp.MustCompile(`<li class="card"`)
	tests := []struct {
		name, method, path, body string
		status                   int
		want                     []string
		count                    *regexp.Regexp
		min                      int
	}{
		{"home", "GET", "/", "", 200, []string{"Scenario library", "incast-8to1", "Reproduces: the MPCC thesis", "Reproduces: the RCC paper", "Reproduces: the Dolce-RC paper", `hx-get="/ui/sketch/`, "Look for:", "Takes under a second", a}, cards, 19},
		{"card sketch", "GET", "/ui/sketch/incast-8to1", "", 200, []string{"<svg", `data-node="s0"`}, nil, 0},
		{"card sketch, too large", "GET", "/ui/sketch/fattree1024-permutation-hpcc", "", 200, []string{"too large to sketch"}, nil, 0},
		{"card sketch, unknown", "GET", "/ui/sketch/nope", "", 404, nil, nil, 0},
		{"new scenario", "GET", "/lab", "", 200, []string{`id="run-btn"`, `\"my-scenario\"`, `data-path="topology.hostLink.rate"`, "hx-get=\"/ui/params\"", `data-path="switch.dataClasses"`, `data-path="switch.routing"`, `value="spray"`}, nil, 0},
		{"share link by short name", "GET", "/s/incast-8to1", "", 200, []string{`incast-8to1`, `data-port="s0-&gt;r0"`}, nil, 0},
		{"lab following a run", "GET", "/s/incast-8to1?run=" + a, "", 200, []string{`"runId":"` + a}, nil, 0},
		{"unknown scenario", "GET", "/s/nope", "", 404, []string{"no scenario"}, nil, 0},
		{"run page", "GET", "/r/" + a, "", 200, []string{`id="summary-table"`, "flows finished", "8 of 8", "/api/runs/" + a + "/flows.csv", "FCT slowdown by flow size", "Jain"}, nil, 0},
		{"run page, credit drops", "GET", "/r/" + x, "", 200, []string{"expresspass", "credit drops", "most at "}, nil, 0},
		{"unknown run", "GET", "/r/nope", "", 404, []string{"no run"}, nil, 0},
		{"compare picker", "GET", "/compare", "", 200, []string{`name="runs"`, a, b}, nil, 0},
		{"compare two", "GET", "/compare?runs=" + a + "," + b, "", 200, []string{`id="compare-table"`, "hpcc", "dcqcn", `class="best"`, `id="run-all"`}, nil, 0},
		{"compare unknown", "GET", "/compare?runs=" + a + ",nope", "", 404, []string{"no run"}, nil, 0},
		{"params fragment", "GET", "/ui/params?algo=mpcc", "", 200, []string{`data-path="cc.params.wr"`, `data-live="true"`, "Range"}, nil, 0},
		{"params of an unknown algorithm", "GET", "/ui/params?algo=nope", "", 404, []string{"no algorithm"}, nil, 0},
		{"topology fragment", "POST", "/ui/topology", `{"hosts":["h0","h1"],"ports":["h0->s0","s0->h0","h1->s0","s0->h1"]}`, 200, []string{"<svg", `data-port="h0-&gt;s0"`, `data-node="s0"`}, nil, 0},
		{"topology fragment, bad JSON", "POST", "/ui/topology", `{`, 400, nil, nil, 0},
		{"static file", "GET", "/static/js/charts/index.js", "", 200, []string{"export { timeChart }"}, nil, 0},
		{"vendored licence", "GET", "/static/vendor/uplot/LICENSE", "", 200, []string{"MIT"}, nil, 0},
		{"unknown static file", "GET", "/static/nope.js", "", 404, nil, nil, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if tc.body != "" {
				body = tc.body
			}
			code, data := s.do(tc.method, tc.path, body)
			if code != tc.status {
				t.Fatalf("status %d, want %d: %.300s", code, tc.status, data)
			}
			for _, w := range tc.want {
				if !strings.Contains(string(data), w) {
					t.Errorf("no %q in the answer", w)
				}
			}
			if tc.count != nil {
				if n := len(tc.count.FindAll(data, -1)); n < tc.min {
					t.Errorf("%d matches of %s, want at least %d", n, tc.count, tc.min)
				}
			}
		})
	}
	// credit drops only where a credit queue dropped some
	if _, page := s.do("GET", "/r/"+a, nil); strings.Contains(string(page), "credit drops") {
		t.Error("an HPCC run page lists credit drops")
	}
	// pages answer HTML
	req, _ := http.NewRequest("GET", s.ts.URL+"/lab", nil)
	resp, err := s.ts.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/html") {
		t.Fatalf("content type %q", ct)
	}
}

// TestClassPages: the class page, the Class link, the featured group of
// the home page, the lab's feature toggle and the run page's controls, as
// a student, another student and the instructor see them.
func TestClassPages(t *testing.T) {
	const instructor = "teach-class"
	s := newTestServer(t, Config{InstructorToken: instructor})
	bearer := []string{"Authorization", "Bearer " + instructor}
	// two students with tokens of their own (a page request without one
	// would be given a new one)
	var alice, bob struct{ Token string }
	s.must(201, "POST", "/api/token", nil, &alice)
	s.must(201, "POST", "/api/token", nil, &bob)
	var run struct{ ID string }
	s.must(201, "POST", "/api/runs", map[string]any{"scenarioId": "incast-8to1"}, &run, "X-Cclab-Token", alice.Token)
	id := run.ID
	s.waitStatus(id, 30*time.Second, "done")
	check := func(name, path string, want, not []string, header ...string) {
		t.Helper()
		code, data := s.do("GET", path, nil, header...)
		if code != 200 {
			t.Fatalf("%s: GET %s: %d %.300s", name, path, code, data)
		}
		for _, w := range want {
			if !strings.Contains(string(data), w) {
				t.Errorf("%s: no %q", name, w)
			}
		}
		for _, n := range not {
			if strings.Contains(string(data), n) {
				t.Errorf("%s: %q shown", name, n)
			}
		}
	}
	check("class, signed out", "/class", []string{`id="class-signin"`, "/instructor?token="},
		[]string{`id="class-owners"`, `id="limits-form"`, "ip:127.0.0.1", `href="/class"`})
	check("class, instructor", "/class", []string{`id="class-owners"`, `data-owner="t:`, `href="/r/` + id + `"`,
		`id="limits-form"`, `data-limit="runsBurst"`, `href="/class" aria-current="page"`, "/static/js/class.js"}, nil, bearer...)
	// the run's owner has its controls; another student only the note
	check("run page, owner", "/r/"+id, []string{`id="run-controls"`, `id="pin-btn"`, `id="delete-btn"`, `"mine":true`},
		[]string{`id="foreign-note"`}, "X-Cclab-Token", alice.Token)
	check("run page, someone else", "/r/"+id, []string{`id="foreign-note"`, "belongs to someone else", `"mine":false`},
		[]string{`id="run-controls"`, `id="delete-btn"`}, "X-Cclab-Token", bob.Token)
	check("run page, instructor", "/r/"+id, []string{`id="run-controls"`}, []string{`id="foreign-note"`}, append([]string{"X-Cclab-Token", bob.Token}, bearer...)...)
	// featuring
	check("lab, student", "/s/incast-8to1", nil, []string{`id="feature-btn"`})
	check("lab, instructor", "/s/incast-8to1", []string{`id="feature-btn" aria-pressed="false"`}, nil, bearer...)
	check("home, nothing featured", "/", nil, []string{`id="featured"`})
	s.must(200, "POST", "/api/scenarios/fairness-2flows-hpcc/feature", nil, nil, bearer...)
	s.must(200, "POST", "/api/scenarios/incast-8to1/feature", nil, nil, bearer...)
	_, home := s.do("GET", "/", nil)
	h := string(home)
	f, lib := strings.Index(h, `id="featured"`), strings.Index(h, `id="library"`)
	if f < 0 || lib < f || !strings.Contains(h, "This class's exercises") {
		t.Fatalf("the home page's featured group at %d, the library at %d", f, lib)
	}
	group := h[f:lib]
	if a, b := strings.Index(group, `incast-8to1`), strings.Index(group, "fairness-2flows-hpcc"); a < 0 || b < 0 || b > a {
		t.Errorf("the featured group is not in the instructor's order (%d, %d)", b, a)
	}
	check("lab, instructor, featured", "/s/incast-8to1", []string{`id="feature-btn" aria-pressed="true"`}, nil, bearer...)
	check("class, featured", "/class", []string{`data-unfeature=`, "incast-8to1"}, nil, bearer...)
}
