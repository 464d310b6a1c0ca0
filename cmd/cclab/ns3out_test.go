package main

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// --format ns3 adds fct.txt, pfc.txt and qlen.txt and changes nothing else:
// flows.csv and series.csv are byte-identical to a plain run's, and a plain
// run writes none of the three. fct.txt has a line per finished flow that
// agrees with flows.csv (size, FCT in ns), with the incast's dport 200.
func TestRunFormatNS3(t *testing.T) {
	scen := library + "incast-8to1.json"
	plain, withNS3 := t.TempDir(), t.TempDir()
	if code, _, stderr := runCLI(t, context.Background(), "run", scen, "--out", plain, "--quiet"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if code, _, stderr := runCLI(t, context.Background(), "run", scen, "--out", withNS3, "--quiet", "--format", "ns3"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, f := range []string{"flows.csv", "series.csv"} {
		if readFile(t, filepath.Join(plain, f)) != readFile(t, filepath.Join(withNS3, f)) {
			t.Errorf("%s differs with --format ns3", f)
		}
	}
	for _, f := range []string{"fct.txt", "pfc.txt", "qlen.txt"} {
		if _, err := os.Stat(filepath.Join(plain, f)); err == nil {
			t.Errorf("a plain run wrote %s", f)
		}
	}
	// flows.csv: flow_id,src,dst,size_bytes,start_ns,finish_ns,fct_ns,...
	bySize := map[string]string{}
	rows := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(withNS3, "flows.csv"))), "\n")[1:]
	for _, row := range rows {
		c := strings.Split(row, ",")
		bySize[c[3]+" "+strings.Split(c[6], ".")[0]] = c[0]
	}
	fct := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(withNS3, "fct.txt"))), "\n")
	if len(fct) != len(rows) {
		t.Fatalf("fct.txt has %d lines, flows.csv %d rows", len(fct), len(rows))
	}
	for _, line := range fct {
		f := strings.Fields(line)
		if len(f) != 8 || len(f[0]) != 8 || len(f[1]) != 8 || f[3] != "200" {
			t.Errorf("fct.txt line %q: want 8 fields, 8-hex-digit addresses, dport 200", line)
			continue
		}
		if _, ok := bySize[f[4]+" "+f[6]]; !ok {
			t.Errorf("fct.txt line %q: no flow of %s B with an FCT of %s ns in flows.csv", line, f[4], f[6])
		}
		if start, _ := strconv.ParseInt(f[5], 10, 64); start < 2_000_000_000 {
			t.Errorf("fct.txt line %q: start not offset by 2 s", line)
		}
	}
	qlen := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(withNS3, "qlen.txt"))), "\n")
	if !strings.HasPrefix(qlen[0], "time: ") || len(qlen) != 1+9 {
		t.Errorf("qlen.txt: %d lines starting %q, want the time line and the switch's 9 ports", len(qlen), qlen[0])
	}
	if code, _, stderr := runCLI(t, context.Background(), "run", scen, "--out", t.TempDir(), "--format", "ns2"); code != 2 || !strings.Contains(stderr, `--format "ns2"`) {
		t.Errorf("--format ns2: exit %d, %q", code, stderr)
	}
}
