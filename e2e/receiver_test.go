package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// TestHomaSprayed: the lab runs incast-8to1 under Homa with per-packet
// spraying; the lab and the run page chart Homa's own series, each in its
// unit (the grant rate in bps).
func TestHomaSprayed(t *testing.T) {
	ctx := receiverRun(t, "homa", "cc.params.rttBytes")
	waitJS(t, ctx, `[...document.querySelectorAll("#algo-series option")].some((o) => o.value === "homa_grant_bps")`, 10*time.Second)
	must(t, ctx, chromedp.SetValue(chromedp.CSS("#algo-series"), "homa_grant_bps"))
	waitJS(t, ctx, `document.getElementById("chart-algo").dataset.series === "homa_grant_bps" &&
		Number(document.getElementById("chart-algo").dataset.points || 0) > 0`, 10*time.Second)
	if h := eval[string](t, ctx, `document.getElementById("algo-help").textContent`); !strings.Contains(h, "granted") {
		t.Fatalf("the homa_grant_bps chart's help says %q", h)
	}
	screenshot(t, ctx, "run-homa")
	noErrors(t, ctx)
}

// TestExpressPassSprayed: the same under ExpressPass, with its credit
// series; the data-queue field is left out of the scenario when empty.
func TestExpressPassSprayed(t *testing.T) {
	ctx := receiverRun(t, "expresspass", "cc.params.targetLoss")
	waitJS(t, ctx, `[...document.querySelectorAll("#algo-series option")].some((o) => o.value === "xpass_credit_rate")`, 10*time.Second)
	must(t, ctx, chromedp.SetValue(chromedp.CSS("#algo-series"), "xpass_credit_rate"))
	waitJS(t, ctx, `document.getElementById("chart-algo").dataset.series === "xpass_credit_rate" &&
		Number(document.getElementById("chart-algo").dataset.points || 0) > 0`, 10*time.Second)
	screenshot(t, ctx, "run-expresspass")
	noErrors(t, ctx)
}

// receiverRun opens incast-8to1 in the lab, picks algo (param is one of its
// parameters, to know its form has loaded), sets Routing to spraying, tries
// the data-queue field, runs, checks the lab's live algorithm chart, and
// ends on the run's page with its charts drawn.
func receiverRun(t *testing.T, algo, param string) context.Context {
	t.Helper()
	ctx := browser(t)
	must(t, ctx, chromedp.Navigate(serverURL+"/s/incast-8to1"))
	waitJS(t, ctx, `document.body.dataset.valid === "true"`, 20*time.Second)
	must(t, ctx, chromedp.SetValue(chromedp.CSS("#f-cc-algorithm"), algo))
	must(t, ctx, chromedp.WaitVisible(chromedp.CSS(`#params [data-path="`+param+`"]`)))
	must(t, ctx, chromedp.SetValue(chromedp.CSS("#f-switch-routing"), "spray"))
	doc := `JSON.parse(document.getElementById("json-text").value)`
	waitJS(t, ctx, `document.body.dataset.valid === "true" && `+doc+`.cc.algorithm === "`+algo+`" && `+doc+`.switch.routing === "spray"`, 20*time.Second)
	// the data queues: out of range is an error next to the field, a
	// number goes into the scenario, empty leaves it out
	dc := `[data-path="switch.dataClasses"]`
	must(t, ctx, chromedp.SetValue(chromedp.CSS(dc), "9"))
	waitJS(t, ctx, `document.body.dataset.valid === "false" && document.querySelector('[data-error-for="switch.dataClasses"]').textContent !== ""`, 20*time.Second)
	must(t, ctx, chromedp.SetValue(chromedp.CSS(dc), "4"))
	waitJS(t, ctx, `document.body.dataset.valid === "true" && `+doc+`.switch.dataClasses === 4`, 20*time.Second)
	must(t, ctx, chromedp.Focus(chromedp.CSS(dc)), chromedp.KeyEvent(kb.End), chromedp.KeyEvent(kb.Backspace)) // SetValue cannot set ""
	waitJS(t, ctx, `document.body.dataset.valid === "true" && !("dataClasses" in `+doc+`.switch)`, 20*time.Second)
	screenshot(t, ctx, "lab-"+algo+"-editor")
	// 8 × 1 MB into one 100 Gbps port: most of a second at 1 ms per second
	must(t, ctx, chromedp.SetValue(chromedp.CSS("#speed"), "1000"))
	must(t, ctx, chromedp.Click(chromedp.CSS("#run-btn")))
	prefix := map[string]string{"homa": "homa_", "expresspass": "xpass_"}[algo]
	waitJS(t, ctx, `(document.getElementById("chart-algo").dataset.series || "").startsWith("`+prefix+`") &&
		Number(document.getElementById("chart-algo").dataset.points || 0) > 0`, 20*time.Second)
	screenshot(t, ctx, "lab-"+algo+"-running")
	must(t, ctx, chromedp.SetValue(chromedp.CSS("#speed"), "max"))
	waitJS(t, ctx, `document.getElementById("status").textContent === "done"`, 60*time.Second)
	noErrors(t, ctx)
	href := eval[string](t, ctx, `document.getElementById("run-link").getAttribute("href")`)
	must(t, ctx, chromedp.Navigate(serverURL+href), chromedp.WaitVisible(chromedp.CSS("#summary-table")))
	if s := eval[string](t, ctx, `document.getElementById("summary-table").innerText`); !strings.Contains(s, "8 of 8") {
		t.Fatalf("run page summary:\n%s", s)
	}
	waitJS(t, ctx, `document.body.dataset.charts === "ready" && (document.getElementById("chart-algo").dataset.series || "").startsWith("`+prefix+`") &&
		Number(document.getElementById("chart-algo").dataset.points || 0) > 0`, 20*time.Second)
	return ctx
}
