package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/go-chi/chi/v5"

	"cclab/server/runs"
	"cclab/store"
)

// The scenario routes: /api/scenarios.

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
	Parent      string            `json:"parent,omitempty"` // the scenario it was edited from (classview.go)
}

func (s *Server) scenarioJSON(sc *store.Scenario) scenarioJSON {
	return scenarioJSON{ID: sc.ID, Name: sc.Name, Description: sc.Description, Builtin: sc.Builtin,
		Library: s.libNames[sc.ID], CreatedAt: sc.CreatedAt.UTC(), Runs: sc.Runs,
		Links:    map[string]string{"self": "/api/scenarios/" + sc.ID, "share": "/s/" + sc.ID},
		Scenario: json.RawMessage(sc.JSON), Parent: sc.Parent}
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

// checkJSON answers a document that is not JSON as a 400 naming where it
// breaks (a scenario that is JSON but wrong is a 422, from the run package).
func checkJSON(doc []byte) error {
	if json.Valid(doc) {
		return nil
	}
	var v any
	return jsonError(json.Unmarshal(doc, &v))
}

// readScenario reads a scenario from a request body and compiles it.
func (s *Server) readScenario(w http.ResponseWriter, r *http.Request) (*runs.Compiled, error) {
	body, err := readBody(w, r, s.cfg.MaxBody)
	if err != nil {
		return nil, err
	}
	if err := checkJSON(body); err != nil {
		return nil, err
	}
	c, err := s.compile(body, "")
	return c, asAPIError(err)
}

func (s *Server) handleCreateScenario(w http.ResponseWriter, r *http.Request) {
	c, err := s.readScenario(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	c.Release() // stored, not run
	rec := &store.Scenario{Name: c.Scenario.Name, Description: c.Scenario.Description, JSON: c.Canonical}
	created, err := s.db.PutScenario(r.Context(), rec)
	if err == nil {
		err = s.db.Claim(r.Context(), store.OwnedScenario, rec.ID, who(r).owner) // the first to store it owns it
	}
	if err == nil && !rec.Builtin {
		err = s.setParent(r, rec.ID, r.URL.Query().Get("parent")) // classview.go
	}
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
	OK       bool      `json:"ok"`       // the scenario is valid
	Runnable bool      `json:"runnable"` // and within this server's limits
	ID       string    `json:"id"`
	Nodes    int       `json:"nodes"`
	Links    int       `json:"links"`
	Ports    []string  `json:"ports"`
	Hosts    []string  `json:"hosts"`
	Cost     runs.Cost `json:"cost"`
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
	// DstRateBps is the rate of the link into the receiver, bits/s (the
	// run page's utilisation and fair share).
	DstRateBps int64 `json:"dstRateBps"`
}

// maxListedFlows bounds the flows a validation answer lists.
const maxListedFlows = 10000

func (s *Server) handleValidateScenario(w http.ResponseWriter, r *http.Request) {
	c, err := s.readScenario(w, r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	c.Release() // validated, not run
	cfg := c.Config
	v := validation{OK: true, Runnable: c.Runnable(), ID: store.ScenarioID(c.Canonical), Nodes: len(cfg.Nodes), Links: len(cfg.Links),
		Ports: c.Meta.Ports, Hosts: c.Meta.Hosts, Cost: c.Cost, Scenario: c.Canonical, Flows: []flowBrief{}}
	s.mgr.Speed().Apply(&v.Cost)
	nodeRate := make(map[int]int64) // a host's link rate (its first link)
	for _, l := range cfg.Links {
		for _, n := range []int{l.A, l.B} {
			if _, ok := nodeRate[n]; !ok {
				nodeRate[n] = l.Rate
			}
		}
	}
	for i, f := range cfg.Flows {
		if i == maxListedFlows {
			v.FlowsTruncated = true
			break
		}
		v.Flows = append(v.Flows, flowBrief{ID: i, Src: cfg.Nodes[f.Src].Name, Dst: cfg.Nodes[f.Dst].Name,
			Size: f.Size, StartNs: float64(f.Start) / 1e3, DstRateBps: nodeRate[f.Dst]})
	}
	if c.Refused != nil {
		// too big to build here; a run of it would be refused
		v.Limit = runError(c.Refused)
	}
	writeJSON(w, http.StatusOK, v)
}

func (s *Server) handleDeleteScenario(w http.ResponseWriter, r *http.Request) {
	sc, err := s.resolveScenario(r, chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if !sc.Builtin {
		owner, err := s.db.Owner(r.Context(), store.OwnedScenario, sc.ID)
		if err == nil {
			err = mayChange(r, owner, "scenario "+sc.ID)
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
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
