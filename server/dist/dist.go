// Package dist runs the lab's simulations on workers over NATS JetStream.
//
// What travels, and where:
//
//   - Work: a JetStream work-queue stream (CCLAB_WORK, subject cclab.work),
//     one message per run (its id, canonical scenario, pacing and the
//     server's limits), deduplicated by run id. Workers pull from one
//     durable consumer; a message is acknowledged once its results are
//     stored by the lab, kept alive (in progress) while its run goes, and
//     delivered again when a worker dies (no acknowledgement within the
//     consumer's ack wait).
//   - Reports: a worker's sink calls (start, status, speed, live changes,
//     series chunks, the final results) are NATS requests on
//     cclab.sink.<run>, answered by the lab once applied; large payloads
//     (always the final results: flows, summary, last chunks) go through
//     the JetStream object store bucket cclab-results and the request names
//     the object. Live frames for viewers are plain messages on
//     cclab.live.<run>.
//   - Control: the lab's requests to a run (pause, resume, cancel, speed,
//     parameter changes) are NATS requests on cclab.ctl.<run>.<attempt>,
//     answered by the worker that runs it.
//
// Payloads are encoding/gob (the types of package runs and store).
package dist

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	natsserver "github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Names of the stream, its subject, the consumer and the object bucket.
const (
	Stream        = "CCLAB_WORK"
	WorkSubject   = "cclab.work"
	Consumer      = "cclab-workers"
	ResultsBucket = "cclab-results"

	sinkPrefix = "cclab.sink."
	livePrefix = "cclab.live."
	ctlPrefix  = "cclab.ctl."

	objectHeader = "Cclab-Object" // a request whose payload is in the bucket
	maxInline    = 512 << 10      // larger payloads go through the bucket
)

// Options are the work queue's settings.
type Options struct {
	// AckWait is how long a run may go without its worker reporting before
	// its work is delivered again (default 30 s; workers report every
	// third of it).
	AckWait time.Duration
	// MaxDeliver bounds the deliveries of one run's work (default 10).
	MaxDeliver int
}

func (o Options) withDefaults() Options {
	if o.AckWait <= 0 {
		o.AckWait = 30 * time.Second
	}
	if o.MaxDeliver <= 0 {
		o.MaxDeliver = 10
	}
	return o
}

// StartEmbedded starts a NATS server with JetStream inside this process,
// storing under dir, listening on host:port (port 0: a free one). It
// returns its client URL and a function that shuts it down.
func StartEmbedded(dir, host string, port int, log *slog.Logger) (url string, stop func(), err error) {
	if port == 0 {
		port = natsserver.RANDOM_PORT
	}
	ns, err := natsserver.NewServer(&natsserver.Options{Host: host, Port: port, JetStream: true, StoreDir: dir,
		NoSigs: true, ServerName: "cclab"})
	if err != nil {
		return "", nil, fmt.Errorf("embedded NATS server: %w", err)
	}
	go ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		ns.Shutdown()
		return "", nil, fmt.Errorf("embedded NATS server on %s:%d: not ready after 10 s (is the port taken?)", host, port)
	}
	url = ns.ClientURL()
	if log != nil {
		log.Info("embedded NATS server with JetStream", "url", url, "store", dir)
	}
	return url, func() { ns.Shutdown(); ns.WaitForShutdown() }, nil
}

// Connect connects to a NATS server, retrying while it is not up yet.
func Connect(url, name string) (*nats.Conn, error) {
	nc, err := nats.Connect(url, nats.Name(name), nats.MaxReconnects(-1), nats.ReconnectWait(500*time.Millisecond),
		nats.RetryOnFailedConnect(true))
	if err != nil {
		return nil, fmt.Errorf("connecting to NATS at %s: %w", url, err)
	}
	return nc, nil
}

// setup prepares the work stream, the workers' consumer and the results
// bucket. The lab (update) creates or updates them with its options; a
// worker takes them as they are, creating them with its own options only
// when the lab has not yet, so that the lab's ack wait holds.
func setup(ctx context.Context, js jetstream.JetStream, opt Options, update bool) (jetstream.Consumer, jetstream.ObjectStore, error) {
	scfg := jetstream.StreamConfig{Name: Stream, Subjects: []string{WorkSubject},
		Retention: jetstream.WorkQueuePolicy, Storage: jetstream.FileStorage, Duplicates: time.Hour}
	ccfg := jetstream.ConsumerConfig{Durable: Consumer, AckPolicy: jetstream.AckExplicitPolicy, AckWait: opt.AckWait,
		MaxDeliver: opt.MaxDeliver, MaxAckPending: 10_000}
	var cons jetstream.Consumer
	var err error
	if update {
		if _, err = js.CreateOrUpdateStream(ctx, scfg); err != nil {
			return nil, nil, fmt.Errorf("the work stream: %w", err)
		}
		cons, err = js.CreateOrUpdateConsumer(ctx, Stream, ccfg)
	} else {
		if _, err = js.Stream(ctx, Stream); errors.Is(err, jetstream.ErrStreamNotFound) {
			_, err = js.CreateStream(ctx, scfg)
		}
		if err != nil {
			return nil, nil, fmt.Errorf("the work stream: %w", err)
		}
		if cons, err = js.Consumer(ctx, Stream, Consumer); errors.Is(err, jetstream.ErrConsumerNotFound) {
			cons, err = js.CreateConsumer(ctx, Stream, ccfg)
		}
	}
	if err != nil {
		return nil, nil, fmt.Errorf("the workers' consumer: %w", err)
	}
	obj, err := js.CreateOrUpdateObjectStore(ctx, jetstream.ObjectStoreConfig{Bucket: ResultsBucket, Storage: jetstream.FileStorage})
	if err != nil {
		return nil, nil, fmt.Errorf("the results bucket: %w", err)
	}
	return cons, obj, nil
}

func encode(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := gob.NewEncoder(&b).Encode(v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func decode(data []byte, v any) error { return gob.NewDecoder(bytes.NewReader(data)).Decode(v) }

func ctlSubject(run string, attempt int) string { return ctlPrefix + run + "." + strconv.Itoa(attempt) }

// EmbeddedPort reads --nats embedded[:PORT] (default port 4222); ok is
// false when spec is not of that form (a URL).
func EmbeddedPort(spec string) (port int, ok bool, err error) {
	if spec == "embedded" {
		return 4222, true, nil
	}
	rest, found := strings.CutPrefix(spec, "embedded:")
	if !found {
		return 0, false, nil
	}
	p, err := strconv.Atoi(rest)
	if err != nil || p < 0 || p > 65535 {
		return 0, true, fmt.Errorf("--nats embedded:PORT wants a port number (0 for any free one), got %q", rest)
	}
	return p, true, nil
}

// ListenHost is the host the embedded server listens on for a lab served
// at addr: loopback for a loopback lab, every interface otherwise.
func ListenHost(addr string) string {
	host, _, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return "0.0.0.0"
	}
	if ip := net.ParseIP(host); (ip != nil && ip.IsLoopback()) || host == "localhost" {
		return "127.0.0.1"
	}
	return "0.0.0.0"
}
