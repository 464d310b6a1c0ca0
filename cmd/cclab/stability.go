package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"cclab/scenarios"
	"cclab/sim"
	"cclab/sim/fluid"
)

const stabilityUsage = `cclab stability margins [--preset qcn-sigmetrics11] [--set NAME=VALUE]... [--json]
cclab stability ap [--k K] [--t SECONDS] [--delay-at output|input] [--update immediate|next] [--json]
cclab stability rcp [--max-rtt DURATION] [--json]

The linearised QCN and QCN-AIMD fluid models of seed 003: the fixed point,
Theorem 1's τ* (and its printed form), Theorem 2's τ̂ beside the paper's
189 µs, the exact linear margin and the phase margin at the RTT.
Parameters (--set): c (rate, e.g. 10Gbps), n, gd, w, ps, rai (rate),
qeq (packets), packet (size, e.g. 1500B), rtt (time, e.g. 350us).

ap: the Averaging Principle's example loop (§1, Figs. 3 and 11): plant
(s+1)/(s³+1.6s²+0.8s+0.6), gain K = 1/8, sampler T = 1 s, a unit step. The
delay sits on the measured output, e(nT) = r − y(nT − τ), and an update
computed at nT drives the plant from nT (--update next: from (n+1)T, which
is one T more delay). Prints each controller's largest stable delay.

rcp: RCP (eq. 34) and its averaging variants (§3.2, Figs. 13–14): 10 flows,
2.4 Gbps, α 0.1, β 1, T 50 ms, d0 held at 20 ms; the largest stable RTT of
each, swept up to --max-rtt (default 600ms).
`

// cmdStability is `cclab stability margins`.
func cmdStability(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "ap" {
		return cmdStabilityAP(args[1:], stdout, stderr)
	}
	if len(args) > 0 && args[0] == "rcp" {
		return cmdStabilityRCP(args[1:], stdout, stderr)
	}
	if len(args) == 0 || args[0] != "margins" {
		return &usageError{"want a subcommand: margins, ap or rcp\n\n" + stabilityUsage}
	}
	fs := stabilityFlags("margins", stderr)
	preset := fs.String("preset", "qcn-sigmetrics11", "the parameters to start from (the paper's baseline)")
	asJSON := fs.Bool("json", false, "one JSON object")
	var sets multiFlag
	fs.Var(&sets, "set", "NAME=VALUE, repeated")
	rest, err := parseArgs(fs, args[1:])
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return &usageError{fmt.Sprintf("unexpected argument %q", rest[0])}
	}
	if *preset != "qcn-sigmetrics11" {
		return &usageError{fmt.Sprintf("no preset %q; presets: qcn-sigmetrics11", *preset)}
	}
	q := fluid.Baseline()
	for _, s := range sets {
		if err := setStability(&q, s); err != nil {
			return &usageError{err.Error()}
		}
	}
	m, err := fluid.ComputeMargins(q)
	if err != nil {
		return &usageError{err.Error()}
	}
	if *asJSON {
		return printJSON(stdout, m)
	}
	stable := func(b bool) string {
		if b {
			return "stable"
		}
		return "unstable"
	}
	fmt.Fprintf(stdout, "QCN fluid model: C %s, N %d, Gd %g, w %g, ps %g, R_AI %s, Q_eq %g packets of %g B, RTT %.1f µs\n",
		fmtRate(q.C), q.N, q.Gd, q.W, q.Ps, fmtRate(q.RAI), q.Qeq, q.Packet, q.RTT*1e6)
	fmt.Fprintf(stdout, "fixed point: R_C* = C/N = %.1f packets/s, R_T* − R_C* = %.3g bps, Q* = Q_eq + %.3g packets (QCN-AIMD: + %.3g)\n",
		m.RCPacketsPerS, m.RTMinusRCBps, m.QStarPackets-q.Qeq, m.QHatPackets-q.Qeq)
	fmt.Fprintf(stdout, "τ* (Theorem 1)      %8.2f µs   paper %g µs; as printed (a2 in (17)) %.1f µs\n", m.TauStarUs, m.TauStarPaperUs, m.TauStarPrintedUs)
	fmt.Fprintf(stdout, "exact QCN margin    %8.2f µs   0-dB crossover at %.1f rad/s\n", m.ExactMarginUs, m.CrossoverRadS)
	fmt.Fprintf(stdout, "τ̂ (Theorem 2)      %8.2f µs   paper %g µs (see the note below)\n", m.TauHatUs, m.TauHatPaperUs)
	fmt.Fprintf(stdout, "at RTT %.1f µs: phase margin %.1f°, linear QCN %s, linear QCN-AIMD %s\n",
		m.RTTUs, m.PhaseMarginDeg, stable(m.StableQCN), stable(m.StableQCNAIMD))
	fmt.Fprintf(stdout, "Theorem 3: (23) %.3g < 0.1, (24) %.3g < 0.2; averaging helps (τ* > τ̂): %v\n",
		m.Theorem3LHS23, m.Theorem3LHS24, m.AveragingHelps)
	for _, n := range m.Notes {
		fmt.Fprintln(stdout, "note:", n)
	}
	return nil
}

// setStability applies one --set NAME=VALUE: the value is read with the
// unit its parameter takes (a rate, a time, a size, or a plain number),
// then set by fluid.QCN.Set, which names every parameter.
func setStability(q *fluid.QCN, s string) error {
	name, val, ok := strings.Cut(s, "=")
	if !ok {
		return fmt.Errorf("--set %q: want NAME=VALUE", s)
	}
	name = strings.ToLower(name)
	var v float64
	var err error
	switch name {
	case "c", "rai":
		var r int64
		r, err = scenarios.ParseRate(val)
		v = float64(r)
	case "rtt":
		var t sim.Time
		t, err = scenarios.ParseTime(val)
		v = float64(t) / float64(sim.Second)
	case "packet":
		var b int64
		b, err = scenarios.ParseSize(val)
		v = float64(b)
	default:
		if v, err = strconv.ParseFloat(val, 64); err != nil {
			err = fmt.Errorf("%s: %q is not a number", name, val)
		}
	}
	if err == nil {
		err = q.Set(name, v)
	}
	if err != nil {
		return fmt.Errorf("--set %s: %v", s, err)
	}
	return nil
}

func fmtRate(bps float64) string {
	switch {
	case bps >= 1e9:
		return strconv.FormatFloat(bps/1e9, 'g', 4, 64) + " Gbps"
	case bps >= 1e6:
		return strconv.FormatFloat(bps/1e6, 'g', 4, 64) + " Mbps"
	}
	return strconv.FormatFloat(bps, 'g', 4, 64) + " bps"
}

// apPaper is the paper's statement beside each controller.
var apPaper = map[string]string{
	fluid.APStandard: "unstable at 8 s (Fig. 3b)",
	fluid.APAveraged: "stable up to 15 s (§1)",
	fluid.APPD:       "essentially identical to AP (Fig. 11)",
	fluid.APPDDither: "equal to AP (Theorem 4)",
}

// stabilityFlags is a stability subcommand's flag set.
func stabilityFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("stability "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, stabilityUsage) }
	return fs
}

// printJSON writes v as indented JSON.
func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// cmdStabilityAP is `cclab stability ap`.
func cmdStabilityAP(args []string, stdout, stderr io.Writer) error {
	fs := stabilityFlags("ap", stderr)
	cfg := fluid.DefaultAPConfig()
	fs.Float64Var(&cfg.K, "k", cfg.K, "controller gain K")
	fs.Float64Var(&cfg.T, "t", cfg.T, "sampling period T, seconds")
	fs.StringVar(&cfg.DelayAt, "delay-at", cfg.DelayAt, "where the loop delay sits: output or input")
	fs.StringVar(&cfg.Update, "update", cfg.Update, "when an update drives the plant: immediate or next")
	asJSON := fs.Bool("json", false, "a JSON list")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return &usageError{fmt.Sprintf("unexpected argument %q", rest[0])}
	}
	res, err := fluid.APMargins(cfg)
	if err != nil {
		return &usageError{err.Error()}
	}
	if *asJSON {
		return printJSON(stdout, res)
	}
	fmt.Fprintf(stdout, "Averaging Principle sandbox: K %g, T %g s, delay on the %s, update %s\n", cfg.K, cfg.T, cfg.DelayAt, cfg.Update)
	for _, r := range res {
		fmt.Fprintf(stdout, "%-10s largest stable delay %6.2f s   paper: %s\n", r.Name, r.MaxStableDelayS, apPaper[r.Name])
	}
	return nil
}

// rcpPaper is the paper's ns-2 thresholds (§3.2, Fig. 13).
var rcpPaper = map[string]string{
	fluid.RCPBasic: "stable at 110 ms, unstable at 115 ms",
	fluid.RCPAP:    "stable at 240 ms, unstable at 250 ms",
	fluid.RCPAP2:   "stable at 480 ms",
	fluid.RCPPD:    "like AP-RCP: stable at 240, unstable at 250 ms (Fig. 14)",
}

// cmdStabilityRCP is `cclab stability rcp`.
func cmdStabilityRCP(args []string, stdout, stderr io.Writer) error {
	fs := stabilityFlags("rcp", stderr)
	maxRTT := fs.String("max-rtt", "600ms", "the largest RTT swept")
	asJSON := fs.Bool("json", false, "a JSON list")
	rest, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return &usageError{fmt.Sprintf("unexpected argument %q", rest[0])}
	}
	mr, err := scenarios.ParseTime(*maxRTT)
	if err != nil {
		return &usageError{fmt.Sprintf("--max-rtt: %v", err)}
	}
	cfg := fluid.DefaultRCPConfig()
	res, err := fluid.RCPMargins(cfg, float64(mr)/float64(sim.Second))
	if err != nil {
		return &usageError{err.Error()}
	}
	if *asJSON {
		return printJSON(stdout, res)
	}
	fmt.Fprintf(stdout, "RCP fluid model: %d flows, %s, α %g, β %g, T %g ms, d0 %g ms (held fixed)\n",
		cfg.N, fmtRate(cfg.C), cfg.Alpha, cfg.Beta, cfg.T*1e3, cfg.D0*1e3)
	for _, r := range res {
		fmt.Fprintf(stdout, "%-8s largest stable RTT %6.1f ms   paper (ns-2): %s\n", r.Name, r.MaxStableRttMs, rcpPaper[r.Name])
	}
	return nil
}
