package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"sort"
	"strconv"
	"strings"

	"cclab/scenarios"
	"cclab/store"
	"cclab/web"
)

// The compare page's reading of the comparison: which runs are of the same
// scenario, how each column is labelled, which value of a row is best, and
// the units a value is written in.

// workloadKey is a run's scenario without its congestion control (the
// "cc" object): two runs whose keys are equal ran the same scenario under
// different algorithms, presets or parameters. "" when the document does
// not parse.
func workloadKey(doc []byte) string {
	var m map[string]json.RawMessage
	if len(doc) == 0 || json.Unmarshal(doc, &m) != nil {
		return ""
	}
	delete(m, "cc")
	b, err := json.Marshal(m) // keys sorted
	if err != nil {
		return ""
	}
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return ""
	}
	return buf.String()
}

// sameScenario reports whether the runs ran one scenario, their
// algorithms apart: the same stored scenario, or stored scenarios that
// differ only in "cc" (the lab stores a scenario whose algorithm was
// changed as a new scenario). docs are the runs' stored scenarios (the
// scenario a run was started from: without its request's overrides and
// its live changes).
func sameScenario(runs []*store.Run, docs [][]byte) bool {
	for i, r := range runs[1:] {
		if r.ScenarioID == runs[0].ScenarioID {
			continue
		}
		k := workloadKey(docs[i+1])
		if k == "" || k != workloadKey(docs[0]) {
			return false
		}
	}
	return true
}

// scenarioDoc is the stored scenario a run was started from, or the run's
// own effective scenario when that is gone.
func (s *Server) scenarioDoc(r *http.Request, run *store.Run) []byte {
	if sc, err := s.db.GetScenario(r.Context(), run.ScenarioID); err == nil {
		return sc.JSON
	}
	return run.Scenario
}

// wallClock names the rows that measure the machine, not the algorithm:
// no run is best on them.
var wallClock = map[string]bool{"wall_seconds": true, "events_per_second": true}

// pageBest is the index of the one best value of a row for the page, or
// -1: none when the row is a fact or a wall-clock measure, when a run has
// not finished (its numbers are not final), or when the best is a tie.
func pageBest(row compareRow, status []string) int {
	if row.Better == "" || wallClock[row.Name] || len(row.Best) != 1 || len(status) < 2 {
		return -1
	}
	for _, st := range status {
		if st != store.StatusDone {
			return -1
		}
	}
	return row.Best[0]
}

// plain writes a parameter's value in full, without an exponent when it
// is neither huge nor tiny (150000, not 1.5e+05).
func plain(v float64) string {
	if a := math.Abs(v); a == 0 || (a >= 1e-4 && a < 1e12) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// human writes a metric's value in the unit its name implies.
func human(name string, v float64) string {
	switch {
	case strings.HasPrefix(name, "switch_queues.") || strings.HasPrefix(name, "queues."):
		return humanBytes(v)
	case name == "wall_seconds" || name == "sim_seconds":
		return humanSeconds(v)
	case strings.HasPrefix(name, "series_stats.qp_solve_ns."):
		return humanSeconds(v / 1e9)
	case name == "events_per_second":
		return humanCount(v) + "/s"
	case name == "flows_finished" || name == "flows_unfinished" || name == "drops":
		return humanCount(v)
	case name == "utilization.max" || name == "pfc_pause_fraction.max":
		return sig3(100*v) + "%"
	}
	return g(v)
}

// sig3 writes v with three significant digits, without an exponent.
func sig3(v float64) string {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return g(v)
	}
	d := 2 - int(math.Floor(math.Log10(math.Abs(v))))
	if d < 0 {
		d = 0
	}
	return fmt.Sprintf("%.*f", d, v)
}

func humanBytes(v float64) string {
	for _, u := range []struct {
		n    float64
		name string
	}{{1e9, "GB"}, {1e6, "MB"}, {1e3, "KB"}} {
		if math.Abs(v) >= u.n {
			return sig3(v/u.n) + " " + u.name
		}
	}
	return fmt.Sprintf("%.0f B", v)
}

func humanSeconds(v float64) string {
	switch a := math.Abs(v); {
	case a == 0 || a >= 1:
		return sig3(v) + " s"
	case a >= 1e-3:
		return sig3(v*1e3) + " ms"
	case a >= 1e-6:
		return sig3(v*1e6) + " µs"
	}
	return sig3(v*1e9) + " ns"
}

func humanCount(v float64) string {
	switch a := math.Abs(v); {
	case a >= 1e9:
		return sig3(v/1e9) + " G"
	case a >= 1e6:
		return sig3(v/1e6) + " M"
	case a >= 1e4:
		return sig3(v/1e3) + " k"
	}
	return g(v)
}

// runCC is a run's congestion control as its columns show it.
type runCC struct {
	algorithm, preset, policy string
	own                       string             // the scenario's own cc.params, "k=v, ..." ("" for none)
	params                    map[string]float64 // the effective ones
}

func ccOf(run *store.Run) runCC {
	c := runCC{algorithm: run.Algorithm}
	if sc, err := scenarios.Parse(run.Scenario); err == nil {
		c.preset, c.policy = sc.CC.Preset, sc.CC.Policy
		names := make([]string, 0, len(sc.CC.Params))
		for k := range sc.CC.Params {
			names = append(names, k)
		}
		sort.Strings(names)
		for i, k := range names {
			names[i] = k + "=" + g(sc.CC.Params[k])
		}
		c.own = strings.Join(names, ", ")
	}
	_ = json.Unmarshal(run.Params, &c.params)
	return c
}

// compareColumns labels each run's column by its algorithm, adding the
// preset, policy or the scenario's own parameters when runs of one
// algorithm differ in them, and lists each run's parameters with those
// that differ from another run's of the same algorithm marked.
func compareColumns(runs []*store.Run) ([]web.CompareCol, []web.CompareParams) {
	ccs := make([]runCC, len(runs))
	for i, r := range runs {
		ccs[i] = ccOf(r)
	}
	cols := make([]web.CompareCol, len(runs))
	params := make([]web.CompareParams, len(runs))
	for i, c := range ccs {
		label := c.algorithm
		for j, o := range ccs {
			if j != i && o.algorithm == c.algorithm && (o.preset != c.preset || o.policy != c.policy) {
				if c.preset != "" {
					label += ", preset " + c.preset
				}
				if c.policy != "" {
					label += ", policy " + c.policy
				}
				break
			}
		}
		for j, o := range ccs {
			if j != i && o.algorithm == c.algorithm && o.preset == c.preset && o.policy == c.policy && o.own != c.own {
				if c.own == "" {
					label += ", defaults"
				} else {
					label += ", " + c.own
				}
				break
			}
		}
		cols[i] = web.CompareCol{ID: runs[i].ID, ScenarioID: runs[i].ScenarioID, Name: runs[i].Name, Label: label, Status: runs[i].Status}
		if c.preset != "" {
			params[i].Items = append(params[i].Items, web.CompareParam{Name: "preset", Value: c.preset, Differs: differs(ccs, i, func(o runCC) (string, bool) { return o.preset, true })})
		}
		names := make([]string, 0, len(c.params))
		for k := range c.params {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			params[i].Items = append(params[i].Items, web.CompareParam{Name: k, Value: plain(c.params[k]), Differs: differs(ccs, i, func(o runCC) (string, bool) {
				v, ok := o.params[k]
				return plain(v), ok
			})})
		}
	}
	return cols, params
}

// differs reports whether another run of the same algorithm has another
// value of the field, or lacks it (runs of other algorithms have
// parameters of their own, even under the same name).
func differs(ccs []runCC, i int, field func(runCC) (string, bool)) bool {
	mine, _ := field(ccs[i])
	for j, o := range ccs {
		if j == i || o.algorithm != ccs[i].algorithm {
			continue
		}
		if v, ok := field(o); !ok || v != mine {
			return true
		}
	}
	return false
}

// comparePage builds the compare page of the runs ids.
func (s *Server) comparePage(r *http.Request, ids []string) (web.ComparePage, error) {
	var c web.ComparePage
	views, rows, err := s.compare(r, ids)
	if err != nil {
		return c, err
	}
	runs := make([]*store.Run, len(ids))
	status := make([]string, len(ids))
	for i, id := range ids {
		if runs[i], err = s.db.GetRun(r.Context(), id); err != nil {
			return c, err
		}
		status[i] = views[i].Status
	}
	c.IDs = strings.Join(ids, ",")
	c.Defaults = r.URL.Query().Get("defaults") == "1" && len(ids) > 1
	for _, v := range views {
		c.Runs = append(c.Runs, web.RunRow{ID: v.ID, ScenarioID: v.ScenarioID, Name: v.Name, Algorithm: v.Algorithm, Status: v.Status})
	}
	// each run's parameters as it started (the stored ones have its live
	// changes applied), its live changes listed after them
	changes := make([][]web.Row, len(runs))
	for i, run := range runs {
		evs, err := s.db.RunEvents(r.Context(), run.ID)
		if err != nil {
			return c, err
		}
		if len(evs) == 0 {
			continue
		}
		var params map[string]float64
		_ = json.Unmarshal(run.Params, &params)
		if parsed, err := scenarios.Parse(run.Scenario); err == nil {
			if cfg, _, ok := s.preview(parsed); ok {
				if start := startParams(parsed, cfg); start != nil {
					params = start
				}
			}
		}
		changes[i] = changeRows(params, evs)
		cp := *run
		if cp.Params, err = json.Marshal(params); err != nil {
			return c, err
		}
		runs[i] = &cp
	}
	c.Cols, c.Params = compareColumns(runs)
	for i, rows := range changes {
		for _, ch := range rows {
			c.Params[i].Changes = append(c.Params[i].Changes, ch.Value+" @ "+ch.Label)
		}
	}
	for i := range c.Cols {
		c.Cols[i].Status = status[i]
		if c.Defaults {
			c.Cols[i].Note = "its defaults"
		}
	}
	if c.Defaults {
		c.Cols[0].Note = "the original, as it ran"
	}
	// runs of different scenarios are shown side by side, but no run is
	// "best" against another workload
	docs := make([][]byte, len(runs))
	for i, run := range runs {
		docs[i] = s.scenarioDoc(r, run)
	}
	c.SameScenario = sameScenario(runs, docs)
	if c.SameScenario {
		c.ScenarioID = runs[0].ScenarioID
		c.RunAllFrom = runs[0].ID
	}
	for _, row := range rows {
		cr := web.CompareRow{Label: row.Label, Better: row.Better}
		if wallClock[row.Name] {
			cr.Better = "" // the machine's speed, not the algorithm's
		}
		best := -1
		if c.SameScenario {
			best = pageBest(row, status)
		}
		for i, v := range row.Values {
			cell := web.CompareCell{Value: "–"}
			if v != nil {
				cell.Value = human(row.Name, *v)
			}
			cell.Best = i == best
			cr.Cells = append(cr.Cells, cell)
		}
		c.Rows = append(c.Rows, cr)
	}
	c.Pending = slices.ContainsFunc(status, func(st string) bool { return st != store.StatusDone })
	return c, nil
}
