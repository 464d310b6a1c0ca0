// Package report turns a run's results into the files of the results
// contract (scenarios/scenario-format.md, "Results"): flows.csv,
// series.csv and summary.json. The CLI and the server both use it, so the
// two produce the same bytes for the same run.
package report

import (
	"bufio"
	"encoding/json"
	"io"
	"math"
	"sort"
	"strconv"
	"sync/atomic"
	"time"

	"cclab/sim"
)

// FlowsHeader is the exact header of flows.csv.
const FlowsHeader = "flow_id,src,dst,size_bytes,start_ns,finish_ns,fct_ns,ideal_fct_ns,slowdown,cc"

// SeriesHeader is the exact header of series.csv.
const SeriesHeader = "t_ns,metric,entity,value"

// Nanos formats picoseconds as nanoseconds: an integer when whole, else with
// up to three decimals ("862704", "20.96").
func Nanos(t sim.Time) string { return string(AppendNanos(nil, t)) }

// AppendNanos appends Nanos(t) to b.
func AppendNanos(b []byte, t sim.Time) []byte {
	if t < 0 {
		b = append(b, '-')
		t = -t
	}
	b = strconv.AppendInt(b, int64(t/1000), 10)
	if frac := int64(t % 1000); frac != 0 {
		b = append(b, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
		for b[len(b)-1] == '0' {
			b = b[:len(b)-1]
		}
	}
	return b
}

func formatFloat(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// WriteFlows writes flows.csv: one row per flow; the finish, FCT and slowdown
// of an unfinished flow are empty, and so is the start of a flow that never
// started because it waited on a barrier.
func WriteFlows(w io.Writer, r *sim.Result) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(FlowsHeader + "\n")
	for _, f := range r.Flows {
		bw.WriteString(strconv.Itoa(f.ID))
		bw.WriteByte(',')
		bw.WriteString(f.Src)
		bw.WriteByte(',')
		bw.WriteString(f.Dst)
		bw.WriteByte(',')
		bw.WriteString(strconv.FormatInt(f.Size, 10))
		bw.WriteByte(',')
		if f.Started || f.Start >= 0 {
			bw.WriteString(Nanos(f.Start))
		}
		bw.WriteByte(',')
		if f.Finished {
			bw.WriteString(Nanos(f.Finish))
		}
		bw.WriteByte(',')
		if f.Finished {
			bw.WriteString(Nanos(f.FCT))
		}
		bw.WriteByte(',')
		bw.WriteString(Nanos(f.IdealFCT))
		bw.WriteByte(',')
		if f.Finished {
			bw.WriteString(formatFloat(float64(f.FCT) / float64(f.IdealFCT)))
		}
		bw.WriteByte(',')
		bw.WriteString(f.Algorithm)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// FlowRow is one flows.csv row in JSON (the REST export): the same
// columns, times in nanoseconds, and null where the CSV cell is empty.
type FlowRow struct {
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

// FlowRows are flows as the rows WriteFlows writes.
func FlowRows(flows []sim.FlowResult) []FlowRow {
	ns := func(t sim.Time) *float64 {
		v := float64(t) / 1e3
		return &v
	}
	out := make([]FlowRow, len(flows))
	for i, f := range flows {
		j := FlowRow{FlowID: f.ID, Src: f.Src, Dst: f.Dst, SizeBytes: f.Size, IdealFCTNs: float64(f.IdealFCT) / 1e3, CC: f.Algorithm}
		if f.Started || f.Start >= 0 {
			j.StartNs = ns(f.Start)
		}
		if f.Finished {
			j.FinishNs, j.FCTNs = ns(f.Finish), ns(f.FCT)
			sd := float64(f.FCT) / float64(f.IdealFCT)
			j.Slowdown = &sd
		}
		out[i] = j
	}
	return out
}

// SeriesWriter is a sim.Observer that streams series.csv rows.
type SeriesWriter struct {
	s   *sim.Sim
	w   io.Writer
	buf []byte // rows not yet written (handed to the writing goroutine at seriesFlush bytes)
	err error
	// the goroutine that writes full buffers (writeLoop), started at the
	// first: full buffers go to it, empty ones come back, so that the run
	// goes on while the kernel copies its rows (at 16 hosts a run's
	// series.csv is 55 MB, written in about 30 ms)
	full   chan []byte
	free   chan []byte
	done   chan error
	failed atomic.Bool // a write failed: rows are no longer formatted
	// rows repeat their time (within a batch), their "metric,entity,"
	// (every sample) and, for ports, often their value too (an idle
	// port's queue stays 0 sample after sample), so all three are kept as
	// text: the last time seen; per metric "metric,"; per port metric and
	// port the last row's "metric,port,value\n". Flow entities are
	// numbers, formatted each time: a run may have millions of flows.
	t      sim.Time
	tText  []byte
	metric [][]byte     // "metric," per metric
	ports  [][]portText // per port metric and port
	// the last batch, and its rows' text, which Observe formats a batch
	// into before it copies them to buf. When every row of a batch has one
	// time (a sample), the next batch with the same rows and values (an
	// idle network's sample, the next one: at 16 hosts, 85% of a replay's
	// series.csv) is that text with its times replaced: last and rowAt say
	// which rows and where each row's time is.
	text    []byte
	last    []sim.Sample
	rowAt   []int32
	tLen    int  // the length of the time text in text (with its comma)
	oneTime bool // every row of last has one time: text can be reused
}

// portText is a port metric's last row for one port, less its time:
// "metric,port,value\n", whose value's text starts at pre, and that value
// (as bits: -0 and 0, and NaNs, print differently).
type portText struct {
	row  []byte
	pre  int
	bits uint64
}

// seriesFlush is how many bytes of rows the writer gathers before it
// hands them to be written; seriesBuffers is how many such buffers it
// has: one being filled, the others being written or waiting to be.
const (
	seriesFlush   = 1 << 16
	seriesBuffers = 3
)

// NewSeriesWriter writes the header and returns a writer to subscribe to s.
func NewSeriesWriter(w io.Writer, s *sim.Sim) *SeriesWriter {
	sw := &SeriesWriter{s: s, w: w, buf: make([]byte, 0, seriesFlush+1024)}
	sw.buf = append(sw.buf, SeriesHeader+"\n"...)
	return sw
}

// Observe writes one batch of samples. The rows are written by a goroutine
// of the writer's own: Flush must be called once the run ends.
func (sw *SeriesWriter) Observe(batch []sim.Sample) {
	if sw.err != nil || sw.failed.Load() || len(batch) == 0 {
		return
	}
	if t := batch[0].T; sw.oneTime && sw.repeats(batch, t) {
		if t != sw.t {
			sw.t = t
			sw.tText = append(AppendNanos(sw.tText[:0], t), ',')
		}
		if len(sw.tText) == sw.tLen {
			for _, at := range sw.rowAt {
				copy(sw.text[at:], sw.tText)
			}
			sw.emit(sw.text)
			return
		}
	}
	sw.format(batch)
	sw.emit(sw.text)
}

// repeats reports whether batch has last's rows and values, every one at
// time t.
func (sw *SeriesWriter) repeats(batch []sim.Sample, t sim.Time) bool {
	last := sw.last
	if len(batch) != len(last) {
		return false
	}
	for i := range batch {
		x, y := &batch[i], &last[i]
		if x.T != t || x.Metric != y.Metric || x.Entity != y.Entity || math.Float64bits(x.Value) != math.Float64bits(y.Value) {
			return false
		}
	}
	return true
}

// format makes batch's rows into text, and keeps the batch as last when
// its rows have one time.
func (sw *SeriesWriter) format(batch []sim.Sample) {
	b, at := sw.text[:0], sw.rowAt[:0]
	one := true
	for i := range batch {
		x := &batch[i]
		if x.T != sw.t || sw.tText == nil {
			sw.t = x.T
			sw.tText = append(AppendNanos(sw.tText[:0], x.T), ',')
		}
		one = one && x.T == batch[0].T
		at = append(at, int32(len(b)))
		b = append(b, sw.tText...)
		var pt *portText
		if m, e := int(x.Metric), uint(x.Entity); m < len(sw.ports) && e < uint(len(sw.ports[m])) && sw.ports[m][e].row != nil {
			pt = &sw.ports[m][e] // the common case, inline
		} else {
			pt = sw.portText(x.Metric, x.Entity)
		}
		if pt != nil {
			if v := math.Float64bits(x.Value); v != pt.bits || len(pt.row) == pt.pre {
				pt.row = append(appendValue(pt.row[:pt.pre], x.Value), '\n')
				pt.bits = v
			}
			b = append(b, pt.row...)
			continue
		}
		b = append(b, sw.metricText(x.Metric)...)
		if sw.s.PortMetric(x.Metric) { // a port beyond the cache's range
			b = append(b, sw.s.PortName(x.Entity)...)
		} else {
			b = strconv.AppendInt(b, int64(x.Entity), 10)
		}
		b = append(b, ',')
		b = append(appendValue(b, x.Value), '\n')
	}
	sw.text, sw.rowAt = b, at
	sw.oneTime, sw.tLen = one, len(sw.tText)
	if one { // only a batch of one time is ever reused
		sw.last = append(sw.last[:0], batch...)
	}
}

// emit adds text to the rows to be written, handing full buffers to the
// writing goroutine.
func (sw *SeriesWriter) emit(text []byte) {
	b := sw.buf
	for len(text) > 0 {
		if len(b) >= seriesFlush {
			b = sw.handOver(b)
		}
		n := min(len(text), seriesFlush-len(b))
		b = append(b, text[:n]...)
		text = text[n:]
	}
	sw.buf = b
}

// metricText returns "metric,".
func (sw *SeriesWriter) metricText(m sim.Metric) []byte {
	for int(m) >= len(sw.metric) {
		sw.metric = append(sw.metric, nil)
		sw.ports = append(sw.ports, nil)
	}
	if sw.metric[m] == nil {
		sw.metric[m] = append([]byte(sw.s.MetricName(m)), ',')
	}
	return sw.metric[m]
}

// portText makes port metric m's text for port e and returns it, or nil
// when m is not a port metric (its entities are flows) or e is out of the
// cached range.
func (sw *SeriesWriter) portText(m sim.Metric, e int32) *portText {
	mt := sw.metricText(m)
	if !sw.s.PortMetric(m) || e < 0 || int(e) >= 1<<20 {
		return nil
	}
	ps := sw.ports[m]
	for int(e) >= len(ps) {
		ps = append(ps, portText{})
	}
	sw.ports[m] = ps
	pt := &ps[e]
	pt.row = append(append(append([]byte(nil), mt...), sw.s.PortName(e)...), ',')
	pt.pre = len(pt.row)
	return pt
}

// appendValue formats v as strconv.FormatFloat(v, 'f', -1, 64) does; whole
// numbers (most samples: bytes, counts, flags) take the integer path, which
// prints the same digits.
func appendValue(b []byte, v float64) []byte {
	if v == math.Trunc(v) && math.Abs(v) < 1<<53 && (v != 0 || !math.Signbit(v)) {
		return strconv.AppendInt(b, int64(v), 10)
	}
	return strconv.AppendFloat(b, v, 'f', -1, 64)
}

// handOver gives the full buffer b to the writing goroutine (starting it
// the first time) and returns an empty one.
func (sw *SeriesWriter) handOver(b []byte) []byte {
	if sw.full == nil {
		sw.full = make(chan []byte, seriesBuffers)
		sw.free = make(chan []byte, seriesBuffers)
		sw.done = make(chan error, 1)
		for range seriesBuffers - 1 {
			sw.free <- make([]byte, 0, seriesFlush+1024)
		}
		go writeLoop(sw.w, sw.full, sw.free, sw.done, &sw.failed)
	}
	sw.full <- b
	return <-sw.free
}

// writeLoop writes the buffers that come on full, in order, and gives each
// back on free; after a failed write it only gives them back. It sends the
// first error (or nil) on done once full is closed.
func writeLoop(w io.Writer, full <-chan []byte, free chan<- []byte, done chan<- error, failed *atomic.Bool) {
	var err error
	for b := range full {
		if err == nil {
			if _, err = w.Write(b); err != nil {
				failed.Store(true)
			}
		}
		free <- b[:0]
	}
	done <- err
}

// Flush writes what is buffered, waits until every row is written, and
// returns the first error seen. The writer can be used again after it.
func (sw *SeriesWriter) Flush() error {
	if sw.full != nil {
		close(sw.full)
		err := <-sw.done
		sw.full, sw.free, sw.done = nil, nil, nil
		if sw.err == nil {
			sw.err = err
		}
	}
	if sw.err != nil {
		return sw.err
	}
	if len(sw.buf) > 0 {
		_, sw.err = sw.w.Write(sw.buf)
		sw.buf = sw.buf[:0]
	}
	return sw.err
}

// Stats are the summary statistics of a set of values.
type Stats struct {
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P95  float64 `json:"p95"`
	P99  float64 `json:"p99"`
}

// Bucket is one flow-size bucket of the slowdown summary.
type Bucket struct {
	Lo    int64    `json:"lo_bytes"`
	Hi    *int64   `json:"hi_bytes"` // nil: no upper bound
	Count int      `json:"count"`
	Mean  *float64 `json:"mean"`
	P50   *float64 `json:"p50"`
	P95   *float64 `json:"p95"`
	P99   *float64 `json:"p99"`
}

// QueueStats are a port's time-weighted queue percentiles, in bytes.
type QueueStats struct {
	P50 int64 `json:"p50"`
	P99 int64 `json:"p99"`
	Max int64 `json:"max"`
}

// Summary is summary.json.
type Summary struct {
	Scenario          json.RawMessage       `json:"scenario,omitempty"`
	WallSeconds       float64               `json:"wall_seconds"`
	SimSeconds        float64               `json:"sim_seconds"`
	Events            uint64                `json:"events"`
	EventsPerSecond   float64               `json:"events_per_second"`
	EndReason         string                `json:"end_reason"`
	FlowsTotal        int                   `json:"flows_total"`
	FlowsFinished     int                   `json:"flows_finished"`
	FlowsUnfinished   int                   `json:"flows_unfinished"`
	FCTSlowdown       *Stats                `json:"fct_slowdown"`
	FCTSlowdownBySize []Bucket              `json:"fct_slowdown_by_size"`
	Queues            map[string]QueueStats `json:"queues"`
	Utilization       map[string]float64    `json:"utilization"`
	PFCPauseFraction  map[string]float64    `json:"pfc_pause_fraction"`
	// CreditDrops counts the credits each port's full credit queue dropped
	// (ExpressPass), for the ports that dropped any; absent without credits.
	CreditDrops   map[string]int64      `json:"credit_drops,omitempty"`
	Drops         int64                 `json:"drops"`
	Jain          *float64              `json:"jain"`
	GoodputGbps   float64               `json:"goodput_gbps"` // finished flows' payload × 8 / sim time (0 if none)
	MaxBaseRTTns  float64               `json:"max_base_rtt_ns"`
	MaxBDPBytes   int64                 `json:"max_bdp_bytes"`
	Retransmitted int64                 `json:"retransmitted_bytes"`
	SwitchQueues  SwitchQueues          `json:"switch_queues"`
	SeriesStats   map[string]SeriesStat `json:"series_stats"`
}

// SwitchQueues is the queue-length distribution over every switch egress
// port, time-weighted (the MPCC thesis' "queue CDF over all switches").
type SwitchQueues struct {
	Ports int   `json:"ports"`
	P50   int64 `json:"p50"`
	P90   int64 `json:"p90"`
	P99   int64 `json:"p99"`
	P999  int64 `json:"p999"`
	Max   int64 `json:"max"`
	// CDF is [[bytes, fraction of port-time with at most that queue], ...].
	CDF [][2]float64 `json:"cdf"`
}

// SeriesStat summarises one event series over the run (MPCC's qp_solve_ns).
type SeriesStat struct {
	Count int64    `json:"count"`
	Mean  *float64 `json:"mean"`
	P50   *float64 `json:"p50"`
	P99   *float64 `json:"p99"`
	Max   *float64 `json:"max"`
}

// Size buckets of fct_slowdown_by_size: <10 KB, 10–100 KB, 100 KB–1 MB,
// 1–10 MB, ≥10 MB (decimal units).
var bucketEdges = []int64{0, 10_000, 100_000, 1_000_000, 10_000_000}

// Percentile is the nearest-rank percentile HPCC's analysis uses: v[int(n*p)]
// of the sorted values (the last one when that index is n).
func Percentile(sorted []float64, p float64) float64 {
	i := int(float64(len(sorted)) * p)
	if i >= len(sorted) {
		i = len(sorted) - 1
	}
	return sorted[i]
}

func statsOf(v []float64) Stats {
	sort.Float64s(v)
	sum := 0.0
	for _, x := range v {
		sum += x
	}
	return Stats{Mean: sum / float64(len(v)), P50: Percentile(v, 0.5), P95: Percentile(v, 0.95), P99: Percentile(v, 0.99)}
}

// Summarize builds summary.json. scenario is the normalised scenario; wall
// is the run's wall-clock time.
func Summarize(r *sim.Result, scenario json.RawMessage, wall time.Duration) *Summary {
	s := &Summary{
		Scenario:         scenario,
		WallSeconds:      wall.Seconds(),
		SimSeconds:       float64(r.SimTime) / float64(sim.Second),
		Events:           r.Events,
		EndReason:        r.EndReason,
		FlowsTotal:       len(r.Flows),
		Queues:           map[string]QueueStats{},
		Utilization:      map[string]float64{},
		PFCPauseFraction: map[string]float64{},
		Drops:            r.Drops,
		Jain:             r.Jain,
		MaxBaseRTTns:     float64(r.MaxBaseRTT) / float64(sim.Nanosecond),
		MaxBDPBytes:      r.MaxBDP,
		Retransmitted:    r.Retransmitted,
	}
	if wall > 0 {
		s.EventsPerSecond = float64(r.Events) / wall.Seconds()
	}
	var all []float64
	by := make([][]float64, len(bucketEdges))
	var payload int64
	for _, f := range r.Flows {
		if !f.Finished {
			continue
		}
		s.FlowsFinished++
		payload += f.Size
		sd := math.Max(1, float64(f.FCT)/float64(f.IdealFCT)) // clamped, as HPCC's analysis
		all = append(all, sd)
		b := sort.Search(len(bucketEdges), func(i int) bool { return bucketEdges[i] > f.Size }) - 1
		by[b] = append(by[b], sd)
	}
	s.FlowsUnfinished = s.FlowsTotal - s.FlowsFinished
	if s.SimSeconds > 0 {
		s.GoodputGbps = float64(payload) * 8 / s.SimSeconds / 1e9
	}
	if len(all) > 0 {
		st := statsOf(all)
		s.FCTSlowdown = &st
	}
	for i, lo := range bucketEdges {
		b := Bucket{Lo: lo, Count: len(by[i])}
		if i+1 < len(bucketEdges) {
			hi := bucketEdges[i+1]
			b.Hi = &hi
		}
		if len(by[i]) > 0 {
			st := statsOf(by[i])
			b.Mean, b.P50, b.P95, b.P99 = &st.Mean, &st.P50, &st.P95, &st.P99
		}
		s.FCTSlowdownBySize = append(s.FCTSlowdownBySize, b)
	}
	q := r.SwitchQueues
	s.SwitchQueues = SwitchQueues{Ports: q.Ports, P50: q.P50, P90: q.P90, P99: q.P99, P999: q.P999, Max: q.Max,
		CDF: [][2]float64{}}
	for _, c := range q.CDF {
		s.SwitchQueues.CDF = append(s.SwitchQueues.CDF, [2]float64{float64(c.Bytes), c.Fraction})
	}
	s.SeriesStats = map[string]SeriesStat{}
	for _, st := range r.SeriesStats {
		ss := SeriesStat{Count: st.Count}
		if st.Count > 0 {
			st := st
			ss.Mean, ss.P50, ss.P99, ss.Max = &st.Mean, &st.P50, &st.P99, &st.Max
		}
		s.SeriesStats[st.Name] = ss
	}
	for _, p := range r.Ports {
		s.Queues[p.Name] = QueueStats{P50: p.QueueP50, P99: p.QueueP99, Max: p.QueueMax}
		s.Utilization[p.Name] = p.Utilization
		s.PFCPauseFraction[p.Name] = p.PauseFraction
		if p.CreditDrops > 0 {
			if s.CreditDrops == nil {
				s.CreditDrops = map[string]int64{}
			}
			s.CreditDrops[p.Name] = p.CreditDrops
		}
	}
	return s
}

// WriteSummary writes summary.json, indented.
func WriteSummary(w io.Writer, s *Summary) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(s)
}
