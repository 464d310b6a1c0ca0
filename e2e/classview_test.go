package e2e

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestExerciseAndClassView (issue 21): the instructor pins a scenario as an
// exercise with the topology and workload locked; a student opens its
// share link, sees the task, finds the locked fields read-only, types a
// name and runs an edited copy (a new seed), then edits that run again
// from /lab?from=RUN (still under the exercise); a run of a copy that
// changes a locked field is refused naming it. The instructor's class view of the
// share link lists the student's run under that name with its metrics and
// CDF and sorts by p99; the student sees only their own runs there.
func TestExerciseAndClassView(t *testing.T) {
	sc := map[string]any{
		"name":     "class exercise",
		"topology": map[string]any{"kind": "dumbbell", "senders": 3, "hostLink": map[string]any{"rate": "10Gbps", "delay": "1us"}},
		"cc":       map[string]any{"algorithm": "dcqcn"},
		"duration": "300us",
		"workload": []any{map[string]any{"kind": "incast", "senders": []string{"h0", "h1", "h2"}, "receiver": "r0", "size": "50KB", "start": "0s"}},
	}
	var base struct{ ID string }
	if code := instructorDo(t, "POST", "/api/scenarios", sc, &base); code != http.StatusCreated && code != http.StatusOK {
		t.Fatalf("storing the exercise's scenario: %d", code)
	}
	task := "Find the seed and DCQCN g with the lowest p99 FCT slowdown."
	t.Cleanup(func() { instructorDo(t, "DELETE", "/api/scenarios/"+base.ID+"/exercise", nil, nil) })

	// the instructor pins it from the lab: an unknown field is named, then
	// the exercise is pinned
	ctx := browser(t)
	must(t, ctx, chromedp.Navigate(serverURL+"/instructor?token="+instructorToken))
	must(t, ctx, chromedp.Navigate(serverURL+"/s/"+base.ID))
	waitJS(t, ctx, `document.body.dataset.valid === "true" && !document.getElementById("exercise-pin").hidden`, 20*time.Second)
	must(t, ctx, chromedp.Click(chromedp.CSS("#exercise-pin summary")),
		chromedp.SetValue(chromedp.CSS("#exercise-task-input"), task),
		chromedp.SetValue(chromedp.CSS("#exercise-locked-input"), "topology, workloads"),
		chromedp.Click(chromedp.CSS("#exercise-pin-btn")))
	waitJS(t, ctx, `document.getElementById("exercise-pin-status").textContent.startsWith("locked[1]")`, 10*time.Second)
	must(t, ctx, chromedp.SetValue(chromedp.CSS("#exercise-locked-input"), "topology, workload"),
		chromedp.Click(chromedp.CSS("#exercise-pin-btn")))
	waitJS(t, ctx, `document.getElementById("exercise-pin-status").textContent.startsWith("Pinned") && !document.getElementById("exercise-task").hidden`, 10*time.Second)
	viewport(t, ctx, "lab-exercise-pin")

	// the student
	student := browser(t)
	must(t, student, chromedp.Navigate(serverURL+"/s/"+base.ID))
	waitJS(t, student, `document.body.dataset.valid === "true" && !document.getElementById("exercise-task").hidden`, 20*time.Second)
	if got := eval[string](t, student, `document.getElementById("exercise-text").textContent`); got != task {
		t.Errorf("the task shown: %q", got)
	}
	if !eval[bool](t, student, `document.querySelector('[data-path="topology.hostLink.rate"]').readOnly &&
		document.querySelector('#workload-list [data-rel="size"]').readOnly && !document.querySelector('[data-path="seed"]').readOnly`) {
		t.Error("the locked fields are not read-only, or an unlocked one is")
	}
	must(t, student, chromedp.SetValue(chromedp.CSS("#run-label"), "Ada Lovelace"),
		chromedp.SetValue(chromedp.CSS(`[data-path="seed"]`), "7"))
	waitJS(t, student, `document.body.dataset.valid === "true" && JSON.parse(document.getElementById("json-text").value).seed === 7`, 20*time.Second)
	viewport(t, student, "lab-exercise")
	must(t, student, chromedp.ScrollIntoView(chromedp.CSS("#fs-topology")))
	viewport(t, student, "lab-exercise-locked")
	must(t, student, chromedp.Click(chromedp.CSS("#run-btn")))
	waitJS(t, student, `document.getElementById("status").textContent === "done" && location.pathname !== "/s/`+base.ID+`"`, 60*time.Second)
	copyID := strings.TrimPrefix(eval[string](t, student, `location.pathname`), "/s/")
	if eval[string](t, student, `localStorage.getItem("cclab.runLabel")`) != "Ada Lovelace" {
		t.Error("the name is not kept in localStorage")
	}
	// the copy still shows the exercise; changing a locked field is refused
	refusal, err := chromedp.Run(student, chromedp.Evaluate[string](`(async () => {
		const doc = JSON.parse(document.getElementById("json-text").value);
		doc.topology.hostLink.rate = "25Gbps";
		const h = {"Content-Type": "application/json"};
		const s = await (await fetch("/api/scenarios?parent=`+copyID+`", {method: "POST", headers: h, body: JSON.stringify(doc)})).json();
		const r = await fetch("/api/runs", {method: "POST", headers: h, body: JSON.stringify({scenarioId: s.id})});
		return r.status + " " + (await r.json()).field;
	})()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	if refusal != "422 topology" {
		t.Errorf("a run of a copy changing the topology: %q", refusal)
	}
	// another run by someone else, named Grace
	var other struct{ ID string }
	apiPost(t, "/api/runs", map[string]any{"scenarioId": base.ID, "label": "Grace Hopper", "seed": 3}, &other)

	// the student edits their run again from /lab?from=RUN: still the
	// exercise, and the new copy's run is in the class view too
	firstRun, err := chromedp.Run(student, chromedp.Evaluate[string](`fetch("/api/scenarios/`+copyID+`/class").then((r) => r.json()).then((v) => v.runs[0].id)`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	must(t, student, chromedp.Navigate(serverURL+"/lab?from="+firstRun))
	waitJS(t, student, `document.body.dataset.valid === "true" && !document.getElementById("exercise-task").hidden &&
		document.querySelector('[data-path="topology.hostLink.rate"]').readOnly`, 20*time.Second)
	must(t, student, chromedp.SetValue(chromedp.CSS(`[data-path="seed"]`), "9"))
	waitJS(t, student, `document.body.dataset.valid === "true" && JSON.parse(document.getElementById("json-text").value).seed === 9`, 20*time.Second)
	must(t, student, chromedp.Click(chromedp.CSS("#run-btn")))
	waitJS(t, student, `document.getElementById("status").textContent === "done" && location.pathname.startsWith("/s/")`, 60*time.Second)

	// the instructor's class view
	deadline := time.Now().Add(60 * time.Second)
	for {
		must(t, ctx, chromedp.Navigate(serverURL+"/s/"+base.ID+"/class"))
		if eval[bool](t, ctx, `document.querySelectorAll("#classview-runs tbody tr").length === 3 &&
			Array.from(document.querySelectorAll("#classview-runs tbody tr td:nth-child(3)")).every((td) => td.textContent === "done")`) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the class view never listed the three runs done")
		}
		time.Sleep(300 * time.Millisecond)
	}
	labels := eval[string](t, ctx, `Array.from(document.querySelectorAll("#classview-runs .classview-label")).map((e) => e.textContent).join("|")`)
	if labels != "Ada Lovelace|Grace Hopper|Ada Lovelace" {
		t.Errorf("labels, newest first: %q", labels)
	}
	if !eval[bool](t, ctx, `document.querySelectorAll("#classview-cdf polyline").length === 3 && !!document.querySelector("#classview-runs a[title^='a copy']")`) {
		t.Error("no CDF per run, or the student's run is not marked edited")
	}
	must(t, ctx, chromedp.Click(chromedp.CSS(`#classview-runs th[data-metric="p99"] a`)))
	waitJS(t, ctx, `document.querySelector('#classview-runs th[data-metric="p99"]').getAttribute("aria-sort") === "ascending"`, 10*time.Second)
	p99 := eval[[]float64](t, ctx, `Array.from(document.querySelectorAll("#classview-runs tbody tr")).map((tr) => parseFloat(tr.children[4].textContent))`)
	if len(p99) != 3 || p99[0] > p99[1] || p99[1] > p99[2] {
		t.Errorf("sorted by p99: %v", p99)
	}
	screenshot(t, ctx, "class-view")
	noErrors(t, ctx)

	// the student's class view: their own run only
	must(t, student, chromedp.Navigate(serverURL+"/s/"+base.ID+"/class"), chromedp.WaitVisible(chromedp.CSS("#classview-who")))
	if got := eval[string](t, student, `Array.from(document.querySelectorAll("#classview-runs .classview-label")).map((e) => e.textContent).join("|")`); got != "Ada Lovelace|Ada Lovelace" {
		t.Errorf("the student's class view shows %q", got)
	}
	noErrors(t, student)
}
