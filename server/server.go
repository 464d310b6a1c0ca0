// Package server is cclab's lab server over HTTP: the REST API, the
// WebSocket stream of runs and the pages (scenarios/scenario-format.md,
// "REST and WebSocket", "Pages"). Runs themselves, from submission to
// stored result, belong to the runs package (server/runs); this package
// turns requests into its calls and its errors into status codes, and
// reads finished results from the store.
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/gorilla/websocket"

	"cclab/scenarios"
	"cclab/server/runs"
	"cclab/server/training"
	"cclab/store"
)

// Limits is the admission control of runs (runs.Limits).
type Limits = runs.Limits

// DefaultLimits are limits for a class server: see runs.DefaultLimits.
func DefaultLimits() Limits { return runs.DefaultLimits() }

// Config holds the server's settings. The zero value of a field means its
// default (see withDefaults).
type Config struct {
	// Concurrency is how many runs simulate at once (default: the number
	// of CPUs). Each run is one goroutine.
	Concurrency int
	// MaxQueue bounds the runs waiting for a slot (default 1000).
	MaxQueue int
	// ClientRuns bounds one owner's runs that are queued, running or
	// paused (default 8; negative: no limit), when Class is nil. An owner
	// is a browser's or API client's owner token, else the remote IP
	// address (identity.go); X-Cclab-Client is only a label.
	ClientRuns int
	// Class is the per-owner limits (nil: DefaultClassLimits with
	// ClientRuns); an instructor's change (PUT /api/class/limits) is kept
	// in the database and wins at the next start.
	Class *ClassLimits
	// InstructorToken unlocks the instructor's role ("": nobody has it;
	// cclab serve always sets one, generated when not given).
	InstructorToken string
	// AllowOrigins are origins, besides the server's own, whose pages may
	// send state-changing requests (a reverse proxy's public origin, e.g.
	// "https://lab.example.edu").
	AllowOrigins []string
	// TLSCert and TLSKey, when set, serve HTTPS (cookies then carry Secure
	// and the __Host- prefix).
	TLSCert, TLSKey string
	// Limits is the admission control applied to every run (its zero
	// value: no limits; DefaultLimits suits a class server).
	Limits Limits
	// MaxRuns and MaxDBBytes are the retention limits (0: none): when a
	// run ends, the oldest unpinned finished runs are deleted until both
	// hold.
	MaxRuns    int
	MaxDBBytes int64
	// MaxBody bounds a request body (default 8 MiB).
	MaxBody int64
	// FlushEvery is how often a running run's series are written to the
	// database (default 500 ms); FrameEvery the shortest time between two
	// frames to one viewer (default 50 ms: at most 20 frames/s).
	FlushEvery time.Duration
	FrameEvery time.Duration
	// PingEvery is the WebSocket keep-alive period (default 20 s); a
	// viewer that answers no ping for 3 periods is dropped. WriteWait is
	// how long one frame may take to write before the viewer is dropped
	// (default 10 s).
	PingEvery time.Duration
	WriteWait time.Duration
	// FramePoints bounds the points of one samples frame (default 50000).
	FramePoints int
	// MaxViewers bounds the WebSocket viewers connected at once (default
	// 2000; negative: no limit).
	MaxViewers int
	// MaxExportPoints bounds the points one export (series.csv,
	// export.json, series) may return (default 2e7, some 300 MB of CSV);
	// a larger one is refused, naming the filters that make it smaller.
	MaxExportPoints int64
	// TrainConcurrency is how many training jobs train at once (default
	// 1); TrainQueue how many may wait (default 8). Each plays one episode
	// at a time, so runs keep the other cores.
	TrainConcurrency int
	TrainQueue       int
	// TrainDir holds the training jobs' checkpoints, from which a stopped
	// job resumes ("": none; a resumed job starts again from its first
	// episode). TrainMaxTime stops a job after that much training (default
	// 1 h; its policy so far is stored).
	TrainDir     string
	TrainMaxTime time.Duration
	// Dispatcher, when set, runs every run on workers elsewhere (NATS,
	// package dist); the server then simulates nothing itself.
	Dispatcher runs.Dispatcher
	// MaxSweepRuns bounds the runs of one sweep (grid points × seeds;
	// default 200); MaxOwnerSweeps the sweeps one owner may have running
	// at once (default 2; an instructor is not bound by it).
	MaxSweepRuns   int
	MaxOwnerSweeps int
	// CodeVersion is recorded with every run (default: the binary's VCS
	// revision, else "devel").
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
	if c.Class == nil {
		d := DefaultClassLimits()
		d.ClientRuns = c.ClientRuns
		c.Class = &d
	}
	if c.MaxBody <= 0 {
		c.MaxBody = 8 << 20
	}
	if c.MaxSweepRuns <= 0 {
		c.MaxSweepRuns = 200
	}
	if c.MaxOwnerSweeps <= 0 {
		c.MaxOwnerSweeps = 2
	}
	if c.FlushEvery <= 0 {
		c.FlushEvery = 500 * time.Millisecond
	}
	if c.FrameEvery <= 0 {
		c.FrameEvery = 50 * time.Millisecond
	}
	if c.PingEvery <= 0 {
		c.PingEvery = 20 * time.Second
	}
	if c.WriteWait <= 0 {
		c.WriteWait = 10 * time.Second
	}
	if c.FramePoints <= 0 {
		c.FramePoints = 50_000
	}
	if c.MaxViewers == 0 {
		c.MaxViewers = 2000
	}
	if c.MaxExportPoints <= 0 {
		c.MaxExportPoints = 20_000_000
	}
	if c.CodeVersion == "" {
		c.CodeVersion = CodeVersion()
	}
	if c.Log == nil {
		c.Log = slog.Default()
	}
	return c
}

// CodeVersion is the VCS revision the binary was built from ("+dirty" when
// the tree had changes), or "devel" when the build recorded none.
func CodeVersion() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "devel"
	}
	rev, dirty := "", false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	if rev == "" {
		if v := bi.Main.Version; v != "" && v != "(devel)" {
			return v
		}
		return "devel"
	}
	if dirty {
		rev += "+dirty"
	}
	return rev
}

// Server is the lab server.
type Server struct {
	cfg      Config
	db       *store.DB
	log      *slog.Logger
	reproMu  sync.Mutex // one reproduction of an experiment starts at a time
	computed sync.Map   // experiment id → func() *repro.ExperimentReport: model-only experiments, evaluated once
	mgr      *runs.Manager
	library  map[string]string // library name -> scenario id
	libNames map[string]string // scenario id -> library name
	upgrader websocket.Upgrader
	router   chi.Router
	viewers  atomic.Int64 // WebSocket viewers connected
	cards    cardCache    // scenario cards of the home page
	train    *training.Manager
	policies sync.Map   // stored policy id → cc.Policy, loaded once
	tok      *tokens    // owner tokens and the instructor's credentials
	limits   *limiters  // per-owner limits
	classMu  sync.Mutex // serialises changes of the class settings
	sweeps   sweeps     // the running sweeps' drivers
}

// New prepares a server on db: it stores the built-in scenarios and starts
// the run manager (which marks runs a previous process left unfinished as
// interrupted, and applies the retention limits).
func New(ctx context.Context, db *store.DB, cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	s := &Server{cfg: cfg, db: db, log: cfg.Log, library: map[string]string{}, libNames: map[string]string{}}
	key, err := db.Secret(ctx, "owner-token-key", 32)
	if err != nil {
		return nil, err
	}
	s.tok = &tokens{key: key, instructor: cfg.InstructorToken, instrMAC: instructorMAC(key, cfg.InstructorToken)}
	class := *cfg.Class
	if saved, err := db.Setting(ctx, classLimitsSetting); err == nil {
		if err := json.Unmarshal(saved, &class); err != nil {
			return nil, fmt.Errorf("the stored class limits: %w", err)
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	s.limits = newLimiters(class)
	for _, e := range scenarios.Library() {
		canon, err := e.Scenario.Canonical()
		if err != nil {
			return nil, fmt.Errorf("library scenario %s: %w", e.ID, err)
		}
		sc := &store.Scenario{Name: e.Scenario.Name, Description: e.Description, JSON: canon, Builtin: true}
		if _, err := db.PutScenario(ctx, sc); err != nil {
			return nil, fmt.Errorf("storing library scenario %s: %w", e.ID, err)
		}
		s.library[e.ID] = sc.ID
		s.libNames[sc.ID] = e.ID
	}
	mgr, err := runs.New(ctx, db, runs.Config{Concurrency: cfg.Concurrency, MaxQueue: cfg.MaxQueue,
		ClientRuns: managerClientRuns(class.ClientRuns), Limits: cfg.Limits, MaxRuns: cfg.MaxRuns, MaxDBBytes: cfg.MaxDBBytes,
		FlushEvery: cfg.FlushEvery, ProgressEvery: cfg.FrameEvery, CodeVersion: cfg.CodeVersion, Log: cfg.Log,
		Dispatcher: cfg.Dispatcher})
	if err != nil {
		return nil, err
	}
	s.mgr = mgr
	mgr.SeedSpeed()
	if s.train, err = training.New(ctx, db, training.Config{Concurrency: cfg.TrainConcurrency, MaxQueue: cfg.TrainQueue,
		Dir: cfg.TrainDir, MaxTime: cfg.TrainMaxTime, Log: cfg.Log}); err != nil {
		mgr.Shutdown(ctx)
		return nil, err
	}
	s.upgrader = websocket.Upgrader{ReadBufferSize: 4096, WriteBufferSize: 64 << 10,
		Error: func(w http.ResponseWriter, r *http.Request, status int, reason error) {
			s.writeError(w, r, errorf(status, "", "WebSocket handshake: %v", reason))
		}}
	s.router = s.routes()
	if err := s.resumeSweeps(ctx); err != nil {
		s.train.Shutdown(ctx)
		mgr.Shutdown(ctx)
		return nil, err
	}
	return s, nil
}

// Manager is the server's run manager (a dispatcher's reports go to it).
func (s *Server) Manager() *runs.Manager { return s.mgr }

// Handler is the server's HTTP handler.
func (s *Server) Handler() http.Handler { return s.router }

// Shutdown stops accepting runs, lets running ones finish until ctx ends,
// then stops them; their results so far are stored and they are marked
// interrupted, as are runs still queued.
// Training jobs are interrupted: those that have played a round store
// their policy (marked interrupted) and a checkpoint to resume from.
// Sweeps stop submitting runs and stay running in the database: the next
// start resumes them.
func (s *Server) Shutdown(ctx context.Context) {
	s.sweeps.stopAll()
	s.train.Shutdown(ctx)
	s.mgr.Shutdown(ctx)
}

// ListenAndServe serves on addr until ctx is cancelled, then shuts down
// gracefully: no new connections, up to grace for running runs to finish,
// open requests drained. ready, if not nil, is called with the bound
// address once the server listens.
func (s *Server) ListenAndServe(ctx context.Context, addr string, grace time.Duration, ready func(net.Addr)) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	hs := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:    slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext: func(net.Listener) context.Context { return context.WithoutCancel(ctx) }}
	errc := make(chan error, 1)
	scheme := "http"
	if s.cfg.TLSCert != "" {
		scheme = "https"
		go func() { errc <- hs.ServeTLS(ln, s.cfg.TLSCert, s.cfg.TLSKey) }()
	} else {
		go func() { errc <- hs.Serve(ln) }()
	}
	s.log.Info("serving", "addr", scheme+"://"+ln.Addr().String(), "concurrency", s.cfg.Concurrency)
	if ready != nil {
		ready(ln.Addr())
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.log.Info("shutting down", "grace", grace)
	gctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	s.Shutdown(gctx)
	hctx, hcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer hcancel()
	if err := hs.Shutdown(hctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return nil
}

// managerClientRuns is the run manager's per-client limit for a class
// limit (zero or negative: none).
func managerClientRuns(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}
