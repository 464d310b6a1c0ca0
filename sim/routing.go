package sim

import (
	"math/bits"
	"runtime"
	"sync"
)

// routing holds, for every node and destination host, the egress ports on
// shortest paths (ECMP next hops), over the links that are up. Hosts never
// forward: paths run host, switches..., host.
type routing struct {
	nHosts int
	off    []int32 // (node*nHosts + hostIx) -> start in ports; off[k+1]-off[k] next hops
	ports  []int32
	dist   []int32 // (hostIx*nNodes + node) -> hops to that host, -1 unreachable
	// the links that are up, per node, in a compact copy (upLinks): node
	// u's are adj[adjOff[u]:adjOff[u+1]]
	adj    []upLink
	adjOff []int32
	epoch  uint32 // counts computations (a flowRoute of another epoch is stale)
}

func (r *routing) compute(s *Sim) {
	r.computeIn(s, setupParts(len(s.nodes)*len(s.hosts)))
}

// computeIn is compute in parts on as many goroutines.
func (r *routing) computeIn(s *Sim, parts int) {
	nNodes := len(s.nodes)
	nHosts := len(s.hosts)
	r.nHosts = nHosts
	// the links that are up, per node, in a compact copy: the ports
	// themselves are large, and reading them nodes × hosts times missed
	// the caches (a 1024-host fabric's setup took 0.3 s)
	r.adj, r.adjOff = r.upLinks(s)
	adj, adjOff := r.adj, r.adjOff
	if cap(r.dist) >= nHosts*nNodes {
		r.dist = r.dist[:nHosts*nNodes]
	} else {
		r.dist = make([]int32, nHosts*nNodes)
	}
	// distT is dist by node then host, for the next hops below, which
	// read every host's distance of a node and of its neighbours
	distT := make([]int32, nNodes*nHosts)
	// a large network's table is built on several cores: the searches
	// by destination, then the next hops by node, each part its own
	// (the table is the same whatever the parts)
	inParts(nHosts, parts, func(_, from, to int) {
		queue := make([]int32, 0, nNodes)
		for hi := from; hi < to; hi++ {
			h := s.hosts[hi]
			dist := r.dist[hi*nNodes : (hi+1)*nNodes]
			for i := range dist {
				dist[i] = -1
			}
			dist[h] = 0
			queue = append(queue[:0], h)
			for qi := 0; qi < len(queue); qi++ {
				u := queue[qi]
				// BFS backwards along links: a neighbour v reaches h through u if the
				// port v->u is up; only switches relay
				for _, l := range adj[adjOff[u]:adjOff[u+1]] {
					v := l.peer
					if dist[v] >= 0 {
						continue
					}
					dist[v] = dist[u] + 1
					if l.peerHost < 0 {
						queue = append(queue, v)
					}
				}
			}
			for u, d := range dist {
				distT[u*nHosts+hi] = d
			}
		}
	})
	if n := nNodes*nHosts + 1; cap(r.off) < n {
		r.off = make([]int32, 0, n)
	}
	// about 3 next hops per node and host (a 1024-host fat-tree has 2.3):
	// growing the table by appends moved it over and over
	if n := 3 * nNodes * nHosts; cap(r.ports) < n {
		r.ports = make([]int32, 0, n)
	}
	// part 0 builds into the table itself, the others apart, appended
	// after it in order (their offsets shifted)
	type part struct{ off, ports []int32 }
	built := make([]part, parts)
	built[0] = part{r.off[:0], r.ports[:0]}
	inParts(nNodes, parts, func(k, from, to int) {
		b := built[k]
		if k > 0 {
			b = part{make([]int32, 0, (to-from)*nHosts), make([]int32, 0, 3*(to-from)*nHosts)}
		}
		for u := from; u < to; u++ {
			du := distT[u*nHosts : (u+1)*nHosts]
			links := adj[adjOff[u]:adjOff[u+1]]
			for hi := 0; hi < nHosts; hi++ {
				b.off = append(b.off, int32(len(b.ports)))
				if du[hi] <= 0 {
					continue
				}
				for _, l := range links {
					dv := distT[int(l.peer)*nHosts+hi]
					if l.nextHop(du[hi], dv, hi) {
						b.ports = append(b.ports, l.pid)
					}
				}
			}
		}
		built[k] = b
	})
	r.off, r.ports = built[0].off, built[0].ports
	for _, b := range built[1:] {
		base := int32(len(r.ports))
		for _, o := range b.off {
			r.off = append(r.off, base+o)
		}
		r.ports = append(r.ports, b.ports...)
	}
	r.off = append(r.off, int32(len(r.ports)))
	r.epoch++
}

// setupParts is how many goroutines a set-up loop over work node-host
// pairs runs on: one below a million (a 432-host fat-tree has 0.26 million,
// the 1024-host one 1.4 million), else up to 8 as the machine's cores
// allow.
func setupParts(work int) int {
	if work < 1<<20 {
		return 1
	}
	return min(runtime.GOMAXPROCS(0), 8)
}

// inParts calls f(k, lo, hi) for parts contiguous ranges [lo, hi) that
// cover [0, n) in order, at once, part 0 on the caller's goroutine, and
// returns when all have returned.
func inParts(n, parts int, f func(k, lo, hi int)) {
	parts = max(1, min(parts, n))
	var wg sync.WaitGroup
	for k := 1; k < parts; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(k, k*n/parts, (k+1)*n/parts)
		}()
	}
	f(0, 0, n/parts)
	wg.Wait()
}

// upLink is a port that is up, as routing reads it: its id, the node at
// its far end, and that node's host index (-1: a switch).
type upLink struct {
	pid, peer, peerHost int32
}

// nextHop reports whether link l of a node at distance du from host hi
// is a next hop towards it: l leads one hop closer (its far end is at dv),
// to a switch or to that host (hosts do not relay).
func (l *upLink) nextHop(du, dv int32, hi int) bool {
	return dv == du-1 && (l.peerHost < 0 || int(l.peerHost) == hi)
}

// upLinks lists every node's ports that are up, in port order: node u's are
// adj[off[u]:off[u+1]].
func (r *routing) upLinks(s *Sim) (adj []upLink, off []int32) {
	adj, off = r.adj[:0], r.adjOff[:0]
	off = append(off, make([]int32, len(s.nodes)+1)...)
	for u := range s.nodes {
		off[u] = int32(len(adj))
		for _, pid := range s.nodes[u].ports {
			if p := &s.ports[pid]; p.up {
				adj = append(adj, upLink{pid: pid, peer: p.peer, peerHost: s.nodes[p.peer].hostIx})
			}
		}
	}
	off[len(s.nodes)] = int32(len(adj))
	return adj, off
}

// routeHops is the longest path (in switches) a flowRoute holds; longer
// paths are routed hop by hop.
const routeHops = 7

// flowRoute caches the egress port a flow's packets take at each switch of
// its path, in each direction (0: towards the destination with the data's
// hash, 1: back to the source with the ACKs' hash), as the routing of epoch
// gives them. It is what routing.next returns at those switches, so using it
// changes nothing but speed: a packet then reads one line per flow instead of
// the (nodes × hosts) routing table. 72 bytes.
type flowRoute struct {
	epoch uint32
	n     [2]uint8
	port  [2][routeHops]int32
	nic   [2]int32 // the sending host's port in each direction
}

// forward returns the egress port at switch u for a packet that is not
// pinned: from its flow's cached path when the packet is marked as following
// it (rdir) and the cached hop is at this switch, else from the routing table.
// The result is routing.next's in every case: a cached entry is next(u, dst,
// hash) of the current routing for the switch it belongs to, and it is used
// only at that switch.
func (s *Sim) forward(u int32, pk *packet) int32 {
	if d := pk.rdir; d != 0 && !s.noRouteCache {
		h := pk.hop
		pk.hop++
		fr := &s.routes[pk.flow]
		if fr.epoch != s.rt.epoch {
			s.routeFlow(pk.flow, fr)
		}
		if h < fr.n[d-1] {
			if e := fr.port[d-1][h]; s.ports[e].node == u {
				return e
			}
		}
	}
	return s.rt.next(s, u, pk.dst, pk.hash)
}

// hostPort is forward for a packet that host u sends.
func (s *Sim) hostPort(u int32, pk *packet) int32 {
	if d := pk.rdir; d != 0 && !s.noRouteCache {
		fr := &s.routes[pk.flow]
		if fr.epoch != s.rt.epoch {
			s.routeFlow(pk.flow, fr)
		}
		if e := fr.nic[d-1]; e >= 0 && s.ports[e].node == u {
			return e
		}
	}
	return s.rt.next(s, u, pk.dst, pk.hash)
}

// routeFlow fills fr with flow fid's paths under the current routing.
func (s *Sim) routeFlow(fid int32, fr *flowRoute) {
	f := &s.flows[fid]
	fr.epoch = s.rt.epoch
	fr.n = [2]uint8{}
	walk := func(d int, src, dst int32, h uint32) {
		e := s.rt.next(s, src, dst, h)
		fr.nic[d] = e
		if e < 0 {
			return
		}
		for u := s.ports[e].peer; s.nodes[u].kind == Switch && fr.n[d] < routeHops; u = s.ports[e].peer {
			if e = s.rt.next(s, u, dst, h); e < 0 {
				return
			}
			fr.port[d][fr.n[d]] = e
			fr.n[d]++
		}
	}
	walk(0, f.src, f.dst, f.hashData)
	walk(1, f.dst, f.src, f.hashAck)
}

// next returns the egress port at node u towards host node dst for a packet
// with ECMP hash h, or -1 when dst is unreachable.
func (r *routing) next(s *Sim, u, dst int32, h uint32) int32 {
	k := int(u)*r.nHosts + int(s.nodes[dst].hostIx)
	lo, hi := r.off[k], r.off[k+1]
	n := hi - lo
	switch n {
	case 0:
		return -1
	case 1:
		return r.ports[lo]
	}
	// per-switch salt, like HPCC's per-switch ECMP seed (the node id)
	x := fmix32(h ^ (uint32(u)*0x9e3779b9 + 0x7f4a7c15))
	return r.ports[lo+int32(uint64(x)*uint64(n)>>32)] // x mod n by multiply-shift
}

func (r *routing) reachable(s *Sim, src, dst int32) bool {
	hi := int(s.nodes[dst].hostIx)
	return r.dist[hi*len(s.nodes)+int(src)] > 0
}

// hops returns the number of links between node u and host dst.
func (r *routing) hops(s *Sim, u, dst int32) int32 {
	return r.dist[int(s.nodes[dst].hostIx)*len(s.nodes)+int(u)]
}

// hash4 hashes a flow 4-tuple (source, destination, ports) with the
// MurmurHash3 32-bit mixing steps HPCC's switches use.
func hash4(sip, dip, sport, dport uint32) uint32 {
	h := uint32(0)
	for _, k := range [3]uint32{sip, dip, sport | dport<<16} {
		k *= 0xcc9e2d51
		k = bits.RotateLeft32(k, 15)
		k *= 0x1b873593
		h ^= k
		h = bits.RotateLeft32(h, 13)
		h = h*5 + 0xe6546b64
	}
	h ^= 12
	return fmix32(h)
}

func fmix32(h uint32) uint32 {
	h ^= h >> 16
	h *= 0x85ebca6b
	h ^= h >> 13
	h *= 0xc2b2ae35
	h ^= h >> 16
	return h
}

// mulDiv returns a*b/c without intermediate overflow (a, b, c >= 0, c > 0).
func mulDiv(a, b, c int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return int64(^uint64(0) >> 1) // saturate
	}
	q, _ := bits.Div64(hi, lo, uint64(c))
	return int64(q)
}

// serTime is the time to serialise bytes at rate bps, rounded up to a picosecond.
func serTime(bytes, rate int64) Time {
	return Time((bytes*8_000_000_000_000 + rate - 1) / rate)
}

// pathInfo is what HPCC's third.cc computes per host pair by BFS from the
// destination: one-way propagation, the serialisation of one MTU payload at
// every hop, and the bottleneck rate, along the first shortest path found.
type pathInfo struct {
	delay, tx Time
	bw        int64
}

// pathTo walks from src towards host dst taking the first next hop at each
// node (port-id order), which is the path a BFS discovers first.
func (s *Sim) pathTo(src, dst int32) (pathInfo, bool) {
	pi := pathInfo{bw: 1<<63 - 1}
	u := src
	for steps := 0; u != dst; steps++ {
		if steps > len(s.nodes) {
			return pi, false
		}
		k := int(u)*s.rt.nHosts + int(s.nodes[dst].hostIx)
		if s.rt.off[k] == s.rt.off[k+1] {
			return pi, false
		}
		p := &s.ports[s.rt.ports[s.rt.off[k]]]
		pi.delay += p.delay
		pi.tx += serTime(s.cfg.Host.MTU, p.rate)
		if p.rate < pi.bw {
			pi.bw = p.rate
		}
		u = p.peer
	}
	return pi, true
}

// computeBaseRTTs sets the maximum base RTT and BDP over all host pairs:
// RTT = 2 × propagation + one MTU payload's serialisation per hop, BDP = RTT ×
// bottleneck rate (HPCC's maxRtt and maxBdp with GLOBAL_T 1). The paths are
// pathTo's (the first next hop at every node); for each destination, each
// node's path to it is summed once, from the next node's, instead of
// walking every pair's path (hosts² walks took 0.15 s at 1024 hosts).
func (s *Sim) computeBaseRTTs() {
	s.computeBaseRTTsIn(setupParts(len(s.nodes) * len(s.hosts)))
}

// computeBaseRTTsIn is computeBaseRTTs in parts on as many goroutines.
func (s *Sim) computeBaseRTTsIn(parts int) {
	type hop struct {
		delay, tx Time
		rate      int64
		peer      int32
	}
	hops := make([]hop, len(s.ports))
	for i := range s.ports {
		p := &s.ports[i]
		hops[i] = hop{p.delay, serTime(s.cfg.Host.MTU, p.rate), p.rate, p.peer}
	}
	r := &s.rt
	nNodes := len(s.nodes)
	// by destination, in parts on several cores for a large network, each
	// with its own walk state and maxima (the maxima are the same whatever
	// the parts)
	parts = max(1, min(parts, len(s.hosts)))
	maxRTT, maxBDP := make([]Time, parts), make([]int64, parts)
	inParts(len(s.hosts), parts, func(k, from, to int) {
		// path[u]: node u's path to the destination, valid when seen[u] is
		// 1 + the destination's host index
		path := make([]pathInfo, len(s.nodes))
		ok := make([]bool, len(s.nodes))
		seen := make([]int32, len(s.nodes))
		var walk [][2]int32 // node, its next hop
		lastRTT, lastBW, lastBDP := Time(-1), int64(0), int64(0)
		// the part's maxima stay local until it ends (parts writing
		// next to each other would share a line)
		var mRTT Time
		var mBDP int64
		for di := from; di < to; di++ {
			b := s.hosts[di]
			mark := int32(di) + 1
			dist := r.dist[di*nNodes : (di+1)*nNodes]
			// first is pathTo's next hop from u: the first link of u that the
			// routing table lists towards b, or -1
			first := func(u int32) int32 {
				du := dist[u]
				if du <= 0 {
					return -1
				}
				for _, l := range r.adj[r.adjOff[u]:r.adjOff[u+1]] {
					if l.nextHop(du, dist[l.peer], di) {
						return l.pid
					}
				}
				return -1
			}
			path[b], ok[b], seen[b] = pathInfo{bw: 1<<63 - 1}, true, mark
			for _, a := range s.hosts {
				if a == b {
					continue
				}
				// walk to the first node whose path is known, then sum back
				walk = walk[:0]
				u, found := a, true
				for seen[u] != mark {
					pid := first(u)
					walk = append(walk, [2]int32{u, pid})
					if pid < 0 || len(walk) > nNodes {
						found = false // no route (or a loop, which pathTo gives up on too)
						break
					}
					u = hops[pid].peer
				}
				for i := len(walk) - 1; i >= 0; i-- {
					x, pid := walk[i][0], walk[i][1]
					seen[x] = mark
					if !found {
						ok[x] = false
						continue
					}
					h := &hops[pid]
					next := h.peer
					pn := &path[next]
					path[x] = pathInfo{delay: h.delay + pn.delay, tx: h.tx + pn.tx, bw: min(h.rate, pn.bw)}
					ok[x] = ok[next]
				}
				if !ok[a] {
					continue
				}
				pi := &path[a]
				rtt := 2*pi.delay + pi.tx
				if rtt != lastRTT || pi.bw != lastBW {
					lastRTT, lastBW, lastBDP = rtt, pi.bw, mulDiv(int64(rtt), pi.bw, 8*int64(Second))
				}
				mRTT = max(mRTT, rtt)
				mBDP = max(mBDP, lastBDP)
			}
		}
		maxRTT[k], maxBDP[k] = mRTT, mBDP
	})
	for k := range parts {
		s.maxRTT = max(s.maxRTT, maxRTT[k])
		s.maxBDP = max(s.maxBDP, maxBDP[k])
	}
}

// setFlowPath fills a flow's base RTT, BDP and ideal FCT from its path.
func (s *Sim) setFlowPath(f *flowState) {
	pi, _ := s.pathTo(f.src, f.dst)
	rtt := 2*pi.delay + pi.tx
	f.bottleneck = pi.bw
	if s.cfg.Host.BDPPerPath {
		f.baseRTT = rtt
		f.maxBDP = mulDiv(int64(rtt), pi.bw, 8*int64(Second))
	} else {
		f.baseRTT = s.maxRTT
		f.maxBDP = s.maxBDP
	}
	// ideal FCT (HPCC's standalone_fct): base RTT of the path plus the
	// payload and one ideal header per packet (INT excluded) at the
	// bottleneck rate
	pkts := (f.size + s.cfg.Host.MTU - 1) / s.cfg.Host.MTU
	wire := f.size + pkts*s.cfg.Host.IdealHeader
	f.idealFCT = rtt + Time(mulDiv(wire, int64(Second)*8, pi.bw))
}

// indexOf is the byte a credit records at switch u for the data going the
// other way to host dst: 1 + the index of port pid among u's next hops
// towards dst, or 0 when pid is not one of them (the data then takes ECMP).
func (r *routing) indexOf(s *Sim, u, dst, pid int32) uint64 {
	k := int(u)*r.nHosts + int(s.nodes[dst].hostIx)
	lo, hi := r.off[k], r.off[k+1]
	for i := lo; i < hi && i-lo < 255; i++ {
		if r.ports[i] == pid {
			return uint64(i-lo) + 1
		}
	}
	return 0
}

// pinned returns the egress port at switch u of a packet that follows a
// recorded route (the reverse of a credit's path), taking its byte off the
// route; ECMP where the route has no usable byte (links changed since).
func (r *routing) pinned(s *Sim, u int32, pk *packet) int32 {
	b := int32(pk.route & 0xff)
	pk.route >>= 8
	k := int(u)*r.nHosts + int(s.nodes[pk.dst].hostIx)
	lo, hi := r.off[k], r.off[k+1]
	if b > 0 && b <= hi-lo {
		return r.ports[lo+b-1]
	}
	return r.next(s, u, pk.dst, pk.hash)
}
