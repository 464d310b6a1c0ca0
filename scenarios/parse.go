package scenarios

import (
	"encoding/json"
	"sort"
	"strings"

	"cclab/cc"
	"cclab/sim"
)

// Defaults of the contract's table, and of the extensions.
const (
	DefaultSeed             uint64   = 1
	DefaultBuffer           int64    = 32 << 20
	DefaultMTU              int64    = 1000
	DefaultHeader           int64    = 36
	DefaultIdealHeader      int64    = 48
	DefaultAck              int64    = 48
	DefaultNack             int64    = 48
	DefaultAckHeader        int64    = 34
	DefaultRTO              sim.Time = sim.Millisecond
	MinTelemetryInterval    sim.Time = sim.Microsecond
	DefaultNackInterval     sim.Time = 500 * sim.Microsecond
	DefaultFlowCountTimeout sim.Time = 100 * sim.Microsecond
	DefaultInterval         sim.Time = 10 * sim.Microsecond
)

// Other limits.
const (
	// MaxFlows bounds the flows of one scenario. For Poisson workloads the
	// expected number counts at parse time; Build refuses a realisation with
	// more than twice as many.
	MaxFlows = 5_000_000
	// MaxPacket bounds host.mtu, host.header and host.ack.
	MaxPacket int64 = 64 << 10
	// RefRate is the port rate the ECN thresholds are given for.
	RefRate int64 = 100e9
)

// Parse reads a scenario document strictly, fills in the defaults and
// validates everything, including references between sections (host and port
// names, connectivity, parameters of scripted events). On failure it returns
// an *Error listing every problem found, each with its field path.
func Parse(data []byte) (*Scenario, error) {
	d := &decoder{}
	tree, err := decodeJSON(data, &d.errs)
	if err != nil {
		return nil, &Error{Errors: []FieldError{{Error: err.Error()}}}
	}
	s := d.scenario(tree)
	if err := d.errs.err(); err != nil {
		return nil, err
	}
	return s, nil
}

// runAlgos collects the algorithms a scenario uses, for the checks of
// scripted parameter changes.
type runAlgos struct {
	list []*cc.Algorithm
	ok   bool // every cc object named a registered algorithm
}

func (r *runAlgos) add(a *cc.Algorithm) {
	if a == nil {
		r.ok = false
		return
	}
	for _, b := range r.list {
		if b.Name == a.Name {
			return
		}
	}
	r.list = append(r.list, a)
}

func (r *runAlgos) names() string {
	names := make([]string, len(r.list))
	for i, a := range r.list {
		names[i] = a.Name
	}
	return strings.Join(names, ", ")
}

func (d *decoder) scenario(tree any) *Scenario {
	s := &Scenario{Seed: DefaultSeed}
	s.Switch = Switch{Buffer: DefaultBuffer, PFC: true, INT: true, FlowCountTimeout: DefaultFlowCountTimeout, AckClass: AckClassData, Routing: RoutingECMP}
	s.Host = Host{MTU: DefaultMTU, Header: DefaultHeader, IdealHeader: DefaultIdealHeader,
		Ack: DefaultAck, Nack: DefaultNack, AckHeader: DefaultAckHeader, AckEvery: 1,
		BDP: BDPGlobal, RTO: DefaultRTO, RTOAuto: true, NackInterval: DefaultNackInterval}
	s.Telemetry = Telemetry{Interval: DefaultInterval, AllQueues: true, AllFlows: true}
	s.Events = []Event{}
	f := d.fields("", tree)
	if f == nil {
		return s
	}
	s.Name = f.str("name", "")
	s.Description = f.str("description", "")
	if v, p, ok := f.take("seed"); ok {
		s.Seed = d.seed(p, v)
	}
	if v, p, ok := f.take("duration"); ok {
		if t, ok := d.quantity(p, v, timeQuantity); ok {
			if t == 0 {
				d.add(p, "must be > 0 (leave it out to run until every flow has finished)")
			}
			s.Duration = sim.Time(t)
		}
	}
	f.require("topology", "cc", "workload")

	var net *network
	if v, p, ok := f.take("topology"); ok {
		before := d.errs.count()
		s.Topology = d.topology(p, v)
		if d.errs.count() == before {
			n, err := newNetwork(&s.Topology)
			if err != nil {
				d.add(p, "%v", err)
			}
			net = n
		}
	}

	run := &runAlgos{ok: true}
	var algo *cc.Algorithm
	if v, p, ok := f.take("cc"); ok {
		s.CC, algo = d.ccObject(p, v)
		run.add(algo)
	} else {
		run.ok = false
	}
	if v, p, ok := f.take("switch"); ok {
		d.switchSection(p, v, &s.Switch, algo)
	}
	if v, p, ok := f.take("host"); ok {
		d.hostSection(p, v, &s.Host)
	}
	if v, p, ok := f.take("workload"); ok {
		s.Workload = d.workloads(p, v, net, run)
	}
	if v, p, ok := f.take("events"); ok {
		if list, ok := d.list(p, v); ok {
			for i, e := range list {
				s.Events = append(s.Events, d.event(index(p, i), e, s.Duration, net, run))
			}
		}
	}
	if v, p, ok := f.take("telemetry"); ok {
		d.telemetry(p, v, &s.Telemetry, net)
	}
	f.finish()
	if !s.Switch.INT {
		for _, a := range run.list {
			if a.INT.NeedsSwitches() {
				d.add("switch.int", "%s reads the switches' INT telemetry; set it to true (the default) or choose another algorithm", a.Name)
			}
		}
	}
	return s
}

func (d *decoder) seed(path string, v any) uint64 {
	n, ok := v.(json.Number)
	if !ok {
		d.add(path, "want a whole number, got %s", describe(v))
		return DefaultSeed
	}
	r, ok := ratFromJSON(string(n))
	if !ok || !r.IsInt() || r.Sign() < 0 || !r.Num().IsUint64() {
		d.add(path, "want a whole number in [0, 2^64), got %s", n)
		return DefaultSeed
	}
	return r.Num().Uint64()
}

// ---- topology ----

func (d *decoder) topology(path string, v any) Topology {
	var t Topology
	f := d.fields(path, v)
	if f == nil {
		return t
	}
	f.require("kind")
	t.Kind = f.str("kind", "")
	switch t.Kind {
	case KindDumbbell:
		t.Dumbbell = d.dumbbell(f)
	case KindFatTree:
		t.FatTree = d.fatTree(f)
	case KindLeafSpine:
		t.LeafSpine = d.leafSpine(f)
	case KindCustom:
		t.Custom = d.custom(f)
	default:
		if f.has("kind") {
			d.add(join(path, "kind"), "unknown kind %q (want %s, %s, %s, %s)", t.Kind, KindDumbbell, KindFatTree, KindLeafSpine, KindCustom)
		}
		f.skipAll()
	}
	f.finish()
	return t
}

func (d *decoder) dumbbell(f *fields) *Dumbbell {
	f.require("senders")
	db := &Dumbbell{}
	db.Senders = f.count("senders", 1, 1, MaxHosts)
	db.Receivers = f.count("receivers", 1, 1, MaxHosts)
	db.HostLink = f.link("hostLink")
	if f.has("bottleneck") {
		l := f.link("bottleneck")
		db.Bottleneck = &l
	} else {
		f.skip("bottleneck")
	}
	if db.Senders+db.Receivers > MaxHosts {
		d.add(join(f.path, "senders"), "senders and receivers make %d hosts, more than %d", db.Senders+db.Receivers, MaxHosts)
	}
	return db
}

func (d *decoder) fatTree(f *fields) *FatTree {
	f.require("pods", "tor", "agg", "core", "hostsPerTor")
	before := d.errs.count()
	ft := &FatTree{}
	ft.Pods = f.count("pods", 1, 1, MaxSwitches)
	ft.Tor = f.count("tor", 1, 1, MaxSwitches)
	ft.Agg = f.count("agg", 1, 1, MaxSwitches)
	ft.Core = f.count("core", 1, 1, MaxSwitches)
	ft.HostsPerTor = f.count("hostsPerTor", 1, 1, MaxHosts)
	ft.AggCore = f.enum("aggCore", AggCoreGrouped, AggCoreGrouped, AggCoreFull)
	ft.HostLink = f.link("hostLink")
	ft.TorAggLink = f.link("torAggLink")
	ft.AggCoreLink = f.link("aggCoreLink")
	if d.errs.count() != before {
		return ft
	}
	p := f.path
	if ft.Tor%ft.Pods != 0 {
		d.add(join(p, "tor"), "must be a multiple of pods (%d), got %d", ft.Pods, ft.Tor)
	}
	if ft.Agg%ft.Pods != 0 {
		d.add(join(p, "agg"), "must be a multiple of pods (%d), got %d", ft.Pods, ft.Agg)
	} else if ft.AggCore == AggCoreGrouped && ft.Core%(ft.Agg/ft.Pods) != 0 {
		d.add(join(p, "core"), "must be a multiple of the aggs per pod (%d) with aggCore %q, got %d", ft.Agg/ft.Pods, AggCoreGrouped, ft.Core)
	}
	if d.errs.count() != before {
		return ft
	}
	if h := ft.Tor * ft.HostsPerTor; h > MaxHosts {
		d.add(join(p, "hostsPerTor"), "tor × hostsPerTor makes %d hosts, more than %d", h, MaxHosts)
	}
	if s := ft.Tor + ft.Agg + ft.Core; s > MaxSwitches {
		d.add(p, "tor + agg + core makes %d switches, more than %d", s, MaxSwitches)
	}
	if n := fatTreeLinks(ft); n > MaxLinks {
		d.add(p, "makes %d links, more than %d", n, MaxLinks)
	}
	return ft
}

func (d *decoder) leafSpine(f *fields) *LeafSpine {
	f.require("leaves", "spines", "hostsPerLeaf")
	ls := &LeafSpine{}
	ls.Leaves = f.count("leaves", 1, 1, MaxSwitches)
	ls.Spines = f.count("spines", 1, 1, MaxSwitches)
	ls.HostsPerLeaf = f.count("hostsPerLeaf", 1, 1, MaxHosts)
	ls.UplinksPerPair = f.count("uplinksPerPair", 1, 1, 64)
	ls.HostLink = f.link("hostLink")
	ls.LeafSpineLink = f.link("leafSpineLink")
	p := f.path
	if h := ls.Leaves * ls.HostsPerLeaf; h > MaxHosts {
		d.add(join(p, "hostsPerLeaf"), "leaves × hostsPerLeaf makes %d hosts, more than %d", h, MaxHosts)
	}
	if s := ls.Leaves + ls.Spines; s > MaxSwitches {
		d.add(p, "leaves + spines makes %d switches, more than %d", s, MaxSwitches)
	}
	if n := int64(ls.Leaves)*int64(ls.HostsPerLeaf) + int64(ls.Leaves)*int64(ls.Spines)*int64(ls.UplinksPerPair); n > MaxLinks {
		d.add(p, "makes %d links, more than %d", n, MaxLinks)
	}
	return ls
}

// validID tells whether a custom node id is usable in port names: letters,
// digits, '_', '-', '.', ':' (no "->", no '#'), at most 64 bytes.
func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || isDigit(c) || c == '_' || c == '-' || c == '.' || c == ':'
		if !ok {
			return false
		}
	}
	return true
}

func (d *decoder) custom(f *fields) *Custom {
	f.require("nodes", "links")
	c := &Custom{}
	p := f.path
	types := map[string]string{} // id -> type
	where := map[string]int{}    // id -> node index
	hosts, switches := 0, 0
	if v, np, ok := f.take("nodes"); ok {
		if list, ok := d.list(np, v); ok {
			if len(list) > MaxHosts+MaxSwitches {
				d.add(np, "want at most %d nodes, got %d", MaxHosts+MaxSwitches, len(list))
				list = nil
			}
			for i, e := range list {
				ep := index(np, i)
				nf := d.fields(ep, e)
				if nf == nil {
					continue
				}
				nf.require("id", "type")
				n := CustomNode{ID: nf.str("id", ""), Type: nf.enum("type", "", NodeHost, NodeSwitch)}
				nf.finish()
				if nf.has("id") && !validID(n.ID) {
					d.add(join(ep, "id"), "invalid id %q (want 1 to 64 letters, digits, '_', '-', '.', ':')", n.ID)
				}
				if j, dup := where[n.ID]; dup && n.ID != "" {
					d.add(join(ep, "id"), "duplicate id %q (also nodes[%d])", n.ID, j)
				} else if n.ID != "" {
					where[n.ID] = i
					types[n.ID] = n.Type
				}
				switch n.Type {
				case NodeHost:
					hosts++
				case NodeSwitch:
					switches++
				}
				c.Nodes = append(c.Nodes, n)
			}
			if hosts > MaxHosts {
				d.add(np, "has %d hosts, more than %d", hosts, MaxHosts)
			}
			if switches > MaxSwitches {
				d.add(np, "has %d switches, more than %d", switches, MaxSwitches)
			}
			if hosts < 2 {
				d.add(np, "want at least 2 hosts, got %d", hosts)
			}
		}
	}
	linked := map[string]bool{}
	if v, lp, ok := f.take("links"); ok {
		if list, ok := d.list(lp, v); ok {
			if len(list) > MaxLinks {
				d.add(lp, "want at most %d links, got %d", MaxLinks, len(list))
				list = nil
			}
			for i, e := range list {
				ep := index(lp, i)
				lf := d.fields(ep, e)
				if lf == nil {
					continue
				}
				lf.require("a", "b")
				l := CustomLink{A: lf.str("a", ""), B: lf.str("b", "")}
				l.Rate = lf.rate("rate", DefaultLinkRate)
				l.Delay = lf.time("delay", DefaultLinkDelay, false)
				lf.finish()
				okA, okB := d.customEnd(join(ep, "a"), l.A, lf.has("a"), types), d.customEnd(join(ep, "b"), l.B, lf.has("b"), types)
				if okA && okB {
					switch {
					case l.A == l.B:
						d.add(join(ep, "b"), "the link joins %q to itself", l.A)
					case types[l.A] == NodeHost && types[l.B] == NodeHost:
						d.add(ep, "the link joins two hosts (%s, %s); hosts attach to switches", l.A, l.B)
					}
					linked[l.A], linked[l.B] = true, true
				}
				c.Links = append(c.Links, l)
			}
		}
	}
	if f.has("links") {
		for i, n := range c.Nodes {
			if n.Type == NodeHost && n.ID != "" && !linked[n.ID] && where[n.ID] == i {
				d.add(index(join(p, "nodes"), i), "host %q has no link", n.ID)
			}
		}
	}
	return c
}

// customEnd checks one end of a custom link.
func (d *decoder) customEnd(path, id string, present bool, types map[string]string) bool {
	if !present {
		return false
	}
	if _, ok := types[id]; !ok {
		d.add(path, "unknown node %q", id)
		return false
	}
	return true
}

// ---- cc ----

// ccObject reads an algorithm choice and checks its preset and parameters
// against the registry. It returns the algorithm, nil when the name is
// missing or unknown.
func (d *decoder) ccObject(path string, v any) (CC, *cc.Algorithm) {
	c := CC{Params: map[string]float64{}}
	f := d.fields(path, v)
	if f == nil {
		return c, nil
	}
	f.require("algorithm")
	var algo *cc.Algorithm
	if v, p, ok := f.take("algorithm"); ok {
		if name, ok := d.str(p, v); ok {
			c.Algorithm = name
			if a, found := cc.Lookup(name); found {
				algo = a
			} else {
				d.add(p, "unknown algorithm %q (want one of %s)", name, strings.Join(cc.Names(), ", "))
			}
		}
	}
	c.Preset = f.str("preset", "")
	if v, p, ok := f.take("policy"); ok {
		if name, ok := d.str(p, v); ok {
			switch {
			case name == "" || len(name) > 200:
				d.add(p, "want a policy name of 1 to 200 characters")
			case algo != nil && algo.WithPolicy == nil:
				d.add(p, "%s takes no trained policy (only the learned algorithms do: %s)", algo.Name, strings.Join(cc.LearnedNames(), ", "))
			default:
				c.Policy = name
			}
		}
	}
	if v, p, ok := f.take("params"); ok {
		if pf := d.fields(p, v); pf != nil {
			pf.skipAll()
			for _, k := range pf.obj.keys {
				val := pf.obj.vals[k]
				if val == nil {
					continue // null: left out
				}
				var param *cc.Param
				if algo != nil {
					if prm, found := algo.FindParam(k); found {
						param = &prm
					}
				}
				if x, ok := d.paramValue(join(p, k), val, param); ok {
					c.Params[k] = x
				}
			}
		}
	}
	f.finish()
	if algo != nil {
		// Resolve reports unknown presets and parameters and values out of
		// range; they do not depend on the line rate.
		_, perrs := algo.Resolve(c.Preset, c.Params, RefRate)
		for _, e := range perrs {
			if _, isParam := algo.FindParam(e.Param); !isParam && e.Param == "preset" {
				d.add(join(path, "preset"), "%s", e.Msg)
				continue
			}
			d.add(join(join(path, "params"), e.Param), "%s", e.Msg)
		}
	}
	return c, algo
}

// paramQuantity returns the quantity a parameter kind accepts as a string.
func paramQuantity(k cc.ParamKind) *quantity {
	switch k {
	case cc.KindTime:
		return timeQuantity
	case cc.KindRate:
		return rateQuantity
	case cc.KindBytes:
		return sizeQuantity
	}
	return nil
}

// paramValue converts one parameter value to the parameter's registry unit.
// A number is taken as given (in that unit); true and false are 1 and 0 for
// a bool parameter; a time, rate or size parameter also accepts a string with
// a unit ("50us"). With p nil (an unknown parameter) it returns 0 and lets
// Resolve report the name.
func (d *decoder) paramValue(path string, v any, p *cc.Param) (float64, bool) {
	if p == nil {
		return 0, true
	}
	switch x := v.(type) {
	case json.Number:
		return d.number(path, v)
	case bool:
		if p.Kind == cc.KindBool {
			if x {
				return 1, true
			}
			return 0, true
		}
	case string:
		if q := paramQuantity(p.Kind); q != nil {
			if f, ok := q.factor(p.Unit); ok {
				n, msg := q.parseString(x)
				if msg != "" {
					d.add(path, "%s", msg)
					return 0, false
				}
				return float64(n) / float64(f), true
			}
		}
	}
	d.add(path, "want %s, got %s", paramWant(p), describe(v))
	return 0, false
}

func paramWant(p *cc.Param) string {
	if p.Kind == cc.KindBool {
		return "true or false"
	}
	want := "a number"
	if p.Unit != "" {
		want += " in " + p.Unit
	}
	if q := paramQuantity(p.Kind); q != nil {
		if _, ok := q.factor(p.Unit); ok {
			want += " or a " + q.what + " such as " + q.example
		}
	}
	return want
}

// ---- switch and host ----

func (d *decoder) switchSection(path string, v any, sw *Switch, algo *cc.Algorithm) {
	f := d.fields(path, v)
	if f == nil {
		return
	}
	sw.Buffer = f.size("buffer", sw.Buffer, true)
	if v, p, ok := f.take("ecn"); ok {
		sw.ECN = d.ecn(p, v, algo)
	}
	if v, p, ok := f.take("pfc"); ok {
		if pf := d.fields(p, v); pf != nil {
			sw.PFC = pf.boolean("enabled", true)
			pf.finish()
		}
	}
	sw.INT = f.boolean("int", sw.INT)
	sw.FlowCountTimeout = f.time("flowCountTimeout", sw.FlowCountTimeout, true)
	sw.AckClass = f.enum("ackClass", sw.AckClass, AckClassData, AckClassHigh)
	sw.DataClasses = f.count("dataClasses", sw.DataClasses, 1, sim.MaxDataClasses)
	sw.Routing = f.enum("routing", sw.Routing, RoutingECMP, RoutingSpray)
	f.finish()
}

// ecn reads switch.ecn. Members left out take the scenario algorithm's ECN
// defaults; an algorithm without defaults needs kmin, kmax and pmax.
func (d *decoder) ecn(path string, v any, algo *cc.Algorithm) *ECN {
	e := &ECN{Enabled: true, Scale: ScaleLinkRate}
	f := d.fields(path, v)
	if f == nil {
		return e
	}
	before := d.errs.count()
	e.Enabled = f.boolean("enabled", true)
	var base cc.ECNDefaults
	switch {
	case algo == nil:
		// the algorithm is missing or unknown (already reported)
	case algo.ECN != nil:
		base = *algo.ECN
	case e.Enabled:
		for _, k := range []string{"kmin", "kmax", "pmax"} {
			if !f.has(k) {
				d.add(join(path, k), "required (algorithm %s has no ECN defaults)", algo.Name)
			}
		}
	}
	e.Kmin = f.size("kmin", base.Kmin, false)
	e.Kmax = f.size("kmax", base.Kmax, false)
	e.Pmax = f.fraction("pmax", base.Pmax, 0, 1, false)
	e.Scale = f.enum("scale", ScaleLinkRate, ScaleLinkRate, ScaleNone)
	f.finish()
	if e.Enabled && d.errs.count() == before && e.Kmin > e.Kmax {
		d.add(join(path, "kmax"), "must be >= kmin (%s), got %s", formatSize(e.Kmin), formatSize(e.Kmax))
	}
	return e
}

func (d *decoder) hostSection(path string, v any, h *Host) {
	f := d.fields(path, v)
	if f == nil {
		return
	}
	h.MTU = d.packetSize(f, "mtu", h.MTU)
	h.Header = d.headerSize(f, "header", h.Header)
	h.IdealHeader = d.headerSize(f, "idealHeader", h.IdealHeader)
	h.Ack = d.packetSize(f, "ack", h.Ack)
	h.Nack = d.packetSize(f, "nack", h.Nack)
	h.AckHeader = d.headerSize(f, "ackHeader", h.AckHeader)
	h.AckEvery = f.count("ackEvery", h.AckEvery, 1, 1<<16)
	h.CNPInterval = f.time("cnpInterval", h.CNPInterval, false)
	h.BDP = f.enum("bdp", h.BDP, BDPGlobal, BDPPath)
	if v, p, ok := f.take("rto"); ok {
		if str, isStr := v.(string); isStr && (str == "" || str[0] < '0' || str[0] > '9') && str != "auto" {
			d.add(p, `want "auto" or a duration such as "1ms", got %q`, str)
		} else if v == "auto" {
			h.RTO, h.RTOAuto = DefaultRTO, true
		} else {
			h.RTO, h.RTOAuto = f.time("rto", h.RTO, false), false
		}
	}
	h.NackInterval = f.time("nackInterval", h.NackInterval, false)
	f.finish()
}

// headerSize reads a size in [0, MaxPacket].
func (d *decoder) headerSize(f *fields, key string, def int64) int64 {
	return d.boundedSize(f, key, def, false)
}

// packetSize reads a size in (0, MaxPacket].
func (d *decoder) packetSize(f *fields, key string, def int64) int64 {
	return d.boundedSize(f, key, def, true)
}

func (d *decoder) boundedSize(f *fields, key string, def int64, positive bool) int64 {
	x := f.size(key, def, positive)
	if x > MaxPacket {
		d.add(join(f.path, key), "must be at most %s, got %s", formatSize(MaxPacket), formatSize(x))
		return def
	}
	return x
}

// ---- events ----

func (d *decoder) event(path string, v any, duration sim.Time, net *network, run *runAlgos) Event {
	var e Event
	f := d.fields(path, v)
	if f == nil {
		return e
	}
	f.require("at")
	e.At = f.time("at", 0, false)
	if duration > 0 && e.At > duration {
		d.add(join(path, "at"), "%s is after the duration (%s)", formatTime(e.At), formatTime(duration))
	}
	hasParams, hasLink := f.has("params"), f.has("link")
	switch {
	case hasParams && hasLink:
		d.add(path, `want either "params" or "link", not both`)
		f.skipAll()
	case hasParams:
		e.Kind = EventParams
		v, p, _ := f.take("params")
		e.Params = d.eventParams(p, v, run)
	case hasLink:
		v, p, _ := f.take("link")
		if name, ok := d.str(p, v); ok {
			e.Link = name
			if net != nil {
				if _, ok := net.portIndex[name]; !ok {
					d.add(p, "unknown port %q (ports are named node->peer, e.g. %s)", name, net.ports[0])
				}
			}
		}
		hasUp, hasLoss := f.has("up"), f.has("loss")
		switch {
		case hasUp && hasLoss:
			d.add(path, `want either "up" or "loss", not both`)
			f.skip("up", "loss")
		case hasUp:
			e.Kind = EventLink
			e.Up = f.boolean("up", false)
		case hasLoss:
			e.Kind = EventLoss
			e.Loss = f.fraction("loss", 0, 0, 1, false)
		default:
			d.add(path, `a link event wants "up" (true or false) or "loss" (0..1)`)
		}
	default:
		d.add(path, `want "params" (a parameter change) or "link" (a link change)`)
	}
	f.finish()
	return e
}

// eventParams reads a scripted parameter change: every name must be a live
// parameter of at least one algorithm of the run, and the value must suit
// every algorithm that has it.
func (d *decoder) eventParams(path string, v any, run *runAlgos) map[string]float64 {
	out := map[string]float64{}
	f := d.fields(path, v)
	if f == nil {
		return out
	}
	f.skipAll()
	if len(f.obj.keys) == 0 {
		d.add(path, "want at least one parameter")
	}
	for _, k := range f.obj.keys {
		kp := join(path, k)
		val := f.obj.vals[k]
		var holders []*cc.Algorithm
		var params []cc.Param
		for _, a := range run.list {
			if p, ok := a.FindParam(k); ok {
				holders = append(holders, a)
				params = append(params, p)
			}
		}
		if len(holders) == 0 {
			if run.ok {
				d.add(kp, "no algorithm of this run has parameter %q (algorithms: %s)", k, run.names())
			}
			continue
		}
		bad := false
		for i, p := range params {
			if !p.Live {
				d.add(kp, "%s cannot change %q during a run", holders[i].Name, k)
				bad = true
			}
			if _, isString := val.(string); isString && (p.Unit != params[0].Unit || p.Kind != params[0].Kind) {
				d.add(kp, "algorithms %s and %s give %q different units; write a number", holders[0].Name, holders[i].Name, k)
				bad = true
			}
		}
		if bad {
			continue
		}
		x, ok := d.paramValue(kp, val, &params[0])
		if !ok {
			continue
		}
		for i, p := range params {
			if err := p.Check(x); err != nil {
				if len(holders) > 1 {
					d.add(kp, "%s: %v", holders[i].Name, err)
				} else {
					d.add(kp, "%v", err)
				}
				ok = false
			}
		}
		if ok {
			out[k] = x
		}
	}
	return out
}

// ---- telemetry ----

const (
	selectAll  = "all"
	selectNone = "none"
)

func (d *decoder) telemetry(path string, v any, t *Telemetry, net *network) {
	f := d.fields(path, v)
	if f == nil {
		return
	}
	t.Interval = f.time("interval", t.Interval, false)
	if t.Interval > 0 && t.Interval < MinTelemetryInterval {
		// finer sampling writes gigabytes for little insight; 0 turns it off
		d.add(join(path, "interval"), "must be 0 (no samples) or at least %s, got %s", formatTime(MinTelemetryInterval), formatTime(t.Interval))
	}
	if v, p, ok := f.take("queues"); ok {
		t.AllQueues, t.Queues = selection(d, p, v, func(ep string, e any) (string, bool) {
			name, ok := d.str(ep, e)
			if ok && net != nil {
				if _, known := net.portIndex[name]; !known {
					d.add(ep, "unknown port %q", name)
					return "", false
				}
			}
			return name, ok
		})
		sort.Strings(t.Queues)
	}
	if v, p, ok := f.take("flows"); ok {
		t.AllFlows, t.Flows = selection(d, p, v, func(ep string, e any) (int, bool) {
			n, ok := d.whole(ep, e, 0, MaxFlows-1)
			return int(n), ok
		})
		sort.Ints(t.Flows)
	}
	f.finish()
}

// selection reads "all", "none" or a list of distinct items.
func selection[T comparable](d *decoder, path string, v any, item func(string, any) (T, bool)) (bool, []T) {
	switch x := v.(type) {
	case string:
		switch x {
		case selectAll:
			return true, nil
		case selectNone:
			return false, []T{}
		}
		d.add(path, `want "all", "none" or a list, got %q`, x)
		return true, nil
	case []any:
		out := []T{}
		seen := map[T]int{}
		for i, e := range x {
			ep := index(path, i)
			s, ok := item(ep, e)
			if !ok {
				continue
			}
			if j, dup := seen[s]; dup {
				d.add(ep, "duplicate entry %s (also [%d])", describe(e), j)
				continue
			}
			seen[s] = i
			out = append(out, s)
		}
		return false, out
	}
	d.add(path, `want "all", "none" or a list, got %s`, describe(v))
	return true, nil
}
