package scenarios

import (
	"math"
	"math/rand/v2"
	"sort"

	"cclab/sim"
)

// genFlow is a generated flow before algorithm resolution.
type genFlow struct {
	spec  sim.FlowSpec
	cc    *CC // nil: the workload's or the scenario's
	phase int // sort key before the start time (all-to-all iteration)
}

// streamBase offsets the PCG stream of workload entry i, so that every entry
// draws from its own stream: adding an entry does not change another's flows.
const streamBase uint64 = 0x636c61622d776b6c // "clab-wkl"

// generator turns workload entries into flows.
type generator struct {
	s      *Scenario
	net    *network
	groups int // next barrier group id (all-to-all iterations)
}

// generate makes the flows of workload entry i, in flow-id order. The
// explicit kinds (flows, staggered) keep the order written. The generated
// kinds (incast, poisson, longshort, alltoall) are ordered by start time,
// ties by source host, then destination host, then generation order; an
// all-to-all iteration after the first starts relative to the previous one
// and sorts after it.
func (g *generator) generate(i int) []genFlow {
	w := &g.s.Workload[i]
	r := rand.New(rand.NewPCG(g.s.Seed, streamBase+uint64(i)))
	var out []genFlow
	switch w.Kind {
	case KindFlows:
		out = g.explicit(w.Flows)
	case KindIncast:
		out = g.incast(w.Incast, r)
	case KindPoisson:
		out = g.poisson(w.Poisson, r)
	case KindStaggered:
		out = g.staggered(w.Staggered)
	case KindLongShort:
		out = g.longShort(w.LongShort)
	case KindAllToAll:
		out = g.allToAll(w.AllToAll)
	}
	for k := range out {
		if out[k].spec.Tag == "" {
			out[k].spec.Tag = w.Kind
		}
		if w.Kind == KindLongShort {
			out[k].spec.Tag = "short"
			if k == 0 {
				out[k].spec.Tag = "long"
			}
		}
		if out[k].cc == nil {
			out[k].cc = w.CC
		}
	}
	if w.Kind == KindFlows || w.Kind == KindStaggered {
		return out
	}
	sort.SliceStable(out, func(a, b int) bool {
		x, y := &out[a], &out[b]
		if x.phase != y.phase {
			return x.phase < y.phase
		}
		if x.spec.Start != y.spec.Start {
			return x.spec.Start < y.spec.Start
		}
		if x.spec.Src != y.spec.Src {
			return x.spec.Src < y.spec.Src
		}
		return x.spec.Dst < y.spec.Dst
	})
	return out
}

func (g *generator) host(name string) int { return g.net.index[name] }

func flow(src, dst int, size int64, start sim.Time) genFlow {
	return genFlow{spec: sim.FlowSpec{Src: src, Dst: dst, Size: size, Start: start, Group: -1, After: -1}}
}

func (g *generator) explicit(flows []Flow) []genFlow {
	out := make([]genFlow, 0, len(flows))
	for _, f := range flows {
		gf := flow(g.host(f.Src), g.host(f.Dst), f.Size, f.Start)
		gf.cc = f.CC
		gf.spec.Tag = f.Tag
		out = append(out, gf)
	}
	return out
}

// incast: the senders (or SenderCount of the hosts connected to the receiver,
// chosen once by a partial Fisher–Yates shuffle) each send FlowsPerSender
// flows of Size to the receiver at Start + k×RepeatEvery, plus a jitter in
// [0, Jitter] drawn per flow: uniform, or normal around Jitter/2 with
// σ = Jitter/6, clipped.
func (g *generator) incast(in *Incast, r *rand.Rand) []genFlow {
	recv := g.host(in.Receiver)
	var senders []int
	if in.Senders != nil {
		for _, name := range in.Senders {
			senders = append(senders, g.host(name))
		}
	} else {
		cand := candidates(g.net, recv)
		for i := 0; i < in.SenderCount; i++ {
			j := i + r.IntN(len(cand)-i)
			cand[i], cand[j] = cand[j], cand[i]
		}
		senders = cand[:in.SenderCount]
	}
	var out []genFlow
	for k := 0; k < in.RepeatCount; k++ {
		base := in.Start + sim.Time(k)*in.RepeatEvery
		for _, s := range senders {
			for j := 0; j < max(in.FlowsPerSender, 1); j++ {
				start := base
				switch {
				case in.Jitter > 0 && in.JitterDist == JitterNormal:
					j := float64(in.Jitter)/2 + r.NormFloat64()*float64(in.Jitter)/6
					start += sim.Time(math.Round(math.Max(0, math.Min(float64(in.Jitter), j))))
				case in.Jitter > 0:
					start += sim.Time(r.Int64N(int64(in.Jitter) + 1))
				}
				out = append(out, flow(s, recv, in.Size, start))
			}
		}
	}
	return out
}

// poisson follows HPCC's traffic_gen.py: each host (in host order) draws
// exponential gaps with mean meanSize×8/(rate×load) from From, where rate is
// its link rate and meanSize the CDF's trapezoid mean; every arrival before
// Until gets a uniformly random destination among the other hosts and a size
// sampled from the CDF by linear interpolation.
func (g *generator) poisson(p *Poisson, r *rand.Rand) []genFlow {
	var dist *CDF
	switch {
	case p.Size > 0:
		dist = &CDF{Points: []CDFPoint{{Bytes: float64(p.Size), Percent: 0}, {Bytes: float64(p.Size), Percent: 100}}}
	case p.CDFPoints != nil:
		dist = &CDF{Points: p.CDFPoints}
	default:
		c, err := LoadCDF(p.CDF)
		if err != nil {
			return nil // Parse accepted the name, so this cannot happen
		}
		dist = c
	}
	if p.Pairs != nil {
		// one source per pair, sending to its own destination only
		mean := dist.Mean()
		var out []genFlow
		for _, pr := range p.Pairs {
			src, dst := g.host(pr[0]), g.host(pr[1])
			gap := mean * 8 / (float64(g.net.hostRate[src]) * p.Load) * float64(sim.Second)
			t := float64(p.From)
			for {
				t += math.Round(r.ExpFloat64() * gap)
				if t >= float64(p.Until) {
					break
				}
				size := p.Size
				if size == 0 {
					size = dist.Sample(r.Float64())
				}
				out = append(out, flow(src, dst, size, sim.Time(t)))
			}
		}
		return out
	}
	var hosts []int
	if p.Hosts != nil {
		for _, name := range p.Hosts {
			hosts = append(hosts, g.host(name))
		}
	} else {
		for h := 0; h < g.net.hostCount; h++ {
			hosts = append(hosts, h)
		}
	}
	mean := dist.Mean()
	var out []genFlow
	others := make([]int, 0, len(hosts))
	for _, src := range hosts {
		others = others[:0]
		for _, h := range hosts {
			if h != src {
				others = append(others, h)
			}
		}
		gap := mean * 8 / (float64(g.net.hostRate[src]) * p.Load) * float64(sim.Second) // mean gap, ps
		t := float64(p.From)
		for {
			t += math.Round(r.ExpFloat64() * gap)
			if t >= float64(p.Until) {
				break
			}
			dst := others[r.IntN(len(others))]
			size := dist.Sample(r.Float64())
			out = append(out, flow(src, dst, size, sim.Time(t)))
		}
	}
	return out
}

func (g *generator) staggered(s *Staggered) []genFlow {
	dst := g.host(s.Dst)
	out := make([]genFlow, 0, len(s.Src))
	for i, name := range s.Src {
		out = append(out, flow(g.host(name), dst, s.Sizes[i], s.Starts[i]))
	}
	return out
}

func (g *generator) longShort(ls *LongShort) []genFlow {
	out := []genFlow{flow(g.host(ls.Long.Src), g.host(ls.Long.Dst), ls.Long.Size, ls.Long.Start)}
	src, dst := g.host(ls.Short.Src), g.host(ls.Short.Dst)
	for k := 0; k < ls.Short.Count; k++ {
		out = append(out, flow(src, dst, ls.Short.Size, ls.Short.Start+sim.Time(k)*ls.Short.Every))
	}
	return out
}

// allToAll: rank r runs on host hosts[r/ranksPerHost]; every rank sends Size
// to every rank on another host (pairs on the same host need no network and
// are left out). Iteration k is barrier group base+k; iteration 0 starts at
// Start, iteration k > 0 waits for group base+k-1 and starts right after it.
func (g *generator) allToAll(a *AllToAll) []genFlow {
	var hosts []int
	if a.Hosts != nil {
		for _, name := range a.Hosts {
			hosts = append(hosts, g.host(name))
		}
	} else {
		for h := 0; h < a.HostCount; h++ {
			hosts = append(hosts, h)
		}
	}
	ranks := len(hosts) * a.RanksPerHost
	base := g.groups
	g.groups += a.Iterations
	var out []genFlow
	for k := 0; k < a.Iterations; k++ {
		for i := 0; i < ranks; i++ {
			for j := 0; j < ranks; j++ {
				hi, hj := i/a.RanksPerHost, j/a.RanksPerHost
				if hi == hj {
					continue
				}
				f := flow(hosts[hi], hosts[hj], a.Size, a.Start)
				f.phase = k
				f.spec.Group = base + k
				if k > 0 {
					f.spec.Start = 0
					f.spec.After = base + k - 1
				}
				out = append(out, f)
			}
		}
	}
	return out
}
