package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"cclab/scenarios"
	"cclab/server/runs"
	"cclab/store"
)

// The run routes: /api/runs, a run's controls.

type runRequest struct {
	ScenarioID string          `json:"scenarioId"`
	Scenario   json.RawMessage `json:"scenario"`
	CC         json.RawMessage `json:"cc"`
	Seed       *uint64         `json:"seed"`
	Speed      json.RawMessage `json:"speed"`
	Label      string          `json:"label"` // the name a student typed (the class view shows it)
}

// parseSpeed reads "max" or simulated microseconds per wall second.
func parseSpeed(raw json.RawMessage) (float64, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return 0, nil
	}
	var str string
	if json.Unmarshal(raw, &str) == nil {
		if str == "max" {
			return 0, nil
		}
		if v, err := strconv.ParseFloat(str, 64); err == nil {
			raw = json.RawMessage(strconv.FormatFloat(v, 'g', -1, 64))
		} else {
			return 0, errorf(http.StatusUnprocessableEntity, "speed", `want "max" or simulated microseconds per wall second (a number > 0), got %q`, str)
		}
	}
	var v float64
	if err := json.Unmarshal(raw, &v); err != nil || !(v > 0) || math.IsInf(v, 0) || v > 1e12 {
		return 0, errorf(http.StatusUnprocessableEntity, "speed", `want "max" or simulated microseconds per wall second (a number in (0, 1e12]), got %s`, string(raw))
	}
	return v, nil
}

func (s *Server) handleCreateRun(w http.ResponseWriter, r *http.Request) {
	var req runRequest
	if err := decodeBody(w, r, s.cfg.MaxBody, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	id := who(r)
	label, err := cleanLabel(req.Label)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// the cheap limits first, so that a client hammering the route is
	// refused before its scenario is compiled: its runs in the queue, then
	// its creation rate (a compiled request is charged even when the
	// scenario turns out invalid; the token goes back only when a limit
	// refuses the run after that)
	undoCreate, undoWork := func() {}, func() {}
	if !id.instructor {
		if err := s.mgr.Admissible(id.owner, false); err != nil {
			s.writeError(w, r, err)
			return
		}
		if undoCreate, err = s.limits.admitCreate(id.owner); err != nil {
			s.writeError(w, r, err)
			return
		}
	}
	sub, err := s.prepareRun(r, &req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if id.instructor {
		sub.Batch = true // an instructor's runs count against the queue only
	} else if undoWork, err = s.limits.admitWork(id.owner, sub.Compiled.Cost.Packets); err != nil {
		undoCreate()
		sub.Compiled.Release()
		s.writeError(w, r, err)
		return
	}
	run, err := s.mgr.Submit(r.Context(), sub)
	if err != nil {
		undoCreate()
		undoWork()
		s.writeError(w, r, err)
		return
	}
	if label != "" {
		if err := s.db.SetRunLabel(r.Context(), run.ID, label); err != nil {
			s.log.Warn("labelling a run", "run", run.ID, "err", err)
		}
	}
	writeJSON(w, http.StatusCreated, map[string]any{"id": run.ID, "status": run.Status, "links": runLinks(run.ID, run.ScenarioID)})
}

// prepareRun validates a run request (the scenario, stored or inline, the
// overrides, the speed) and compiles the run's scenario once: the run
// executes what was checked here. An inline scenario is stored once the
// run is admitted.
func (s *Server) prepareRun(r *http.Request, req *runRequest) (runs.Submission, error) {
	sub := runs.Submission{Client: who(r).owner}
	speed, err := parseSpeed(req.Speed)
	if err != nil {
		return sub, err
	}
	sub.Speed = speed
	hasInline := len(req.Scenario) > 0 && string(req.Scenario) != "null"
	var doc []byte
	var prefix string
	var inline *store.Scenario
	switch {
	case req.ScenarioID != "" && hasInline:
		return sub, errorf(http.StatusUnprocessableEntity, "scenario", `give "scenarioId" or "scenario", not both`)
	case req.ScenarioID != "":
		sc, err := s.resolveScenario(r, req.ScenarioID)
		if errors.Is(err, store.ErrNotFound) || isStatus(err, http.StatusNotFound) {
			return sub, errorf(http.StatusUnprocessableEntity, "scenarioId", "no scenario %q", req.ScenarioID)
		}
		if err != nil {
			return sub, err
		}
		doc, sub.ScenarioID, sub.Name = sc.JSON, sc.ID, sc.Name
	case hasInline:
		if err := checkJSON(req.Scenario); err != nil {
			return sub, err
		}
		// the inline document's own problems are named under "scenario"
		sc, err := scenarios.Parse(req.Scenario)
		if err != nil {
			return sub, invalid(err, "scenario")
		}
		canon, err := sc.Canonical()
		if err != nil {
			return sub, invalid(err, "scenario")
		}
		inline = &store.Scenario{Name: sc.Name, Description: sc.Description, JSON: canon}
		doc, sub.ScenarioID, sub.Name, prefix = canon, store.ScenarioID(canon), sc.Name, "scenario"
	default:
		return sub, errorf(http.StatusUnprocessableEntity, "scenarioId", `want "scenarioId" (a stored or built-in scenario) or "scenario" (a scenario document)`)
	}
	if len(req.CC) > 0 && string(req.CC) != "null" {
		if doc, err = scenarios.ApplySets(doc, []string{"cc=" + string(req.CC)}); err != nil {
			return sub, invalid(err, "")
		}
	}
	if req.Seed != nil {
		if doc, err = scenarios.SetSeed(doc, *req.Seed); err != nil {
			return sub, invalid(err, "")
		}
	}
	c, err := s.compile(doc, "")
	if err != nil {
		return sub, overrideFields(asAPIError(err), prefix)
	}
	if c.Refused != nil {
		return sub, runError(c.Refused)
	}
	if err := s.checkExercise(r, sub.ScenarioID, c.Canonical); err != nil { // classview.go
		c.Release()
		return sub, err
	}
	if inline != nil {
		_, err := s.db.PutScenario(r.Context(), inline)
		if err == nil {
			err = s.db.Claim(r.Context(), store.OwnedScenario, inline.ID, sub.Client)
		}
		if err != nil {
			c.Release()
			return sub, err
		}
	}
	sub.Compiled = c
	return sub, nil
}

// overrideFields prefixes scenario fields with the place of the inline
// scenario in the request, except those the request's own "cc" and "seed"
// set.
func overrideFields(err error, prefix string) error {
	var ae *apiError
	if prefix == "" || !errors.As(err, &ae) {
		return err
	}
	for i, e := range ae.Errors {
		if e.Field == "cc" || strings.HasPrefix(e.Field, "cc.") || e.Field == "seed" {
			continue
		}
		if e.Field == "" {
			ae.Errors[i].Field = prefix
		} else {
			ae.Errors[i].Field = prefix + "." + e.Field
		}
	}
	ae.Field = ae.Errors[0].Field
	return ae
}

func isStatus(err error, status int) bool {
	var ae *apiError
	return errors.As(err, &ae) && ae.Status == status
}

func runLinks(id, scenarioID string) map[string]string {
	return map[string]string{
		"self": "/api/runs/" + id, "ws": "/ws/runs/" + id, "flows": "/api/runs/" + id + "/flows.csv",
		"series": "/api/runs/" + id + "/series.csv", "summary": "/api/runs/" + id + "/summary.json",
		"export": "/api/runs/" + id + "/export.json", "chart": "/api/runs/" + id + "/series?level=1",
		"page": "/r/" + id, "scenario": "/api/scenarios/" + scenarioID,
	}
}

// runJSON is a run as the API shows it.
type runJSON struct {
	ID              string            `json:"id"`
	ScenarioID      string            `json:"scenarioId"`
	Name            string            `json:"name"`
	Algorithm       string            `json:"algorithm"`
	Params          json.RawMessage   `json:"params"`
	Seed            uint64            `json:"seed"`
	CodeVersion     string            `json:"codeVersion"`
	Status          string            `json:"status"`
	Error           string            `json:"error,omitempty"`
	Pinned          bool              `json:"pinned"`
	Mine            bool              `json:"mine"` // the requester may change it (its owner, or an instructor)
	Speed           any               `json:"speed"`
	BucketNs        float64           `json:"bucketNs"`
	CreatedAt       time.Time         `json:"createdAt"`
	StartedAt       *time.Time        `json:"startedAt"`
	FinishedAt      *time.Time        `json:"finishedAt"`
	Progress        float64           `json:"progress"`
	SimNs           float64           `json:"simNs"`
	Events          uint64            `json:"events"`
	EventsPerSecond float64           `json:"eventsPerSecond"`
	WallSeconds     float64           `json:"wallSeconds"`
	FlowsFinished   *int              `json:"flowsFinished,omitempty"`
	FlowsTotal      *int              `json:"flowsTotal,omitempty"`
	Changes         []runs.Change     `json:"changes,omitempty"`
	Sweep           string            `json:"sweep,omitempty"` // the sweep the run belongs to (GET /api/runs/{id})
	Links           map[string]string `json:"links"`
	Scenario        json.RawMessage   `json:"scenario,omitempty"`
	Summary         json.RawMessage   `json:"summary,omitempty"`
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	u := t.UTC()
	return &u
}

// runView turns a stored run into its API form, with the live progress of
// a run that is running.
func (s *Server) runView(r *http.Request, run *store.Run) runJSON {
	v := runJSON{Mine: mayChange(r, run.Client, "") == nil, ID: run.ID, ScenarioID: run.ScenarioID, Name: run.Name, Algorithm: run.Algorithm,
		Params: run.Params, Seed: run.Seed, CodeVersion: run.CodeVersion, Status: run.Status, Error: run.Error,
		Pinned: run.Pinned, Speed: runs.SpeedJSON(run.Speed), BucketNs: float64(run.BucketPS) / 1e3,
		CreatedAt: run.CreatedAt.UTC(), StartedAt: timePtr(run.StartedAt), FinishedAt: timePtr(run.FinishedAt),
		Progress: run.Progress.Fraction, SimNs: float64(run.Progress.SimPS) / 1e3, Events: run.Progress.Events,
		WallSeconds: run.Progress.WallSeconds, Links: runLinks(run.ID, run.ScenarioID)}
	if len(v.Params) == 0 {
		v.Params = json.RawMessage("{}")
	}
	if !store.Terminal(run.Status) {
		if p, ok := s.mgr.LiveProgress(run.ID); ok {
			// the store has the final word on a run that ended
			if p.Status == store.StatusRunning || p.Status == store.StatusPaused {
				v.Status = p.Status
			}
			v.Progress, v.SimNs, v.Events, v.WallSeconds = p.Progress, p.SimNs, p.Events, p.WallSeconds
			v.FlowsFinished, v.FlowsTotal, v.Speed = &p.FlowsFinished, &p.FlowsTotal, p.Speed
		}
	}
	if v.WallSeconds > 0 {
		v.EventsPerSecond = float64(v.Events) / v.WallSeconds
	}
	return v
}

func (s *Server) getRun(r *http.Request) (*store.Run, error) {
	id := chi.URLParam(r, "id")
	run, err := s.db.GetRun(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errorf(http.StatusNotFound, "id", "no run %q", id)
	}
	return run, err
}

// ownRun is getRun for a request that changes the run: only its owner or
// an instructor may.
func (s *Server) ownRun(r *http.Request) (*store.Run, error) {
	run, err := s.getRun(r)
	if err != nil {
		return nil, err
	}
	if err := mayChange(r, run.Client, "run "+run.ID); err != nil {
		return nil, err
	}
	return run, nil
}

func (s *Server) handleGetRun(w http.ResponseWriter, r *http.Request) {
	run, err := s.getRun(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	v := s.runView(r, run)
	evs, err := s.db.RunEvents(r.Context(), run.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	for _, e := range evs {
		v.Changes = append(v.Changes, runs.ChangeOf(e))
	}
	v.Scenario = json.RawMessage(run.Scenario)
	v.Summary = run.Summary
	if v.Sweep, err = s.db.SweepOfRun(r.Context(), run.ID); err != nil {
		s.writeError(w, r, err)
		return
	}
	if v.Sweep != "" {
		v.Links["sweep"] = "/api/sweeps/" + v.Sweep
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) handleListRuns(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := store.RunFilter{ScenarioID: q.Get("scenario"), Algorithm: q.Get("algorithm"), Status: q.Get("status")}
	if full, ok := s.library[f.ScenarioID]; ok {
		f.ScenarioID = full
	}
	if f.Status != "" && !validStatus(f.Status) {
		s.writeError(w, r, errorf(http.StatusBadRequest, "status", "unknown status %q (queued, running, paused, done, failed, cancelled, interrupted)", f.Status))
		return
	}
	var err error
	if f.Limit, err = queryInt(q.Get("limit"), 100, 1, 1000); err != nil {
		s.writeError(w, r, errorf(http.StatusBadRequest, "limit", "%v", err))
		return
	}
	if f.Offset, err = queryInt(q.Get("offset"), 0, 0, math.MaxInt32); err != nil {
		s.writeError(w, r, errorf(http.StatusBadRequest, "offset", "%v", err))
		return
	}
	runs, err := s.db.ListRuns(r.Context(), f)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	total, err := s.db.CountRuns(r.Context(), store.RunFilter{ScenarioID: f.ScenarioID, Algorithm: f.Algorithm, Status: f.Status})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]runJSON, 0, len(runs))
	for i := range runs {
		out = append(out, s.runView(r, &runs[i]))
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": out, "total": total, "limit": f.Limit, "offset": f.Offset})
}

func validStatus(s string) bool {
	switch s {
	case store.StatusQueued, store.StatusRunning, store.StatusPaused, store.StatusDone, store.StatusFailed,
		store.StatusCancelled, store.StatusInterrupted:
		return true
	}
	return false
}

func queryInt(s string, def, lo, hi int) (int, error) {
	if s == "" {
		return def, nil
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < lo || v > hi {
		return 0, fmt.Errorf("want a whole number in [%d, %d], got %q", lo, hi, s)
	}
	return v, nil
}

func (s *Server) handleDeleteRun(w http.ResponseWriter, r *http.Request) {
	run, err := s.ownRun(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !store.Terminal(run.Status) {
		s.writeError(w, r, errorf(http.StatusConflict, "status", "the run is %s; cancel it first", run.Status))
		return
	}
	if err := s.db.DeleteRun(r.Context(), run.ID); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// handleControl answers pause, resume and cancel.
func (s *Server) handleControl(do func(*runs.Manager, context.Context, string) error, cancel bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		run, err := s.ownRun(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if err := do(s.mgr, r.Context(), run.ID); err != nil {
			s.writeError(w, r, err)
			return
		}
		if cancel {
			// the run ends at its next event boundary; answer once it has,
			// so the answer shows its final status
			s.mgr.WaitEnded(r.Context(), run.ID, 10*time.Second)
		}
		if run, err = s.db.GetRun(r.Context(), run.ID); err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, s.runView(r, run))
	}
}

func (s *Server) handleSpeed(w http.ResponseWriter, r *http.Request) {
	run, err := s.ownRun(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req struct {
		Speed json.RawMessage `json:"speed"`
	}
	if err := decodeBody(w, r, s.cfg.MaxBody, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	if len(req.Speed) == 0 || string(req.Speed) == "null" {
		s.writeError(w, r, errorf(http.StatusUnprocessableEntity, "speed", `want "speed": "max" or simulated microseconds per wall second`))
		return
	}
	speed, err := parseSpeed(req.Speed)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.mgr.SetSpeed(r.Context(), run.ID, speed); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"speed": runs.SpeedJSON(speed)})
}

func (s *Server) handleParams(w http.ResponseWriter, r *http.Request) {
	run, err := s.ownRun(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	body, err := readBody(w, r, s.cfg.MaxBody)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var probe map[string]json.RawMessage
	if err := decodeStrict(body, &probe); err != nil {
		s.writeError(w, r, err)
		return
	}
	if len(probe) == 0 {
		s.writeError(w, r, errorf(http.StatusUnprocessableEntity, "", "want an object of parameter values, e.g. {\"wr\": 100}"))
		return
	}
	if err := s.checkExerciseParams(r, run.ScenarioID, probe); err != nil { // classview.go
		s.writeError(w, r, err)
		return
	}
	change, err := s.mgr.SetParams(r.Context(), run.ID, body)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, change)
}

func (s *Server) handlePin(pin bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		run, err := s.ownRun(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if err := s.db.SetPinned(r.Context(), run.ID, pin); err != nil {
			s.writeError(w, r, err)
			return
		}
		run.Pinned = pin
		writeJSON(w, http.StatusOK, s.runView(r, run))
	}
}
