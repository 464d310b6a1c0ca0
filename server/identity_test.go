package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The four kinds of requester of the ownership matrix: the run's owner (an
// owner token), another student (a token of their own), an instructor
// (the instructor token) and an anonymous client (no token: owned by its
// address, which is not the owner's).
type requester struct {
	name    string
	headers []string
}

func requesters(t *testing.T, s *testServer, instructor string) (owner, other, instr, anon requester) {
	t.Helper()
	tok := func() string {
		var v struct{ Token string }
		s.must(201, "POST", "/api/token", nil, &v)
		return v.Token
	}
	return requester{"owner", []string{tokenHeader, tok()}},
		requester{"other student", []string{tokenHeader, tok()}},
		requester{"instructor", []string{"Authorization", "Bearer " + instructor}},
		requester{"anonymous", nil}
}

// Every state-changing route of a run, by owner, another student, an
// instructor and an anonymous client: only the owner and the instructor
// may; the others get 403 naming the run, and the run is unchanged;
// everyone may read it.
func TestOwnershipMatrix(t *testing.T) {
	const instructor = "teach-1234"
	s := newTestServer(t, Config{InstructorToken: instructor, Concurrency: 2})
	owner, other, instr, anon := requesters(t, s, instructor)
	sc := smallScenario("owned", "dcqcn", "50ms")
	// a run that stays live (paced) for the control routes, and one that
	// finishes for delete
	start := func(by requester, speed float64) string {
		var v struct{ ID string }
		code, data := s.do("POST", "/api/runs", map[string]any{"scenario": sc, "speed": speed}, by.headers...)
		if code != 201 {
			t.Fatalf("%s starts a run: %d %s", by.name, code, data)
		}
		json.Unmarshal(data, &v)
		return v.ID
	}
	type route struct {
		method, path string
		body         any
		ok           int // status when allowed
	}
	routes := func(id string) []route {
		return []route{
			{"POST", "/api/runs/" + id + "/pause", nil, 200},
			{"POST", "/api/runs/" + id + "/resume", nil, 200},
			{"POST", "/api/runs/" + id + "/speed", map[string]any{"speed": 20}, 200},
			{"POST", "/api/runs/" + id + "/params", map[string]any{"g": 0.01}, 200},
			{"POST", "/api/runs/" + id + "/pin", nil, 200},
			{"POST", "/api/runs/" + id + "/unpin", nil, 200},
			{"POST", "/api/runs/" + id + "/cancel", nil, 200},
		}
	}
	for _, by := range []requester{owner, other, instr, anon} {
		allowed := by.name == "owner" || by.name == "instructor"
		id := start(owner, 10) // 10 µs of simulated time per second: live for the whole table
		s.waitStatus(id, 10*time.Second, "running")
		for _, rt := range routes(id) {
			code, data := s.do(rt.method, rt.path, rt.body, by.headers...)
			switch {
			case allowed && code != rt.ok:
				t.Errorf("%s: %s %s: %d, want %d: %s", by.name, rt.method, rt.path, code, rt.ok, data)
			case !allowed:
				checkError(t, code, data, 403, "id", "")
				if !strings.Contains(string(data), "run "+id) {
					t.Errorf("%s: %s %s: the refusal does not name the run: %s", by.name, rt.method, rt.path, data)
				}
			}
		}
		// reading is open to all
		var v runJSON
		code, data := s.do("GET", "/api/runs/"+id, nil, by.headers...)
		if code != 200 || json.Unmarshal(data, &v) != nil {
			t.Fatalf("%s reads the run: %d %s", by.name, code, data)
		}
		if v.Mine != allowed {
			t.Errorf("%s: the run says mine=%v, want %v", by.name, v.Mine, allowed)
		}
		if !allowed {
			if v.Status != "running" && v.Status != "paused" {
				t.Errorf("%s: the run is %s after refused changes", by.name, v.Status)
			}
			s.must(200, "POST", "/api/runs/"+id+"/cancel", nil, nil, owner.headers...)
		}
		s.waitStatus(id, 10*time.Second, "cancelled")
		code, data = s.do("DELETE", "/api/runs/"+id, nil, by.headers...)
		want := 204
		if !allowed {
			want = 403
		}
		if code != want {
			t.Errorf("%s deletes the run: %d, want %d: %s", by.name, code, want, data)
		}
	}
}

// The same for a stored scenario: its first creator and an instructor may
// delete it, nobody else; a built-in one nobody but the instructor (who
// gets the store's refusal).
func TestOwnershipScenarios(t *testing.T) {
	const instructor = "teach-5678"
	s := newTestServer(t, Config{InstructorToken: instructor})
	owner, other, instr, anon := requesters(t, s, instructor)
	for i, by := range []requester{other, anon, owner, instr} {
		sc := smallScenario(fmt.Sprint("mine-", i), "dcqcn", "1ms")
		var created struct{ ID string }
		code, data := s.do("POST", "/api/scenarios", sc, owner.headers...)
		if code != 201 || json.Unmarshal(data, &created) != nil {
			t.Fatalf("store: %d %s", code, data)
		}
		// the same document stored again by someone else does not change hands
		s.do("POST", "/api/scenarios", sc, other.headers...)
		code, data = s.do("DELETE", "/api/scenarios/"+created.ID, nil, by.headers...)
		allowed := by.name == "owner" || by.name == "instructor"
		if allowed && code != 204 || !allowed && code != 403 {
			t.Errorf("%s deletes the owner's scenario: %d %s", by.name, code, data)
		}
	}
}

// Cross-site matrix: state-changing requests by content type × Origin /
// Sec-Fetch-Site. A browser page on another origin is refused (403) with
// any content type; a form's content types are refused (415) even from
// the same origin; JSON from this origin, an allowed origin, or a client
// that sends neither header (curl) passes.
func TestCrossSiteMatrix(t *testing.T) {
	s := newTestServer(t, Config{AllowOrigins: []string{"https://proxy.example.edu"}})
	host := strings.TrimPrefix(s.ts.URL, "http://")
	body := `{"scenario": ` + string(mustJSON(t, smallScenario("x", "dcqcn", "1ms"))) + `}`
	for _, tt := range []struct {
		name, ctype, origin, site string
		want                      int
	}{
		{"curl, JSON", "application/json", "", "", 201},
		{"same origin, JSON", "application/json", "http://" + host, "same-origin", 201},
		{"same origin (Sec-Fetch-Site only), JSON", "application/json", "", "same-origin", 201},
		{"allowed proxy origin, JSON", "application/json", "https://proxy.example.edu", "cross-site", 201},
		{"JSON with a charset", "application/json; charset=utf-8", "http://" + host, "same-origin", 201},
		{"foreign origin, JSON", "application/json", "https://evil.example", "cross-site", 403},
		{"foreign origin, text/plain", "text/plain", "https://evil.example", "cross-site", 403},
		{"foreign origin, form", "application/x-www-form-urlencoded", "https://evil.example", "cross-site", 403},
		{"foreign origin, multipart", "multipart/form-data; boundary=x", "https://evil.example", "cross-site", 403},
		{"null origin (sandboxed frame)", "application/json", "null", "cross-site", 403},
		{"same-site subdomain (Sec-Fetch-Site only)", "application/json", "", "same-site", 403},
		{"cross-site (Sec-Fetch-Site only)", "text/plain", "", "cross-site", 403},
		{"same origin, text/plain", "text/plain", "http://" + host, "same-origin", 415},
		{"same origin, form", "application/x-www-form-urlencoded", "http://" + host, "same-origin", 415},
		{"curl -d (form type)", "application/x-www-form-urlencoded", "", "", 415},
		{"no content type with a body", "", "", "", 415},
	} {
		h := []string{"Content-Type", tt.ctype}
		if tt.origin != "" {
			h = append(h, "Origin", tt.origin)
		}
		if tt.site != "" {
			h = append(h, "Sec-Fetch-Site", tt.site)
		}
		if tt.ctype == "" {
			h = h[2:]
		}
		code, data := s.doRaw("POST", "/api/runs", body, h...)
		if code != tt.want {
			t.Errorf("%s: POST /api/runs: %d, want %d: %s", tt.name, code, tt.want, data)
		}
		if code == 201 {
			var v struct{ ID string }
			json.Unmarshal(data, &v)
			s.waitStatus(v.ID, 10*time.Second, "done", "failed")
		}
	}
	// bodiless changes from a foreign page are refused too, and reads pass
	var v struct{ ID string }
	s.must(201, "POST", "/api/runs", map[string]any{"scenario": smallScenario("y", "dcqcn", "1ms")}, &v)
	s.waitStatus(v.ID, 10*time.Second, "done")
	for _, p := range []string{"/api/runs/" + v.ID + "/pin", "/api/runs/" + v.ID + "/cancel"} {
		code, data := s.doRaw("POST", p, "", "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site")
		checkError(t, code, data, 403, "", "")
	}
	code, data := s.doRaw("DELETE", "/api/runs/"+v.ID, "", "Origin", "https://evil.example")
	checkError(t, code, data, 403, "", "")
	if code, _ := s.doRaw("GET", "/api/runs/"+v.ID, "", "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site"); code != 200 {
		t.Errorf("a cross-site read: %d, want 200", code)
	}
}

// Pages carry the security headers; the first page gives a browser an
// HttpOnly, SameSite=Lax owner cookie without Secure on plain http; the
// cookie then owns what the browser makes, and a token it did not get
// from the server owns nothing.
func TestOwnerCookieAndHeaders(t *testing.T) {
	s := newTestServer(t, Config{})
	resp, err := http.Get(s.ts.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	h := resp.Header
	for k, want := range map[string]string{"X-Content-Type-Options": "nosniff", "X-Frame-Options": "DENY", "Referrer-Policy": "same-origin"} {
		if h.Get(k) != want {
			t.Errorf("%s: %q, want %q", k, h.Get(k), want)
		}
	}
	csp := h.Get("Content-Security-Policy")
	for _, part := range []string{"script-src 'self'", "frame-ancestors 'none'", "object-src 'none'"} {
		if !strings.Contains(csp, part) {
			t.Errorf("CSP %q lacks %q", csp, part)
		}
	}
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == ownerCookie {
			cookie = c
		}
	}
	if cookie == nil {
		t.Fatalf("no %s cookie on the first page: %v", ownerCookie, resp.Header["Set-Cookie"])
	}
	raw := strings.Join(resp.Header["Set-Cookie"], "; ")
	if !cookie.HttpOnly || cookie.SameSite != http.SameSiteLaxMode || cookie.Secure || !strings.Contains(raw, "SameSite=Lax") {
		t.Errorf("cookie %q: want HttpOnly, SameSite=Lax, no Secure on http", raw)
	}
	var me struct {
		Owner     string
		Anonymous bool
	}
	s.must(200, "GET", "/api/whoami", nil, &me, "Cookie", ownerCookie+"="+cookie.Value)
	if !strings.HasPrefix(me.Owner, "t:") || me.Anonymous {
		t.Errorf("with the cookie: %+v, want a token owner", me)
	}
	forged := strings.Repeat("A", 22) + "." + strings.Repeat("B", 22)
	s.must(200, "GET", "/api/whoami", nil, &me, tokenHeader, forged)
	if !me.Anonymous {
		t.Errorf("a forged token was taken: %+v", me)
	}
	// a second page with the cookie gets no new one
	req, _ := http.NewRequest("GET", s.ts.URL+"/lab", nil)
	req.AddCookie(cookie)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if len(resp.Cookies()) != 0 {
		t.Errorf("a browser with a valid token got another cookie: %v", resp.Header["Set-Cookie"])
	}
}

// Abuse limits keyed on the owner: a label (X-Cclab-Client) is no new
// quota; run creations per minute and work per hour answer 429 with
// Retry-After and the limit's name; an instructor is exempt; tokens per
// address are bounded; an instructor changes the limits live.
func TestOwnerLimits(t *testing.T) {
	const instructor = "teach-9"
	lim := ClassLimits{ClientRuns: 100, RunsPerMinute: 6, RunsBurst: 3, WorkPerHour: 1e6, TokensPerHour: 4}
	s := newTestServer(t, Config{InstructorToken: instructor, Class: &lim})
	sc := smallScenario("tiny", "dcqcn", "1ms") // 3 × 100 KB: 300 packets
	for i := 0; i < 3; i++ {
		s.must(201, "POST", "/api/runs", map[string]any{"scenario": sc}, nil, "X-Cclab-Client", fmt.Sprint("label-", i))
	}
	code, data := s.doRaw("POST", "/api/runs", `{"scenario": `+string(mustJSON(t, sc))+`}`, "Content-Type", "application/json", "X-Cclab-Client", "yet-another")
	checkError(t, code, data, 429, "", "runs-per-minute")
	if ra := s.lastHeader.Get("Retry-After"); ra == "" || ra == "0" {
		t.Errorf("429 without Retry-After: %q", ra)
	} else if n, _ := strconv.Atoi(ra); n < 1 || n > 11 {
		t.Errorf("Retry-After %s s, want about 10 s (one run per 10 s)", ra)
	}
	// the instructor is exempt
	s.must(201, "POST", "/api/runs", map[string]any{"scenario": sc}, nil, "Authorization", "Bearer "+instructor)
	// tokens: 4 per address per hour (one went to nobody yet)
	for i := 0; i < 4; i++ {
		s.must(201, "POST", "/api/token", nil, nil)
	}
	code, data = s.do("POST", "/api/token", nil)
	checkError(t, code, data, 429, "", "tokens-per-hour")
	// work: a run bigger than the hour's budget is refused outright (422)
	big := smallScenario("big", "dcqcn", "1ms")
	big["workload"] = []any{map[string]any{"kind": "incast", "senders": []string{"h0", "h1", "h2"}, "receiver": "r0", "size": "1GB", "start": "0s"}}
	code, data = s.do("POST", "/api/runs", map[string]any{"scenario": big}, "Authorization", "Bearer wrong")
	if code != 422 && code != 429 {
		t.Errorf("a run over the work budget: %d %s", code, data)
	}
	// the instructor lifts the creation rate for everyone, live
	code, data = s.do("PUT", "/api/class/limits", map[string]any{"runsPerMinute": 0})
	checkError(t, code, data, 401, "", "")
	s.must(200, "PUT", "/api/class/limits", map[string]any{"runsPerMinute": 0, "workPerHour": 0}, nil, "Authorization", "Bearer "+instructor)
	s.must(201, "POST", "/api/runs", map[string]any{"scenario": sc}, nil)
	var class struct {
		Owners []ownerJSON
		Limits ClassLimits
	}
	s.must(200, "GET", "/api/class", nil, &class, "Authorization", "Bearer "+instructor)
	// every run here came from one address without a token: one owner
	if class.Limits.RunsPerMinute != 0 || len(class.Owners) != 1 || class.Owners[0].Owner != "ip:127.0.0.1" || class.Owners[0].Runs != 5 {
		t.Errorf("class view %+v, want one owner (ip:127.0.0.1) with 5 runs and no creation limit", class)
	}
	code, data = s.do("GET", "/api/class", nil)
	checkError(t, code, data, 401, "", "")
}

// WebSocket streams per owner are bounded (429 before the upgrade).
func TestViewersPerOwner(t *testing.T) {
	lim := ClassLimits{ClientRuns: 8, ViewersPerOwner: 1}
	s := newTestServer(t, Config{Class: &lim})
	id := s.startRun(map[string]any{"scenario": smallScenario("w", "dcqcn", "20ms"), "speed": 100})
	s.dial(id)
	code, data := s.do("GET", "/ws/runs/"+id, nil, "Connection", "Upgrade", "Upgrade", "websocket",
		"Sec-WebSocket-Version", "13", "Sec-WebSocket-Key", "dGhlIHNhbXBsZSBub25jZQ==")
	checkError(t, code, data, 429, "", "viewers-per-owner")
}

// Training jobs and policies: only the job's owner (or an instructor) may
// cancel or resume it, only a policy's uploader (or an instructor) may
// delete it; others get 403 naming it.
func TestOwnershipTrainingAndPolicies(t *testing.T) {
	const instructor = "teach-77"
	s := newTestServer(t, Config{InstructorToken: instructor})
	owner, other, instr, anon := requesters(t, s, instructor)
	var j trainJob
	s.must(201, "POST", "/api/train", tinyTraining("owned-job"), &j, owner.headers...)
	for _, by := range []requester{other, anon} {
		code, data := s.do("POST", "/api/train/"+j.ID+"/cancel", nil, by.headers...)
		checkError(t, code, data, 403, "id", "")
		if !strings.Contains(string(data), "training job "+j.ID) {
			t.Errorf("%s: the refusal does not name the job: %s", by.name, data)
		}
	}
	// the instructor passes the ownership check (a tiny job may have
	// finished already: then its state answers 409, not ownership's 403)
	if code, data := s.do("POST", "/api/train/"+j.ID+"/cancel", nil, instr.headers...); code != 200 && code != 409 {
		t.Errorf("the instructor cancels the job: %d %s", code, data)
	}
	s.waitTraining(j.ID, 30*time.Second, "cancelled", "done")
	code, data := s.do("POST", "/api/train/"+j.ID+"/resume", nil, other.headers...)
	checkError(t, code, data, 403, "id", "")

	file := policyFile(t, 8)
	for i, by := range []requester{other, anon, owner, instr} {
		var p struct{ ID string }
		s.must(201, "POST", fmt.Sprintf("/api/policies?name=p%d&algorithm=fdcc", i), file, &p,
			append([]string{"Content-Type", "application/octet-stream"}, owner.headers...)...)
		code, data := s.do("DELETE", "/api/policies/"+p.ID, nil, by.headers...)
		allowed := by.name == "owner" || by.name == "instructor"
		if allowed && code != 204 || !allowed && code != 403 {
			t.Errorf("%s deletes the owner's policy: %d %s", by.name, code, data)
		}
	}
}

// Over TLS the owner cookie takes the __Host- prefix and Secure; the
// instructor's too.
func TestOwnerCookieOverTLS(t *testing.T) {
	s := newTestServer(t, Config{InstructorToken: "tls-teacher"})
	ts := httptest.NewTLSServer(s.srv.Handler())
	defer ts.Close()
	client := ts.Client()
	client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	for _, tc := range []struct{ path, cookie string }{
		{"/", "__Host-" + ownerCookie},
		{"/instructor?token=tls-teacher", "__Host-" + instructorCookie},
	} {
		resp, err := client.Get(ts.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		var c *http.Cookie
		for _, x := range resp.Cookies() {
			if x.Name == tc.cookie {
				c = x
			}
		}
		if c == nil || !c.Secure || !c.HttpOnly || c.Path != "/" || c.Domain != "" {
			t.Errorf("GET %s over TLS: cookies %v, want %s with Secure, HttpOnly, Path=/ and no Domain", tc.path, resp.Header["Set-Cookie"], tc.cookie)
		}
	}
	// and the prefixed cookie is read back
	token, _ := s.srv.tok.mint()
	req, _ := http.NewRequest("GET", ts.URL+"/api/whoami", nil)
	req.AddCookie(&http.Cookie{Name: "__Host-" + ownerCookie, Value: token})
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var me struct{ Anonymous bool }
	if json.NewDecoder(resp.Body).Decode(&me) != nil || me.Anonymous {
		t.Error("the __Host- owner cookie was not read")
	}
}
