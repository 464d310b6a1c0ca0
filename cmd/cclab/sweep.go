package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"cclab/scenarios"
	"cclab/scenarios/sweep"
	"cclab/server/runs"
)

// maxSweepRuns bounds a sweep's points × seeds (the package's limits allow
// 100^4 points; the CLI checks and keeps every point).
const maxSweepRuns = 100_000

// sweepFile is sweep.json.
type sweepFile struct {
	Spec    sweep.Spec          `json:"spec"`
	Metrics []sweep.Metric      `json:"metrics"`
	Points  []sweep.PointResult `json:"points"`
}

// sweepRun is one run of a sweep: a point and a seed.
type sweepRun struct {
	point sweep.Point
	i     int    // the seed's index in the spec
	seed  uint64 // the seed
}

// sweepDone is a run's outcome.
type sweepDone struct {
	sweepRun
	values map[string]float64 // nil unless the run finished
	made   bool               // its directory was written
	err    error
}

// cmdSweep runs a scenario over a grid of values and seeds and writes
// every run's results, sweep.csv and sweep.json.
func cmdSweep(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("sweep", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "directory for sweep.csv, sweep.json and runs/ (required)")
	seedsArg := fs.String("seeds", "", "the seeds of every point, e.g. 1-5, 1,3,7 or 1-3,9 (required)")
	workers := fs.Int("workers", 0, "runs simulated at once (0: one per core)")
	quiet := fs.Bool("quiet", false, "no progress bar")
	var grids multiFlag
	fs.Var(&grids, "grid", "a swept field, PATH=v1,v2,... or PATH=lo:hi:step (repeatable, one per axis)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) != 1:
		return &usageError{"want exactly one scenario file"}
	case *out == "":
		return &usageError{"--out DIR is required"}
	case len(grids) == 0:
		return &usageError{"--grid PATH=VALUES is required (one per swept field)"}
	case *seedsArg == "":
		return &usageError{"--seeds is required (e.g. --seeds 1-5)"}
	case *workers < 0:
		return &usageError{fmt.Sprintf("--workers %d: want >= 0", *workers)}
	}
	spec, err := sweepSpec(grids, *seedsArg)
	if err != nil {
		return err
	}
	// the scenario as it is must be valid, as for cclab run; the sweep's
	// values are checked per run below
	c, err := loadScenario(pos[0], "", "", nil)
	if err != nil {
		return printInvalid(stderr, pos[0], err)
	}
	c.Release()
	doc, err := os.ReadFile(pos[0])
	if err != nil {
		return err
	}
	if *workers == 0 {
		*workers = runtime.GOMAXPROCS(0)
	}
	opt := scenarios.BuildOptions{Policy: policyFiles(filepath.Dir(pos[0]))}
	points := spec.Points()
	var jobs []sweepRun
	for _, p := range points {
		for i, seed := range spec.Seeds {
			jobs = append(jobs, sweepRun{p, i, seed})
		}
	}
	compile := func(j sweepRun) (*runs.Compiled, error) {
		d, err := sweep.Apply(doc, spec.Axes, j.point, j.seed)
		if err != nil {
			return nil, err
		}
		return runs.CompileWith(d, runs.Limits{}, "", opt)
	}
	if err := checkSweep(ctx, spec, jobs, *workers, compile); err != nil {
		return err
	}

	start := time.Now()
	var progress func(done int, label string)
	if !*quiet {
		progress = func(done int, label string) {
			const width = 30
			n := done * width / len(jobs)
			fmt.Fprintf(stderr, "\r[%s%s] %d/%d runs, %.0f s  %-20.20s", strings.Repeat("#", n), strings.Repeat(".", width-n),
				done, len(jobs), time.Since(start).Seconds(), label)
		}
		progress(0, "")
	}
	results := make(chan sweepDone)
	go runSweep(ctx, jobs, *workers, results, func(j sweepRun) sweepDone {
		d := sweepDone{sweepRun: j}
		c, err := compile(j)
		if err != nil {
			d.err = err
			return d
		}
		sum, err := runToDir(ctx, c, filepath.Join(*out, filepath.FromSlash(sweepRunDir(j))), nil, false, 1, nil)
		d.made = sum != nil
		switch {
		case errors.Is(err, errInterrupted):
		case err != nil:
			d.err = err
		default:
			d.values = sweep.Extract(sum)
		}
		return d
	})

	values := make([][]map[string]float64, len(points))
	dirs := make([][]string, len(points))
	for i := range points {
		values[i] = make([]map[string]float64, len(spec.Seeds))
		dirs[i] = make([]string, len(spec.Seeds))
	}
	var runErr error
	done, finished := 0, 0
	for d := range results {
		done++
		if d.err != nil && runErr == nil {
			runErr = fmt.Errorf("point p%d, seed %d: %w", d.point.Index, d.seed, d.err)
		}
		if d.made {
			dirs[d.point.Index][d.i] = sweepRunDir(d.sweepRun)
		}
		if d.values != nil {
			values[d.point.Index][d.i] = d.values
			finished++
		}
		if progress != nil {
			progress(done, fmt.Sprintf("p%d seed %d", d.point.Index, d.seed))
		}
	}
	if progress != nil {
		fmt.Fprintln(stderr)
	}
	res := sweepFile{Spec: spec, Metrics: sweep.Metrics()}
	for i, p := range points {
		res.Points = append(res.Points, sweep.Summarize(p, dirs[i], values[i]))
	}
	// the sweep's files are written also after a failed run (the first
	// failure is the error reported)
	writeErr := writeSweep(*out, res)
	if runErr != nil {
		return runErr
	}
	if writeErr != nil {
		return writeErr
	}
	fmt.Fprintf(stdout, "%s: %d points × %d seeds, %d of %d runs finished in %.1f s; sweep.csv and sweep.json in %s\n",
		pos[0], len(points), len(spec.Seeds), finished, len(jobs), time.Since(start).Seconds(), *out)
	if finished < len(jobs) && ctx.Err() != nil {
		return errInterrupted
	}
	return nil
}

// sweepSpec parses and checks the --grid and --seeds arguments.
func sweepSpec(grids []string, seedsArg string) (sweep.Spec, error) {
	var spec sweep.Spec
	for _, g := range grids {
		a, err := sweep.ParseGrid(g)
		if err != nil {
			return spec, &usageError{"--grid " + err.Error()}
		}
		spec.Axes = append(spec.Axes, a)
	}
	seeds, err := sweep.ParseSeeds(seedsArg)
	if err != nil {
		return spec, &usageError{fmt.Sprintf("--seeds %q: %v", seedsArg, err)}
	}
	spec.Seeds = seeds
	if err := spec.Validate(); err != nil {
		var se *scenarios.Error
		if !errors.As(err, &se) || len(se.Errors) == 0 {
			return spec, &usageError{err.Error()}
		}
		// name the flag: axes[i] is the i-th --grid
		f := se.Errors[0]
		if rest, ok := strings.CutPrefix(f.Field, "axes["); ok {
			if i, err := strconv.Atoi(rest[:strings.IndexByte(rest, ']')]); err == nil && i < len(grids) {
				return spec, &usageError{fmt.Sprintf("--grid %q: %s", grids[i], f.Error)}
			}
		}
		if f.Field == "seeds" {
			return spec, &usageError{fmt.Sprintf("--seeds %q: %s", seedsArg, f.Error)}
		}
		return spec, &usageError{fmt.Sprintf("--grid: %s", f.Error)}
	}
	if n := spec.Runs(); n > maxSweepRuns {
		return spec, &usageError{fmt.Sprintf("%d runs (points × seeds), at most %d", n, maxSweepRuns)}
	}
	return spec, nil
}

// checkSweep compiles every run's scenario on workers goroutines before
// anything runs; the first bad one in run order is a usage error naming
// the point, its values and the field.
func checkSweep(ctx context.Context, spec sweep.Spec, jobs []sweepRun, workers int, compile func(sweepRun) (*runs.Compiled, error)) error {
	results := make(chan sweepDone)
	go runSweep(ctx, jobs, workers, results, func(j sweepRun) sweepDone {
		c, err := compile(j)
		if err == nil {
			c.Release()
		}
		return sweepDone{sweepRun: j, err: err}
	})
	var first *sweepDone
	checked := 0
	for d := range results {
		checked++
		if d.err != nil && (first == nil || d.point.Index*len(spec.Seeds)+d.i < first.point.Index*len(spec.Seeds)+first.i) {
			first = &d
		}
	}
	if first != nil {
		var set []string
		for i, a := range spec.Axes {
			set = append(set, a.Path+"="+first.point.Values[i])
		}
		return &usageError{fmt.Sprintf("point p%d (%s), seed %d: %v", first.point.Index, strings.Join(set, ", "),
			first.seed, first.err)}
	}
	if checked < len(jobs) {
		return errInterrupted
	}
	return nil
}

// runSweep calls do for every job on workers goroutines, sending each
// outcome to results, and closes results when done. Once ctx is done no
// further job starts.
func runSweep(ctx context.Context, jobs []sweepRun, workers int, results chan<- sweepDone, do func(sweepRun) sweepDone) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	in := make(chan sweepRun)
	var wg sync.WaitGroup
	for range min(workers, len(jobs)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range in {
				if ctx.Err() != nil {
					continue // stopped: the rest is not run
				}
				d := do(j)
				if d.err != nil {
					cancel() // a failed run stops the sweep
				}
				results <- d
			}
		}()
	}
	for _, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		select {
		case in <- j:
		case <-ctx.Done():
		}
	}
	close(in)
	wg.Wait()
	close(results)
}

// sweepRunDir is a run's directory relative to the sweep's.
func sweepRunDir(j sweepRun) string {
	return path.Join("runs", "p"+strconv.Itoa(j.point.Index)+"-s"+strconv.FormatUint(j.seed, 10))
}

// writeSweep writes sweep.csv and sweep.json to dir.
func writeSweep(dir string, res sweepFile) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeFile(filepath.Join(dir, "sweep.csv"), func(w io.Writer) error {
		return sweep.WriteCSV(w, res.Spec, res.Points)
	}); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, "sweep.json"), func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	})
}
