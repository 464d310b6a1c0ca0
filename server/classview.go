package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"

	"cclab/scenarios"
	"cclab/sim"
	"cclab/sim/report"
	"cclab/store"
	"cclab/web"
)

// For instructors (issue 21; scenarios/scenario-format.md, "Owners,
// instructors and limits"): the class view of a scenario (every run of it
// and of the copies edited from it, side by side, each with the name the
// student typed), and pinned exercises (a scenario with some fields locked
// and a task; runs of copies that change a locked field are refused).

const (
	maxLabel     = 60   // characters of a run's label
	maxTask      = 2000 // characters of an exercise's task
	maxLocked    = 64   // locked fields of an exercise
	maxClassRuns = 500  // runs in a class view
	maxClassCDFs = 50   // runs whose FCT slowdown CDF a class view draws
	maxCDFPoints = 64   // points of each CDF
)

// classMetric is one sortable column of the class view.
type classMetric struct {
	Name, Label, Better string
	value               func(*report.Summary) (float64, bool)
}

var classMetrics = []classMetric{
	{"p50", "FCT slowdown p50", "lower", func(s *report.Summary) (float64, bool) {
		return statOf(s.FCTSlowdown, func(st *report.Stats) float64 { return st.P50 })
	}},
	{"p99", "FCT slowdown p99", "lower", func(s *report.Summary) (float64, bool) {
		return statOf(s.FCTSlowdown, func(st *report.Stats) float64 { return st.P99 })
	}},
	{"maxQueue", "Max queue (KB)", "lower", func(s *report.Summary) (float64, bool) {
		return float64(s.SwitchQueues.Max) / 1e3, s.SwitchQueues.Ports > 0
	}},
	{"goodput", "Goodput (Gb/s)", "higher", func(s *report.Summary) (float64, bool) { return s.GoodputGbps, true }},
	{"jain", "Jain fairness", "higher", func(s *report.Summary) (float64, bool) {
		if s.Jain == nil {
			return 0, false
		}
		return *s.Jain, true
	}},
	{"drops", "Drops", "lower", func(s *report.Summary) (float64, bool) { return float64(s.Drops), true }},
}

func statOf(st *report.Stats, f func(*report.Stats) float64) (float64, bool) {
	if st == nil {
		return 0, false
	}
	return f(st), true
}

// classRunJSON is one run of a class view.
type classRunJSON struct {
	ID         string              `json:"id"`
	ScenarioID string              `json:"scenarioId"`
	Name       string              `json:"name"`
	Label      string              `json:"label"` // the name the student typed ("" if none)
	Algorithm  string              `json:"algorithm"`
	Status     string              `json:"status"`
	Mine       bool                `json:"mine"`
	Edited     bool                `json:"edited"` // a run of a copy edited from the scenario
	CreatedAt  time.Time           `json:"createdAt"`
	Metrics    map[string]*float64 `json:"metrics"` // null where the run has no value (yet)
	// CDF is the FCT slowdown CDF of the run's finished flows,
	// [[slowdown, fraction], ...] (the newest maxClassCDFs finished runs).
	CDF [][2]float64 `json:"cdf,omitempty"`
}

// classScenarioJSON is GET /api/scenarios/{id}/class.
type classScenarioJSON struct {
	ScenarioID string            `json:"scenarioId"`
	Name       string            `json:"name"`
	All        bool              `json:"all"` // every owner's runs (an instructor); else the requester's own
	Sort       string            `json:"sort"`
	Metrics    []metricJSON      `json:"metrics"`
	Runs       []classRunJSON    `json:"runs"`
	Exercise   *exerciseJSON     `json:"exercise,omitempty"`
	Truncated  bool              `json:"truncated"`
	Links      map[string]string `json:"links"`
}

type metricJSON struct {
	Name   string `json:"name"`
	Label  string `json:"label"`
	Better string `json:"better"`
}

// classScenario builds the class view of scenario id: sort is "" (newest
// first) or a metric name (best first; runs without it last).
func (s *Server) classScenario(r *http.Request, id, sortBy string) (*classScenarioJSON, error) {
	sc, err := s.resolveScenario(r, id)
	if err != nil {
		return nil, err
	}
	var metric *classMetric
	if sortBy != "" && sortBy != "newest" {
		i := slices.IndexFunc(classMetrics, func(m classMetric) bool { return m.Name == sortBy })
		if i < 0 {
			names := make([]string, len(classMetrics))
			for j, m := range classMetrics {
				names[j] = m.Name
			}
			return nil, errorf(http.StatusBadRequest, "sort", "want newest or one of %s, got %q", strings.Join(names, ", "), sortBy)
		}
		metric = &classMetrics[i]
	} else {
		sortBy = "newest"
	}
	fam, err := s.db.ScenarioFamily(r.Context(), sc.ID)
	if err != nil {
		return nil, err
	}
	me := who(r)
	client := me.owner
	if me.instructor {
		client = ""
	}
	list, err := s.db.ClassRuns(r.Context(), fam, client, maxClassRuns+1)
	if err != nil {
		return nil, err
	}
	out := &classScenarioJSON{ScenarioID: sc.ID, Name: sc.Name, All: me.instructor, Sort: sortBy,
		Runs:  make([]classRunJSON, 0, len(list)),
		Links: map[string]string{"page": "/s/" + sc.ID + "/class", "share": "/s/" + sc.ID}}
	if len(list) > maxClassRuns {
		list, out.Truncated = list[:maxClassRuns], true
	}
	for _, m := range classMetrics {
		out.Metrics = append(out.Metrics, metricJSON{m.Name, m.Label, m.Better})
	}
	cdfs := 0
	for _, run := range list {
		v := classRunJSON{ID: run.ID, ScenarioID: run.ScenarioID, Name: run.Name, Label: run.Label, Algorithm: run.Algorithm,
			Status: run.Status, Mine: me.instructor || run.Client == me.owner, Edited: run.ScenarioID != sc.ID,
			CreatedAt: run.CreatedAt.UTC(), Metrics: map[string]*float64{}}
		var sum report.Summary
		if len(run.Summary) > 0 && json.Unmarshal(run.Summary, &sum) == nil {
			for _, m := range classMetrics {
				if x, ok := m.value(&sum); ok && !math.IsNaN(x) && !math.IsInf(x, 0) {
					v.Metrics[m.Name] = &x
				} else {
					v.Metrics[m.Name] = nil
				}
			}
			if cdfs < maxClassCDFs {
				flows, err := s.db.Flows(r.Context(), run.ID)
				if err != nil && !errors.Is(err, store.ErrNotFound) {
					return nil, err
				}
				v.CDF = slowdownCDF(flows)
				cdfs++
			}
		} else {
			for _, m := range classMetrics {
				v.Metrics[m.Name] = nil
			}
		}
		out.Runs = append(out.Runs, v)
	}
	if metric != nil {
		name, lower := metric.Name, metric.Better == "lower"
		sort.SliceStable(out.Runs, func(i, j int) bool {
			a, b := out.Runs[i].Metrics[name], out.Runs[j].Metrics[name]
			switch {
			case a == nil || b == nil:
				return a != nil && b == nil
			case lower:
				return *a < *b
			default:
				return *a > *b
			}
		})
	}
	if ex, err := s.db.ExerciseOf(r.Context(), sc.ID); err == nil {
		out.Exercise = exerciseView(ex)
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	return out, nil
}

// slowdownCDF is the CDF of the finished flows' FCT slowdown (FCT over the
// ideal FCT), at most maxCDFPoints points.
func slowdownCDF(flows []sim.FlowResult) [][2]float64 {
	var sd []float64
	for _, f := range flows {
		if f.Finished && f.IdealFCT > 0 {
			sd = append(sd, float64(f.FCT)/float64(f.IdealFCT))
		}
	}
	if len(sd) == 0 {
		return nil
	}
	slices.Sort(sd)
	n := len(sd)
	steps := min(n, maxCDFPoints)
	out := make([][2]float64, 0, steps)
	for k := 1; k <= steps; k++ {
		i := k*n/steps - 1
		out = append(out, [2]float64{sd[i], float64(i+1) / float64(n)})
	}
	return out
}

func (s *Server) handleClassScenario(w http.ResponseWriter, r *http.Request) {
	c, err := s.classScenario(r, chi.URLParam(r, "id"), r.URL.Query().Get("sort"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, c)
}

// handleClassScenarioPage is /s/{id}/class.
func (s *Server) handleClassScenarioPage(w http.ResponseWriter, r *http.Request) {
	c, err := s.classScenario(r, chi.URLParam(r, "id"), r.URL.Query().Get("sort"))
	if err != nil {
		s.pageError(w, r, err)
		return
	}
	v := web.ScenarioClass{ScenarioID: c.ScenarioID, Name: c.Name, All: c.All, Sort: c.Sort, Truncated: c.Truncated,
		Instructor: who(r).instructor}
	if c.Exercise != nil {
		v.Task, v.Locked = c.Exercise.Task, c.Exercise.Locked
	}
	for _, m := range c.Metrics {
		v.Metrics = append(v.Metrics, web.ClassMetric{Name: m.Name, Label: m.Label, Better: m.Better})
	}
	// a run keeps its colour whatever the order: by its place newest first
	byAge := slices.Clone(c.Runs)
	slices.SortStableFunc(byAge, func(a, b classRunJSON) int { return b.CreatedAt.Compare(a.CreatedAt) })
	colour := map[string]int{}
	for i, run := range byAge {
		colour[run.ID] = i
	}
	for _, run := range c.Runs {
		row := web.ClassRow{ID: run.ID, Label: run.Label, Name: run.Name, Status: run.Status, Edited: run.Edited,
			ScenarioID: run.ScenarioID, Created: run.CreatedAt.Format("2006-01-02 15:04:05"), Color: web.ClassColor(colour[run.ID])}
		for _, m := range c.Metrics {
			if x := run.Metrics[m.Name]; x != nil {
				row.Values = append(row.Values, strconv.FormatFloat(*x, 'g', 4, 64))
			} else {
				row.Values = append(row.Values, "—")
			}
		}
		row.CDF = run.CDF
		v.Rows = append(v.Rows, row)
	}
	s.render(w, r, web.ScenarioClassPage(v))
}

// ---- pinned exercises ----

// exerciseJSON is an exercise as the API shows it.
type exerciseJSON struct {
	ScenarioID string            `json:"scenarioId"` // the scenario it is pinned on
	Locked     []string          `json:"locked"`
	Task       string            `json:"task"`
	CreatedAt  time.Time         `json:"createdAt"`
	Links      map[string]string `json:"links"`
}

func exerciseView(ex *store.Exercise) *exerciseJSON {
	return &exerciseJSON{ScenarioID: ex.ScenarioID, Locked: ex.Locked, Task: ex.Task, CreatedAt: ex.CreatedAt.UTC(),
		Links: map[string]string{"share": "/s/" + ex.ScenarioID, "class": "/s/" + ex.ScenarioID + "/class"}}
}

// handleGetExercise answers the exercise that governs a scenario: its own,
// or the one of the scenario it was edited from.
func (s *Server) handleGetExercise(w http.ResponseWriter, r *http.Request) {
	sc, err := s.resolveScenario(r, chi.URLParam(r, "id"))
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	ex, err := s.db.ExerciseOf(r.Context(), sc.ID)
	if errors.Is(err, store.ErrNotFound) {
		err = errorf(http.StatusNotFound, "id", "scenario %s is not an exercise", sc.ID)
	}
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, exerciseView(ex))
}

// instructorScenario is the scenario the request names, for an instructor
// (401 for anyone else).
func (s *Server) instructorScenario(r *http.Request) (*store.Scenario, error) {
	if err := needInstructor(r); err != nil {
		return nil, err
	}
	return s.resolveScenario(r, chi.URLParam(r, "id"))
}

// handlePutExercise pins an exercise on a scenario (instructor only).
func (s *Server) handlePutExercise(w http.ResponseWriter, r *http.Request) {
	sc, err := s.instructorScenario(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	var req struct {
		Locked []string `json:"locked"`
		Task   string   `json:"task"`
	}
	if err := decodeBody(w, r, s.cfg.MaxBody, &req); err != nil {
		s.writeError(w, r, err)
		return
	}
	req.Task = strings.TrimSpace(req.Task)
	if utf8.RuneCountInString(req.Task) > maxTask {
		s.writeError(w, r, errorf(http.StatusUnprocessableEntity, "task", "at most %d characters, got %d", maxTask, utf8.RuneCountInString(req.Task)))
		return
	}
	if len(req.Locked) > maxLocked {
		s.writeError(w, r, errorf(http.StatusUnprocessableEntity, "locked", "at most %d fields, got %d", maxLocked, len(req.Locked)))
		return
	}
	doc, err := canonicalDoc(sc.JSON)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	locked := []string{}
	for i, p := range req.Locked {
		p = strings.TrimSpace(p)
		if _, ok, err := scenarios.LookupPath(doc, p); err != nil || !ok {
			msg := "no such field in the scenario"
			if err != nil {
				msg = err.Error()
			}
			s.writeError(w, r, errorf(http.StatusUnprocessableEntity, fmt.Sprintf("locked[%d]", i), "%s: %q", msg, p))
			return
		}
		if !slices.Contains(locked, p) {
			locked = append(locked, p)
		}
	}
	ex := &store.Exercise{ScenarioID: sc.ID, Locked: locked, Task: req.Task, Owner: who(r).owner}
	if err := s.db.PutExercise(r.Context(), ex); err != nil {
		s.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, exerciseView(ex))
}

func (s *Server) handleDeleteExercise(w http.ResponseWriter, r *http.Request) {
	sc, err := s.instructorScenario(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if err := s.db.DeleteExercise(r.Context(), sc.ID); err != nil {
		s.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// checkExercise refuses (422, naming the field) a run whose scenario is, or
// was edited from, an exercise and changes one of its locked fields.
// canonical is the run's scenario as it would run.
func (s *Server) checkExercise(r *http.Request, scenarioID string, canonical []byte) error {
	ex, err := s.db.ExerciseOf(r.Context(), scenarioID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if ex.ScenarioID == scenarioID && len(ex.Locked) == 0 {
		return nil
	}
	base, err := s.db.GetScenario(r.Context(), ex.ScenarioID)
	if err != nil {
		return err
	}
	want, err := canonicalDoc(base.JSON)
	if err != nil {
		return err
	}
	var got any
	if err := json.Unmarshal(canonical, &got); err != nil {
		return err
	}
	for _, p := range ex.Locked {
		a, aok, _ := scenarios.LookupPath(want, p)
		b, bok, _ := scenarios.LookupPath(got, p)
		if aok != bok || !sameJSON(a, b) {
			return errorf(http.StatusUnprocessableEntity, p, "%s is locked by the exercise %s: only the instructor may change it (the exercise has it %s)",
				p, ex.ScenarioID, compactJSON(a))
		}
	}
	return nil
}

// canonicalDoc parses a stored scenario as a run would see it.
func canonicalDoc(js []byte) (any, error) {
	sc, err := scenarios.Parse(js)
	if err != nil {
		return nil, err
	}
	canon, err := sc.Canonical()
	if err != nil {
		return nil, err
	}
	var doc any
	return doc, json.Unmarshal(canon, &doc)
}

func sameJSON(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

func compactJSON(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 80 {
		return string(b[:77]) + "…"
	}
	return string(b)
}

// cleanLabel checks a run's label (the name a student typed).
func cleanLabel(label string) (string, error) {
	label = strings.TrimSpace(label)
	if n := utf8.RuneCountInString(label); n > maxLabel {
		return "", errorf(http.StatusUnprocessableEntity, "label", "at most %d characters, got %d", maxLabel, n)
	}
	return label, nil
}

// setParent records, for a scenario the lab stores as an edited copy
// (POST /api/scenarios?parent=ID), the scenario it was edited from. A
// parent that is not stored is a 422; one that would make a cycle is
// ignored, as is a parent given for a scenario that already has one.
func (s *Server) setParent(r *http.Request, id, parent string) error {
	if parent == "" || parent == id {
		return nil
	}
	p, err := s.resolveScenario(r, parent)
	if isNotFound(err) {
		return errorf(http.StatusUnprocessableEntity, "parent", "no scenario %q", parent)
	}
	if err != nil {
		return err
	}
	if cycle, err := s.db.IsAncestor(r.Context(), id, p.ID); err != nil || cycle { // no cycles
		return err
	}
	return s.db.SetScenarioParent(r.Context(), id, p.ID)
}

// checkExerciseParams refuses (422, naming the parameter) a live change of
// a run's parameters that a pinned exercise locks (cc.params.NAME, or
// cc.params or cc as a whole).
func (s *Server) checkExerciseParams(r *http.Request, scenarioID string, params map[string]json.RawMessage) error {
	ex, err := s.db.ExerciseOf(r.Context(), scenarioID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	names := make([]string, 0, len(params))
	for name := range params {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		path := "cc.params." + name
		for _, l := range ex.Locked {
			if l == "cc" || l == "cc.params" || l == path {
				return errorf(http.StatusUnprocessableEntity, name, "%s is locked by the exercise %s: only the instructor may change it", path, ex.ScenarioID)
			}
		}
	}
	return nil
}
