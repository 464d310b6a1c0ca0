package repro

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"time"

	"cclab/scenarios"
	"cclab/server/runs"
	"cclab/sim"
	"cclab/sim/report"
)

// Options of Execute.
type Options struct {
	Quick   bool
	Workers int // runs simulated at once; 0: one per core
	// Progress, when set, is called after each run (from one goroutine at a
	// time).
	Progress func(done, total int, label string)
}

// Report is a reproduction: every experiment's rows and figures.
type Report struct {
	Quick       bool               `json:"quick"`
	WallSeconds float64            `json:"wall_seconds"`
	Experiments []ExperimentReport `json:"experiments"`
}

// ExperimentReport is one experiment's part of a report.
type ExperimentReport struct {
	Seed        string      `json:"seed"`
	ID          string      `json:"id"`
	Title       string      `json:"title"`
	Claim       string      `json:"claim"`
	Reading     string      `json:"reading,omitempty"`
	Rows        []Row       `json:"rows"`
	Figures     []Figure    `json:"-"`
	Runs        []RunReport `json:"runs"`
	WallSeconds float64     `json:"wall_seconds"` // the runs' wall time, summed
}

// RunReport is one run of an experiment.
type RunReport struct {
	Key         string  `json:"key"`
	Label       string  `json:"label"`
	SimSeconds  float64 `json:"sim_seconds"`
	WallSeconds float64 `json:"wall_seconds"`
}

// Rows is every row of the report in order.
func (r *Report) Rows() []Row {
	var out []Row
	for _, e := range r.Experiments {
		out = append(out, e.Rows...)
	}
	return out
}

// Scenario is a run's scenario document: the library entry with its edits
// and algorithm applied.
func Scenario(lib map[string][]byte, run Run) ([]byte, error) {
	data, ok := lib[run.Scenario]
	if !ok {
		return nil, fmt.Errorf("run %s: no library scenario %q", run.Key, run.Scenario)
	}
	var err error
	if len(run.Sets) > 0 {
		if data, err = scenarios.ApplySets(data, run.Sets); err != nil {
			return nil, fmt.Errorf("run %s: %w", run.Key, err)
		}
	}
	if run.Algo != "" {
		if data, err = scenarios.SetAlgorithm(data, run.Algo); err != nil {
			return nil, fmt.Errorf("run %s: %w", run.Key, err)
		}
	}
	return data, nil
}

// LibrarySources is the library's documents by id.
func LibrarySources() map[string][]byte {
	lib := map[string][]byte{}
	for _, e := range scenarios.Library() {
		lib[e.ID] = e.Source
	}
	return lib
}

// Wants says whether a run keeps a sample of metric for entity: its Series
// entries are "metric" (every entity) or "metric@entity".
func (r Run) Wants(metric, entity string) bool {
	for _, s := range r.Series {
		m, e, one := strings.Cut(s, "@")
		if m == metric && (!one || e == entity) {
			return true
		}
	}
	return false
}

type job struct {
	exp int
	run Run
}

type finished struct {
	job
	out *Outcome
	rep RunReport
	err error
}

// Execute runs the experiments' runs on Workers goroutines and evaluates
// each experiment. It stops at the first failed run (or when ctx ends).
func Execute(ctx context.Context, exps []*Experiment, opt Options) (*Report, error) {
	t0 := time.Now()
	lib := LibrarySources()
	var jobs []job
	for i, e := range exps {
		for _, r := range e.RunsFor(opt.Quick) {
			jobs = append(jobs, job{i, r})
		}
	}
	if len(exps) == 0 {
		return nil, ErrNoRuns // (an experiment computed from a model has no runs and is fine)
	}
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	in := make(chan job)
	out := make(chan finished)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range in {
				o, rep, err := simulate(ctx, lib, j.run)
				out <- finished{j, o, rep, err}
			}
		}()
	}
	go func() {
		defer close(in)
		for _, j := range jobs {
			select {
			case in <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(out) }()

	outcomes := make([]Outcomes, len(exps))
	reps := make([][]RunReport, len(exps))
	for i := range exps {
		outcomes[i] = Outcomes{}
	}
	var firstErr error
	done := 0
	for f := range out {
		done++
		if f.err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("%s: %w", exps[f.exp].ID, f.err)
				cancel()
			}
			continue
		}
		outcomes[f.exp][f.run.Key] = f.out
		reps[f.exp] = append(reps[f.exp], f.rep)
		if opt.Progress != nil {
			opt.Progress(done, len(jobs), exps[f.exp].ID+" "+f.run.Key)
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep := &Report{Quick: opt.Quick}
	for i, e := range exps {
		er := Evaluate(e, outcomes[i])
		// runs in the experiment's order
		for _, r := range e.RunsFor(opt.Quick) {
			for _, x := range reps[i] {
				if x.Key == r.Key {
					er.Runs = append(er.Runs, x)
					er.WallSeconds += x.WallSeconds
				}
			}
		}
		rep.Experiments = append(rep.Experiments, er)
	}
	rep.WallSeconds = time.Since(t0).Seconds()
	return rep, nil
}

// Evaluate turns an experiment's outcomes into its part of a report.
func Evaluate(e *Experiment, o Outcomes) ExperimentReport {
	er := ExperimentReport{Seed: e.Seed, ID: e.ID, Title: e.Title, Claim: e.Claim, Reading: e.Reading}
	er.Rows = e.Rows(o)
	if e.Figures != nil {
		er.Figures = e.Figures(o)
	}
	return er
}

// observer keeps the samples a run wants.
type observer struct {
	s     *sim.Sim
	run   Run
	out   *Outcome
	names map[sim.Metric]string // the metrics it wants at all
}

func (ob *observer) Observe(batch []sim.Sample) {
	for _, x := range batch {
		name, ok := ob.names[x.Metric]
		if !ok {
			continue
		}
		ent := ob.s.EntityName(x.Metric, x.Entity)
		if ob.run.Wants(name, ent) {
			ob.out.AddSample(name, ent, float64(x.T)/float64(sim.Second), x.Value)
		}
	}
}

// simulate runs one run to its outcome, in slices so that ctx can stop it.
func simulate(ctx context.Context, lib map[string][]byte, run Run) (*Outcome, RunReport, error) {
	rep := RunReport{Key: run.Key, Label: run.Label()}
	data, err := Scenario(lib, run)
	if err != nil {
		return nil, rep, err
	}
	// the server's and the CLI's one way from a scenario to an engine
	c, err := runs.Compile(data, runs.Limits{}, "")
	if err != nil {
		return nil, rep, fmt.Errorf("run %s: %w", run.Key, err)
	}
	s, err := c.Engine()
	if err != nil {
		return nil, rep, fmt.Errorf("run %s: %w", run.Key, err)
	}
	out := NewOutcome(nil, nil)
	ob := &observer{s: s, run: run, out: out, names: map[sim.Metric]string{}}
	for _, spec := range run.Series {
		name, _, _ := strings.Cut(spec, "@")
		if m, ok := s.MetricID(name); ok {
			ob.names[m] = name
		}
	}
	if len(ob.names) > 0 {
		s.Subscribe(ob)
	}
	t0 := time.Now()
	if err := runs.Drive(s, ctxStepper{ctx}); err != nil {
		return nil, rep, fmt.Errorf("run %s: %w", run.Key, err)
	}
	if err := ctx.Err(); err != nil {
		return nil, rep, err
	}
	wall := time.Since(t0)
	res := s.Result()
	out.Summary = report.Summarize(res, nil, wall)
	out.Flows = res.Flows
	rep.SimSeconds = out.Summary.SimSeconds
	rep.WallSeconds = wall.Seconds()
	return out, rep, nil
}

// ErrNoRuns is returned for an empty selection.
var ErrNoRuns = errors.New("repro: nothing to run")

// ctxStepper drives a reproduction's run with runs.Drive, the loop of the
// server's and the CLI's runs: it stops when ctx is cancelled.
type ctxStepper struct{ ctx context.Context }

func (c ctxStepper) Before(_ *sim.Sim, proposed sim.Time) (sim.Time, bool) {
	return proposed, c.ctx.Err() != nil
}

// Wait is never called: Before never holds a run back.
func (ctxStepper) Wait() {}

func (ctxStepper) After(*sim.Sim) {}
