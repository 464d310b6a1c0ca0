package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"cclab/scenarios/repro"
	"cclab/server/runs"
	"cclab/sim/report"
	"cclab/store"
	"cclab/web"
)

// Reproductions: an experiment of `cclab reproduce` run in the lab. Its
// runs are ordinary runs (each with a link); the rows and figures are
// evaluated from what the store holds of them, by the same code as the
// CLI's report.

// reproState is an experiment with its latest reproduction, evaluated.
type reproState struct {
	exp  *repro.Experiment
	rec  *store.Reproduction // nil: never run here
	runs []reproRun
	// done counts finished runs; complete: every run done; broken: one
	// failed, was cancelled, interrupted or deleted.
	done             int
	complete, broken bool
	outcomes         repro.Outcomes
	report           *repro.ExperimentReport // rows when complete; figures from what has finished
}

type reproRun struct {
	Key    string `json:"key"`
	Label  string `json:"label"`
	Run    string `json:"run"`
	Status string `json:"status"` // a run status, or "missing"
}

// reproState loads and evaluates an experiment's latest reproduction (or
// the given one).
func (s *Server) reproState(ctx context.Context, exp *repro.Experiment, rec *store.Reproduction) (*reproState, error) {
	st := &reproState{exp: exp, rec: rec, outcomes: repro.Outcomes{}}
	if computedOnly(exp) {
		// a model's numbers, no simulation: deterministic, so evaluated once
		// per server (qcn-ap and qcn-rcp take a few hundred ms)
		eval, _ := s.computed.LoadOrStore(exp.ID, sync.OnceValue(func() *repro.ExperimentReport {
			er := repro.Evaluate(exp, repro.Outcomes{})
			return &er
		}))
		st.report, st.complete = eval.(func() *repro.ExperimentReport)(), true
		return st, nil
	}
	if rec == nil {
		r, err := s.db.LatestReproduction(ctx, exp.ID)
		if errors.Is(err, store.ErrNotFound) {
			return st, nil
		}
		if err != nil {
			return nil, err
		}
		st.rec = r
	}
	byKey := map[string]repro.Run{}
	for _, r := range exp.RunsFor(st.rec.Quick) {
		byKey[r.Key] = r
	}
	for _, x := range st.rec.Runs {
		def, known := byKey[x.Key]
		if !known {
			st.broken = true // recorded by another version of the experiment
		}
		rr := reproRun{Key: x.Key, Label: def.Label(), Run: x.Run}
		run, err := s.db.GetRun(ctx, x.Run)
		switch {
		case errors.Is(err, store.ErrNotFound):
			rr.Status = "missing"
			st.broken = true
		case err != nil:
			return nil, err
		default:
			rr.Status = run.Status
			switch run.Status {
			case store.StatusDone:
				o, err := s.outcome(ctx, run, def)
				if err != nil {
					return nil, err
				}
				st.outcomes[x.Key] = o
				st.done++
			case store.StatusFailed, store.StatusCancelled, store.StatusInterrupted:
				st.broken = true
			}
		}
		st.runs = append(st.runs, rr)
	}
	st.complete = st.done == len(st.rec.Runs) && len(byKey) == len(st.rec.Runs)
	er := repro.ExperimentReport{Seed: exp.Seed, ID: exp.ID, Title: exp.Title, Claim: exp.Claim, Reading: exp.Reading}
	if st.complete {
		er = repro.Evaluate(exp, st.outcomes)
	} else if exp.Figures != nil && st.done > 0 {
		er.Figures = exp.Figures(st.outcomes)
	}
	st.report = &er
	return st, nil
}

// computedOnly says whether an experiment evaluates a model with no runs.
func computedOnly(exp *repro.Experiment) bool {
	return len(exp.RunsFor(false)) == 0 && len(exp.RunsFor(true)) == 0
}

// outcome reads what an evaluation needs of a finished run: its summary,
// its flows and, at full resolution, the series the experiment asks for.
func (s *Server) outcome(ctx context.Context, run *store.Run, def repro.Run) (*repro.Outcome, error) {
	var sum report.Summary
	if err := json.Unmarshal(run.Summary, &sum); err != nil {
		return nil, fmt.Errorf("run %s: summary: %w", run.ID, err)
	}
	flows, err := s.db.Flows(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	o := repro.NewOutcome(&sum, flows)
	var metrics []string
	for _, spec := range def.Series {
		m, _, _ := strings.Cut(spec, "@")
		metrics = append(metrics, m)
	}
	if len(metrics) == 0 {
		return o, nil
	}
	series, err := s.db.Series(ctx, run.ID, store.SeriesQuery{Level: 0, Metrics: metrics})
	if err != nil {
		return nil, err
	}
	for _, x := range series {
		if !def.Wants(x.Metric, x.Entity) {
			continue
		}
		for i, t := range x.T {
			o.AddSample(x.Metric, x.Entity, float64(t)/1e12, x.V[i])
		}
	}
	return o, nil
}

// reproJSON is an experiment and its latest reproduction as the API
// answers them.
func (st *reproState) json() map[string]any {
	out := map[string]any{
		"id": st.exp.ID, "seed": st.exp.Seed, "title": st.exp.Title, "claim": st.exp.Claim,
		"reading": st.exp.Reading, "quick": st.exp.Quick, "runs": len(st.exp.Runs()),
		"reproduction": nil,
	}
	if computedOnly(st.exp) {
		out["computed"] = true
		out["rows"] = st.report.Rows
		return out
	}
	if st.rec == nil {
		return out
	}
	rows := []repro.Row{}
	var figs []string
	if st.report != nil {
		if st.report.Rows != nil {
			rows = st.report.Rows
		}
		for _, f := range st.report.Figures {
			figs = append(figs, "/api/reproductions/"+st.rec.ID+"/figures/"+f.Name+".svg")
		}
	}
	status := "running"
	switch {
	case st.complete:
		status = "done"
	case st.broken:
		status = "incomplete"
	}
	out["reproduction"] = map[string]any{
		"id": st.rec.ID, "created": st.rec.Created.UTC().Format(time.RFC3339), "quick": st.rec.Quick,
		"status": status, "done": st.done, "total": len(st.rec.Runs), "runs": st.runs,
		"rows": rows, "counts": repro.Count(rows), "figures": figs,
	}
	return out
}

func (s *Server) handleListReproductions(w http.ResponseWriter, r *http.Request) {
	var out []map[string]any
	for _, e := range repro.Experiments() {
		st, err := s.reproState(r.Context(), e, nil)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		out = append(out, st.json())
	}
	writeJSON(w, http.StatusOK, map[string]any{"experiments": out})
}

type reproRequest struct {
	Experiment string `json:"experiment"`
	Quick      bool   `json:"quick"`
}

func (s *Server) handleCreateReproduction(w http.ResponseWriter, r *http.Request) {
	var req reproRequest
	if err := decodeBody(w, r, s.cfg.MaxBody, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	st, created, err := s.startReproduction(r, req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	status := http.StatusCreated
	if !created {
		status = http.StatusOK
	}
	writeJSON(w, status, st.json())
}

// startReproduction submits an experiment's runs, unless its latest
// reproduction is still in progress: then that one is answered (created
// false), so that a class pressing "run it" at once starts it once.
func (s *Server) startReproduction(r *http.Request, req reproRequest) (*reproState, bool, error) {
	exp := repro.Lookup(req.Experiment)
	if exp == nil {
		var ids []string
		for _, e := range repro.Experiments() {
			ids = append(ids, e.ID)
		}
		return nil, false, errorf(http.StatusUnprocessableEntity, "experiment", "no experiment %q; the experiments: %s",
			req.Experiment, strings.Join(ids, ", "))
	}
	s.reproMu.Lock()
	defer s.reproMu.Unlock()
	cur, err := s.reproState(r.Context(), exp, nil)
	if err != nil {
		return nil, false, err
	}
	if computedOnly(exp) {
		return nil, false, errorf(http.StatusUnprocessableEntity, "experiment", "%s has no runs: its rows are computed from the model (GET /api/reproductions)", exp.ID)
	}
	if cur.rec != nil && !cur.complete && !cur.broken {
		return cur, false, nil
	}
	lib := repro.LibrarySources()
	defs := exp.RunsFor(req.Quick)
	compiled := make([]*runs.Compiled, len(defs))
	release := func() {
		for _, c := range compiled {
			if c != nil {
				c.Release()
			}
		}
	}
	for i, d := range defs {
		doc, err := repro.Scenario(lib, d)
		if err != nil {
			release()
			return nil, false, err
		}
		c, err := s.compile(doc, "")
		if err == nil && c.Refused != nil {
			err = c.Refused
		}
		if err != nil {
			release()
			e := asAPIError(err)
			var re *runs.Error
			if errors.As(err, &re) {
				e = runError(re)
			}
			return nil, false, fmt.Errorf("run %s (%s): %w", d.Key, d.Label(), e)
		}
		compiled[i] = c
	}
	rec := &store.Reproduction{Experiment: exp.ID, Quick: req.Quick}
	for i, d := range defs {
		c := compiled[i]
		name := d.Scenario + " " + d.Key
		sc := &store.Scenario{Name: name, Description: exp.Title, JSON: c.Canonical}
		sc.ID = store.ScenarioID(c.Canonical)
		if _, err := s.db.PutScenario(r.Context(), sc); err != nil {
			release()
			return nil, false, err
		}
		run, err := s.mgr.Submit(r.Context(), runs.Submission{ScenarioID: sc.ID, Name: name, Compiled: c,
			Client: who(r).owner, Batch: true})
		compiled[i] = nil // the manager owns it now (or has released it)
		if err != nil {
			release()
			// all or nothing: cancel the runs this request queued
			for _, x := range rec.Runs {
				if cerr := s.mgr.Cancel(context.WithoutCancel(r.Context()), x.Run); cerr != nil {
					s.log.Warn("cancelling a reproduction's run", "run", x.Run, "err", cerr)
				}
			}
			return nil, false, fmt.Errorf("run %s: %w", d.Key, err)
		}
		rec.Runs = append(rec.Runs, store.ReproductionRun{Key: d.Key, Run: run.ID})
	}
	if err := s.db.CreateReproduction(r.Context(), rec); err != nil {
		return nil, false, err
	}
	st, err := s.reproState(r.Context(), exp, rec)
	return st, true, err
}

func (s *Server) reproByID(r *http.Request) (*reproState, error) {
	rec, err := s.db.GetReproduction(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return nil, err
	}
	exp := repro.Lookup(rec.Experiment)
	if exp == nil {
		return nil, errorf(http.StatusNotFound, "", "reproduction %s is of an experiment this server does not have (%s)", rec.ID, rec.Experiment)
	}
	return s.reproState(r.Context(), exp, rec)
}

func (s *Server) handleGetReproduction(w http.ResponseWriter, r *http.Request) {
	st, err := s.reproByID(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, st.json())
}

func (s *Server) handleReproductionFigure(w http.ResponseWriter, r *http.Request) {
	st, err := s.reproByID(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	name := strings.TrimSuffix(chi.URLParam(r, "name"), ".svg")
	for _, f := range st.report.Figures {
		if f.Name == name {
			w.Header().Set("Content-Type", "image/svg+xml")
			w.Header().Set("Cache-Control", "no-store")
			w.Write(f.SVG())
			return
		}
	}
	s.writeError(w, r, errorf(http.StatusNotFound, "", "no figure %q (yet) in reproduction %s", name, st.rec.ID))
}

// The page.

func (st *reproState) view() web.ReproSection {
	v := web.ReproSection{ID: st.exp.ID, Title: st.exp.Title, Claim: st.exp.Claim, Reading: st.exp.Reading,
		QuickOnly: st.exp.Quick, Runs: len(st.exp.Runs())}
	if st.exp.QuickRuns != nil {
		v.QuickRuns = len(st.exp.QuickRuns())
	} else {
		v.QuickRuns = v.Runs
	}
	if computedOnly(st.exp) {
		v.Computed = true
		v.Rows, v.Counts = rowViews(st.report.Rows)
		return v
	}
	if st.rec == nil {
		return v
	}
	v.Reproduction = st.rec.ID
	v.Created = st.rec.Created.UTC().Format("2006-01-02 15:04 UTC")
	v.Quick = st.rec.Quick
	v.Done, v.Total = st.done, len(st.rec.Runs)
	v.Complete, v.Broken = st.complete, st.broken
	for _, x := range st.runs {
		v.RunList = append(v.RunList, web.ReproRun{Key: x.Key, Label: x.Label, ID: x.Run, Status: x.Status})
	}
	if st.report != nil {
		for _, f := range st.report.Figures {
			v.Figures = append(v.Figures, web.ReproFigure{Title: f.Title,
				URL: "/api/reproductions/" + st.rec.ID + "/figures/" + f.Name + ".svg?done=" + fmt.Sprint(st.done)})
		}
		v.Rows, v.Counts = rowViews(st.report.Rows)
	}
	return v
}

// rowViews is the page's form of report rows, and their counts by verdict.
func rowViews(rows []repro.Row) ([]web.ReproRow, string) {
	var out []web.ReproRow
	for _, row := range rows {
		d := ""
		if row.Diff != nil {
			d = *row.Diff
		}
		out = append(out, web.ReproRow{Metric: row.Metric, Paper: row.Paper.String(), Ours: row.Ours.String(),
			Diff: d, Verdict: string(row.Verdict), Rule: row.Rule, Note: row.Note})
	}
	if len(rows) == 0 {
		return nil, ""
	}
	c := repro.Count(rows)
	counts := fmt.Sprintf("%d reproduced, %d direction only, %d not reproduced", c.Reproduced, c.DirectionOnly, c.NotReproduced)
	if c.NotComparable > 0 {
		counts += fmt.Sprintf(", %d not comparable", c.NotComparable)
	}
	return out, counts
}

func (s *Server) handleReproductionsPage(w http.ResponseWriter, r *http.Request) {
	var p web.ReproPage
	all := repro.Experiments()
	for _, seed := range repro.Seeds {
		sv := web.ReproSeed{ID: seed.ID, Name: seed.Name, Title: seed.Title}
		for _, e := range all {
			if e.Seed != seed.ID {
				continue
			}
			st, err := s.reproState(r.Context(), e, nil)
			if err != nil {
				s.pageError(w, r, err)
				return
			}
			sv.Sections = append(sv.Sections, st.view())
		}
		p.Seeds = append(p.Seeds, sv)
	}
	s.render(w, r, web.ReproductionsPage(p))
}

// handleReproSection renders one experiment's section (htmx polls it while
// its runs are in progress).
func (s *Server) handleReproSection(w http.ResponseWriter, r *http.Request) {
	exp := repro.Lookup(chi.URLParam(r, "experiment"))
	if exp == nil {
		s.pageError(w, r, errorf(http.StatusNotFound, "", "no experiment %q", chi.URLParam(r, "experiment")))
		return
	}
	st, err := s.reproState(r.Context(), exp, nil)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	s.render(w, r, web.ReproSectionView(st.view()))
}

// handleReproRun is the page's "run it" form: it starts the reproduction
// and answers the section (htmx) or goes back to the page.
func (s *Server) handleReproRun(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		s.pageError(w, r, errorf(http.StatusBadRequest, "", "bad form: %v", err))
		return
	}
	id := chi.URLParam(r, "experiment")
	_, _, err := s.startReproduction(r, reproRequest{Experiment: id, Quick: r.PostForm.Get("set") != "full"})
	if err != nil {
		if r.Header.Get("HX-Request") != "" {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.WriteHeader(http.StatusOK) // htmx swaps only 2xx answers: show the error in place
			fmt.Fprintf(w, `<section class="repro-section" id="repro-%s"><p class="error" role="alert">%s</p></section>`,
				html.EscapeString(id), html.EscapeString(err.Error()))
			return
		}
		s.pageError(w, r, err)
		return
	}
	if r.Header.Get("HX-Request") != "" {
		s.handleReproSection(w, r)
		return
	}
	http.Redirect(w, r, "/reproductions#repro-"+id, http.StatusSeeOther)
}
