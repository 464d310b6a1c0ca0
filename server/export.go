package server

import (
	"bufio"
	"container/heap"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"

	"cclab/server/runs"
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
	if err := report.WriteFlows(w, &sim.Result{Flows: flows}); err != nil {
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
	v := s.runView(r, run)
	for _, e := range evs {
		v.Changes = append(v.Changes, runs.ChangeOf(e))
	}
	v.Scenario = json.RawMessage(run.Scenario)
	summary := run.Summary
	if len(summary) == 0 {
		summary = json.RawMessage("null")
	}
	head, err := json.Marshal(struct {
		Run     runJSON          `json:"run"`
		Summary json.RawMessage  `json:"summary"`
		Flows   []report.FlowRow `json:"flows"`
		Level   int              `json:"level"`
	}{v, summary, report.FlowRows(flows), sq.Level})
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
