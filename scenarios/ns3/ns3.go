// Package ns3 reads experiments written for HPCC's ns-3 simulator (the
// field's reference, alibaba-edu/High-Precision-Congestion-Control): its
// config.txt of KEY VALUE lines, its topology file and its flow file, and
// turns them into a cclab scenario document. The formats and the meaning of
// every key are those of the reference's scratch/third.cc and traffic_gen.
package ns3

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"

	"cclab/cc"
	"cclab/scenarios"
	"cclab/sim"
)

// third.cc's values for keys a config leaves out that shape the
// experiment beyond the algorithm's parameters.
const (
	thirdCCStopTime  = "3.01" // simulator_stop_time, s
	thirdCCBufferMiB = 16     // buffer_size
)

// FlowOffset is the start time the reference adds to every flow (its
// traffic generator writes starts from 2 s); an imported scenario starts
// its flows this much earlier.
const FlowOffset = 2 * sim.Second

// Error is a problem with one line of one input file.
type Error struct {
	File  string // the file's name as given
	Line  int    // 1-based; 0 when the problem is not on one line
	Field string // the key or column concerned
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Field != "" {
		b.WriteString(": " + e.Field)
	}
	b.WriteString(": " + e.Msg)
	return b.String()
}

// File is one input: its name (for messages) and contents.
type File struct {
	Name string
	Data []byte
}

// Config is a parsed config.txt: the value text of each key (keys in the
// order first seen), with the line each came from.
type Config struct {
	File   string
	Keys   []string
	Values map[string]string
	Lines  map[string]int
}

// ParseConfig reads the reference's KEY VALUE lines. Blank lines are
// skipped; a key given twice keeps its last value, as third.cc reads them.
func ParseConfig(f File) (*Config, error) {
	c := &Config{File: f.Name, Values: map[string]string{}, Lines: map[string]int{}}
	sc := bufio.NewScanner(bytes.NewReader(f.Data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		// third.cc reads whitespace-separated words: a tab separates the
		// key from its value as well as a space does
		key, val := line, ""
		if i := strings.IndexAny(line, " \t\v\f"); i >= 0 {
			key, val = line[:i], strings.TrimSpace(line[i+1:])
		}
		if val == "" {
			return nil, &Error{File: f.Name, Line: n, Field: key, Msg: "no value (is the file cut short?): want `KEY value`"}
		}
		if _, seen := c.Values[key]; !seen {
			c.Keys = append(c.Keys, key)
		}
		c.Values[key] = val
		c.Lines[key] = n
	}
	if err := sc.Err(); err != nil {
		return nil, &Error{File: f.Name, Msg: err.Error()}
	}
	return c, nil
}

func (c *Config) err(key, format string, args ...any) error {
	return &Error{File: c.File, Line: c.Lines[key], Field: key, Msg: fmt.Sprintf(format, args...)}
}

// Topology is a parsed topology file.
type Topology struct {
	Nodes    int
	Switches map[int]bool
	Links    []Link
}

// Link is one line of the topology file.
type Link struct {
	A, B  int
	Rate  int64
	Delay sim.Time
	Loss  float64
}

// ParseTopology reads `<nodes> <switches> <links>`, the switch ids, then
// `a b rate delay error_rate` per link.
func ParseTopology(f File) (*Topology, error) {
	lines := newLines(f)
	head, n, ok := lines.next()
	if !ok {
		return nil, &Error{File: f.Name, Line: 1, Field: "counts", Msg: "empty file: want `<nodes> <switches> <links>` on the first line"}
	}
	counts, err := ints(head, 3, f.Name, n, "node, switch and link counts")
	if err != nil {
		return nil, err
	}
	t := &Topology{Nodes: counts[0], Switches: map[int]bool{}}
	if t.Nodes <= 0 || counts[1] < 0 || counts[2] < 0 || counts[1] > t.Nodes {
		return nil, &Error{File: f.Name, Line: n, Field: "node, switch and link counts", Msg: fmt.Sprintf("%v: want nodes > 0 and 0 <= switches <= nodes", counts)}
	}
	if t.Nodes-counts[1] > scenarios.MaxHosts || counts[1] > scenarios.MaxSwitches || counts[2] > scenarios.MaxLinks {
		return nil, &Error{File: f.Name, Line: n, Field: "node, switch and link counts", Msg: fmt.Sprintf("%v: the lab takes at most %d hosts, %d switches and %d links",
			counts, scenarios.MaxHosts, scenarios.MaxSwitches, scenarios.MaxLinks)}
	}
	if counts[1] > 0 {
		sw, n, ok := lines.next()
		if !ok {
			return nil, &Error{File: f.Name, Line: n, Field: "switch ids", Msg: fmt.Sprintf("truncated after line %d: want the %d switch ids", n, counts[1])}
		}
		ids, err := ints(sw, counts[1], f.Name, n, "switch ids")
		if err != nil {
			return nil, err
		}
		for _, id := range ids {
			if id < 0 || id >= t.Nodes {
				return nil, &Error{File: f.Name, Line: n, Field: "switch id", Msg: fmt.Sprintf("%d is not a node (0..%d)", id, t.Nodes-1)}
			}
			t.Switches[id] = true
		}
	}
	for i := 0; i < counts[2]; i++ {
		text, n, ok := lines.next()
		if !ok {
			return nil, &Error{File: f.Name, Line: n, Field: "links", Msg: fmt.Sprintf("truncated after line %d: %d of %d links", n, i, counts[2])}
		}
		fs := strings.Fields(text)
		if len(fs) != 5 {
			return nil, &Error{File: f.Name, Line: n, Field: "link", Msg: fmt.Sprintf("want `a b rate delay error_rate`, got %d fields (is the line cut short?)", len(fs))}
		}
		var l Link
		for k, field := range []string{"a", "b"} {
			v, err := strconv.Atoi(fs[k])
			if err != nil || v < 0 || v >= t.Nodes {
				return nil, &Error{File: f.Name, Line: n, Field: field, Msg: fmt.Sprintf("%q is not a node (0..%d)", fs[k], t.Nodes-1)}
			}
			if k == 0 {
				l.A = v
			} else {
				l.B = v
			}
		}
		if l.Rate, err = ParseRate(fs[2]); err != nil {
			return nil, &Error{File: f.Name, Line: n, Field: "rate", Msg: err.Error()}
		}
		if l.Rate <= 0 {
			return nil, &Error{File: f.Name, Line: n, Field: "rate", Msg: fmt.Sprintf("%q: want a rate > 0", fs[2])}
		}
		if l.A == l.B {
			return nil, &Error{File: f.Name, Line: n, Field: "b", Msg: fmt.Sprintf("the link joins node %d to itself", l.A)}
		}
		if !t.Switches[l.A] && !t.Switches[l.B] {
			return nil, &Error{File: f.Name, Line: n, Field: "b", Msg: fmt.Sprintf("the link joins two hosts (%d, %d): the lab attaches hosts to switches", l.A, l.B)}
		}
		if l.Delay, err = ParseTime(fs[3]); err != nil {
			return nil, &Error{File: f.Name, Line: n, Field: "delay", Msg: err.Error()}
		}
		if l.Loss, err = parseNum(fs[4]); err != nil || l.Loss < 0 || l.Loss > 1 {
			return nil, &Error{File: f.Name, Line: n, Field: "error_rate", Msg: fmt.Sprintf("%q: want a probability in [0, 1]", fs[4])}
		}
		t.Links = append(t.Links, l)
	}
	linked := make([]bool, t.Nodes)
	for _, l := range t.Links {
		linked[l.A], linked[l.B] = true, true
	}
	for id := 0; id < t.Nodes; id++ {
		if !linked[id] && !t.Switches[id] {
			return nil, &Error{File: f.Name, Field: "links", Msg: fmt.Sprintf("host %d has no link: the lab needs every host attached to a switch", id)}
		}
	}
	return t, nil
}

// Flow is one line of the flow file.
type Flow struct {
	Src, Dst int
	PG       int
	DPort    int
	Size     int64
	Start    sim.Time // as written (the reference's 2 s offset included)
	Line     int      // the line of the flow file it is on
}

// ParseFlows reads the flow count, then `src dst pg dport size start_s` per
// flow. nodes bounds the node ids (0 skips the check).
func ParseFlows(f File, nodes int) ([]Flow, error) {
	lines := newLines(f)
	head, n, ok := lines.next()
	if !ok {
		return nil, &Error{File: f.Name, Line: 1, Field: "flow count", Msg: "empty file: want the flow count on the first line"}
	}
	cnt, err := ints(head, 1, f.Name, n, "flow count")
	if err != nil {
		return nil, err
	}
	if cnt[0] <= 0 || cnt[0] > scenarios.MaxFlows {
		return nil, &Error{File: f.Name, Line: n, Field: "flow count", Msg: fmt.Sprintf("%d: want 1..%d (the lab needs a flow)", cnt[0], scenarios.MaxFlows)}
	}
	flows := make([]Flow, 0, min(cnt[0], 1<<16)) // the count is the file's claim: grow as lines come
	for i := 0; i < cnt[0]; i++ {
		text, n, ok := lines.next()
		if !ok {
			return nil, &Error{File: f.Name, Line: n, Field: "flows", Msg: fmt.Sprintf("truncated after line %d: %d of %d flows", n, i, cnt[0])}
		}
		fs := strings.Fields(text)
		if len(fs) != 6 {
			return nil, &Error{File: f.Name, Line: n, Field: "flow", Msg: fmt.Sprintf("want `src dst pg dport size start_s`, got %d fields (is the line cut short?)", len(fs))}
		}
		fl := Flow{Line: n}
		for k, field := range []string{"src", "dst", "pg", "dport"} {
			v, err := strconv.Atoi(fs[k])
			if err != nil || v < 0 || (k < 2 && nodes > 0 && v >= nodes) {
				return nil, &Error{File: f.Name, Line: n, Field: field, Msg: fmt.Sprintf("%q is not a node id or a number >= 0", fs[k])}
			}
			switch k {
			case 0:
				fl.Src = v
			case 1:
				fl.Dst = v
			case 2:
				fl.PG = v
			case 3:
				fl.DPort = v
			}
		}
		size, err := strconv.ParseInt(fs[4], 10, 64)
		if err != nil || size <= 0 || size > math.MaxUint32 {
			// third.cc reads the size as a uint32_t
			return nil, &Error{File: f.Name, Line: n, Field: "size", Msg: fmt.Sprintf("%q: want a whole number of bytes in 1..%d", fs[4], uint32(math.MaxUint32))}
		}
		fl.Size = size
		if fl.Start, err = seconds(fs[5]); err != nil {
			return nil, &Error{File: f.Name, Line: n, Field: "start_s", Msg: err.Error()}
		}
		flows = append(flows, fl)
	}
	return flows, nil
}

// seconds reads a decimal number of seconds exactly, to the picosecond.
func seconds(s string) (sim.Time, error) {
	r, ok := new(big.Rat).SetString(s)
	if !ok || r.Sign() < 0 {
		return 0, fmt.Errorf("%q: want a time in seconds >= 0", s)
	}
	r.Mul(r, big.NewRat(int64(sim.Second), 1))
	if !r.IsInt() || !r.Num().IsInt64() {
		return 0, fmt.Errorf("%q: not a whole number of picoseconds", s)
	}
	return sim.Time(r.Num().Int64()), nil
}

// ParseRate reads an ns-3 DataRate string ("100Gbps", "20Mb/s").
func ParseRate(s string) (int64, error) {
	t := s
	for _, r := range []struct{ from, to string }{{"Tb/s", "Tbps"}, {"Gb/s", "Gbps"}, {"Mb/s", "Mbps"}, {"kb/s", "Kbps"}, {"Kb/s", "Kbps"}, {"kbps", "Kbps"}, {"b/s", "bps"}} {
		if strings.HasSuffix(t, r.from) {
			t = strings.TrimSuffix(t, r.from) + r.to
			break
		}
	}
	v, err := scenarios.ParseRate(t)
	if err != nil {
		return 0, fmt.Errorf("%q: want a rate such as 100Gbps or 20Mb/s", s)
	}
	return v, nil
}

// ParseTime reads an ns-3 time string ("1000ns", "0.001ms").
func ParseTime(s string) (sim.Time, error) {
	v, err := scenarios.ParseTime(s)
	if err != nil {
		return 0, fmt.Errorf("%q: want a time such as 1000ns or 0.001ms", s)
	}
	return v, nil
}

type lineReader struct {
	sc *bufio.Scanner
	n  int
}

func newLines(f File) *lineReader {
	sc := bufio.NewScanner(bytes.NewReader(f.Data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	return &lineReader{sc: sc}
}

// next returns the next non-blank line and its number (the last line's
// number when there is none).
func (l *lineReader) next() (string, int, bool) {
	for l.sc.Scan() {
		l.n++
		if t := strings.TrimSpace(l.sc.Text()); t != "" {
			return t, l.n, true
		}
	}
	return "", l.n, false
}

func ints(text string, want int, file string, line int, what string) ([]int, error) {
	fs := strings.Fields(text)
	if len(fs) != want {
		return nil, &Error{File: file, Line: line, Field: what, Msg: fmt.Sprintf("want %d numbers, got %d", want, len(fs))}
	}
	out := make([]int, want)
	for i, f := range fs {
		v, err := strconv.Atoi(f)
		if err != nil {
			return nil, &Error{File: file, Line: line, Field: what, Msg: fmt.Sprintf("%q is not a whole number", f)}
		}
		out[i] = v
	}
	return out, nil
}

// ---- the scenario ----

// Import is an experiment turned into a scenario.
type Import struct {
	// Scenario is the scenario document (JSON), ready for scenarios.Parse.
	Scenario []byte
	// Ignored lists the config keys the lab read and knowingly ignored
	// (outputs, tracing, PINT), with why.
	Ignored []string
	// Unknown lists the config keys the lab does not understand.
	Unknown []string
	// Notes are other things an ns-3 user should know about the import,
	// each naming its file and line (a flow file not in start order).
	Notes []string
	// Unset lists the algorithm's config keys the config leaves out whose
	// value in the lab differs from third.cc's built-in one, each saying
	// both (the lab uses its own, run.py's, default).
	Unset []string
	// Config is the parsed config the scenario came from.
	Config *Config
}

// Warnings says, one line per key, which config keys the lab does not
// understand (and so left out of the scenario), each with its line.
func (imp *Import) Warnings() []string {
	var out []string
	for _, k := range imp.Unknown {
		out = append(out, imp.unknownError(k).Error()+": left out of the scenario")
	}
	for _, u := range imp.Unset {
		name := "config"
		if imp.Config != nil {
			name = imp.Config.File
		}
		out = append(out, name+": "+u)
	}
	return append(out, imp.Notes...)
}

// StrictError is nil when every config key is understood; otherwise an
// *Error naming the first unknown key and its line, and listing them all.
func (imp *Import) StrictError() error {
	if len(imp.Unknown) == 0 {
		return nil
	}
	e := imp.unknownError(imp.Unknown[0])
	if len(imp.Unknown) > 1 {
		e.Msg += fmt.Sprintf("; %d unknown keys in all: %s", len(imp.Unknown), strings.Join(imp.Unknown, ", "))
	}
	return e
}

func (imp *Import) unknownError(key string) *Error {
	e := &Error{Field: key, Msg: "not a config key the lab understands"}
	if imp.Config != nil {
		e.File, e.Line = imp.Config.File, imp.Config.Lines[key]
	}
	return e
}

// InputFiles are the keys naming files the experiment reads (TOPOLOGY_FILE,
// FLOW_FILE), with their values: the files an importer must find. The
// trace file (TRACE_FILE) and the outputs are not among them: they need
// not exist.
func (c *Config) InputFiles() (topology, flows string) {
	return c.Values["TOPOLOGY_FILE"], c.Values["FLOW_FILE"]
}

// ccModes maps CC_MODE to the lab's algorithms.
var ccModes = map[int]string{1: "dcqcn", 3: "hpcc", 7: "timely", 8: "dctcp"}

// paramKeys maps config keys to algorithm parameters, per algorithm; kinds
// say how the value text is read.
type paramKey struct {
	key, param string
	kind       string // "rate" (to Mbps), "num", "bool"
}

var paramKeys = map[string][]paramKey{
	"dcqcn": {
		{"RATE_AI", "ai", "rate"}, {"RATE_HAI", "hai", "rate"}, {"MIN_RATE", "minRate", "rate"},
		{"EWMA_GAIN", "g", "num"}, {"ALPHA_RESUME_INTERVAL", "alphaTimer", "num"},
		{"RATE_DECREASE_INTERVAL", "decreaseInterval", "num"}, {"RP_TIMER", "increaseTimer", "num"},
		{"FAST_RECOVERY_TIMES", "fastRecovery", "num"}, {"CLAMP_TARGET_RATE", "clampTarget", "bool"},
		{"ACK_HIGH_PRIO", "ackHighPriority", "bool"},
	},
	"hpcc": {
		{"RATE_AI", "ai", "rate"}, {"MIN_RATE", "minRate", "rate"}, {"U_TARGET", "eta", "num"},
		{"MI_THRESH", "maxStage", "num"}, {"FAST_REACT", "fastReact", "bool"}, {"MULTI_RATE", "perHop", "bool"},
		{"ACK_HIGH_PRIO", "ackHighPriority", "bool"},
	},
	"timely": {
		{"RATE_AI", "ai", "rate"}, {"RATE_HAI", "hai", "rate"}, {"MIN_RATE", "minRate", "rate"},
		{"ACK_HIGH_PRIO", "ackHighPriority", "bool"},
	},
	"dctcp": {
		{"DCTCP_RATE_AI", "ai", "rate"}, {"EWMA_GAIN", "g", "num"}, {"MIN_RATE", "minRate", "rate"},
		{"ACK_HIGH_PRIO", "ackHighPriority", "bool"},
	},
}

// builtIn are third.cc's own values of the algorithm keys a config may
// leave out, in the lab's units (rates in Mb/s), from its global
// declarations: `double ewma_gain = 1 / 16` is an integer division, 0, and
// rp_timer has no initialiser, 0. RATE_AI and RATE_HAI have none: third.cc
// cannot run without them.
var builtIn = map[string]float64{
	"MIN_RATE": 100, "EWMA_GAIN": 0, "ALPHA_RESUME_INTERVAL": 55, "RATE_DECREASE_INTERVAL": 4,
	"RP_TIMER": 0, "FAST_RECOVERY_TIMES": 5, "CLAMP_TARGET_RATE": 0, "ACK_HIGH_PRIO": 0,
	"U_TARGET": 0.95, "MI_THRESH": 5, "FAST_REACT": 1, "MULTI_RATE": 1, "DCTCP_RATE_AI": 1000,
}

// unset says what a key the config leaves out becomes, when the lab's
// default differs from third.cc's built-in value ("" when they agree).
func unset(pk paramKey, p cc.Param) string {
	lab := strconv.FormatFloat(p.Default, 'g', -1, 64)
	if p.Unit != "" {
		lab += " " + p.Unit
	}
	if p.ScaleWithRate {
		lab += " at 100 Gbps, scaled with the host link rate"
	}
	ref, ok := builtIn[pk.key]
	switch {
	case !ok:
		return fmt.Sprintf("%s: not set: the lab uses %s %s (run.py's value); third.cc has no default and needs the key", pk.key, pk.param, lab)
	case ref == p.Default:
		return ""
	}
	refText := strconv.FormatFloat(ref, 'g', -1, 64)
	if p.Unit != "" {
		refText += " " + p.Unit
	}
	return fmt.Sprintf("%s: not set: the lab uses %s %s (run.py's value), where third.cc's built-in value is %s; set it to run the same experiment",
		pk.key, pk.param, lab, refText)
}

// ignoredKeys are read and have no effect in the lab, with the reason.
var ignoredKeys = map[string]string{
	"TOPOLOGY_FILE":     "the topology file is read separately",
	"FLOW_FILE":         "the flow file is read separately",
	"TRACE_FILE":        "packet traces are not written",
	"TRACE_OUTPUT_FILE": "packet traces are not written",
	"ENABLE_TRACE":      "packet traces are not written",
	"FCT_OUTPUT_FILE":   "results go to flows.csv",
	"PFC_OUTPUT_FILE":   "results go to summary.json and series.csv",
	"QLEN_MON_FILE":     "queues go to summary.json and series.csv",
	"QLEN_MON_START":    "queues are recorded over the whole run",
	"QLEN_MON_END":      "queues are recorded over the whole run",
	"INT_MULTI":         "INT values are exact, not quantised",
	"PINT_LOG_BASE":     "PINT (CC_MODE 10) is not in the lab",
	"PINT_PROB":         "PINT (CC_MODE 10) is not in the lab",
	"L2_CHUNK_SIZE":     "with go-back-N and an ACK per packet it changes nothing",
	"GLOBAL_T":          "read as host.bdp",
	"DATA_RATE":         "third.cc reads it and takes every link's rate from the topology file",
	"LINK_DELAY":        "third.cc reads it and takes every link's delay from the topology file",
	"PAUSE_TIME":        "a PAUSE holds until its RESUME in the reference; the time only marks the frame as a PAUSE",
}

// FromFiles builds a scenario from a config and its topology and flow
// files; name names the scenario.
func FromFiles(name string, config, topology, flows File) (*Import, error) {
	c, err := ParseConfig(config)
	if err != nil {
		return nil, err
	}
	t, err := ParseTopology(topology)
	if err != nil {
		return nil, err
	}
	fl, err := ParseFlows(flows, t.Nodes)
	if err != nil {
		return nil, err
	}
	return Build(name, c, t, fl, flows.Name)
}

type obj = map[string]any

// Build turns parsed inputs into a scenario document.
func Build(name string, c *Config, t *Topology, flows []Flow, flowFile string) (*Import, error) {
	imp := &Import{Config: c}
	used := map[string]bool{}
	get := func(key string) (string, bool) {
		v, ok := c.Values[key]
		used[key] = true
		return v, ok
	}
	num := func(key string) (float64, bool, error) {
		v, ok := get(key)
		if !ok {
			return 0, false, nil
		}
		x, err := parseNum(v)
		if err != nil {
			return 0, true, c.err(key, "%q is not a number", v)
		}
		return x, true, nil
	}

	// algorithm
	mode, ok, err := num("CC_MODE")
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, c.err("CC_MODE", "missing: the lab needs the algorithm (1 DCQCN, 3 HPCC, 7 TIMELY, 8 DCTCP)")
	}
	algo, ok := ccModes[int(mode)]
	if !ok || mode != float64(int(mode)) {
		return nil, c.err("CC_MODE", "%v is not an algorithm the lab has (1 DCQCN, 3 HPCC, 7 TIMELY, 8 DCTCP)", c.Values["CC_MODE"])
	}
	reg, _ := cc.Lookup(algo)
	params := obj{}
	for _, pk := range paramKeys[algo] {
		v, ok := get(pk.key)
		if !ok {
			if p, found := reg.FindParam(pk.param); found {
				if u := unset(pk, p); u != "" {
					imp.Unset = append(imp.Unset, u)
				}
			}
			continue
		}
		var x float64
		switch pk.kind {
		case "rate":
			bps, err := ParseRate(v)
			if err != nil {
				return nil, c.err(pk.key, "%v", err)
			}
			x = float64(bps) / 1e6
		default:
			f, err := parseNum(v)
			if err != nil {
				return nil, c.err(pk.key, "%q is not a number", v)
			}
			x = f
			if pk.kind == "bool" && f != 0 {
				x = 1
			}
		}
		params[pk.param] = x
	}
	// the window: HAS_WIN with VAR_WIN is the lab's window (max BDP × rate /
	// line rate); HAS_WIN alone is a fixed max-BDP window, which only the
	// window-based schemes' defaults imply
	hasWin, hasWinSet, err := num("HAS_WIN")
	if err != nil {
		return nil, err
	}
	varWin, varWinSet, err := num("VAR_WIN")
	if err != nil {
		return nil, err
	}
	if hasWinSet && hasParam(reg, "window") {
		if hasWin != 0 && varWinSet && varWin == 0 {
			return nil, c.err("VAR_WIN", "0 with HAS_WIN 1 (a fixed window) is not modelled: the lab's window follows the rate (VAR_WIN 1)")
		}
		if hasWin != 0 && !varWinSet {
			// third.cc's default var_win is false: a fixed window
			return nil, c.err("VAR_WIN", "missing with HAS_WIN 1: third.cc's default is 0 (a fixed window), which is not modelled; the lab's window follows the rate (VAR_WIN 1)")
		}
		params["window"] = b2f(hasWin != 0)
	}

	// switches
	sw := obj{}
	if v, ok := get("BUFFER_SIZE"); ok {
		mb, err := strconv.ParseInt(v, 10, 64)
		if err != nil || mb <= 0 {
			return nil, c.err("BUFFER_SIZE", "%q: want a whole number of MiB > 0", v)
		}
		sw["buffer"] = fmt.Sprintf("%dMiB", mb)
	} else {
		sw["buffer"] = fmt.Sprintf("%dMiB", thirdCCBufferMiB) // third.cc's default
	}
	// the reference's switches are always lossless (PFC cannot be turned
	// off); its threshold is the dynamic one the lab models
	if v, ok := get("USE_DYNAMIC_PFC_THRESHOLD"); ok && v != "1" {
		return nil, c.err("USE_DYNAMIC_PFC_THRESHOLD", "%q: only the dynamic threshold (1) is modelled", v)
	}
	sw["pfc"] = obj{"enabled": true}
	ecnOn := true
	if v, ok := get("ENABLE_QCN"); ok {
		ecnOn = v != "0"
	}
	ecn, err := ecnMaps(c, get, t)
	if err != nil {
		return nil, err
	}
	switch {
	case !ecnOn:
		sw["ecn"] = obj{"enabled": false}
	case ecn != nil:
		sw["ecn"] = ecn
	}

	// hosts
	host := obj{}
	if v, ok := get("PACKET_PAYLOAD_SIZE"); ok {
		x, err := strconv.ParseInt(v, 10, 64)
		if err != nil || x <= 0 || x > scenarios.MaxPacket {
			return nil, c.err("PACKET_PAYLOAD_SIZE", "%q: want a whole number of bytes in 1..%d", v, scenarios.MaxPacket)
		}
		host["mtu"] = fmt.Sprintf("%dB", x)
	}
	if v, ok := get("L2_ACK_INTERVAL"); ok {
		x, err := strconv.ParseInt(v, 10, 64)
		if err != nil || x <= 0 {
			// with 0, rdma-hw.cc's ReceiveAck drops every ACK ("shouldn't
			// receive ack"): no flow of the reference ever finishes
			return nil, c.err("L2_ACK_INTERVAL", "%q: want bytes > 0 (with 0 the reference ignores every ACK)", v)
		}
		// rdma-hw.cc resets the receiver's ACK milestone to the interval on
		// every packet, so once a flow has delivered the interval's bytes
		// every packet is acknowledged: the interval only thins the ACKs
		// of a flow's first bytes, which the lab does not model
		host["ackEvery"] = 1
	}
	if v, ok := get("GLOBAL_T"); ok {
		x, err := strconv.ParseUint(v, 10, 32)
		if err != nil {
			return nil, c.err("GLOBAL_T", "%q: want 1 (global) or 0 (per path)", v)
		}
		// third.cc tests global_t == 1: any other value is per path
		host["bdp"] = map[bool]string{true: scenarios.BDPGlobal, false: scenarios.BDPPath}[x == 1]
	}
	if v, ok := get("L2_BACK_TO_ZERO"); ok && v != "0" {
		return nil, c.err("L2_BACK_TO_ZERO", "%q: only go-back-N (0) is modelled", v)
	}
	if v, ok := c.Values["PAUSE_TIME"]; ok {
		if x, err := parseNum(v); err != nil || x <= 0 {
			return nil, c.err("PAUSE_TIME", "%q: only a time > 0 is modelled (with 0 the reference reads every PAUSE as a RESUME)", v)
		}
	}
	if v, ok := get("SAMPLE_FEEDBACK"); ok && v != "0" {
		return nil, c.err("SAMPLE_FEEDBACK", "%q: only feedback on every ACK (0) is modelled", v)
	}
	if v, ok := get("RATE_BOUND"); ok && v != "1" {
		return nil, c.err("RATE_BOUND", "%q: the lab always paces at the rate (1)", v)
	}

	// duration (third.cc stops at 3.01 s unless the config says otherwise)
	v, ok := get("SIMULATOR_STOP_TIME")
	if !ok {
		v = thirdCCStopTime
	}
	stop, err := seconds(v)
	if err != nil {
		return nil, c.err("SIMULATOR_STOP_TIME", "%v", err)
	}
	if stop <= FlowOffset {
		return nil, c.err("SIMULATOR_STOP_TIME", "%s is not after the flows' 2 s offset", v)
	}
	if stop-FlowOffset > scenarios.MaxTime {
		return nil, c.err("SIMULATOR_STOP_TIME", "%s: the lab runs at most %s after the flows' 2 s offset", v, scenarios.FormatTime(scenarios.MaxTime))
	}
	duration := stop - FlowOffset

	// topology
	hostName := func(id int) string { return fmt.Sprintf("h%d", id) }
	nodeName := func(id int) string {
		if t.Switches[id] {
			return fmt.Sprintf("s%d", id)
		}
		return hostName(id)
	}
	var nodes []obj
	for id := 0; id < t.Nodes; id++ {
		kind := scenarios.NodeHost
		if t.Switches[id] {
			kind = scenarios.NodeSwitch
		}
		nodes = append(nodes, obj{"id": nodeName(id), "type": kind})
	}
	var links []obj
	var events []obj
	for _, l := range t.Links {
		links = append(links, obj{"a": nodeName(l.A), "b": nodeName(l.B),
			"rate": scenarios.FormatRate(l.Rate), "delay": scenarios.FormatTime(l.Delay)})
	}
	if v, ok := get("ERROR_RATE_PER_LINK"); ok {
		p, err := parseNum(v)
		if err != nil || p < 0 || p > 1 {
			return nil, c.err("ERROR_RATE_PER_LINK", "%q: want a probability in [0, 1]", v)
		}
		// third.cc gives a link whose own error_rate is 0 this rate; a link
		// with an error_rate > 0 keeps its own
		for i := range t.Links {
			if t.Links[i].Loss == 0 {
				t.Links[i].Loss = p
			}
		}
	}
	for _, l := range t.Links {
		if l.Loss > 0 {
			events = append(events, obj{"at": "0s", "link": nodeName(l.A) + "->" + nodeName(l.B), "loss": l.Loss})
		}
	}
	if v, ok := get("LINK_DOWN"); ok {
		fs := strings.Fields(v)
		if len(fs) != 3 {
			return nil, c.err("LINK_DOWN", "%q: want `time_us a b`", v)
		}
		at, err1 := strconv.ParseInt(fs[0], 10, 64)
		if err1 == nil && at > int64(scenarios.MaxTime/sim.Microsecond) {
			return nil, c.err("LINK_DOWN", "%q: %d µs is after the latest time the lab takes (%s)", v, at, scenarios.FormatTime(scenarios.MaxTime))
		}
		a, err2 := strconv.Atoi(fs[1])
		b, err3 := strconv.Atoi(fs[2])
		if err1 != nil || err2 != nil || err3 != nil || at < 0 || a < 0 || b < 0 || a >= t.Nodes || b >= t.Nodes {
			return nil, c.err("LINK_DOWN", "%q: want `time_us a b` with node ids", v)
		}
		// third.cc takes the link down only when the time is > 0 (`0 a b`,
		// like `0 0 0`, is no link down)
		linked := false
		for _, l := range t.Links {
			linked = linked || (l.A == a && l.B == b) || (l.A == b && l.B == a)
		}
		if at > 0 && !linked {
			return nil, c.err("LINK_DOWN", "%q: nodes %d and %d have no link between them", v, a, b)
		}
		if at > 0 {
			events = append(events, obj{"at": scenarios.FormatTime(sim.Time(at) * sim.Microsecond), "link": nodeName(a) + "->" + nodeName(b), "up": false})
		}
	}

	// flows
	var list []obj
	otherPorts := 0
	unsorted := false
	for i, f := range flows {
		line := f.Line
		if line == 0 {
			line = i + 2 // built by hand: the count, then one flow a line
		}
		if i > 0 && f.Start < flows[i-1].Start && !unsorted {
			// third.cc schedules each flow from the previous one's start
			unsorted = true
			imp.Notes = append(imp.Notes, fmt.Sprintf("%s:%d: start_s: flow %d starts before flow %d: the file is not in start order, which HPCC's simulator needs (it reads the flows one after another); the lab starts every flow at its own time", flowFile, line, i, i-1))
		}
		for _, end := range []struct {
			field string
			id    int
		}{{"src", f.Src}, {"dst", f.Dst}} {
			if t.Switches[end.id] {
				return nil, &Error{File: flowFile, Line: line, Field: end.field, Msg: fmt.Sprintf("flow %d: node %d is a switch, not a host: a switch cannot send or receive flows", i, end.id)}
			}
			if end.id < 0 || end.id >= t.Nodes {
				return nil, &Error{File: flowFile, Line: line, Field: end.field, Msg: fmt.Sprintf("flow %d: node %d is not in the topology (0..%d)", i, end.id, t.Nodes-1)}
			}
		}
		if f.Src == f.Dst {
			return nil, &Error{File: flowFile, Line: line, Field: "dst", Msg: fmt.Sprintf("flow %d: the same host as the source (%d)", i, f.Src)}
		}
		if f.Start < FlowOffset {
			return nil, &Error{File: flowFile, Line: line, Field: "start_s", Msg: fmt.Sprintf("flow %d starts before the 2 s offset the reference adds", i)}
		}
		e := obj{"src": hostName(f.Src), "dst": hostName(f.Dst),
			"size": scenarios.FormatSize(f.Size), "start": scenarios.FormatTime(f.Start - FlowOffset)}
		switch f.DPort {
		case DPortIncast:
			// fct_analysis.py's incast flows; written back with port 200
			e["tag"] = scenarios.KindIncast
		case DPort:
		default:
			otherPorts++
		}
		list = append(list, e)
	}
	if otherPorts > 0 {
		imp.Ignored = append(imp.Ignored, fmt.Sprintf("%s: dport: %d flows with a port other than 100 (background) or 200 (incast, tagged so): the lab has no ports, and writes them back as 100", flowFile, otherPorts))
	}

	doc := obj{
		"name":        name,
		"description": fmt.Sprintf("Imported from HPCC's ns-3 simulator files (%s).", c.File),
		"topology":    obj{"kind": scenarios.KindCustom, "nodes": nodes, "links": links},
		"switch":      sw,
		"host":        host,
		"cc":          obj{"algorithm": algo, "params": params},
		"workload":    []obj{{"kind": scenarios.KindFlows, "flows": list}},
	}
	if duration > 0 {
		doc["duration"] = scenarios.FormatTime(duration)
	}
	if len(events) > 0 {
		doc["events"] = events
	}
	if imp.Scenario, err = json.MarshalIndent(doc, "", "  "); err != nil {
		return nil, err
	}
	for _, k := range c.Keys {
		switch {
		case used[k]:
		case ignoredKeys[k] != "":
			imp.Ignored = append(imp.Ignored, k+": "+ignoredKeys[k])
		case isParamKey(k):
			// a key of another algorithm (e.g. RATE_HAI under HPCC): no effect
			imp.Ignored = append(imp.Ignored, k+": not a parameter of "+algo)
		default:
			imp.Unknown = append(imp.Unknown, k)
		}
	}
	return imp, nil
}

func isParamKey(k string) bool {
	if k == "HAS_WIN" || k == "VAR_WIN" {
		return true
	}
	for _, list := range paramKeys {
		for _, pk := range list {
			if pk.key == k {
				return true
			}
		}
	}
	return false
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// ecnMaps reads KMIN_MAP, KMAX_MAP and PMAX_MAP (`n rate1 v1 … rateN vN`,
// thresholds in KB) into switch.ecn. The lab has one pair of thresholds,
// either scaled with each port's rate from their 100 Gbps values or fixed,
// and one pmax: maps of another shape are an error naming the key.
func ecnMaps(c *Config, get func(string) (string, bool), t *Topology) (obj, error) {
	type entry struct {
		rate int64
		v    float64
	}
	read := func(key string) ([]entry, bool, error) {
		v, ok := get(key)
		if !ok {
			return nil, false, nil
		}
		fs := strings.Fields(v)
		if len(fs) == 0 {
			return nil, true, c.err(key, "empty: want `n rate1 v1 ... rateN vN`")
		}
		n, err := strconv.Atoi(fs[0])
		if err != nil || n <= 0 || len(fs) != 1+2*n {
			return nil, true, c.err(key, "%q: want `n rate1 v1 ... rateN vN`", v)
		}
		var out []entry
		for i := 0; i < n; i++ {
			r, err1 := strconv.ParseInt(fs[1+2*i], 10, 64)
			x, err2 := parseNum(fs[2+2*i])
			if err1 != nil || err2 != nil || r <= 0 || x < 0 {
				return nil, true, c.err(key, "pair %d (%s %s): want a rate in bits per second and a value >= 0", i+1, fs[1+2*i], fs[2+2*i])
			}
			out = append(out, entry{r, x})
		}
		sort.Slice(out, func(i, j int) bool { return out[i].rate < out[j].rate })
		return out, true, nil
	}
	kmin, okMin, err := read("KMIN_MAP")
	if err != nil {
		return nil, err
	}
	kmax, okMax, err := read("KMAX_MAP")
	if err != nil {
		return nil, err
	}
	pmax, okP, err := read("PMAX_MAP")
	if err != nil {
		return nil, err
	}
	if !okMin && !okMax && !okP {
		return nil, nil
	}
	if !okMin || !okMax || !okP {
		return nil, c.err("KMIN_MAP", "KMIN_MAP, KMAX_MAP and PMAX_MAP go together")
	}
	// every link rate needs a value, as third.cc asserts
	for _, l := range t.Links {
		for _, m := range []struct {
			key string
			es  []entry
		}{{"KMIN_MAP", kmin}, {"KMAX_MAP", kmax}, {"PMAX_MAP", pmax}} {
			found := false
			for _, e := range m.es {
				found = found || e.rate == l.Rate
			}
			if !found {
				return nil, c.err(m.key, "no value for the topology's %s links", scenarios.FormatRate(l.Rate))
			}
		}
	}
	// third.cc looks the maps up by the rate of each switch port: entries
	// for rates the topology lacks have no effect
	rates := map[int64]bool{}
	for _, l := range t.Links {
		rates[l.Rate] = true
	}
	inUse := func(es []entry) []entry {
		var out []entry
		for _, e := range es {
			if rates[e.rate] {
				out = append(out, e)
			}
		}
		return out
	}
	if len(rates) > 0 {
		kmin, kmax, pmax = inUse(kmin), inUse(kmax), inUse(pmax)
	}
	for _, e := range pmax[1:] {
		if e.v != pmax[0].v {
			return nil, c.err("PMAX_MAP", "pmax differs between rates; the lab has one pmax")
		}
	}
	const ref = scenarios.RefRate
	thresholds := func(key string, es []entry) (at100G float64, scaled bool, err error) {
		// linear in the rate (run.py's maps), or the same at every rate
		first := es[0]
		lin, flat := true, true
		for _, e := range es[1:] {
			lin = lin && e.v*float64(first.rate) == first.v*float64(e.rate)
			flat = flat && e.v == first.v
		}
		switch {
		case len(es) == 1 || lin:
			return first.v * float64(ref) / float64(first.rate), true, nil
		case flat:
			return first.v, false, nil
		}
		return 0, false, c.err(key, "thresholds neither scale with the rate nor stay the same; the lab supports those two shapes")
	}
	lo, scaledLo, err := thresholds("KMIN_MAP", kmin)
	if err != nil {
		return nil, err
	}
	hi, scaledHi, err := thresholds("KMAX_MAP", kmax)
	if err != nil {
		return nil, err
	}
	if scaledLo != scaledHi && len(kmin) > 1 {
		return nil, c.err("KMIN_MAP", "KMIN_MAP and KMAX_MAP scale differently with the rate")
	}
	scale := scenarios.ScaleLinkRate
	if !scaledLo {
		scale = scenarios.ScaleNone
	}
	// values are KB (third.cc multiplies by 1000)
	kb := func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + "KB" }
	return obj{"enabled": true, "kmin": kb(lo), "kmax": kb(hi), "pmax": pmax[0].v, "scale": scale}, nil
}

func hasParam(a *cc.Algorithm, name string) bool {
	_, ok := a.FindParam(name)
	return ok
}

// parseNum reads a finite number (third.cc's streams read no NaN or
// infinity).
func parseNum(s string) (float64, error) {
	x, err := strconv.ParseFloat(s, 64)
	if err == nil && (math.IsNaN(x) || math.IsInf(x, 0)) {
		return 0, fmt.Errorf("%q is not a finite number", s)
	}
	return x, err
}
