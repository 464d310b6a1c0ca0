// Command cclab is the congestion-control lab: it runs scenarios headless
// (run), writes them for HPCC's ns-3 simulator (export), sweeps them over a grid of values and seeds (sweep), serves the
// lab (serve), backs up its database (backup), checks scenarios
// (validate), lists the algorithms (algorithms), reproduces the seeds'
// experiments (reproduce) and imports other tools' files (import).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

const usage = `cclab: the datacenter congestion-control lab

Usage:
  cclab run SCENARIO.json --out DIR [--seed N] [--algo NAME] [--set PATH=VALUE]... [--format ns3] [--quiet]
      Simulate a scenario and write flows.csv, series.csv and summary.json to DIR.
      Ctrl-C stops the run and still writes what was measured. --format ns3 also writes
      fct.txt, pfc.txt and qlen.txt in the formats of HPCC's ns-3 simulator.
  cclab export ns3 SCENARIO.json --dir DIR [--seed N] [--algo NAME] [--set PATH=VALUE]...
      Write config.txt, topology.txt, flow.txt and trace.txt that run the same experiment in
      HPCC's ns-3 simulator; refuses, naming them, the features it cannot express.
  cclab sweep SCENARIO.json --grid PATH=v1,v2,... [--grid PATH=lo:hi:step]... --seeds 1-5 --out DIR [--workers N] [--quiet]
      Run a scenario at every point of a grid of field values (up to 4 axes) with every seed,
      on every core; write each run's results to DIR/runs/p<point>-s<seed>/ and the per-point
      mean and 95% confidence interval of each summary metric to DIR/sweep.csv and sweep.json.
  cclab serve [--addr 127.0.0.1:8080] [--db ./cclab.db] [--concurrency N] [--max-runs N] [--max-db-size SIZE] ...
      Serve the lab: REST API, WebSocket streams of live runs, runs stored in SQLite.
      "cclab serve -h" lists every limit; Ctrl-C shuts down gracefully.
      With --nats embedded[:PORT] or --nats nats://HOST:PORT, runs go to workers over NATS JetStream.
  cclab worker --nats nats://HOST:PORT [--concurrency N]
      Pull runs from a lab started with --nats and simulate them, N at a time, until Ctrl-C.
  cclab backup [--db ./cclab.db] --out FILE
      Copy the lab's database to FILE (which must not exist), consistently, also while
      "cclab serve" is running; "cclab serve --db FILE" restores it.
  cclab validate SCENARIO.json
      Check a scenario and print every problem with the field it is about.
  cclab algorithms [--json]
      List the congestion-control algorithms, their parameters and presets.
  cclab reproduce [SEED|EXPERIMENT...] --out DIR [--quick] [--workers N] [--list]
      Run the seeds' experiments (000 MPCC, 001 FDCC, 002 RCC, 003 QCN, 004 Dolce-RC; none named: all)
      on every core and write report.md, report.json and one SVG per figure to DIR:
      every number the paper states beside ours, with a verdict.
  cclab stability margins [--set NAME=VALUE]... [--json]
      Seed 003's linearised QCN and QCN-AIMD: τ*, τ̂, the exact delay margin and the
      phase margin at an RTT ("cclab stability margins -h" lists the parameters).

  cclab train fdcc|rlcc --out DIR [--method td3|adpg] [--episodes N] [--hidden N] [--seed N] [--resume] ...
      Train seed 001's learned congestion control on dumbbell incasts, FDCC with TD3 and
      RL-CC with its own ADPG by default ("cclab train -h" lists the settings); writes policy.safetensors, curve.csv,
      train.json and checkpoint/; Ctrl-C saves a checkpoint, --resume continues it.
  cclab import pytorch ACTOR.safetensors --out POLICY.safetensors [--algo fdcc|rlcc] [--prefix pi.]
      Convert an LSTM-TD3 actor trained with the reference PyTorch code into a lab policy file
      (cc.policy in a scenario, or an upload on the training page).
  cclab import ns3 CONFIG.txt [--out SCENARIO.json] [--topology FILE] [--flows FILE] [--strict] [--name NAME]
      Turn an experiment of HPCC's ns-3 simulator (its config.txt and the TOPOLOGY_FILE and FLOW_FILE
      it names, found beside the config or in its parent folder) into a scenario, written to --out or
      standard output; config keys the lab does not understand are listed as warnings (--strict: an error).

The scenario format and the result files are described in the lab's
scenario-format document (scenarios/scenario-format.md in the source tree).
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// exit codes
const (
	exitOK          = 0
	exitError       = 1
	exitUsage       = 2
	exitInterrupted = 130
)

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitUsage
	}
	var err error
	switch args[0] {
	case "run":
		err = cmdRun(ctx, args[1:], stdout, stderr)
	case "export":
		err = cmdExport(args[1:], stdout, stderr)
	case "serve":
		err = cmdServe(ctx, args[1:], stdout, stderr)
	case "backup":
		err = cmdBackup(ctx, args[1:], stdout, stderr)
	case "validate":
		err = cmdValidate(args[1:], stdout, stderr)
	case "algorithms":
		err = cmdAlgorithms(args[1:], stdout)
	case "reproduce":
		err = cmdReproduce(ctx, args[1:], stdout, stderr)
	case "sweep":
		err = cmdSweep(ctx, args[1:], stdout, stderr)
	case "stability":
		err = cmdStability(args[1:], stdout, stderr)
	case "train":
		err = cmdTrain(ctx, args[1:], stdout, stderr)
	case "worker":
		err = cmdWorker(ctx, args[1:], stdout, stderr)
	case "import":
		err = cmdImport(args[1:], stdout, stderr)
	case "help", "-h", "--help":
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "cclab: unknown command %q\n\n%s", args[0], usage)
		return exitUsage
	}
	var ue *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "cclab %s: %v\n", args[0], err)
		return exitUsage
	case errors.Is(err, errInterrupted):
		return exitInterrupted
	case errors.Is(err, errInvalid):
		return exitError // the problems are already printed
	default:
		fmt.Fprintf(stderr, "cclab %s: %v\n", args[0], err)
		return exitError
	}
}

type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

var (
	errInterrupted = errors.New("interrupted")
	errInvalid     = errors.New("invalid scenario")
)

// multiFlag collects a repeated flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// parseArgs parses flags that may come before or after positional arguments.
func parseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, &usageError{err.Error()}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
