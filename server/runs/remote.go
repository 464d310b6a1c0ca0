package runs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"cclab/store"
)

// Runs on other machines. With a Dispatcher, the manager simulates nothing
// itself: a run that leaves the queue is handed to the dispatcher (a work
// queue that workers pull from), and a goroutine per run waits for what
// its worker reports, applying it here as a local run would (the store,
// the hub). The worker runs the same execution as a local run; its sink
// and its hub are relays to this manager (Manager.Remote), and control
// requests go back to it (Dispatcher.Control).
//
// A worker may die mid-run; its work is then delivered again, as a new
// attempt. An attempt starts only with the manager's consent (a "start"
// message): the run must still be live and the attempt newer than any the
// manager accepted, which then clears what the older attempt stored, so
// nothing is stored twice. Messages of any other attempt are refused as
// stale, and a worker that gets that answer drops its work.

// publisher is where an execution publishes for viewers: the run's hub,
// or a worker's relay to the manager that owns the run.
type publisher interface {
	publish(keys []SeriesKey, pts []livePoint, p *Progress)
	addChange(c Change)
	finish(f Final)
}

// Dispatcher hands runs to workers on other machines.
type Dispatcher interface {
	// Dispatch queues a run for a worker; it returns once the work is
	// stored (it survives this process).
	Dispatch(ctx context.Context, w Work) error
	// Control sends a control request to the worker running attempt of
	// run id, and returns its answer.
	Control(ctx context.Context, id string, attempt int, c Control) (ControlResult, error)
}

// Work is one run as a worker receives it.
type Work struct {
	ID       string
	Scenario []byte  // the run's canonical scenario
	Speed    float64 // simulated µs per wall second; 0: as fast as possible
	BucketPS int64   // the chart bucket (level-1 decimation)
	Limits   Limits  // the server's limits, which hold on the worker too
}

// LiveFrame is what an execution publishes for viewers, on its way from a
// worker to the run's hub: new series, decimated points, progress, a
// parameter change.
type LiveFrame struct {
	Keys     []SeriesKey
	I        []int
	T        []int64
	V        []float64
	Progress *Progress
	Change   *Change
}

// Control is a control request to a run on a worker.
type Control struct {
	Kind   string          // pause, resume, cancel, speed, params
	Speed  float64         // speed: simulated µs per wall second, 0 = max
	Params json.RawMessage // params: a JSON object of values
}

// ControlResult is a worker's answer to a Control.
type ControlResult struct {
	Change *Change
	Err    *Error
}

// Remote message kinds: what a worker reports about the run it executes.
const (
	RemoteStart  = "start"  // the worker wants to start attempt (the manager consents or not)
	RemoteLive   = "live"   // a LiveFrame for the run's viewers
	RemoteStatus = "status" // Sink.SetStatus
	RemoteSpeed  = "speed"  // Sink.SetSpeed
	RemoteEvent  = "event"  // Sink.AddRunEvent
	RemoteSeries = "series" // Sink.AppendSeries
	RemoteFinish = "finish" // Sink.FinishRun
)

// RemoteMsg is one report of a worker about attempt of run Run.
type RemoteMsg struct {
	Run     string
	Attempt int
	Kind    string
	At      time.Time // start, finish
	Live    *LiveFrame
	Status  string // status
	Error   string // status
	Speed   float64
	Event   *store.RunEvent // event
	Doc     []byte          // event: the run's scenario with the change
	Params  []byte          // event: its parameters
	Chunks  []store.Chunk   // series
	Prog    store.Progress  // series
	Finish  *store.Finish   // finish
}

// ErrStale answers a remote message about a run the manager no longer
// runs, or about an attempt other than the one it accepted: the worker
// drops the work.
var ErrStale = errors.New("the manager does not run this attempt of the run (it ended, was cancelled, or another attempt took over)")

// remoteReq is a remote message on its way to the run's goroutine.
type remoteReq struct {
	msg   RemoteMsg
	reply chan error
}

// Remote applies a worker's report to the run it is about, in the run's
// own goroutine, and returns when it has (ErrStale: drop the work).
func (m *Manager) Remote(ctx context.Context, msg RemoteMsg) error {
	m.mu.Lock()
	r := m.live[msg.Run]
	m.mu.Unlock()
	if r == nil || r.remote == nil {
		return ErrStale
	}
	req := remoteReq{msg: msg, reply: make(chan error, 1)}
	select {
	case r.remote <- req:
	case <-r.done:
		return ErrStale
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-req.reply:
		return err
	case <-r.done:
		select {
		case err := <-req.reply:
			return err
		default:
			return ErrStale
		}
	case <-ctx.Done():
		return ctx.Err()
	}
}

// remoteRun is the manager's side of a run on a worker.
type remoteRun struct {
	r       *run
	m       *Manager
	d       Dispatcher
	attempt int  // the accepted attempt, 0 before one starts
	paused  bool // as the worker last reported
}

// executeRemote dispatches r and applies its worker's reports until the
// run is stored as finished, is cancelled before a worker starts it, or
// the server shuts down (the run is then interrupted; its work, if a
// worker takes it later, is refused as stale).
func (r *run) executeRemote(ctx context.Context, m *Manager) {
	rr := &remoteRun{r: r, m: m, d: m.cfg.Dispatcher}
	w := Work{ID: r.id, Scenario: r.scenario, Speed: r.speed, BucketPS: r.bucketPS, Limits: m.cfg.Limits}
	if err := rr.d.Dispatch(ctx, w); err != nil {
		r.failEarly(m, fmt.Errorf("handing the run to the workers: %w", err))
		return
	}
	m.log.Info("run dispatched", "run", r.id)
	bg := context.WithoutCancel(ctx)
	for {
		select {
		case req := <-r.remote:
			err, done := rr.apply(bg, req.msg)
			req.reply <- err
			if done {
				r.rejectOps()
				return
			}
		case o := <-r.ops:
			if done := rr.control(ctx, o); done {
				return
			}
		case <-ctx.Done():
			const msg = "the server shut down before the run finished on its worker"
			if err := m.db.FinishRun(bg, r.id, store.Finish{Status: store.StatusInterrupted, Error: msg, At: time.Now()}); err != nil {
				m.log.Error("marking a remote run interrupted", "run", r.id, "err", err)
			}
			r.hub.finish(Final{Type: "done", Status: store.StatusInterrupted, Error: msg})
			r.rejectOps()
			return
		}
	}
}

// apply applies one report; done is set when the run has ended here.
func (rr *remoteRun) apply(ctx context.Context, msg RemoteMsg) (err error, done bool) {
	r, db := rr.r, rr.m.db
	if msg.Kind == RemoteStart {
		if msg.Attempt <= rr.attempt {
			return ErrStale, false
		}
		if rr.attempt > 0 {
			// the earlier attempt's worker is presumed dead: start afresh
			rr.m.log.Warn("a remote run starts again on another attempt", "run", r.id, "attempt", msg.Attempt, "was", rr.attempt)
			pj, err := json.Marshal(r.params)
			if err != nil {
				return err, false
			}
			if err := db.ResetRun(ctx, r.id, r.scenario, pj); err != nil {
				return err, false
			}
		}
		rr.attempt, rr.paused = msg.Attempt, false
		if err := db.StartRun(ctx, r.id, msg.At); err != nil {
			return err, false
		}
		rr.m.log.Info("run started on a worker", "run", r.id, "attempt", msg.Attempt)
		r.hub.publish(nil, nil, &Progress{Type: "progress", Status: store.StatusRunning, FlowsTotal: len(r.compiled.Config.Flows), Speed: SpeedJSON(r.speed)})
		return nil, false
	}
	if msg.Attempt != rr.attempt || rr.attempt == 0 {
		return ErrStale, false
	}
	switch msg.Kind {
	case RemoteLive:
		if f := msg.Live; f != nil {
			pts := make([]livePoint, len(f.I))
			for i := range f.I {
				pts[i] = livePoint{f.I[i], f.T[i], f.V[i]}
			}
			if len(f.Keys) > 0 || len(pts) > 0 || f.Progress != nil {
				r.hub.publish(f.Keys, pts, f.Progress)
			}
			if f.Change != nil {
				r.hub.addChange(*f.Change)
			}
		}
	case RemoteStatus:
		rr.paused = msg.Status == store.StatusPaused
		err = db.SetStatus(ctx, r.id, msg.Status, msg.Error)
	case RemoteSpeed:
		r.speed = msg.Speed
		err = db.SetSpeed(ctx, r.id, msg.Speed)
	case RemoteEvent:
		if msg.Event == nil {
			return fmt.Errorf("an event report without its event"), false
		}
		err = db.AddRunEvent(ctx, r.id, *msg.Event, msg.Doc, msg.Params)
		if err == nil {
			r.scenario = msg.Doc
			_ = json.Unmarshal(msg.Params, &r.params)
		}
	case RemoteSeries:
		err = db.AppendSeries(ctx, r.id, msg.Chunks, msg.Prog)
	case RemoteFinish:
		f := msg.Finish
		if f == nil {
			return fmt.Errorf("a finish report without its results"), false
		}
		if err := db.FinishRun(ctx, r.id, *f); err != nil {
			return err, false
		}
		final := Final{Type: "done", Status: f.Status, Error: f.Error, Summary: f.Summary}
		if f.Status == store.StatusFailed {
			final.Type = "failed"
		}
		r.hub.publish(nil, nil, &Progress{Type: "progress", Status: f.Status, Progress: f.Progress.Fraction,
			SimNs: float64(f.Progress.SimPS) / 1e3, Events: f.Progress.Events, WallSeconds: f.Progress.WallSeconds,
			FlowsTotal: len(r.compiled.Config.Flows), FlowsFinished: finished(f), Speed: SpeedJSON(r.speed)})
		r.hub.finish(final)
		rr.m.log.Info("run ended on a worker", "run", r.id, "status", f.Status, "attempt", rr.attempt)
		return nil, true
	default:
		return fmt.Errorf("unknown report %q", msg.Kind), false
	}
	return err, false
}

func finished(f *store.Finish) int {
	n := 0
	for _, x := range f.Flows {
		if x.Finished {
			n++
		}
	}
	return n
}

// control answers a control request for a remote run: before a worker
// has started it, only cancelling does anything (the run ends here and
// its work is refused when a worker takes it); after, the request goes to
// the worker. done is set when the run has ended here.
func (rr *remoteRun) control(ctx context.Context, o op) (done bool) {
	r := rr.r
	if rr.attempt == 0 {
		if o.kind != opCancel {
			o.reply <- opResult{err: errorf(Conflict, "status", "the run waits for a worker; it can only be cancelled")}
			return false
		}
		const msg = "cancelled before a worker started it"
		err := rr.m.db.FinishRun(context.WithoutCancel(ctx), r.id, store.Finish{Status: store.StatusCancelled, At: time.Now(), Error: msg})
		r.hub.finish(Final{Type: "done", Status: store.StatusCancelled, Error: msg})
		o.reply <- opResult{err: err}
		r.rejectOps()
		return true
	}
	c := Control{Speed: o.speed, Params: o.params}
	switch o.kind {
	case opPause:
		c.Kind = "pause"
	case opResume:
		c.Kind = "resume"
	case opCancel:
		c.Kind = "cancel"
	case opSpeed:
		c.Kind = "speed"
	case opParams:
		c.Kind = "params"
	}
	// the worker answers after applying it, which may need this run's
	// goroutine (a speed or a change is stored through it): wait for the
	// answer while applying reports
	type answer struct {
		res ControlResult
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		res, err := rr.d.Control(ctx, r.id, rr.attempt, c)
		ch <- answer{res, err}
	}()
	bg := context.WithoutCancel(ctx)
	for {
		select {
		case a := <-ch:
			res := opResult{change: a.res.Change}
			switch {
			case a.err != nil:
				res.err = errorf(Unavailable, "", "the run's worker did not answer: %v", a.err)
			case a.res.Err != nil:
				res.err = a.res.Err
			}
			o.reply <- res
			return false
		case req := <-r.remote:
			err, done := rr.apply(bg, req.msg)
			req.reply <- err
			if done {
				a := <-ch
				o.reply <- opResult{change: a.res.Change}
				r.rejectOps()
				return true
			}
		}
	}
}

// Op is a control request to a run a worker executes, as the worker's
// transport hands it in; Reply receives the answer.
type Op struct {
	c     Control
	reply chan opResult
}

// NewOp makes the op for a control request.
func NewOp(c Control) Op { return Op{c: c, reply: make(chan opResult, 1)} }

// WorkerEnv is what a worker gives a run it executes for a remote manager.
type WorkerEnv struct {
	Sink    Sink            // relays to the manager (Remote*)
	Publish func(LiveFrame) // relays frames to the manager
	Ops     <-chan Op       // control requests from the manager
	Config  Config          // ProgressEvery, FlushEvery and Log; Limits come with the work
}

// relay is the publisher of a run on a worker.
type relay struct{ send func(LiveFrame) }

func (p relay) publish(keys []SeriesKey, pts []livePoint, pr *Progress) {
	f := LiveFrame{Keys: keys, Progress: pr}
	if len(pts) > 0 {
		f.I, f.T, f.V = make([]int, len(pts)), make([]int64, len(pts)), make([]float64, len(pts))
		for i, x := range pts {
			f.I[i], f.T[i], f.V[i] = x.I, x.T, x.V
		}
	}
	p.send(f)
}
func (p relay) addChange(c Change) { p.send(LiveFrame{Change: &c}) }
func (p relay) finish(Final)       {} // the manager makes the final message from the stored results

// RunWork executes one run on a worker: the same execution as a local
// run, its sink and viewers relayed to the manager that owns the run. It
// returns the run's final status, or an error when the results could not
// be handed over (the work should then be delivered again).
func RunWork(ctx context.Context, w Work, env WorkerEnv) (status string, err error) {
	cfg := env.Config.withDefaults()
	cfg.Limits = w.Limits
	c, err := Compile(w.Scenario, w.Limits, "")
	if err != nil {
		return "", err
	}
	if c.Refused != nil {
		return "", c.Refused
	}
	s, err := c.Engine()
	if err != nil {
		return "", err
	}
	_, params := runAlgorithm(c.Scenario, c.Config)
	r := &run{id: w.ID, compiled: c, scenario: w.Scenario, params: params, speed: w.Speed, bucketPS: w.BucketPS,
		ops: make(chan op, 16), started: make(chan struct{}), done: make(chan struct{})}
	close(r.started)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case o := <-env.Ops:
				x := op{reply: o.reply, speed: o.c.Speed, params: o.c.Params}
				switch o.c.Kind {
				case "pause":
					x.kind = opPause
				case "resume":
					x.kind = opResume
				case "cancel":
					x.kind = opCancel
				case "speed":
					x.kind = opSpeed
				case "params":
					x.kind = opParams
				default:
					o.reply <- opResult{err: errorf(Invalid, "kind", "unknown control %q", o.c.Kind)}
					continue
				}
				select {
				case r.ops <- x:
				case <-stop:
					o.reply <- opResult{err: errorf(Conflict, "status", "the run has ended")}
					return
				}
			case <-stop:
				return
			}
		}
	}()
	log := cfg.Log.With("run", w.ID)
	sink := &checkedSink{Sink: env.Sink}
	x := &execution{r: r, cfg: cfg, pub: relay{env.Publish}, s: s, ctx: ctx, bg: context.WithoutCancel(ctx), log: log, sink: sink,
		status: store.StatusRunning, end: store.StatusRunning}
	x.wallStart = time.Now()
	x.run()
	if sink.finishErr != nil {
		return x.end, sink.finishErr
	}
	return x.end, nil
}

// checkedSink remembers whether the results were handed over.
type checkedSink struct {
	Sink
	finishErr error
}

func (c *checkedSink) FinishRun(ctx context.Context, id string, f store.Finish) error {
	err := c.Sink.FinishRun(ctx, id, f)
	c.finishErr = err
	return err
}

// Wait returns the run's answer to the op.
func (o Op) Wait(ctx context.Context) ControlResult {
	select {
	case res := <-o.reply:
		out := ControlResult{Change: res.change}
		if res.err != nil {
			var e *Error
			if !errors.As(res.err, &e) {
				e = errorf(Invalid, "", "%v", res.err)
			}
			out.Err = e
		}
		return out
	case <-ctx.Done():
		return ControlResult{Err: errorf(Unavailable, "", "%v", ctx.Err())}
	}
}
