package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// instructorToken is the instructor token TestMain gives `cclab serve`.
const instructorToken = "e2e-instructor"

// instructorDo sends an API request as the instructor (Authorization:
// Bearer) and decodes the answer into v; it returns the status.
func instructorDo(t *testing.T, method, path string, body, v any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, serverURL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Authorization", "Bearer "+instructorToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if v != nil {
		json.Unmarshal(data, v)
	}
	return resp.StatusCode
}

// viewport saves what the window shows (a long page's top) under
// e2e/screenshots.
func viewport(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join("screenshots", name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

type runState struct {
	ID, Status string
	Mine       bool
}

func getRun(t *testing.T, id string) runState {
	t.Helper()
	var r runState
	apiGet(t, "/api/runs/"+id, &r)
	return r
}

func runTotal(t *testing.T) int {
	t.Helper()
	var l struct{ Total int }
	apiGet(t, "/api/runs?limit=1", &l)
	return l.Total
}

// slowRun starts a run of incast-8to1 at 1 µs of simulated time per wall
// second (it lasts minutes) through the API (owned by this test's
// address); the test's end cancels it.
func slowRun(t *testing.T) string {
	t.Helper()
	var r struct{ ID string }
	apiPost(t, "/api/runs", map[string]any{"scenarioId": "incast-8to1", "speed": 1}, &r)
	t.Cleanup(func() { instructorDo(t, "POST", "/api/runs/"+r.ID+"/cancel", nil, nil) })
	return r.ID
}

func waitStatus(t *testing.T, id string, want ...string) runState {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		r := getRun(t, id)
		for _, w := range want {
			if r.Status == w {
				return r
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is %s, want %v", id, r.Status, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// evilPage is a page of another origin that tries to start, cancel and
// delete runs on the lab (LAB, RUNNING, DONE are filled in).
const evilPage = `<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Free GPU credits</title></head>
<body><h1>Nothing to see here</h1>
<iframe name="sink" style="width:400px;height:80px"></iframe>
<script>
const lab = "LAB", running = "RUNNING", done = "DONE";
const body = JSON.stringify({scenarioId: "incast-8to1"});
const results = {};
async function attempt(name, fn) {
  try {
    const r = await fn();
    results[name] = r.type === "opaque" ? "opaque" : String(r.status);
  } catch (e) {
    results[name] = "refused by the browser: " + e.message;
  }
}
function submit(action, enctype, fields) {
  const f = document.createElement("form");
  f.method = "POST";
  f.action = action;
  f.target = "sink";
  if (enctype) f.enctype = enctype;
  for (const [k, v] of Object.entries(fields)) {
    const i = document.createElement("input");
    i.type = "hidden"; i.name = k; i.value = v;
    f.appendChild(i);
  }
  document.body.appendChild(f);
  f.submit();
}
(async () => {
  await attempt("create text/plain no-cors", () => fetch(lab + "/api/runs", {method: "POST", mode: "no-cors", credentials: "include",
    headers: {"Content-Type": "text/plain"}, body}));
  await attempt("create json no-cors", () => fetch(lab + "/api/runs", {method: "POST", mode: "no-cors", credentials: "include",
    headers: {"Content-Type": "application/json"}, body}));
  await attempt("create json cors", () => fetch(lab + "/api/runs", {method: "POST", mode: "cors", credentials: "include",
    headers: {"Content-Type": "application/json"}, body}));
  await attempt("cancel no-cors", () => fetch(lab + "/api/runs/" + running + "/cancel", {method: "POST", mode: "no-cors", credentials: "include"}));
  await attempt("delete cors", () => fetch(lab + "/api/runs/" + done, {method: "DELETE", mode: "cors", credentials: "include"}));
  await attempt("delete no-cors", () => fetch(lab + "/api/runs/" + done, {method: "DELETE", mode: "no-cors", credentials: "include"}));
  submit(lab + "/api/runs/" + running + "/cancel", "", {});
  await new Promise((r) => setTimeout(r, 500));
  // the classic JSON-in-a-text/plain-form trick
  submit(lab + "/api/runs", "text/plain", {['{"scenarioId": "incast-8to1", "x": "']: '"}'});
  await new Promise((r) => setTimeout(r, 1000));
  window.results = results;
  document.body.dataset.done = "1";
})();
</script></body></html>`

// TestCrossSiteRefused: a page of another origin (its own loopback port)
// cannot start, cancel or delete runs on the lab, whatever the request
// looks like. The browser has never opened the lab, so it is owned by its
// address, as the test's own API requests are: ownership would let these
// requests through, only the cross-site refusal stops them.
func TestCrossSiteRefused(t *testing.T) {
	running := slowRun(t)
	var done struct{ ID string }
	apiPost(t, "/api/runs", map[string]any{"scenarioId": "incast-8to1"}, &done)
	waitStatus(t, done.ID, "done")
	waitStatus(t, running, "running")
	before := runTotal(t)

	page := strings.NewReplacer("LAB", serverURL, "RUNNING", running, "DONE", done.ID).Replace(evilPage)
	var posts int
	evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			posts++
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page)
	}))
	defer evil.Close()
	if strings.HasPrefix(evil.URL, serverURL) {
		t.Fatalf("the evil page %s is on the lab's origin %s", evil.URL, serverURL)
	}

	ctx := browser(t)
	must(t, ctx, chromedp.Navigate(evil.URL))
	waitJS(t, ctx, `document.body.dataset.done === "1"`, 20*time.Second)
	results := eval[map[string]string](t, ctx, `window.results`)
	t.Logf("what the evil page saw: %v", results)
	screenshot(t, ctx, "security-evil-page")
	for name, got := range results {
		// an opaque answer hides the status from the page; a readable one
		// must be a refusal
		if got != "opaque" && !strings.HasPrefix(got, "refused") && got != "403" && got != "415" {
			t.Errorf("%s: the page read %s", name, got)
		}
	}
	if posts != 0 {
		t.Errorf("the forms posted to the evil server %d times (they should go to the lab)", posts)
	}

	if after := runTotal(t); after != before {
		t.Errorf("runs: %d before the evil page, %d after: it started a run", before, after)
	}
	if r := getRun(t, running); r.Status != "running" {
		t.Errorf("the running victim is %s after the evil page", r.Status)
	}
	if r := getRun(t, done.ID); r.Status != "done" {
		t.Errorf("the finished victim is %s after the evil page", r.Status)
	}
	// the same requests from the lab's own origin are not refused as
	// cross-site: the test's client (the owner, by address) may cancel
	apiPost(t, "/api/runs/"+running+"/cancel", nil, nil)
	waitStatus(t, running, "cancelled")
}

// startInPage starts a slow run from the lab's own page (owned by that
// browser's cookie) and returns its id.
func startInPage(t *testing.T, ctx context.Context) string {
	t.Helper()
	id, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(async () => {
		const r = await fetch("/api/runs", {method: "POST", headers: {"Content-Type": "application/json"},
			body: JSON.stringify({scenarioId: "incast-8to1", speed: 1})});
		if (!r.ok) throw new Error("POST /api/runs: " + r.status + " " + await r.text());
		return (await r.json()).id; })()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { instructorDo(t, "POST", "/api/runs/"+id+"/cancel", nil, nil) })
	return id
}

// TestOtherOwnersRun: two browsers are two owners. The second sees the
// first's run without controls (and a note why) on its run page and in
// the lab; a request it makes anyway answers 403. The owner sees and uses
// them.
func TestOtherOwnersRun(t *testing.T) {
	alice := browser(t)
	must(t, alice, chromedp.Navigate(serverURL+"/"), chromedp.WaitVisible(chromedp.CSS("#library")))
	id := startInPage(t, alice)
	must(t, alice, chromedp.Navigate(serverURL+"/r/"+id), chromedp.WaitVisible(chromedp.CSS("#run-controls")))
	waitJS(t, alice, `document.getElementById("status").textContent === "running" && !document.getElementById("foreign-note")`, 20*time.Second)
	if eval[bool](t, alice, `document.getElementById("class-link") !== null || !!document.querySelector('nav a[href="/class"]')`) {
		t.Error("a student's header links to the class page")
	}
	screenshot(t, alice, "security-own-run")

	bob := browser(t)
	must(t, bob, chromedp.Navigate(serverURL+"/r/"+id), chromedp.WaitVisible(chromedp.CSS("#foreign-note")))
	waitJS(t, bob, `document.getElementById("status").textContent === "running"`, 20*time.Second)
	if n := eval[int](t, bob, `document.querySelectorAll("#run-controls, #pause-btn, #stop-btn, #speed, #pin-btn, #delete-btn").length`); n != 0 {
		t.Errorf("another owner's run page shows %d controls", n)
	}
	note := eval[string](t, bob, `document.getElementById("foreign-note").textContent`)
	if !strings.Contains(note, "belongs to someone else") {
		t.Errorf("the note says %q", note)
	}
	screenshot(t, bob, "security-other-run")
	status, err := chromedp.Run(bob, chromedp.Evaluate[int](`fetch("/api/runs/`+id+`/cancel", {method: "POST"}).then((r) => r.status)`, chromedp.EvalAwaitPromise))
	if err != nil || status != 403 {
		t.Errorf("another owner's cancel answered %d (%v), want 403", status, err)
	}
	if r := getRun(t, id); r.Status != "running" {
		t.Fatalf("the run is %s after another owner's cancel", r.Status)
	}
	// the lab following it: watch only
	must(t, bob, chromedp.Navigate(serverURL+"/s/incast-8to1?run="+id))
	waitJS(t, bob, `!document.getElementById("foreign-note").hidden && document.getElementById("stop-btn").disabled &&
		document.getElementById("pause-btn").disabled && document.getElementById("speed").disabled`, 20*time.Second)
	screenshot(t, bob, "security-other-lab")
	noErrors(t, bob)

	// its owner stops it from the run page
	must(t, alice, chromedp.Click(chromedp.CSS("#stop-btn")))
	// the page reloads as the ended run's: its downloads
	waitJS(t, alice, `document.getElementById("status").textContent === "cancelled" && !!document.querySelector("a[download]") && document.readyState === "complete"`, 20*time.Second)
	noErrors(t, alice)
	if r := getRun(t, id); r.Status != "cancelled" {
		t.Fatalf("the owner's Stop left the run %s", r.Status)
	}
}

// TestInstructor: the instructor signs in, sees the class with a student's
// runs, cancels a student's run from its run page, changes a limit (a bad
// value is shown at its field), features a scenario from the lab and sees
// it first on the home page, then unfeatures it on the class page.
func TestInstructor(t *testing.T) {
	student := browser(t)
	must(t, student, chromedp.Navigate(serverURL+"/"), chromedp.WaitVisible(chromedp.CSS("#library")))
	id := startInPage(t, student)
	owner, err := chromedp.Run(student, chromedp.Evaluate[string](`fetch("/api/whoami").then((r) => r.json()).then((w) => w.owner)`, chromedp.EvalAwaitPromise))
	if err != nil || !strings.HasPrefix(owner, "t:") {
		t.Fatalf("the student's whoami: owner %q (%v), want a token owner", owner, err)
	}
	waitStatus(t, id, "running")
	var limits map[string]float64
	if instructorDo(t, "GET", "/api/class", nil, &struct {
		Limits *map[string]float64 `json:"limits"`
	}{&limits}) != 200 {
		t.Fatal("GET /api/class as the instructor failed")
	}
	t.Cleanup(func() { instructorDo(t, "PUT", "/api/class/limits", limits, nil) })

	ctx := browser(t)
	// the class page says how to sign in, and shows nothing else
	must(t, ctx, chromedp.Navigate(serverURL+"/class"), chromedp.WaitVisible(chromedp.CSS("#class-signin")))
	if eval[bool](t, ctx, `!!document.getElementById("class-owners") || !!document.getElementById("limits-form")`) {
		t.Error("the class page shows the class to someone who is not the instructor")
	}
	screenshot(t, ctx, "class-signed-out")
	must(t, ctx, chromedp.Navigate(serverURL+"/instructor?token="+instructorToken))
	waitJS(t, ctx, `location.pathname === "/class" && !!document.getElementById("class-owners")`, 20*time.Second)
	row := fmt.Sprintf(`document.querySelector('#class-owners tr[data-owner="%s"]')`, owner)
	if !eval[bool](t, ctx, `!!`+row) {
		t.Fatalf("the class table has no row for the student %s:\n%s", owner, eval[string](t, ctx, `document.getElementById("class-owners").innerText`))
	}
	if got := eval[string](t, ctx, row+`.querySelector("td:nth-child(3)").textContent + " " + `+row+`.querySelector("a").getAttribute("href")`); got != "1 /r/"+id {
		t.Errorf("the student's row: active and latest %q, want \"1 /r/%s\"", got, id)
	}
	if !eval[bool](t, ctx, `!!document.querySelector('nav a[href="/class"][aria-current="page"]')`) {
		t.Error("the instructor's header has no Class link")
	}
	screenshot(t, ctx, "class")

	// the student's run: the instructor has its controls, and stops it
	must(t, ctx, chromedp.Click(chromedp.CSS(`#class-owners tr[data-owner="`+owner+`"] a`)))
	waitJS(t, ctx, `location.pathname === "/r/`+id+`" && !!document.getElementById("stop-btn") && document.getElementById("status").textContent === "running"`, 20*time.Second)
	screenshot(t, ctx, "class-student-run")
	must(t, ctx, chromedp.Click(chromedp.CSS("#stop-btn")))
	waitJS(t, ctx, `document.getElementById("status").textContent === "cancelled" && !!document.querySelector("a[download]") && document.readyState === "complete"`, 20*time.Second)
	if r := getRun(t, id); r.Status != "cancelled" {
		t.Fatalf("the instructor's Stop left the student's run %s", r.Status)
	}
	noErrors(t, ctx)

	// a limit: a bad value is shown next to its field, a good one is saved
	must(t, ctx, chromedp.Navigate(serverURL+"/class"), chromedp.WaitVisible(chromedp.CSS("#limits-form")))
	must(t, ctx, chromedp.SetValue(chromedp.CSS("#l-runsBurst"), "-1"), chromedp.Click(chromedp.CSS("#limits-save")))
	waitJS(t, ctx, `document.querySelector('[data-error-for="runsBurst"]').textContent !== "" &&
		document.getElementById("l-runsBurst").getAttribute("aria-invalid") === "true"`, 10*time.Second)
	screenshot(t, ctx, "class-limit-error")
	must(t, ctx, chromedp.SetValue(chromedp.CSS("#l-runsBurst"), fmt.Sprint(limits["runsBurst"])),
		chromedp.SetValue(chromedp.CSS("#l-viewersPerOwner"), "21"), chromedp.Click(chromedp.CSS("#limits-save")))
	waitJS(t, ctx, `!!document.getElementById("limits-form").dataset.saved && document.querySelector('[data-error-for="runsBurst"]').textContent === ""`, 10*time.Second)
	var who struct {
		Limits struct{ ViewersPerOwner int }
	}
	apiGet(t, "/api/whoami", &who)
	if who.Limits.ViewersPerOwner != 21 {
		t.Errorf("viewersPerOwner is %d after the form saved 21", who.Limits.ViewersPerOwner)
	}

	// feature a scenario from its lab page; it comes first on the home page
	scID := libraryID(t, "incast-8to1")
	t.Cleanup(func() { instructorDo(t, "DELETE", "/api/scenarios/"+scID+"/feature", nil, nil) })
	must(t, ctx, chromedp.Navigate(serverURL+"/s/incast-8to1"))
	waitJS(t, ctx, `document.body.dataset.valid === "true" && !document.getElementById("feature-btn").hidden`, 20*time.Second)
	must(t, ctx, chromedp.Click(chromedp.CSS("#feature-btn")))
	waitJS(t, ctx, `document.getElementById("feature-btn").getAttribute("aria-pressed") === "true"`, 10*time.Second)
	screenshot(t, ctx, "lab-featured")
	for _, c := range []context.Context{ctx, student} {
		must(t, c, chromedp.Navigate(serverURL+"/"), chromedp.WaitVisible(chromedp.CSS("#featured")))
		first := eval[string](t, c, `document.querySelector("main section.featured h2").textContent + " " +
			document.querySelector("main ul.cards").id + " " + document.querySelector("#featured .card").dataset.scenario`)
		if first != "This class's exercises featured "+scID {
			t.Errorf("the home page's first cards: %q", first)
		}
	}
	viewport(t, student, "home-featured")
	// a student's lab has no feature button, nor a Class link
	must(t, student, chromedp.Navigate(serverURL+"/s/incast-8to1"))
	waitJS(t, student, `document.body.dataset.valid === "true"`, 20*time.Second)
	if eval[bool](t, student, `!!document.getElementById("feature-btn") || !!document.querySelector('nav a[href="/class"]')`) {
		t.Error("a student sees the feature button or the Class link")
	}

	// the class page lists it; Unfeature takes it off the home page
	must(t, ctx, chromedp.Navigate(serverURL+"/class"), chromedp.WaitVisible(chromedp.CSS(`#class-featured li[data-scenario="`+scID+`"]`)))
	screenshot(t, ctx, "class-featured")
	must(t, ctx, chromedp.Click(chromedp.CSS(`#class-featured [data-unfeature="`+scID+`"]`)))
	waitJS(t, ctx, `document.querySelectorAll("#class-featured li").length === 0 && !document.getElementById("class-featured-none").hidden`, 10*time.Second)
	must(t, ctx, chromedp.Navigate(serverURL+"/"), chromedp.WaitVisible(chromedp.CSS("#library")))
	if eval[bool](t, ctx, `!!document.getElementById("featured")`) {
		t.Error("the home page still lists the class's exercises after Unfeature")
	}
	noErrors(t, ctx)
	noErrors(t, student)
}
