package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// startRun starts a library scenario through the API and waits for it to
// end (done).
func startRun(t *testing.T, body map[string]any) string {
	t.Helper()
	var r struct{ ID string }
	apiPost(t, "/api/runs", body, &r)
	deadline := time.Now().Add(120 * time.Second)
	for {
		var st struct{ Status string }
		apiGet(t, "/api/runs/"+r.ID, &st)
		if st.Status == "done" {
			return r.ID
		}
		if time.Now().After(deadline) || st.Status == "failed" {
			t.Fatalf("run %s is %s", r.ID, st.Status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// legendColors maps a chart's legend labels to their marker colours.
// (the marker is its bottom border: the stylesheet zeroes the others, whose
// colour is then the text's, the same for every series).
func legendColors(t *testing.T, ctx context.Context, id string) map[string]string {
	t.Helper()
	return eval[map[string]string](t, ctx, fmt.Sprintf(`Object.fromEntries([...document.querySelectorAll("#%s .u-legend tr.u-series:not(:first-child)")].map((tr) =>
		[tr.querySelector(".u-label").textContent, getComputedStyle(tr.querySelector(".u-marker")).borderBottomColor]))`, id))
}

// TestRunPageFlowCharts: on mpcc-exp1's run page (1 µs samples of 1 Gbps
// links), per-flow throughput is averaged over a stated window and no
// sample is above the link; a flow has one colour on the throughput and QP
// charts; the aggregate charts, the convergence view and the FCT slowdown
// CDF are drawn; and a chart downloads as a PNG.
func TestRunPageFlowCharts(t *testing.T) {
	id := startRun(t, map[string]any{"scenarioId": "mpcc-exp1"})
	var series struct {
		Series []struct {
			Metric string
			Entity string
			V      []*float64
		}
	}
	apiGet(t, "/api/runs/"+id+"/series?metric=throughput_bps&level=0", &series)
	for _, s := range series.Series {
		for _, v := range s.V {
			if v != nil && *v > 1e9*(1+1e-9) {
				t.Fatalf("flow %s: throughput sample %g above the 1 Gbps link", s.Entity, *v)
			}
		}
	}
	ctx := browser(t)
	must(t, ctx, chromedp.Navigate(serverURL+"/r/"+id))
	waitJS(t, ctx, `document.body.dataset.charts === "ready"`, 30*time.Second)
	waitJS(t, ctx, `Number(document.getElementById("chart-total").dataset.points || 0) > 0 && document.getElementById("slowdown-note")`, 20*time.Second)
	if w := eval[string](t, ctx, `document.getElementById("chart-tput").dataset.windowNs || ""`); w == "" {
		t.Fatal("no averaging window on the throughput chart")
	}
	if title := eval[string](t, ctx, `document.querySelector("#chart-tput .u-title").textContent`); !strings.Contains(title, "mean over the last") {
		t.Fatalf("throughput chart title %q does not state its window", title)
	}
	// one colour per flow across the charts
	tput, qp := legendColors(t, ctx, "chart-tput"), legendColors(t, ctx, "chart-qp")
	if len(qp) == 0 {
		t.Fatal("no QP series")
	}
	for label, c := range qp {
		if tput[label] != c {
			t.Errorf("%s: QP colour %s, throughput colour %s", label, c, tput[label])
		}
	}
	if eval[bool](t, ctx, `document.getElementById("chart-util").hidden || Number(document.getElementById("chart-active").dataset.points || 0) === 0`) {
		t.Fatal("utilisation or active-flow chart missing")
	}
	def := eval[string](t, ctx, `document.getElementById("conv-def").textContent`)
	if !strings.Contains(def, "fair share") || !strings.Contains(def, "±10%") {
		t.Fatalf("convergence definition: %q", def)
	}
	if n := eval[int](t, ctx, `Number(document.getElementById("convergence").dataset.flows)`); n != 4 {
		t.Fatalf("convergence of %d flows, want 4", n)
	}
	if txt := eval[string](t, ctx, `document.getElementById("slowdown-note").textContent`); !strings.Contains(txt, "No flow finished") {
		t.Fatalf("slowdown note %q (mpcc-exp1's flows outlast the run)", txt)
	}
	// the PNG button downloads a PNG (the download link it clicks is
	// caught, and its blob read back)
	eval[bool](t, ctx, `(() => { const mk = URL.createObjectURL; URL.createObjectURL = (b) => { window.__blob = b; return mk(b); }; const click = HTMLAnchorElement.prototype.click;
		HTMLAnchorElement.prototype.click = function () { if (this.download) { window.__png = {name: this.download, href: this.href}; return; } return click.call(this); };
		return true; })()`)
	must(t, ctx, chromedp.Click(chromedp.CSS("#chart-total .chart-png")))
	waitJS(t, ctx, `window.__png`, 10*time.Second)
	eval[bool](t, ctx, `window.__blob.arrayBuffer().then((b) => { window.__pngRead = window.__png.name + " " + String.fromCharCode(...new Uint8Array(b).slice(1, 4)); }) && true`)
	waitJS(t, ctx, `window.__pngRead`, 10*time.Second)
	png := eval[string](t, ctx, `window.__pngRead`)
	if !strings.HasSuffix(png, ".png PNG") {
		t.Fatalf("PNG download: %q", png)
	}
	screenshot(t, ctx, "run-flow-charts")
	noErrors(t, ctx)
}

// TestRunPageTopFlows: with 16 flows the per-flow charts show the 8 that
// delivered the most bytes, and all 16 on demand.
func TestRunPageTopFlows(t *testing.T) {
	// incast-16to1-dcqcn with flows that finish
	data, err := os.ReadFile("../scenarios/library/incast-16to1-dcqcn.json")
	if err != nil {
		t.Fatal(err)
	}
	var sc map[string]any
	if err := json.Unmarshal(data, &sc); err != nil {
		t.Fatal(err)
	}
	sc["duration"] = "5ms"
	sc["workload"].([]any)[0].(map[string]any)["size"] = "2MB"
	id := startRun(t, map[string]any{"scenario": sc})
	ctx := browser(t)
	must(t, ctx, chromedp.Navigate(serverURL+"/r/"+id))
	waitJS(t, ctx, `document.body.dataset.charts === "ready"`, 30*time.Second)
	n := `document.querySelectorAll("#chart-tput .u-legend tr.u-series:not(:first-child)").length`
	screenshot(t, ctx, "run-top-flows")
	if got := eval[int](t, ctx, n); got != 8 {
		t.Log(eval[string](t, ctx, `[...document.querySelectorAll("#chart-tput .u-legend tr.u-series")].map((tr) => tr.textContent).join(" | ")`))
		t.Fatalf("%d flows in the throughput chart, want the top 8", got)
	}
	if txt := eval[string](t, ctx, `document.getElementById("flow-pick-text").textContent`); !strings.Contains(txt, "of 16") {
		t.Fatalf("flow pick text %q", txt)
	}
	// the FCT slowdown CDF: all 16 flows, one size bucket
	waitJS(t, ctx, `document.getElementById("slowdown-note")`, 10*time.Second)
	waitJS(t, ctx, `Number((document.getElementById("chart-slowdown-cdf") || {dataset: {}}).dataset.points || 0) > 0`, 10*time.Second)
	if got := eval[string](t, ctx, `document.getElementById("chart-slowdown-cdf").dataset.flows`); got != "16" {
		t.Fatalf("slowdown CDF of %s flows", got)
	}
	must(t, ctx, chromedp.Click(chromedp.CSS("#flows-all")))
	waitJS(t, ctx, n+` === 16`, 10*time.Second)
	screenshot(t, ctx, "run-all-flows")
	must(t, ctx, chromedp.Click(chromedp.CSS("#flows-all")))
	waitJS(t, ctx, n+` === 8`, 10*time.Second)
	noErrors(t, ctx)
}

// TestLabLayoutAndLiveAggregates: on a wide screen the editor and the
// charts are side by side, the editor scrolls on its own, and the Run
// button stays in view however far the page is scrolled; a run draws the
// aggregate charts live.
func TestLabLayoutAndLiveAggregates(t *testing.T) {
	ctx := browser(t)
	must(t, ctx, chromedp.Navigate(serverURL+"/s/incast-8to1"))
	waitJS(t, ctx, `document.body.dataset.valid === "true"`, 20*time.Second)
	side := eval[bool](t, ctx, `(() => { const e = document.querySelector(".lab > .editor").getBoundingClientRect();
		const c = document.getElementById("chart-queue").getBoundingClientRect();
		return e.right <= c.left && c.top < innerHeight; })()`)
	if !side {
		t.Fatal("the editor and the charts are not side by side, or the first chart is out of view")
	}
	inView := `(() => { const r = document.getElementById("run-btn").getBoundingClientRect(); return r.top >= 0 && r.bottom <= innerHeight; })()`
	eval[bool](t, ctx, `(() => { window.scrollTo(0, document.body.scrollHeight); return true; })()`)
	waitJS(t, ctx, `scrollY > 0`, 5*time.Second)
	if !eval[bool](t, ctx, inView) {
		t.Fatal("the Run button scrolled out of view")
	}
	eval[bool](t, ctx, `(() => { window.scrollTo(0, 0); return true; })()`)
	must(t, ctx, chromedp.Click(chromedp.CSS("#run-btn")))
	waitJS(t, ctx, `Number(document.getElementById("chart-total").dataset.points || 0) > 0 && Number(document.getElementById("chart-active").dataset.points || 0) > 0`, 30*time.Second)
	waitJS(t, ctx, `document.getElementById("status").textContent === "done"`, 60*time.Second)
	eval[bool](t, ctx, `(() => { window.scrollTo(0, document.getElementById("chart-tput").getBoundingClientRect().top + scrollY - 300); return true; })()`)
	if !eval[bool](t, ctx, inView) {
		t.Fatal("the Run button scrolled out of view")
	}
	screenshot(t, ctx, "lab-side-by-side")
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile("screenshots/lab-side-by-side-viewport.png", png, 0o644); err != nil {
		t.Fatal(err)
	}
	noErrors(t, ctx)
}

// TestLargeTopology: a 1024-host fat-tree opens with its pods collapsed;
// zoom, fit, opening one pod and expanding all work.
func TestLargeTopology(t *testing.T) {
	ctx := browser(t)
	must(t, ctx, chromedp.Navigate(serverURL+"/s/fattree1024-permutation-hpcc"))
	waitJS(t, ctx, `document.getElementById("topology-view").dataset.pods`, 30*time.Second)
	box := `document.getElementById("topology-view").dataset`
	pods := eval[int](t, ctx, `Number(`+box+`.pods)`)
	if pods < 2 || eval[int](t, ctx, `Number(`+box+`.collapsed)`) != pods || eval[int](t, ctx, `Number(`+box+`.hosts)`) != 1024 {
		t.Fatalf("topology state %s", eval[string](t, ctx, `JSON.stringify(`+box+`)`))
	}
	visibleHosts := `[...document.querySelectorAll("#topology-view .node.host")].filter((n) => n.getBoundingClientRect().width > 0).length`
	if n := eval[int](t, ctx, visibleHosts); n != 0 {
		t.Fatalf("%d hosts drawn with every pod collapsed", n)
	}
	screenshot(t, ctx, "topology-large-collapsed")
	must(t, ctx, chromedp.Click(chromedp.CSS("#topo-zoom-in")))
	must(t, ctx, chromedp.Click(chromedp.CSS("#topo-zoom-in")))
	waitJS(t, ctx, box+`.zoom === "4.00"`, 5*time.Second)
	must(t, ctx, chromedp.Click(chromedp.CSS("#topo-fit")))
	waitJS(t, ctx, box+`.zoom === "1.00"`, 5*time.Second)
	// open the first pod with the keyboard
	must(t, ctx, chromedp.Focus(chromedp.CSS(`#topology-view .pod[data-pod="0"]`)), chromedp.KeyEvent("\r"))
	waitJS(t, ctx, fmt.Sprintf(`Number(%s.collapsed) === %d`, box, pods-1), 5*time.Second)
	if n := eval[int](t, ctx, visibleHosts); n != 1024/pods {
		t.Fatalf("%d hosts drawn with one pod open, want %d", n, 1024/pods)
	}
	must(t, ctx, chromedp.Click(chromedp.CSS("#topo-zoom-in")))
	screenshot(t, ctx, "topology-large-one-pod")
	must(t, ctx, chromedp.Click(chromedp.CSS("#topo-fit")), chromedp.Click(chromedp.CSS("#topo-pods")))
	waitJS(t, ctx, box+`.collapsed === "0"`, 5*time.Second)
	must(t, ctx, chromedp.Click(chromedp.CSS("#topo-pods")))
	waitJS(t, ctx, fmt.Sprintf(`%s.collapsed === "%d"`, box, pods), 5*time.Second)
	noErrors(t, ctx)

	// RCC's 320-host fat-tree opens folded too
	must(t, ctx, chromedp.Navigate(serverURL+"/s/rcc-fattree320-websearch"))
	waitJS(t, ctx, box+`.hosts === "320" && Number(`+box+`.pods) >= 2 && `+box+`.collapsed === `+box+`.pods`, 30*time.Second)
	screenshot(t, ctx, "topology-fattree320")
	noErrors(t, ctx)
}
