package server

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"slices"
	"strings"

	"cclab/sim/report"
	"cclab/store"
)

// The comparison of runs: GET /api/compare and the compare page.

// compareRow is one metric across the compared runs.
type compareRow struct {
	Name   string     `json:"name"`
	Label  string     `json:"label"`
	Better string     `json:"better"` // "lower", "higher", or "" (no better: none is marked best)
	Values []*float64 `json:"values"` // null where a run has no value
	Best   []int      `json:"best"`   // indexes of the best value(s)
}

// maxCompare bounds the runs of one comparison.
const maxCompare = 50

func (s *Server) handleCompare(w http.ResponseWriter, r *http.Request) {
	ids := compareIDs(r)
	if len(ids) == 0 {
		s.writeError(w, r, errorf(http.StatusBadRequest, "runs", "want ?runs=ID,ID,... (the runs to compare)"))
		return
	}
	views, rows, err := s.compare(r, ids)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"runs": views, "metrics": rows})
}

// compareIDs reads ?runs=a,b&runs=c, without repeats.
func compareIDs(r *http.Request) []string {
	var ids []string
	for _, v := range r.URL.Query()["runs"] {
		for _, id := range strings.Split(v, ",") {
			if id = strings.TrimSpace(id); id != "" && !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// compare loads runs and puts their headline metrics side by side.
func (s *Server) compare(r *http.Request, ids []string) ([]runJSON, []compareRow, error) {
	if len(ids) > maxCompare {
		return nil, nil, errorf(http.StatusBadRequest, "runs", "at most %d runs at once, got %d", maxCompare, len(ids))
	}
	views := make([]runJSON, len(ids))
	sums := make([]*report.Summary, len(ids))
	for i, id := range ids {
		run, err := s.db.GetRun(r.Context(), id)
		if err != nil {
			if isNotFound(err) {
				err = errorf(http.StatusNotFound, "runs", "no run %q", id)
			}
			return nil, nil, err
		}
		v := s.runView(r, run)
		if len(run.Summary) > 0 {
			var sum report.Summary
			if err := json.Unmarshal(run.Summary, &sum); err == nil {
				sum.Scenario = nil // each run's scenario is a link away
				sums[i] = &sum
				if v.Summary, err = json.Marshal(&sum); err != nil {
					return nil, nil, err
				}
			}
		}
		views[i] = v
	}
	headlines := report.Headlines()
	rows := make([]compareRow, 0, len(headlines))
	for _, h := range headlines {
		row := compareRow{Name: h.Name, Label: h.Label, Better: h.Better, Values: make([]*float64, len(ids)), Best: []int{}}
		any := false
		for i, sum := range sums {
			if sum == nil {
				continue
			}
			if v, ok := h.Value(sum); ok && !math.IsNaN(v) {
				x := v
				row.Values[i] = &x
				any = true
			}
		}
		if !any {
			continue
		}
		if h.Better == "" {
			rows = append(rows, row) // a fact, not a score
			continue
		}
		best := math.NaN()
		for _, v := range row.Values {
			if v == nil {
				continue
			}
			if math.IsNaN(best) || (h.Better == "lower" && *v < best) || (h.Better == "higher" && *v > best) {
				best = *v
			}
		}
		for i, v := range row.Values {
			if v != nil && *v == best {
				row.Best = append(row.Best, i)
			}
		}
		rows = append(rows, row)
	}
	return views, rows, nil
}

func isNotFound(err error) bool {
	return err != nil && (isStatus(err, http.StatusNotFound) || errors.Is(err, store.ErrNotFound))
}
