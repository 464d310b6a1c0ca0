package server

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"cclab/scenarios/ns3"
	"cclab/server/runs"
	"cclab/sim"
	"cclab/store"
)

// ns3Replays lets one replay for pfc.txt and qlen.txt run at a time.
var ns3Replays = make(chan struct{}, 1)

// handleNS3Zip serves GET /api/runs/{id}/ns3.zip: the run's results in the
// formats of HPCC's ns-3 simulator, as `cclab run --format ns3` writes
// them, and the scenario as its input files (cclab export ns3):
//   - fct.txt, from the stored flows;
//   - pfc.txt and qlen.txt, which the lab does not store, from a replay of
//     the run with the recorders on (runs are deterministic): only for a
//     run that is done and was made by this code version, and only when
//     the replay's flows are the stored ones;
//   - config.txt, topology.txt, flow.txt and trace.txt when ns-3 can
//     express the scenario;
//   - README.txt, saying what was left out and why.
func (s *Server) handleNS3Zip(w http.ResponseWriter, r *http.Request) {
	run, err := s.finishedRun(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	flows, err := s.db.Flows(r.Context(), run.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	c, err := s.compile(run.Scenario, "")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	c.Release()
	n, err := ns3.NewNumbering(c.Scenario, c.Config)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	add := func(name string, write func(io.Writer) error) error {
		f, err := zw.Create(name)
		if err != nil {
			return err
		}
		if err := write(f); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	notes := []string{
		fmt.Sprintf("Run %s of cclab in the formats of HPCC's ns-3 simulator (scenarios/scenario-format.md, \"ns-3 export\").", run.ID),
		"fct.txt: sip dip sport dport size_B start_ns fct_ns standalone_fct_ns, one finished flow a line.",
	}
	if err := add("fct.txt", func(w io.Writer) error { return n.WriteFCT(w, flows) }); err != nil {
		s.writeError(w, r, err)
		return
	}
	events, samples, end, why := s.replayNS3(r.Context(), run, c, flows)
	if why == "" {
		notes = append(notes, "pfc.txt and qlen.txt: from a replay of the run with the recorders on; its flows are the stored ones.")
		err = add("pfc.txt", func(w io.Writer) error { return n.WritePFC(w, events) })
		if err == nil {
			err = add("qlen.txt", func(w io.Writer) error { return n.WriteQlen(w, end, samples) })
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
	} else {
		if r.Context().Err() != nil {
			return // the client went away
		}
		notes = append(notes, "pfc.txt and qlen.txt are left out: "+why+". `cclab run SCENARIO.json --format ns3 --out DIR` writes them.")
	}
	files, err := ns3.Export(c.Scenario, c.Config)
	var ue *ns3.UnsupportedError
	switch {
	case errors.As(err, &ue):
		notes = append(notes, "No ns-3 input files: ns-3 cannot express "+strings.Join(ue.Features, "; ")+".")
	case err != nil:
		notes = append(notes, "No ns-3 input files: "+err.Error()+".")
	default:
		for _, f := range []struct {
			name string
			data []byte
		}{{ns3.ConfigFile, files.Config}, {ns3.TopologyFile, files.Topology}, {ns3.FlowFile, files.Flows}, {ns3.TraceFile, files.Trace}} {
			if err := add(f.name, func(w io.Writer) error { _, err := w.Write(f.data); return err }); err != nil {
				s.writeError(w, r, err)
				return
			}
		}
		notes = append(notes, "config.txt, topology.txt, flow.txt, trace.txt: the scenario as ns-3 input files.")
		for _, warn := range files.Warnings {
			notes = append(notes, "Note: "+warn+".")
		}
	}
	if err := add("README.txt", func(w io.Writer) error { _, err := io.WriteString(w, strings.Join(notes, "\n")+"\n"); return err }); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := zw.Close(); err != nil {
		s.writeError(w, r, err)
		return
	}
	attachment(w, "application/zip", run.ID+"-ns3.zip")
	w.Write(buf.Bytes())
}

// replayNS3 simulates a done run again with the ns-3 recorders on and
// returns what they recorded and the run's end, or why it did not.
func (s *Server) replayNS3(ctx context.Context, run *store.Run, c *runs.Compiled, stored []sim.FlowResult) ([]sim.PFCEvent, [][]int64, sim.Time, string) {
	switch {
	case run.Status != store.StatusDone:
		return nil, nil, 0, "the run is " + run.Status + ", not done"
	case run.CodeVersion != s.cfg.CodeVersion:
		return nil, nil, 0, fmt.Sprintf("the run was made by code version %s, this lab is %s", run.CodeVersion, s.cfg.CodeVersion)
	case !c.Runnable():
		return nil, nil, 0, "the run exceeds this lab's limits now"
	}
	select {
	case ns3Replays <- struct{}{}:
		defer func() { <-ns3Replays }()
	case <-ctx.Done():
		return nil, nil, 0, "cancelled"
	}
	e, err := c.Engine()
	if err != nil {
		return nil, nil, 0, err.Error()
	}
	e.RecordPFC()
	e.RecordQueueSamples(ns3.QlenStep, ns3.QlenBucket)
	for !e.Done() {
		if ctx.Err() != nil {
			e.Stop()
			return nil, nil, 0, "cancelled"
		}
		if err := e.RunUntil(e.Now() + sim.Millisecond); err != nil {
			return nil, nil, 0, err.Error()
		}
	}
	res := e.Result()
	if len(res.Flows) != len(stored) {
		return nil, nil, 0, "the replay did not reproduce the run"
	}
	for i, f := range res.Flows {
		g := stored[i]
		if f.Finished != g.Finished || f.FCT != g.FCT || f.Start != g.Start {
			return nil, nil, 0, "the replay did not reproduce the run"
		}
	}
	return e.PFCEvents(), e.QueueSamples(), e.Now(), ""
}
