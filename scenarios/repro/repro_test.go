package repro

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/quick.verdicts from this run")

// The quick set's verdicts, as they hold today, are checked in
// (testdata/quick.verdicts, one "experiment | metric | verdict" per row):
// a change that breaks a reproduced result, or reproduces one more, shows
// up here as a failing test and a readable diff (rewrite with -update).
// Rows measured on the wall clock are left out: they are not
// deterministic.
func TestQuickVerdicts(t *testing.T) {
	if testing.Short() {
		t.Skip("the quick reproduction set (about 20 s of CPU)")
	}
	exps, err := Select(nil, true)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Execute(context.Background(), exps, Options{Quick: true})
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	numeric := 0
	seeds := map[string]bool{}
	for _, r := range rep.Rows() {
		seeds[r.Seed] = true
		if r.WallClock {
			continue
		}
		if r.Paper.IsNum() {
			numeric++
		}
		if r.Verdict == verdictUnknown {
			t.Errorf("%s: no verdict", r.Metric)
		}
		fmt.Fprintf(&got, "%s | %s | %s\n", r.Experiment, r.Metric, r.Verdict)
	}
	// the floor: at least ten stated numbers, every seed with
	// experiments covered
	if numeric < 10 {
		t.Errorf("%d numeric paper values in the quick set, want ≥ 10", numeric)
	}
	for _, s := range seedsWithExperiments(Experiments()) {
		if !seeds[s[:3]] {
			t.Errorf("seed %s has no row in the quick set", s)
		}
	}
	path := filepath.Join("testdata", "quick.verdicts")
	if *update {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		g, w := strings.Split(got.String(), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < max(len(g), len(w)); i++ {
			var a, b string
			if i < len(g) {
				a = g[i]
			}
			if i < len(w) {
				b = w[i]
			}
			if a != b {
				t.Errorf("row %d:\n  got  %s\n  want %s", i+1, a, b)
			}
		}
	}
	// the report is written and report.json has one object per row with
	// the keys the contract names
	dir := t.TempDir()
	if err := WriteDir(dir, rep); err != nil {
		t.Fatal(err)
	}
	checkReportDir(t, dir, rep)
}

func checkReportDir(t *testing.T, dir string, rep *Report) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Rows []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Rows) != len(rep.Rows()) {
		t.Fatalf("report.json has %d rows, the report %d", len(doc.Rows), len(rep.Rows()))
	}
	for i, r := range doc.Rows {
		for _, k := range []string{"seed", "experiment", "metric", "paper", "ours", "verdict"} {
			if _, ok := r[k]; !ok {
				t.Fatalf("report.json row %d has no %q: %v", i, k, r)
			}
		}
	}
	md, err := os.ReadFile(filepath.Join(dir, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range rep.Experiments {
		if !bytes.Contains(md, []byte("### "+e.ID)) {
			t.Errorf("report.md has no section for %s", e.ID)
		}
		for _, f := range e.Figures {
			svg, err := os.ReadFile(filepath.Join(dir, f.Name+".svg"))
			if err != nil {
				t.Fatal(err)
			}
			checkXML(t, f.Name, svg)
			if !bytes.Contains(md, []byte("("+f.Name+".svg)")) {
				t.Errorf("report.md does not show %s", f.Name)
			}
		}
	}
}

func checkXML(t *testing.T, name string, svg []byte) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	for {
		_, err := d.Token()
		if err == io.EOF {
			return
		}
		if err != nil {
			t.Fatalf("%s: not well-formed: %v", name, err)
		}
	}
}

func TestSelect(t *testing.T) {
	for _, tc := range []struct {
		names []string
		quick bool
		want  []string // ids, or nil with wantErr
		err   string
	}{
		{names: []string{"002"}, want: []string{"rcc-convergence", "rcc-incast", "rcc-table2", "rcc-fattree"}},
		{names: []string{"rcc-table2", "QCN"}, want: []string{"rcc-table2", "qcn-margins", "qcn-ap", "qcn-rcp", "qcn-buffer", "qcn-fig9"}},
		{names: []string{"dolce-rc"}, want: []string{"dolce-fct"}},
		{names: nil, quick: true, want: []string{"mpcc-fig3.5", "mpcc-exp1", "mpcc-exp2", "fdcc-table62", "fdcc-table61", "fdcc-fig61", "fdcc-fig62", "rcc-convergence", "rcc-incast", "rcc-table2", "qcn-margins", "qcn-ap", "qcn-rcp", "qcn-buffer", "qcn-fig9", "dolce-fct"}},
		{names: []string{"005"}, err: `unknown seed or experiment "005"; seeds: 000 (mpcc), 001 (fdcc), 002 (rcc), 003 (qcn), 004 (dolce-rc); experiments: dolce-fct,`},
		{names: []string{"001"}, want: []string{"fdcc-table62", "fdcc-table61", "fdcc-fig61", "fdcc-fig62", "fdcc-fig64"}},
		{names: []string{"mpcc-exp9"}, err: "experiments: dolce-fct, fdcc-fig61, fdcc-fig62, fdcc-fig64, fdcc-table61, fdcc-table62, mpcc-exp1, mpcc-exp2, mpcc-exp3, mpcc-fig3.5, mpcc-horizon, qcn-ap, qcn-buffer, qcn-fig9, qcn-margins,"},
	} {
		got, err := Select(tc.names, tc.quick)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%v: error %v, want one containing %q", tc.names, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%v: %v", tc.names, err)
			continue
		}
		var ids []string
		for _, e := range got {
			ids = append(ids, e.ID)
		}
		if strings.Join(ids, ",") != strings.Join(tc.want, ",") {
			t.Errorf("%v quick=%v: %v, want %v", tc.names, tc.quick, ids, tc.want)
		}
	}
}

// Every experiment's runs name library scenarios whose edits apply and
// parse, with unique keys.
func TestRunsBuild(t *testing.T) {
	lib := LibrarySources()
	for _, e := range Experiments() {
		for _, quick := range []bool{false, true} {
			seen := map[string]bool{}
			for _, r := range e.RunsFor(quick) {
				if seen[r.Key] {
					t.Errorf("%s: duplicate run key %q", e.ID, r.Key)
				}
				seen[r.Key] = true
				if _, err := Scenario(lib, r); err != nil {
					t.Errorf("%s: %v", e.ID, err)
				}
			}
		}
	}
}

func TestVerdictRules(t *testing.T) {
	r := &rows{seed: "000", exp: "x"}
	for _, tc := range []struct {
		row  *Row
		want Verdict
	}{
		{r.within("a", 140.3, 147.0, "µs", 8.5, ""), Reproduced},
		{r.within("b", 175.5, 147.0, "µs", 8.5, ""), NotReproduced},
		{r.within("c", 1, math.NaN(), "", 1, ""), NotReproduced},
		{r.change("d", -5.2, -3.0, 3, ""), Reproduced},
		{r.change("e", -14.7, -39.9, 10, ""), DirectionOnly},
		{r.change("f", -14.7, 5, 10, ""), NotReproduced},
		{r.upTo("g", 9, 1, 5, ""), DirectionOnly},
		{r.upTo("h", 9, 12, 5, ""), Reproduced},
		{r.upTo("i", 9, -3, 5, ""), NotReproduced},
		{r.claim("j", "x", "y", true, ""), Reproduced},
		{r.claim("k", "x", "y", false, ""), NotReproduced},
		{r.measured("l", 1, 2, "ns", ""), NotComparable},
	} {
		if tc.row.Verdict != tc.want {
			t.Errorf("%s: %s, want %s", tc.row.Metric, tc.row.Verdict, tc.want)
		}
	}
	if d := *r.out[0].Diff; d != "+6.70 µs (+4.8%)" {
		t.Errorf("diff %q", d)
	}
	if d := *r.out[3].Diff; d != "+2.20 pp" {
		t.Errorf("diff %q", d)
	}
}

func TestValueJSON(t *testing.T) {
	for _, tc := range []struct {
		v    Value
		want string
	}{
		{Number(140.334, "µs"), "140.334"},
		{Statement("below DCQCN's"), `"below DCQCN's"`},
		{Value{Num: 9, Unit: "%", Text: "up to 9%"}, "9"},
		{Number(math.NaN(), "µs"), `"—"`},
	} {
		b, err := json.Marshal(tc.v)
		if err != nil || string(b) != tc.want {
			t.Errorf("%+v: %s %v, want %s", tc.v, b, err, tc.want)
		}
	}
}

func TestSVG(t *testing.T) {
	for _, f := range []Figure{
		{Name: "empty", Title: "nothing <yet> & none"},
		{Name: "lines", Lines: []Line{{Name: "a", X: []float64{0, 1, 2}, Y: []float64{0, 5, math.NaN()}}}},
		{Name: "bars", Bars: true, LogY: true, Labels: []string{"x", "y"}, Lines: []Line{{Name: "b", X: []float64{0, 1}, Y: []float64{3, 3000}}}},
	} {
		svg := f.SVG()
		checkXML(t, f.Name, svg)
		if n := bytes.Count(svg, []byte("<path")); n != 1+len(f.Lines)*boolInt(!f.Bars) {
			t.Errorf("%s: %d paths", f.Name, n)
		}
	}
	if got := niceTicks(0, 1000); fmt.Sprint(got) != "[0 200 400 600 800 1000]" {
		t.Errorf("ticks %v", got)
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
