package scenarios

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"cclab/sim"
)

// Canonical returns the normalised scenario as indented JSON with sorted
// keys: every default filled in, every quantity written in its canonical unit
// (FormatTime, FormatSize, FormatRate), only the fields meaningful for the
// chosen kinds, selection lists sorted, events in time order (stable). Equal
// scenarios written differently give identical bytes, and Parse(Canonical())
// gives the same Canonical() again.
//
// Two things are kept as written because they carry meaning: switch.ecn is
// left out when the document leaves it out (it then follows whatever
// algorithm the scenario runs with, also after --algo), and a per-flow or
// per-workload cc is kept only where one was given.
func (s *Scenario) Canonical() ([]byte, error) {
	doc, err := s.canonicalTree()
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return nil, fmt.Errorf("scenarios: canonical form: %w", err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// m is a JSON object; encoding/json writes map keys sorted.
type m = map[string]any

func (s *Scenario) canonicalTree() (m, error) {
	doc := m{
		"name":        s.Name,
		"description": s.Description,
		"seed":        s.Seed,
		"topology":    canonTopology(&s.Topology),
		"switch":      canonSwitch(&s.Switch),
		"host":        canonHost(&s.Host),
		"cc":          canonCC(&s.CC),
		"telemetry":   canonTelemetry(&s.Telemetry),
	}
	if s.Duration != 0 {
		doc["duration"] = formatTime(s.Duration)
	}
	work := make([]any, 0, len(s.Workload))
	for i := range s.Workload {
		w, err := canonWorkload(&s.Workload[i])
		if err != nil {
			return nil, fmt.Errorf("scenarios: workload[%d]: %w", i, err)
		}
		work = append(work, w)
	}
	doc["workload"] = work
	events := append([]Event(nil), s.Events...)
	sort.SliceStable(events, func(i, j int) bool { return events[i].At < events[j].At })
	evs := make([]any, 0, len(events))
	for _, e := range events {
		evs = append(evs, canonEvent(&e))
	}
	doc["events"] = evs
	return doc, nil
}

func canonLink(l Link) m {
	return m{"rate": formatRate(l.Rate), "delay": formatTime(l.Delay)}
}

func canonTopology(t *Topology) m {
	out := m{"kind": t.Kind}
	switch {
	case t.Kind == KindDumbbell && t.Dumbbell != nil:
		d := t.Dumbbell
		out["senders"] = d.Senders
		out["receivers"] = d.Receivers
		out["hostLink"] = canonLink(d.HostLink)
		if d.Bottleneck != nil {
			out["bottleneck"] = canonLink(*d.Bottleneck)
		}
	case t.Kind == KindFatTree && t.FatTree != nil:
		f := t.FatTree
		out["pods"] = f.Pods
		out["tor"] = f.Tor
		out["agg"] = f.Agg
		out["core"] = f.Core
		out["hostsPerTor"] = f.HostsPerTor
		out["aggCore"] = f.AggCore
		out["hostLink"] = canonLink(f.HostLink)
		out["torAggLink"] = canonLink(f.TorAggLink)
		out["aggCoreLink"] = canonLink(f.AggCoreLink)
	case t.Kind == KindLeafSpine && t.LeafSpine != nil:
		l := t.LeafSpine
		out["leaves"] = l.Leaves
		out["spines"] = l.Spines
		out["hostsPerLeaf"] = l.HostsPerLeaf
		out["uplinksPerPair"] = l.UplinksPerPair
		out["hostLink"] = canonLink(l.HostLink)
		out["leafSpineLink"] = canonLink(l.LeafSpineLink)
	case t.Kind == KindCustom && t.Custom != nil:
		nodes := make([]any, 0, len(t.Custom.Nodes))
		for _, n := range t.Custom.Nodes {
			nodes = append(nodes, m{"id": n.ID, "type": n.Type})
		}
		links := make([]any, 0, len(t.Custom.Links))
		for _, l := range t.Custom.Links {
			links = append(links, m{"a": l.A, "b": l.B, "rate": formatRate(l.Rate), "delay": formatTime(l.Delay)})
		}
		out["nodes"] = nodes
		out["links"] = links
	}
	return out
}

func canonSwitch(s *Switch) m {
	out := m{
		"buffer":           formatSize(s.Buffer),
		"pfc":              m{"enabled": s.PFC},
		"int":              s.INT,
		"flowCountTimeout": formatTime(s.FlowCountTimeout),
		"ackClass":         s.AckClass,
	}
	if s.DataClasses > 0 {
		// left out when the algorithms decide, so that every scenario
		// written before the field existed keeps its canonical form
		out["dataClasses"] = s.DataClasses
	}
	if s.Routing != "" && s.Routing != RoutingECMP {
		out["routing"] = s.Routing
	}
	if e := s.ECN; e != nil {
		if e.Enabled {
			out["ecn"] = m{"enabled": true, "kmin": formatSize(e.Kmin), "kmax": formatSize(e.Kmax), "pmax": e.Pmax, "scale": e.Scale}
		} else {
			out["ecn"] = m{"enabled": false}
		}
	}
	return out
}

func canonRTO(h *Host) string {
	if h.RTOAuto {
		return "auto"
	}
	return formatTime(h.RTO)
}

func canonHost(h *Host) m {
	return m{
		"mtu":          formatSize(h.MTU),
		"header":       formatSize(h.Header),
		"idealHeader":  formatSize(h.IdealHeader),
		"ack":          formatSize(h.Ack),
		"nack":         formatSize(h.Nack),
		"ackHeader":    formatSize(h.AckHeader),
		"ackEvery":     h.AckEvery,
		"cnpInterval":  formatTime(h.CNPInterval),
		"bdp":          h.BDP,
		"rto":          canonRTO(h),
		"nackInterval": formatTime(h.NackInterval),
	}
}

func canonCC(c *CC) m {
	params := m{}
	for k, v := range c.Params {
		params[k] = v
	}
	out := m{"algorithm": c.Algorithm, "preset": c.Preset, "params": params}
	if c.Policy != "" {
		out["policy"] = c.Policy
	}
	return out
}

func canonTelemetry(t *Telemetry) m {
	out := m{"interval": formatTime(t.Interval)}
	switch {
	case t.AllQueues:
		out["queues"] = selectAll
	case len(t.Queues) == 0:
		out["queues"] = selectNone
	default:
		q := append([]string(nil), t.Queues...)
		sort.Strings(q)
		out["queues"] = q
	}
	switch {
	case t.AllFlows:
		out["flows"] = selectAll
	case len(t.Flows) == 0:
		out["flows"] = selectNone
	default:
		f := append([]int(nil), t.Flows...)
		sort.Ints(f)
		out["flows"] = f
	}
	return out
}

func canonTimes(ts []sim.Time) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = formatTime(t)
	}
	return out
}

func canonSizes(bs []int64) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = formatSize(b)
	}
	return out
}

// hostsOrCount writes a host list, or the count when the list is nil.
func hostsOrCount(list []string, count int) any {
	if list != nil {
		return list
	}
	return count
}

func canonWorkload(w *Workload) (m, error) {
	out := m{"kind": w.Kind}
	if w.CC != nil {
		out["cc"] = canonCC(w.CC)
	}
	switch w.Kind {
	case KindFlows:
		flows := make([]any, 0, len(w.Flows))
		for _, f := range w.Flows {
			e := m{"src": f.Src, "dst": f.Dst, "size": formatSize(f.Size), "start": formatTime(f.Start)}
			if f.CC != nil {
				e["cc"] = canonCC(f.CC)
			}
			if f.Tag != "" {
				e["tag"] = f.Tag
			}
			flows = append(flows, e)
		}
		out["flows"] = flows
	case KindIncast:
		in := w.Incast
		if in == nil {
			return nil, fmt.Errorf("kind %s without its settings", w.Kind)
		}
		out["senders"] = hostsOrCount(in.Senders, in.SenderCount)
		out["receiver"] = in.Receiver
		out["size"] = formatSize(in.Size)
		out["start"] = formatTime(in.Start)
		out["jitter"] = formatTime(in.Jitter)
		if in.JitterDist == JitterNormal {
			out["jitterDist"] = in.JitterDist
		}
		if in.FlowsPerSender > 1 { // left out at 1, so that older scenarios keep their ids
			out["flowsPerSender"] = in.FlowsPerSender
		}
		if in.RepeatCount > 1 {
			out["repeat"] = m{"every": formatTime(in.RepeatEvery), "count": in.RepeatCount}
		}
	case KindPoisson:
		p := w.Poisson
		if p == nil {
			return nil, fmt.Errorf("kind %s without its settings", w.Kind)
		}
		switch {
		case p.Size > 0:
			out["size"] = formatSize(p.Size)
		case p.CDFPoints != nil:
			pts := make([]any, len(p.CDFPoints))
			for i, pt := range p.CDFPoints {
				pts[i] = []float64{pt.Bytes, pt.Percent}
			}
			out["cdf"] = pts
		default:
			out["cdf"] = p.CDF
		}
		out["load"] = p.Load
		out["from"] = formatTime(p.From)
		out["until"] = formatTime(p.Until)
		if p.Hosts != nil {
			out["hosts"] = p.Hosts
		}
		if p.Pairs != nil {
			pairs := make([]any, len(p.Pairs))
			for i, pr := range p.Pairs {
				pairs[i] = []string{pr[0], pr[1]}
			}
			out["pairs"] = pairs
		}
	case KindStaggered:
		s := w.Staggered
		if s == nil {
			return nil, fmt.Errorf("kind %s without its settings", w.Kind)
		}
		out["src"] = s.Src
		out["dst"] = s.Dst
		out["sizes"] = canonSizes(s.Sizes)
		out["starts"] = canonTimes(s.Starts)
	case KindLongShort:
		ls := w.LongShort
		if ls == nil {
			return nil, fmt.Errorf("kind %s without its settings", w.Kind)
		}
		out["long"] = m{"src": ls.Long.Src, "dst": ls.Long.Dst, "size": formatSize(ls.Long.Size), "start": formatTime(ls.Long.Start)}
		short := m{"src": ls.Short.Src, "dst": ls.Short.Dst, "size": formatSize(ls.Short.Size),
			"start": formatTime(ls.Short.Start), "count": ls.Short.Count}
		if ls.Short.Count > 1 {
			short["every"] = formatTime(ls.Short.Every)
		}
		out["short"] = short
	case KindAllToAll:
		a := w.AllToAll
		if a == nil {
			return nil, fmt.Errorf("kind %s without its settings", w.Kind)
		}
		out["hosts"] = hostsOrCount(a.Hosts, a.HostCount)
		out["ranksPerHost"] = a.RanksPerHost
		out["size"] = formatSize(a.Size)
		out["iterations"] = a.Iterations
		out["start"] = formatTime(a.Start)
	}
	return out, nil
}

func canonEvent(e *Event) m {
	out := m{"at": formatTime(e.At)}
	switch e.Kind {
	case EventParams:
		params := m{}
		for k, v := range e.Params {
			params[k] = v
		}
		out["params"] = params
	case EventLink:
		out["link"] = e.Link
		out["up"] = e.Up
	case EventLoss:
		out["link"] = e.Link
		out["loss"] = e.Loss
	}
	return out
}
