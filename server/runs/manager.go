// Package runs owns a simulation run from submission to stored result: the
// queue and the worker slots, pacing, pause, resume and cancel, live
// parameter changes, the fan-out of a run's progress stream to its viewers,
// and persistence through the store. It knows nothing of HTTP: the lab
// server's handlers and the CLI both drive it, and report its Errors in
// their own terms.
//
// A run's life:
//
//	Compile (parse, validate, build once)
//	  -> Manager.Submit (admission, stored as queued, FIFO queue)
//	  -> a free slot: execute, Drive's slices, ops between slices,
//	     publish to the Hub and the Sink
//	  -> finish (results written in one transaction), Final to viewers.
//
// The Manager schedules units of work on Config.Concurrency slots; a
// simulation run is the one kind today. Work that later kinds add (sweep
// points, training jobs, work for remote workers) takes a slot, writes
// through a Sink and reports through a Hub the same way.
package runs

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"runtime"
	"slices"
	"sync"
	"time"

	"cclab/scenarios"
	"cclab/sim"
	"cclab/store"
)

// Config holds the manager's settings; a zero field means its default.
type Config struct {
	// Concurrency is how many runs simulate at once (default: the number
	// of CPUs). Each run is one goroutine.
	Concurrency int
	// MaxQueue bounds the runs waiting for a slot (default 1000).
	MaxQueue int
	// ClientRuns bounds one client's runs that are queued, running or
	// paused (default 8; negative: no limit).
	ClientRuns int
	// Limits is the admission control applied to every run, also while it
	// runs (zero value: no limits).
	Limits Limits
	// MaxRuns and MaxDBBytes are the retention limits (0: none): when a
	// run ends, the oldest unpinned finished runs are deleted until both
	// hold.
	MaxRuns    int
	MaxDBBytes int64
	// FlushEvery is how often a running run's series are written to the
	// store (default 500 ms); ProgressEvery how often its progress is
	// published to viewers (default 50 ms).
	FlushEvery    time.Duration
	ProgressEvery time.Duration
	// Dispatcher, when set, runs every run on workers elsewhere (remote.go):
	// the manager then simulates nothing itself and Concurrency does not
	// apply (the workers' own concurrency does).
	Dispatcher Dispatcher
	// CodeVersion is recorded with every run.
	CodeVersion string
	Log         *slog.Logger
}

func (c Config) withDefaults() Config {
	if c.Concurrency <= 0 {
		c.Concurrency = runtime.NumCPU()
	}
	if c.MaxQueue == 0 {
		c.MaxQueue = 1000
	}
	if c.ClientRuns == 0 {
		c.ClientRuns = 8
	}
	if c.FlushEvery <= 0 {
		c.FlushEvery = 500 * time.Millisecond
	}
	if c.ProgressEvery <= 0 {
		c.ProgressEvery = 50 * time.Millisecond
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	return c
}

// Manager queues runs and simulates at most Concurrency of them at once,
// each on its own goroutine. It owns every run that is queued, running or
// paused; a finished run lives only in the store (and in the hub of viewers
// still attached to it).
type Manager struct {
	cfg Config
	db  *store.DB
	log *slog.Logger

	ctx    context.Context // cancelled at shutdown: running runs stop and are marked
	cancel context.CancelFunc
	wg     sync.WaitGroup

	mu      sync.Mutex
	queue   []*run
	live    map[string]*run // queued, running or paused
	running int
	// lent counts the running runs asleep (paced or paused): they lend
	// their slot to the queue until they step again (lendSlot).
	lent   int
	closed bool
	// finished keeps the hubs of ended runs while viewers watch them (and
	// of just-ended runs until the next run ends), so that a viewer who was
	// attached, or joins in the moment the run ends, sees it through.
	finished map[string]*Hub
	building sync.Mutex // serialises building hubs from the store
	speed    *Speed     // the engine's speed measured here
}

// New makes a manager on db: it marks runs a previous process left
// unfinished as interrupted and applies the retention limits.
func New(ctx context.Context, db *store.DB, cfg Config) (*Manager, error) {
	cfg = cfg.withDefaults()
	rctx, cancel := context.WithCancel(context.Background())
	m := &Manager{cfg: cfg, db: db, log: cfg.Log, ctx: rctx, cancel: cancel,
		live: map[string]*run{}, finished: map[string]*Hub{}, speed: NewSpeed()}
	ids, err := db.MarkInterrupted(ctx)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("marking unfinished runs: %w", err)
	}
	if len(ids) > 0 {
		m.log.Warn("runs left unfinished by the previous process are now interrupted", "runs", ids)
	}
	m.prune()
	return m, nil
}

// Speed is the engine's speed measured on this server, which expected wall
// times are drawn from (Speed.Apply). It starts from the stored runs
// (SeedSpeed) and learns from each run that ends.
func (m *Manager) Speed() *Speed { return m.speed }

// SeedSpeed times the newest stored runs that ran as fast as possible
// (at most maxSpeedSamples), in the background until done or shutdown: a
// restarted server estimates from what it measured before. Each run's
// scenario is built again to count its hosts; one that no longer builds is
// left out.
func (m *Manager) SeedSpeed() {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		if err := m.seedSpeed(m.ctx); err != nil && m.ctx.Err() == nil {
			m.log.Warn("timing the stored runs", "err", err)
		}
	}()
}

func (m *Manager) seedSpeed(ctx context.Context) error {
	list, err := m.db.ListRuns(ctx, store.RunFilter{Status: store.StatusDone, Limit: maxSpeedSamples})
	if err != nil {
		return err
	}
	slices.Reverse(list) // oldest first, as the model keeps them
	for _, r := range list {
		m.mu.Lock()
		closed := m.closed
		m.mu.Unlock()
		if closed || ctx.Err() != nil {
			return nil // shutting down: no need to wait for the rest
		}
		if r.Speed != 0 || float64(r.Progress.Events) < minSpeedEvents || r.Progress.WallSeconds < minSpeedWall {
			continue
		}
		full, err := m.db.GetRun(ctx, r.ID)
		if err != nil || full == nil {
			continue
		}
		sc, err := scenarios.Parse(full.Scenario)
		if err != nil {
			continue
		}
		cfg, _, err := scenarios.BuildWith(sc, scenarios.BuildOptions{})
		if err != nil {
			continue
		}
		c := Estimate(cfg)
		m.speed.Add(c.Hosts, c.learned, r.Progress.Events, r.Progress.WallSeconds)
	}
	return nil
}

// Config is the manager's configuration, defaults filled in.
func (m *Manager) Config() Config { return m.cfg }

// Submission is a run to queue: a compiled scenario and who asks.
type Submission struct {
	ScenarioID string    // the scenario the run refers to (stored)
	Name       string    // the run's name (its scenario's)
	Compiled   *Compiled // the run's own scenario, overrides applied
	Speed      float64   // simulated µs per wall second; 0: as fast as possible
	Client     string    // for the per-client limit
	// Batch marks a run submitted as part of a larger piece of work (a
	// reproduction's runs): it counts against the queue limit but not the
	// per-client one; the caller bounds how many batches it starts.
	Batch bool
}

// Submit admits a run (shutdown, per-client and queue limits), stores it as
// queued and starts it when a slot is free. The database write happens
// outside the manager's lock (it can wait behind another run's final
// write); the limits are checked before it and again after, and a run
// refused then is deleted.
func (m *Manager) Submit(ctx context.Context, sub Submission) (*store.Run, error) {
	c := sub.Compiled
	if c.Refused != nil {
		return nil, c.Refused
	}
	m.mu.Lock()
	err := m.admitLocked(sub.Client, sub.Batch)
	m.mu.Unlock()
	if err != nil {
		return nil, err
	}
	algo, params := runAlgorithm(c.Scenario, c.Config)
	pj, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	bucket := chartBucket(c.Config, c.Cost)
	rec := &store.Run{ScenarioID: sub.ScenarioID, Name: sub.Name, Algorithm: algo, Params: pj, Seed: c.Scenario.Seed,
		CodeVersion: m.cfg.CodeVersion, Scenario: c.Canonical, Status: store.StatusQueued, Client: sub.Client,
		Speed: sub.Speed, BucketPS: bucket}
	if err := m.db.CreateRun(context.WithoutCancel(ctx), rec); err != nil {
		return nil, fmt.Errorf("storing the run: %w", err)
	}
	client := sub.Client
	if sub.Batch {
		client = "batch:" + client // not counted against the client
	}
	r := &run{id: rec.ID, client: client, compiled: c, scenario: c.Canonical, params: params,
		speed: sub.Speed, bucketPS: bucket, hub: newHub(bucket), ops: make(chan op, 16),
		started: make(chan struct{}), done: make(chan struct{})}
	if m.cfg.Dispatcher != nil {
		r.remote = make(chan remoteReq)
	}
	r.hub.progress = Progress{Type: "progress", Status: store.StatusQueued, FlowsTotal: len(c.Config.Flows), Speed: SpeedJSON(sub.Speed)}
	m.mu.Lock()
	if err := m.admitLocked(sub.Client, sub.Batch); err != nil {
		m.mu.Unlock()
		if derr := m.db.DeleteRun(context.WithoutCancel(ctx), rec.ID); derr != nil {
			m.log.Error("deleting a refused run", "run", rec.ID, "err", derr)
		}
		return nil, err
	}
	m.live[rec.ID] = r
	m.queue = append(m.queue, r)
	if m.running-m.lent >= m.cfg.Concurrency || m.cfg.Dispatcher != nil {
		c.Release() // it waits (or runs elsewhere): do not hold an engine meanwhile
	}
	m.log.Info("run queued", "run", rec.ID, "scenario", sub.ScenarioID, "algorithm", algo, "client", sub.Client,
		"hosts", c.Cost.Hosts, "flows", c.Cost.Flows, "queued", len(m.queue))
	m.scheduleLocked()
	m.mu.Unlock()
	return rec, nil
}

// admitLocked checks the shutdown, the client's limit and the queue's.
func (m *Manager) admitLocked(client string, batch bool) error {
	if m.closed {
		return errorf(Unavailable, "", "the server is shutting down")
	}
	if m.cfg.ClientRuns > 0 && !batch {
		n := 0
		for _, r := range m.live {
			if r.client == client {
				n++
			}
		}
		if n >= m.cfg.ClientRuns {
			return limited(TooMany, "max-client-runs", "",
				"you already have %d runs queued or running, this server's limit per client (max-client-runs); wait for one to finish or cancel one", n)
		}
	}
	if m.cfg.MaxQueue > 0 && len(m.queue) >= m.cfg.MaxQueue {
		return limited(TooMany, "max-queue", "",
			"%d runs are already waiting, this server's limit (max-queue); try again later", len(m.queue))
	}
	return nil
}

// runAlgorithm names a run's algorithm ("mixed" when flows differ) and its
// parameters: the resolved values of the scenario's algorithm.
func runAlgorithm(sc *scenarios.Scenario, cfg *sim.Config) (string, map[string]float64) {
	name := sc.CC.Algorithm
	params := map[string]float64{}
	for _, a := range cfg.Algos {
		if a.Algo != nil && a.Algo.Name != name {
			name = "mixed"
		}
	}
	for _, a := range cfg.Algos {
		if a.Algo != nil && a.Algo.Name == sc.CC.Algorithm {
			for k, v := range a.Params {
				params[k] = v
			}
			break
		}
	}
	return name, params
}

// scheduleLocked starts queued runs while slots are free.
// With a dispatcher, every queued run is handed to the workers at once.
func (m *Manager) scheduleLocked() {
	for (m.running-m.lent < m.cfg.Concurrency || m.cfg.Dispatcher != nil) && len(m.queue) > 0 && !m.closed {
		r := m.queue[0]
		m.queue = m.queue[1:]
		m.running++
		close(r.started)
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			if m.cfg.Dispatcher != nil {
				r.executeRemote(m.ctx, m)
			} else {
				r.execute(m.ctx, m)
			}
			m.ended(r)
		}()
	}
}

// lendSlot lends a sleeping run's slot to the queue (a paced run waiting
// for its clock, a paused run): the next queued run may start.
// reclaimSlot takes it back when the run steps again, at once, even when
// that makes more runs step than Concurrency for the moment (a paced run
// steps for a few milliseconds at a time; making it wait for a slot would
// break its pace): no queued run starts until the count is back under.
func (m *Manager) lendSlot() {
	m.mu.Lock()
	m.lent++
	m.scheduleLocked()
	m.mu.Unlock()
}

func (m *Manager) reclaimSlot() {
	m.mu.Lock()
	m.lent--
	m.mu.Unlock()
}

// ended releases a run's slot, prunes old runs and starts the next.
func (m *Manager) ended(r *run) {
	m.mu.Lock()
	m.running--
	delete(m.live, r.id)
	close(r.done)
	m.finished[r.id] = r.hub
	for id, h := range m.finished {
		if id != r.id && h.viewerCount() == 0 {
			delete(m.finished, id)
		}
	}
	m.scheduleLocked()
	m.mu.Unlock()
	m.prune()
}

// prune applies the retention limits.
func (m *Manager) prune() {
	if m.cfg.MaxRuns <= 0 && m.cfg.MaxDBBytes <= 0 {
		return
	}
	ids, err := m.db.Prune(context.Background(), m.cfg.MaxRuns, m.cfg.MaxDBBytes)
	if err != nil {
		m.log.Error("pruning old runs", "err", err)
		return
	}
	if len(ids) > 0 {
		m.log.Info("pruned old runs", "count", len(ids), "ids", ids)
	}
}

// Live reports whether the run is queued, running or paused.
func (m *Manager) Live(id string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.live[id] != nil
}

// WaitEnded waits, at most max, until a run has left the manager (so that
// its stored status is final).
func (m *Manager) WaitEnded(ctx context.Context, id string, max time.Duration) {
	m.mu.Lock()
	r := m.live[id]
	m.mu.Unlock()
	if r == nil {
		return
	}
	t := time.NewTimer(max)
	defer t.Stop()
	select {
	case <-r.done:
	case <-t.C:
	case <-ctx.Done():
	}
}

// hubOf returns the hub of a live or just-finished run.
func (m *Manager) hubOf(id string) *Hub {
	m.mu.Lock()
	defer m.mu.Unlock()
	if r := m.live[id]; r != nil {
		return r.hub
	}
	return m.finished[id]
}

// LiveProgress is the latest progress of a run the manager still holds
// (live, or just finished), if any has been published.
func (m *Manager) LiveProgress(id string) (Progress, bool) {
	h := m.hubOf(id)
	if h == nil {
		return Progress{}, false
	}
	p := h.Progress()
	return p, p.Type != ""
}

// Watch returns the hub a new viewer of run id joins: the live run's, a
// just-ended run's, or one built from the store, shared by every viewer
// of that run while any is connected (so 40 students opening one finished
// run cost one copy of its history). Call Unwatch when the viewer leaves.
func (m *Manager) Watch(ctx context.Context, id string) (*Hub, error) {
	if h := m.hubOf(id); h != nil {
		return h, nil
	}
	m.building.Lock() // one build at a time: concurrent viewers wait and share it
	defer m.building.Unlock()
	if h := m.hubOf(id); h != nil {
		return h, nil
	}
	h, err := storedHub(ctx, m.db, id)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.finished[id] = h
	m.mu.Unlock()
	return h, nil
}

// Unwatch forgets a finished run's hub once its last viewer has gone.
func (m *Manager) Unwatch(id string, h *Hub) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.finished[id] == h && h.viewerCount() == 0 {
		delete(m.finished, id)
	}
}

// WatchedHubs counts the hubs of finished runs kept for their viewers.
func (m *Manager) WatchedHubs() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.finished)
}

// Pause pauses a running run at its next event boundary.
func (m *Manager) Pause(ctx context.Context, id string) error {
	_, err := m.control(ctx, id, op{kind: opPause})
	return err
}

// Resume resumes a paused run.
func (m *Manager) Resume(ctx context.Context, id string) error {
	_, err := m.control(ctx, id, op{kind: opResume})
	return err
}

// Cancel stops a run (keeping what it simulated) or, while it is queued,
// removes it from the queue.
func (m *Manager) Cancel(ctx context.Context, id string) error {
	_, err := m.control(ctx, id, op{kind: opCancel})
	return err
}

// SetSpeed changes a live run's pacing (0: as fast as possible).
func (m *Manager) SetSpeed(ctx context.Context, id string, speed float64) error {
	_, err := m.control(ctx, id, op{kind: opSpeed, speed: speed})
	return err
}

// SetParams applies a live parameter change (a JSON object of values) at
// the run's next event boundary and records it as a scenario event.
func (m *Manager) SetParams(ctx context.Context, id string, params []byte) (*Change, error) {
	res, err := m.control(ctx, id, op{kind: opParams, params: params})
	return res.change, err
}

// control sends a request to a live run and waits for its answer. A queued
// run can only be cancelled (it then never starts).
func (m *Manager) control(ctx context.Context, id string, o op) (opResult, error) {
	m.mu.Lock()
	r := m.live[id]
	if r == nil {
		m.mu.Unlock()
		rec, err := m.db.GetRun(ctx, id)
		if err != nil {
			return opResult{}, err
		}
		return opResult{}, errorf(Conflict, "status", "the run is %s", rec.Status)
	}
	select {
	case <-r.started:
	default:
		// still queued
		m.mu.Unlock()
		if o.kind != opCancel {
			return opResult{}, errorf(Conflict, "status", "the run is queued; it can only be cancelled")
		}
		return opResult{}, m.cancelQueued(ctx, r)
	}
	m.mu.Unlock()
	ended := errorf(Conflict, "status", "the run has ended")
	o.reply = make(chan opResult, 1)
	select {
	case r.ops <- o:
	case <-r.done:
		return opResult{}, ended
	case <-ctx.Done():
		return opResult{}, ctx.Err()
	}
	select {
	case res := <-o.reply:
		return res, res.err
	case <-r.done:
		// it may have answered just before it ended
		select {
		case res := <-o.reply:
			return res, res.err
		default:
			return opResult{}, ended
		}
	case <-ctx.Done():
		return opResult{}, ctx.Err()
	}
}

// cancelQueued removes a queued run from the queue and marks it cancelled.
// It leaves the queue first (so it cannot start), and the manager only once
// its status is written, so a control request meanwhile still finds it.
func (m *Manager) cancelQueued(ctx context.Context, r *run) error {
	m.mu.Lock()
	i := slices.Index(m.queue, r)
	if i < 0 {
		m.mu.Unlock()
		select {
		case <-r.started:
			// it started in the meantime: cancel it the normal way
			_, err := m.control(ctx, r.id, op{kind: opCancel})
			return err
		case <-r.done:
			return nil // another request cancelled it
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	m.queue = slices.Delete(m.queue, i, i+1)
	m.mu.Unlock()
	const msg = "cancelled before it started"
	err := m.db.FinishRun(context.WithoutCancel(ctx), r.id, store.Finish{Status: store.StatusCancelled, At: time.Now(), Error: msg})
	m.mu.Lock()
	delete(m.live, r.id)
	close(r.done)
	m.finished[r.id] = r.hub
	m.mu.Unlock()
	r.hub.finish(Final{Type: "done", Status: store.StatusCancelled, Error: msg})
	return err
}

// Shutdown stops taking runs, gives running ones until ctx ends to finish,
// then stops them (their results so far are stored and they are marked
// interrupted); queued runs are marked interrupted.
func (m *Manager) Shutdown(ctx context.Context) {
	m.mu.Lock()
	m.closed = true // nothing starts from now on
	queued := slices.Clone(m.queue)
	m.mu.Unlock()
	const msg = "the server shut down before the run started"
	for _, r := range queued {
		err := m.db.FinishRun(context.Background(), r.id, store.Finish{Status: store.StatusInterrupted, At: time.Now(), Error: msg})
		if err != nil {
			m.log.Error("marking a queued run interrupted", "run", r.id, "err", err)
		}
		m.mu.Lock()
		if i := slices.Index(m.queue, r); i >= 0 {
			m.queue = slices.Delete(m.queue, i, i+1)
			delete(m.live, r.id)
			close(r.done)
		}
		m.mu.Unlock()
		r.hub.finish(Final{Type: "done", Status: store.StatusInterrupted, Error: msg})
	}
	done := make(chan struct{})
	go func() { m.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
		m.log.Warn("shutdown grace over: stopping running runs")
		m.cancel()
		<-done
	}
	m.cancel()
}

// Counts reports how many runs are simulating and waiting.
func (m *Manager) Counts() (running, queued int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.running, len(m.queue)
}

// SetClientRuns changes the per-client limit of runs queued, running or
// paused (≤ 0: none); runs already admitted stay.
func (m *Manager) SetClientRuns(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if n <= 0 {
		n = -1
	}
	m.cfg.ClientRuns = n
}

// ClientCounts returns, per client, its runs queued, running or paused.
func (m *Manager) ClientCounts() map[string]int {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := map[string]int{}
	for _, r := range m.live {
		out[r.client]++
	}
	return out
}

// Admissible checks the shutdown, the client's limit and the queue's now,
// without submitting: a caller checks it before compiling a run it might
// not be able to queue (Submit checks again).
func (m *Manager) Admissible(client string, batch bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.admitLocked(client, batch)
}
