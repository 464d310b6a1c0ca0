package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"cclab/cc/fdcc"
	"cclab/scenarios"
	"cclab/scenarios/ns3"
)

// cmdImport converts another tool's files into the lab's: `cclab import
// pytorch`, an LSTM-TD3 actor trained with the reference PyTorch code,
// into a policy file FDCC or RL-CC can decide with; `cclab import ns3`, an
// experiment of HPCC's ns-3 simulator, into a scenario.
func cmdImport(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "ns3" {
		return cmdImportNS3(args[1:], stdout, stderr)
	}
	if len(args) == 0 || args[0] != "pytorch" {
		return &usageError{"want what to import: pytorch or ns3"}
	}
	fs := flag.NewFlagSet("import pytorch", flag.ContinueOnError)
	fs.SetOutput(stderr)
	algo := fs.String("algo", "fdcc", "the algorithm the actor decides for: fdcc (8 observations, history 8, output ±2) or rlcc (2, 1, ±1)")
	prefix := fs.String("prefix", "pi.", `the actor's tensor names' prefix: "pi." for an MLPActorCritic's state_dict, "" for a bare actor's`)
	out := fs.String("out", "", "the policy file to write (required)")
	pos, err := parseArgs(fs, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &usageError{"want exactly one PyTorch safetensors file"}
	}
	if *out == "" {
		return &usageError{"--out FILE is required"}
	}
	var arch fdcc.Arch
	switch *algo {
	case "fdcc":
		arch = fdcc.Arch{Obs: 8, Hist: 8, ActLimit: 2}
	case "rlcc":
		arch = fdcc.Arch{Obs: 2, Hist: 1, ActLimit: 1}
	default:
		return &usageError{fmt.Sprintf("--algo: %q has no learned policy (fdcc or rlcc)", *algo)}
	}
	data, err := os.ReadFile(pos[0])
	if err != nil {
		return err
	}
	if arch.Hidden, err = fdcc.PyTorchHidden(data, *prefix, arch.Obs); err != nil {
		return fmt.Errorf("%s: %w", pos[0], err)
	}
	p, err := fdcc.ImportPyTorch(bytes.NewReader(data), arch, *prefix)
	if err != nil {
		return fmt.Errorf("%s: %w", pos[0], err)
	}
	var b bytes.Buffer
	meta := map[string]string{"algo": *algo, "command": "cclab import pytorch " + strings.Join(args[1:], " "), "source": pos[0]}
	if err := fdcc.SavePolicy(&b, p, meta); err != nil {
		return err
	}
	if err := os.WriteFile(*out, b.Bytes(), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: %s actor, hidden %d, written to %s\n", pos[0], *algo, arch.Hidden, *out)
	return nil
}

// cmdImportNS3 turns an HPCC ns-3 experiment (config.txt and the topology
// and flow files it names) into a scenario document.
func cmdImportNS3(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("import ns3", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "the scenario file to write (default: standard output)")
	topoPath := fs.String("topology", "", "the topology file (default: TOPOLOGY_FILE, relative to the config's folder, then its parent)")
	flowPath := fs.String("flows", "", "the flow file (default: FLOW_FILE, found as TOPOLOGY_FILE is)")
	strict := fs.Bool("strict", false, "fail on a config key the lab does not understand instead of warning")
	name := fs.String("name", "", "the scenario's name (default: ns3- and the config's folder name)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &usageError{"want exactly one config file (HPCC's config.txt)"}
	}
	configPath := pos[0]
	configData, err := os.ReadFile(configPath)
	if err != nil {
		return err
	}
	config := ns3.File{Name: configPath, Data: configData}
	c, err := ns3.ParseConfig(config)
	if err != nil {
		return err
	}
	topoKey, flowKey := c.InputFiles()
	topology, err := readNS3Input(c, configPath, "TOPOLOGY_FILE", topoKey, *topoPath, "--topology")
	if err != nil {
		return err
	}
	flows, err := readNS3Input(c, configPath, "FLOW_FILE", flowKey, *flowPath, "--flows")
	if err != nil {
		return err
	}
	if *name == "" {
		*name = defaultNS3Name(configPath)
	}
	imp, err := ns3.FromFiles(*name, config, topology, flows)
	if err != nil {
		return err
	}
	if *strict {
		if err := imp.StrictError(); err != nil {
			return fmt.Errorf("%w (--strict)", err)
		}
	}
	for _, w := range imp.Warnings() {
		fmt.Fprintf(stderr, "cclab import ns3: warning: %s\n", w)
	}
	if _, err := scenarios.Parse(imp.Scenario); err != nil {
		return fmt.Errorf("%s: the imported scenario is not valid: %w", configPath, err)
	}
	data := append(imp.Scenario, '\n')
	if *out == "" {
		_, err := stdout.Write(data)
		return err
	}
	if err := os.WriteFile(*out, data, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "%s: scenario written to %s\n", configPath, *out)
	return nil
}

// readNS3Input reads the file a config key names: the flag's path when
// given, else the key's value relative to the config's folder, then to
// its parent (HPCC's configs name files from the simulation folder, e.g.
// mix/topology.txt).
func readNS3Input(c *ns3.Config, configPath, key, value, flagPath, flagName string) (ns3.File, error) {
	if flagPath != "" {
		data, err := os.ReadFile(flagPath)
		if err != nil {
			return ns3.File{}, fmt.Errorf("%s: %w", flagName, err)
		}
		return ns3.File{Name: flagPath, Data: data}, nil
	}
	if value == "" {
		return ns3.File{}, &ns3.Error{File: configPath, Field: key, Msg: fmt.Sprintf("missing: the config names no file (give one with %s)", flagName)}
	}
	dir := filepath.Dir(configPath)
	candidates := []string{value}
	if !filepath.IsAbs(value) {
		candidates = []string{filepath.Join(dir, value), filepath.Join(filepath.Dir(dir), value)}
	}
	for _, p := range candidates {
		data, err := os.ReadFile(p)
		if err == nil {
			return ns3.File{Name: p, Data: data}, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return ns3.File{}, fmt.Errorf("%s: %w", p, err)
		}
	}
	return ns3.File{}, &ns3.Error{File: configPath, Line: c.Lines[key], Field: key,
		Msg: fmt.Sprintf("%s: no such file (looked for %s; give it with %s)", value, strings.Join(candidates, " and "), flagName)}
}

// defaultNS3Name names an imported scenario after its config's folder
// (ns3-hp for hp/config.txt), or the config's file name.
func defaultNS3Name(configPath string) string {
	abs, err := filepath.Abs(configPath)
	if err != nil {
		abs = configPath
	}
	base := strings.TrimSuffix(filepath.Base(abs), filepath.Ext(abs))
	if base == "config" {
		if d := filepath.Base(filepath.Dir(abs)); d != "." && d != string(filepath.Separator) {
			base = d
		}
	}
	return "ns3-" + base
}
