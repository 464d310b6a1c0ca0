package server

import (
	"bytes"
	"encoding/json"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"cclab/scenarios"
)

// the reference's ns-3 experiment kept with the engine's fidelity tests
const ns3RefDir = "../sim/testdata/reference/hpcc-ns3-websearch16"

// ns3Form is a multipart body with the given parts (name → file name and
// contents) and its Content-Type.
func ns3Form(t *testing.T, parts [][3]string) (string, string) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, p := range parts {
		w, err := mw.CreateFormFile(p[0], p[1])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(p[2])); err != nil {
			t.Fatal(err)
		}
	}
	if err := mw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.String(), mw.FormDataContentType()
}

func refFile(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(ns3RefDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// TestImportNS3Route: POST /api/import/ns3 turns the reference's three
// files into the scenario `cclab import ns3` writes, with unknown keys as
// warnings; a bad file is a 422 naming file, line and field; an upload
// over the cap is a 413; a form from another site is refused.
func TestImportNS3Route(t *testing.T) {
	s := newTestServer(t, Config{})
	config, topo, flows := refFile(t, "hp/config.txt"), refFile(t, "topo_mpcc_fattree_pods2.txt"), refFile(t, "flow_websearch_l30_10ms_s1.txt")
	form := func(config, topo, flows string) (string, string) {
		return ns3Form(t, [][3]string{{"config", "config.txt", config}, {"topology", "topo.txt", topo}, {"flows", "flow.txt", flows}})
	}

	body, ct := form(config+"NEW_KEY 1\n", topo, flows)
	code, data := s.doRaw("POST", "/api/import/ns3", body, "Content-Type", ct)
	if code != http.StatusOK {
		t.Fatalf("import: %d %s", code, data)
	}
	var v struct {
		Scenario json.RawMessage `json:"scenario"`
		Warnings []string        `json:"warnings"`
		Ignored  []string        `json:"ignored"`
	}
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	sc, err := scenarios.Parse(v.Scenario)
	if err != nil {
		t.Fatal(err)
	}
	if sc.CC.Algorithm != "hpcc" || len(sc.Workload) != 1 || len(sc.Workload[0].Flows) != 357 || sc.Workload[0].Flows[0].Src != "h13" {
		t.Errorf("scenario: %s, %d workload entries", sc.CC.Algorithm, len(sc.Workload))
	}
	if len(v.Warnings) != 1 || !strings.HasPrefix(v.Warnings[0], "config.txt:59: NEW_KEY: ") {
		t.Errorf("warnings %q, want one naming NEW_KEY at config.txt:59", v.Warnings)
	}
	if !strings.Contains(strings.Join(v.Ignored, "\n"), "FCT_OUTPUT_FILE: ") {
		t.Errorf("ignored %q lacks FCT_OUTPUT_FILE", v.Ignored)
	}

	for _, tc := range []struct {
		name                string
		config, topo, flows string
		file                string
		line                int
		field               string
	}{
		{"rate without units", config, strings.Replace(topo, "0 16 100Gbps", "0 16 100", 1), flows, "topo.txt", 3, "rate"},
		{"flow to a missing host", config, topo, strings.Replace(flows, "9 0 3 100 596369", "9 99 3 100 596369", 1), "flow.txt", 3, "dst"},
		{"a CC_MODE the lab lacks", strings.Replace(config, "CC_MODE 3", "CC_MODE 10", 1), topo, flows, "config.txt", 15, "CC_MODE"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, ct := form(tc.config, tc.topo, tc.flows)
			code, data := s.doRaw("POST", "/api/import/ns3", body, "Content-Type", ct)
			var e struct {
				Error, Field, File string
				Line               int
				Errors             []fieldError
			}
			if err := json.Unmarshal(data, &e); err != nil || code != http.StatusUnprocessableEntity {
				t.Fatalf("%d %s (%v), want a 422", code, data, err)
			}
			if e.File != tc.file || e.Line != tc.line || e.Field != tc.field || len(e.Errors) != 1 ||
				!strings.HasPrefix(e.Error, tc.file+":"+strconv.Itoa(tc.line)+": "+tc.field+": ") {
				t.Errorf("422 %s: want file %s, line %d, field %s", data, tc.file, tc.line, tc.field)
			}
		})
	}

	// a missing part names it
	body, ct = ns3Form(t, [][3]string{{"config", "config.txt", config}, {"topology", "topo.txt", topo}})
	if code, data := s.doRaw("POST", "/api/import/ns3", body, "Content-Type", ct); code != http.StatusUnprocessableEntity || !strings.Contains(string(data), `"field": "flows"`) {
		t.Errorf("no flows part: %d %s", code, data)
	}
	// not a form
	if code, data := s.doRaw("POST", "/api/import/ns3", config, "Content-Type", "text/plain"); code != http.StatusUnsupportedMediaType {
		t.Errorf("text/plain: %d %s", code, data)
	}
	// from another site
	body, ct = form(config, topo, flows)
	if code, data := s.doRaw("POST", "/api/import/ns3", body, "Content-Type", ct, "Origin", "https://evil.example"); code != http.StatusForbidden || !strings.Contains(string(data), "cross-site") {
		t.Errorf("foreign origin: %d %s", code, data)
	}
	// over the cap
	defer func(n int64) { maxNS3ImportBytes = n }(maxNS3ImportBytes)
	maxNS3ImportBytes = int64(len(body)) - 1
	if code, data := s.doRaw("POST", "/api/import/ns3", body, "Content-Type", ct); code != http.StatusRequestEntityTooLarge || !strings.Contains(string(data), "max-import-size") {
		t.Errorf("oversize: %d %s", code, data)
	}
}

// FuzzImportNS3: POST /api/import/ns3 takes any three files (and any
// form): never a 5xx, every 4xx in the error shape naming a field, every
// 200 a scenario that parses.
func FuzzImportNS3(f *testing.F) {
	s := newFuzzServer(f)
	read := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(ns3RefDir, name))
		if err != nil {
			f.Fatal(err)
		}
		return data
	}
	config, topo, flows := read("hp/config.txt"), read("topo_mpcc_fattree_pods2.txt"), read("flow_websearch_l30_10ms_s1.txt")
	small := []byte("4 2 3\n2 3\n0 2 100Gbps 1us 0\n1 2 100Gbps 1us 0\n2 3 400Gbps 1us 0\n")
	f.Add(config, topo, flows)
	f.Add(config, small, []byte("1\n0 1 3 100 1000 2.000001\n"))
	f.Add([]byte("CC_MODE 8\nKMIN_MAP 1 100000000000 300\nKMAX_MAP 1 100000000000 300\nPMAX_MAP 1 100000000000 1\n"), small, []byte("1\n1 0 3 100 1 2\n"))
	f.Add([]byte("CC_MODE 1\nLINK_DOWN 5 0 2\nERROR_RATE_PER_LINK 0.01\n"), small, []byte("0\n"))
	f.Add([]byte("CC_MODE\n"), []byte(""), []byte(""))
	f.Add([]byte("CC_MODE 1\nEWMA_GAIN NaN\n"), small, []byte("1\n0 1 3 100 1000 2\n"))
	f.Add(config, []byte("20001 0 0\n"), flows)
	f.Fuzz(func(t *testing.T, config, topo, flows []byte) {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		if err := mw.SetBoundary(fuzzBoundary); err != nil {
			t.Fatal(err)
		}
		for _, p := range []struct {
			name string
			data []byte
		}{{"config", config}, {"topology", topo}, {"flows", flows}} {
			w, _ := mw.CreateFormFile(p.name, p.name+".txt")
			w.Write(p.data)
		}
		mw.Close()
		rec := s.serve("POST", "/api/import/ns3", "", mw.FormDataContentType(), b.Bytes())
		checkAnswer(t, "POST /api/import/ns3", rec)
		checkJSONAnswer(t, "POST /api/import/ns3", rec)
		if rec.Code == http.StatusOK {
			var v struct {
				Scenario json.RawMessage `json:"scenario"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
				t.Fatal(err)
			}
			if _, err := scenarios.Parse(v.Scenario); err != nil {
				t.Fatalf("a 200 with a scenario that does not parse: %v", err)
			}
		}
	})
}
