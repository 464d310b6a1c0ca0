package main

import (
	"io"
	"path/filepath"

	"cclab/scenarios/ns3"
	"cclab/server/runs"
	"cclab/sim"
)

// formatNS3 is `cclab run --format ns3`: HPCC's ns-3 result files besides
// cclab's own.
const formatNS3 = "ns3"

// recordNS3 turns on the engine's recorders that the ns-3 files need; call
// it before the run starts.
func recordNS3(s *sim.Sim) {
	s.RecordPFC()
	s.RecordQueueSamples(ns3.QlenStep, ns3.QlenBucket)
}

// writeNS3 writes fct.txt, pfc.txt and qlen.txt of a run that recordNS3
// prepared into dir.
func writeNS3(dir string, c *runs.Compiled, s *sim.Sim, res *sim.Result) error {
	n, err := ns3.NewNumbering(c.Scenario, c.Config)
	if err != nil {
		return err
	}
	files := []struct {
		name  string
		write func(io.Writer) error
	}{
		{"fct.txt", func(w io.Writer) error { return n.WriteFCT(w, res.Flows) }},
		{"pfc.txt", func(w io.Writer) error { return n.WritePFC(w, s.PFCEvents()) }},
		{"qlen.txt", func(w io.Writer) error { return n.WriteQlen(w, s.Now(), s.QueueSamples()) }},
	}
	for _, f := range files {
		if err := writeFile(filepath.Join(dir, f.name), f.write); err != nil {
			return err
		}
	}
	return nil
}
