package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"cclab/scenarios"
	"cclab/server"
	"cclab/server/dist"
	"cclab/store"
)

func cmdServe(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(stderr)
	lim := server.DefaultLimits()
	addr := fs.String("addr", "127.0.0.1:8080", "address to listen on (host:port; port 0 picks a free one)")
	dbPath := fs.String("db", "./cclab.db", "SQLite database file (created on first start)")
	concurrency := fs.Int("concurrency", runtime.NumCPU(), "runs simulated at once")
	maxQueue := fs.Int("max-queue", 1000, "runs that may wait for a slot")
	clientRuns := fs.Int("max-client-runs", 8, "runs one client may have queued or running (-1: no limit)")
	maxRuns := fs.Int("max-runs", 0, "keep at most this many runs, deleting the oldest unpinned finished ones (0: no limit)")
	maxDBSize := fs.String("max-db-size", "", "keep the database under this size, e.g. 2GB, deleting the oldest unpinned finished runs (empty: no limit)")
	fs.IntVar(&lim.MaxHosts, "max-hosts", lim.MaxHosts, "refuse scenarios with more hosts (0: no limit)")
	fs.IntVar(&lim.MaxFlows, "max-flows", lim.MaxFlows, "refuse scenarios with more flows (0: no limit)")
	fs.Float64Var(&lim.MaxPackets, "max-packets", lim.MaxPackets, "refuse scenarios with more data packets (estimated: Σ size/mtu; 0: no limit)")
	fs.Float64Var(&lim.MaxSamples, "max-samples", lim.MaxSamples, "refuse scenarios with more telemetry samples (estimated; runs are also stopped when they reach it; 0: no limit)")
	maxSimTime := fs.String("max-sim-time", "10s", "refuse scenarios that simulate longer, and stop runs without a duration there")
	maxBody := fs.String("max-body", "8MiB", "refuse request bodies larger than this")
	maxViewers := fs.Int("max-viewers", 2000, "WebSocket viewers connected at once (-1: no limit)")
	trainConc := fs.Int("train-concurrency", 1, "training jobs (POST /api/train) that train at once, one episode at a time each")
	trainTime := fs.Duration("max-train-time", time.Hour, "stop a training job after this much training (its policy so far is stored, marked interrupted)")
	trainDir := fs.String("train-dir", "", "folder of the training jobs' checkpoints, to resume them (default: the database's path + \".train\")")
	grace := fs.Duration("grace", 10*time.Second, "on shutdown, how long running runs may take to finish before they are stopped and marked interrupted")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	logJSON := fs.Bool("log-json", false, "log JSON lines instead of text")
	class := server.DefaultClassLimits()
	instructor := fs.String("instructor-token", "", "the instructor token (default: a new random one, printed at start)")
	var origins stringList
	fs.Var(&origins, "allow-origin", "an origin besides the server's own whose pages may change things, e.g. https://lab.example.edu behind a reverse proxy (repeatable)")
	maxSweepRuns := fs.Int("max-sweep-runs", 200, "refuse sweeps with more runs (grid points × seeds)")
	maxOwnerSweeps := fs.Int("max-owner-sweeps", 2, "sweeps one owner may have running at once (an instructor is not bound)")
	natsSpec := fs.String("nats", "", "run simulations on workers over NATS JetStream: embedded[:PORT] starts a NATS server in the lab (its store beside the database), nats://HOST:PORT uses an existing one")
	localWorkers := fs.Int("local-workers", 0, "with --nats, runs the lab's own process simulates at once as a worker (default 0: only remote workers simulate)")
	ackWait := fs.Duration("nats-ack-wait", 30*time.Second, "with --nats, how long a run may go unreported before its work goes to another worker")
	tlsCert := fs.String("tls-cert", "", "serve HTTPS with this certificate file (PEM; with --tls-key)")
	tlsKey := fs.String("tls-key", "", "the certificate's private key file (PEM)")
	fs.Float64Var(&class.RunsPerMinute, "runs-per-minute", class.RunsPerMinute, "runs one owner may start per minute (0: no limit)")
	fs.IntVar(&class.RunsBurst, "runs-burst", class.RunsBurst, "runs one owner may start at once before runs-per-minute applies")
	fs.Float64Var(&class.WorkPerHour, "work-per-hour", class.WorkPerHour, "data packets one owner may simulate per hour, as the cost estimate counts them (0: no limit)")
	fs.IntVar(&class.ViewersPerOwner, "viewers-per-owner", class.ViewersPerOwner, "live views (WebSocket streams) one owner may have open (0: no limit)")
	fs.IntVar(&class.TokensPerHour, "tokens-per-hour", class.TokensPerHour, "owner tokens one IP address may be given per hour (0: no limit)")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return &usageError{fmt.Sprintf("unexpected argument %q", pos[0])}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return &usageError{fmt.Sprintf("--log-level %q: want debug, info, warn or error", *logLevel)}
	}
	var h slog.Handler = slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level})
	if *logJSON {
		h = slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level})
	}
	log := slog.New(h)
	t, err := scenarios.ParseTime(*maxSimTime)
	if err != nil || t <= 0 {
		return &usageError{fmt.Sprintf("--max-sim-time %q: want a positive time such as 10s or 500ms", *maxSimTime)}
	}
	lim.MaxSimTime = t
	var maxBytes int64
	if *maxDBSize != "" {
		if maxBytes, err = scenarios.ParseSize(*maxDBSize); err != nil || maxBytes <= 0 {
			return &usageError{fmt.Sprintf("--max-db-size %q: want a size such as 500MB or 2GiB", *maxDBSize)}
		}
	}
	body, err := scenarios.ParseSize(*maxBody)
	if err != nil || body <= 0 {
		return &usageError{fmt.Sprintf("--max-body %q: want a size such as 8MiB", *maxBody)}
	}
	if *concurrency < 1 {
		return &usageError{"--concurrency: want at least 1"}
	}
	if *trainConc < 1 {
		return &usageError{"--train-concurrency: want at least 1"}
	}
	if *trainTime <= 0 {
		return &usageError{"--max-train-time: want a positive duration, e.g. 30m"}
	}
	if *trainDir == "" {
		*trainDir = *dbPath + ".train"
	}
	if (*tlsCert == "") != (*tlsKey == "") {
		return &usageError{"--tls-cert and --tls-key go together"}
	}
	token := *instructor
	if token == "" {
		token = newInstructorToken()
		if !loopback(*addr) {
			fmt.Fprintf(stderr, "warning: %s is reachable beyond this machine and no --instructor-token was given: using a new one (below)\n", *addr)
		}
	}
	class.ClientRuns = *clientRuns
	if *maxSweepRuns < 1 || *maxOwnerSweeps < 1 {
		return &usageError{"--max-sweep-runs and --max-owner-sweeps: want at least 1"}
	}
	if *localWorkers < 0 || (*localWorkers > 0 && *natsSpec == "") {
		return &usageError{"--local-workers: want a number >= 0, with --nats"}
	}
	if *natsSpec != "" {
		if _, embedded, err := dist.EmbeddedPort(*natsSpec); err != nil {
			return &usageError{err.Error()}
		} else if !embedded && !strings.Contains(*natsSpec, "://") {
			return &usageError{fmt.Sprintf("--nats %q: want embedded, embedded:PORT or a URL such as nats://HOST:4222", *natsSpec)}
		}
	}
	if *ackWait < time.Second {
		return &usageError{"--nats-ack-wait: want at least 1s"}
	}
	db, err := store.Open(ctx, *dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	var disp *dist.Dispatcher
	natsURL := ""
	if *natsSpec != "" {
		nc, url, stop, err := natsConnect(*natsSpec, *dbPath+".nats", dist.ListenHost(*addr), log)
		if err != nil {
			return err
		}
		defer stop()
		natsURL = url
		opt := dist.Options{AckWait: *ackWait}
		if disp, err = dist.NewDispatcher(ctx, nc, opt, log); err != nil {
			return err
		}
		if *localWorkers > 0 {
			w, err := dist.NewWorker(ctx, nc, *localWorkers, opt, log.With("worker", "local"))
			if err != nil {
				return err
			}
			wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
			done := make(chan struct{})
			go func() { defer close(done); _ = w.Run(wctx) }()
			defer func() { cancel(); <-done }()
		}
	}
	cfg := server.Config{Concurrency: *concurrency, MaxQueue: *maxQueue,
		ClientRuns: *clientRuns, Limits: lim, MaxRuns: *maxRuns, MaxDBBytes: maxBytes, Log: log,
		MaxBody: body, MaxViewers: *maxViewers, TrainConcurrency: *trainConc, TrainDir: *trainDir, TrainMaxTime: *trainTime,
		CodeVersion: codeVersion(ctx), Class: &class, InstructorToken: token, AllowOrigins: origins,
		TLSCert: *tlsCert, TLSKey: *tlsKey, MaxSweepRuns: *maxSweepRuns, MaxOwnerSweeps: *maxOwnerSweeps}
	if disp != nil {
		cfg.Dispatcher = disp
	}
	srv, err := server.New(ctx, db, cfg)
	if err != nil {
		return err
	}
	if disp != nil {
		sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
		defer cancel()
		go func() {
			if err := disp.Serve(sctx, srv.Manager()); err != nil {
				log.Error("serving the workers' reports", "err", err)
			}
		}()
	}
	return srv.ListenAndServe(ctx, *addr, *grace, func(a net.Addr) {
		scheme := "http"
		if *tlsCert != "" {
			scheme = "https"
		}
		url := scheme + "://" + a.String()
		if strings.HasPrefix(a.String(), "[::]") || strings.HasPrefix(a.String(), "0.0.0.0") {
			url = fmt.Sprintf("%s://localhost:%d", scheme, a.(*net.TCPAddr).Port)
		}
		fmt.Fprintf(stdout, "cclab is serving on %s (database %s)\n", url, *dbPath)
		fmt.Fprintf(stdout, "instructor: open %s/instructor?token=%s once to manage every run and the class\n", url, token)
		if natsURL != "" {
			fmt.Fprintf(stdout, "runs go to workers over NATS at %s: start them with cclab worker --nats %s\n", natsURL, natsURL)
		}
		if f, ok := stdout.(*os.File); ok {
			f.Sync()
		}
	})
}

// codeVersion is the revision recorded with every run: the one the binary
// was built from, or, under `go run` (which records none), the checkout's
// git revision when there is one ("+dirty" with uncommitted changes).
func codeVersion(ctx context.Context) string {
	if v := server.CodeVersion(); v != "devel" {
		return v
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	rev, err := exec.CommandContext(ctx, "git", "rev-parse", "HEAD").Output()
	if err != nil {
		return "devel"
	}
	v := strings.TrimSpace(string(rev))
	if st, err := exec.CommandContext(ctx, "git", "status", "--porcelain", "--untracked-files=no").Output(); err == nil && len(bytes.TrimSpace(st)) > 0 {
		v += "+dirty"
	}
	return v
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// newInstructorToken is a random instructor token, like Jupyter's.
func newInstructorToken() string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// loopback reports whether a listen address is reachable from this machine
// only (a loopback host; an empty host listens everywhere).
func loopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
