// Package training runs the lab's training jobs: `cclab train` (sim/rl) on
// the server, one job (or Config.Concurrency) at a time, each on its own
// goroutine that plays one episode at a time (rl.Config.Workers = 1) so that
// runs keep the CPU. A job that ends — done, or cancelled after at least
// one round — stores its policy under the requested name. Jobs live in
// memory; what outlives a restart is their stored policy. Like server/runs,
// nothing here speaks HTTP.
package training

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strconv"
	"sync"
	"time"

	"cclab/cc/fdcc"
	"cclab/sim/rl"
	"cclab/store"
)

// The states of a job.
const (
	Queued    = "queued"
	Running   = "running"
	Done      = "done"
	Cancelled = "cancelled"
	Failed    = "failed"
)

// Errors of the manager's calls (wrapped, with what they are about).
var (
	ErrNotFound = errors.New("no such training job")
	ErrConflict = errors.New("conflict")
	ErrTooMany  = errors.New("too many training jobs")
	ErrClosed   = errors.New("the server is shutting down")
)

// Store is where a finished job's policy goes.
type Store interface {
	PutPolicy(ctx context.Context, p *store.Policy) error
}

// Config holds the manager's settings; a zero field takes its default.
type Config struct {
	Concurrency int // jobs training at once (default 1)
	MaxQueue    int // jobs waiting for a slot (default 8)
	Keep        int // ended jobs kept in memory, newest (default 100)
	Log         *slog.Logger
}

// Manager queues and runs training jobs.
type Manager struct {
	cfg  Config
	st   Store
	ctx  context.Context // cancelled at Shutdown
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu      sync.Mutex
	jobs    map[string]*job
	order   []*job // creation order
	queue   []*job
	running int
	closed  bool
}

type job struct {
	id, name string
	created  time.Time
	trainer  *rl.Trainer // owned by the job's goroutine once it runs
	cfg      rl.Config   // defaults filled

	// guarded by Manager.mu
	status, err       string
	started, finished time.Time
	episode, stage    int
	curve             []rl.Progress
	policyID          string
	cancel            context.CancelFunc
}

// Job is a snapshot of a job.
type Job struct {
	ID, Name, Status, Error string
	Created, Started, Ended time.Time
	Episode                 int // episodes played
	Stage                   int // the curriculum's newest fan-in
	Config                  rl.Config
	Curve                   []rl.Progress // one point per round (nil in lists)
	PolicyID                string        // the stored policy, once stored
	Interrupted             bool          // cancelled with a policy stored
}

// New starts a manager.
func New(st Store, cfg Config) *Manager {
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 1
	}
	if cfg.MaxQueue <= 0 {
		cfg.MaxQueue = 8
	}
	if cfg.Keep <= 0 {
		cfg.Keep = 100
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Manager{cfg: cfg, st: st, ctx: ctx, stop: stop, jobs: map[string]*job{}}
}

// Submit queues a training run of cfg whose policy is to be stored as name.
// The configuration is checked here (rl.NewTrainer's errors, wrapped); a
// name another live job will store is ErrConflict.
func (m *Manager) Submit(name string, cfg rl.Config) (Job, error) {
	cfg.Workers = 1
	t, err := rl.NewTrainer(cfg)
	if err != nil {
		return Job{}, err
	}
	j := &job{id: store.NewRunID(), name: name, created: time.Now(), trainer: t, cfg: t.Config(), status: Queued, stage: t.Config().Stages[0]}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return Job{}, ErrClosed
	}
	for _, o := range m.jobs {
		if o.name == name && (o.status == Queued || o.status == Running) {
			return Job{}, fmt.Errorf("training job %s will store a policy named %q: %w", o.id, name, ErrConflict)
		}
	}
	if m.running >= m.cfg.Concurrency && len(m.queue) >= m.cfg.MaxQueue {
		return Job{}, fmt.Errorf("%d jobs are waiting already: %w", len(m.queue), ErrTooMany)
	}
	m.jobs[j.id] = j
	m.order = append(m.order, j)
	m.queue = append(m.queue, j)
	m.scheduleLocked()
	m.forgetLocked()
	return j.snapshot(false), nil
}

// scheduleLocked starts queued jobs while there is a free slot.
func (m *Manager) scheduleLocked() {
	for m.running < m.cfg.Concurrency && len(m.queue) > 0 && !m.closed {
		j := m.queue[0]
		m.queue = m.queue[1:]
		ctx, cancel := context.WithCancel(m.ctx)
		j.cancel, j.status, j.started = cancel, Running, time.Now()
		m.running++
		m.wg.Add(1)
		go m.run(ctx, j)
	}
}

// forgetLocked drops the oldest ended jobs beyond Keep.
func (m *Manager) forgetLocked() {
	ended := 0
	for _, j := range m.order {
		if j.ended() {
			ended++
		}
	}
	keep := m.order[:0]
	for _, j := range m.order {
		if j.ended() && ended > m.cfg.Keep {
			ended--
			delete(m.jobs, j.id)
			continue
		}
		keep = append(keep, j)
	}
	m.order = keep
}

func (j *job) ended() bool {
	return j.status == Done || j.status == Cancelled || j.status == Failed
}

// run trains until the job's episodes are played or it is cancelled, then
// stores the policy.
func (m *Manager) run(ctx context.Context, j *job) {
	defer m.wg.Done()
	t := j.trainer
	var err error
	for t.Episode() < j.cfg.Episodes {
		var p rl.Progress
		if p, err = t.Round(ctx); err != nil {
			break
		}
		m.mu.Lock()
		j.curve = append(j.curve, p)
		j.episode, j.stage = p.Episode, p.FanIn
		m.mu.Unlock()
	}
	status, msg := Done, ""
	switch {
	case err != nil && ctx.Err() != nil:
		status = Cancelled
	case err != nil:
		status, msg = Failed, err.Error()
	}
	var id string
	if status == Done || (status == Cancelled && t.Episode() > 0) {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		id, err = m.store(sctx, j, status == Cancelled)
		cancel()
		if err != nil {
			status, msg = Failed, fmt.Sprintf("storing the policy: %v", err)
			m.cfg.Log.Warn("training job: storing its policy", "job", j.id, "name", j.name, "err", err)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	j.status, j.err, j.finished, j.policyID = status, msg, time.Now(), id
	j.trainer = nil // the replay memory and the learner go with it
	j.cancel()
	m.running--
	m.scheduleLocked()
	m.forgetLocked()
}

// store writes the job's policy: the one its evaluations ranked best (the
// last one when it has not evaluated), as `cclab train` chooses
// policy.safetensors.
func (m *Manager) store(ctx context.Context, j *job, interrupted bool) (string, error) {
	t := j.trainer
	var wall time.Duration
	if c := t.Curve(); len(c) > 0 {
		wall = c[len(c)-1].Wall
	}
	meta := map[string]string{
		"algo":     j.cfg.Algo,
		"episodes": strconv.Itoa(t.Episode()),
		"seed":     strconv.FormatUint(j.cfg.Seed, 10),
		"command":  "lab training job " + j.id,
		"job":      j.id,
		"wall_s":   strconv.FormatFloat(wall.Seconds(), 'f', 0, 64),
	}
	if interrupted {
		meta["interrupted"] = "true"
		meta["episodes_planned"] = strconv.Itoa(j.cfg.Episodes)
	}
	p := t.Policy()
	if best, score, ep := t.Best(); best != nil {
		p = best
		meta = maps.Clone(meta)
		meta["episodes"] = strconv.Itoa(ep)
		meta["eval_score"] = strconv.FormatFloat(score, 'g', 6, 64)
	}
	var buf bytes.Buffer
	if err := fdcc.SavePolicy(&buf, p, meta); err != nil {
		return "", err
	}
	// what the store keeps is the file's own metadata, as an upload's
	_, fmeta, err := fdcc.LoadPolicy(bytes.NewReader(buf.Bytes()))
	if err != nil {
		return "", err
	}
	sp := &store.Policy{Name: j.name, Algorithm: j.cfg.Algo, Meta: fmeta, Source: j.id, Data: buf.Bytes()}
	if err := m.st.PutPolicy(ctx, sp); err != nil {
		return "", err
	}
	return sp.ID, nil
}

// Get returns a job with its learning curve so far.
func (m *Manager) Get(id string) (Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, ok := m.jobs[id]
	if !ok {
		return Job{}, fmt.Errorf("training job %s: %w", id, ErrNotFound)
	}
	return j.snapshot(true), nil
}

// List returns every job in memory, newest first, without curves.
func (m *Manager) List() []Job {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := make([]Job, 0, len(m.order))
	for i := len(m.order) - 1; i >= 0; i-- {
		out = append(out, m.order[i].snapshot(false))
	}
	return out
}

// Cancel stops a job: a queued one never starts, a running one stops at
// once (the round under way is dropped) and stores what it learned when
// it has played a round. Cancelling an ended job is ErrConflict.
func (m *Manager) Cancel(id string) (Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	j, ok := m.jobs[id]
	if !ok {
		return Job{}, fmt.Errorf("training job %s: %w", id, ErrNotFound)
	}
	switch j.status {
	case Queued:
		for i, q := range m.queue {
			if q == j {
				m.queue = append(m.queue[:i], m.queue[i+1:]...)
				break
			}
		}
		j.status, j.finished, j.trainer = Cancelled, time.Now(), nil
	case Running:
		j.cancel() // the job's goroutine ends it
	default:
		return Job{}, fmt.Errorf("training job %s is %s: %w", id, j.status, ErrConflict)
	}
	return j.snapshot(false), nil
}

// Counts reports the jobs running and queued.
func (m *Manager) Counts() (running, queued int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.running, len(m.queue)
}

// Shutdown refuses new jobs, cancels queued and running ones and waits,
// until ctx ends, for the running ones to store their policies.
func (m *Manager) Shutdown(ctx context.Context) {
	m.mu.Lock()
	m.closed = true
	for _, j := range m.queue {
		j.status, j.finished, j.trainer = Cancelled, time.Now(), nil
	}
	m.queue = nil
	m.mu.Unlock()
	m.stop()
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
}

func (j *job) snapshot(curve bool) Job {
	s := Job{ID: j.id, Name: j.name, Status: j.status, Error: j.err, Created: j.created, Started: j.started,
		Ended: j.finished, Episode: j.episode, Stage: j.stage, Config: j.cfg, PolicyID: j.policyID,
		Interrupted: j.status == Cancelled && j.policyID != ""}
	if curve {
		s.Curve = append([]rl.Progress(nil), j.curve...)
	}
	return s
}
