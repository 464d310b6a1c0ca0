package dist

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"cclab/server/runs"
	"cclab/store"
)

// Worker pulls runs from the work stream and executes them, Concurrency at
// a time, each as the lab's own runs execute (runs.RunWork).
type Worker struct {
	nc          *nats.Conn
	cons        jetstream.Consumer
	obj         jetstream.ObjectStore
	opt         Options
	concurrency int
	cfg         runs.Config
	log         *slog.Logger
	seq         atomic.Int64 // names the objects this worker puts
	name        string
}

// NewWorker prepares a worker on nc's server (creating the stream,
// consumer and bucket if the lab has not yet).
func NewWorker(ctx context.Context, nc *nats.Conn, concurrency int, opt Options, log *slog.Logger) (*Worker, error) {
	opt = opt.withDefaults()
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	cons, obj, err := setup(ctx, js, opt, false)
	if err != nil {
		return nil, err
	}
	// the queue's ack wait (the lab's) paces the keep-alive reports
	if info, err := cons.Info(ctx); err == nil && info.Config.AckWait > 0 {
		opt.AckWait = info.Config.AckWait
	}
	if concurrency <= 0 {
		concurrency = 1
	}
	return &Worker{nc: nc, cons: cons, obj: obj, opt: opt, concurrency: concurrency, log: log,
		cfg: runs.Config{Log: log}, name: store.NewRunID()[:8]}, nil
}

// Run pulls and executes work until ctx ends; runs in progress then stop
// (each reported interrupted to the lab) before it returns.
func (w *Worker) Run(ctx context.Context) error {
	w.log.Info("worker ready", "concurrency", w.concurrency, "ack_wait", w.opt.AckWait)
	sem := make(chan struct{}, w.concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		batch, err := w.cons.Fetch(1, jetstream.FetchMaxWait(time.Second))
		if err != nil {
			<-sem
			if ctx.Err() != nil {
				return nil
			}
			w.log.Warn("fetching work", "err", err)
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
				return nil
			}
			continue
		}
		got := false
		for msg := range batch.Messages() {
			got = true
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-sem }()
				w.handle(ctx, msg)
			}()
		}
		if !got {
			<-sem
		}
	}
}

// handle executes one delivery of a run's work.
func (w *Worker) handle(ctx context.Context, msg jetstream.Msg) {
	meta, err := msg.Metadata()
	if err != nil {
		w.log.Error("work without metadata", "err", err)
		_ = msg.Term()
		return
	}
	attempt := int(meta.NumDelivered)
	var work runs.Work
	if err := decode(msg.Data(), &work); err != nil {
		w.log.Error("work that does not decode: dropped", "err", err)
		_ = msg.Term()
		return
	}
	log := w.log.With("run", work.ID, "attempt", attempt)
	s := &sink{w: w, run: work.ID, attempt: attempt}
	// the lab consents to this attempt, or the run is no longer wanted
	if err := s.report(ctx, runs.RemoteMsg{Kind: runs.RemoteStart, At: time.Now()}, false); err != nil {
		if errors.Is(err, runs.ErrStale) {
			log.Info("run dropped: the lab no longer wants it")
			_ = msg.Ack()
			return
		}
		log.Warn("the lab did not answer the start; the work goes back", "err", err)
		_ = msg.NakWithDelay(2 * time.Second)
		return
	}
	log.Info("run started")
	// keep the work ours while the run goes
	keep, stopKeep := context.WithCancel(ctx)
	defer stopKeep()
	go func() {
		t := time.NewTicker(w.opt.AckWait / 3)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				if err := msg.InProgress(); err != nil {
					log.Warn("reporting progress to the work queue", "err", err)
				}
			case <-keep.Done():
				return
			}
		}
	}()
	ops := make(chan runs.Op)
	sub, err := w.nc.Subscribe(ctlSubject(work.ID, attempt), func(m *nats.Msg) {
		var c runs.Control
		res := runs.ControlResult{}
		if err := decode(m.Data, &c); err != nil {
			res.Err = &runs.Error{Kind: runs.Invalid, Errors: []runs.FieldError{{Msg: "the control request does not decode"}}}
		} else {
			op := runs.NewOp(c)
			select {
			case ops <- op:
				res = op.Wait(ctx)
			case <-time.After(10 * time.Second):
				res.Err = &runs.Error{Kind: runs.Conflict, Errors: []runs.FieldError{{Field: "status", Msg: "the run has ended"}}}
			}
		}
		data, err := encode(res)
		if err == nil {
			err = m.Respond(data)
		}
		if err != nil {
			log.Warn("answering a control request", "err", err)
		}
	})
	if err != nil {
		log.Error("subscribing to the run's control requests", "err", err)
		_ = msg.NakWithDelay(time.Second)
		return
	}
	defer func() { _ = sub.Unsubscribe() }()
	start := time.Now()
	status, err := runs.RunWork(ctx, work, runs.WorkerEnv{Sink: s, Publish: s.live, Ops: ops, Config: w.cfg})
	var re *runs.Error
	switch {
	case err == nil:
		_ = msg.Ack()
		log.Info("run ended", "status", status, "wall_s", time.Since(start).Seconds())
	case errors.Is(err, runs.ErrStale):
		_ = msg.Ack()
		log.Info("run dropped: the lab no longer wants it")
	case errors.As(err, &re):
		// the scenario does not compile here (another version of the
		// lab?): the run fails, with why
		ferr := s.report(ctx, runs.RemoteMsg{Kind: runs.RemoteFinish, Finish: &store.Finish{Status: store.StatusFailed,
			Error: "the worker could not build the run: " + err.Error(), At: time.Now()}}, true)
		if ferr != nil {
			_ = msg.NakWithDelay(5 * time.Second)
		} else {
			_ = msg.Ack()
		}
		log.Error("run failed on this worker", "err", err)
	default:
		// the results did not reach the lab: run it again later
		_ = msg.NakWithDelay(5 * time.Second)
		log.Warn("run results not handed over; the work goes back", "err", err)
	}
}

// sink relays one attempt's reports to the lab (runs.Sink).
type sink struct {
	w       *Worker
	run     string
	attempt int
}

func (s *sink) StartRun(context.Context, string, time.Time) error { return nil } // the start handshake did it

func (s *sink) AppendSeries(ctx context.Context, _ string, chunks []store.Chunk, p store.Progress) error {
	return s.report(ctx, runs.RemoteMsg{Kind: runs.RemoteSeries, Chunks: chunks, Prog: p}, false)
}

func (s *sink) SetStatus(ctx context.Context, _ string, status, msg string) error {
	return s.report(ctx, runs.RemoteMsg{Kind: runs.RemoteStatus, Status: status, Error: msg}, false)
}

func (s *sink) SetSpeed(ctx context.Context, _ string, speed float64) error {
	return s.report(ctx, runs.RemoteMsg{Kind: runs.RemoteSpeed, Speed: speed}, false)
}

func (s *sink) AddRunEvent(ctx context.Context, _ string, ev store.RunEvent, scenario, params []byte) error {
	return s.report(ctx, runs.RemoteMsg{Kind: runs.RemoteEvent, Event: &ev, Doc: scenario, Params: params}, false)
}

func (s *sink) FinishRun(ctx context.Context, _ string, f store.Finish) error {
	return s.report(ctx, runs.RemoteMsg{Kind: runs.RemoteFinish, Finish: &f, At: time.Now()}, true)
}

// live publishes a frame for the run's viewers, split so that each
// message stays small (the series keys, progress and change go with the
// first part).
func (s *sink) live(f runs.LiveFrame) {
	const maxPoints = 10_000
	for first := true; first || len(f.I) > 0; first = false {
		part := f
		n := min(len(f.I), maxPoints)
		part.I, part.T, part.V = f.I[:n], f.T[:n], f.V[:n]
		f.I, f.T, f.V = f.I[n:], f.T[n:], f.V[n:]
		if !first {
			part.Keys, part.Progress, part.Change = nil, nil, nil
		}
		data, err := encode(runs.RemoteMsg{Run: s.run, Attempt: s.attempt, Kind: runs.RemoteLive, Live: &part})
		if err == nil {
			err = s.w.nc.Publish(livePrefix+s.run, data)
		}
		if err != nil {
			s.w.log.Warn("publishing a live frame", "run", s.run, "err", err)
		}
	}
}

// report sends one report and waits for the lab's answer. The final
// results always go through the bucket (large payloads too), and are
// retried for a minute while the lab is unreachable (a restart).
func (s *sink) report(ctx context.Context, msg runs.RemoteMsg, viaBucket bool) error {
	msg.Run, msg.Attempt = s.run, s.attempt
	data, err := encode(msg)
	if err != nil {
		return err
	}
	req := nats.NewMsg(sinkPrefix + s.run)
	if viaBucket || len(data) > maxInline {
		name := s.run + "-" + strconv.Itoa(s.attempt) + "-" + s.w.name + "-" + strconv.FormatInt(s.w.seq.Add(1), 10)
		if _, err := s.w.obj.PutBytes(ctx, name, data); err != nil {
			return fmt.Errorf("storing the results in the bucket: %w", err)
		}
		req.Header.Set(objectHeader, name)
	} else {
		req.Data = data
	}
	tries := 1
	if msg.Kind == runs.RemoteFinish {
		tries = 12
	}
	for i := 0; ; i++ {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		resp, err := s.w.nc.RequestMsgWithContext(rctx, req)
		cancel()
		if err == nil {
			switch a := string(resp.Data); {
			case a == "":
				return nil
			case a == "stale":
				return runs.ErrStale
			default:
				return errors.New(a)
			}
		}
		if i+1 >= tries {
			return fmt.Errorf("the lab did not answer: %w", err)
		}
		time.Sleep(5 * time.Second)
	}
}
