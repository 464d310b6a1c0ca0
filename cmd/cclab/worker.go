package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"cclab/server/dist"
)

// cmdWorker pulls runs from a lab's NATS JetStream work queue and simulates
// them until interrupted.
func cmdWorker(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("nats", "", "the lab's NATS server, e.g. nats://lab.example.edu:4222 (required)")
	concurrency := fs.Int("concurrency", runtime.NumCPU(), "runs simulated at once")
	ackWait := fs.Duration("ack-wait", 30*time.Second, "how long a run may go unreported before its work goes to another worker (the lab's --nats-ack-wait; the first to create the queue sets it)")
	logLevel := fs.String("log-level", "info", "debug, info, warn or error")
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return &usageError{fmt.Sprintf("unexpected argument %q", pos[0])}
	}
	if *url == "" {
		return &usageError{"--nats URL is required"}
	}
	if !strings.Contains(*url, "://") {
		return &usageError{fmt.Sprintf("--nats %q: want a URL such as nats://HOST:4222", *url)}
	}
	if *concurrency < 1 {
		return &usageError{"--concurrency: want at least 1"}
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return &usageError{fmt.Sprintf("--log-level %q: want debug, info, warn or error", *logLevel)}
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	nc, err := dist.Connect(*url, "cclab worker")
	if err != nil {
		return err
	}
	defer nc.Close()
	w, err := dist.NewWorker(ctx, nc, *concurrency, dist.Options{AckWait: *ackWait}, log)
	if err != nil {
		return fmt.Errorf("preparing the work queue on %s: %w", *url, err)
	}
	fmt.Fprintf(stdout, "cclab worker: pulling runs from %s, %d at a time\n", *url, *concurrency)
	return w.Run(ctx)
}

// natsConnect connects the lab to --nats: an embedded server started here
// (storing in dir, listening on host) or an existing one by URL. stop
// closes the connection and shuts the embedded server down.
func natsConnect(spec, dir, host string, log *slog.Logger) (nc *nats.Conn, url string, stop func(), err error) {
	port, embedded, err := dist.EmbeddedPort(spec)
	if err != nil {
		return nil, "", nil, &usageError{err.Error()}
	}
	url, stopServer := spec, func() {}
	if embedded {
		if url, stopServer, err = dist.StartEmbedded(dir, host, port, log); err != nil {
			return nil, "", nil, err
		}
	} else if !strings.Contains(spec, "://") {
		return nil, "", nil, &usageError{fmt.Sprintf("--nats %q: want embedded, embedded:PORT or a URL such as nats://HOST:4222", spec)}
	}
	if nc, err = dist.Connect(url, "cclab lab"); err != nil {
		stopServer()
		return nil, "", nil, err
	}
	return nc, url, func() { nc.Close(); stopServer() }, nil
}
