package runs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"time"

	"cclab/scenarios"
	"cclab/sim"
	"cclab/sim/report"
	"cclab/store"
)

// Sink is where a run's results go as it produces them: the store in this
// server (*store.DB implements it); a worker on another machine would send
// the same calls over the wire.
type Sink interface {
	StartRun(ctx context.Context, id string, at time.Time) error
	AppendSeries(ctx context.Context, id string, chunks []store.Chunk, p store.Progress) error
	SetStatus(ctx context.Context, id, status, msg string) error
	SetSpeed(ctx context.Context, id string, speed float64) error
	AddRunEvent(ctx context.Context, id string, ev store.RunEvent, scenario, params []byte) error
	FinishRun(ctx context.Context, id string, f store.Finish) error
}

// opKind is a control request to a live run.
type opKind int

const (
	opPause opKind = iota
	opResume
	opCancel
	opParams
	opSpeed
)

type op struct {
	kind   opKind
	params []byte  // opParams: a JSON object of parameter values
	speed  float64 // opSpeed: 0 = max
	reply  chan opResult
}

type opResult struct {
	change *Change
	err    error
}

// run is one unit of work the manager owns while it is queued, running or
// paused: a simulation of a compiled scenario. Its simulation runs on one
// goroutine (execute), which alone touches the engine; everything else
// talks to it through ops and reads it through its hub.
type run struct {
	id       string
	client   string
	compiled *Compiled
	scenario []byte // the run's effective scenario (canonical), live changes added
	params   map[string]float64
	speed    float64
	bucketPS int64
	hub      *Hub
	ops      chan op
	remote   chan remoteReq // a remote run's reports (nil for a local run)
	changes  int            // live changes made
	// started is closed when the run leaves the queue; done when it
	// leaves the manager (it ended, or was cancelled while queued).
	started chan struct{}
	done    chan struct{}
}

// observer turns the engine's samples into the recorder's series.
type observer struct {
	s       *sim.Sim
	rec     *store.Recorder
	idx     [][]int32 // [metric][entity] -> series index + 1
	newKeys []SeriesKey
}

func (o *observer) Observe(batch []sim.Sample) {
	for _, x := range batch {
		m, e := int(x.Metric), int(x.Entity)
		for len(o.idx) <= m {
			o.idx = append(o.idx, nil)
		}
		row := o.idx[m]
		if e >= len(row) {
			n := max(2*len(row), e+1, 64)
			grown := make([]int32, n)
			copy(grown, row)
			row = grown
			o.idx[m] = row
		}
		i := row[e]
		if i == 0 {
			name := o.s.MetricName(x.Metric)
			ent := o.s.EntityName(x.Metric, x.Entity)
			agg := store.AggMean
			if report.MetricAgg(name) == "max" {
				agg = store.AggMax
			}
			idx := o.rec.Series(name, ent, agg)
			i = int32(idx + 1)
			row[e] = i
			o.newKeys = append(o.newKeys, SeriesKey{Index: idx, Metric: name, Entity: ent})
		}
		o.rec.Add(int(i-1), int64(x.T), x.Value)
	}
}

// chartBucket picks the level-1 bucket width: a power-of-two multiple of
// the sampling interval that leaves at most about chartPoints points per
// series over the run's (estimated) simulated time.
func chartBucket(cfg *sim.Config, c Cost) int64 {
	iv := int64(cfg.Telemetry.Interval)
	if iv <= 0 {
		iv = int64(10 * sim.Microsecond)
	}
	steps := c.SimSeconds * float64(sim.Second) / float64(iv)
	f := int64(1)
	for float64(f)*chartPoints < steps && f < 1<<30 {
		f *= 2
	}
	return iv * f
}

// chartPoints is the target number of decimated points per series.
const chartPoints = 1000

// maxChanges bounds the live parameter changes of one run: each is stored
// with the run's scenario and replayed with it.
const maxChanges = 1000

// execution is one run's simulation in progress: the stepper of Drive
// that applies control requests, paces, enforces the server's limits,
// publishes to viewers and writes to the sink.
type execution struct {
	r    *run
	cfg  Config    // the manager's (or a worker's) settings
	pub  publisher // the run's hub, or a worker's relay to the manager's
	s    *sim.Sim
	ctx  context.Context // cancelled when the server shuts down
	bg   context.Context // for writes that must happen even then
	log  *slog.Logger
	rec  *store.Recorder
	obs  *observer
	sink Sink

	pending   []livePoint // decimated points not yet published
	status    string      // running or paused
	paused    bool
	pausedFor time.Duration
	pausedAt  time.Time
	wallStart time.Time
	// pacing anchors: at wall time paceWall the run was at simulated paceSim
	paceWall time.Time
	paceSim  sim.Time

	lastFlush, lastProgress time.Time
	end, endMsg             string    // the status the run ends with, once known
	err                     error     // a failure (storing series, the engine)
	samples                 int64     // samples flushed so far
	lastStep                time.Time // a paced run's last step
	// slots lends the run's slot while it sleeps (nil: a worker's run,
	// whose slots are the worker's); lent while it does
	slots *Manager
	lent  bool
	// speed measures the engine on this server (nil: a worker's run); a
	// run that was ever paced is not timed (pauses are not in its wall time)
	speed   *Speed
	untimed bool
}

// execute simulates r to its end, cancellation or the server's shutdown,
// and stores the results. ctx is cancelled when the server shuts down.
func (r *run) execute(ctx context.Context, m *Manager) {
	log := m.log.With("run", r.id)
	bg := context.WithoutCancel(ctx)
	s, err := r.compiled.Engine()
	if err != nil {
		r.failEarly(m, fmt.Errorf("building the simulation: %w", err))
		return
	}
	x := &execution{r: r, cfg: m.cfg, pub: r.hub, s: s, ctx: ctx, bg: bg, log: log, sink: m.db, status: store.StatusRunning, end: store.StatusRunning}
	x.slots = m
	x.speed, x.untimed = m.speed, r.speed != 0
	x.wallStart = time.Now()
	if err := x.sink.StartRun(bg, r.id, x.wallStart); err != nil {
		r.failEarly(m, fmt.Errorf("marking the run started: %w", err))
		return
	}
	log.Info("run started", "flows", len(r.compiled.Config.Flows), "speed", SpeedJSON(r.speed))
	x.run()
}

// run simulates to the end and stores the results.
func (x *execution) run() {
	r, s := x.r, x.s
	x.rec = store.NewRecorder(r.bucketPS)
	x.obs = &observer{s: s, rec: x.rec}
	s.Subscribe(x.obs)
	x.rec.SetOnPoint(func(i int, t int64, v float64) { x.pending = append(x.pending, livePoint{i, t, v}) })
	x.paceWall, x.paceSim = x.wallStart, s.Now()
	x.lastFlush = x.wallStart

	if err := Drive(s, x); err != nil && x.err == nil {
		x.err = err
	}
	x.finish()
}

// wall is the run's wall time so far, pauses left out.
func (x *execution) wall() time.Duration {
	w := time.Since(x.wallStart) - x.pausedFor
	if x.paused {
		w -= time.Since(x.pausedAt)
	}
	return w
}

func (x *execution) progress() *Progress {
	w := x.wall()
	s := x.s
	cfg := x.r.compiled.Config
	p := &Progress{Type: "progress", Status: x.status, SimNs: float64(s.Now()) / 1e3, Events: s.Events(),
		FlowsFinished: s.FlowsFinished(), FlowsTotal: len(cfg.Flows), WallSeconds: w.Seconds(), Speed: SpeedJSON(x.r.speed)}
	p.Progress = progressFraction(s, cfg)
	if w > 0 {
		p.EventsPerSecond = float64(s.Events()) / w.Seconds()
	}
	return p
}

func (x *execution) storeProgress(p *Progress) store.Progress {
	return store.Progress{Fraction: p.Progress, SimPS: int64(x.s.Now()), Events: x.s.Events(), WallSeconds: p.WallSeconds}
}

// publish hands viewers what is new (progress at most every ProgressEvery
// unless forced) and writes the series to the sink every FlushEvery. The
// end of a run forces the viewers' part only: its series go with the
// results in one write (a run shorter than FlushEvery then stores one chunk
// per series and level, which needs no compaction).
func (x *execution) publish(force bool) {
	x.publishLive(force)
	if now := time.Now(); now.Sub(x.lastFlush) >= x.cfg.FlushEvery {
		x.lastFlush = now
		x.samples += int64(x.rec.Pending())
		if err := x.sink.AppendSeries(x.bg, x.r.id, x.rec.Flush(false), x.storeProgress(x.progress())); err != nil && x.err == nil {
			x.err = fmt.Errorf("storing series: %w", err)
		}
	}
}

// publishLive hands viewers what is new: progress at most every
// ProgressEvery unless forced.
func (x *execution) publishLive(force bool) {
	now := time.Now()
	var p *Progress
	if force || now.Sub(x.lastProgress) >= x.cfg.ProgressEvery {
		p = x.progress()
		x.lastProgress = now
	}
	if len(x.obs.newKeys) > 0 || len(x.pending) > 0 || p != nil {
		x.pub.publish(x.obs.newKeys, x.pending, p)
		x.obs.newKeys = x.obs.newKeys[:0]
		x.pending = x.pending[:0]
	}
}

// Before applies the control requests waiting, then decides the slice:
// stop (cancelled, shut down, over a limit, failed), wait (paused, or the
// pacing clock is behind), or run up to the pacing target.
func (x *execution) Before(s *sim.Sim, proposed sim.Time) (sim.Time, bool) {
	if x.err != nil {
		return 0, true
	}
	for drained := false; !drained; {
		select {
		case o := <-x.r.ops:
			x.handle(o)
		default:
			drained = true
		}
	}
	if x.end != store.StatusRunning || x.err != nil {
		return 0, true
	}
	if x.ctx.Err() != nil {
		x.end, x.endMsg = store.StatusInterrupted, "the server shut down before the run finished; results cover the simulated time reached"
		return 0, true
	}
	// the server's limits hold while the run goes, whatever the estimate
	// said before it started
	limits := x.cfg.Limits
	if limits.MaxSimTime > 0 && s.Now() >= limits.MaxSimTime {
		x.end, x.endMsg = store.StatusCancelled, fmt.Sprintf("stopped at %s of simulated time, this server's limit (max-sim-time)", scenarios.FormatTime(limits.MaxSimTime))
		return 0, true
	}
	if max := limits.MaxSamples; max > 0 && float64(x.samples+int64(x.rec.Pending())) > max {
		x.end, x.endMsg = store.StatusCancelled, fmt.Sprintf("stopped after %s telemetry samples, this server's limit (max-samples)", human(max))
		return 0, true
	}
	limit := proposed
	if limits.MaxSimTime > 0 && limit > limits.MaxSimTime {
		limit = limits.MaxSimTime
	}
	if x.paused {
		return s.Now(), false
	}
	if x.r.speed > 0 {
		target := x.paceSim + sim.Time(x.r.speed*float64(sim.Microsecond)*time.Since(x.paceWall).Seconds())
		// step once per pacing tick, not in slivers as the clock creeps
		// on: a paced run stepped to every new target spun a core (1.85 s
		// of CPU in 2 s at 10 µs per second)
		if target < limit && time.Since(x.lastStep) < paceTick {
			return s.Now(), false
		}
		x.lastStep = time.Now()
		limit = min(limit, target)
	}
	if limit > s.Now() {
		x.reclaim()
	}
	return limit, false
}

// lend gives the run's slot to the queue while it sleeps; reclaim takes it
// back before it steps (Manager.lendSlot).
func (x *execution) lend() {
	if x.slots != nil && !x.lent {
		x.lent = true
		x.slots.lendSlot()
	}
}

func (x *execution) reclaim() {
	if x.lent {
		x.lent = false
		x.slots.reclaimSlot()
	}
}

// paceTick is the pacing clock's period: a paced run steps at most once
// per tick.
const paceTick = 10 * time.Millisecond

// Wait publishes what is new, then waits for the pacing clock (10 ms), a
// control request or the shutdown, its slot lent to the queue meanwhile.
func (x *execution) Wait() {
	x.publish(false)
	x.lend()
	select {
	case o := <-x.r.ops:
		x.handle(o)
	case <-x.ctx.Done():
	case <-time.After(paceTick):
	}
}

func (x *execution) After(*sim.Sim) { x.publish(false) }

// handle applies one control request at this event boundary and answers
// it.
func (x *execution) handle(o op) {
	var res opResult
	r := x.r
	switch o.kind {
	case opPause:
		if !x.paused {
			x.paused, x.pausedAt, x.status = true, time.Now(), store.StatusPaused
			res.err = x.sink.SetStatus(x.bg, r.id, x.status, "")
			x.pub.publish(nil, nil, x.progress())
		}
	case opResume:
		if x.paused {
			d := time.Since(x.pausedAt)
			x.paused, x.status = false, store.StatusRunning
			x.pausedFor += d
			x.paceWall = x.paceWall.Add(d)
			res.err = x.sink.SetStatus(x.bg, r.id, x.status, "")
			x.pub.publish(nil, nil, x.progress())
		}
	case opCancel:
		x.end = store.StatusCancelled
	case opSpeed:
		r.speed = o.speed
		x.untimed = x.untimed || o.speed != 0
		// re-anchor the pacing at this instant of the run's own time (while
		// paused, the instant it paused: resuming shifts it)
		x.paceWall, x.paceSim = time.Now(), x.s.Now()
		if x.paused {
			x.paceWall = x.pausedAt
		}
		res.err = x.sink.SetSpeed(x.bg, r.id, o.speed)
		x.pub.publish(nil, nil, x.progress())
	case opParams:
		if r.changes >= maxChanges {
			res.err = limited(TooMany, "max-changes", "",
				"this run already has %d live changes, the most one run may have", r.changes)
		} else {
			res.change, res.err = x.applyParams(o.params)
		}
	}
	o.reply <- res
}

// finish stops the engine, keeps everything measured whatever ended the
// run, and writes the results in one transaction.
func (x *execution) finish() {
	x.reclaim()
	r, s := x.r, x.s
	if !s.Done() {
		s.Stop()
	}
	switch {
	case x.err != nil:
		x.end, x.endMsg = store.StatusFailed, x.err.Error()
		x.log.Error("run failed", "err", x.err)
	case x.end == store.StatusRunning:
		x.end = store.StatusDone
	}
	x.publishLive(true)
	w := x.wall()
	res := s.Result()
	sum := report.Summarize(res, json.RawMessage(r.scenario), w)
	var sumBuf bytes.Buffer
	if err := report.WriteSummary(&sumBuf, sum); err != nil {
		x.end, x.endMsg = store.StatusFailed, fmt.Sprintf("writing the summary: %v", err)
	}
	if x.err != nil && x.end != store.StatusFailed {
		x.end, x.endMsg = store.StatusFailed, x.err.Error()
	}
	chunks := x.rec.Flush(true)
	x.pub.publish(x.obs.newKeys, x.pending, nil)
	p := x.progress()
	p.Status = x.end
	compacter, deferred := x.sink.(interface {
		CompactRun(ctx context.Context, id string) error
	})
	fin := store.Finish{Status: x.end, Error: x.endMsg, At: time.Now(), Progress: x.storeProgress(p), Chunks: chunks,
		Flows: res.Flows, Summary: sumBuf.Bytes(), DeferCompaction: deferred}
	if err := x.sink.FinishRun(x.bg, r.id, fin); err != nil {
		x.log.Error("storing the results", "err", err)
		x.end, x.endMsg = store.StatusFailed, fmt.Sprintf("storing the results: %v", err)
		if err := x.sink.FinishRun(x.bg, r.id, store.Finish{Status: x.end, Error: x.endMsg, At: time.Now()}); err != nil {
			x.log.Error("marking the run failed", "err", err)
		}
	}
	x.pub.publish(nil, nil, p)
	final := Final{Type: "done", Status: x.end, Error: x.endMsg, Summary: sumBuf.Bytes()}
	if x.end == store.StatusFailed {
		final.Type = "failed"
	}
	x.pub.finish(final)
	r.rejectOps()
	if deferred {
		// after the viewers know the run ended: a big run's series take
		// seconds to compact, which a Stop would otherwise wait for
		if err := compacter.CompactRun(x.bg, r.id); err != nil {
			x.log.Error("compacting the series", "err", err)
		}
	}
	if !x.untimed && x.end != store.StatusFailed {
		c := r.compiled.Cost
		x.speed.Add(c.Hosts, c.learned, s.Events(), w.Seconds())
	}
	x.log.Info("run ended", "status", x.end, "sim_ms", float64(s.Now())/float64(sim.Millisecond),
		"events", s.Events(), "wall_s", w.Seconds(), "flows_finished", s.FlowsFinished())
}

// failEarly records a run that could not start.
func (r *run) failEarly(m *Manager, err error) {
	m.log.Error("run failed", "run", r.id, "err", err)
	msg := err.Error()
	if ferr := m.db.FinishRun(context.Background(), r.id, store.Finish{Status: store.StatusFailed, Error: msg, At: time.Now()}); ferr != nil {
		m.log.Error("storing the failure", "run", r.id, "err", ferr)
	}
	r.hub.finish(Final{Type: "failed", Status: store.StatusFailed, Error: msg})
	r.rejectOps()
}

// rejectOps answers control requests that arrive after the run ended.
func (r *run) rejectOps() {
	for {
		select {
		case o := <-r.ops:
			o.reply <- opResult{err: errorf(Conflict, "status", "the run has ended")}
		default:
			return
		}
	}
}

// applyParams applies a live parameter change now and records it as a
// scenario event at the current simulated time. It is stored first and
// applied second, so the stored scenario never misses a change the run
// made (a value the scenario accepts is one the algorithm accepts).
func (x *execution) applyParams(body []byte) (*Change, error) {
	r, s := x.r, x.s
	at := s.Now()
	doc, idx, err := scenarios.InsertParamsEvent(r.scenario, at, body)
	if err != nil {
		return nil, paramsError(err, -1)
	}
	sc, err := scenarios.Parse(doc)
	if err != nil {
		return nil, paramsError(err, idx)
	}
	ev := sc.Events[idx]
	canon, err := sc.Canonical()
	if err != nil {
		return nil, err
	}
	params := maps.Clone(r.params)
	maps.Copy(params, ev.Params)
	pj, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	rev := store.RunEvent{AtPS: int64(at), Params: ev.Params, Wall: time.Now()}
	if err := x.sink.AddRunEvent(x.bg, r.id, rev, canon, pj); err != nil {
		return nil, fmt.Errorf("recording the change: %w", err)
	}
	if err := s.ApplyParams(-1, ev.Params); err != nil {
		// the registry and the algorithm disagree: a bug; the change is
		// recorded, so a replay shows the same refusal
		x.log.Error("a validated live change was refused", "params", ev.Params, "err", err)
		return nil, fmt.Errorf("applying the change: %w", err)
	}
	r.scenario, r.params = canon, params
	r.changes++
	c := Change{Type: "parameter-changed", Seq: r.changes, AtNs: float64(at) / 1e3, Params: ev.Params}
	x.pub.addChange(c)
	x.log.Info("parameters changed", "at_ns", c.AtNs, "params", ev.Params)
	return &c, nil
}

// paramsError renames the scenario fields of a bad live change to the
// fields of the request body (events[i].params.wr -> wr).
func paramsError(err error, idx int) error {
	var se *scenarios.Error
	if !errors.As(err, &se) {
		return err
	}
	prefix := fmt.Sprintf("events[%d].params", idx)
	e := &Error{Kind: Invalid}
	for _, x := range se.Errors {
		f := x.Field
		switch {
		case f == prefix:
			f = ""
		case len(f) > len(prefix) && f[:len(prefix)+1] == prefix+".":
			f = f[len(prefix)+1:]
		case idx >= 0:
			continue // a problem elsewhere in the scenario is not this request's
		}
		e.Errors = append(e.Errors, FieldError{Field: f, Msg: x.Error})
	}
	if len(e.Errors) == 0 {
		return errorf(Invalid, "", "%v", err)
	}
	return e
}

// progressFraction is the simulated time reached over the duration; a run
// without a duration counts finished flows instead.
func progressFraction(s *sim.Sim, cfg *sim.Config) float64 {
	if s.Done() {
		return 1
	}
	if cfg.Duration > 0 {
		return min(1, float64(s.Now())/float64(cfg.Duration))
	}
	if len(cfg.Flows) == 0 {
		return 0
	}
	return float64(s.FlowsFinished()) / float64(len(cfg.Flows))
}
