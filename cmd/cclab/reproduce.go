package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"cclab/scenarios/repro"
)

// cmdReproduce runs seeds' experiments on every core and writes the report.
func cmdReproduce(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("reproduce", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("out", "", "directory for report.md, report.json and the figures (required unless --list)")
	quick := fs.Bool("quick", false, "the reduced set: small scales, short durations")
	list := fs.Bool("list", false, "list the seeds and experiments and exit")
	workers := fs.Int("workers", 0, "runs simulated at once (0: one per core)")
	quiet := fs.Bool("quiet", false, "no progress bar")
	names, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if *list {
		return listExperiments(stdout)
	}
	if *out == "" {
		return &usageError{"--out DIR is required"}
	}
	exps, err := repro.Select(names, *quick)
	if err != nil {
		return &usageError{err.Error()}
	}
	var progress func(done, total int, label string)
	if !*quiet {
		start := time.Now()
		progress = func(done, total int, label string) {
			const width = 30
			n := done * width / total
			fmt.Fprintf(stderr, "\r[%s%s] %d/%d runs, %.0f s  %-40.40s", strings.Repeat("#", n), strings.Repeat(".", width-n),
				done, total, time.Since(start).Seconds(), label)
			if done == total {
				fmt.Fprintln(stderr)
			}
		}
	}
	rep, err := repro.Execute(ctx, exps, repro.Options{Quick: *quick, Workers: *workers, Progress: progress})
	if err != nil {
		if errors.Is(err, context.Canceled) {
			return errInterrupted
		}
		return err
	}
	if err := repro.WriteDir(*out, rep); err != nil {
		return err
	}
	c := repro.Count(rep.Rows())
	fmt.Fprintf(stdout, "%d rows: %d reproduced, %d direction only, %d not reproduced, %d not comparable, in %.1f s; report in %s\n",
		len(rep.Rows()), c.Reproduced, c.DirectionOnly, c.NotReproduced, c.NotComparable, rep.WallSeconds, *out)
	return nil
}

func listExperiments(w io.Writer) error {
	all := repro.Experiments()
	for _, s := range repro.Seeds {
		fmt.Fprintf(w, "%s %s: %s\n", s.ID, s.Name, s.Title)
		n := 0
		for _, e := range all {
			if e.Seed != s.ID {
				continue
			}
			n++
			q := ""
			if e.Quick {
				q = " [quick]"
			}
			fmt.Fprintf(w, "  %-18s %s (%d runs)%s\n", e.ID, e.Title, len(e.Runs()), q)
		}
		if n == 0 {
			fmt.Fprintln(w, "  (no experiments in the lab yet)")
		}
	}
	return nil
}
