// Package e2e drives the lab in a real browser (Debian's chromium, through
// chromedp) against a real `cclab serve` on a free loopback port with a
// temporary database. Outside CI the tests skip, saying why, when chromium
// is missing; in CI (CI set) they fail instead. Screenshots of every page go
// to e2e/screenshots/ (git-ignored) for review.
package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

var (
	serverURL string
	chromium  string
)

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	for _, p := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(p); err == nil {
			chromium = path
			break
		}
	}
	if chromium == "" {
		if os.Getenv("CI") != "" {
			fmt.Fprintln(os.Stderr, "e2e: chromium is not installed, and CI is set: failing (.ci/run installs it with apt-get)")
			return 1
		}
		fmt.Fprintln(os.Stderr, "e2e: SKIPPING the real-browser tests: chromium is not installed (apt-get install chromium)")
		return m.Run() // each test skips
	}
	dir, err := os.MkdirTemp("", "cclab-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "cclab")
	build := exec.Command("go", "build", "-o", bin, "cclab/cmd/cclab")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: building cclab:", err)
		return 1
	}
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0", "--db", filepath.Join(dir, "lab.db"), "--log-level", "warn",
		"--instructor-token", instructorToken)
	var logs bytes.Buffer
	cmd.Stderr = &logs
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
		if logs.Len() > 0 {
			fmt.Fprintf(os.Stderr, "server log:\n%s", logs.String())
		}
	}()
	sc := bufio.NewScanner(out)
	re := regexp.MustCompile(`serving on (http://\S+)`)
	if !sc.Scan() || re.FindStringSubmatch(sc.Text()) == nil {
		fmt.Fprintln(os.Stderr, "e2e: cclab serve did not start:", sc.Text(), logs.String())
		return 1
	}
	serverURL = re.FindStringSubmatch(sc.Text())[1]
	go io.Copy(io.Discard, out)
	return m.Run()
}

// browser opens a fresh browser (its own profile: a fresh context) for one
// test.
func browser(t *testing.T) context.Context {
	t.Helper()
	if chromium == "" {
		t.Skip("chromium is not installed (apt-get install chromium)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium),
		chromedp.WindowSize(1400, 1000), chromedp.Flag("no-sandbox", true))
	actx, cancel := chromedp.NewExecAllocator(context.Background(), opts...)
	t.Cleanup(cancel)
	ctx, cancel2 := chromedp.NewContext(actx)
	t.Cleanup(cancel2)
	ctx, cancel3 := context.WithTimeout(ctx, 90*time.Second)
	t.Cleanup(cancel3)
	// start the browser now, so a failure is reported here
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return ctx
}

func must(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// Note: chromedp.SetValue sets a field's value and fires its input and
// change events, as typing then leaving the field does.

// waitJS polls a JavaScript predicate until it is truthy.
func waitJS(t *testing.T, ctx context.Context, js string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		// a navigation in flight destroys the page's context, or the
		// target: try again on the new page
		_, err := chromedp.Run(ctx, chromedp.Poll[chromedp.Void](js, chromedp.WithPollingTimeout(time.Until(deadline))))
		if err == nil {
			return
		}
		transient := strings.Contains(err.Error(), "context") || strings.Contains(err.Error(), "navigated")
		if time.Now().After(deadline) || !transient {
			state, _ := chromedp.Run(ctx, chromedp.Evaluate[string](`JSON.stringify({page: location.pathname,
				data: Object.assign({}, document.body.dataset), status: (document.getElementById("status") || {}).textContent,
				errors: (document.getElementById("form-errors") || {}).textContent, js: document.documentElement.dataset.errors || ""})`))
			t.Fatalf("waiting for %s: %v\npage state: %s", js, err, state)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// screenshot saves the page under e2e/screenshots.
func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	// a page that has just navigated (a sorting link, a form) may not be
	// laid out yet, and Chrome refuses to capture a page 0 pixels wide
	// (CI failed once that way on a loaded machine): wait until it is
	waitJS(t, ctx, `document.readyState === "complete" && document.documentElement.scrollWidth > 0`, 10*time.Second)
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.MkdirAll("screenshots", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("screenshots", name+".png"), png, 0o644); err != nil {
		t.Fatal(err)
	}
}

// noErrors fails on a page error the scripts recorded.
func noErrors(t *testing.T, ctx context.Context) {
	t.Helper()
	if errs := eval[string](t, ctx, `document.documentElement.dataset.errors || ""`); errs != "" {
		t.Fatalf("page errors:\n%s", errs)
	}
}

func apiGet(t *testing.T, path string, v any) []byte {
	t.Helper()
	resp, err := http.Get(serverURL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", path, resp.StatusCode, data)
	}
	if v != nil {
		if err := json.Unmarshal(data, v); err != nil {
			t.Fatal(err)
		}
	}
	return data
}

func apiPost(t *testing.T, path string, body any, v any) {
	t.Helper()
	b, _ := json.Marshal(body)
	resp, err := http.Post(serverURL+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		t.Fatalf("POST %s: %d %s", path, resp.StatusCode, data)
	}
	if v != nil {
		json.Unmarshal(data, v)
	}
}

// TestRunFromTheLibrary: home, a built-in scenario, run it slowly, watch
// the chart grow, change a parameter mid-run and see its marker, reach
// done, then the run page's summary.
func TestRunFromTheLibrary(t *testing.T) {
	ctx := browser(t)
	must(t, ctx, chromedp.Navigate(serverURL+"/"), chromedp.WaitVisible(chromedp.CSS("#library .card")))
	if n := eval[int](t, ctx, `document.querySelectorAll("#library .card").length`); n < 10 {
		t.Fatalf("%d library cards", n)
	}
	screenshot(t, ctx, "home")
	// the large-text toggle is a real button, and is remembered
	must(t, ctx, chromedp.Focus(chromedp.CSS("#large-text")), chromedp.KeyEvent("\r"))
	waitJS(t, ctx, `document.body.classList.contains("large")`, 5*time.Second)
	must(t, ctx, chromedp.Navigate(serverURL+"/"), chromedp.WaitVisible(chromedp.CSS("#library .card")))
	waitJS(t, ctx, `document.body.classList.contains("large") && document.getElementById("large-text").getAttribute("aria-pressed") === "true"`, 5*time.Second)
	screenshot(t, ctx, "home-large")
	must(t, ctx, chromedp.Click(chromedp.CSS("#large-text")))
	must(t, ctx, chromedp.Click(chromedp.CSS(`#library .card[data-scenario] a[href$="`+libraryID(t, "incast-8to1")+`"]`)))
	waitJS(t, ctx, `document.body.dataset.page === "lab" && document.body.dataset.valid === "true"`, 20*time.Second)
	// the topology is keyboard usable: Enter on a host shows its flows,
	// on a link end selects that port's queue
	must(t, ctx, chromedp.Focus(chromedp.CSS(`#topology-view .node.host[data-node="h3"]`)), chromedp.KeyEvent("\r"))
	waitJS(t, ctx, `document.querySelector('#topology-view .node.host[data-node="h3"]').classList.contains("highlight")`, 5*time.Second)
	must(t, ctx, chromedp.KeyEvent("\r"))
	must(t, ctx, chromedp.Focus(chromedp.CSS(`#topology-view [data-port="s0->h0"]`)), chromedp.KeyEvent("\r"))
	waitJS(t, ctx, `document.querySelector('#topology-view [data-port="s0->h0"]').classList.contains("selected")`, 5*time.Second)
	must(t, ctx, chromedp.KeyEvent("\r"))
	// pick DCQCN: its parameter form comes from the registry (an htmx swap)
	must(t, ctx, chromedp.SetValue(chromedp.CSS("#f-cc-algorithm"), "dcqcn"))
	must(t, ctx, chromedp.WaitVisible(chromedp.CSS(`#params [data-path="cc.params.ai"]`)))
	waitJS(t, ctx, `document.body.dataset.valid === "true" && JSON.parse(document.getElementById("json-text").value).cc.algorithm === "dcqcn"`, 20*time.Second)
	// 8 × 1 MB into one 100 Gbps port takes ~700 µs of simulated time; at
	// 1 ms per wall second the run lasts most of a second
	must(t, ctx, chromedp.SetValue(chromedp.CSS("#speed"), "1000"))
	must(t, ctx, chromedp.Click(chromedp.CSS("#run-btn")))
	waitJS(t, ctx, `Number(document.getElementById("chart-queue").dataset.points || 0) > 0`, 20*time.Second)
	first := eval[int](t, ctx, `Number(document.getElementById("chart-queue").dataset.points)`)
	waitJS(t, ctx, fmt.Sprintf(`Number(document.getElementById("chart-queue").dataset.points) > %d`, first), 20*time.Second)
	// pause, make a live change (DCQCN's additive increase), resume, and
	// finish at full speed
	must(t, ctx, chromedp.Click(chromedp.CSS("#pause-btn")))
	waitJS(t, ctx, `document.getElementById("status").textContent === "paused"`, 20*time.Second)
	must(t, ctx, chromedp.SetValue(chromedp.CSS(`#params [data-path="cc.params.ai"]`), "40"))
	waitJS(t, ctx, `document.body.dataset.markers === "1"`, 20*time.Second)
	screenshot(t, ctx, "lab-running")
	must(t, ctx, chromedp.Click(chromedp.CSS("#pause-btn")))
	waitJS(t, ctx, `document.getElementById("status").textContent === "running"`, 20*time.Second)
	must(t, ctx, chromedp.SetValue(chromedp.CSS("#speed"), "max"))
	waitJS(t, ctx, `document.getElementById("status").textContent === "done"`, 60*time.Second)
	noErrors(t, ctx)
	href := eval[string](t, ctx, `document.getElementById("run-link").getAttribute("href")`)
	must(t, ctx, chromedp.Navigate(serverURL+href), chromedp.WaitVisible(chromedp.CSS("#summary-table")))
	summary := eval[string](t, ctx, `document.getElementById("summary-table").innerText`)
	if !strings.Contains(summary, "flows finished") || !strings.Contains(summary, "8 of 8") {
		t.Fatalf("run page summary:\n%s", summary)
	}
	waitJS(t, ctx, `Number(document.getElementById("chart-queue").dataset.points || 0) > 0`, 20*time.Second)
	waitJS(t, ctx, `document.body.dataset.markers === "1" && document.body.dataset.charts === "ready"`, 20*time.Second)
	screenshot(t, ctx, "run")
	noErrors(t, ctx)
}

func libraryID(t *testing.T, name string) string {
	var sc struct{ ID string }
	apiGet(t, "/api/scenarios/"+name, &sc)
	return sc.ID
}

// TestEditInvalidThenFix: an invalid value shows its error next to the
// field; fixing it clears the error and the scenario runs (under a new id).
func TestEditInvalidThenFix(t *testing.T) {
	ctx := browser(t)
	orig := libraryID(t, "incast-8to1")
	must(t, ctx, chromedp.Navigate(serverURL+"/s/incast-8to1"))
	waitJS(t, ctx, `document.body.dataset.valid === "true"`, 20*time.Second)
	must(t, ctx, chromedp.SetValue(chromedp.CSS(`[data-path="topology.hostLink.rate"]`), "fast"))
	waitJS(t, ctx, `document.body.dataset.valid === "false"`, 20*time.Second)
	next := `document.querySelector('[data-path="topology.hostLink.rate"]').closest('.field').querySelector('.error').textContent`
	msg := eval[string](t, ctx, next)
	if msg == "" || eval[string](t, ctx, `document.querySelector('[data-path="topology.hostLink.rate"]').getAttribute("aria-invalid")`) != "true" {
		t.Fatalf("no error next to the rate field (got %q)", msg)
	}
	screenshot(t, ctx, "lab-invalid")
	must(t, ctx, chromedp.SetValue(chromedp.CSS(`[data-path="topology.hostLink.rate"]`), "40Gbps"))
	waitJS(t, ctx, `document.body.dataset.valid === "true"`, 20*time.Second)
	if msg := eval[string](t, ctx, next); msg != "" {
		t.Fatalf("error left after the fix: %q", msg)
	}
	// the workload list: add a Poisson entry, see it validated, remove it
	must(t, ctx, chromedp.Click(chromedp.CSS(`[data-add="poisson"]`)))
	waitJS(t, ctx, `document.querySelectorAll("#workload-list > li").length === 2 && document.body.dataset.valid === "true" &&
		(JSON.parse(document.getElementById("json-text").value).workload[1] || {}).kind === "poisson"`, 20*time.Second)
	must(t, ctx, chromedp.SetValue(chromedp.CSS(`#workload-list > li[data-kind="poisson"] [data-rel="load"]`), "7"))
	waitJS(t, ctx, `document.body.dataset.valid === "false" &&
		document.querySelector('#workload-list > li[data-kind="poisson"] [data-error-rel="load"]').textContent !== ""`, 20*time.Second)
	must(t, ctx, chromedp.Click(chromedp.CSS(`#workload-list > li[data-kind="poisson"] [data-remove]`)))
	waitJS(t, ctx, `document.querySelectorAll("#workload-list > li").length === 1 && document.body.dataset.valid === "true"`, 20*time.Second)
	must(t, ctx, chromedp.Click(chromedp.CSS("#run-btn")))
	waitJS(t, ctx, `document.getElementById("status").textContent === "done"`, 60*time.Second)
	id := eval[string](t, ctx, `document.getElementById("scenario-id").dataset.id`)
	if id == "" || id == orig || !strings.HasSuffix(eval[string](t, ctx, `location.pathname`), "/s/"+id) {
		t.Fatalf("the edited scenario has id %q (the original %s), page %s", id, orig, eval[string](t, ctx, `location.pathname`))
	}
	noErrors(t, ctx)
}

// TestCompareShareAndDownload: compare two runs (best values marked), open
// a share link in a fresh browser, and download a CSV whose header and rows
// match the API.
func TestCompareShareAndDownload(t *testing.T) {
	var a, b struct{ ID string }
	apiPost(t, "/api/runs", map[string]any{"scenarioId": "incast-8to1", "cc": map[string]any{"algorithm": "hpcc"}}, &a)
	apiPost(t, "/api/runs", map[string]any{"scenarioId": "incast-8to1", "cc": map[string]any{"algorithm": "dcqcn"}}, &b)
	for _, id := range []string{a.ID, b.ID} {
		deadline := time.Now().Add(60 * time.Second)
		for {
			var r struct{ Status string }
			apiGet(t, "/api/runs/"+id, &r)
			if r.Status == "done" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("run %s is %s", id, r.Status)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	ctx := browser(t)
	must(t, ctx, chromedp.Navigate(serverURL+"/compare?runs="+a.ID+","+b.ID), chromedp.WaitVisible(chromedp.CSS("#compare-table")))
	if n := eval[int](t, ctx, `document.querySelectorAll("#compare-table td.best").length`); n < 3 {
		t.Fatalf("%d best cells marked", n)
	}
	waitJS(t, ctx, `Number(document.getElementById("cmp-queue").dataset.points || 0) > 0 && document.body.dataset.charts === "ready"`, 20*time.Second)
	screenshot(t, ctx, "compare")
	noErrors(t, ctx)

	// one click runs the scenario under every algorithm and compares them
	must(t, ctx, chromedp.Click(chromedp.CSS("#run-all")))
	var algos []struct{ Name string }
	apiGet(t, "/api/algorithms", &algos)
	waitJS(t, ctx, fmt.Sprintf(`location.pathname === "/compare" && new URLSearchParams(location.search).get("runs").split(",").length === %d`, len(algos)), 60*time.Second)
	waitJS(t, ctx, `document.querySelectorAll("#compare-table thead th").length === `+fmt.Sprint(len(algos)+1)+` &&
		[...document.querySelectorAll("#compare-table .badge")].every((b) => b.textContent === "done")`, 90*time.Second)
	waitJS(t, ctx, `document.body.dataset.charts === "ready"`, 30*time.Second)
	screenshot(t, ctx, "compare-all")
	noErrors(t, ctx)

	// a share link opens the same scenario in another browser
	fresh := browser(t)
	share := serverURL + "/s/" + libraryID(t, "incast-8to1")
	must(t, fresh, chromedp.Navigate(share))
	waitJS(t, fresh, `document.body.dataset.valid === "true"`, 20*time.Second)
	if name := eval[string](t, fresh, `document.querySelector('[data-path="name"]').value`); name != "incast-8to1" {
		t.Fatalf("share link opened %q", name)
	}
	must(t, fresh, chromedp.Navigate(serverURL+"/r/"+a.ID), chromedp.WaitVisible(chromedp.CSS("#summary-table")))

	// the CSV the run page links to, fetched as the browser downloads it
	csvText, err := chromedp.Run(fresh, chromedp.Evaluate[string](`(async () => {
		const a = [...document.querySelectorAll("a[download]")].find((x) => x.getAttribute("href").endsWith("/flows.csv"));
		const r = await fetch(a.href); return await r.text(); })()`, chromedp.EvalAwaitPromise))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(csvText)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	apiRows, _ := csv.NewReader(bytes.NewReader(apiGet(t, "/api/runs/"+a.ID+"/flows.csv", nil))).ReadAll()
	if strings.Join(rows[0], ",") != strings.Join(apiRows[0], ",") || len(rows) != len(apiRows) || len(rows) != 9 {
		t.Fatalf("downloaded CSV: header %v, %d rows; API %v, %d rows", rows[0], len(rows), apiRows[0], len(apiRows))
	}
}

// TestMPCCSolveTimes: an MPCC run shows the QP solve-time chart and its
// running p50/p99.
func TestMPCCSolveTimes(t *testing.T) {
	ctx := browser(t)
	must(t, ctx, chromedp.Navigate(serverURL+"/s/mpcc-exp1-1ms"))
	waitJS(t, ctx, `document.body.dataset.valid === "true"`, 20*time.Second)
	if !eval[bool](t, ctx, `document.getElementById("chart-qp").hidden`) {
		t.Fatal("the QP chart shows before any solve")
	}
	must(t, ctx, chromedp.Click(chromedp.CSS("#run-btn")))
	waitJS(t, ctx, `document.getElementById("status").textContent === "done"`, 60*time.Second)
	waitJS(t, ctx, `!document.getElementById("chart-qp").hidden && Number(document.getElementById("chart-qp").dataset.points || 0) > 0 &&
		/over all \d+ solves of the run: p50 \d+ ns, p99 \d+ ns/.test(document.getElementById("qp-stats").textContent)`, 20*time.Second)
	// the numbers are the run's own (every solve), not the chart's buckets
	runID := eval[string](t, ctx, `new URL(document.getElementById("run-link").href).pathname.split("/").pop()`)
	var sum struct {
		SeriesStats map[string]struct{ Count int } `json:"series_stats"`
	}
	apiGet(t, "/api/runs/"+runID+"/summary.json", &sum)
	if got := eval[string](t, ctx, `document.getElementById("qp-stats").dataset.count`); got != fmt.Sprint(sum.SeriesStats["qp_solve_ns"].Count) {
		t.Fatalf("the page counts %s solves, the summary %d", got, sum.SeriesStats["qp_solve_ns"].Count)
	}
	screenshot(t, ctx, "lab-mpcc")
	noErrors(t, ctx)
}

// TestEditorKeepsWhatItDoesNotShow: a scenario with fields the form has no
// input for (a flow's own cc, an inline CDF, a preset with overrides)
// keeps them through an edit; a lab asked to follow an unknown run stays
// usable.
func TestEditorKeepsWhatItDoesNotShow(t *testing.T) {
	sc := map[string]any{
		"name":     "round-trip",
		"topology": map[string]any{"kind": "dumbbell", "senders": 2, "hostLink": map[string]any{"rate": "10Gbps", "delay": "1us"}},
		"cc":       map[string]any{"algorithm": "dcqcn", "preset": "dcqcn_paper", "params": map[string]any{"g": 0.5}},
		"duration": "200us",
		"workload": []any{
			map[string]any{"kind": "flows", "flows": []any{map[string]any{"src": "h0", "dst": "r0", "size": "100KB", "start": "0s",
				"cc": map[string]any{"algorithm": "hpcc"}}}},
			map[string]any{"kind": "poisson", "cdf": []any{[]any{1000, 0}, []any{10000, 100}}, "load": 0.2, "from": "0s", "until": "100us"},
		},
	}
	var created struct{ ID string }
	apiPost(t, "/api/scenarios", sc, &created)
	ctx := browser(t)
	must(t, ctx, chromedp.Navigate(serverURL+"/s/"+created.ID+"?run=0000000000000000"))
	waitJS(t, ctx, `document.body.dataset.valid === "true" && !document.getElementById("run-btn").disabled`, 20*time.Second)
	if msg := eval[string](t, ctx, `document.getElementById("form-errors").textContent`); !strings.Contains(msg, "no run") {
		t.Fatalf("following an unknown run says %q", msg)
	}
	must(t, ctx, chromedp.SetValue(chromedp.CSS(`[data-path="name"]`), "round-trip-2"))
	waitJS(t, ctx, `document.body.dataset.valid === "true" && JSON.parse(document.getElementById("json-text").value).name === "round-trip-2"`, 20*time.Second)
	doc := eval[string](t, ctx, `document.getElementById("json-text").value`)
	var got struct {
		CC struct {
			Algorithm, Preset string
			Params            map[string]float64
		}
		Workload []struct {
			Flows []struct{ CC map[string]any }
			CDF   any
		}
	}
	if err := json.Unmarshal([]byte(doc), &got); err != nil {
		t.Fatal(err)
	}
	if got.CC.Preset != "dcqcn_paper" || got.CC.Params["g"] != 0.5 || len(got.Workload) != 2 ||
		len(got.Workload[0].Flows) != 1 || got.Workload[0].Flows[0].CC["algorithm"] != "hpcc" {
		t.Fatalf("the edited scenario lost fields:\n%s", doc)
	}
	if cdf, ok := got.Workload[1].CDF.([]any); !ok || len(cdf) != 2 {
		t.Fatalf("the inline CDF became %v", got.Workload[1].CDF)
	}
	// an empty parameter shows what it will be: the preset's value
	if ph := eval[string](t, ctx, `document.querySelector('[data-path="cc.params.alphaTimer"]').placeholder`); ph != "50 (preset)" {
		t.Fatalf("alphaTimer under dcqcn_paper shows %q", ph)
	}
	noErrors(t, ctx)
}
