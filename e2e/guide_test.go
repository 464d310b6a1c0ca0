package e2e

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestHomeGuided: the home page is light (sketches are fetched as cards
// scroll into view), grouped by topic with the seed papers first and the
// classics last, light scenarios first in each topic, and every library
// card says what to look for and how long it takes, without CLI flags or
// "seed 000".
func TestHomeGuided(t *testing.T) {
	resp, err := http.Get(serverURL + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	// 747 KB before the sketches were drawn lazily (50 library cards)
	if len(page) > 100_000 {
		t.Errorf("the home page is %d bytes, want under 100 KB", len(page))
	}
	t.Logf("home page: %d bytes", len(page))
	if m := regexp.MustCompile(`(?i)seed \d{3}|cclab (run|serve)|\s--[a-z]`).Find(page); m != nil {
		t.Errorf("the home page says %q", m)
	}
	ctx := browser(t)
	must(t, ctx, chromedp.Navigate(serverURL+"/"), chromedp.WaitVisible(chromedp.CSS("#library .card")))
	topics := eval[[]string](t, ctx, `Array.from(document.querySelectorAll("#library .topic > h3")).map((h) => h.textContent)`)
	if len(topics) < 5 || !regexp.MustCompile(`^MPCC`).MatchString(topics[0]) || !regexp.MustCompile(`^Classics`).MatchString(topics[len(topics)-1]) {
		t.Fatalf("topics %q", topics)
	}
	ordered := eval[bool](t, ctx, `Array.from(document.querySelectorAll("#library .topic")).every((s) => {
		const w = Array.from(s.querySelectorAll(".card")).map((c) => Number(c.dataset.wall));
		return w.every((v, i) => i === 0 || w[i - 1] <= v);
	})`)
	if !ordered {
		t.Error("a topic's cards are not lightest first")
	}
	if n := eval[int](t, ctx, `Array.from(document.querySelectorAll("#library .card")).filter((c) => !c.querySelector(".look") || !/^Takes (under a second|about \d+ (s|min|h)) to run\.$/.test((c.querySelector(".takes") || {}).textContent)).length`); n != 0 {
		t.Errorf("%d library cards without what to look for or how long", n)
	}
	// the first cards' sketches arrive; the last card's only once scrolled to
	waitJS(t, ctx, `!!document.querySelector("#library .card .sketch svg")`, 10*time.Second)
	last := `document.querySelector("#library .topic:last-child .card:last-child .sketch")`
	if eval[bool](t, ctx, last+`.childElementCount > 0`) {
		t.Error("the last card's sketch was drawn before it scrolled into view")
	}
	screenshot(t, ctx, "home-guided")
	viewShot(t, ctx, "home-guided-top")
	must(t, ctx, chromedp.ScrollIntoView(chromedp.CSS(`#library .topic:last-child .card:last-child`)))
	waitJS(t, ctx, last+`.childElementCount > 0`, 10*time.Second)
	noErrors(t, ctx)
}

// TestRunCostAndSlowMotion: before a run the lab says what it will cost;
// a tiny run (MPCC Exp. 1: 5 ms simulated, ~1 ms of work) opens in slow
// motion and its progress counts simulated time out of 5 ms; a run
// expected to take over 30 s asks first, and declining starts nothing.
func TestRunCostAndSlowMotion(t *testing.T) {
	ctx := browser(t)
	must(t, ctx, chromedp.Navigate(serverURL+"/s/mpcc-exp1"))
	waitJS(t, ctx, `document.body.dataset.valid === "true" && !document.getElementById("run-btn").disabled`, 20*time.Second)
	if sp := eval[string](t, ctx, `document.getElementById("speed").value`); sp != "1000" {
		t.Fatalf("speed %q, want 1000 (1 ms per second: 5 s to watch)", sp)
	}
	cost := eval[string](t, ctx, `document.getElementById("cost-text").textContent`)
	if !regexp.MustCompile(`^5 hosts, 4 flows, 5 ms simulated; expected to take about 5 s$`).MatchString(cost) {
		t.Fatalf("cost line %q", cost)
	}
	must(t, ctx, chromedp.Click(chromedp.CSS("#run-btn")))
	waitJS(t, ctx, `/^[\d.]+ [nµm]?s of 5 ms simulated, /.test(document.getElementById("progress-text").textContent) &&
		document.getElementById("status").textContent === "running"`, 20*time.Second)
	screenshot(t, ctx, "lab-slow-motion")
	waitJS(t, ctx, `document.getElementById("status").textContent === "done"`, 30*time.Second)
	noErrors(t, ctx)

	// over 30 s: Run asks, and "no" starts nothing
	must(t, ctx, chromedp.Navigate(serverURL+"/s/fdcc-dumbbell-1024to1"))
	waitJS(t, ctx, `document.body.dataset.valid === "true" && !document.getElementById("run-btn").disabled`, 30*time.Second)
	if sp := eval[string](t, ctx, `document.getElementById("speed").value`); sp != "max" {
		t.Fatalf("a heavy run opens at speed %q", sp)
	}
	eval[bool](t, ctx, `window.confirm = (m) => { window.asked = m; return false; }, true`)
	must(t, ctx, chromedp.Click(chromedp.CSS("#run-btn")))
	waitJS(t, ctx, `!!window.asked && !document.getElementById("run-btn").disabled`, 10*time.Second)
	asked := eval[string](t, ctx, `window.asked`)
	if !regexp.MustCompile(`^This run is expected to take \d+ s \(65 hosts, 1024 flows, .* simulated; expected to take about \d+ (s|min) \((at the engine's typical speed: no run of this size timed on this server yet|from \d+ runs? of this size on this server)\)\)\. Run it\?$`).MatchString(asked) {
		t.Fatalf("asked %q", asked)
	}
	if eval[string](t, ctx, `document.getElementById("status").textContent`) != "ready" || !eval[bool](t, ctx, `document.getElementById("run-link").hidden`) {
		t.Fatal("declining started a run")
	}
	viewShot(t, ctx, "lab-heavy-cost")
	noErrors(t, ctx)
}

// TestStopAtOnce: Stop on a big run (HPCC's 320-host fat-tree under RCC,
// seconds of work) ends it within 3 s (25-29 s before: the end waited for
// the stored series to be compacted).
func TestStopAtOnce(t *testing.T) {
	ctx := browser(t)
	must(t, ctx, chromedp.Navigate(serverURL+"/s/rcc-fattree320-websearch"))
	waitJS(t, ctx, `document.body.dataset.valid === "true" && !document.getElementById("run-btn").disabled`, 30*time.Second)
	must(t, ctx, chromedp.Click(chromedp.CSS("#run-btn")))
	waitJS(t, ctx, `document.getElementById("status").textContent === "running" && document.getElementById("progress").value > 0.05`, 30*time.Second)
	t0 := time.Now()
	must(t, ctx, chromedp.Click(chromedp.CSS("#stop-btn")))
	waitJS(t, ctx, `document.getElementById("status").textContent === "cancelled"`, 20*time.Second)
	took := time.Since(t0)
	t.Logf("Stop to cancelled: %v", took)
	if took > 3*time.Second {
		t.Errorf("Stop took %v, want under 3 s", took)
	}
	screenshot(t, ctx, "lab-stopped")
	noErrors(t, ctx)
}

// viewShot saves what the window shows (the top of a long page, readable
// at full size) under e2e/screenshots.
func viewShot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join("screenshots", name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRunPageSimulatedProgress: a live run's page says how much of the
// scenario's duration it has simulated ("… of 5 ms simulated").
func TestRunPageSimulatedProgress(t *testing.T) {
	var run struct{ ID string }
	apiPost(t, "/api/runs", map[string]any{"scenarioId": libraryID(t, "mpcc-exp1"), "speed": 100}, &run) // 50 s to watch
	defer apiPost(t, "/api/runs/"+run.ID+"/cancel", nil, nil)
	ctx := browser(t)
	must(t, ctx, chromedp.Navigate(serverURL+"/r/"+run.ID))
	waitJS(t, ctx, `/^[0-9.]+ (ps|ns|µs|ms) of 5 ms simulated$/.test((document.getElementById("progress-text") || {}).textContent || "")`, 20*time.Second)
	noErrors(t, ctx)
}

// TestCostFromMeasuredSpeed: once a run of a size has run as fast as
// possible on this server, the lab's cost line for a scenario of that
// size says its expected wall time comes from runs timed here.
func TestCostFromMeasuredSpeed(t *testing.T) {
	// HPCC's 2-flow fairness over 60 ms: 3 hosts, about 6 M events, 0.7 s
	// here (a run under 50 ms is not timed: a machine several times faster
	// still times this one)
	var sc struct{ Scenario map[string]any }
	apiGet(t, "/api/scenarios/fairness-2flows-hpcc", &sc)
	doc := sc.Scenario
	doc["name"] = "fairness-2flows-hpcc over 60 ms"
	doc["duration"] = "60ms"
	var stored struct{ ID string }
	apiPost(t, "/api/scenarios", doc, &stored)
	id := startRun(t, map[string]any{"scenarioId": stored.ID})
	waitStatus(t, id, "done")
	ctx := browser(t)
	must(t, ctx, chromedp.Navigate(serverURL+"/s/"+stored.ID))
	waitJS(t, ctx, `document.body.dataset.valid === "true" && !document.getElementById("run-btn").disabled`, 20*time.Second)
	eval[bool](t, ctx, `(() => { const sp = document.getElementById("speed"); sp.value = "max"; sp.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`)
	waitJS(t, ctx, `/ of this size on this server\)$/.test(document.getElementById("cost-text").textContent)`, 10*time.Second)
	cost := eval[string](t, ctx, `document.getElementById("cost-text").textContent`)
	if !regexp.MustCompile(`^3 hosts, 2 flows, 60 ms simulated; expected to take (under a second|about \d+ s) \(from \d+ runs? of this size on this server\)$`).MatchString(cost) {
		t.Fatalf("cost line %q", cost)
	}
	viewShot(t, ctx, "lab-cost-measured")
	noErrors(t, ctx)
}
