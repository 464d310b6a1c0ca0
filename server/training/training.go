// Package training runs the lab's training jobs: `cclab train` (sim/rl) on
// the server, one job (or Config.Concurrency) at a time, each on its own
// goroutine that plays one episode at a time (rl.Config.Workers = 1) so that
// runs keep the CPU. A job that ends — done, or cancelled or interrupted
// after at least one round — stores its policy under the requested name.
//
// Jobs are kept in the store: their configuration, status and learning
// curve (one point per round) outlive the process, and a job a process
// left queued or running is marked interrupted when the next one starts.
// A training job saves a checkpoint every Config.CheckpointEvery and when
// it is stopped (Config.Dir); Resume continues a cancelled or interrupted
// job from it exactly (or from the start, when it has none: the same run,
// a job being deterministic for its seed). Viewers follow a job with
// Watch. Like server/runs, nothing here speaks HTTP.
package training

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"cclab/cc/fdcc"
	"cclab/sim/rl"
	"cclab/store"
)

// The states of a job.
const (
	Queued      = store.StatusQueued
	Running     = store.StatusRunning
	Done        = store.StatusDone
	Cancelled   = store.StatusCancelled
	Interrupted = store.StatusInterrupted // stopped by a server shutdown, or left by a process that died
	Failed      = store.StatusFailed
)

// Errors of the manager's calls (wrapped, with what they are about).
var (
	ErrNotFound = errors.New("no such training job")
	ErrConflict = errors.New("conflict")
	ErrTooMany  = errors.New("too many training jobs")
	ErrClosed   = errors.New("the server is shutting down")
)

// Why a training job's context ends.
var (
	errShutdown = errors.New("the server shut down")
	errTimeCap  = errors.New("the training time cap")
)

// Policies is where a job's policy goes.
type Policies interface {
	PutPolicy(ctx context.Context, p *store.Policy) error
	// ReplacePolicy stores p in place of the policy old (a resumed job's
	// final policy replaces the one it stored when it was stopped).
	ReplacePolicy(ctx context.Context, old string, p *store.Policy) error
}

// Jobs is where jobs are kept (*store.DB).
type Jobs interface {
	CreateTrainJob(ctx context.Context, j *store.TrainJob) error
	StartTrainJob(ctx context.Context, id string, at time.Time, episode, stage, points int) error
	AddTrainPoint(ctx context.Context, id string, seq int, point []byte, episode, stage int) error
	FinishTrainJob(ctx context.Context, id string, e store.TrainEnd) error
	ResumeTrainJob(ctx context.Context, id string) error
	GetTrainJob(ctx context.Context, id string) (*store.TrainJob, error)
	ListTrainJobs(ctx context.Context) ([]store.TrainJob, error)
	TrainPoints(ctx context.Context, id string) ([]json.RawMessage, error)
	MarkTrainInterrupted(ctx context.Context) ([]string, error)
	PruneTrainJobs(ctx context.Context, keep int) ([]string, error)
}

// Store is what the manager keeps its jobs and policies in.
type Store interface {
	Policies
	Jobs
}

// Config holds the manager's settings; a zero field takes its default.
type Config struct {
	Concurrency int // jobs training at once (default 1)
	MaxQueue    int // jobs waiting for a slot (default 8)
	Keep        int // ended jobs kept in the store, newest (default 100)
	// Dir holds the jobs' checkpoints, one folder per job ("": none; a
	// resumed job then starts again from its first episode).
	Dir string
	// CheckpointEvery is how often a training job saves a checkpoint
	// (default 30 s; also when it is stopped).
	CheckpointEvery time.Duration
	// MaxTime stops a job after this much training, its time before a
	// resume included (default 1 h): it ends cancelled, its policy so far
	// stored.
	MaxTime time.Duration
	Log     *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.Concurrency <= 0 {
		c.Concurrency = 1
	}
	if c.MaxQueue <= 0 {
		c.MaxQueue = 8
	}
	if c.Keep <= 0 {
		c.Keep = 100
	}
	if c.CheckpointEvery <= 0 {
		c.CheckpointEvery = 30 * time.Second
	}
	if c.MaxTime <= 0 {
		c.MaxTime = time.Hour
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	return c
}

// Manager queues and runs training jobs. It holds the jobs that are queued
// or training; the store holds every job.
type Manager struct {
	cfg  Config
	st   Store
	ctx  context.Context // cancelled at Shutdown
	stop context.CancelFunc
	wg   sync.WaitGroup

	mu      sync.Mutex
	jobs    map[string]*job // queued or training
	queue   []*job
	running int
	closed  bool
}

type job struct {
	id, name string
	created  time.Time
	cfg      rl.Config // defaults filled
	trainer  *rl.Trainer
	resume   bool   // start from the checkpoint (or from scratch without one)
	previous string // the policy it stored when it was stopped, replaced at the end

	// guarded by Manager.mu
	status, err       string
	started, finished time.Time
	episode, stage    int
	curve             []rl.Progress
	policyID          string
	interrupted       bool
	cancel            context.CancelCauseFunc
	changed           chan struct{} // closed at each change, then replaced
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
	Interrupted             bool          // its policy was stored when it was stopped
	Resumable               bool          // cancelled or interrupted before its last episode
}

// New starts a manager. Jobs a previous process left queued or training
// are marked interrupted.
func New(ctx context.Context, st Store, cfg Config) (*Manager, error) {
	cfg = cfg.withDefaults()
	if cfg.Dir != "" {
		if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
			return nil, fmt.Errorf("training: checkpoints: %w", err)
		}
	}
	ids, err := st.MarkTrainInterrupted(ctx)
	if err != nil {
		return nil, err
	}
	if len(ids) > 0 {
		cfg.Log.Warn("training jobs left unfinished by the previous process are now interrupted", "jobs", ids)
	}
	mctx, stop := context.WithCancel(context.Background())
	return &Manager{cfg: cfg, st: st, ctx: mctx, stop: stop, jobs: map[string]*job{}}, nil
}

// Config is the manager's configuration, defaults filled.
func (m *Manager) Config() Config { return m.cfg }

// Submit queues a training run of cfg whose policy is to be stored as name.
// The configuration is checked here (rl.NewTrainer's errors, wrapped); a
// name another live job will store is ErrConflict.
func (m *Manager) Submit(name string, cfg rl.Config) (Job, error) {
	cfg.Workers = 1
	t, err := rl.NewTrainer(cfg)
	if err != nil {
		return Job{}, err
	}
	cj, err := json.Marshal(t.Config())
	if err != nil {
		return Job{}, fmt.Errorf("training: config: %w", err)
	}
	j := &job{id: store.NewRunID(), name: name, created: time.Now(), trainer: t, cfg: t.Config(), status: Queued,
		stage: t.Config().Stages[0], changed: make(chan struct{})}
	if err := m.reserve(j); err != nil {
		return Job{}, err
	}
	rec := &store.TrainJob{ID: j.id, Name: name, Algorithm: cfg.Algo, Config: cj, Status: Queued, Created: j.created, Stage: j.stage}
	if err := m.st.CreateTrainJob(context.Background(), rec); err != nil {
		m.mu.Lock()
		delete(m.jobs, j.id)
		m.mu.Unlock()
		return Job{}, err
	}
	return m.enqueue(j), nil
}

// reserve admits a job (shutdown, its name, the queue) and holds its name.
func (m *Manager) reserve(j *job) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return ErrClosed
	}
	if o := m.jobs[j.id]; o != nil {
		return fmt.Errorf("training job %s is %s: %w", j.id, o.status, ErrConflict)
	}
	for _, o := range m.jobs {
		if o.name == j.name {
			return fmt.Errorf("training job %s will store a policy named %q: %w", o.id, j.name, ErrConflict)
		}
	}
	waiting := 0
	for _, o := range m.jobs {
		if o.status == Queued {
			waiting++
		}
	}
	if m.running >= m.cfg.Concurrency && waiting >= m.cfg.MaxQueue {
		return fmt.Errorf("%d jobs are waiting already: %w", waiting, ErrTooMany)
	}
	m.jobs[j.id] = j
	return nil
}

// enqueue queues a reserved job and starts it if a slot is free.
func (m *Manager) enqueue(j *job) Job {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.queue = append(m.queue, j)
	m.scheduleLocked()
	return j.snapshot(false)
}

// scheduleLocked starts queued jobs while there is a free slot.
func (m *Manager) scheduleLocked() {
	for m.running < m.cfg.Concurrency && len(m.queue) > 0 && !m.closed {
		j := m.queue[0]
		m.queue = m.queue[1:]
		ctx, cancel := context.WithCancelCause(m.ctx)
		j.cancel, j.status, j.started = cancel, Running, time.Now()
		j.notifyLocked()
		m.running++
		m.wg.Add(1)
		go m.run(ctx, j)
	}
}

// notifyLocked wakes the job's viewers.
func (j *job) notifyLocked() {
	close(j.changed)
	j.changed = make(chan struct{})
}

// checkpoint is the folder of a job's checkpoint ("" without Config.Dir).
func (m *Manager) checkpoint(id string) string {
	if m.cfg.Dir == "" {
		return ""
	}
	return filepath.Join(m.cfg.Dir, id)
}

// trainerOf makes a job's trainer: its own, or, resumed, from its
// checkpoint (from scratch when it has none).
func (m *Manager) trainerOf(j *job) (*rl.Trainer, error) {
	if !j.resume {
		return j.trainer, nil
	}
	if dir := m.checkpoint(j.id); dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "trainer.json")); err == nil {
			t, err := rl.Resume(dir, 0)
			if err != nil {
				return nil, fmt.Errorf("resuming from the checkpoint: %w", err)
			}
			return t, nil
		}
	}
	return rl.NewTrainer(j.cfg)
}

// run trains until the job's episodes are played, it is cancelled, the
// server shuts down or the time cap is reached, then stores the policy and
// ends the job.
func (m *Manager) run(ctx context.Context, j *job) {
	defer m.wg.Done()
	log := m.cfg.Log.With("job", j.id)
	bg := context.WithoutCancel(ctx)
	t, err := m.trainerOf(j)
	if err != nil {
		m.end(j, nil, Failed, err.Error(), false)
		return
	}
	j.trainer = nil // the trainer belongs to this goroutine now
	stage := j.cfg.Stages[0]
	curve := t.Curve()
	if n := len(curve); n > 0 {
		stage = curve[n-1].FanIn
	}
	if err := m.st.StartTrainJob(bg, j.id, time.Now(), t.Episode(), stage, len(curve)); err != nil {
		m.end(j, nil, Failed, err.Error(), false)
		return
	}
	m.mu.Lock()
	j.curve, j.episode, j.stage = append([]rl.Progress(nil), curve...), t.Episode(), stage
	j.notifyLocked()
	m.mu.Unlock()

	tctx, cancel := context.WithTimeoutCause(ctx, max(m.cfg.MaxTime-wall(t), 0), errTimeCap)
	defer cancel()
	saved := time.Now()
	for t.Episode() < j.cfg.Episodes {
		var p rl.Progress
		if p, err = t.Round(tctx); err != nil {
			break
		}
		if data, err := json.Marshal(pointOf(p)); err != nil {
			log.Error("training job: a round", "err", err)
		} else if err := m.st.AddTrainPoint(bg, j.id, len(t.Curve())-1, data, p.Episode, p.FanIn); err != nil {
			log.Error("training job: storing a round", "err", err)
		}
		m.mu.Lock()
		j.curve = append(j.curve, p)
		j.episode, j.stage = p.Episode, p.FanIn
		j.notifyLocked()
		m.mu.Unlock()
		if dir := m.checkpoint(j.id); dir != "" && time.Since(saved) >= m.cfg.CheckpointEvery && t.Episode() < j.cfg.Episodes {
			if err := t.Save(dir); err != nil {
				log.Error("training job: saving a checkpoint", "err", err)
			}
			saved = time.Now()
		}
	}
	status, msg := Done, ""
	if err != nil {
		switch cause := context.Cause(tctx); {
		case tctx.Err() == nil:
			status, msg = Failed, err.Error()
		case errors.Is(cause, errShutdown):
			status, msg = Interrupted, fmt.Sprintf("the server shut down at episode %d of %d", t.Episode(), j.cfg.Episodes)
		case errors.Is(cause, errTimeCap):
			status, msg = Cancelled, fmt.Sprintf("stopped at episode %d of %d: this server's limit of %v of training per job (max-train-time)",
				t.Episode(), j.cfg.Episodes, m.cfg.MaxTime)
		default:
			status = Cancelled
		}
	}
	m.end(j, t, status, msg, status == Cancelled || status == Interrupted)
}

// end stores a job's checkpoint when it was stopped (and removes it
// otherwise), its policy when it is done or was stopped after a round,
// and its end; then it leaves the manager.
func (m *Manager) end(j *job, t *rl.Trainer, status, msg string, stopped bool) {
	log := m.cfg.Log.With("job", j.id)
	bg := context.Background()
	switch dir := m.checkpoint(j.id); {
	case dir == "":
	case stopped && t != nil && t.Episode() > 0:
		if err := t.Save(dir); err != nil {
			log.Error("training job: saving a checkpoint", "err", err)
		}
	default:
		if err := os.RemoveAll(dir); err != nil {
			log.Error("training job: removing its checkpoint", "err", err)
		}
	}
	var id string
	if t != nil && (status == Done || (stopped && t.Episode() > 0)) {
		sctx, cancel := context.WithTimeout(bg, 30*time.Second)
		var err error
		id, err = m.store(sctx, j, t, stopped)
		cancel()
		if err != nil {
			status, msg, stopped = Failed, fmt.Sprintf("storing the policy: %v", err), false
			log.Warn("training job: storing its policy", "name", j.name, "err", err)
		}
	}
	now := time.Now()
	if err := m.st.FinishTrainJob(bg, j.id, store.TrainEnd{Status: status, Error: msg, At: now, Policy: id, Interrupted: id != "" && stopped}); err != nil {
		log.Error("training job: storing its end", "err", err)
	}
	m.mu.Lock()
	j.status, j.err, j.finished = status, msg, now
	if id != "" {
		j.policyID, j.interrupted = id, stopped
	}
	if j.cancel != nil {
		j.cancel(nil)
	}
	delete(m.jobs, j.id)
	j.notifyLocked()
	m.running--
	m.scheduleLocked()
	m.mu.Unlock()
	pruned, err := m.st.PruneTrainJobs(bg, m.cfg.Keep)
	if err != nil {
		log.Error("training jobs: pruning", "err", err)
	}
	for _, id := range pruned {
		if dir := m.checkpoint(id); dir != "" {
			if err := os.RemoveAll(dir); err != nil {
				log.Error("training jobs: removing a pruned job's checkpoint", "pruned", id, "err", err)
			}
		}
	}
}

// wall is a trainer's training time so far.
func wall(t *rl.Trainer) time.Duration {
	if c := t.Curve(); len(c) > 0 {
		return c[len(c)-1].Wall
	}
	return 0
}

// store writes the job's policy: the one its evaluations ranked best (the
// last one when it has not evaluated), as `cclab train` chooses
// policy.safetensors.
func (m *Manager) store(ctx context.Context, j *job, t *rl.Trainer, interrupted bool) (string, error) {
	meta := map[string]string{
		"algo":     j.cfg.Algo,
		"episodes": strconv.Itoa(t.Episode()),
		"seed":     strconv.FormatUint(j.cfg.Seed, 10),
		"command":  "lab training job " + j.id,
		"job":      j.id,
		"wall_s":   strconv.FormatFloat(wall(t).Seconds(), 'f', 0, 64),
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
	if j.previous != "" {
		err = m.st.ReplacePolicy(ctx, j.previous, sp)
	} else {
		err = m.st.PutPolicy(ctx, sp)
	}
	if err != nil {
		return "", err
	}
	return sp.ID, nil
}

// Get returns a job with its learning curve so far.
func (m *Manager) Get(ctx context.Context, id string) (Job, error) {
	j, _, err := m.Watch(ctx, id)
	return j, err
}

// Watch returns a job with its learning curve so far and, while it is
// queued or training, a channel closed at its next change (nil once it has
// ended).
func (m *Manager) Watch(ctx context.Context, id string) (Job, <-chan struct{}, error) {
	m.mu.Lock()
	if j := m.jobs[id]; j != nil {
		defer m.mu.Unlock()
		return j.snapshot(true), j.changed, nil
	}
	m.mu.Unlock()
	rec, err := m.st.GetTrainJob(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return Job{}, nil, fmt.Errorf("training job %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Job{}, nil, err
	}
	j, err := stored(rec)
	if err != nil {
		return Job{}, nil, err
	}
	raw, err := m.st.TrainPoints(ctx, id)
	if err != nil {
		return Job{}, nil, err
	}
	j.Curve = make([]rl.Progress, len(raw))
	for i, r := range raw {
		var pt point
		if err := json.Unmarshal(r, &pt); err != nil {
			return Job{}, nil, fmt.Errorf("training job %s: round %d: %w", id, i, err)
		}
		j.Curve[i] = pt.progress()
	}
	if !store.Terminal(j.Status) {
		// the store has it live but this manager does not: it has just
		// ended (its row written first), or been resumed; ask again
		m.mu.Lock()
		defer m.mu.Unlock()
		if lj := m.jobs[id]; lj != nil {
			return lj.snapshot(true), lj.changed, nil
		}
		closed := make(chan struct{})
		close(closed)
		return j, closed, nil
	}
	return j, nil, nil
}

// stored is a job as the store has it (without its curve).
func stored(rec *store.TrainJob) (Job, error) {
	j := Job{ID: rec.ID, Name: rec.Name, Status: rec.Status, Error: rec.Error, Created: rec.Created, Started: rec.Started,
		Ended: rec.Finished, Episode: rec.Episode, Stage: rec.Stage, PolicyID: rec.Policy, Interrupted: rec.Interrupted}
	if err := json.Unmarshal(rec.Config, &j.Config); err != nil {
		return Job{}, fmt.Errorf("training job %s: config: %w", rec.ID, err)
	}
	j.Resumable = (j.Status == Cancelled || j.Status == Interrupted) && j.Episode < j.Config.Episodes
	return j, nil
}

// List returns every job, newest first, without curves.
func (m *Manager) List(ctx context.Context) ([]Job, error) {
	recs, err := m.st.ListTrainJobs(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Job, 0, len(recs))
	m.mu.Lock()
	defer m.mu.Unlock()
	for i := range recs {
		if j := m.jobs[recs[i].ID]; j != nil {
			out = append(out, j.snapshot(false))
			continue
		}
		j, err := stored(&recs[i])
		if err != nil {
			return nil, err
		}
		out = append(out, j)
	}
	return out, nil
}

// Cancel stops a job: a queued one never starts, a running one stops at
// once (the round under way is dropped) and stores what it learned when
// it has played a round. Cancelling an ended job is ErrConflict.
func (m *Manager) Cancel(ctx context.Context, id string) (Job, error) {
	m.mu.Lock()
	j := m.jobs[id]
	if j == nil {
		m.mu.Unlock()
		rec, err := m.st.GetTrainJob(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return Job{}, fmt.Errorf("training job %s: %w", id, ErrNotFound)
		}
		if err != nil {
			return Job{}, err
		}
		return Job{}, fmt.Errorf("training job %s is %s: %w", id, rec.Status, ErrConflict)
	}
	if j.status == Running {
		j.cancel(nil) // the job's goroutine ends it
		defer m.mu.Unlock()
		return j.snapshot(false), nil
	}
	for i, q := range m.queue {
		if q == j {
			m.queue = append(m.queue[:i], m.queue[i+1:]...)
			break
		}
	}
	delete(m.jobs, id)
	j.status, j.finished, j.trainer = Cancelled, time.Now(), nil
	j.notifyLocked()
	snap := j.snapshot(false)
	m.mu.Unlock()
	return snap, m.st.FinishTrainJob(context.WithoutCancel(ctx), id, store.TrainEnd{Status: Cancelled, At: snap.Ended})
}

// Resume queues a cancelled or interrupted job again: it continues from
// its checkpoint exactly (from its first episode when it has none), and
// its final policy replaces the one it stored when it was stopped.
func (m *Manager) Resume(ctx context.Context, id string) (Job, error) {
	rec, err := m.st.GetTrainJob(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return Job{}, fmt.Errorf("training job %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Job{}, err
	}
	sj, err := stored(rec)
	if err != nil {
		return Job{}, err
	}
	if !sj.Resumable {
		return Job{}, fmt.Errorf("training job %s is %s at episode %d of %d: only a cancelled or interrupted job with episodes left can be resumed: %w",
			id, sj.Status, sj.Episode, sj.Config.Episodes, ErrConflict)
	}
	j := &job{id: id, name: rec.Name, created: rec.Created, cfg: sj.Config, resume: true, status: Queued,
		started: rec.Started, episode: rec.Episode, stage: rec.Stage, changed: make(chan struct{})}
	if rec.Interrupted {
		j.previous = rec.Policy
		j.policyID, j.interrupted = rec.Policy, true
	}
	if err := m.reserve(j); err != nil {
		return Job{}, err
	}
	if err := m.st.ResumeTrainJob(context.WithoutCancel(ctx), id); err != nil {
		m.mu.Lock()
		delete(m.jobs, id)
		m.mu.Unlock()
		return Job{}, err
	}
	return m.enqueue(j), nil
}

// Counts reports the jobs running and queued.
func (m *Manager) Counts() (running, queued int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.running, len(m.queue)
}

// Shutdown refuses new jobs and stops the others, interrupted: queued ones
// never start, running ones store what they learned (when they have played
// a round) and a checkpoint to resume from. It waits for them until ctx
// ends.
func (m *Manager) Shutdown(ctx context.Context) {
	m.mu.Lock()
	m.closed = true
	queued := m.queue
	m.queue = nil
	for _, j := range queued {
		delete(m.jobs, j.id)
		j.status, j.err, j.finished, j.trainer = Interrupted, "the server shut down before the job started", time.Now(), nil
		j.notifyLocked()
	}
	for _, j := range m.jobs {
		if j.cancel != nil {
			j.cancel(errShutdown)
		}
	}
	m.mu.Unlock()
	for _, j := range queued {
		if err := m.st.FinishTrainJob(context.Background(), j.id, store.TrainEnd{Status: Interrupted, Error: j.err, At: j.finished}); err != nil {
			m.cfg.Log.Error("training job: storing its end", "job", j.id, "err", err)
		}
	}
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	m.stop()
}

func (j *job) snapshot(curve bool) Job {
	s := Job{ID: j.id, Name: j.name, Status: j.status, Error: j.err, Created: j.created, Started: j.started,
		Ended: j.finished, Episode: j.episode, Stage: j.stage, Config: j.cfg, PolicyID: j.policyID,
		Interrupted: j.interrupted && j.policyID != ""}
	s.Resumable = (s.Status == Cancelled || s.Status == Interrupted) && s.Episode < s.Config.Episodes
	if curve {
		s.Curve = append([]rl.Progress(nil), j.curve...)
	}
	return s
}

// point is one round of the learning curve as the store keeps it: an
// rl.Progress whose numbers that are not finite are null.
type point struct {
	Episode    int        `json:"episode"`
	Episodes   int        `json:"episodes"`
	FanIn      int        `json:"fanIn"`
	Reward     num        `json:"reward"`
	CriticLoss num        `json:"criticLoss"`
	ActorLoss  num        `json:"actorLoss"`
	Q          num        `json:"q"`
	Steps      int        `json:"steps"`
	Replay     int        `json:"replay"`
	WallNs     int64      `json:"wallNs"`
	Eval       *evalPoint `json:"eval,omitempty"`
}

type evalPoint struct {
	Reward   num     `json:"reward"`
	Score    num     `json:"score"`
	Unfair   []num   `json:"unfair"`
	PeakQ    []int64 `json:"peakQueueBytes"`
	Slowdown []num   `json:"slowdown"`
	Finished []bool  `json:"finished"`
}

// num is a float64 that is null in JSON when it is not finite.
type num float64

func (n num) MarshalJSON() ([]byte, error) {
	v := float64(n)
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, v, 'g', -1, 64), nil
}

func (n *num) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = num(math.NaN())
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	*n = num(v)
	return err
}

func nums(v []float64) []num {
	out := make([]num, len(v))
	for i, x := range v {
		out[i] = num(x)
	}
	return out
}

func floats(v []num) []float64 {
	out := make([]float64, len(v))
	for i, x := range v {
		out[i] = float64(x)
	}
	return out
}

func pointOf(p rl.Progress) point {
	pt := point{Episode: p.Episode, Episodes: p.Episodes, FanIn: p.FanIn, Reward: num(p.Reward), CriticLoss: num(p.CriticLoss),
		ActorLoss: num(p.ActorLoss), Q: num(p.Q), Steps: p.Steps, Replay: p.Replay, WallNs: int64(p.Wall)}
	if e := p.Eval; e != nil {
		pt.Eval = &evalPoint{Reward: num(e.Reward), Score: num(e.Score), Unfair: nums(e.Unfair), PeakQ: e.PeakQ,
			Slowdown: nums(e.Slowdown), Finished: e.Finished}
	}
	return pt
}

func (pt point) progress() rl.Progress {
	p := rl.Progress{Episode: pt.Episode, Episodes: pt.Episodes, FanIn: pt.FanIn, Reward: float64(pt.Reward),
		CriticLoss: float64(pt.CriticLoss), ActorLoss: float64(pt.ActorLoss), Q: float64(pt.Q), Steps: pt.Steps,
		Replay: pt.Replay, Wall: time.Duration(pt.WallNs)}
	if e := pt.Eval; e != nil {
		p.Eval = &rl.Eval{Reward: float64(e.Reward), Score: float64(e.Score), Unfair: floats(e.Unfair), PeakQ: e.PeakQ,
			Slowdown: floats(e.Slowdown), Finished: e.Finished}
	}
	return p
}
