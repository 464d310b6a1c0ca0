package e2e

import (
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestTrainPage: the training page starts a tiny training job, draws its
// learning curve until it is done and lists the policy it stored; the
// lab's algorithm form then offers that policy for fdcc.
func TestTrainPage(t *testing.T) {
	ctx := browser(t)
	name := fmt.Sprintf("e2e-tiny-%d", time.Now().UnixNano()%1_000_000)
	must(t, ctx, chromedp.Navigate(serverURL+"/train"), chromedp.WaitVisible(chromedp.CSS("#t-name")))
	set := func(id, v string) {
		eval[bool](t, ctx, `(() => { document.getElementById("`+id+`").value = "`+v+`"; return true; })()`)
	}
	// the curriculum's fields are in a closed <details>: set them by script
	set("t-name", name)
	set("t-episodes", "2")
	set("t-hidden", "8")
	set("t-stages", "2")
	set("t-stage-episodes", "2")
	set("t-size", "20KB")
	must(t, ctx, chromedp.Click(chromedp.CSS("#train-start")))
	waitJS(t, ctx, `document.getElementById("train-status").dataset.status === "done"`, 60*time.Second)
	if n := eval[int](t, ctx, `Number(document.getElementById("chart-train-reward").dataset.points || 0)`); n < 1 {
		t.Fatalf("the reward chart draws %d points", n)
	}
	// the last round evaluates (4- and 16-to-1): the evaluation charts show
	waitJS(t, ctx, `!document.getElementById("train-eval").hidden && Number(document.getElementById("chart-train-slowdown").dataset.points || 0) >= 1`, 5*time.Second)
	waitJS(t, ctx, `!!document.querySelector('#policies tr[data-name="`+name+`"]')`, 10*time.Second)
	if got := eval[string](t, ctx, `document.querySelector('#policies tr[data-name="`+name+`"] td:nth-child(4)').textContent`); got != "2" {
		t.Errorf("the stored policy's episodes %q, want 2", got)
	}
	if got := eval[string](t, ctx, `document.querySelector("#train-jobs tbody tr td:nth-child(3)").textContent + " " + document.querySelector("#train-jobs tbody tr td:nth-child(4)").textContent`); got != "done 2 / 2" {
		t.Errorf("the jobs list says %q, want done 2 / 2", got)
	}
	screenshot(t, ctx, "train")
	noErrors(t, ctx)

	// the lab offers it for fdcc
	must(t, ctx, chromedp.Navigate(serverURL+"/lab"), chromedp.WaitVisible(chromedp.CSS("#f-cc-algorithm")))
	waitJS(t, ctx, `!!document.querySelector("#params .field")`, 10*time.Second)
	eval[bool](t, ctx, `(() => { const e = document.getElementById("f-cc-algorithm"); e.value = "fdcc"; e.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`)
	waitJS(t, ctx, `!!document.querySelector('#f-cc-policy option[value="`+name+`"]')`, 10*time.Second)
	eval[bool](t, ctx, `(() => { const e = document.getElementById("f-cc-policy"); e.value = "`+name+`"; e.dispatchEvent(new Event("change", {bubbles: true})); return true; })()`)
	waitJS(t, ctx, `document.getElementById("json-text").value.includes('"policy": "`+name+`"') && document.body.dataset.valid === "true"`, 10*time.Second)
	// and a run with it goes to the end
	must(t, ctx, chromedp.Click(chromedp.CSS("#run-btn")))
	waitJS(t, ctx, `document.getElementById("status").textContent === "done"`, 60*time.Second)
	screenshot(t, ctx, "lab-policy")
	noErrors(t, ctx)
}
