package server

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"

	"cclab/store"
)

// The instructor's routes (scenarios/scenario-format.md, "Owners,
// instructors and limits"): the class view, the class limits and the
// featured scenarios; and whoami, which tells a page what it may do.

const (
	classLimitsSetting = "class-limits"
	featuredSetting    = "featured-scenarios"
)

func (s *Server) handleWhoami(w http.ResponseWriter, r *http.Request) {
	id := who(r)
	writeJSON(w, http.StatusOK, map[string]any{"owner": id.owner, "instructor": id.instructor,
		"anonymous": id.owner[:3] == "ip:", "label": id.label, "limits": s.limits.get()})
}

// ownerJSON is one owner in the class view.
type ownerJSON struct {
	Owner    string `json:"owner"`
	Runs     int    `json:"runs"`     // stored runs
	Active   int    `json:"active"`   // queued, running or paused now
	Finished int    `json:"finished"` // done
	Failed   int    `json:"failed"`   // failed, cancelled or interrupted
	Latest   string `json:"latest"`   // id of its newest run
}

// classJSON is the class view (GET /api/class, and the /class page).
type classJSON struct {
	Owners   []ownerJSON `json:"owners"`
	Running  int         `json:"running"`
	Queued   int         `json:"queued"`
	Limits   ClassLimits `json:"limits"`
	Featured []string    `json:"featured"`
}

// classView is every owner with runs, newest activity first (from the
// newest 10,000 runs), the server's counts, the limits and the featured
// scenarios.
func (s *Server) classView(r *http.Request) (classJSON, error) {
	list, err := s.db.ListRuns(r.Context(), store.RunFilter{Limit: 10_000})
	if err != nil {
		return classJSON{}, err
	}
	by := map[string]*ownerJSON{}
	var order []string
	for _, run := range list { // newest first
		o := by[run.Client]
		if o == nil {
			o = &ownerJSON{Owner: run.Client, Latest: run.ID}
			by[run.Client] = o
			order = append(order, run.Client)
		}
		o.Runs++
		switch run.Status {
		case store.StatusDone:
			o.Finished++
		case store.StatusFailed, store.StatusCancelled, store.StatusInterrupted:
			o.Failed++
		}
	}
	for client, n := range s.mgr.ClientCounts() {
		if o := by[client]; o != nil {
			o.Active = n
		}
	}
	out := make([]ownerJSON, 0, len(order))
	for _, k := range order {
		out = append(out, *by[k])
	}
	running, queued := s.mgr.Counts()
	featured, err := s.featured(r)
	if err != nil {
		return classJSON{}, err
	}
	return classJSON{Owners: out, Running: running, Queued: queued, Limits: s.limits.get(), Featured: featured}, nil
}

// handleClass is the class view.
func (s *Server) handleClass(w http.ResponseWriter, r *http.Request) {
	if err := needInstructor(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	c, err := s.classView(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// handleClassLimits changes the per-owner limits for everyone, now and
// after a restart.
func (s *Server) handleClassLimits(w http.ResponseWriter, r *http.Request) {
	if err := needInstructor(r); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.classMu.Lock()
	defer s.classMu.Unlock()
	c := s.limits.get()
	if err := decodeBody(w, r, s.cfg.MaxBody, &c); err != nil { // fields left out keep their value
		s.writeError(w, r, err)
		return
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"runsPerMinute", c.RunsPerMinute}, {"workPerHour", c.WorkPerHour}} {
		if f.v < 0 || f.v != f.v || f.v > 1e15 {
			s.writeError(w, r, errorf(http.StatusUnprocessableEntity, f.name, "want a number ≥ 0 (0: no limit), got %g", f.v))
			return
		}
	}
	if c.RunsBurst < 0 || c.RunsBurst > 1_000_000 {
		s.writeError(w, r, errorf(http.StatusUnprocessableEntity, "runsBurst", "want 0 to 1000000, got %d", c.RunsBurst))
		return
	}
	data, err := json.Marshal(c)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.db.SetSetting(r.Context(), classLimitsSetting, data); err != nil {
		s.writeError(w, r, err)
		return
	}
	s.limits.set(c)
	s.mgr.SetClientRuns(c.ClientRuns)
	writeJSON(w, http.StatusOK, c)
}

// featured is the instructor's featured scenario ids, in order.
func (s *Server) featured(r *http.Request) ([]string, error) {
	data, err := s.db.Setting(r.Context(), featuredSetting)
	if errors.Is(err, store.ErrNotFound) {
		return []string{}, nil
	}
	if err != nil {
		return nil, err
	}
	var ids []string
	if err := json.Unmarshal(data, &ids); err != nil {
		return nil, err
	}
	return ids, nil
}

// handleFeature features a scenario (the class's exercise, listed first on
// the home page) or stops featuring it.
func (s *Server) handleFeature(on bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		sc, err := s.instructorScenario(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.classMu.Lock()
		defer s.classMu.Unlock()
		ids, err := s.featured(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		i := slices.Index(ids, sc.ID)
		switch {
		case on && i < 0:
			ids = append(ids, sc.ID)
		case !on && i >= 0:
			ids = slices.Delete(ids, i, i+1)
		}
		data, _ := json.Marshal(ids)
		if err := s.db.SetSetting(r.Context(), featuredSetting, data); err != nil {
			s.writeError(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, map[string]any{"featured": ids})
	}
}
