package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"text/tabwriter"
	"time"

	"cclab/cc"
	"cclab/scenarios"
	"cclab/sim"
	"cclab/sim/report"
)

// loadScenario reads a scenario file and applies the command-line overrides
// in the order --seed, --algo, --set.
func loadScenario(path string, seed string, algo string, sets []string) (*scenarios.Scenario, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if seed != "" {
		n, err := strconv.ParseUint(seed, 10, 64)
		if err != nil {
			return nil, &usageError{fmt.Sprintf("--seed %q: want a whole number >= 0", seed)}
		}
		if data, err = scenarios.SetSeed(data, n); err != nil {
			return nil, err
		}
	}
	if algo != "" {
		if data, err = scenarios.SetAlgorithm(data, algo); err != nil {
			return nil, err
		}
	}
	if len(sets) > 0 {
		if data, err = scenarios.ApplySets(data, sets); err != nil {
			return nil, err
		}
	}
	return scenarios.Parse(data)
}

// printInvalid prints every validation problem, one per line, as
// "FILE: field: message"; other errors are returned as they are.
func printInvalid(w io.Writer, path string, err error) error {
	var se *scenarios.Error
	var fe *sim.FieldError
	switch {
	case errors.As(err, &se):
		for _, e := range se.Errors {
			fmt.Fprintf(w, "%s: %s: %s\n", path, e.Field, e.Error)
		}
	case errors.As(err, &fe):
		fmt.Fprintf(w, "%s: %s: %s\n", path, fe.Field, fe.Msg)
	default:
		return err
	}
	return errInvalid
}

func cmdValidate(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("validate", flag.ContinueOnError)
	fs.SetOutput(stderr)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &usageError{"want exactly one scenario file"}
	}
	scen, err := loadScenario(pos[0], "", "", nil)
	if err != nil {
		return printInvalid(stderr, pos[0], err)
	}
	cfg, _, err := scenarios.Build(scen)
	if err != nil {
		return printInvalid(stderr, pos[0], err)
	}
	if _, err := sim.New(*cfg); err != nil {
		return printInvalid(stderr, pos[0], err)
	}
	fmt.Fprintf(stdout, "%s: ok (%d nodes, %d links, %d flows)\n", pos[0], len(cfg.Nodes), len(cfg.Links), len(cfg.Flows))
	return nil
}

func cmdAlgorithms(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("algorithms", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print the registry as JSON")
	if _, err := parseArgs(fs, args); err != nil {
		return err
	}
	algos := cc.Algorithms()
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(algos)
	}
	fmt.Fprintln(stdout, "Defaults are at a 100 Gbps host link; parameters in Mbps and KB/B scale with the link where the reference does.")
	tw := tabwriter.NewWriter(stdout, 2, 4, 2, ' ', 0)
	for _, a := range algos {
		fmt.Fprintf(tw, "%s\t%s\n", a.Name, a.Title)
		for _, p := range a.Param {
			fmt.Fprintf(tw, "  %s\t%g %s\t[%g, %g]\t%s\n", p.Name, p.Default, p.Unit, p.Min, p.Max, p.Help)
		}
		for _, p := range a.Presets {
			fmt.Fprintf(tw, "  preset %s\t\t\t%s\n", p.Name, p.Help)
		}
	}
	return tw.Flush()
}

func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "directory for flows.csv, series.csv and summary.json (required)")
	seed := fs.String("seed", "", "override the scenario's seed")
	algo := fs.String("algo", "", "run with this algorithm (its defaults) instead of the scenario's")
	quiet := fs.Bool("quiet", false, "no progress line")
	var sets multiFlag
	fs.Var(&sets, "set", "override a field, e.g. --set cc.params.wr=10 (repeatable)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &usageError{"want exactly one scenario file"}
	}
	if *out == "" {
		return &usageError{"--out DIR is required"}
	}
	scen, err := loadScenario(pos[0], *seed, *algo, sets)
	if err != nil {
		return printInvalid(stderr, pos[0], err)
	}
	var progress io.Writer = stderr
	if *quiet {
		progress = nil
	}
	sum, err := runToDir(ctx, scen, *out, progress)
	if err != nil && !errors.Is(err, errInterrupted) {
		return printInvalid(stderr, pos[0], err)
	}
	fmt.Fprintf(stdout, "%s: %d of %d flows finished, %.6g ms simulated in %.2f s (%.3g events/s); results in %s\n",
		pos[0], sum.FlowsFinished, sum.FlowsTotal, sum.SimSeconds*1e3,
		sum.WallSeconds, sum.EventsPerSecond, *out)
	return err
}

// runToDir simulates a scenario, streaming series.csv, and writes flows.csv
// and summary.json when the run ends or ctx is cancelled (the files then
// cover the simulated time reached, and errInterrupted is returned).
func runToDir(ctx context.Context, scen *scenarios.Scenario, dir string, progress io.Writer) (*report.Summary, error) {
	canon, err := scen.Canonical()
	if err != nil {
		return nil, err
	}
	cfg, _, err := scenarios.Build(scen)
	if err != nil {
		return nil, err
	}
	s, err := sim.New(*cfg)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	seriesFile, err := os.Create(filepath.Join(dir, "series.csv"))
	if err != nil {
		return nil, err
	}
	defer seriesFile.Close()
	sw := report.NewSeriesWriter(seriesFile, s)
	s.Subscribe(sw)

	start := time.Now()
	runErr := drive(ctx, s, progress, start)
	wall := time.Since(start)
	if runErr != nil && !errors.Is(runErr, errInterrupted) {
		return nil, runErr
	}
	res := s.Result()
	sum := report.Summarize(res, canon, wall)
	if err := sw.Flush(); err != nil {
		return nil, fmt.Errorf("series.csv: %w", err)
	}
	if err := seriesFile.Close(); err != nil {
		return nil, fmt.Errorf("series.csv: %w", err)
	}
	if err := writeFile(filepath.Join(dir, "flows.csv"), func(w io.Writer) error { return report.WriteFlows(w, res) }); err != nil {
		return nil, err
	}
	if err := writeFile(filepath.Join(dir, "summary.json"), func(w io.Writer) error { return report.WriteSummary(w, sum) }); err != nil {
		return nil, err
	}
	return sum, runErr
}

// drive runs the simulation in slices of simulated time, printing a progress
// line about twice a second, until it ends or ctx is cancelled.
func drive(ctx context.Context, s *sim.Sim, progress io.Writer, start time.Time) error {
	slice := 10 * sim.Microsecond
	lastPrint := start
	for !s.Done() {
		if ctx.Err() != nil {
			s.Stop()
			if progress != nil {
				fmt.Fprintln(progress)
			}
			return errInterrupted
		}
		t0 := time.Now()
		if err := s.RunUntil(s.Now() + slice); err != nil {
			return err
		}
		// aim at ~20 ms of wall time per slice so cancellation stays prompt
		if d := time.Since(t0); d < 10*time.Millisecond && slice < sim.Second {
			slice *= 2
		} else if d > 40*time.Millisecond && slice > sim.Nanosecond {
			slice /= 2
		}
		if progress != nil && time.Since(lastPrint) > 500*time.Millisecond {
			lastPrint = time.Now()
			printProgress(progress, s, time.Since(start))
		}
	}
	if progress != nil && time.Since(start) > 500*time.Millisecond {
		printProgress(progress, s, time.Since(start))
		fmt.Fprintln(progress)
	}
	return nil
}

func printProgress(w io.Writer, s *sim.Sim, wall time.Duration) {
	of := "(until all flows finish)"
	if end := s.End(); end < sim.MaxDuration {
		of = fmt.Sprintf("of %.3f ms", float64(end)/float64(sim.Millisecond))
	}
	fmt.Fprintf(w, "\rsimulated %.3f ms %s, %d flows done, %.1f M events, %.1f M events/s   ",
		float64(s.Now())/float64(sim.Millisecond), of, s.FlowsFinished(), float64(s.Events())/1e6,
		float64(s.Events())/1e6/wall.Seconds())
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return f.Close()
}
