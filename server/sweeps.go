package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"

	"cclab/scenarios"
	"cclab/scenarios/sweep"
	"cclab/server/runs"
	"cclab/sim/report"
	"cclab/store"
)

// Sweeps: a scenario run over a grid of parameter values and a set of
// seeds. Each (point, seed) is an ordinary run, submitted to the run
// manager by the sweep's driver a few at a time (so that a sweep neither
// floods the queue nor starves other users' runs), linked in the store. A
// driver runs while its sweep is running; a server that stops leaves its
// sweeps running in the database, and the next start resumes them: runs
// the stop interrupted are run again (their interrupted record deleted, so
// nothing is stored twice).

// sweeps holds the drivers of the running sweeps and the metrics of
// finished runs (immutable once read).
type sweeps struct {
	mu      sync.Mutex
	drivers map[string]*sweepDriver
	closed  bool
	metrics sync.Map // run id -> map[string]float64
	nCached int      // entries in metrics (under mu), to bound it
}

type sweepDriver struct {
	cancel context.CancelFunc
	done   chan struct{}
}

// maxCachedMetrics bounds the finished runs' metrics kept in memory.
const maxCachedMetrics = 100_000

// start runs fn as the driver of sweep id unless one runs or the server
// is stopping.
func (w *sweeps) start(id string, fn func(ctx context.Context)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed || w.drivers[id] != nil {
		return
	}
	if w.drivers == nil {
		w.drivers = map[string]*sweepDriver{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	d := &sweepDriver{cancel: cancel, done: make(chan struct{})}
	w.drivers[id] = d
	go func() {
		defer close(d.done)
		fn(ctx)
		w.mu.Lock()
		if w.drivers[id] == d {
			delete(w.drivers, id)
		}
		w.mu.Unlock()
	}()
}

// stop stops sweep id's driver and waits for it.
func (w *sweeps) stop(id string) {
	w.mu.Lock()
	d := w.drivers[id]
	w.mu.Unlock()
	if d != nil {
		d.cancel()
		<-d.done
	}
}

// stopAll stops every driver (the server is shutting down).
func (w *sweeps) stopAll() {
	w.mu.Lock()
	w.closed = true
	ds := make([]*sweepDriver, 0, len(w.drivers))
	for _, d := range w.drivers {
		ds = append(ds, d)
	}
	w.mu.Unlock()
	for _, d := range ds {
		d.cancel()
		<-d.done
	}
}

// runMetrics returns a finished run's metrics from its summary.json (read
// once: a finished run does not change).
func (w *sweeps) runMetrics(ctx context.Context, db *store.DB, run string) map[string]float64 {
	if v, ok := w.metrics.Load(run); ok {
		return v.(map[string]float64)
	}
	summary, err := db.RunSummary(ctx, run)
	if err != nil || summary == nil {
		return nil
	}
	var sum report.Summary
	if err := json.Unmarshal(summary, &sum); err != nil {
		return nil
	}
	m := sweep.Extract(&sum)
	w.mu.Lock()
	if w.nCached >= maxCachedMetrics {
		w.metrics.Clear()
		w.nCached = 0
	}
	w.nCached++
	w.mu.Unlock()
	w.metrics.Store(run, m)
	return m
}

// runSweepRequest is POST /api/sweeps' body.
type runSweepRequest struct {
	ScenarioID string          `json:"scenarioId"`
	Scenario   json.RawMessage `json:"scenario"`
	Name       string          `json:"name"`
	Axes       []sweep.Axis    `json:"axes"`
	Grid       []string        `json:"grid"`
	Seeds      json.RawMessage `json:"seeds"`
}

// spec reads the grid (axes, or grid strings as the CLI's --grid) and the
// seeds (a list, or a string as the CLI's --seeds).
func (req *runSweepRequest) spec() (sweep.Spec, error) {
	var sp sweep.Spec
	switch {
	case len(req.Axes) > 0 && len(req.Grid) > 0:
		return sp, errorf(http.StatusUnprocessableEntity, "grid", `give "axes" or "grid", not both`)
	case len(req.Grid) > 0:
		for i, g := range req.Grid {
			a, err := sweep.ParseGrid(g)
			if err != nil {
				return sp, errorf(http.StatusUnprocessableEntity, fmt.Sprintf("grid[%d]", i), "%v", err)
			}
			sp.Axes = append(sp.Axes, a)
		}
	default:
		sp.Axes = req.Axes
	}
	raw := strings.TrimSpace(string(req.Seeds))
	switch {
	case raw == "" || raw == "null":
		sp.Seeds = []uint64{1}
	case strings.HasPrefix(raw, `"`):
		var str string
		if err := json.Unmarshal(req.Seeds, &str); err != nil {
			return sp, errorf(http.StatusUnprocessableEntity, "seeds", "%v", err)
		}
		seeds, err := sweep.ParseSeeds(str)
		if err != nil {
			return sp, errorf(http.StatusUnprocessableEntity, "seeds", "%v", err)
		}
		sp.Seeds = seeds
	default:
		if err := json.Unmarshal(req.Seeds, &sp.Seeds); err != nil {
			return sp, errorf(http.StatusUnprocessableEntity, "seeds", `want a list of seeds (integers >= 1) or a string such as "1-5", got %s`, raw)
		}
	}
	if err := sp.Validate(); err != nil {
		return sp, invalid(err, "")
	}
	return sp, nil
}

func (s *Server) handleCreateSweep(w http.ResponseWriter, r *http.Request) {
	var req runSweepRequest
	if err := decodeBody(w, r, s.cfg.MaxBody, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	sw, err := s.createSweep(r, &req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"id": sw.ID, "status": sw.Status, "links": sweepLinks(sw.ID)})
}

// createSweep checks a sweep request (the scenario, the grid, every point's
// scenario, the limits) and, when all is well, stores the sweep and starts
// its driver: nothing runs unless the whole grid is valid.
func (s *Server) createSweep(r *http.Request, req *runSweepRequest) (*store.Sweep, error) {
	id := who(r)
	sp, err := req.spec()
	if err != nil {
		return nil, err
	}
	if n := sp.Runs(); n > s.cfg.MaxSweepRuns {
		return nil, limitError(http.StatusUnprocessableEntity, "max-sweep-runs", "axes",
			"the sweep has %d runs (%d points × %d seeds), more than this server's limit of %d (max-sweep-runs): use fewer values or seeds",
			n, n/len(sp.Seeds), len(sp.Seeds), s.cfg.MaxSweepRuns)
	}
	if !id.instructor {
		if n := s.ownerSweeps(r.Context(), id.owner); n >= s.cfg.MaxOwnerSweeps {
			return nil, limitError(http.StatusTooManyRequests, "max-owner-sweeps", "",
				"you already have %d sweeps running, this server's limit per person (max-owner-sweeps); wait for one to finish or cancel one", n)
		}
	}
	// the base scenario, stored or inline, as a run request names it
	doc, scenarioID, name, err := s.sweepScenario(r, req)
	if err != nil {
		return nil, err
	}
	// every point's scenario must be valid and within the run limits
	// before anything runs (seeds cannot make a valid scenario invalid)
	var work float64
	points := sp.Points()
	for _, p := range points {
		pdoc, err := sweep.Apply(doc, sp.Axes, p, sp.Seeds[0])
		if err == nil {
			var c *runs.Compiled
			if c, err = s.checkPoint(pdoc); err == nil {
				work += c.Cost.Packets * float64(len(sp.Seeds))
				err = s.checkPointExercise(r, scenarioID, c)
			}
		}
		var ae *apiError
		if errors.As(err, &ae) {
			// a locked field of a pinned exercise (classview.go)
			ae.Msg = fmt.Sprintf("point %s: %s", pointLabel(sp, p), ae.Msg)
			return nil, ae
		}
		if err != nil {
			return nil, pointError(sp, p, err)
		}
	}
	if !id.instructor {
		if _, err := s.limits.admitCreate(id.owner); err != nil {
			return nil, err
		}
		if _, err := s.limits.admitWork(id.owner, work); err != nil {
			return nil, err
		}
	}
	if req.Name != "" {
		name = req.Name
	} else {
		name += " sweep"
	}
	specJSON, err := json.Marshal(sp)
	if err != nil {
		return nil, err
	}
	sw := &store.Sweep{Name: name, ScenarioID: scenarioID, Scenario: doc, Spec: specJSON, Owner: id.owner}
	if err := s.db.CreateSweep(r.Context(), sw, len(points), len(sp.Seeds)); err != nil {
		return nil, err
	}
	s.log.Info("sweep started", "sweep", sw.ID, "scenario", scenarioID, "points", len(points), "seeds", len(sp.Seeds), "owner", id.owner)
	s.sweeps.start(sw.ID, func(ctx context.Context) { s.driveSweep(ctx, sw, sp) })
	return sw, nil
}

// checkPoint parses, builds and costs a point's scenario without building
// its engine.
func (s *Server) checkPoint(doc []byte) (*runs.Compiled, error) {
	c, err := runs.Check(doc, s.cfg.Limits, "", scenarios.BuildOptions{Policy: s.resolvePolicy})
	if err == nil && c.Refused != nil {
		err = c.Refused
	}
	return c, err
}

// checkPointExercise refuses a point that changes a locked field of the
// exercise its scenario is, or was edited from.
func (s *Server) checkPointExercise(r *http.Request, scenarioID string, c *runs.Compiled) error {
	return s.checkExercise(r, scenarioID, c.Canonical)
}

// pointError names the point whose scenario is wrong.
func pointError(sp sweep.Spec, p sweep.Point, err error) error {
	label := pointLabel(sp, p)
	var re *runs.Error
	if errors.As(err, &re) && re.Kind != runs.Invalid {
		// a run limit: its status and limit name, the point in the message
		ae := runError(re)
		ae.Msg = fmt.Sprintf("point %s: %s", label, ae.Msg)
		for i := range ae.Errors {
			ae.Errors[i].Error = fmt.Sprintf("point %s: %s", label, ae.Errors[i].Error)
		}
		return ae
	}
	// an invalid scenario: named by the axis whose value made it so
	field := "axes"
	if re != nil {
		for i, a := range sp.Axes {
			if f := re.Field(); f == a.Path || strings.HasPrefix(f, a.Path+".") {
				field = fmt.Sprintf("axes[%d].values", i)
			}
		}
	}
	return errorf(http.StatusUnprocessableEntity, field, "point %s: %s", label, err.Error())
}

// pointLabel is "path=value, path=value".
func pointLabel(sp sweep.Spec, p sweep.Point) string {
	parts := make([]string, len(sp.Axes))
	for i, a := range sp.Axes {
		parts[i] = a.Path + "=" + p.Values[i]
	}
	return strings.Join(parts, ", ")
}

// sweepScenario resolves the request's scenario: a stored or built-in one
// by id, or an inline document (stored, owned by the requester).
func (s *Server) sweepScenario(r *http.Request, req *runSweepRequest) (doc []byte, id, name string, err error) {
	hasInline := len(req.Scenario) > 0 && string(req.Scenario) != "null"
	switch {
	case req.ScenarioID != "" && hasInline:
		return nil, "", "", errorf(http.StatusUnprocessableEntity, "scenario", `give "scenarioId" or "scenario", not both`)
	case req.ScenarioID != "":
		sc, err := s.resolveScenario(r, req.ScenarioID)
		if errors.Is(err, store.ErrNotFound) || isStatus(err, http.StatusNotFound) {
			return nil, "", "", errorf(http.StatusUnprocessableEntity, "scenarioId", "no scenario %q", req.ScenarioID)
		}
		if err != nil {
			return nil, "", "", err
		}
		return sc.JSON, sc.ID, sc.Name, nil
	case hasInline:
		if err := checkJSON(req.Scenario); err != nil {
			return nil, "", "", err
		}
		sc, err := scenarios.Parse(req.Scenario)
		if err != nil {
			return nil, "", "", invalid(err, "scenario")
		}
		canon, err := sc.Canonical()
		if err != nil {
			return nil, "", "", invalid(err, "scenario")
		}
		st := &store.Scenario{Name: sc.Name, Description: sc.Description, JSON: canon}
		if _, err := s.db.PutScenario(r.Context(), st); err != nil {
			return nil, "", "", err
		}
		if err := s.db.Claim(r.Context(), store.OwnedScenario, st.ID, who(r).owner); err != nil {
			return nil, "", "", err
		}
		return canon, st.ID, sc.Name, nil
	}
	return nil, "", "", errorf(http.StatusUnprocessableEntity, "scenarioId", `want "scenarioId" (a stored or built-in scenario) or "scenario" (a scenario document)`)
}

// ownerSweeps counts an owner's running sweeps.
func (s *Server) ownerSweeps(ctx context.Context, owner string) int {
	list, err := s.db.ListSweeps(ctx, store.SweepRunning)
	if err != nil {
		s.log.Warn("listing sweeps", "err", err)
		return 0
	}
	n := 0
	for _, sw := range list {
		if sw.Owner == owner {
			n++
		}
	}
	return n
}

// resumeSweeps starts the drivers of the sweeps a previous process left
// running.
func (s *Server) resumeSweeps(ctx context.Context) error {
	list, err := s.db.ListSweeps(ctx, store.SweepRunning)
	if err != nil {
		return err
	}
	for i := range list {
		sw := &list[i]
		var sp sweep.Spec
		if err := json.Unmarshal(sw.Spec, &sp); err != nil {
			s.log.Error("a stored sweep's spec does not parse; cancelling it", "sweep", sw.ID, "err", err)
			if _, err := s.db.FinishSweep(ctx, sw.ID, store.SweepCancelled, time.Now()); err != nil {
				return err
			}
			continue
		}
		s.log.Info("resuming sweep", "sweep", sw.ID, "name", sw.Name)
		s.sweeps.start(sw.ID, func(ctx context.Context) { s.driveSweep(ctx, sw, sp) })
	}
	return nil
}

// remoteSweepWindow is how many runs of one sweep wait for workers at once.
const remoteSweepWindow = 64

// sweepTick is how often a driver looks at its runs.
const sweepTick = 100 * time.Millisecond

// driveSweep keeps up to the manager's concurrency of the sweep's runs
// queued or running, submitting the next ones as earlier ones end, until
// every (point, seed) has a finished run; it then marks the sweep done.
// Runs that ended interrupted (the server stopped) are run again.
func (s *Server) driveSweep(ctx context.Context, sw *store.Sweep, sp sweep.Spec) {
	log := s.log.With("sweep", sw.ID)
	bg := context.WithoutCancel(ctx)
	points := sp.Points()
	window := max(1, s.mgr.Config().Concurrency)
	if s.cfg.Dispatcher != nil {
		window = remoteSweepWindow // the workers' concurrency is not known here
	}
	tick := time.NewTicker(sweepTick)
	defer tick.Stop()
	for {
		rows, err := s.db.SweepRuns(ctx, sw.ID, false)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			log.Error("reading the sweep's runs", "err", err)
		}
		live := 0
		var waiting []store.SweepRun
		for _, x := range rows {
			switch {
			case x.Run == "", x.Status == store.StatusInterrupted:
				waiting = append(waiting, x)
			case !store.Terminal(x.Status) && x.Status != "":
				live++
			}
		}
		if err == nil && len(waiting) == 0 && live == 0 {
			if ok, err := s.db.FinishSweep(bg, sw.ID, store.SweepDone, time.Now()); err != nil {
				log.Error("marking the sweep done", "err", err)
			} else if ok {
				log.Info("sweep done", "runs", len(rows))
			}
			return
		}
		for _, x := range waiting {
			if live >= window || ctx.Err() != nil {
				break
			}
			retry, err := s.submitSweepRun(ctx, sw, sp, points[x.Point], x)
			if err != nil {
				if retry {
					break // the queue is full or the server is stopping: next tick
				}
				log.Error("a sweep run could not start", "point", x.Point, "seed", x.Seed, "err", err)
			}
			live++
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// submitSweepRun compiles and submits one (point, seed) of a sweep and
// links the run; a run it replaces (interrupted) is deleted. A scenario
// that no longer compiles is stored as a failed run, so the sweep goes on;
// retry reports a refusal that may pass later (a full queue).
func (s *Server) submitSweepRun(ctx context.Context, sw *store.Sweep, sp sweep.Spec, p sweep.Point, x store.SweepRun) (retry bool, err error) {
	bg := context.WithoutCancel(ctx)
	seed := sp.Seeds[x.Seed]
	name := fmt.Sprintf("%s [%s] seed %d", sw.Name, pointLabel(sp, p), seed)
	doc, err := sweep.Apply(sw.Scenario, sp.Axes, p, seed)
	var c *runs.Compiled
	if err == nil {
		c, err = s.compile(doc, "")
		if err == nil && c.Refused != nil {
			err = c.Refused
		}
	}
	var runID string
	if err != nil {
		if runID, err = s.failedRun(bg, sw, name, seed, doc, err); err != nil {
			return false, err
		}
	} else {
		if _, perr := s.db.PutScenario(bg, &store.Scenario{Name: sw.Name, JSON: sw.Scenario}); perr != nil {
			c.Release()
			return false, perr
		}
		run, serr := s.mgr.Submit(bg, runs.Submission{ScenarioID: sw.ScenarioID, Name: name, Compiled: c, Client: sw.Owner, Batch: true})
		if serr != nil {
			c.Release()
			var re *runs.Error
			if errors.As(serr, &re) && (re.Kind == runs.TooMany || re.Kind == runs.Unavailable) {
				return true, serr
			}
			if runID, err = s.failedRun(bg, sw, name, seed, doc, serr); err != nil {
				return false, err
			}
		} else {
			runID = run.ID
		}
	}
	if err := s.db.SetSweepRun(bg, sw.ID, x.Point, x.Seed, runID); err != nil {
		return false, err
	}
	if x.Run != "" && x.Run != runID {
		if err := s.db.DeleteRun(bg, x.Run); err != nil && !errors.Is(err, store.ErrNotFound) {
			s.log.Warn("deleting a sweep's interrupted run", "run", x.Run, "err", err)
		}
	}
	return false, nil
}

// failedRun stores a run that could not start, with why.
func (s *Server) failedRun(ctx context.Context, sw *store.Sweep, name string, seed uint64, doc []byte, cause error) (string, error) {
	rec := &store.Run{ScenarioID: sw.ScenarioID, Name: name, Params: json.RawMessage(`{}`), Seed: seed, CodeVersion: s.cfg.CodeVersion,
		Scenario: doc, Status: store.StatusQueued, Client: sw.Owner, BucketPS: 1}
	if err := s.db.CreateRun(ctx, rec); err != nil {
		return "", err
	}
	if err := s.db.FinishRun(ctx, rec.ID, store.Finish{Status: store.StatusFailed, Error: cause.Error(), At: time.Now()}); err != nil {
		return "", err
	}
	return rec.ID, nil
}

func sweepLinks(id string) map[string]string {
	return map[string]string{"self": "/api/sweeps/" + id, "page": "/sweeps/" + id,
		"csv": "/api/sweeps/" + id + "/sweep.csv", "json": "/api/sweeps/" + id + "/sweep.json"}
}

// sweepJSON is a sweep as the API shows it.
type sweepJSON struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	ScenarioID  string            `json:"scenarioId"`
	Status      string            `json:"status"`
	Mine        bool              `json:"mine"`
	CreatedAt   time.Time         `json:"createdAt"`
	FinishedAt  *time.Time        `json:"finishedAt"`
	Spec        sweep.Spec        `json:"spec"`
	RunsTotal   int               `json:"runsTotal"`
	RunsDone    int               `json:"runsDone"`    // finished with status done
	RunsFailed  int               `json:"runsFailed"`  // failed, cancelled or interrupted for good
	RunsLive    int               `json:"runsLive"`    // queued, running or paused
	RunsMissing int               `json:"runsMissing"` // deleted by retention
	Metrics     []sweep.Metric    `json:"metrics,omitempty"`
	Points      []sweepPointJSON  `json:"points,omitempty"`
	Links       map[string]string `json:"links"`
}

// sweepPointJSON is a point's result with each seed's run status.
type sweepPointJSON struct {
	sweep.PointResult
	Statuses []string `json:"statuses"` // per seed: a run status, "pending" or "missing"
}

// sweepView evaluates a sweep: per point, its runs, their statuses and the
// metrics over its finished runs.
func (s *Server) sweepView(r *http.Request, sw *store.Sweep, withPoints bool) (sweepJSON, error) {
	v := sweepJSON{ID: sw.ID, Name: sw.Name, ScenarioID: sw.ScenarioID, Status: sw.Status, Mine: mayChange(r, sw.Owner, "") == nil,
		CreatedAt: sw.Created.UTC(), FinishedAt: timePtr(sw.Finished), Links: sweepLinks(sw.ID)}
	if err := json.Unmarshal(sw.Spec, &v.Spec); err != nil {
		return v, fmt.Errorf("sweep %s: its spec: %w", sw.ID, err)
	}
	rows, err := s.db.SweepRuns(r.Context(), sw.ID, false)
	if err != nil {
		return v, err
	}
	points := v.Spec.Points()
	nSeeds := len(v.Spec.Seeds)
	ids := make([][]string, len(points))
	statuses := make([][]string, len(points))
	values := make([][]map[string]float64, len(points))
	for i := range points {
		ids[i] = make([]string, nSeeds)
		statuses[i] = make([]string, nSeeds)
		values[i] = make([]map[string]float64, nSeeds)
	}
	for _, x := range rows {
		if x.Point >= len(points) || x.Seed >= nSeeds {
			continue
		}
		v.RunsTotal++
		ids[x.Point][x.Seed] = x.Run
		st := x.Status
		switch {
		case x.Run == "":
			st = "pending"
		case st == "":
			st = "missing"
			v.RunsMissing++
		case st == store.StatusDone:
			v.RunsDone++
			if withPoints {
				values[x.Point][x.Seed] = s.sweeps.runMetrics(r.Context(), s.db, x.Run)
			}
		case store.Terminal(st):
			v.RunsFailed++
		default:
			v.RunsLive++
		}
		statuses[x.Point][x.Seed] = st
	}
	if withPoints {
		v.Metrics = sweep.Metrics()
		v.Points = make([]sweepPointJSON, len(points))
		for i, p := range points {
			v.Points[i] = sweepPointJSON{PointResult: sweep.Summarize(p, ids[i], values[i]), Statuses: statuses[i]}
		}
	}
	return v, nil
}

func (s *Server) handleListSweeps(w http.ResponseWriter, r *http.Request) {
	list, err := s.db.ListSweeps(r.Context(), "")
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]sweepJSON, 0, len(list))
	for i := range list {
		v, err := s.sweepView(r, &list[i], false)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		out = append(out, v)
	}
	writeJSON(w, http.StatusOK, map[string]any{"sweeps": out})
}

func (s *Server) sweepByID(r *http.Request) (*store.Sweep, error) {
	sw, err := s.db.GetSweep(r.Context(), chi.URLParam(r, "id"))
	if errors.Is(err, store.ErrNotFound) {
		return nil, errorf(http.StatusNotFound, "id", "no sweep %q", chi.URLParam(r, "id"))
	}
	return sw, err
}

func (s *Server) handleGetSweep(w http.ResponseWriter, r *http.Request) {
	sw, err := s.sweepByID(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeSweep(w, r, sw)
}

// writeSweep answers a sweep's view with its points' results.
func (s *Server) writeSweep(w http.ResponseWriter, r *http.Request, sw *store.Sweep) {
	v, err := s.sweepView(r, sw, true)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, v)
}

// ownSweep is the request's sweep when the requester may change it (its
// owner or an instructor).
func (s *Server) ownSweep(r *http.Request) (*store.Sweep, error) {
	sw, err := s.sweepByID(r)
	if err != nil {
		return nil, err
	}
	if err := mayChange(r, sw.Owner, "the sweep"); err != nil {
		return nil, err
	}
	return sw, nil
}

// handleCancelSweep stops submitting the sweep's runs and cancels those
// queued or running; its finished points stay.
func (s *Server) handleCancelSweep(w http.ResponseWriter, r *http.Request) {
	sw, err := s.ownSweep(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.cancelSweep(r.Context(), sw); err != nil {
		s.writeError(w, r, err)
		return
	}
	if sw, err = s.db.GetSweep(r.Context(), sw.ID); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.writeSweep(w, r, sw)
}

// cancelSweep stops a sweep's driver, marks it cancelled (if it was still
// running) and cancels its live runs, waiting for them to end.
func (s *Server) cancelSweep(ctx context.Context, sw *store.Sweep) error {
	s.sweeps.stop(sw.ID)
	if _, err := s.db.FinishSweep(ctx, sw.ID, store.SweepCancelled, time.Now()); err != nil {
		return err
	}
	rows, err := s.db.SweepRuns(ctx, sw.ID, false)
	if err != nil {
		return err
	}
	for _, x := range rows {
		if x.Run == "" || !s.mgr.Live(x.Run) {
			continue
		}
		if err := s.mgr.Cancel(ctx, x.Run); err != nil {
			var re *runs.Error
			if !errors.As(err, &re) || re.Kind != runs.Conflict {
				return err
			}
		}
		s.mgr.WaitEnded(ctx, x.Run, 10*time.Second)
	}
	return nil
}

// handleDeleteSweep cancels a sweep if it runs, then deletes it with its
// runs.
func (s *Server) handleDeleteSweep(w http.ResponseWriter, r *http.Request) {
	sw, err := s.ownSweep(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.cancelSweep(r.Context(), sw); err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.db.DeleteSweep(r.Context(), sw.ID); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// sweepResults loads and evaluates the request's sweep, answering the
// error itself (ok false).
func (s *Server) sweepResults(w http.ResponseWriter, r *http.Request) (sw *store.Sweep, v sweepJSON, points []sweep.PointResult, ok bool) {
	sw, err := s.sweepByID(r)
	if err == nil {
		v, err = s.sweepView(r, sw, true)
	}
	if err != nil {
		s.writeError(w, r, err)
		return nil, v, nil, false
	}
	points = make([]sweep.PointResult, len(v.Points))
	for i, p := range v.Points {
		points[i] = p.PointResult
	}
	return sw, v, points, true
}

// handleSweepCSV answers sweep.csv: one row per point, mean and 95%
// confidence interval of every metric over the point's finished runs.
func (s *Server) handleSweepCSV(w http.ResponseWriter, r *http.Request) {
	sw, v, points, ok := s.sweepResults(w, r)
	if !ok {
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", `attachment; filename="sweep-`+sw.ID+`.csv"`)
	if err := sweep.WriteCSV(w, v.Spec, points); err != nil {
		s.log.Warn("writing sweep.csv", "sweep", sw.ID, "err", err)
	}
}

// handleSweepJSON answers sweep.json: the spec, the metrics and the points,
// as `cclab sweep` writes it (runs named by id).
func (s *Server) handleSweepJSON(w http.ResponseWriter, r *http.Request) {
	sw, v, points, ok := s.sweepResults(w, r)
	if !ok {
		return
	}
	w.Header().Set("Content-Disposition", `attachment; filename="sweep-`+sw.ID+`.json"`)
	writeJSON(w, http.StatusOK, map[string]any{"spec": v.Spec, "metrics": v.Metrics, "points": points,
		"id": sw.ID, "name": sw.Name, "status": sw.Status, "scenarioId": sw.ScenarioID})
}
