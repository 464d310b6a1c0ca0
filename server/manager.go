package server

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"cclab/scenarios"
	"cclab/sim"
	"cclab/store"
)

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
	queue   []*liveRun
	live    map[string]*liveRun // queued, running or paused
	running int
	closed  bool
	// finished keeps the hubs of ended runs while viewers watch them (and
	// of just-ended runs until the next run ends), so that a viewer who was
	// attached, or joins in the moment the run ends, sees it through.
	finished map[string]*hub
	building sync.Mutex // serialises building hubs from the store
}

func newManager(cfg Config, db *store.DB, log *slog.Logger) *Manager {
	ctx, cancel := context.WithCancel(context.Background())
	return &Manager{cfg: cfg, db: db, log: log, ctx: ctx, cancel: cancel,
		live: map[string]*liveRun{}, finished: map[string]*hub{}}
}

// submission is a validated run request.
type submission struct {
	scenarioID string
	name       string
	scenario   []byte // canonical, overrides applied
	sc         *scenarios.Scenario
	cfg        *sim.Config
	cost       Cost
	speed      float64
	client     string
}

// submit admits a run (per-client and queue limits), stores it as queued
// and starts it when a slot is free. The database write happens outside the
// manager's lock (it can wait behind another run's final write); the limits
// are checked before it and again after, and a run refused then is deleted.
func (m *Manager) submit(ctx context.Context, sub *submission) (*store.Run, error) {
	m.mu.Lock()
	err := m.admitLocked(sub.client)
	m.mu.Unlock()
	if err != nil {
		return nil, err
	}
	algo, params := runAlgorithm(sub.sc, sub.cfg)
	pj, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	bucket := chartBucket(sub.cfg, sub.cost)
	r := &store.Run{ScenarioID: sub.scenarioID, Name: sub.name, Algorithm: algo, Params: pj, Seed: sub.sc.Seed,
		CodeVersion: m.cfg.CodeVersion, Scenario: sub.scenario, Status: store.StatusQueued, Client: sub.client,
		Speed: sub.speed, BucketPS: bucket}
	if err := m.db.CreateRun(context.WithoutCancel(ctx), r); err != nil {
		return nil, fmt.Errorf("storing the run: %w", err)
	}
	lr := &liveRun{id: r.ID, m: m, client: sub.client, cfg: sub.cfg, scenario: sub.scenario, params: params,
		speed: sub.speed, bucketPS: bucket, hub: newHub(bucket), ops: make(chan op, 16),
		started: make(chan struct{}), done: make(chan struct{})}
	lr.hub.progress = progressMsg{Type: "progress", Status: store.StatusQueued, FlowsTotal: len(sub.cfg.Flows), Speed: speedJSON(sub.speed)}
	m.mu.Lock()
	if err := m.admitLocked(sub.client); err != nil {
		m.mu.Unlock()
		if derr := m.db.DeleteRun(context.WithoutCancel(ctx), r.ID); derr != nil {
			m.log.Error("deleting a refused run", "run", r.ID, "err", derr)
		}
		return nil, err
	}
	m.live[r.ID] = lr
	m.queue = append(m.queue, lr)
	m.log.Info("run queued", "run", r.ID, "scenario", sub.scenarioID, "algorithm", algo, "client", sub.client,
		"hosts", sub.cost.Hosts, "flows", sub.cost.Flows, "queued", len(m.queue))
	m.scheduleLocked()
	m.mu.Unlock()
	return r, nil
}

// admitLocked checks the shutdown, the client's limit and the queue's.
func (m *Manager) admitLocked(client string) error {
	if m.closed {
		return errorf(http.StatusServiceUnavailable, "", "the server is shutting down")
	}
	if m.cfg.ClientRuns > 0 {
		n := 0
		for _, lr := range m.live {
			if lr.client == client {
				n++
			}
		}
		if n >= m.cfg.ClientRuns {
			return limitError(http.StatusTooManyRequests, "max-client-runs", "",
				"you already have %d runs queued or running, this server's limit per client (max-client-runs); wait for one to finish or cancel one", n)
		}
	}
	if m.cfg.MaxQueue > 0 && len(m.queue) >= m.cfg.MaxQueue {
		return limitError(http.StatusTooManyRequests, "max-queue", "",
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
func (m *Manager) scheduleLocked() {
	for m.running < m.cfg.Concurrency && len(m.queue) > 0 && !m.closed {
		lr := m.queue[0]
		m.queue = m.queue[1:]
		m.running++
		close(lr.started)
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			lr.run(m.ctx)
			m.ended(lr)
		}()
	}
}

// ended releases a run's slot, prunes old runs and starts the next.
func (m *Manager) ended(lr *liveRun) {
	m.mu.Lock()
	m.running--
	delete(m.live, lr.id)
	close(lr.done)
	m.finished[lr.id] = lr.hub
	for id, h := range m.finished {
		if id != lr.id && h.viewerCount() == 0 {
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

// get returns the live run with id, if it is queued, running or paused.
func (m *Manager) get(id string) *liveRun {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.live[id]
}

// hubOf returns the hub of a live or just-finished run.
func (m *Manager) hubOf(id string) *hub {
	m.mu.Lock()
	defer m.mu.Unlock()
	if lr := m.live[id]; lr != nil {
		return lr.hub
	}
	return m.finished[id]
}

// viewHub returns the hub a new viewer of run id joins: the live run's, a
// just-ended run's, or one built from the store with build, shared by every
// viewer of that run while any is connected (so 40 students opening one
// finished run cost one copy of its history).
func (m *Manager) viewHub(ctx context.Context, id string, build func(context.Context, string) (*hub, error)) (*hub, error) {
	if h := m.hubOf(id); h != nil {
		return h, nil
	}
	m.building.Lock() // one build at a time: concurrent viewers wait and share it
	defer m.building.Unlock()
	if h := m.hubOf(id); h != nil {
		return h, nil
	}
	h, err := build(ctx, id)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.finished[id] = h
	m.mu.Unlock()
	return h, nil
}

// leftHub forgets a finished run's hub once its last viewer has gone.
func (m *Manager) leftHub(id string, h *hub) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.finished[id] == h && h.viewerCount() == 0 {
		delete(m.finished, id)
	}
}

// control sends a request to a live run and waits for its answer. A queued
// run can only be cancelled (it then never starts).
func (m *Manager) control(ctx context.Context, id string, o op) (opResult, error) {
	m.mu.Lock()
	lr := m.live[id]
	if lr == nil {
		m.mu.Unlock()
		r, err := m.db.GetRun(ctx, id)
		if err != nil {
			return opResult{}, err
		}
		return opResult{}, errorf(http.StatusConflict, "status", "the run is %s", r.Status)
	}
	select {
	case <-lr.started:
	default:
		// still queued
		m.mu.Unlock()
		if o.kind != opCancel {
			return opResult{}, errorf(http.StatusConflict, "status", "the run is queued; it can only be cancelled")
		}
		return opResult{}, m.cancelQueued(ctx, lr)
	}
	m.mu.Unlock()
	ended := errorf(http.StatusConflict, "status", "the run has ended")
	o.reply = make(chan opResult, 1)
	select {
	case lr.ops <- o:
	case <-lr.done:
		return opResult{}, ended
	case <-ctx.Done():
		return opResult{}, ctx.Err()
	}
	select {
	case res := <-o.reply:
		return res, res.err
	case <-lr.done:
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
func (m *Manager) cancelQueued(ctx context.Context, lr *liveRun) error {
	m.mu.Lock()
	i := slices.Index(m.queue, lr)
	if i < 0 {
		m.mu.Unlock()
		select {
		case <-lr.started:
			// it started in the meantime: cancel it the normal way
			_, err := m.control(ctx, lr.id, op{kind: opCancel})
			return err
		case <-lr.done:
			return nil // another request cancelled it
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	m.queue = slices.Delete(m.queue, i, i+1)
	m.mu.Unlock()
	const msg = "cancelled before it started"
	err := m.db.FinishRun(context.WithoutCancel(ctx), lr.id, store.Finish{Status: store.StatusCancelled, At: time.Now(), Error: msg})
	m.mu.Lock()
	delete(m.live, lr.id)
	close(lr.done)
	m.finished[lr.id] = lr.hub
	m.mu.Unlock()
	lr.hub.finish(finalMsg{Type: "done", Status: store.StatusCancelled, Error: msg})
	return err
}

// shutdown stops taking runs, gives running ones until ctx ends to finish,
// then stops them (their results so far are stored and they are marked
// interrupted); queued runs are marked interrupted.
func (m *Manager) shutdown(ctx context.Context) {
	m.mu.Lock()
	m.closed = true // nothing starts from now on
	queued := slices.Clone(m.queue)
	m.mu.Unlock()
	const msg = "the server shut down before the run started"
	for _, lr := range queued {
		err := m.db.FinishRun(context.Background(), lr.id, store.Finish{Status: store.StatusInterrupted, At: time.Now(), Error: msg})
		if err != nil {
			m.log.Error("marking a queued run interrupted", "run", lr.id, "err", err)
		}
		m.mu.Lock()
		if i := slices.Index(m.queue, lr); i >= 0 {
			m.queue = slices.Delete(m.queue, i, i+1)
			delete(m.live, lr.id)
			close(lr.done)
		}
		m.mu.Unlock()
		lr.hub.finish(finalMsg{Type: "done", Status: store.StatusInterrupted, Error: msg})
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

// counts reports the queue for the health endpoint.
func (m *Manager) counts() (running, queued int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.running, len(m.queue)
}
