package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Issue 21: the lab as a student and an instructor meet it: "run with
// every algorithm", compare, the run page's parameters, the topology
// selection, and the lab's new scenarios.

// doneRun starts a run through the API and waits for it to be done.
func doneRun(t *testing.T, body map[string]any) string {
	t.Helper()
	var r struct{ ID string }
	apiPost(t, "/api/runs", body, &r)
	if r.ID == "" {
		t.Fatalf("no run started by %v", body)
	}
	waitStatus(t, r.ID, "done")
	return r.ID
}

// TestRunAllKeepsTheOriginal: "run this scenario with every algorithm" on
// a run with its own parameters compares that run, as it ran, with every
// other algorithm at its defaults, and says so.
func TestRunAllKeepsTheOriginal(t *testing.T) {
	orig := doneRun(t, map[string]any{"scenarioId": "incast-8to1", "cc": map[string]any{"algorithm": "dcqcn", "params": map[string]any{"ai": 40}}})
	var algos []struct{ Name string }
	apiGet(t, "/api/algorithms", &algos)
	ctx := browser(t)
	must(t, ctx, chromedp.Navigate(serverURL+"/r/"+orig), chromedp.WaitVisible(chromedp.CSS("#run-all")))
	must(t, ctx, chromedp.Click(chromedp.CSS("#run-all")))
	waitJS(t, ctx, fmt.Sprintf(`location.pathname === "/compare" && new URLSearchParams(location.search).get("runs").split(",").length === %d`, len(algos)), 90*time.Second)
	if first := eval[string](t, ctx, `new URLSearchParams(location.search).get("runs").split(",")[0]`); first != orig {
		t.Fatalf("the first compared run is %s, not the original %s", first, orig)
	}
	waitJS(t, ctx, `[...document.querySelectorAll("#compare-table thead .badge")].every((b) => b.textContent === "done") && document.body.dataset.charts === "ready"`, 120*time.Second)
	labels := eval[[]string](t, ctx, `[...document.querySelectorAll("#compare-table thead .col-label")].map((a) => a.textContent)`)
	if len(labels) != len(algos) || labels[0] != "dcqcn" {
		t.Fatalf("column labels %v", labels)
	}
	seen := map[string]bool{}
	for _, l := range labels {
		if seen[l] {
			t.Fatalf("two columns labelled %q: %v", l, labels)
		}
		seen[l] = true
	}
	for _, a := range algos {
		if !seen[a.Name] {
			t.Fatalf("no column for %s: %v", a.Name, labels)
		}
	}
	if p := eval[string](t, ctx, `document.querySelector("#params-row td").innerText`); !strings.Contains(p, "ai = 40") {
		t.Fatalf("the original's parameters: %q", p)
	}
	if n := eval[string](t, ctx, `document.querySelector("#compare-table thead .col-note").textContent`); n != "the original, as it ran" {
		t.Fatalf("the first column is noted %q", n)
	}
	if note := eval[string](t, ctx, `(document.getElementById("defaults-note") || {}).textContent || ""`); !strings.Contains(note, "defaults") {
		t.Fatalf("no note on the defaults: %q", note)
	}
	screenshot(t, ctx, "compare-run-all-original")
	noErrors(t, ctx)
}

// TestCompareTable: runs of one workload under different congestion
// control (one from a scenario the lab would store anew) are one scenario;
// columns say what tells apart runs of one algorithm; differing parameters
// are marked; values have units; no best on ties, wall-clock rows or while
// a run has not ended; the header stays in view.
func TestCompareTable(t *testing.T) {
	a := doneRun(t, map[string]any{"scenarioId": "incast-8to1", "cc": map[string]any{"algorithm": "dcqcn"}})
	b := doneRun(t, map[string]any{"scenarioId": "incast-8to1", "cc": map[string]any{"algorithm": "dcqcn", "params": map[string]any{"ai": 40}}})
	var sc struct{ Scenario map[string]any }
	apiGet(t, "/api/scenarios/incast-8to1", &sc)
	doc := sc.Scenario
	doc["cc"] = map[string]any{"algorithm": "hpcc"}
	c := doneRun(t, map[string]any{"scenario": doc})
	ctx := browser(t)
	must(t, ctx, chromedp.Navigate(serverURL+"/compare?runs="+a+","+b+","+c), chromedp.WaitVisible(chromedp.CSS("#compare-table")))
	if n := eval[int](t, ctx, `[...document.querySelectorAll(".notice")].filter((p) => p.textContent.includes("different scenarios")).length`); n != 0 {
		t.Fatal("runs differing only in cc are called different scenarios")
	}
	labels := eval[[]string](t, ctx, `[...document.querySelectorAll("#compare-table thead .col-label")].map((a) => a.textContent)`)
	if strings.Join(labels, "|") != "dcqcn, defaults|dcqcn, ai=40|hpcc" {
		t.Fatalf("column labels %v", labels)
	}
	differs := eval[[]string](t, ctx, `[...document.querySelectorAll("#params-row td")].map((td) => [...td.querySelectorAll(".param.differs")].map((p) => p.textContent).join(";"))`)
	if !strings.HasPrefix(differs[0], "ai = ") || differs[1] != "ai = 40" || differs[2] != "" {
		t.Fatalf("differing parameters marked %q", differs)
	}
	text := eval[string](t, ctx, `document.querySelector("#compare-table tbody").innerText`)
	if strings.Contains(text, "e+") || strings.Contains(text, "e-0") {
		t.Fatalf("a value in exponent notation:\n%s", text)
	}
	if !strings.Contains(text, " KB") && !strings.Contains(text, " MB") {
		t.Fatalf("no queue in bytes with a unit:\n%s", text)
	}
	row := func(label string) string {
		return fmt.Sprintf(`[...document.querySelectorAll("#compare-table tbody tr")].find((tr) => tr.querySelector("th").textContent.trim().startsWith(%q))`, label)
	}
	for _, l := range []string{"wall-clock seconds", "events per second", "flows finished"} {
		if n := eval[int](t, ctx, `(`+row(l)+` || {querySelectorAll: () => []}).querySelectorAll("td.best").length`); n != 0 {
			t.Fatalf("row %q marks a best", l)
		}
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#compare-table td.best").length`); n == 0 {
		t.Fatal("no best marked at all")
	}
	// the header stays in view as the table scrolls
	must(t, ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector(".compare-scroll").scrollTop = 500`))
	gap := eval[float64](t, ctx, `document.querySelector("#compare-table thead th").getBoundingClientRect().top - document.querySelector(".compare-scroll").getBoundingClientRect().top`)
	if gap < -1 || gap > 1 {
		t.Fatalf("the header is %v px from the top of the scrolled table", gap)
	}
	must(t, ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector(".compare-scroll").scrollIntoView()`))
	viewport(t, ctx, "compare-sticky")
	must(t, ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector(".compare-scroll").scrollTop = 0; window.scrollTo(0, 0)`))
	screenshot(t, ctx, "compare-table")
	noErrors(t, ctx)

	// a run still going: no best anywhere, and the page says why
	slow := slowRun(t)
	must(t, ctx, chromedp.Navigate(serverURL+"/compare?runs="+a+","+slow), chromedp.WaitVisible(chromedp.CSS("#compare-table")))
	if n := eval[int](t, ctx, `document.querySelectorAll("#compare-table td.best").length`); n != 0 {
		t.Fatalf("%d best cells beside an unfinished run", n)
	}
	if eval[string](t, ctx, `(document.getElementById("pending-note") || {}).textContent || ""`) == "" {
		t.Fatal("no note that a run has not ended")
	}
	screenshot(t, ctx, "compare-pending")
}

// TestRunPageParamsAtStart: a run changed live shows its parameters as
// they were at the start, and each change at its simulated time.
func TestRunPageParamsAtStart(t *testing.T) {
	var r struct{ ID string }
	if code := instructorDo(t, "POST", "/api/runs", map[string]any{"scenarioId": "incast-8to1", "cc": map[string]any{"algorithm": "dcqcn"}, "speed": 10}, &r); code != 201 {
		t.Fatalf("start: %d", code)
	}
	waitStatus(t, r.ID, "running")
	time.Sleep(300 * time.Millisecond)
	if code := instructorDo(t, "POST", "/api/runs/"+r.ID+"/params", map[string]any{"ai": 40}, nil); code >= 300 {
		t.Fatalf("live change: %d", code)
	}
	if code := instructorDo(t, "POST", "/api/runs/"+r.ID+"/speed", map[string]any{"speed": "max"}, nil); code >= 300 {
		t.Fatalf("speed: %d", code)
	}
	waitStatus(t, r.ID, "done")
	var run struct{ Params map[string]float64 }
	apiGet(t, "/api/runs/"+r.ID, &run)
	ctx := browser(t)
	must(t, ctx, chromedp.Navigate(serverURL+"/r/"+r.ID), chromedp.WaitVisible(chromedp.CSS("#changes-table")))
	if h := eval[string](t, ctx, `document.getElementById("params-h").textContent`); h != "Parameters at the start" {
		t.Fatalf("parameters heading %q", h)
	}
	ai := eval[string](t, ctx, `[...document.querySelectorAll("table.params tr")].find((tr) => tr.querySelector("th").textContent === "ai").querySelector("td").textContent`)
	if ai == "40" || ai == "" {
		t.Fatalf("ai at the start shows %q (the final value is %v)", ai, run.Params["ai"])
	}
	change := eval[string](t, ctx, `document.querySelector("#changes-table tbody tr").innerText`)
	if !strings.Contains(change, "ai: "+ai+" → 40") {
		t.Fatalf("the change reads %q (ai at the start %s)", change, ai)
	}
	waitJS(t, ctx, `document.body.dataset.charts === "ready" && document.body.dataset.markers === "1"`, 20*time.Second)
	screenshot(t, ctx, "run-params-at-start")
	noErrors(t, ctx)
}

// TestTopologySelectionResets: a clicked host is forgotten when a new run
// starts and when the topology changes.
func TestTopologySelectionResets(t *testing.T) {
	ctx := browser(t)
	must(t, ctx, chromedp.Navigate(serverURL+"/s/incast-8to1"))
	waitJS(t, ctx, `document.body.dataset.valid === "true" && !document.getElementById("run-btn").disabled`, 20*time.Second)
	host := `#topology-view .node.host[data-node="h3"]`
	highlighted := `document.querySelectorAll("#topology-view .node.host.highlight").length`
	must(t, ctx, chromedp.Focus(chromedp.CSS(host)), chromedp.KeyEvent("\r"))
	waitJS(t, ctx, highlighted+` === 1`, 5*time.Second)
	must(t, ctx, chromedp.Click(chromedp.CSS("#run-btn")))
	waitJS(t, ctx, `document.getElementById("status").textContent === "done"`, 60*time.Second)
	if n := eval[int](t, ctx, highlighted); n != 0 {
		t.Fatalf("%d hosts still selected in the new run", n)
	}
	must(t, ctx, chromedp.Focus(chromedp.CSS(host)), chromedp.KeyEvent("\r"))
	waitJS(t, ctx, highlighted+` === 1`, 5*time.Second)
	// another topology: a second receiver
	before := eval[int](t, ctx, `document.querySelectorAll("#topology-view .node.host").length`)
	must(t, ctx, chromedp.SetValue(chromedp.CSS(`[data-path="topology.receivers"]`), "2"))
	waitJS(t, ctx, fmt.Sprintf(`document.body.dataset.valid === "true" && document.querySelectorAll("#topology-view .node.host").length !== %d`, before), 20*time.Second)
	if n := eval[int](t, ctx, highlighted); n != 0 {
		t.Fatalf("%d hosts still selected on another topology", n)
	}
	screenshot(t, ctx, "lab-selection-reset")
	noErrors(t, ctx)
}

// TestLabForkNote: changing the algorithm and running stores a new
// scenario, and the lab says so: the same scenario as the original with
// another congestion control (runs of both compare as one scenario).
func TestLabForkNote(t *testing.T) {
	ctx := browser(t)
	orig := libraryID(t, "incast-8to1")
	must(t, ctx, chromedp.Navigate(serverURL+"/s/incast-8to1"))
	waitJS(t, ctx, `document.body.dataset.valid === "true" && !document.getElementById("run-btn").disabled`, 20*time.Second)
	algo := "hpcc"
	if eval[string](t, ctx, `document.getElementById("f-cc-algorithm").value`) == "hpcc" {
		algo = "dcqcn"
	}
	must(t, ctx, chromedp.SetValue(chromedp.CSS("#f-cc-algorithm"), algo))
	waitJS(t, ctx, fmt.Sprintf(`document.body.dataset.valid === "true" && JSON.parse(document.getElementById("json-text").value).cc.algorithm === %q`, algo), 20*time.Second)
	must(t, ctx, chromedp.Click(chromedp.CSS("#run-btn")))
	waitJS(t, ctx, `document.getElementById("fork-note") && document.getElementById("fork-note").dataset.same === "true"`, 20*time.Second)
	note := eval[string](t, ctx, `document.getElementById("fork-note").textContent`)
	if !strings.Contains(note, orig) || !strings.Contains(note, algo) {
		t.Fatalf("fork note %q", note)
	}
	waitJS(t, ctx, `document.getElementById("status").textContent === "done"`, 60*time.Second)
	viewport(t, ctx, "lab-fork-note")
	noErrors(t, ctx)
}

// TestCompareFlowChartsAndStartParams: the compare page draws each run's
// per-flow throughput as the run page does (a trailing mean over the
// window its title states, a flow in one colour in every run's chart) and
// its total throughput from the same means; its parameters row shows a run
// changed live as it started, then the change ("ai: 5 → 40 @ t").
func TestCompareFlowChartsAndStartParams(t *testing.T) {
	a := doneRun(t, map[string]any{"scenarioId": "incast-8to1", "cc": map[string]any{"algorithm": "dcqcn", "params": map[string]any{"ai": 5}}})
	var r struct{ ID string }
	if code := instructorDo(t, "POST", "/api/runs", map[string]any{"scenarioId": "incast-8to1", "cc": map[string]any{"algorithm": "dcqcn", "params": map[string]any{"ai": 5}}, "speed": 10}, &r); code != 201 {
		t.Fatalf("start: %d", code)
	}
	waitStatus(t, r.ID, "running")
	time.Sleep(300 * time.Millisecond)
	if code := instructorDo(t, "POST", "/api/runs/"+r.ID+"/params", map[string]any{"ai": 40}, nil); code >= 300 {
		t.Fatalf("live change: %d", code)
	}
	if code := instructorDo(t, "POST", "/api/runs/"+r.ID+"/speed", map[string]any{"speed": "max"}, nil); code >= 300 {
		t.Fatalf("speed: %d", code)
	}
	waitStatus(t, r.ID, "done")
	ctx := browser(t)
	must(t, ctx, chromedp.Navigate(serverURL+"/compare?runs="+a+","+r.ID), chromedp.WaitVisible(chromedp.CSS("#compare-table")))
	waitJS(t, ctx, `document.body.dataset.charts === "ready"`, 30*time.Second)
	cells := eval[[]string](t, ctx, `[...document.querySelectorAll("#params-row td")].map((td) => td.innerText)`)
	if len(cells) != 2 || !strings.Contains(cells[1], "ai = 5") || strings.Contains(cells[1], "ai = 40") ||
		!regexp.MustCompile(`ai: 5 → 40 @ [\d.]+(ns|us|ms|s)$`).MatchString(cells[1]) || strings.Contains(cells[0], "→") {
		t.Fatalf("parameters row %q", cells)
	}
	// the live change is no difference between the runs' starting values
	if n := eval[int](t, ctx, `[...document.querySelectorAll("#params-row .param.differs")].filter((p) => p.textContent.startsWith("ai")).length`); n != 0 {
		t.Fatal("ai marked as differing though both runs started at 5")
	}
	// the compare page's window, in the same words as the run page's title
	w := eval[string](t, ctx, `document.getElementById("cmp-tput").dataset.windowNs`)
	if w == "" || w == "0" {
		t.Fatal("no averaging window on the total throughput chart")
	}
	titles := eval[[]string](t, ctx, `[...document.querySelectorAll("#cmp-tput .u-title, #cmp-flows .u-title")].map((e) => e.textContent)`)
	if len(titles) != 3 {
		t.Fatalf("charts %q: want the total and one per run", titles)
	}
	// every title states one window: the per-flow charts in the run page's
	// words ("Throughput per flow (mean over the last 100 µs)")
	win := regexp.MustCompile(`over the last ([\d.]+ [nµm]?s)\)`)
	var windows []string
	for i, title := range titles {
		m := win.FindStringSubmatch(title)
		if m == nil || (i > 0 && !strings.Contains(title, "Throughput per flow (mean over the last")) {
			t.Fatalf("chart title %q does not state the window as the run page does", title)
		}
		windows = append(windows, m[1])
	}
	if windows[0] != windows[1] || windows[1] != windows[2] {
		t.Fatalf("the charts state different windows: %q", titles)
	}
	// flow 0 (and every flow) has one colour in both runs' charts, its id's
	first := legendColors(t, ctx, `cmp-flows .cmp-flow-chart:nth-child(1)`)
	second := legendColors(t, ctx, `cmp-flows .cmp-flow-chart:nth-child(2)`)
	if len(first) < 2 || len(first) != len(second) {
		t.Fatalf("flows charted: %v and %v", first, second)
	}
	colours := map[string]bool{}
	for label, c := range first {
		if second[label] != c {
			t.Errorf("%s: colour %s in one run, %s in the other", label, c, second[label])
		}
		colours[c] = true
	}
	if len(colours) != len(first) {
		t.Errorf("flows share colours: %v", first)
	}
	must(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("cmp-tput").scrollIntoView()`))
	viewport(t, ctx, "compare-total-throughput")
	must(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("cmp-flows").scrollIntoView()`))
	viewport(t, ctx, "compare-flow-charts")
	must(t, ctx, chromedp.Evaluate[chromedp.Void](`window.scrollTo(0, 0)`))
	viewport(t, ctx, "compare-params-live-change")
	noErrors(t, ctx)
}

// TestRunPageLiveChangeTable: a parameter change made while the run page
// watches a live run appears in its change table at once, old → new at
// its simulated time, as the page writes it after a reload, and the
// parameters above become "at the start"; reloading shows each change once.
func TestRunPageLiveChangeTable(t *testing.T) {
	var r struct{ ID string }
	if code := instructorDo(t, "POST", "/api/runs", map[string]any{"scenarioId": "incast-8to1", "cc": map[string]any{"algorithm": "dcqcn", "params": map[string]any{"ai": 5}}, "speed": 10}, &r); code != 201 {
		t.Fatalf("start: %d", code)
	}
	t.Cleanup(func() { instructorDo(t, "POST", "/api/runs/"+r.ID+"/cancel", nil, nil) })
	waitStatus(t, r.ID, "running")
	ctx := browser(t)
	must(t, ctx, chromedp.Navigate(serverURL+"/r/"+r.ID))
	waitJS(t, ctx, `document.getElementById("status").textContent === "running" && !!document.getElementById("progress-text")`, 20*time.Second)
	if !eval[bool](t, ctx, `document.getElementById("changes-table").hidden`) {
		t.Fatal("an empty change table is shown")
	}
	eval[bool](t, ctx, `window.__samePage = true`)
	change := func(ai float64) {
		if code := instructorDo(t, "POST", "/api/runs/"+r.ID+"/params", map[string]any{"ai": ai}, nil); code >= 300 {
			t.Fatalf("live change: %d", code)
		}
	}
	change(40)
	waitJS(t, ctx, `document.querySelectorAll("#changes-table tbody tr").length === 1`, 10*time.Second)
	change(60)
	waitJS(t, ctx, `document.querySelectorAll("#changes-table tbody tr").length === 2`, 10*time.Second)
	if !eval[bool](t, ctx, `window.__samePage === true && !document.getElementById("changes-table").hidden`) {
		t.Fatal("the table appeared by a reload, or stayed hidden")
	}
	rows := eval[[]string](t, ctx, `[...document.querySelectorAll("#changes-table tbody tr")].map((tr) => [...tr.cells].map((c) => c.textContent).join(" | "))`)
	re := regexp.MustCompile(`^[\d.]+(ns|us|ms|s) \| ai: (5 → 40|40 → 60)$`)
	if len(rows) != 2 || !re.MatchString(rows[0]) || !strings.HasSuffix(rows[0], "5 → 40") || !strings.HasSuffix(rows[1], "40 → 60") {
		t.Fatalf("change rows %q", rows)
	}
	if h := eval[string](t, ctx, `document.getElementById("params-h").textContent`); h != "Parameters at the start" {
		t.Fatalf("parameters heading %q", h)
	}
	must(t, ctx, chromedp.Evaluate[chromedp.Void](`document.getElementById("params-h").scrollIntoView()`))
	viewport(t, ctx, "run-live-change-table")
	// after a reload (the server's table, the stream replaying the changes)
	must(t, ctx, chromedp.Reload())
	waitJS(t, ctx, `document.getElementById("status").textContent === "running" && !!document.getElementById("progress-text")`, 20*time.Second)
	time.Sleep(500 * time.Millisecond) // the replayed changes have arrived
	again := eval[[]string](t, ctx, `[...document.querySelectorAll("#changes-table tbody tr")].map((tr) => [...tr.cells].map((c) => c.textContent).join(" | "))`)
	if strings.Join(again, "\n") != strings.Join(rows, "\n") {
		t.Fatalf("after a reload the table reads %q, before %q", again, rows)
	}
	change(80)
	waitJS(t, ctx, `document.querySelectorAll("#changes-table tbody tr").length === 3`, 10*time.Second)
	if last := eval[string](t, ctx, `document.querySelector("#changes-table tbody tr:last-child").textContent`); !strings.HasSuffix(last, "ai: 60 → 80") {
		t.Fatalf("the change after the reload reads %q", last)
	}
	noErrors(t, ctx)
}
