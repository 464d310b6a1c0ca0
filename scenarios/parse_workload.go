package scenarios

import (
	"encoding/json"
	"math"
	"strings"

	"cclab/sim"
)

func (d *decoder) workloads(path string, v any, net *network, run *runAlgos) []Workload {
	list, ok := d.list(path, v)
	if !ok {
		return nil
	}
	if len(list) == 0 {
		d.add(path, "want at least one workload entry")
	}
	out := make([]Workload, 0, len(list))
	total, reported := 0.0, false
	for i, e := range list {
		wp := index(path, i)
		w, n := d.workload(wp, e, net, run)
		out = append(out, w)
		total += n
		if total > MaxFlows && !reported {
			d.add(wp, "the workload makes about %.0f flows up to here, more than the limit of %d", total, MaxFlows)
			reported = true
		}
	}
	return out
}

// workload reads one entry; it also returns how many flows it makes (the
// expected number for Poisson traffic), for the MaxFlows limit.
func (d *decoder) workload(path string, v any, net *network, run *runAlgos) (Workload, float64) {
	var w Workload
	f := d.fields(path, v)
	if f == nil {
		return w, 0
	}
	f.require("kind")
	w.Kind = f.str("kind", "")
	if cv, p, ok := f.take("cc"); ok {
		c, a := d.ccObject(p, cv)
		w.CC = &c
		run.add(a)
	}
	var n float64
	switch w.Kind {
	case KindFlows:
		w.Flows, n = d.flows(f, net, run)
	case KindIncast:
		w.Incast, n = d.incast(f, net)
	case KindPoisson:
		w.Poisson, n = d.poisson(f, net)
	case KindStaggered:
		w.Staggered, n = d.staggered(f, net)
	case KindLongShort:
		w.LongShort, n = d.longShort(f, net)
	case KindAllToAll:
		w.AllToAll, n = d.allToAll(f, net)
	default:
		if f.has("kind") {
			d.add(join(path, "kind"), "unknown kind %q (want %s)", w.Kind,
				strings.Join([]string{KindFlows, KindIncast, KindPoisson, KindStaggered, KindLongShort, KindAllToAll}, ", "))
		}
		f.skipAll()
	}
	f.finish()
	return w, n
}

// hostRef checks a host name against the topology (when it is known). It
// returns the name and the host's node index, or -1.
func (d *decoder) hostRef(path string, v any, net *network) (string, int) {
	name, ok := d.str(path, v)
	if !ok || net == nil {
		return name, -1
	}
	i, found := net.index[name]
	switch {
	case !found:
		d.add(path, "unknown host %q (hosts are %s)", name, net.describeHosts())
		return name, -1
	case i >= net.hostCount:
		d.add(path, "%q is a switch, not a host", name)
		return name, -1
	}
	return name, i
}

// host reads a host name field; absent gives "", -1.
func (f *fields) host(key string, net *network) (string, int) {
	v, p, ok := f.take(key)
	if !ok {
		return "", -1
	}
	return f.d.hostRef(p, v, net)
}

// hostList reads a list of at least min host names, distinct when distinct
// is set. The indexes are -1 where unknown.
func (d *decoder) hostList(path string, v any, net *network, min int, distinct bool) ([]string, []int) {
	list, ok := d.list(path, v)
	if !ok {
		return nil, nil
	}
	if len(list) < min {
		d.add(path, "want at least %d hosts, got %d", min, len(list))
	}
	if len(list) > MaxHosts && distinct {
		d.add(path, "want at most %d hosts, got %d", MaxHosts, len(list))
		return nil, nil
	}
	names := make([]string, 0, len(list))
	idx := make([]int, 0, len(list))
	seen := map[string]int{}
	for i, e := range list {
		ep := index(path, i)
		name, h := d.hostRef(ep, e, net)
		if j, dup := seen[name]; dup && distinct && name != "" {
			d.add(ep, "duplicate host %q (also [%d])", name, j)
		}
		seen[name] = i
		names = append(names, name)
		idx = append(idx, h)
	}
	return names, idx
}

// pair checks the endpoints of a flow (indexes -1 are skipped): distinct and
// connected. The problem is reported at dstPath.
func (d *decoder) pair(dstPath string, src, dst int, net *network) {
	if net == nil || src < 0 || dst < 0 {
		return
	}
	if src == dst {
		d.add(dstPath, "same host as the source (%s)", net.nodes[src].Name)
		return
	}
	if !net.connected(src, dst) {
		d.add(dstPath, "no path from %s to %s", net.nodes[src].Name, net.nodes[dst].Name)
	}
}

// allConnected checks that the hosts (indexes, -1 skipped) are connected to
// each other; the problem is reported at path.
func (d *decoder) allConnected(path string, hosts []int, net *network) {
	if net == nil {
		return
	}
	first := -1
	for _, h := range hosts {
		if h < 0 {
			continue
		}
		if first < 0 {
			first = h
			continue
		}
		if !net.connected(first, h) {
			d.add(path, "hosts %s and %s are not connected", net.nodes[first].Name, net.nodes[h].Name)
			return
		}
	}
}

// flowSize reads a flow size: > 0.
func (f *fields) flowSize(key string) int64 { return f.size(key, 0, true) }

func (d *decoder) flows(f *fields, net *network, run *runAlgos) ([]Flow, float64) {
	f.require("flows")
	v, p, ok := f.take("flows")
	if !ok {
		return nil, 0
	}
	list, ok := d.list(p, v)
	if !ok {
		return nil, 0
	}
	if len(list) == 0 {
		d.add(p, "want at least one flow")
	}
	out := make([]Flow, 0, len(list))
	for i, e := range list {
		ep := index(p, i)
		ff := d.fields(ep, e)
		if ff == nil {
			continue
		}
		ff.require("src", "dst", "size")
		var fl Flow
		var src, dst int
		fl.Src, src = ff.host("src", net)
		fl.Dst, dst = ff.host("dst", net)
		d.pair(join(ep, "dst"), src, dst, net)
		fl.Size = ff.flowSize("size")
		fl.Start = ff.time("start", 0, false)
		if tv, tp, ok := ff.take("tag"); ok {
			if s, ok := d.str(tp, tv); ok {
				if !validTag(s) {
					d.add(tp, "%q: want 1 to 32 letters, digits, '-' or '_'", s)
				} else {
					fl.Tag = s
				}
			}
		}
		if cv, cp, ok := ff.take("cc"); ok {
			c, a := d.ccObject(cp, cv)
			fl.CC = &c
			run.add(a)
		}
		ff.finish()
		out = append(out, fl)
	}
	return out, float64(len(out))
}

// lastStart checks that start + (count-1)×every (+ extra) stays within
// MaxTime; the problem is reported at path.
func (d *decoder) lastStart(path string, start, extra, every sim.Time, count int) {
	room := MaxTime - start - extra
	if room < 0 || (count > 1 && every > room/sim.Time(count-1)) {
		d.add(path, "the last flow would start after %s", formatTime(MaxTime))
	}
}

// repeat reads {every, count}: count >= 1, every > 0 when count > 1.
func (d *decoder) repeat(path string, v any) (sim.Time, int) {
	f := d.fields(path, v)
	if f == nil {
		return 0, 1
	}
	f.require("count")
	count := f.count("count", 1, 1, MaxFlows)
	every := f.time("every", 0, false)
	if count > 1 && every == 0 && f.has("count") {
		if f.has("every") {
			d.add(join(path, "every"), "must be > 0 when count > 1")
		} else {
			d.add(join(path, "every"), "required when count > 1")
		}
	}
	f.finish()
	return every, count
}

func (d *decoder) incast(f *fields, net *network) (*Incast, float64) {
	f.require("senders", "receiver", "size")
	in := &Incast{RepeatCount: 1}
	var recv int
	in.Receiver, recv = f.host("receiver", net)
	in.Size = f.flowSize("size")
	in.Start = f.time("start", 0, false)
	in.Jitter = f.time("jitter", 0, false)
	in.JitterDist = f.enum("jitterDist", JitterUniform, JitterUniform, JitterNormal)
	if in.JitterDist == JitterNormal && in.Jitter == 0 {
		d.add(join(f.path, "jitterDist"), "%q needs a jitter > 0 (the window the starts fall in)", JitterNormal)
	}
	in.FlowsPerSender = f.count("flowsPerSender", 1, 1, MaxFlows)
	senders := 0
	if v, p, ok := f.take("senders"); ok {
		switch x := v.(type) {
		case json.Number:
			max := int64(MaxHosts)
			if net != nil && recv >= 0 {
				max = int64(len(candidates(net, recv)))
			}
			if max < 1 {
				d.add(p, "no other host is connected to the receiver")
			} else if n, ok := d.whole(p, v, 1, max); ok {
				in.SenderCount = int(n)
				senders = in.SenderCount
			}
		case []any:
			names, idx := d.hostList(p, x, net, 1, true)
			in.Senders = names
			if in.Senders == nil {
				in.Senders = []string{}
			}
			for i, h := range idx {
				d.pair(index(p, i), recv, h, net)
			}
			senders = len(names)
		default:
			d.add(p, "want a list of hosts or a number of senders, got %s", describe(v))
		}
	}
	if v, p, ok := f.take("repeat"); ok {
		in.RepeatEvery, in.RepeatCount = d.repeat(p, v)
		if in.RepeatCount == 1 {
			in.RepeatEvery = 0
		}
		d.lastStart(join(p, "count"), in.Start, in.Jitter, in.RepeatEvery, in.RepeatCount)
	} else {
		d.lastStart(join(f.path, "jitter"), in.Start, in.Jitter, 0, 1)
	}
	return in, float64(senders) * float64(in.FlowsPerSender) * float64(in.RepeatCount)
}

// candidates lists the hosts an incast picks its senders from: every other
// host connected to the receiver, in host order.
func candidates(net *network, recv int) []int {
	var out []int
	for h := 0; h < net.hostCount; h++ {
		if h != recv && net.connected(h, recv) {
			out = append(out, h)
		}
	}
	return out
}

func (d *decoder) poisson(f *fields, net *network) (*Poisson, float64) {
	f.require("load", "until")
	po := &Poisson{}
	var mean float64
	switch {
	case f.has("cdf") && f.has("size"):
		d.add(join(f.path, "size"), "give either cdf or size, not both")
	case !f.has("cdf") && !f.has("size"):
		d.add(join(f.path, "cdf"), "required (or size, for flows all of one size)")
	}
	if v, p, ok := f.take("cdf"); ok {
		if dist := d.cdf(p, v, po); dist != nil {
			mean = dist.Mean()
		}
	}
	if f.has("size") {
		po.Size = f.size("size", 0, true)
		mean = float64(po.Size)
	}
	po.Load = f.fraction("load", 0, 0, 1, true)
	po.From = f.time("from", 0, false)
	po.Until = f.time("until", 0, false)
	if f.has("until") && po.Until <= po.From {
		d.add(join(f.path, "until"), "must be after from (%s), got %s", formatTime(po.From), formatTime(po.Until))
	}
	var hosts []int // the sources
	if f.has("hosts") && f.has("pairs") {
		d.add(join(f.path, "pairs"), "give either hosts or pairs, not both")
	}
	if v, p, ok := f.take("hosts"); ok {
		po.Hosts, hosts = d.hostList(p, v, net, 2, true)
		if po.Hosts == nil {
			po.Hosts = []string{}
		}
		d.allConnected(p, hosts, net)
	} else if v, p, ok := f.take("pairs"); ok {
		po.Pairs, hosts = d.pairs(p, v, net)
	} else if net != nil {
		for h := 0; h < net.hostCount; h++ {
			hosts = append(hosts, h)
		}
		d.allConnected(f.path, hosts, net)
	}
	// the expected number of flows: per source, the window over the mean
	// inter-arrival time meanSize×8 / (rate×load)
	n := 0.0
	if net != nil && mean > 0 && po.Load > 0 && po.Until > po.From {
		window := float64(po.Until-po.From) / float64(sim.Second)
		for _, h := range hosts {
			if h >= 0 {
				n += window * float64(net.hostRate[h]) * po.Load / (8 * mean)
			}
		}
	}
	return po, n
}

// pairs reads poisson.pairs, a list of [src, dst] host pairs, and returns
// them with the source of each (-1 where unknown).
func (d *decoder) pairs(path string, v any, net *network) ([][2]string, []int) {
	list, ok := d.list(path, v)
	if !ok {
		return nil, nil
	}
	if len(list) == 0 {
		d.add(path, "want at least one [src, dst] pair")
	}
	if len(list) > MaxHosts*MaxHosts {
		d.add(path, "want at most %d pairs, got %d", MaxHosts*MaxHosts, len(list))
		return nil, nil
	}
	out := make([][2]string, 0, len(list))
	srcs := make([]int, 0, len(list))
	for i, e := range list {
		ep := index(path, i)
		pair, ok := e.([]any)
		if !ok || len(pair) != 2 {
			d.add(ep, `want a [src, dst] pair of host names, got %s`, describe(e))
			continue
		}
		src, s := d.hostRef(index(ep, 0), pair[0], net)
		dst, t := d.hostRef(index(ep, 1), pair[1], net)
		d.pair(index(ep, 1), s, t, net)
		out = append(out, [2]string{src, dst})
		srcs = append(srcs, s)
	}
	return out, srcs
}

// cdf reads a CDF name or inline [[bytes, percent], ...] points into po.
func (d *decoder) cdf(path string, v any, po *Poisson) *CDF {
	switch x := v.(type) {
	case string:
		c, err := LoadCDF(x)
		if err != nil {
			d.add(path, "unknown cdf %q (want one of %s, or a list of [bytes, percent] points)", x, strings.Join(CDFNames(), ", "))
			return nil
		}
		po.CDF = x
		return c
	case []any:
		if len(x) > maxCDFPoints {
			d.add(path, "want at most %d points, got %d", maxCDFPoints, len(x))
			return nil
		}
		pts := make([]CDFPoint, 0, len(x))
		before := d.errs.count()
		for i, e := range x {
			ep := index(path, i)
			pair, ok := e.([]any)
			if !ok || len(pair) != 2 {
				d.add(ep, "want a [bytes, percent] pair, got %s", describe(e))
				continue
			}
			b, ok1 := d.number(index(ep, 0), pair[0])
			pc, ok2 := d.number(index(ep, 1), pair[1])
			if ok1 && ok2 {
				pts = append(pts, CDFPoint{Bytes: b, Percent: pc})
			}
		}
		if d.errs.count() != before {
			return nil
		}
		if i, msg := checkCDF(pts); msg != "" {
			if i >= 0 {
				d.add(index(path, i), "%s", msg)
			} else {
				d.add(path, "%s", msg)
			}
			return nil
		}
		po.CDFPoints = pts
		return &CDF{Points: pts}
	}
	d.add(path, "want a CDF name or a list of [bytes, percent] points, got %s", describe(v))
	return nil
}

func (d *decoder) staggered(f *fields, net *network) (*Staggered, float64) {
	f.require("src", "dst", "sizes", "starts")
	st := &Staggered{}
	var dst int
	st.Dst, dst = f.host("dst", net)
	var srcIdx []int
	if v, p, ok := f.take("src"); ok {
		st.Src, srcIdx = d.hostList(p, v, net, 1, false)
		for i, h := range srcIdx {
			d.pair(index(p, i), dst, h, net)
		}
	}
	if v, p, ok := f.take("sizes"); ok {
		if list, ok := d.list(p, v); ok {
			for i, e := range list {
				ep := index(p, i)
				if b, ok := d.quantity(ep, e, sizeQuantity); ok {
					if b == 0 {
						d.add(ep, "must be > 0")
					}
					st.Sizes = append(st.Sizes, b)
				}
			}
			if st.Src != nil && len(list) != len(st.Src) {
				d.add(p, "has %d entries, want %d (one per src)", len(list), len(st.Src))
			}
		}
	}
	if v, p, ok := f.take("starts"); ok {
		if list, ok := d.list(p, v); ok {
			for i, e := range list {
				if t, ok := d.quantity(index(p, i), e, timeQuantity); ok {
					st.Starts = append(st.Starts, sim.Time(t))
				}
			}
			if st.Src != nil && len(list) != len(st.Src) {
				d.add(p, "has %d entries, want %d (one per src)", len(list), len(st.Src))
			}
		}
	}
	return st, float64(len(st.Src))
}

// oneFlow reads the src, dst, size and start of a longshort member.
func (d *decoder) oneFlow(ff *fields, net *network) LongFlow {
	ff.require("src", "dst", "size")
	var fl LongFlow
	var src, dst int
	fl.Src, src = ff.host("src", net)
	fl.Dst, dst = ff.host("dst", net)
	d.pair(join(ff.path, "dst"), src, dst, net)
	fl.Size = ff.flowSize("size")
	fl.Start = ff.time("start", 0, false)
	return fl
}

func (d *decoder) longShort(f *fields, net *network) (*LongShort, float64) {
	f.require("long", "short")
	ls := &LongShort{}
	if v, p, ok := f.take("long"); ok {
		if lf := d.fields(p, v); lf != nil {
			ls.Long = d.oneFlow(lf, net)
			lf.finish()
		}
	}
	ls.Short.Count = 1
	if v, p, ok := f.take("short"); ok {
		if sf := d.fields(p, v); sf != nil {
			ls.Short.LongFlow = d.oneFlow(sf, net)
			ls.Short.Count = sf.count("count", 1, 1, MaxFlows)
			ls.Short.Every = sf.time("every", 0, false)
			if ls.Short.Count > 1 && ls.Short.Every == 0 {
				if sf.has("every") {
					d.add(join(p, "every"), "must be > 0 when count > 1")
				} else {
					d.add(join(p, "every"), "required when count > 1")
				}
			}
			if ls.Short.Count == 1 {
				ls.Short.Every = 0
			}
			d.lastStart(join(p, "count"), ls.Short.Start, 0, ls.Short.Every, ls.Short.Count)
			sf.finish()
		}
	}
	return ls, 1 + float64(ls.Short.Count)
}

func (d *decoder) allToAll(f *fields, net *network) (*AllToAll, float64) {
	f.require("hosts", "size")
	a := &AllToAll{RanksPerHost: 1, Iterations: 1}
	hosts := 0
	if v, p, ok := f.take("hosts"); ok {
		switch x := v.(type) {
		case json.Number:
			max := int64(MaxHosts)
			if net != nil {
				max = int64(net.hostCount)
			}
			if n, ok := d.whole(p, v, 2, max); ok {
				a.HostCount = int(n)
				hosts = a.HostCount
				if net != nil {
					idx := make([]int, hosts)
					for i := range idx {
						idx[i] = i
					}
					d.allConnected(p, idx, net)
				}
			}
		case []any:
			var idx []int
			a.Hosts, idx = d.hostList(p, x, net, 2, true)
			if a.Hosts == nil {
				a.Hosts = []string{}
			}
			d.allConnected(p, idx, net)
			hosts = len(a.Hosts)
		default:
			d.add(p, "want a list of hosts or a number of hosts, got %s", describe(v))
		}
	}
	a.RanksPerHost = f.count("ranksPerHost", 1, 1, 1024)
	a.Size = f.flowSize("size")
	a.Iterations = f.count("iterations", 1, 1, 1_000_000)
	a.Start = f.time("start", 0, false)
	ranks := float64(hosts) * float64(a.RanksPerHost)
	perIter := ranks*(ranks-1) - float64(hosts)*float64(a.RanksPerHost)*float64(a.RanksPerHost-1)
	return a, math.Max(0, perIter) * float64(a.Iterations)
}

// validTag is a flow's tag: 1 to 32 letters, digits, '-' or '_'.
func validTag(s string) bool {
	if len(s) == 0 || len(s) > 32 {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
