package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cclab export ns3 writes the four input files of HPCC's simulator, notes
// what it made explicit, and refuses a scenario with features the
// simulator lacks, naming each, writing nothing.
func TestExportNS3(t *testing.T) {
	dir := t.TempDir()
	code, stdout, stderr := runCLI(t, context.Background(), "export", "ns3", library+"incast-16to1-dcqcn.json", "--dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "16 flows written") || !strings.Contains(stderr, "workload[0] (incast): the flow file lists the flows it generated") {
		t.Errorf("stdout %q, stderr %q", stdout, stderr)
	}
	config := readFile(t, filepath.Join(dir, "config.txt"))
	for _, want := range []string{"\nCC_MODE 1\n", "\nSIMULATOR_STOP_TIME 2.010000000\n", "\nTOPOLOGY_FILE topology.txt\n", "\nFLOW_FILE flow.txt\n", "\nBUFFER_SIZE 32\n", "\nRATE_AI 20Mb/s\n"} {
		if !strings.Contains(config, want) {
			t.Errorf("config.txt lacks %q", strings.TrimSpace(want))
		}
	}
	flows := strings.Split(strings.TrimSpace(readFile(t, filepath.Join(dir, "flow.txt"))), "\n")
	// the endless 1000 GB flows as the most third.cc's uint32_t size holds
	if flows[0] != "16" || len(flows) != 17 || flows[1] != "0 16 3 200 4294967295 2.000000000" ||
		!strings.Contains(stderr, "workload: flow 0 of 1000000000000 B is written as 4294967295 B") {
		t.Errorf("flow.txt: %d lines, first %q %q", len(flows), flows[0], flows[1])
	}
	if topo := readFile(t, filepath.Join(dir, "topology.txt")); !strings.HasPrefix(topo, "18 1 17\n17\n0 17 100Gbps 1000ns 0\n") {
		t.Errorf("topology.txt starts %q", topo[:min(len(topo), 60)])
	}
	if trace := readFile(t, filepath.Join(dir, "trace.txt")); trace != "0\n" {
		t.Errorf("trace.txt %q", trace)
	}

	refused := t.TempDir()
	code, _, stderr = runCLI(t, context.Background(), "export", "ns3", library+"qcn-buffer-tcp.json", "--dir", refused)
	if code != 1 {
		t.Fatalf("qcn-buffer-tcp: exit %d, want 1: %s", code, stderr)
	}
	for _, want := range []string{"cannot express cc.algorithm tcp", "cannot express switch.pfc off", "cannot express switch.buffer 150000 B"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q: %s", want, stderr)
		}
	}
	if entries, _ := os.ReadDir(refused); len(entries) != 0 {
		t.Errorf("a refused export wrote %d files", len(entries))
	}
	if code, _, stderr := runCLI(t, context.Background(), "export", "ns3", library+"incast-8to1.json"); code != 2 || !strings.Contains(stderr, "--dir DIR is required") {
		t.Errorf("no --dir: exit %d, %q", code, stderr)
	}
	if code, _, _ := runCLI(t, context.Background(), "export", "ns2", library+"incast-8to1.json", "--dir", dir); code != 2 {
		t.Errorf("export ns2: exit %d, want 2", code)
	}
}
