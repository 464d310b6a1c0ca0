package server

import (
	"bufio"
	"container/heap"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"cclab/sim"
	"cclab/sim/report"
	"cclab/store"
)

// finishedRun returns the run of the request if it has results (it ended:
// done, cancelled, interrupted, or failed with partial results).
func (s *Server) finishedRun(r *http.Request) (*store.Run, error) {
	run, err := s.getRun(r)
	if err != nil {
		return nil, err
	}
	if !store.Terminal(run.Status) {
		return nil, errorf(http.StatusConflict, "status", "the run is %s; its results are written when it ends (watch it live on /ws/runs/%s)", run.Status, run.ID)
	}
	return run, nil
}

func attachment(w http.ResponseWriter, contentType, name string) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", name))
}

func (s *Server) handleFlowsCSV(w http.ResponseWriter, r *http.Request) {
	run, err := s.finishedRun(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	flows, err := s.db.Flows(r.Context(), run.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	attachment(w, "text/csv; charset=utf-8", run.ID+"-flows.csv")
	if err := report.WriteFlows(w, simFlows(flows)); err != nil {
		s.log.Warn("writing flows.csv", "run", run.ID, "err", err)
	}
}

func (s *Server) handleSummary(w http.ResponseWriter, r *http.Request) {
	run, err := s.finishedRun(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	if len(run.Summary) == 0 {
		s.writeError(w, r, errorf(http.StatusNotFound, "summary", "the run %s has no summary: %s", run.Status, run.Error))
		return
	}
	attachment(w, "application/json", run.ID+"-summary.json")
	w.Write(run.Summary)
}

// seriesQuery reads ?metric=&entity=&level=&from=&to= (metric and entity
// repeatable or comma-separated; from and to in simulated ns).
func seriesQuery(r *http.Request, defLevel int) (store.SeriesQuery, error) {
	q := r.URL.Query()
	var sq store.SeriesQuery
	split := func(vals []string) []string {
		var out []string
		seen := map[string]bool{}
		for _, v := range vals {
			for _, x := range strings.Split(v, ",") {
				if x = strings.TrimSpace(x); x != "" && !seen[x] {
					seen[x] = true
					out = append(out, x)
				}
			}
		}
		return out
	}
	sq.Metrics, sq.Entities = split(q["metric"]), split(q["entity"])
	for _, f := range []struct {
		name string
		list []string
	}{{"metric", sq.Metrics}, {"entity", sq.Entities}} {
		if len(f.list) > maxFilter {
			return sq, errorf(http.StatusBadRequest, f.name, "at most %d values, got %d", maxFilter, len(f.list))
		}
	}
	level, err := queryInt(q.Get("level"), defLevel, 0, 1)
	if err != nil {
		return sq, errorf(http.StatusBadRequest, "level", "%v (0: every stored sample; 1: decimated for charts)", err)
	}
	sq.Level = level
	for _, p := range []struct {
		key string
		dst *int64
	}{{"from", &sq.FromPS}, {"to", &sq.ToPS}} {
		if v := q.Get(p.key); v != "" {
			ns, err := strconv.ParseFloat(v, 64)
			if err != nil || !(ns >= 0 && ns <= 1e13) {
				return sq, errorf(http.StatusBadRequest, p.key, "want simulated nanoseconds >= 0, got %q", v)
			}
			*p.dst = int64(math.Round(ns * 1e3))
		}
	}
	if sq.ToPS != 0 && sq.ToPS < sq.FromPS {
		return sq, errorf(http.StatusBadRequest, "to", "to (%g ns) is before from (%g ns)", float64(sq.ToPS)/1e3, float64(sq.FromPS)/1e3)
	}
	return sq, nil
}

// maxFilter bounds the metric and entity values of one series query.
const maxFilter = 1000

// checkExportSize refuses an export of more points than the server's
// limit, before reading them.
func (s *Server) checkExportSize(r *http.Request, id string, sq store.SeriesQuery) error {
	n, err := s.db.SeriesPoints(r.Context(), id, sq)
	if err != nil {
		return err
	}
	if n > s.cfg.MaxExportPoints {
		hint := "filter by metric, entity or from/to"
		if sq.Level == 0 {
			hint += ", or ask for level=1"
		}
		return limitError(http.StatusUnprocessableEntity, "max-export-points", "level",
			"%d points is more than this server exports at once (%d, max-export-points); %s", n, s.cfg.MaxExportPoints, hint)
	}
	return nil
}

// readSeries reads the series a request selects (?metric=&entity=&level=
// &from=&to=, level defLevel when not given), refusing an export over the
// point limit before reading it.
func (s *Server) readSeries(r *http.Request, runID string, defLevel int) ([]store.Series, store.SeriesQuery, error) {
	sq, err := seriesQuery(r, defLevel)
	if err != nil {
		return nil, sq, err
	}
	if err := s.checkExportSize(r, runID, sq); err != nil {
		return nil, sq, err
	}
	series, err := s.db.Series(r.Context(), runID, sq)
	return series, sq, err
}

func (s *Server) handleSeriesCSV(w http.ResponseWriter, r *http.Request) {
	run, err := s.finishedRun(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	series, _, err := s.readSeries(r, run.ID, 0)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	attachment(w, "text/csv; charset=utf-8", run.ID+"-series.csv")
	if err := writeSeriesCSV(w, series); err != nil {
		s.log.Warn("writing series.csv", "run", run.ID, "err", err)
	}
}

// writeSeriesCSV writes series.csv rows in time order (ties: series order,
// which is the order the engine first produced them), formatted exactly as
// `cclab run` formats them.
func writeSeriesCSV(w io.Writer, series []store.Series) error {
	bw := bufio.NewWriterSize(w, 1<<16)
	bw.WriteString(report.SeriesHeader + "\n")
	h := make(mergeHeap, 0, len(series))
	for i := range series {
		if len(series[i].T) > 0 {
			h = append(h, mergeItem{s: &series[i]})
		}
	}
	heap.Init(&h)
	var b []byte
	for len(h) > 0 {
		it := &h[0]
		sr := it.s
		b = report.AppendNanos(b[:0], sim.Time(sr.T[it.j]))
		b = append(b, ',')
		b = append(b, sr.Metric...)
		b = append(b, ',')
		b = append(b, sr.Entity...)
		b = append(b, ',')
		b = strconv.AppendFloat(b, sr.V[it.j], 'f', -1, 64)
		b = append(b, '\n')
		if _, err := bw.Write(b); err != nil {
			return err
		}
		it.j++
		if it.j == len(sr.T) {
			heap.Pop(&h)
		} else {
			heap.Fix(&h, 0)
		}
	}
	return bw.Flush()
}

type mergeItem struct {
	s *store.Series
	j int
}

type mergeHeap []mergeItem

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(a, b int) bool {
	ta, tb := h[a].s.T[h[a].j], h[b].s.T[h[b].j]
	if ta != tb {
		return ta < tb
	}
	return h[a].s.Index < h[b].s.Index
}
func (h mergeHeap) Swap(a, b int) { h[a], h[b] = h[b], h[a] }
func (h *mergeHeap) Push(x any)   { *h = append(*h, x.(mergeItem)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// chartSeries is one series in the JSON forms: times in simulated ns.
type chartSeries struct {
	I      int       `json:"i"`
	Metric string    `json:"metric"`
	Entity string    `json:"entity"`
	T      []float64 `json:"t"`
	V      []float64 `json:"v"`
}

func toChart(series []store.Series) []chartSeries {
	out := make([]chartSeries, len(series))
	for k, sr := range series {
		c := chartSeries{I: sr.Index, Metric: sr.Metric, Entity: sr.Entity, T: make([]float64, len(sr.T)), V: sr.V}
		for j, t := range sr.T {
			c.T[j] = float64(t) / 1e3
		}
		out[k] = c
	}
	return out
}

// handleSeriesJSON answers a run's chart data: every series at level 1 by
// default, in one query. A running run answers what it has streamed so far.
func (s *Server) handleSeriesJSON(w http.ResponseWriter, r *http.Request) {
	run, err := s.getRun(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	series, sq, err := s.readSeries(r, run.ID, 1)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// written by hand: this is the largest answer the API gives, and
	// encoding/json would take most of its time
	b := make([]byte, 0, 1<<16)
	b = append(b, `{"id":`...)
	b = appendString(b, run.ID)
	b = append(b, `,"status":`...)
	b = appendString(b, run.Status)
	b = append(b, `,"level":`...)
	b = strconv.AppendInt(b, int64(sq.Level), 10)
	b = append(b, `,"bucketNs":`...)
	b = appendNumber(b, float64(run.BucketPS)/1e3)
	b = append(b, `,"series":`...)
	b = appendChart(b, toChart(series))
	b = append(b, "}\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

// flowJSON is one flows.csv row in the JSON export (empty fields are null).
type flowJSON struct {
	FlowID     int      `json:"flow_id"`
	Src        string   `json:"src"`
	Dst        string   `json:"dst"`
	SizeBytes  int64    `json:"size_bytes"`
	StartNs    *float64 `json:"start_ns"`
	FinishNs   *float64 `json:"finish_ns"`
	FCTNs      *float64 `json:"fct_ns"`
	IdealFCTNs float64  `json:"ideal_fct_ns"`
	Slowdown   *float64 `json:"slowdown"`
	CC         string   `json:"cc"`
}

func nsPtr(ps int64) *float64 {
	v := float64(ps) / 1e3
	return &v
}

func flowsJSON(flows []store.Flow) []flowJSON {
	out := make([]flowJSON, len(flows))
	for i, f := range flows {
		j := flowJSON{FlowID: f.ID, Src: f.Src, Dst: f.Dst, SizeBytes: f.Size, IdealFCTNs: float64(f.IdealPS) / 1e3, CC: f.Algorithm}
		if f.Started || f.StartPS >= 0 {
			j.StartNs = nsPtr(f.StartPS)
		}
		if f.Finished {
			j.FinishNs, j.FCTNs = nsPtr(f.FinishPS), nsPtr(f.FCTPS)
			sd := float64(f.FCTPS) / float64(f.IdealPS)
			j.Slowdown = &sd
		}
		out[i] = j
	}
	return out
}

// handleExport answers the whole run as one JSON document: the run, its
// summary (summary.json), flows (flows.csv rows) and series (series.csv,
// level 0 unless ?level=1, with the same filters).
func (s *Server) handleExport(w http.ResponseWriter, r *http.Request) {
	run, err := s.finishedRun(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	series, sq, err := s.readSeries(r, run.ID, 0)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	flows, err := s.db.Flows(r.Context(), run.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	evs, err := s.db.RunEvents(r.Context(), run.ID)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	v := s.runView(run)
	for _, e := range evs {
		v.Changes = append(v.Changes, changeFromEvent(e))
	}
	v.Scenario = json.RawMessage(run.Scenario)
	summary := run.Summary
	if len(summary) == 0 {
		summary = json.RawMessage("null")
	}
	head, err := json.Marshal(struct {
		Run     runJSON         `json:"run"`
		Summary json.RawMessage `json:"summary"`
		Flows   []flowJSON      `json:"flows"`
		Level   int             `json:"level"`
	}{v, summary, flowsJSON(flows), sq.Level})
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	// the series are appended by hand: {...,"level":0,"series":[...]}
	b := append(head[:len(head)-1], `,"series":`...)
	b = appendChart(b, toChart(series))
	b = append(b, "}\n"...)
	attachment(w, "application/json", run.ID+".json")
	w.Write(b)
}

// ---- comparison ----

// compareRow is one metric across the compared runs.
type compareRow struct {
	Name   string     `json:"name"`
	Label  string     `json:"label"`
	Better string     `json:"better"` // "lower", "higher", or "" (no better: none is marked best)
	Values []*float64 `json:"values"` // null where a run has no value
	Best   []int      `json:"best"`   // indexes of the best value(s)
}

type compareMetric struct {
	name, label, better string
	get                 func(m map[string]any) (float64, bool)
}

func path(keys ...string) func(m map[string]any) (float64, bool) {
	return func(m map[string]any) (float64, bool) {
		var cur any = m
		for _, k := range keys {
			mm, ok := cur.(map[string]any)
			if !ok {
				return 0, false
			}
			cur = mm[k]
		}
		v, ok := cur.(float64)
		return v, ok
	}
}

// bucketPath reads fct_slowdown_by_size[i].key.
func bucketPath(i int, key string) func(m map[string]any) (float64, bool) {
	return func(m map[string]any) (float64, bool) {
		list, ok := m["fct_slowdown_by_size"].([]any)
		if !ok || i >= len(list) {
			return 0, false
		}
		b, ok := list[i].(map[string]any)
		if !ok {
			return 0, false
		}
		if n, _ := b["count"].(float64); n == 0 {
			return 0, false
		}
		v, ok := b[key].(float64)
		return v, ok
	}
}

// maxOver reads the largest value of a map of ports (e.g. utilization).
func maxOver(key string, inner string) func(m map[string]any) (float64, bool) {
	return func(m map[string]any) (float64, bool) {
		mm, ok := m[key].(map[string]any)
		if !ok || len(mm) == 0 {
			return 0, false
		}
		best, found := math.Inf(-1), false
		for _, v := range mm {
			if inner != "" {
				o, ok := v.(map[string]any)
				if !ok {
					continue
				}
				v = o[inner]
			}
			if f, ok := v.(float64); ok && f > best {
				best, found = f, true
			}
		}
		return best, found
	}
}

var compareMetrics = func() []compareMetric {
	ms := []compareMetric{
		{"flows_finished", "flows finished", "higher", path("flows_finished")},
		{"flows_unfinished", "flows unfinished", "lower", path("flows_unfinished")},
		{"fct_slowdown.mean", "FCT slowdown, mean", "lower", path("fct_slowdown", "mean")},
		{"fct_slowdown.p50", "FCT slowdown, p50", "lower", path("fct_slowdown", "p50")},
		{"fct_slowdown.p95", "FCT slowdown, p95", "lower", path("fct_slowdown", "p95")},
		{"fct_slowdown.p99", "FCT slowdown, p99", "lower", path("fct_slowdown", "p99")},
	}
	for i, b := range report.SizeBuckets() {
		ms = append(ms,
			compareMetric{fmt.Sprintf("fct_slowdown_by_size[%d].p50", i), "FCT slowdown p50, " + b.Label, "lower", bucketPath(i, "p50")},
			compareMetric{fmt.Sprintf("fct_slowdown_by_size[%d].p99", i), "FCT slowdown p99, " + b.Label, "lower", bucketPath(i, "p99")})
	}
	ms = append(ms,
		compareMetric{"switch_queues.p50", "switch queue p50 (bytes)", "lower", path("switch_queues", "p50")},
		compareMetric{"switch_queues.p99", "switch queue p99 (bytes)", "lower", path("switch_queues", "p99")},
		compareMetric{"switch_queues.max", "switch queue max (bytes)", "lower", path("switch_queues", "max")},
		compareMetric{"queues.max", "largest queue of any port (bytes)", "lower", maxOver("queues", "max")},
		compareMetric{"utilization.max", "busiest port's utilisation", "higher", maxOver("utilization", "")},
		compareMetric{"pfc_pause_fraction.max", "most paused port's pause fraction", "lower", maxOver("pfc_pause_fraction", "")},
		compareMetric{"drops", "packets dropped", "lower", path("drops")},
		compareMetric{"jain", "Jain's fairness (second half)", "higher", path("jain")},
		compareMetric{"series_stats.qp_solve_ns.p50", "QP solve time p50 (ns)", "lower", path("series_stats", "qp_solve_ns", "p50")},
		compareMetric{"series_stats.qp_solve_ns.p99", "QP solve time p99 (ns)", "lower", path("series_stats", "qp_solve_ns", "p99")},
		compareMetric{"sim_seconds", "simulated seconds", "", path("sim_seconds")},
		compareMetric{"wall_seconds", "wall-clock seconds", "lower", path("wall_seconds")},
		compareMetric{"events_per_second", "events per second", "higher", path("events_per_second")},
	)
	return ms
}()

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
	sums := make([]map[string]any, len(ids))
	for i, id := range ids {
		run, err := s.db.GetRun(r.Context(), id)
		if err != nil {
			if isNotFound(err) {
				err = errorf(http.StatusNotFound, "runs", "no run %q", id)
			}
			return nil, nil, err
		}
		v := s.runView(run)
		if len(run.Summary) > 0 {
			var m map[string]any
			if err := json.Unmarshal(run.Summary, &m); err == nil {
				delete(m, "scenario")
				sums[i] = m
				trimmed, _ := json.Marshal(m)
				v.Summary = trimmed
			}
		}
		views[i] = v
	}
	rows := make([]compareRow, 0, len(compareMetrics))
	for _, cm := range compareMetrics {
		row := compareRow{Name: cm.name, Label: cm.label, Better: cm.better, Values: make([]*float64, len(ids)), Best: []int{}}
		any := false
		for i, m := range sums {
			if m == nil {
				continue
			}
			if v, ok := cm.get(m); ok && !math.IsNaN(v) {
				x := v
				row.Values[i] = &x
				any = true
			}
		}
		if !any {
			continue
		}
		if cm.better == "" {
			rows = append(rows, row) // a fact, not a score
			continue
		}
		best := math.NaN()
		for _, v := range row.Values {
			if v == nil {
				continue
			}
			if math.IsNaN(best) || (cm.better == "lower" && *v < best) || (cm.better == "higher" && *v > best) {
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
