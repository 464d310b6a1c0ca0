package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestSweepFromTheLab: the lab's Sweep… panel on a small incast (DCQCN,
// senders starting within 10 µs of each other at random, so that the seeds
// differ): a bad value shows the server's error next to the values; a
// 2-value × 2-seed sweep of DCQCN's additive increase lands on the sweep
// page, fills in, charts the metric with its 95% band, follows the metric
// picked, and a point's runs open their run pages; its owner deletes it.
func TestSweepFromTheLab(t *testing.T) {
	ctx := browser(t)
	must(t, ctx, chromedp.Navigate(serverURL+"/s/incast-8to1"))
	waitJS(t, ctx, `document.body.dataset.valid === "true" && !document.getElementById("run-btn").disabled`, 20*time.Second)
	must(t, ctx, chromedp.SetValue(chromedp.CSS(`#workload-list > li[data-kind="incast"] [data-rel="jitter"]`), "10us"))
	must(t, ctx, chromedp.SetValue(chromedp.CSS("#f-cc-algorithm"), "dcqcn"))
	must(t, ctx, chromedp.WaitVisible(chromedp.CSS(`#params [data-path="cc.params.ai"]`)))
	waitJS(t, ctx, `document.body.dataset.valid === "true" && (() => { const d = JSON.parse(document.getElementById("json-text").value);
		return d.cc.algorithm === "dcqcn" && d.workload[0].jitter === "10us"; })()`, 20*time.Second)

	// the panel offers the algorithm's parameters and the switches'
	must(t, ctx, chromedp.Click(chromedp.CSS("#sweep-btn")))
	must(t, ctx, chromedp.WaitVisible(chromedp.CSS("#sweep-panel")))
	opts := eval[string](t, ctx, `[...document.getElementById("sw-param-0").options].map((o) => o.value).join(" ")`)
	for _, want := range []string{"cc.params.ai", "cc.params.g", "switch.buffer", "switch.ecn.kmin", "switch.ecn.kmax", "switch.ecn.pmax"} {
		if !strings.Contains(" "+opts+" ", " "+want+" ") {
			t.Fatalf("the sweep panel offers %q, not %s", opts, want)
		}
	}
	must(t, ctx, chromedp.SetValue(chromedp.CSS("#sw-param-0"), "cc.params.ai"))
	must(t, ctx, chromedp.SetValue(chromedp.CSS("#sw-values-0"), "5,fast"))
	must(t, ctx, chromedp.SetValue(chromedp.CSS("#sw-seeds"), "1-2"))
	waitJS(t, ctx, `document.getElementById("sweep-count").textContent === "2 points × 2 seeds = 4 runs"`, 5*time.Second)

	// a value the parameter cannot take: the server says so, next to it
	must(t, ctx, chromedp.Click(chromedp.CSS("#sweep-start")))
	waitJS(t, ctx, `document.getElementById("sw-axis-0-err").textContent !== ""`, 20*time.Second)
	msg := eval[string](t, ctx, `document.getElementById("sw-axis-0-err").textContent`)
	field := eval[string](t, ctx, `document.getElementById("sw-axis-0-err").dataset.field`)
	if !strings.Contains(msg, "fast") || !strings.HasPrefix(field, "axes[0]") ||
		eval[string](t, ctx, `document.getElementById("sw-values-0").getAttribute("aria-invalid")`) != "true" {
		t.Fatalf("the bad value's error: %q (field %q)", msg, field)
	}
	if p := eval[string](t, ctx, `location.pathname`); p != "/s/incast-8to1" {
		t.Fatalf("a refused sweep left the lab for %s", p)
	}
	screenshot(t, ctx, "sweep-panel-invalid")

	// the sweep
	must(t, ctx, chromedp.SetValue(chromedp.CSS("#sw-values-0"), "5,40"))
	must(t, ctx, chromedp.Click(chromedp.CSS("#sweep-start")))
	waitJS(t, ctx, `location.pathname.startsWith("/sweeps/")`, 20*time.Second)
	id := strings.TrimPrefix(eval[string](t, ctx, `location.pathname`), "/sweeps/")
	waitJS(t, ctx, `document.body.dataset.sweep === "done" && document.body.dataset.pointsDone === "2"`, 90*time.Second)
	chart := `document.getElementById("sweep-chart").dataset`
	waitJS(t, ctx, chart+`.points === "2" && `+chart+`.band === "2"`, 10*time.Second)
	if open := eval[string](t, ctx, chart+`.bandOpen`); open == "0" {
		t.Fatalf("the band has no width at any point (the seeds gave the same results)")
	}
	if got := eval[string](t, ctx, `document.getElementById("progress-text").textContent`); got != "4 of 4 runs done" {
		t.Fatalf("progress %q", got)
	}
	// the chart draws what the API says
	var api struct {
		Spec struct {
			Axes []struct{ Path string }
		}
		Points []struct {
			Values  []string
			Runs    []string
			Metrics map[string]struct{ Mean float64 }
		}
		Mine bool
	}
	apiGet(t, "/api/sweeps/"+id, &api)
	var means []float64
	if err := json.Unmarshal([]byte(eval[string](t, ctx, chart+`.means`)), &means); err != nil {
		t.Fatal(err)
	}
	metric := eval[string](t, ctx, chart+`.metric`)
	if len(api.Points) != 2 || len(means) != 2 || api.Spec.Axes[0].Path != "cc.params.ai" ||
		means[0] != api.Points[0].Metrics[metric].Mean || means[1] != api.Points[1].Metrics[metric].Mean {
		t.Fatalf("the chart's %s means %v, the API's points %+v", metric, means, api.Points)
	}
	if eval[string](t, ctx, `document.getElementById("metric").selectedOptions[0].textContent`) != "FCT slowdown p99" {
		t.Fatalf("the default metric is %q", eval[string](t, ctx, `document.getElementById("metric").selectedOptions[0].textContent`))
	}
	// another metric redraws the chart, in its unit, and the share link keeps it
	must(t, ctx, chromedp.SetValue(chromedp.CSS("#metric"), "max_queue"))
	waitJS(t, ctx, chart+`.metric === "max_queue" && `+chart+`.points === "2" && new URL(location.href).searchParams.get("metric") === "max_queue"`, 10*time.Second)
	if got := eval[string](t, ctx, chart+`.means`); got == fmt.Sprint(means) || got == "" {
		t.Fatalf("switching the metric left the chart at %s", got)
	}
	if ticks := eval[string](t, ctx, `document.querySelector("#sweep-chart .u-title").textContent`); !strings.Contains(ticks, "Switch queue max") {
		t.Fatalf("the chart's title after switching: %q", ticks)
	}
	screenshot(t, ctx, "sweep-line")

	// a click on a marker shows that point's runs, one per seed
	var markers [][2]float64
	if err := json.Unmarshal([]byte(eval[string](t, ctx, chart+`.markers`)), &markers); err != nil || len(markers) != 2 {
		t.Fatalf("markers %v (%v)", markers, err)
	}
	eval[bool](t, ctx, `document.getElementById("sweep-chart").scrollIntoView({block: "center"}), true`)
	origin := eval[[]float64](t, ctx, `(() => { const r = document.querySelector("#sweep-chart .u-over").getBoundingClientRect(); return [r.left, r.top]; })()`)
	must(t, ctx, chromedp.MouseClickXY(origin[0]+markers[1][0], origin[1]+markers[1][1]))
	waitJS(t, ctx, `!document.getElementById("point-runs").hidden && document.querySelectorAll("#point-runs a.run-link").length === 2`, 10*time.Second)
	if got := eval[string](t, ctx, `document.getElementById("point-runs").dataset.index`); got != "1" {
		t.Fatalf("clicking the second marker picked point %s", got)
	}
	links := eval[[]string](t, ctx, `[...document.querySelectorAll("#point-runs a.run-link")].map((a) => a.getAttribute("href"))`)
	if links[0] != "/r/"+api.Points[1].Runs[0] || links[1] != "/r/"+api.Points[1].Runs[1] {
		t.Fatalf("the point's run links %v, its runs %v", links, api.Points[1].Runs)
	}
	screenshot(t, ctx, "sweep-point")
	noErrors(t, ctx)
	must(t, ctx, chromedp.Click(chromedp.CSS(`#point-runs a.run-link`)))
	waitJS(t, ctx, `location.pathname === "`+links[0]+`" && !!document.getElementById("summary-table")`, 20*time.Second)
	if s := eval[string](t, ctx, `document.getElementById("summary-table").innerText`); !strings.Contains(s, "8 of 8") {
		t.Fatalf("the run page of a sweep's run:\n%s", s)
	}
	// the run page leads back to its sweep
	waitJS(t, ctx, `!!document.querySelector('#sweep-note a[href="/sweeps/`+id+`"]')`, 10*time.Second)
	screenshot(t, ctx, "sweep-run")

	// the list has it, and its owner may delete it (a second click confirms)
	must(t, ctx, chromedp.Navigate(serverURL+"/sweeps"), chromedp.WaitVisible(chromedp.CSS(`#sweeps-table tr[data-sweep="`+id+`"]`)))
	if row := eval[string](t, ctx, `document.querySelector('#sweeps-table tr[data-sweep="`+id+`"]').innerText`); !strings.Contains(row, "4 / 4") || !strings.Contains(row, "done") {
		t.Fatalf("the list's row: %q", row)
	}
	screenshot(t, ctx, "sweeps")
	must(t, ctx, chromedp.Click(chromedp.CSS(`#sweeps-table tr[data-sweep="`+id+`"] a`)))
	waitJS(t, ctx, `location.pathname === "/sweeps/`+id+`" && document.body.dataset.sweep === "done"`, 20*time.Second)
	must(t, ctx, chromedp.Click(chromedp.CSS("#delete-btn")))
	waitJS(t, ctx, `document.getElementById("delete-btn").dataset.confirm === "1"`, 5*time.Second)
	must(t, ctx, chromedp.Click(chromedp.CSS("#delete-btn")))
	waitJS(t, ctx, `location.pathname === "/sweeps" && !document.querySelector('#sweeps-table tr[data-sweep="`+id+`"]')`, 20*time.Second)
	noErrors(t, ctx)
}

// TestSweepHeatmap: a two-axis sweep started through the API shows a
// heatmap of its 2 × 2 points, each cell coloured and labelled; a cell's
// runs open; someone else's sweep has no cancel or delete button.
func TestSweepHeatmap(t *testing.T) {
	var sw struct {
		ID    string
		Links map[string]string
	}
	apiPost(t, "/api/sweeps", map[string]any{"scenarioId": "incast-8to1", "name": "incast jitter × size",
		"grid": []string{"workload[0].jitter=0us,10us", "workload[0].size=100KB,200KB"}, "seeds": "1"}, &sw)
	if sw.ID == "" || sw.Links["page"] != "/sweeps/"+sw.ID {
		t.Fatalf("POST /api/sweeps: %+v", sw)
	}
	ctx := browser(t)
	must(t, ctx, chromedp.Navigate(serverURL+sw.Links["page"]))
	waitJS(t, ctx, `document.body.dataset.sweep === "done" && document.getElementById("sweep-heatmap").dataset.cells === "4"`, 90*time.Second)
	if n := eval[int](t, ctx, `document.querySelectorAll("#heatmap-table td.cell .cell-btn").length`); n != 4 {
		t.Fatalf("%d heatmap cells", n)
	}
	heads := eval[string](t, ctx, `[...document.querySelectorAll("#heatmap-table tbody th, #heatmap-table thead tr:last-child th.mono")].map((e) => e.textContent).join(" ")`)
	if heads != "0us 10us 100KB 200KB" && heads != "100KB 200KB 0us 10us" {
		t.Fatalf("the heatmap's headers: %q", heads)
	}
	// each cell prints its value on its colour, the legend names the ends
	cells := eval[[]string](t, ctx, `[...document.querySelectorAll("#heatmap-table .cell-btn")].map((b) => b.textContent + "|" + b.style.backgroundColor)`)
	colours := map[string]bool{}
	for _, c := range cells {
		text, bg, _ := strings.Cut(c, "|")
		if text == "" || text == "–" || !strings.HasPrefix(bg, "rgb(") {
			t.Fatalf("a heatmap cell %q", c)
		}
		colours[bg] = true
	}
	if len(colours) < 2 {
		t.Fatalf("the heatmap's cells all have one colour: %v", cells)
	}
	if lo, hi := eval[string](t, ctx, `document.querySelector("#heat-legend .heat-min").textContent`), eval[string](t, ctx, `document.querySelector("#heat-legend .heat-max").textContent`); lo == "" || hi == "" || lo == hi {
		t.Fatalf("the legend says %q to %q", lo, hi)
	}
	// not this browser's sweep: no buttons that would be refused
	if eval[bool](t, ctx, `!!document.getElementById("delete-btn") || !!document.getElementById("cancel-btn")`) || !eval[bool](t, ctx, `!!document.getElementById("foreign-note")`) {
		t.Fatal("someone else's sweep offers to cancel or delete it")
	}
	must(t, ctx, chromedp.Click(chromedp.CSS(`#heatmap-table td.cell[data-index="3"] .cell-btn`)))
	waitJS(t, ctx, `document.getElementById("point-runs").dataset.index === "3" && document.querySelectorAll("#point-runs a.run-link").length === 1`, 10*time.Second)
	screenshot(t, ctx, "sweep-heatmap")
	// the site's navigation leads to the sweeps
	must(t, ctx, chromedp.Click(chromedp.CSS(`.site-header nav a[href="/sweeps"]`)))
	waitJS(t, ctx, `location.pathname === "/sweeps" && !!document.querySelector('#sweeps-table tr[data-sweep="`+sw.ID+`"]')`, 20*time.Second)
	noErrors(t, ctx)
}

// TestSweepUnchangedHint: a sweep whose every point gives the same results
// (DCQCN's ai on the 8-to-1 incast: its flows end in about 1 ms, and ai
// acts only when the 300 µs rate-increase timer fires on a flow that has
// been cut, so 5, 10 and 40 give identical runs) says so next to its chart;
// a sweep whose points differ (the flow size) says nothing of the kind.
func TestSweepUnchangedHint(t *testing.T) {
	var sc struct{ Scenario map[string]any }
	apiGet(t, "/api/scenarios/incast-8to1", &sc)
	doc := sc.Scenario
	doc["name"] = "incast-8to1 under dcqcn"
	doc["cc"] = map[string]any{"algorithm": "dcqcn"}
	var stored struct{ ID string }
	apiPost(t, "/api/scenarios", doc, &stored)
	if stored.ID == "" {
		t.Fatal("no scenario stored")
	}
	sweep := func(name string, grid string) string {
		var sw struct {
			ID    string
			Links map[string]string
		}
		apiPost(t, "/api/sweeps", map[string]any{"scenarioId": stored.ID, "name": name, "grid": []string{grid}, "seeds": "1"}, &sw)
		if sw.ID == "" {
			t.Fatalf("POST /api/sweeps %s: %+v", grid, sw)
		}
		return sw.Links["page"]
	}
	same := sweep("ai on the incast", "cc.params.ai=5,10,40")
	differ := sweep("size on the incast", "workload[0].size=100KB,200KB")
	ctx := browser(t)
	must(t, ctx, chromedp.Navigate(serverURL+same))
	waitJS(t, ctx, `document.body.dataset.sweep === "done" && document.body.dataset.charts === "ready" && !!document.getElementById("sweep-unchanged")`, 90*time.Second)
	hint := eval[string](t, ctx, `document.getElementById("sweep-unchanged").hidden ? "" : document.getElementById("sweep-unchanged").textContent`)
	if !strings.HasPrefix(hint, "cc.params.ai changed nothing in these runs: every value gave the same results") {
		t.Fatalf("hint %q", hint)
	}
	// the hint sits next to the chart, above it
	if !eval[bool](t, ctx, `document.getElementById("sweep-unchanged").nextElementSibling.id === "sweep-chart" && !document.getElementById("sweep-chart").hidden`) {
		t.Fatal("the hint is not next to the chart")
	}
	viewport(t, ctx, "sweep-unchanged")
	noErrors(t, ctx)
	must(t, ctx, chromedp.Navigate(serverURL+differ))
	waitJS(t, ctx, `document.body.dataset.sweep === "done" && document.body.dataset.charts === "ready"`, 90*time.Second)
	means := eval[string](t, ctx, `document.getElementById("sweep-chart").dataset.means`)
	if eval[bool](t, ctx, `!!document.getElementById("sweep-unchanged") && !document.getElementById("sweep-unchanged").hidden`) {
		t.Fatalf("a sweep whose points differ (%s) is said to change nothing", means)
	}
	noErrors(t, ctx)
}
