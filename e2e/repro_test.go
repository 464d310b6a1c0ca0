package e2e

import (
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestReproductionsPage: the page lists every seed's experiments; "Run it"
// on MPCC's Exp. 1 starts its runs in the lab, and the section fills in as
// they finish: the figure, the rows with their verdicts, links to the runs.
func TestReproductionsPage(t *testing.T) {
	ctx := browser(t)
	must(t, ctx, chromedp.Navigate(serverURL+"/reproductions"), chromedp.WaitVisible(chromedp.CSS("#repro-mpcc-exp1")))
	for _, id := range []string{"seed-000", "seed-002", "seed-003", "seed-004", "repro-rcc-table2", "repro-qcn-fig9", "repro-dolce-fct"} {
		if !eval[bool](t, ctx, `!!document.getElementById("`+id+`")`) {
			t.Fatalf("no #%s on the page", id)
		}
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#repro-qcn-margins table.repro-rows tbody tr").length`); n != 4 {
		t.Fatalf("the computed QCN margins show %d rows", n)
	}
	if s := eval[string](t, ctx, `document.querySelector("#repro-mpcc-exp1").dataset.status`); s != "never" {
		t.Fatalf("mpcc-exp1 is %q before it was run", s)
	}
	must(t, ctx, chromedp.Click(chromedp.CSS(`#repro-mpcc-exp1 button[value="quick"]`)))
	waitJS(t, ctx, `(document.querySelector("#repro-mpcc-exp1") || {dataset: {}}).dataset.status === "done"`, 60*time.Second)
	waitJS(t, ctx, `[...document.querySelectorAll("#repro-mpcc-exp1 .repro-figure img")].every((i) => i.complete && i.naturalWidth > 0)`, 10*time.Second)
	rows := eval[int](t, ctx, `document.querySelectorAll("#repro-mpcc-exp1 table.repro-rows tbody tr").length`)
	verdicts := eval[int](t, ctx, `document.querySelectorAll("#repro-mpcc-exp1 .verdict").length`)
	links := eval[int](t, ctx, `document.querySelectorAll('#repro-mpcc-exp1 .repro-runs a[href^="/r/"]').length`)
	if rows < 5 || verdicts != rows || links != 3 {
		t.Fatalf("%d rows, %d verdicts, %d run links", rows, verdicts, links)
	}
	screenshot(t, ctx, "reproductions")
	noErrors(t, ctx)
}
