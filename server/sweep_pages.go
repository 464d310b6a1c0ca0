package server

import (
	"encoding/json"
	"net/http"
	"time"

	"cclab/web"
)

// The sweep pages: the list of sweeps (/sweeps) and one sweep
// (/sweeps/{id}), rendered from what the API serves of them (sweepView,
// sweeps.go); static/js/sweep.js then polls GET /api/sweeps/{id} for the
// points.

// maxListedSweeps bounds the list page (newest first).
const maxListedSweeps = 200

func pageTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func (s *Server) handleSweepsPage(w http.ResponseWriter, r *http.Request) {
	list, err := s.db.ListSweeps(r.Context(), "")
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	var p web.SweepsPage
	for i := range list[:min(len(list), maxListedSweeps)] {
		v, err := s.sweepView(r, &list[i], false)
		if err != nil {
			s.pageError(w, r, err)
			return
		}
		row := web.SweepRow{ID: v.ID, Name: v.Name, ScenarioID: v.ScenarioID, Status: v.Status, Created: pageTime(v.CreatedAt),
			RunsDone: v.RunsDone, RunsTotal: v.RunsTotal}
		for _, a := range v.Spec.Axes {
			row.Paths = append(row.Paths, a.Path)
		}
		p.Sweeps = append(p.Sweeps, row)
	}
	s.render(w, r, web.SweepsPageView(p))
}

func (s *Server) handleSweepPage(w http.ResponseWriter, r *http.Request) {
	sw, err := s.sweepByID(r)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	v, err := s.sweepView(r, sw, false)
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	p := web.SweepPage{ID: v.ID, Name: v.Name, ScenarioID: v.ScenarioID, Status: v.Status, Created: pageTime(v.CreatedAt),
		Seeds: v.Spec.Seeds, RunsDone: v.RunsDone, RunsTotal: v.RunsTotal, Mine: v.Mine}
	if v.FinishedAt != nil {
		p.Finished = pageTime(*v.FinishedAt)
	}
	for _, a := range v.Spec.Axes {
		p.Axes = append(p.Axes, web.SweepAxis{Path: a.Path, Values: a.Values})
	}
	// the swept scenario's own name (the stored one may since be gone)
	var doc struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(sw.Scenario, &doc) == nil {
		p.ScenarioName = doc.Name
	}
	s.render(w, r, web.SweepPageView(p))
}
