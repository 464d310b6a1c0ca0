package dist

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"cclab/server/runs"
)

// Dispatcher is the lab's side: it queues runs for the workers
// (runs.Dispatcher) and applies the workers' reports to the manager.
type Dispatcher struct {
	nc  *nats.Conn
	js  jetstream.JetStream
	obj jetstream.ObjectStore
	log *slog.Logger
}

// NewDispatcher prepares the stream, consumer and bucket on nc's server.
func NewDispatcher(ctx context.Context, nc *nats.Conn, opt Options, log *slog.Logger) (*Dispatcher, error) {
	js, err := jetstream.New(nc)
	if err != nil {
		return nil, err
	}
	_, obj, err := setup(ctx, js, opt.withDefaults(), true)
	if err != nil {
		return nil, err
	}
	return &Dispatcher{nc: nc, js: js, obj: obj, log: log}, nil
}

// Dispatch stores a run's work in the stream (once per run id).
func (d *Dispatcher) Dispatch(ctx context.Context, w runs.Work) error {
	data, err := encode(w)
	if err != nil {
		return err
	}
	if len(data) > maxInline {
		return fmt.Errorf("the run's scenario is %d KB, more than the %d KB a work message carries", len(data)>>10, maxInline>>10)
	}
	if _, err := d.js.Publish(ctx, WorkSubject, data, jetstream.WithMsgID(w.ID)); err != nil {
		return fmt.Errorf("queueing run %s: %w", w.ID, err)
	}
	return nil
}

// Control asks the worker running attempt of run id to apply c.
func (d *Dispatcher) Control(ctx context.Context, id string, attempt int, c runs.Control) (runs.ControlResult, error) {
	var res runs.ControlResult
	data, err := encode(c)
	if err != nil {
		return res, err
	}
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	msg, err := d.nc.RequestWithContext(ctx, ctlSubject(id, attempt), data)
	if err != nil {
		return res, err
	}
	err = decode(msg.Data, &res)
	return res, err
}

// shards is how many goroutines apply reports: a run's reports go to one
// of them, in order (its series chunks must be stored in order), while
// different runs' reports (a big run's results being stored, another's
// progress) do not wait for each other.
const shards = 8

// Serve applies the workers' reports to mgr until ctx ends.
func (d *Dispatcher) Serve(ctx context.Context, mgr *runs.Manager) error {
	var queues [shards]chan *nats.Msg
	for i := range queues {
		queues[i] = make(chan *nats.Msg, 4096)
		go func(q chan *nats.Msg) {
			for {
				select {
				case m := <-q:
					d.handle(ctx, mgr, m)
				case <-ctx.Done():
					return
				}
			}
		}(queues[i])
	}
	route := func(m *nats.Msg) {
		run := m.Subject[strings.LastIndexByte(m.Subject, '.')+1:]
		h := uint32(2166136261)
		for i := 0; i < len(run); i++ {
			h = (h ^ uint32(run[i])) * 16777619
		}
		select {
		case queues[h%shards] <- m:
		case <-ctx.Done():
		}
	}
	var subs []*nats.Subscription
	defer func() {
		for _, s := range subs {
			_ = s.Unsubscribe()
		}
	}()
	for _, subject := range []string{sinkPrefix + "*", livePrefix + "*"} {
		s, err := d.nc.QueueSubscribe(subject, "lab", route)
		if err != nil {
			return err
		}
		// do not drop reports for want of buffer (the defaults are 64 k
		// messages, 64 MB)
		if err := s.SetPendingLimits(-1, 512<<20); err != nil {
			return err
		}
		subs = append(subs, s)
	}
	<-ctx.Done()
	return nil
}

// handle applies one message: a report (answered) or a live frame.
func (d *Dispatcher) handle(ctx context.Context, mgr *runs.Manager, m *nats.Msg) {
	if strings.HasPrefix(m.Subject, livePrefix) {
		var msg runs.RemoteMsg
		if err := decode(m.Data, &msg); err != nil {
			d.log.Warn("a live frame does not decode", "subject", m.Subject, "err", err)
			return
		}
		msg.Kind = runs.RemoteLive
		_ = mgr.Remote(ctx, msg) // a frame of a stale attempt is dropped
		return
	}
	reply := ""
	if err := d.report(ctx, mgr, m); errors.Is(err, runs.ErrStale) {
		reply = "stale"
	} else if err != nil {
		reply = "error: " + err.Error()
	}
	if err := m.Respond([]byte(reply)); err != nil {
		d.log.Warn("answering a worker", "subject", m.Subject, "err", err)
	}
}

// report decodes a worker's request (its payload from the bucket when it
// names an object, which is then deleted) and applies it.
func (d *Dispatcher) report(ctx context.Context, mgr *runs.Manager, m *nats.Msg) error {
	data := m.Data
	name := ""
	if m.Header != nil {
		name = m.Header.Get(objectHeader)
	}
	if name != "" {
		b, err := d.obj.GetBytes(ctx, name)
		if err != nil {
			return fmt.Errorf("reading the results %s: %w", name, err)
		}
		data = b
	}
	var msg runs.RemoteMsg
	if err := decode(data, &msg); err != nil {
		return fmt.Errorf("a report does not decode: %w", err)
	}
	if want := strings.TrimPrefix(m.Subject, sinkPrefix); msg.Run != want {
		return fmt.Errorf("a report about run %s came on the subject of %s", msg.Run, want)
	}
	err := mgr.Remote(ctx, msg)
	if name != "" && (err == nil || errors.Is(err, runs.ErrStale)) {
		if derr := d.obj.Delete(context.WithoutCancel(ctx), name); derr != nil {
			d.log.Warn("deleting ingested results", "object", name, "err", derr)
		}
	}
	return err
}
