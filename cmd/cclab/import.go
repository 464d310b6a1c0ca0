package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"cclab/cc/fdcc"
)

// cmdImport converts a model from another tool into the lab's files.
// Today: `cclab import pytorch`, an LSTM-TD3 actor trained with the
// reference PyTorch code, into a policy file FDCC or RL-CC can decide with.
func cmdImport(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] != "pytorch" {
		return &usageError{"want what to import: pytorch"}
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
