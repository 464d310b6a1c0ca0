package e2e

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestStabilityPage: the stability lab draws the paper's baseline (the
// linear QCN loop unstable at 350 µs, its exact margin 250.9 µs); moving
// the N slider moves the margin, moving the RTT slider below the margin
// makes the loop stable; the packet overlay runs both Fig. 9 scenarios and
// draws their queue beside the fluid one.
func TestStabilityPage(t *testing.T) {
	ctx := browser(t)
	must(t, ctx, chromedp.Navigate(serverURL+"/stability"), chromedp.WaitVisible(chromedp.CSS("#p-rtt")))
	waitJS(t, ctx, `document.body.dataset.stability === "ready"`, 20*time.Second)
	if got := eval[string](t, ctx, `document.getElementById("m-exact").textContent`); got != "250.9 µs" {
		t.Fatalf("exact margin at the baseline %q, want 250.9 µs", got)
	}
	if got := eval[string](t, ctx, `document.getElementById("m-verdict").dataset.qcn`); got != "unstable" {
		t.Fatalf("at 350 µs the linear QCN loop is %q", got)
	}
	for _, id := range []string{"chart-bode-mag", "chart-bode-phase", "chart-fluid-q", "chart-fluid-rate"} {
		if n := eval[int](t, ctx, `Number(document.getElementById("`+id+`").dataset.points || 0)`); n < 100 {
			t.Fatalf("#%s draws %d points", id, n)
		}
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#chart-nyquist svg path").length`); n != 3 {
		t.Fatalf("the Nyquist plot has %d paths, want the −1 cross and two loops", n)
	}
	// the sweep draws τ*, the exact margin and τ̂ over N's range (60
	// points on a log scale, about 40 distinct whole N, three lines)
	waitJS(t, ctx, `Number(document.getElementById("chart-sweep").dataset.points || 0) >= 90`, 10*time.Second)
	// a slider: N = 40 raises the exact margin (the extract's sweeps: it
	// grows with N towards ~283 µs)
	slide := func(name string, v string) {
		eval[bool](t, ctx, `(() => { const e = document.getElementById("p-`+name+`"); e.value = "`+v+`"; e.dispatchEvent(new Event("input", {bubbles: true})); e.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`)
	}
	slide("n", "40")
	waitJS(t, ctx, `document.getElementById("m-exact").textContent !== "250.9 µs"`, 10*time.Second)
	margin := eval[string](t, ctx, `document.getElementById("m-exact").textContent`)
	if eval[string](t, ctx, `document.getElementById("o-n").textContent`) != "40" {
		t.Fatal("the N slider's value is not shown")
	}
	slide("rtt", "100e-6")
	waitJS(t, ctx, `document.getElementById("m-verdict").dataset.qcn === "stable"`, 10*time.Second)
	if pm := eval[string](t, ctx, `document.getElementById("m-pm").textContent`); pm == "" || pm[0] == '-' {
		t.Fatalf("phase margin at 100 µs %q, want positive", pm)
	}
	t.Logf("N = 40: exact margin %s", margin)
	slide("n", "10") // the packet overlay runs up to 32 sources
	slide("rtt", "200e-6")
	must(t, ctx, chromedp.Click(chromedp.CSS("#run-packet")))
	waitJS(t, ctx, `!!document.getElementById("chart-overlay").dataset.runs && Number(document.getElementById("chart-overlay").dataset.points || 0) > 1000`, 60*time.Second)
	if n := eval[int](t, ctx, `document.querySelectorAll('#packet-status a[href^="/r/"]').length`); n != 2 {
		t.Fatalf("%d links to the packet runs", n)
	}
	// the AP sandbox and the RCP module fill their tables beside the paper's
	waitJS(t, ctx, `document.querySelectorAll("#ap-margins tbody tr").length === 4 && document.querySelectorAll("#rcp-margins tbody tr").length === 4`, 20*time.Second)
	if got := eval[string](t, ctx, `document.querySelector('#ap-margins tr[data-name="ap"] td:nth-child(2)').textContent`); got != "14.77 s" {
		t.Fatalf("AP's largest stable delay on the page %q", got)
	}
	if n := eval[int](t, ctx, `Number(document.getElementById("chart-rcp").dataset.points || 0)`); n < 1000 {
		t.Fatalf("the RCP chart draws %d points", n)
	}
	screenshot(t, ctx, "stability")
	noErrors(t, ctx)
}
