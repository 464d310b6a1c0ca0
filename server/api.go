package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"cclab/cc"
	"cclab/scenarios"
	"cclab/sim"
	"cclab/sim/report"
	"cclab/store"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

func (s *Server) routes() chi.Router {
	r := chi.NewRouter()
	r.Use(s.recoverer, s.logRequests)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, errorf(http.StatusNotFound, "", "no route %s %s (see /api/openapi.json)", r.Method, r.URL.Path))
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		s.writeError(w, r, errorf(http.StatusMethodNotAllowed, "", "%s is not allowed on %s", r.Method, r.URL.Path))
	})
	s.pageRoutes(r)
	r.Route("/api", func(r chi.Router) {
		r.Get("/health", s.handleHealth)
		r.Get("/openapi.json", s.handleOpenAPI)
		r.Get("/algorithms", s.handleAlgorithms)
		r.Get("/vocabulary", s.handleVocabulary)
		r.Get("/scenarios", s.handleListScenarios)
		r.Post("/scenarios", s.handleCreateScenario)
		r.Post("/scenarios/validate", s.handleValidateScenario)
		r.Get("/scenarios/{id}", s.handleGetScenario)
		r.Delete("/scenarios/{id}", s.handleDeleteScenario)
		r.Post("/runs", s.handleCreateRun)
		r.Get("/runs", s.handleListRuns)
		r.Get("/runs/{id}", s.handleGetRun)
		r.Delete("/runs/{id}", s.handleDeleteRun)
		r.Post("/runs/{id}/cancel", s.handleControl(opCancel))
		r.Post("/runs/{id}/pause", s.handleControl(opPause))
		r.Post("/runs/{id}/resume", s.handleControl(opResume))
		r.Post("/runs/{id}/speed", s.handleSpeed)
		r.Post("/runs/{id}/params", s.handleParams)
		r.Post("/runs/{id}/pin", s.handlePin(true))
		r.Post("/runs/{id}/unpin", s.handlePin(false))
		r.Get("/runs/{id}/flows.csv", s.handleFlowsCSV)
		r.Get("/runs/{id}/series.csv", s.handleSeriesCSV)
		r.Get("/runs/{id}/series", s.handleSeriesJSON)
		r.Get("/runs/{id}/summary.json", s.handleSummary)
		r.Get("/runs/{id}/export.json", s.handleExport)
		r.Get("/compare", s.handleCompare)
	})
	r.Get("/ws/runs/{id}", s.handleWS)
	return r
}

// recoverer turns a panic in a handler into a logged 500: a bug, never a
// crashed server.
func (s *Server) recoverer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.writeError(w, r, fmt.Errorf("panic: %v", v))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Hijack lets the WebSocket upgrade take the connection over.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, fmt.Errorf("the connection cannot be taken over")
	}
	if w.status == 0 {
		w.status = http.StatusSwitchingProtocols
	}
	return h.Hijack()
}

func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t0 := time.Now()
		sw := &statusWriter{ResponseWriter: w}
		next.ServeHTTP(sw, r)
		if sw.status == 0 {
			sw.status = http.StatusOK
		}
		level := slog.LevelDebug
		if sw.status >= 500 {
			level = slog.LevelError
		} else if sw.status >= 400 {
			level = slog.LevelInfo
		}
		s.log.Log(r.Context(), level, "request", "method", r.Method, "path", r.URL.Path,
			"status", sw.status, "ms", float64(time.Since(t0).Microseconds())/1e3)
	})
}

func (s *Server) handleHealth(w http.ResponseWriter, r *http.Request) {
	running, queued := s.mgr.counts()
	writeJSON(w, http.StatusOK, map[string]any{"ok": true, "running": running, "queued": queued,
		"concurrency": s.cfg.Concurrency, "codeVersion": s.cfg.CodeVersion})
}

func (s *Server) handleAlgorithms(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, cc.Algorithms())
}

func (s *Server) handleVocabulary(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, report.Vocab())
}

// ---- scenarios ----

type scenarioJSON struct {
	ID          string            `json:"id"`
	Name        string            `json:"name"`
	Description string            `json:"description"`
	Builtin     bool              `json:"builtin"`
	Library     string            `json:"library,omitempty"` // the built-in's short name (incast-8to1)
	CreatedAt   time.Time         `json:"createdAt"`
	Runs        int               `json:"runs"`
	Links       map[string]string `json:"links"`
	Scenario    json.RawMessage   `json:"scenario,omitempty"`
}

func (s *Server) scenarioJSON(sc *store.Scenario) scenarioJSON {
	return scenarioJSON{ID: sc.ID, Name: sc.Name, Description: sc.Description, Builtin: sc.Builtin,
		Library: s.libNames[sc.ID], CreatedAt: sc.CreatedAt.UTC(), Runs: sc.Runs,
		Links:    map[string]string{"self": "/api/scenarios/" + sc.ID, "share": "/s/" + sc.ID},
		Scenario: json.RawMessage(sc.JSON)}
}

func (s *Server) handleListScenarios(w http.ResponseWriter, r *http.Request) {
	list, err := s.db.ListScenarios(r.Context())
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	out := make([]scenarioJSON, 0, len(list))
	for i := range list {
		out = append(out, s.scenarioJSON(&list[i]))
	}
	writeJSON(w, http.StatusOK, out)
}

// resolveScenario finds a stored scenario by id or by a built-in's short
// name.
func (s *Server) resolveScenario(r *http.Request, id string) (*store.Scenario, error) {
	if full, ok := s.library[id]; ok {
		id = full
	}
	sc, err := s.db.GetScenario(r.Context(), id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errorf(http.StatusNotFound, "id", "no scenario %q", id)
	}
	return sc, err
}

func (s *Server) handleGetScenario(w http.ResponseWriter, r *http.Request) {
	sc, err := s.resolveScenario(r, chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, s.scenarioJSON(sc))
}

// parseScenario reads a scenario document and returns it parsed with its
// canonical form; errors name fields under prefix.
func parseScenario(doc []byte, prefix string) (*scenarios.Scenario, []byte, error) {
	if !json.Valid(doc) {
		var v any
		return nil, nil, jsonError(json.Unmarshal(doc, &v))
	}
	sc, err := scenarios.Parse(doc)
	if err != nil {
		return nil, nil, invalid(err, prefix)
	}
	canon, err := sc.Canonical()
	if err != nil {
		return nil, nil, invalid(err, prefix)
	}
	return sc, canon, nil
}

// readScenario reads a scenario from a request body and builds it.
func (s *Server) readScenario(w http.ResponseWriter, r *http.Request) (*scenarios.Scenario, []byte, *sim.Config, *scenarios.Meta, error) {
	body, err := readBody(w, r, s.cfg.MaxBody)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	sc, canon, err := parseScenario(body, "")
	if err != nil {
		return nil, nil, nil, nil, err
	}
	cfg, meta, err := scenarios.Build(sc)
	if err != nil {
		return nil, nil, nil, nil, invalid(err, "")
	}
	return sc, canon, cfg, meta, nil
}

func (s *Server) handleCreateScenario(w http.ResponseWriter, r *http.Request) {
	sc, canon, _, _, err := s.readScenario(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	rec := &store.Scenario{Name: sc.Name, Description: sc.Description, JSON: canon}
	created, err := s.db.PutScenario(r.Context(), rec)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	writeJSON(w, status, map[string]any{"id": rec.ID, "created": created,
		"links": map[string]string{"self": "/api/scenarios/" + rec.ID, "share": "/s/" + rec.ID}})
}

// validation is the answer of POST /api/scenarios/validate.
type validation struct {
	OK       bool     `json:"ok"`       // the scenario is valid
	Runnable bool     `json:"runnable"` // and within this server's limits
	ID       string   `json:"id"`
	Nodes    int      `json:"nodes"`
	Links    int      `json:"links"`
	Ports    []string `json:"ports"`
	Hosts    []string `json:"hosts"`
	Cost     Cost     `json:"cost"`
	// Flows are the generated flows (the first maxListedFlows), so an
	// editor can show which host sends what before running.
	Flows          []flowBrief     `json:"flows"`
	FlowsTruncated bool            `json:"flowsTruncated"`
	Limit          *apiError       `json:"limit,omitempty"` // the limit a run of it would exceed
	Scenario       json.RawMessage `json:"scenario"`
}

// flowBrief is one generated flow in a validation answer (start in ns; a
// flow that waits on a barrier counts from the barrier).
type flowBrief struct {
	ID      int     `json:"id"`
	Src     string  `json:"src"`
	Dst     string  `json:"dst"`
	Size    int64   `json:"size"`
	StartNs float64 `json:"startNs"`
}

// maxListedFlows bounds the flows a validation answer lists.
const maxListedFlows = 10000

func (s *Server) handleValidateScenario(w http.ResponseWriter, r *http.Request) {
	_, canon, cfg, meta, err := s.readScenario(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	c := estimate(cfg)
	v := validation{OK: true, ID: store.ScenarioID(canon), Nodes: len(cfg.Nodes), Links: len(cfg.Links),
		Ports: meta.Ports, Hosts: meta.Hosts, Cost: c, Scenario: canon, Flows: []flowBrief{}}
	for i, f := range cfg.Flows {
		if i == maxListedFlows {
			v.FlowsTruncated = true
			break
		}
		v.Flows = append(v.Flows, flowBrief{ID: i, Src: cfg.Nodes[f.Src].Name, Dst: cfg.Nodes[f.Dst].Name,
			Size: f.Size, StartNs: float64(f.Start) / 1e3})
	}
	if le := s.cfg.Limits.check(c); le != nil {
		// too big to build here; a run of it would be refused
		v.Limit = le
	} else if _, err := sim.New(*cfg); err != nil {
		s.writeError(w, r, invalid(err, ""))
		return
	} else {
		v.Runnable = true
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) handleDeleteScenario(w http.ResponseWriter, r *http.Request) {
	sc, err := s.resolveScenario(r, chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	switch err := s.db.DeleteScenario(r.Context(), sc.ID); {
	case errors.Is(err, store.ErrBuiltin):
		s.writeError(w, r, errorf(http.StatusForbidden, "id", "%s is a built-in scenario and cannot be deleted", sc.ID))
	case errors.Is(err, store.ErrInUse):
		s.writeError(w, r, errorf(http.StatusConflict, "id", "scenario %s has %d stored runs; delete them first", sc.ID, sc.Runs))
	case err != nil:
		s.writeError(w, r, err)
	default:
		w.WriteHeader(http.StatusNoContent)
	}
}

// ---- runs ----

type runRequest struct {
	ScenarioID string          `json:"scenarioId"`
	Scenario   json.RawMessage `json:"scenario"`
	CC         json.RawMessage `json:"cc"`
	Seed       *uint64         `json:"seed"`
	Speed      json.RawMessage `json:"speed"`
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
	sub, err := s.prepareRun(r, &req)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	run, err := s.mgr.submit(r.Context(), sub)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusCreated, map[string]any{"id": run.ID, "status": run.Status, "links": runLinks(run.ID, run.ScenarioID)})
}

// prepareRun validates a run request: the scenario (stored or inline), the
// overrides, the speed and the admission limits.
func (s *Server) prepareRun(r *http.Request, req *runRequest) (*submission, error) {
	speed, err := parseSpeed(req.Speed)
	if err != nil {
		return nil, err
	}
	hasInline := len(req.Scenario) > 0 && string(req.Scenario) != "null"
	var base []byte
	var prefix string
	var inline *store.Scenario // stored once the run is admitted
	sub := &submission{speed: speed, client: clientOf(r)}
	switch {
	case req.ScenarioID != "" && hasInline:
		return nil, errorf(http.StatusUnprocessableEntity, "scenario", `give "scenarioId" or "scenario", not both`)
	case req.ScenarioID != "":
		sc, err := s.resolveScenario(r, req.ScenarioID)
		if errors.Is(err, store.ErrNotFound) || isStatus(err, http.StatusNotFound) {
			return nil, errorf(http.StatusUnprocessableEntity, "scenarioId", "no scenario %q", req.ScenarioID)
		}
		if err != nil {
			return nil, err
		}
		base, sub.scenarioID, sub.name = sc.JSON, sc.ID, sc.Name
	case hasInline:
		sc, canon, err := parseScenario(req.Scenario, "scenario")
		if err != nil {
			return nil, err
		}
		if _, _, err := scenarios.Build(sc); err != nil {
			return nil, invalid(err, "scenario")
		}
		inline = &store.Scenario{Name: sc.Name, Description: sc.Description, JSON: canon}
		base, sub.scenarioID, sub.name, prefix = canon, store.ScenarioID(canon), sc.Name, "scenario"
	default:
		return nil, errorf(http.StatusUnprocessableEntity, "scenarioId", `want "scenarioId" (a stored or built-in scenario) or "scenario" (a scenario document)`)
	}
	doc := base
	overridden := false
	if len(req.CC) > 0 && string(req.CC) != "null" {
		if doc, err = scenarios.ApplySets(doc, []string{"cc=" + string(req.CC)}); err != nil {
			return nil, invalid(err, "")
		}
		overridden = true
	}
	if req.Seed != nil {
		if doc, err = scenarios.SetSeed(doc, *req.Seed); err != nil {
			return nil, invalid(err, "")
		}
		overridden = true
	}
	sc, err := scenarios.Parse(doc)
	if err != nil {
		return nil, overrideFields(invalid(err, ""), prefix)
	}
	canon := base
	if overridden {
		if canon, err = sc.Canonical(); err != nil {
			return nil, invalid(err, "")
		}
	}
	cfg, _, err := scenarios.Build(sc)
	if err != nil {
		return nil, overrideFields(invalid(err, ""), prefix)
	}
	c := estimate(cfg)
	if le := s.cfg.Limits.check(c); le != nil {
		return nil, le
	}
	if _, err := sim.New(*cfg); err != nil {
		return nil, overrideFields(invalid(err, ""), prefix)
	}
	if inline != nil {
		if _, err := s.db.PutScenario(r.Context(), inline); err != nil {
			return nil, err
		}
	}
	sub.scenario, sub.sc, sub.cfg, sub.cost = canon, sc, cfg, c
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
	Changes         []changeMsg       `json:"changes,omitempty"`
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
func (s *Server) runView(run *store.Run) runJSON {
	v := runJSON{ID: run.ID, ScenarioID: run.ScenarioID, Name: run.Name, Algorithm: run.Algorithm,
		Params: run.Params, Seed: run.Seed, CodeVersion: run.CodeVersion, Status: run.Status, Error: run.Error,
		Pinned: run.Pinned, Speed: speedJSON(run.Speed), BucketNs: float64(run.BucketPS) / 1e3,
		CreatedAt: run.CreatedAt.UTC(), StartedAt: timePtr(run.StartedAt), FinishedAt: timePtr(run.FinishedAt),
		Progress: run.Progress.Fraction, SimNs: float64(run.Progress.SimPS) / 1e3, Events: run.Progress.Events,
		WallSeconds: run.Progress.WallSeconds, Links: runLinks(run.ID, run.ScenarioID)}
	if len(v.Params) == 0 {
		v.Params = json.RawMessage("{}")
	}
	if !store.Terminal(run.Status) {
		if h := s.mgr.hubOf(run.ID); h != nil {
			h.mu.Lock()
			p := h.progress
			h.mu.Unlock()
			if p.Type != "" {
				// the store has the final word on a run that ended
				if p.Status == store.StatusRunning || p.Status == store.StatusPaused {
					v.Status = p.Status
				}
				v.Progress, v.SimNs, v.Events, v.WallSeconds = p.Progress, p.SimNs, p.Events, p.WallSeconds
				v.FlowsFinished, v.FlowsTotal, v.Speed = &p.FlowsFinished, &p.FlowsTotal, p.Speed
			}
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

func (s *Server) handleGetRun(w http.ResponseWriter, r *http.Request) {
	run, err := s.getRun(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	v := s.runView(run)
	evs, err := s.db.RunEvents(r.Context(), run.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	for _, e := range evs {
		v.Changes = append(v.Changes, changeFromEvent(e))
	}
	v.Scenario = json.RawMessage(run.Scenario)
	v.Summary = run.Summary
	writeJSON(w, http.StatusOK, v)
}

func changeFromEvent(e store.RunEvent) changeMsg {
	return changeMsg{Type: "parameter-changed", Seq: e.Seq, AtNs: float64(e.AtPS) / 1e3, Params: e.Params}
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
		out = append(out, s.runView(&runs[i]))
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
	run, err := s.getRun(r)
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

func (s *Server) handleControl(kind opKind) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		run, err := s.getRun(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if _, err := s.mgr.control(r.Context(), run.ID, op{kind: kind}); err != nil {
			s.writeError(w, r, err)
			return
		}
		if kind == opCancel {
			// the run ends at its next event boundary; answer once it has
			s.waitEnded(r, run.ID)
		}
		if run, err = s.db.GetRun(r.Context(), run.ID); err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, s.runView(run))
	}
}

// waitEnded waits (a few seconds at most) until a cancelled run has left
// the manager, so the answer shows its final status.
func (s *Server) waitEnded(r *http.Request, id string) {
	deadline := time.Now().Add(10 * time.Second)
	for s.mgr.get(id) != nil && time.Now().Before(deadline) && r.Context().Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
}

func (s *Server) handleSpeed(w http.ResponseWriter, r *http.Request) {
	run, err := s.getRun(r)
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
	if _, err := s.mgr.control(r.Context(), run.ID, op{kind: opSpeed, speed: speed}); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"speed": speedJSON(speed)})
}

func (s *Server) handleParams(w http.ResponseWriter, r *http.Request) {
	run, err := s.getRun(r)
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
	res, err := s.mgr.control(r.Context(), run.ID, op{kind: opParams, params: body})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, res.change)
}

func (s *Server) handlePin(pin bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		run, err := s.getRun(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if err := s.db.SetPinned(r.Context(), run.ID, pin); err != nil {
			s.writeError(w, r, err)
			return
		}
		run.Pinned = pin
		writeJSON(w, http.StatusOK, s.runView(run))
	}
}
