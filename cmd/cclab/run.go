package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"text/tabwriter"
	"time"

	"cclab/cc"
	"cclab/cc/fdcc"
	"cclab/scenarios"
	"cclab/server/runs"
	"cclab/sim"
	"cclab/sim/report"
)

// loadScenario reads a scenario file, applies the command-line overrides
// in the order --seed, --algo, --set, and compiles it (parsed, validated
// and built once, as the server does; the CLI has no admission limits).
func loadScenario(path string, seed string, algo string, sets []string) (*runs.Compiled, error) {
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
	return runs.CompileWith(data, runs.Limits{}, "", scenarios.BuildOptions{Policy: policyFiles(filepath.Dir(path))})
}

// policyFiles resolves a learned algorithm's policy name as a safetensors
// file: the path as given, else relative to the scenario's folder.
func policyFiles(dir string) func(algo, name string) (cc.Policy, error) {
	return func(algo, name string) (cc.Policy, error) {
		path := name
		if _, err := os.Stat(path); err != nil && !filepath.IsAbs(name) {
			path = filepath.Join(dir, name)
		}
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("not a policy file: %w", err)
		}
		defer f.Close()
		p, _, err := fdcc.LoadPolicy(f)
		if err != nil {
			return nil, err
		}
		return cc.NetPolicy{P: p}, nil
	}
}

// printInvalid prints every validation problem, one per line, as
// "FILE: field: message"; other errors are returned as they are.
func printInvalid(w io.Writer, path string, err error) error {
	var re *runs.Error
	if !errors.As(err, &re) {
		re, _ = runs.InvalidScenario(err, "").(*runs.Error)
	}
	if re == nil || re.Kind != runs.Invalid {
		return err
	}
	for _, e := range re.Errors {
		fmt.Fprintf(w, "%s: %s: %s\n", path, e.Field, e.Msg)
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
	c, err := loadScenario(pos[0], "", "", nil)
	if err != nil {
		return printInvalid(stderr, pos[0], err)
	}
	c.Release()
	cfg := c.Config
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
		return printJSON(stdout, algos)
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
	lanes := fs.Int("lanes", 0, "run the network in this many parallel lanes, each on a goroutine (0: as many as the run and the machine's cores allow; 1: one); the results are the same")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the run to this file (for go tool pprof)")
	format := fs.String("format", "", "also write the results in another simulator's formats: ns3 (fct.txt, pfc.txt and qlen.txt of HPCC's ns-3)")
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
	if *lanes < 0 {
		return &usageError{fmt.Sprintf("--lanes %d: want 0 (automatic) or more", *lanes)}
	}
	if *format != "" && *format != formatNS3 {
		return &usageError{fmt.Sprintf("--format %q: want %s", *format, formatNS3)}
	}
	c, err := loadScenario(pos[0], *seed, *algo, sets)
	if err != nil {
		return printInvalid(stderr, pos[0], err)
	}
	var progress io.Writer = stderr
	if *quiet {
		progress = nil
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			return fmt.Errorf("cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	var ran lanesUsed
	sum, err := runToDir(ctx, c, *out, progress, *format == formatNS3, *lanes, &ran)
	if err != nil && !errors.Is(err, errInterrupted) {
		return printInvalid(stderr, pos[0], err)
	}
	in := fmt.Sprintf("%d lanes", ran.n)
	switch {
	case ran.n == 1 && ran.why != "":
		in = "1 lane (not split: " + ran.why + ")"
	case ran.n == 1:
		in = "1 lane"
	}
	fmt.Fprintf(stdout, "%s: %d of %d flows finished, %.6g ms simulated in %.2f s in %s (%.3g events/s); results in %s\n",
		pos[0], sum.FlowsFinished, sum.FlowsTotal, sum.SimSeconds*1e3,
		sum.WallSeconds, in, sum.EventsPerSecond, *out)
	return err
}

// runToDir simulates a compiled scenario, streaming series.csv, and writes
// flows.csv and summary.json when the run ends or ctx is cancelled (the
// files then cover the simulated time reached, and errInterrupted is
// returned); with ns3 also fct.txt, pfc.txt and qlen.txt (writeNS3). It
// runs in lanes parallel lanes (sim.SetLanes; 0: as many as
// sim.SuggestLanes gives for this machine's cores), and tells in ran, when
// not nil, how many it went in.
func runToDir(ctx context.Context, c *runs.Compiled, dir string, progress io.Writer, ns3 bool, lanes int, ran *lanesUsed) (*report.Summary, error) {
	s, err := c.Engine()
	if err != nil {
		return nil, err
	}
	if ns3 {
		recordNS3(s)
	}
	if lanes == 0 {
		lanes = s.SuggestLanes(runtime.GOMAXPROCS(0))
	}
	s.SetLanes(lanes)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	seriesFile, err := os.Create(filepath.Join(dir, "series.csv"))
	if err != nil {
		return nil, err
	}
	defer seriesFile.Close()
	sw := report.NewSeriesWriter(seriesFile, s)
	// on every path, the writer's goroutine ends before the file closes
	// (deferred calls run last first; a second Flush writes nothing)
	defer sw.Flush()
	s.Subscribe(sw)

	st := &cliStepper{ctx: ctx, progress: progress, start: time.Now()}
	st.lastPrint = st.start
	runErr := runs.Drive(s, st)
	if runErr == nil {
		runErr = st.finish(s)
	}
	wall := time.Since(st.start)
	if ran != nil {
		ran.n, ran.why = s.Lanes()
	}
	if runErr != nil && !errors.Is(runErr, errInterrupted) {
		return nil, runErr
	}
	res := s.Result()
	sum := report.Summarize(res, c.Canonical, wall)
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
	if ns3 {
		if err := writeNS3(dir, c, s, res); err != nil {
			return nil, err
		}
	}
	return sum, runErr
}

// lanesUsed is how many lanes a run went in, and why one when more were
// asked for (sim.Sim.Lanes).
type lanesUsed struct {
	n   int
	why string
}

// cliStepper drives a run of the CLI (runs.Drive, the loop the server's
// runs use): a progress line about twice a second, and Ctrl-C (ctx) stops
// it at the next slice.
type cliStepper struct {
	ctx         context.Context
	progress    io.Writer // nil: quiet
	start       time.Time
	lastPrint   time.Time
	interrupted bool
}

func (c *cliStepper) Before(s *sim.Sim, proposed sim.Time) (sim.Time, bool) {
	if c.ctx.Err() != nil {
		c.interrupted = true
		return 0, true
	}
	return proposed, false
}

// Wait is never called: Before never holds a run back.
func (c *cliStepper) Wait() {}

func (c *cliStepper) After(s *sim.Sim) {
	if c.progress != nil && time.Since(c.lastPrint) > 500*time.Millisecond {
		c.lastPrint = time.Now()
		printProgress(c.progress, s, time.Since(c.start))
	}
}

// finish ends the progress line and reports an interruption.
func (c *cliStepper) finish(s *sim.Sim) error {
	if c.interrupted {
		s.Stop()
		if c.progress != nil {
			fmt.Fprintln(c.progress)
		}
		return errInterrupted
	}
	if c.progress != nil && time.Since(c.start) > 500*time.Millisecond {
		printProgress(c.progress, s, time.Since(c.start))
		fmt.Fprintln(c.progress)
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
