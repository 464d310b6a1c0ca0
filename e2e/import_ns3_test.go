package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestImportNS3: on the lab page, "Import ns-3…" takes the reference's
// config, topology and flow files and fills the editor with the imported
// scenario (HPCC, the 357 flows in the flow file's order, valid), listing
// the config key the lab does not understand; a bad topology file shows
// the error with its file, line and field.
func TestImportNS3(t *testing.T) {
	ctx := browser(t)
	ref, err := filepath.Abs("../sim/testdata/reference/hpcc-ns3-websearch16")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	read := func(name string) string {
		data, err := os.ReadFile(filepath.Join(ref, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	config := write("config.txt", read("hp/config.txt")+"NEW_KEY 1\n")
	topo := filepath.Join(ref, "topo_mpcc_fattree_pods2.txt")
	flows := filepath.Join(ref, "flow_websearch_l30_10ms_s1.txt")
	badTopo := write("topo_bad.txt", strings.Replace(read("topo_mpcc_fattree_pods2.txt"), "0 16 100Gbps", "0 16 100", 1))

	must(t, ctx, chromedp.Navigate(serverURL+"/lab"), chromedp.WaitVisible(chromedp.CSS("#f-cc-algorithm")))
	waitJS(t, ctx, `document.body.dataset.valid === "true"`, 20*time.Second)
	must(t, ctx, chromedp.Click(chromedp.CSS("#ns3-import > summary")), chromedp.WaitVisible(chromedp.CSS("#ns3-import-btn")))

	// a bad topology file: the error names the file, the line and the field
	must(t, ctx,
		chromedp.SetUploadFiles(chromedp.CSS("#ns3-config"), []string{config}),
		chromedp.SetUploadFiles(chromedp.CSS("#ns3-topology"), []string{badTopo}),
		chromedp.SetUploadFiles(chromedp.CSS("#ns3-flows"), []string{flows}),
		chromedp.Click(chromedp.CSS("#ns3-import-btn")))
	waitJS(t, ctx, `document.getElementById("ns3-import-errors").textContent.startsWith('topo_bad.txt:3: rate: "100"')`, 20*time.Second)
	if eval[bool](t, ctx, `document.getElementById("json-text").value.includes("h13")`) {
		t.Fatal("a failed import changed the editor")
	}

	// the reference's files: the editor holds the imported scenario
	must(t, ctx,
		chromedp.SetUploadFiles(chromedp.CSS("#ns3-topology"), []string{topo}),
		chromedp.Click(chromedp.CSS("#ns3-import-btn")))
	waitJS(t, ctx, `(() => {
		const doc = JSON.parse(document.getElementById("json-text").value);
		return doc.cc.algorithm === "hpcc" && doc.workload.length === 1 && doc.workload[0].flows.length === 357 &&
			document.getElementById("f-cc-algorithm").value === "hpcc" && document.body.dataset.valid === "true";
	})()`, 30*time.Second)
	first := eval[string](t, ctx, `JSON.stringify(JSON.parse(document.getElementById("json-text").value).workload[0].flows[0])`)
	if !strings.Contains(first, `"src":"h13"`) || !strings.Contains(first, `"dst":"h3"`) || !strings.Contains(first, `"start":"962ns"`) {
		t.Errorf("first flow %s, want h13 -> h3 at 962ns (the flow file's first line)", first)
	}
	if errs := eval[string](t, ctx, `document.getElementById("ns3-import-errors").textContent`); errs != "" {
		t.Errorf("errors left after a good import: %q", errs)
	}
	warnings := eval[string](t, ctx, `document.getElementById("ns3-import-warnings").hidden ? "" : document.getElementById("ns3-import-warnings").textContent`)
	if !strings.Contains(warnings, "config.txt:59: NEW_KEY: not a config key the lab understands") {
		t.Errorf("warnings %q, want NEW_KEY named with its line", warnings)
	}
	screenshot(t, ctx, "lab-import-ns3")
	noErrors(t, ctx)
}
