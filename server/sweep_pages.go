package server

import (
	"encoding/json"
	"net/http"

	"github.com/go-chi/chi/v5"

	"cclab/store"
	"cclab/web"
)

// The sweep pages: the list of sweeps (/sweeps) and one sweep
// (/sweeps/{id}), rendered from the store; static/js/sweep.js then draws a
// sweep's points from GET /api/sweeps/{id}.

// maxListedSweeps bounds the list page (newest first).
const maxListedSweeps = 200

// sweepSpecView is what the pages read of a sweep's stored spec.
type sweepSpecView struct {
	Axes []struct {
		Path   string   `json:"path"`
		Values []string `json:"values"`
	} `json:"axes"`
	Seeds []uint64 `json:"seeds"`
}

func pageTime(sw *store.Sweep, finished bool) string {
	t := sw.Created
	if finished {
		if sw.Finished.IsZero() {
			return ""
		}
		t = sw.Finished
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// sweepCounts counts a sweep's runs: those done, and all of them.
func (s *Server) sweepCounts(r *http.Request, id string) (done, total int, err error) {
	rows, err := s.db.SweepRuns(r.Context(), id)
	if err != nil {
		return 0, 0, err
	}
	for _, x := range rows {
		if x.Status == store.StatusDone {
			done++
		}
	}
	return done, len(rows), nil
}

func (s *Server) handleSweepsPage(w http.ResponseWriter, r *http.Request) {
	list, err := s.db.ListSweeps(r.Context(), "")
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	var p web.SweepsPage
	for i := range list {
		if i == maxListedSweeps {
			break
		}
		sw := &list[i]
		row := web.SweepRow{ID: sw.ID, Name: sw.Name, ScenarioID: sw.ScenarioID, Status: sw.Status, Created: pageTime(sw, false)}
		var spec sweepSpecView
		if json.Unmarshal(sw.Spec, &spec) == nil {
			for _, a := range spec.Axes {
				row.Paths = append(row.Paths, a.Path)
			}
		}
		if row.RunsDone, row.RunsTotal, err = s.sweepCounts(r, sw.ID); err != nil {
			s.pageError(w, r, err)
			return
		}
		p.Sweeps = append(p.Sweeps, row)
	}
	s.render(w, r, web.SweepsPageView(p))
}

func (s *Server) handleSweepPage(w http.ResponseWriter, r *http.Request) {
	sw, err := s.db.GetSweep(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	p := web.SweepPage{ID: sw.ID, Name: sw.Name, ScenarioID: sw.ScenarioID, Status: sw.Status,
		Created: pageTime(sw, false), Finished: pageTime(sw, true), Mine: mayChange(r, sw.Owner, "") == nil}
	var doc struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(sw.Scenario, &doc) == nil {
		p.ScenarioName = doc.Name
	}
	var spec sweepSpecView
	if json.Unmarshal(sw.Spec, &spec) == nil {
		for _, a := range spec.Axes {
			p.Axes = append(p.Axes, web.SweepAxis{Path: a.Path, Values: a.Values})
		}
		p.Seeds = spec.Seeds
	}
	if p.RunsDone, p.RunsTotal, err = s.sweepCounts(r, sw.ID); err != nil {
		s.pageError(w, r, err)
		return
	}
	s.render(w, r, web.SweepPageView(p))
}
