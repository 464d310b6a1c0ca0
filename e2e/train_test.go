package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
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
	// choosing RL-CC fills in its own defaults (ADPG: width 12, fan-ins
	// 4, 8, 32), and FDCC's come back with it
	pick := func(algo string) string {
		return eval[string](t, ctx, `(() => { const s = document.getElementById("t-algo"); s.value = "`+algo+`";
			s.dispatchEvent(new Event("change")); return document.getElementById("t-hidden").value + " " + document.getElementById("t-stages").value; })()`)
	}
	if got := pick("rlcc"); got != "12 4,8,32" {
		t.Errorf("rlcc's form defaults: hidden and stages %q, want \"12 4,8,32\"", got)
	}
	if got := pick("fdcc"); got != "16 2,4,8,16,32" {
		t.Errorf("fdcc's form defaults: hidden and stages %q, want \"16 2,4,8,16,32\"", got)
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
	// the last round evaluates (a lone flow, 4- and 16-to-1): the evaluation charts show
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

	// the run page charts the agent's per-flow series
	href := eval[string](t, ctx, `document.getElementById("run-link").getAttribute("href")`)
	must(t, ctx, chromedp.Navigate(serverURL+href))
	waitJS(t, ctx, `document.body.dataset.charts === "ready"`, 20*time.Second)
	opts := eval[string](t, ctx, `[...document.querySelectorAll("#algo-series option")].map((o) => o.value).join(",")`)
	for _, m := range []string{"fdcc_rtt", "fdcc_qlen", "fdcc_switchrate", "fdcc_goodput", "fdcc_drtt", "fdcc_dqlen", "fdcc_insrate",
		"fdcc_last_action", "fdcc_action", "fdcc_reward", "fdcc_draining", "fdcc_n"} {
		if !strings.Contains(","+opts+",", ","+m+",") {
			t.Fatalf("the run page's algorithm series %s lack %s", opts, m)
		}
	}
	must(t, ctx, chromedp.SetValue(chromedp.CSS("#algo-series"), "fdcc_action"))
	waitJS(t, ctx, `Number(document.getElementById("chart-algo").dataset.points || 0) > 0 &&
		document.querySelectorAll("#chart-algo .u-legend .u-series").length >= 3`, 10*time.Second)
	screenshot(t, ctx, "run-fdcc")
	noErrors(t, ctx)
}

// TestTrainResume: a job followed on the training page is cancelled (its
// policy so far stored), then resumed from the page: the curve goes on
// from where it stopped.
func TestTrainResume(t *testing.T) {
	ctx := browser(t)
	name := fmt.Sprintf("e2e-resume-%d", time.Now().UnixNano()%1_000_000)
	// the browser starts the job itself, so that it owns it (only the
	// owner or an instructor may cancel and resume a job)
	must(t, ctx, chromedp.Navigate(serverURL+"/train"))
	body, _ := json.Marshal(map[string]any{"algo": "rlcc", "name": name, "episodes": 4000, "stages": "2", "stageEpisodes": 4000,
		"size": "20KB", "hidden": 4, "updates": 1, "evalEvery": 0})
	id, err := chromedp.Run(ctx, chromedp.Evaluate[string](`(async () => {
		const r = await fetch("/api/train", {method: "POST", headers: {"Content-Type": "application/json"}, body: `+"`"+string(body)+"`"+`});
		return (await r.json()).id; })()`, chromedp.EvalAwaitPromise))
	if err != nil || id == "" {
		t.Fatalf("starting a training job from the page: %q %v", id, err)
	}
	must(t, ctx, chromedp.Navigate(serverURL+"/train?job="+id))
	waitJS(t, ctx, `Number(document.getElementById("chart-train-reward").dataset.points || 0) >= 3`, 30*time.Second)
	must(t, ctx, chromedp.Click(chromedp.CSS("#train-cancel")))
	waitJS(t, ctx, `document.getElementById("train-status").dataset.status === "cancelled" && !document.getElementById("train-resume").hidden`, 30*time.Second)
	before := eval[int](t, ctx, `Number(document.getElementById("chart-train-reward").dataset.points)`)
	waitJS(t, ctx, `!!document.querySelector('#policies tr[data-name="`+name+`"]')`, 10*time.Second)
	if got := eval[string](t, ctx, `document.querySelector('#policies tr[data-name="`+name+`"] td:nth-child(4)').textContent`); !strings.Contains(got, "(interrupted)") {
		t.Errorf("the cancelled job's policy reads %q", got)
	}
	screenshot(t, ctx, "train-cancelled")
	must(t, ctx, chromedp.Click(chromedp.CSS("#train-resume")))
	waitJS(t, ctx, fmt.Sprintf(`document.getElementById("train-status").dataset.status === "running" &&
		Number(document.getElementById("chart-train-reward").dataset.points || 0) > %d`, before+2), 30*time.Second)
	if !eval[bool](t, ctx, `document.getElementById("train-resume").hidden`) {
		t.Error("Resume is offered on a running job")
	}
	must(t, ctx, chromedp.Click(chromedp.CSS("#train-cancel")))
	waitJS(t, ctx, `document.getElementById("train-status").dataset.status === "cancelled"`, 30*time.Second)
	noErrors(t, ctx)
}
