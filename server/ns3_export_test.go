package server

import (
	"archive/zip"
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

func unzip(t *testing.T, data []byte) map[string]string {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("not a zip: %v", err)
	}
	out := map[string]string{}
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[f.Name] = string(b)
	}
	return out
}

// GET /api/runs/{id}/ns3.zip: fct.txt from the stored flows (the same
// FCTs as flows.csv), pfc.txt and qlen.txt from a replay, and the
// scenario's ns-3 input files when ns-3 can express it; a scenario it
// cannot express gets a README naming the feature instead of them.
func TestNS3Zip(t *testing.T) {
	s := newTestServer(t, Config{})
	plain := s.startRun(map[string]any{"scenario": smallScenario("ns3", "dcqcn", "")})
	small := smallScenario("ns3-pfc", "dcqcn", "")
	small["switch"] = map[string]any{"buffer": "200KB"} // PFC pauses; not a whole MiB
	paused := s.startRun(map[string]any{"scenario": small})
	for _, id := range []string{plain, paused} {
		s.waitStatus(id, 30*time.Second, "done")
	}

	code, data := s.do("GET", "/api/runs/"+plain+"/ns3.zip", nil)
	if code != 200 {
		t.Fatalf("ns3.zip: %d %s", code, data)
	}
	files := unzip(t, data)
	for _, name := range []string{"fct.txt", "pfc.txt", "qlen.txt", "config.txt", "topology.txt", "flow.txt", "trace.txt", "README.txt"} {
		if _, ok := files[name]; !ok {
			t.Errorf("ns3.zip has no %s (it has %d files)", name, len(files))
		}
	}
	_, csv := s.do("GET", "/api/runs/"+plain+"/flows.csv", nil)
	fcts := map[string]bool{}
	for _, row := range strings.Split(strings.TrimSpace(string(csv)), "\n")[1:] {
		c := strings.Split(row, ",")
		fcts[strings.Split(c[6], ".")[0]] = true
	}
	lines := strings.Split(strings.TrimSpace(files["fct.txt"]), "\n")
	if len(lines) != 3 {
		t.Fatalf("fct.txt: %d lines, want the 3 flows", len(lines))
	}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) != 8 || f[3] != "200" || !fcts[f[6]] {
			t.Errorf("fct.txt line %q: want 8 fields, dport 200 (incast), an FCT of flows.csv", l)
		}
	}
	if !strings.Contains(files["config.txt"], "\nCC_MODE 1\n") || !strings.HasPrefix(files["flow.txt"], "3\n") {
		t.Errorf("config.txt or flow.txt: %q / %q", files["config.txt"], files["flow.txt"])
	}
	if !strings.HasPrefix(files["qlen.txt"], "time: ") {
		t.Errorf("qlen.txt starts %q", files["qlen.txt"])
	}

	code, data = s.do("GET", "/api/runs/"+paused+"/ns3.zip", nil)
	if code != 200 {
		t.Fatalf("ns3.zip: %d %s", code, data)
	}
	files = unzip(t, data)
	pfc := strings.Split(strings.TrimSpace(files["pfc.txt"]), "\n")
	if len(pfc) < 2 || len(strings.Fields(pfc[0])) != 5 || !strings.HasSuffix(pfc[0], " 1") {
		t.Errorf("pfc.txt of a run with PAUSEs: %q", files["pfc.txt"])
	}
	if _, ok := files["config.txt"]; ok || !strings.Contains(files["README.txt"], "cannot express switch.buffer 200000 B") {
		t.Errorf("a scenario ns-3 cannot express: files %d, README %q", len(files), files["README.txt"])
	}

	// the run page links the download
	code, page := s.do("GET", "/r/"+plain, nil)
	if code != 200 || !strings.Contains(string(page), `href="/api/runs/`+plain+`/ns3.zip"`) {
		t.Errorf("run page: %d, no link to ns3.zip", code)
	}

	code, data = s.do("GET", "/api/runs/nosuchrun/ns3.zip", nil)
	checkError(t, code, data, 404, "id", "")
}
