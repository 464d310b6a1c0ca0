package cc

import (
	"fmt"
	"math"
	"sort"
)

// ParamKind says how a parameter's value is written and shown.
type ParamKind string

// Parameter kinds.
const (
	KindNumber ParamKind = "number" // plain number in Unit
	KindInt    ParamKind = "int"    // whole number
	KindBool   ParamKind = "bool"   // 0 or 1
	KindTime   ParamKind = "time"   // a duration; values are in Unit (e.g. "us")
	KindRate   ParamKind = "rate"   // a rate; values are in Unit (e.g. "Mbps")
	KindBytes  ParamKind = "bytes"  // a size; values are in Unit (e.g. "B", "KB")
)

// Param documents one tunable parameter of an algorithm.
type Param struct {
	Name    string    `json:"name"`
	Kind    ParamKind `json:"kind"`
	Unit    string    `json:"unit,omitempty"`
	Default float64   `json:"default"`
	Min     float64   `json:"min"`
	Max     float64   `json:"max"`
	// ScaleWithRate marks a default given for a 100 Gbps host link that is
	// scaled linearly with the host link rate, as the reference run.py does.
	ScaleWithRate bool   `json:"scaleWithRate,omitempty"`
	Live          bool   `json:"live"` // may be changed while a run is live
	Help          string `json:"help"`
}

// Preset is a named parameter set.
type Preset struct {
	Name   string             `json:"name"`
	Help   string             `json:"help"`
	Values map[string]float64 `json:"values"`
}

// ECNDefaults are an algorithm's switch marking thresholds at 100 Gbps.
type ECNDefaults struct {
	Kmin int64   `json:"kminBytes"`
	Kmax int64   `json:"kmaxBytes"`
	Pmax float64 `json:"pmax"`
}

// IntSpec says what INT an algorithm needs and what it costs on the wire.
type IntSpec struct {
	// HeaderBytes are the algorithm's own header on every data packet,
	// echoed in its ACK, whether or not switches push INT (TIMELY's 8-byte
	// send timestamp, as HPCC's simulator sizes it).
	HeaderBytes int64 `json:"headerBytes"`
	FixedBytes  int64 `json:"fixedBytes"`  // INT added to every data packet (and echoed in its ACK)
	PerHopBytes int64 `json:"perHopBytes"` // added at every switch the packet crosses
	FlowCount   bool  `json:"flowCount"`   // needs the switches' active-flow counter (MPCC)
	// FlowCountTimeoutParam names a time parameter (in µs) that sets the
	// switches' flow-count idle timeout while this algorithm runs, live
	// changes included (the first such algorithm of a run decides); 0 is
	// the larger of switch.flowCountTimeout and four base RTTs.
	FlowCountTimeoutParam string `json:"flowCountTimeoutParam,omitempty"`
}

// NeedsSwitches reports whether the algorithm reads telemetry that the
// switches write (and so cannot run with switch INT off).
func (s IntSpec) NeedsSwitches() bool {
	return s.FixedBytes > 0 || s.PerHopBytes > 0 || s.FlowCount
}

// PortInfo describes a switch egress port to a congestion point.
type PortInfo struct {
	ID   int32
	Rate int64
	Name string
}

// Algorithm is one registry entry: everything the CLI, REST API and UI show,
// and the constructors the engine calls.
type Algorithm struct {
	Name  string  `json:"name"`
	Title string  `json:"title"`
	Help  string  `json:"help"`
	Param []Param `json:"params"`
	// Presets lists named parameter sets; "" always means the defaults.
	Presets []Preset `json:"presets"`
	// AckHighPriority: the receiving NIC queues this algorithm's ACKs and
	// NACKs in its high-priority queue, never paused by PFC (HPCC's
	// ACK_HIGH_PRIO). It is a host setting only: at switches ACKs travel
	// in their data's class unless switch.ackClass is "high".
	AckHighPriority bool `json:"ackHighPriority"`
	// AckPriorityParam, when set, names a bool parameter that overrides
	// AckHighPriority (run.py gives DCQCN's window variants low-priority ACKs).
	AckPriorityParam string  `json:"ackPriorityParam,omitempty"`
	INT              IntSpec `json:"int"`
	// RateChangeReschedules moves a flow's next send when the rate changes:
	// it becomes one packet time after the last send at the new rate (HPCC's
	// ChangeRate, which the reference calls only from HPCC). Otherwise the
	// send already due keeps its time and the new rate paces the ones after.
	RateChangeReschedules bool         `json:"rateChangeReschedules"`
	ECN                   *ECNDefaults `json:"ecn,omitempty"`
	// Connections asks the engine for a Conn per host pair in FlowInfo.
	Connections bool `json:"connections,omitempty"`
	// ReceiverDriven: the receiver decides what the sender sends, with
	// control packets (cc.Ctrl). The receiving NIC accepts data out of
	// order and sends no per-packet ACK or NACK, only one ACK once every
	// byte of the message is in, which finishes the flow at the sender;
	// a duplicate after that is acknowledged again. The sender's
	// retransmission timeout, when a run has one, only probes a flow that
	// has sent everything it may and heard nothing (no control packet, no
	// final ACK) for the timeout: it resends its last packet.
	ReceiverDriven bool `json:"receiverDriven,omitempty"`
	// Credit asks every egress port for a credit queue (ExpressPass).
	Credit *CreditSpec `json:"credit,omitempty"`
	// DataClasses is the number of strict-priority data classes the
	// algorithm is designed for (Homa: 8); a scenario that does not set
	// switch.dataClasses gets the largest any of its algorithms asks for.
	DataClasses int `json:"dataClasses,omitempty"`
	// SprayParam, when set, names a bool parameter that sprays the
	// algorithm's data packets per packet across equal-cost paths (Homa)
	// whatever the scenario's routing.
	SprayParam string `json:"sprayParam,omitempty"`
	// SenderSRPT makes a sending NIC serve the algorithm's flows shortest
	// remaining first (within a priority) instead of round robin (Homa's
	// sender).
	SenderSRPT bool `json:"senderSRPT,omitempty"`
	// Series names the algorithm's own telemetry series, in id order.
	Series []SeriesSpec `json:"series"`

	// WithPolicy, set on the learned algorithms (FDCC, RL-CC), returns
	// the same algorithm deciding with another trained policy.
	// It is an error for a policy of another observation size.
	WithPolicy func(p Policy) (*Algorithm, error) `json:"-"`

	NewSender          func(info FlowInfo, p Params) Sender          `json:"-"`
	NewReceiver        func(p Params) Receiver                       `json:"-"`
	NewCongestionPoint func(port PortInfo, p Params) CongestionPoint `json:"-"`
}

// SeriesSpec describes one algorithm series.
type SeriesSpec struct {
	Name string `json:"name"`
	Unit string `json:"unit"`
	Help string `json:"help"`
	// Stats asks the engine to summarise every value of this event series
	// (count, mean, p50, p99, max) in the run's results, whether or not
	// telemetry is on (MPCC's qp_solve_ns).
	Stats bool `json:"stats,omitempty"`
}

// Params holds resolved parameter values, each in its Param's Unit.
type Params map[string]float64

// Get returns a parameter value; resolved Params always hold every parameter.
func (p Params) Get(name string) float64 { return p[name] }

// Clone copies p.
func (p Params) Clone() Params {
	q := make(Params, len(p))
	for k, v := range p {
		q[k] = v
	}
	return q
}

// ParamError names the parameter a problem is about.
type ParamError struct {
	Param string
	Msg   string
}

func (e *ParamError) Error() string { return e.Param + ": " + e.Msg }

// AckHigh reports whether the receiving NIC queues this algorithm's ACKs in
// its high-priority queue with these parameters.
func (a *Algorithm) AckHigh(p Params) bool {
	if a.AckPriorityParam != "" {
		if v, ok := p[a.AckPriorityParam]; ok {
			return v != 0
		}
	}
	return a.AckHighPriority
}

// FindParam returns the named parameter.
func (a *Algorithm) FindParam(name string) (Param, bool) {
	for _, p := range a.Param {
		if p.Name == name {
			return p, true
		}
	}
	return Param{}, false
}

// FindPreset returns the named preset ("" is the defaults).
func (a *Algorithm) FindPreset(name string) (Preset, bool) {
	if name == "" {
		return Preset{}, true
	}
	for _, p := range a.Presets {
		if p.Name == name {
			return p, true
		}
	}
	return Preset{}, false
}

// Check validates one value against its parameter's kind and range.
func (p Param) Check(v float64) error {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("must be a finite number")
	}
	if v < p.Min || v > p.Max {
		return fmt.Errorf("%s out of range [%s, %s]", fmtNum(v), fmtNum(p.Min), fmtNum(p.Max))
	}
	switch p.Kind {
	case KindInt:
		if v != math.Trunc(v) {
			return fmt.Errorf("must be a whole number, got %s", fmtNum(v))
		}
	case KindBool:
		if v != 0 && v != 1 {
			return fmt.Errorf("must be 0 or 1 (false or true), got %s", fmtNum(v))
		}
	}
	return nil
}

func fmtNum(v float64) string { return fmt.Sprintf("%g", v) }

// Resolve builds the parameter set of a flow: defaults (scaled with the host
// line rate where the parameter says so), then the preset, then overrides.
// Every problem is returned, each naming its parameter.
func (a *Algorithm) Resolve(preset string, overrides map[string]float64, lineRate int64) (Params, []*ParamError) {
	var errs []*ParamError
	out := make(Params, len(a.Param))
	scale := float64(lineRate) / 100e9
	for _, p := range a.Param {
		v := p.Default
		if p.ScaleWithRate && lineRate > 0 {
			v *= scale
		}
		out[p.Name] = v
	}
	pr, ok := a.FindPreset(preset)
	if !ok {
		errs = append(errs, &ParamError{Param: "preset", Msg: fmt.Sprintf("unknown preset %q for %s (want one of %s)", preset, a.Name, a.presetNames())})
	}
	for _, name := range sortedKeys(pr.Values) {
		p, ok := a.FindParam(name)
		if !ok {
			continue // presets are checked by the registry test
		}
		v := pr.Values[name]
		if p.ScaleWithRate && lineRate > 0 {
			v *= scale
		}
		out[name] = v
	}
	for _, name := range sortedKeys(overrides) {
		p, ok := a.FindParam(name)
		if !ok {
			errs = append(errs, &ParamError{Param: name, Msg: fmt.Sprintf("unknown parameter of %s (want one of %s)", a.Name, a.paramNames())})
			continue
		}
		v := overrides[name]
		if err := p.Check(v); err != nil {
			errs = append(errs, &ParamError{Param: name, Msg: err.Error()})
			continue
		}
		out[name] = v
	}
	return out, errs
}

func (a *Algorithm) paramNames() string {
	s := ""
	for i, p := range a.Param {
		if i > 0 {
			s += ", "
		}
		s += p.Name
	}
	if s == "" {
		return "none: it has no parameters"
	}
	return s
}

func (a *Algorithm) presetNames() string {
	s := `""`
	for _, p := range a.Presets {
		s += ", " + p.Name
	}
	return s
}

func sortedKeys(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// algorithms is the registry, in the order the UI lists it. It is built once
// and never modified.
var algorithms = []*Algorithm{
	noneAlgorithm(),
	dcqcnAlgorithm(),
	timelyAlgorithm(),
	dctcpAlgorithm(),
	hpccAlgorithm(),
	qcnAlgorithm(false),
	qcnAlgorithm(true),
	mpccAlgorithm(),
	rccAlgorithm(),
	homaAlgorithm(),
	expressPassAlgorithm(),
	dolceAlgorithm(),
	dolcePlusAlgorithm(),
	tcpAlgorithm(),
	FDCC(shippedPolicy("fdcc")),
	RLCC(shippedPolicy("rlcc")),
}

// LearnedNames lists the algorithms that decide with a trained policy.
func LearnedNames() []string {
	var names []string
	for _, a := range algorithms {
		if a.WithPolicy != nil {
			names = append(names, a.Name)
		}
	}
	return names
}

// Lookup returns the registered algorithm of that name.
func Lookup(name string) (*Algorithm, bool) {
	for _, a := range algorithms {
		if a.Name == name {
			return a, true
		}
	}
	return nil, false
}

// Algorithms returns every registered algorithm in display order. The slice
// is a copy; the entries must not be modified.
func Algorithms() []*Algorithm {
	return append([]*Algorithm(nil), algorithms...)
}

// Names lists the registered algorithm names.
func Names() []string {
	names := make([]string, len(algorithms))
	for i, a := range algorithms {
		names[i] = a.Name
	}
	return names
}
