package static

import (
	"io/fs"
	"strings"
	"testing"
)

func TestEmbeddedAssets(t *testing.T) {
	want := map[string]string{
		"vendor/uplot/uPlot.iife.min.js": "var uPlot=",
		"vendor/uplot/uPlot.min.css":     ".uplot",
		"vendor/uplot/LICENSE":           "MIT",
		"vendor/htmx/htmx.min.js":        "htmx",
		"vendor/htmx/LICENSE":            "Zero-Clause BSD",
		"js/charts/index.js":             "export { timeChart }",
		"js/common.js":                   "export async function api(",
		"css/app.css":                    "body.large",
	}
	for name, marker := range want {
		b, err := fs.ReadFile(FS, name)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if len(b) == 0 {
			t.Errorf("%s is empty", name)
			continue
		}
		if !strings.Contains(string(b), marker) {
			t.Errorf("%s does not contain %q", name, marker)
		}
	}
}

func TestEmbeddedVersions(t *testing.T) {
	for name, version := range map[string]string{
		"vendor/uplot/uPlot.iife.min.js": "v1.6.32",
		"vendor/htmx/htmx.min.js":        `version:"2.0.11"`,
	} {
		b, err := fs.ReadFile(FS, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !strings.Contains(string(b), version) {
			t.Errorf("%s is not %s", name, version)
		}
	}
}
