package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"time"

	"cclab/scenarios"
	"cclab/sim"
	"cclab/sim/report"
	"cclab/store"
)

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
	change *changeMsg
	err    error
}

// livePoint is a decimated point on its way from the simulation to the hub.
type livePoint struct {
	I int
	T int64
	V float64
}

// liveRun is a run the manager owns: queued, running or paused. Its
// simulation runs on one goroutine (run), which alone touches the engine;
// everything else talks to it through ops.
type liveRun struct {
	id       string
	m        *Manager
	client   string
	cfg      *sim.Config
	scenario []byte // the run's effective scenario (canonical), live changes added
	params   map[string]float64
	speed    float64
	bucketPS int64
	hub      *hub
	ops      chan op
	changes  int // live changes made
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
	newKeys []seriesKey
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
			if name == "queue_bytes" || name == "pfc_pause" {
				agg = store.AggMax
			}
			idx := o.rec.Series(name, ent, agg)
			i = int32(idx + 1)
			row[e] = i
			o.newKeys = append(o.newKeys, seriesKey{Index: idx, Metric: name, Entity: ent})
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

// maxChanges bounds the live parameter changes of one run: each is
// stored with the run's scenario and replayed with it.
const maxChanges = 1000

// run simulates lr to its end, cancellation or the server's shutdown, and
// stores the results. ctx is cancelled when the server shuts down.
func (lr *liveRun) run(ctx context.Context) {
	m := lr.m
	log := m.log.With("run", lr.id)
	bg := context.WithoutCancel(ctx) // writes that must happen even at shutdown
	s, err := sim.New(*lr.cfg)
	if err != nil {
		lr.failEarly(fmt.Errorf("building the simulation: %w", err))
		return
	}
	wallStart := time.Now()
	if err := m.db.StartRun(bg, lr.id, wallStart); err != nil {
		lr.failEarly(fmt.Errorf("marking the run started: %w", err))
		return
	}
	log.Info("run started", "flows", len(lr.cfg.Flows), "speed", speedJSON(lr.speed))
	rec := store.NewRecorder(lr.bucketPS)
	obs := &observer{s: s, rec: rec}
	s.Subscribe(obs)
	var pending []livePoint
	rec.SetOnPoint(func(i int, t int64, v float64) { pending = append(pending, livePoint{i, t, v}) })

	status := store.StatusRunning
	paused := false
	var pausedFor time.Duration
	var pausedAt time.Time
	// wall is the run's wall time so far, pauses left out
	wall := func() time.Duration {
		w := time.Since(wallStart) - pausedFor
		if paused {
			w -= time.Since(pausedAt)
		}
		return w
	}
	// pacing anchors: at wall time paceWall the run was at simulated paceSim
	paceWall, paceSim := wallStart, s.Now()
	slice := 10 * sim.Microsecond
	lastFlush, lastProgress := wallStart, time.Time{}
	end, endMsg := store.StatusRunning, ""
	var runErr error
	var samples int64
	simLimit := m.cfg.Limits.MaxSimTime

	progress := func() *progressMsg {
		w := wall()
		p := &progressMsg{Type: "progress", Status: status, SimNs: float64(s.Now()) / 1e3, Events: s.Events(),
			FlowsFinished: s.FlowsFinished(), FlowsTotal: len(lr.cfg.Flows), WallSeconds: w.Seconds(), Speed: speedJSON(lr.speed)}
		p.Progress = progressFraction(s, lr.cfg)
		if w > 0 {
			p.EventsPerSecond = float64(s.Events()) / w.Seconds()
		}
		return p
	}
	storeProgress := func(p *progressMsg) store.Progress {
		return store.Progress{Fraction: p.Progress, SimPS: int64(s.Now()), Events: s.Events(), WallSeconds: p.WallSeconds}
	}
	publish := func(force bool) {
		now := time.Now()
		var p *progressMsg
		if force || now.Sub(lastProgress) >= m.cfg.FrameEvery {
			p = progress()
			lastProgress = now
		}
		if len(obs.newKeys) > 0 || len(pending) > 0 || p != nil {
			lr.hub.publish(obs.newKeys, pending, p)
			obs.newKeys = obs.newKeys[:0]
			pending = pending[:0]
		}
		if force || now.Sub(lastFlush) >= m.cfg.FlushEvery {
			lastFlush = now
			if p == nil {
				p = progress()
			}
			samples += int64(rec.Pending())
			if err := m.db.AppendSeries(bg, lr.id, rec.Flush(false), storeProgress(p)); err != nil && runErr == nil {
				runErr = fmt.Errorf("storing series: %w", err)
			}
		}
	}

	handle := func(o op) {
		var res opResult
		switch o.kind {
		case opPause:
			if !paused {
				paused, pausedAt, status = true, time.Now(), store.StatusPaused
				res.err = m.db.SetStatus(bg, lr.id, status, "")
				lr.hub.publish(nil, nil, progress())
			}
		case opResume:
			if paused {
				d := time.Since(pausedAt)
				paused, status = false, store.StatusRunning
				pausedFor += d
				paceWall = paceWall.Add(d)
				res.err = m.db.SetStatus(bg, lr.id, status, "")
				lr.hub.publish(nil, nil, progress())
			}
		case opCancel:
			end = store.StatusCancelled
		case opSpeed:
			lr.speed = o.speed
			// re-anchor the pacing at this instant of the run's own time
			// (while paused, the instant it paused: resuming shifts it)
			paceWall, paceSim = time.Now(), s.Now()
			if paused {
				paceWall = pausedAt
			}
			res.err = m.db.SetSpeed(bg, lr.id, o.speed)
			lr.hub.publish(nil, nil, progress())
		case opParams:
			if lr.changes >= maxChanges {
				res.err = limitError(http.StatusTooManyRequests, "max-changes", "",
					"this run already has %d live changes, the most one run may have", lr.changes)
			} else {
				res.change, res.err = lr.applyParams(bg, s, o.params)
			}
		}
		o.reply <- res
	}

	for !s.Done() && end == store.StatusRunning && runErr == nil {
		// control requests first: they take effect at this event boundary
		for drained := false; !drained; {
			select {
			case o := <-lr.ops:
				handle(o)
			default:
				drained = true
			}
		}
		if end != store.StatusRunning {
			break
		}
		if ctx.Err() != nil {
			end, endMsg = store.StatusInterrupted, "the server shut down before the run finished; results cover the simulated time reached"
			break
		}
		// the server's limits hold while the run goes, whatever the
		// estimate said before it started
		if simLimit > 0 && s.Now() >= simLimit {
			end, endMsg = store.StatusCancelled, fmt.Sprintf("stopped at %s of simulated time, this server's limit (max-sim-time)", scenarios.FormatTime(simLimit))
			break
		}
		if max := m.cfg.Limits.MaxSamples; max > 0 && float64(samples+int64(rec.Pending())) > max {
			end, endMsg = store.StatusCancelled, fmt.Sprintf("stopped after %s telemetry samples, this server's limit (max-samples)", human(max))
			break
		}
		limit := s.Now() + slice
		if simLimit > 0 && limit > simLimit {
			limit = simLimit
		}
		if lr.speed > 0 && !paused {
			target := paceSim + sim.Time(lr.speed*float64(sim.Microsecond)*time.Since(paceWall).Seconds())
			if target < limit {
				limit = target
			}
		}
		if paused || limit <= s.Now() {
			// wait for the pacing clock or a control request
			publish(false)
			select {
			case o := <-lr.ops:
				handle(o)
			case <-ctx.Done():
			case <-time.After(10 * time.Millisecond):
			}
			continue
		}
		t0 := time.Now()
		if err := s.RunUntil(limit); err != nil {
			runErr = err
			break
		}
		if d := time.Since(t0); d < 10*time.Millisecond && slice < sim.Second {
			slice *= 2
		} else if d > 40*time.Millisecond && slice > sim.Nanosecond {
			slice /= 2
		}
		publish(false)
	}
	if !s.Done() {
		s.Stop()
	}
	switch {
	case runErr != nil:
		end, endMsg = store.StatusFailed, runErr.Error()
		log.Error("run failed", "err", runErr)
	case end == store.StatusRunning:
		end = store.StatusDone
	}
	// everything measured is kept, whatever ended the run
	publish(true)
	w := wall()
	res := s.Result()
	sum := report.Summarize(res, json.RawMessage(lr.scenario), w)
	var sumBuf bytes.Buffer
	if err := report.WriteSummary(&sumBuf, sum); err != nil {
		end, endMsg = store.StatusFailed, fmt.Sprintf("writing the summary: %v", err)
	}
	if runErr != nil && end != store.StatusFailed {
		end, endMsg = store.StatusFailed, runErr.Error()
	}
	chunks := rec.Flush(true)
	lr.hub.publish(obs.newKeys, pending, nil)
	p := progress()
	p.Status = end
	fin := store.Finish{Status: end, Error: endMsg, At: time.Now(), Progress: storeProgress(p), Chunks: chunks,
		Flows: storeFlows(res), Summary: sumBuf.Bytes()}
	if err := m.db.FinishRun(bg, lr.id, fin); err != nil {
		log.Error("storing the results", "err", err)
		end, endMsg = store.StatusFailed, fmt.Sprintf("storing the results: %v", err)
		if err := m.db.FinishRun(bg, lr.id, store.Finish{Status: end, Error: endMsg, At: time.Now()}); err != nil {
			log.Error("marking the run failed", "err", err)
		}
	}
	lr.hub.publish(nil, nil, p)
	final := finalMsg{Type: "done", Status: end, Error: endMsg, Summary: sumBuf.Bytes()}
	if end == store.StatusFailed {
		final.Type = "failed"
	}
	lr.hub.finish(final)
	lr.rejectOps()
	log.Info("run ended", "status", end, "sim_ms", float64(s.Now())/float64(sim.Millisecond),
		"events", s.Events(), "wall_s", w.Seconds(), "flows_finished", s.FlowsFinished())
}

// failEarly records a run that could not start.
func (lr *liveRun) failEarly(err error) {
	lr.m.log.Error("run failed", "run", lr.id, "err", err)
	msg := err.Error()
	if ferr := lr.m.db.FinishRun(context.Background(), lr.id, store.Finish{Status: store.StatusFailed, Error: msg, At: time.Now()}); ferr != nil {
		lr.m.log.Error("storing the failure", "run", lr.id, "err", ferr)
	}
	lr.hub.finish(finalMsg{Type: "failed", Status: store.StatusFailed, Error: msg})
	lr.rejectOps()
}

// rejectOps answers control requests that arrive after the run ended.
func (lr *liveRun) rejectOps() {
	for {
		select {
		case o := <-lr.ops:
			o.reply <- opResult{err: errorf(http.StatusConflict, "status", "the run has ended")}
		default:
			return
		}
	}
}

// applyParams applies a live parameter change now and records it as a
// scenario event at the current simulated time. It is stored first and
// applied second, so the stored scenario never misses a change the run
// made (a value the scenario accepts is one the algorithm accepts).
func (lr *liveRun) applyParams(ctx context.Context, s *sim.Sim, body []byte) (*changeMsg, error) {
	at := s.Now()
	doc, idx, err := scenarios.InsertParamsEvent(lr.scenario, at, body)
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
	params := maps.Clone(lr.params)
	maps.Copy(params, ev.Params)
	pj, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	rev := store.RunEvent{AtPS: int64(at), Params: ev.Params, Wall: time.Now()}
	if err := lr.m.db.AddRunEvent(ctx, lr.id, rev, canon, pj); err != nil {
		return nil, fmt.Errorf("recording the change: %w", err)
	}
	if err := s.ApplyParams(-1, ev.Params); err != nil {
		// the registry and the algorithm disagree: a bug; the change is
		// recorded, so a replay shows the same refusal
		lr.m.log.Error("a validated live change was refused", "run", lr.id, "params", ev.Params, "err", err)
		return nil, fmt.Errorf("applying the change: %w", err)
	}
	lr.scenario, lr.params = canon, params
	lr.changes++
	c := changeMsg{Type: "parameter-changed", Seq: lr.changes, AtNs: float64(at) / 1e3, Params: ev.Params}
	lr.hub.addChange(c)
	lr.m.log.Info("parameters changed", "run", lr.id, "at_ns", c.AtNs, "params", ev.Params)
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
	e := &apiError{Status: http.StatusUnprocessableEntity}
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
		e.Errors = append(e.Errors, fieldError{Field: f, Error: x.Error})
	}
	if len(e.Errors) == 0 {
		return errorf(http.StatusUnprocessableEntity, "", "%v", err)
	}
	e.Field, e.Msg = e.Errors[0].Field, e.Errors[0].Error
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

func speedJSON(speed float64) any {
	if speed <= 0 {
		return "max"
	}
	return speed
}

func storeFlows(res *sim.Result) []store.Flow {
	out := make([]store.Flow, len(res.Flows))
	for i, f := range res.Flows {
		out[i] = store.Flow{ID: f.ID, Src: f.Src, Dst: f.Dst, Size: f.Size, StartPS: int64(f.Start),
			FinishPS: int64(f.Finish), FCTPS: int64(f.FCT), IdealPS: int64(f.IdealFCT),
			Started: f.Started, Finished: f.Finished, Algorithm: f.Algorithm}
	}
	return out
}

// simFlows is the inverse of storeFlows, for report.WriteFlows.
func simFlows(flows []store.Flow) *sim.Result {
	r := &sim.Result{Flows: make([]sim.FlowResult, len(flows))}
	for i, f := range flows {
		r.Flows[i] = sim.FlowResult{ID: f.ID, Src: f.Src, Dst: f.Dst, Size: f.Size, Start: sim.Time(f.StartPS),
			Finish: sim.Time(f.FinishPS), FCT: sim.Time(f.FCTPS), IdealFCT: sim.Time(f.IdealPS),
			Started: f.Started, Finished: f.Finished, Algorithm: f.Algorithm}
	}
	return r
}
