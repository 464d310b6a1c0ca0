package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReproduceCLI(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for _, tc := range []struct {
		args       []string
		code       int
		out, err   string // substrings of stdout, stderr
		wantReport bool
	}{
		{args: []string{"reproduce", "--list"}, code: exitOK, out: "rcc-table2"},
		{args: []string{"reproduce", "nope", "--out", dir}, code: exitUsage,
			err: `unknown seed or experiment "nope"; seeds: 000 (mpcc), 001 (fdcc), 002 (rcc), 003 (qcn), 004 (dolce-rc); experiments: dolce-fct`},
		{args: []string{"reproduce", "mpcc-exp1"}, code: exitUsage, err: "--out DIR is required"},
		{args: []string{"reproduce", "mpcc-exp1", "--quiet", "--out", filepath.Join(dir, "r")}, code: exitOK,
			out: "6 rows: 3 reproduced", wantReport: true},
	} {
		code, out, errs := runCLI(t, ctx, tc.args...)
		if code != tc.code || !strings.Contains(out, tc.out) || !strings.Contains(errs, tc.err) {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d, %q, %q", tc.args, code, out, errs, tc.code, tc.out, tc.err)
		}
		if !tc.wantReport {
			continue
		}
		var rep struct {
			Rows []struct{ Seed, Experiment, Metric, Verdict string }
		}
		if err := json.Unmarshal([]byte(readFile(t, filepath.Join(dir, "r", "report.json"))), &rep); err != nil {
			t.Fatal(err)
		}
		if len(rep.Rows) != 6 || rep.Rows[0].Seed != "000" || rep.Rows[0].Experiment != "mpcc-exp1" {
			t.Errorf("report.json rows: %+v", rep.Rows)
		}
		if md := readFile(t, filepath.Join(dir, "r", "report.md")); !strings.Contains(md, "| §5.2.1, W_Q:W_R = 1:1, queue convergence time | 140.3 µs | 147.0 µs |") {
			t.Errorf("report.md:\n%s", md)
		}
		if _, err := os.Stat(filepath.Join(dir, "r", "mpcc-exp1-queue.svg")); err != nil {
			t.Error(err)
		}
	}
}
