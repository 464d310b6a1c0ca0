package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"cclab/scenarios/ns3"
)

// cmdExport writes a scenario in another simulator's input formats. Today:
// `cclab export ns3`, the config, topology, flow and trace files of HPCC's
// ns-3 simulator.
func cmdExport(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "ns3" {
		return &usageError{"want what to export to: ns3"}
	}
	fs := flag.NewFlagSet("export ns3", flag.ContinueOnError)
	fs.SetOutput(stderr)
	dir := fs.String("dir", "", "directory for config.txt, topology.txt, flow.txt and trace.txt (required)")
	seed := fs.String("seed", "", "override the scenario's seed (it draws generated flows)")
	algo := fs.String("algo", "", "export with this algorithm (its defaults) instead of the scenario's")
	var sets multiFlag
	fs.Var(&sets, "set", "override a field, e.g. --set cc.params.ai=50 (repeatable)")
	pos, err := parseArgs(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &usageError{"want exactly one scenario file"}
	}
	if *dir == "" {
		return &usageError{"--dir DIR is required"}
	}
	c, err := loadScenario(pos[0], *seed, *algo, sets)
	if err != nil {
		return printInvalid(stderr, pos[0], err)
	}
	c.Release()
	files, err := ns3.Export(c.Scenario, c.Config)
	var ue *ns3.UnsupportedError
	if errors.As(err, &ue) {
		for _, f := range ue.Features {
			fmt.Fprintf(stderr, "%s: ns-3 cannot express %s\n", pos[0], f)
		}
		return fmt.Errorf("%s: not exported: %d feature(s) HPCC's ns-3 simulator cannot express", pos[0], len(ue.Features))
	}
	if err != nil {
		return fmt.Errorf("%s: %w", pos[0], err)
	}
	for _, w := range files.Warnings {
		fmt.Fprintf(stderr, "%s: note: %s\n", pos[0], w)
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return err
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{ns3.ConfigFile, files.Config}, {ns3.TopologyFile, files.Topology}, {ns3.FlowFile, files.Flows}, {ns3.TraceFile, files.Trace}} {
		if err := os.WriteFile(filepath.Join(*dir, f.name), f.data, 0o644); err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
	}
	fmt.Fprintf(stdout, "%s: %d nodes, %d links, %d flows written for HPCC's ns-3 simulator to %s\n",
		pos[0], len(c.Config.Nodes), len(c.Config.Links), len(c.Config.Flows), *dir)
	return nil
}
