package ns3

// Writers of a cclab run's results in the formats of HPCC's ns-3 simulator
// (scratch/third.cc): fct.txt (qp_finish), pfc.txt (get_pfc) and the
// queue-length histograms (monitor_buffer), so that analysis scripts written
// for it (analysis/fct_analysis.py) read cclab's runs as they are.

import (
	"bufio"
	"fmt"
	"io"
	"math/big"
	"sort"
	"strconv"

	"cclab/scenarios"
	"cclab/sim"
)

// Export-side conventions of the reference.
const (
	// FirstPort is the source port of a host pair's first flow; each later
	// flow of the pair takes the next (third.cc portNumder).
	FirstPort = 10000
	// DPort is the destination port written for a flow, and DPortIncast the
	// one for flows of an incast workload (fct_analysis.py's convention:
	// 100 background, 200 incast).
	DPort       = 100
	DPortIncast = 200
	// QlenStep and QlenBucket are monitor_buffer's sampling interval and
	// histogram bucket.
	QlenStep   = 100 * sim.Nanosecond
	QlenBucket = 1000
)

// IP is the reference's address of node id: 11.0.0.1 with the id in the
// second and third bytes (third.cc node_id_to_ip); id = (ip >> 8) & 0xffff.
func IP(id int) uint32 {
	return 0x0b000001 + uint32(id/256)*0x10000 + uint32(id%256)*0x100
}

// Numbering maps a run's nodes (indexes of sim.Config.Nodes) to ns-3 node
// ids and the ns-3 interface index of every port.
type Numbering struct {
	ID      []int  // per node
	IfIndex []int  // per port id (2·link + direction): 1 + the link's rank among its node's links
	Switch  []bool // per node
	Names   map[string]int
	cfg     *sim.Config
}

// NewNumbering numbers a run's nodes as `cclab export ns3` writes them: a
// custom topology's nodes by their position in its node list (so a
// scenario imported from ns-3 files keeps the files' ids: h7 is 7), any
// other topology's in the engine's order (hosts first, h0 … in host order,
// then the switches as the generator lists them). sc may be nil (engine
// order).
func NewNumbering(sc *scenarios.Scenario, cfg *sim.Config) (*Numbering, error) {
	n := &Numbering{ID: make([]int, len(cfg.Nodes)), Switch: make([]bool, len(cfg.Nodes)), Names: map[string]int{}, cfg: cfg}
	for i, node := range cfg.Nodes {
		n.Names[node.Name] = i
		n.ID[i] = i
		n.Switch[i] = node.Kind == sim.Switch
	}
	if sc != nil && sc.Topology.Kind == scenarios.KindCustom && sc.Topology.Custom != nil {
		nodes := sc.Topology.Custom.Nodes
		if len(nodes) != len(cfg.Nodes) {
			return nil, fmt.Errorf("topology.nodes: %d nodes, the run has %d", len(nodes), len(cfg.Nodes))
		}
		for pos, node := range nodes {
			i, ok := n.Names[node.ID]
			if !ok {
				return nil, fmt.Errorf("topology.nodes[%d]: %q is not a node of the run", pos, node.ID)
			}
			n.ID[i] = pos
		}
	}
	n.IfIndex = make([]int, 2*len(cfg.Links))
	count := make([]int, len(cfg.Nodes))
	for i, l := range cfg.Links {
		count[l.A]++
		n.IfIndex[2*i] = count[l.A]
		count[l.B]++
		n.IfIndex[2*i+1] = count[l.B]
	}
	return n, nil
}

// pathInfo is third.cc's CalculateRoute result for a host pair: the one-way
// delay and per-hop transmission time of one payload along the first
// shortest path found, and its narrowest link.
type pathInfo struct {
	delayNs, txNs uint64
	bw            uint64
}

// paths computes pathInfo from host src to every node by breadth-first
// search over the links (hosts do not forward), as third.cc does.
func (n *Numbering) paths(src int, payload int64) []pathInfo {
	cfg := n.cfg
	adj := make([][]int, len(cfg.Nodes)) // link indexes per node, in link order
	for i, l := range cfg.Links {
		adj[l.A] = append(adj[l.A], i)
		adj[l.B] = append(adj[l.B], i)
	}
	out := make([]pathInfo, len(cfg.Nodes))
	seen := make([]bool, len(cfg.Nodes))
	seen[src] = true
	out[src] = pathInfo{bw: ^uint64(0)}
	q := []int{src}
	for len(q) > 0 {
		now := q[0]
		q = q[1:]
		for _, li := range adj[now] {
			l := cfg.Links[li]
			next := l.B
			if next == now {
				next = l.A
			}
			if seen[next] {
				continue
			}
			seen[next] = true
			bw := uint64(l.Rate)
			out[next] = pathInfo{
				delayNs: out[now].delayNs + uint64(l.Delay/sim.Nanosecond),
				txNs:    out[now].txNs + uint64(payload)*1_000_000_000*8/bw,
				bw:      min(out[now].bw, bw),
			}
			if cfg.Nodes[next].Kind == sim.Switch {
				q = append(q, next)
			}
		}
	}
	return out
}

// StandaloneFCT is the reference's ideal FCT in ns (third.cc qp_finish):
// base RTT (2 × one-way delay + one payload's transmission per hop) plus
// the size with header bytes per packet at the narrowest link's rate.
func StandaloneFCT(p pathInfo, size, payload, header int64) uint64 {
	total := uint64(size) + uint64((size-1)/payload+1)*uint64(header)
	q := new(big.Int).Mul(new(big.Int).SetUint64(total), big.NewInt(8_000_000_000))
	q.Quo(q, new(big.Int).SetUint64(p.bw))
	return p.delayNs*2 + p.txNs + q.Uint64()
}

func ns(t sim.Time) uint64 { return uint64(t / sim.Nanosecond) }

// StartSeconds writes a run's start time t as the flow file's start: in
// seconds, 2 s later (FlowOffset), with nine decimals (twelve when t is not
// a whole number of ns).
func StartSeconds(t sim.Time) string {
	t += FlowOffset
	if t%sim.Nanosecond == 0 {
		return fmt.Sprintf("%d.%09d", t/sim.Second, (t%sim.Second)/sim.Nanosecond)
	}
	return fmt.Sprintf("%d.%012d", t/sim.Second, t%sim.Second)
}

// StartNs is the start time the reference writes for a flow that starts at
// t: it reads the flow file's seconds as a double and converts that
// double's exact value to whole ns by truncation (ns-3's Seconds(double),
// in 128-bit fixed point), which is 1 ns early whenever the double is
// below the decimal (2.000044976 s becomes 2000044975 ns).
func StartNs(t sim.Time) uint64 {
	v, err := strconv.ParseFloat(StartSeconds(t), 64)
	if err != nil {
		return ns(t + FlowOffset)
	}
	r := new(big.Rat).SetFloat64(v)
	r.Mul(r, big.NewRat(1_000_000_000, 1))
	return new(big.Int).Quo(r.Num(), r.Denom()).Uint64()
}

// WriteFCT writes fct.txt: one line per finished flow, in the order they
// finished, `sip dip sport dport size_B start_ns fct_ns standalone_fct_ns`
// with the addresses as 8 hex digits and times in whole ns, starts 2 s
// later than in the run (FlowOffset) and rounded as the reference rounds
// them (StartNs), the FCT the run's own.
func (n *Numbering) WriteFCT(w io.Writer, flows []sim.FlowResult) error {
	cfg := n.cfg
	// source ports: in the order the flows started, as third.cc assigns them
	order := make([]int, len(flows))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return flows[order[a]].Start < flows[order[b]].Start })
	sport := make([]int, len(flows))
	next := map[[2]int]int{}
	for _, i := range order {
		f := flows[i]
		if !f.Started {
			continue
		}
		k := [2]int{n.Names[f.Src], n.Names[f.Dst]}
		sport[i] = FirstPort + next[k]
		next[k]++
	}
	var done []int
	for i, f := range flows {
		if f.Finished {
			done = append(done, i)
		}
	}
	sort.SliceStable(done, func(a, b int) bool { return flows[done[a]].Finish < flows[done[b]].Finish })
	payload, header := cfg.Host.MTU, cfg.Host.IdealHeader
	routes := map[int][]pathInfo{}
	bw := bufio.NewWriter(w)
	for _, i := range done {
		f := flows[i]
		src, okS := n.Names[f.Src]
		dst, okD := n.Names[f.Dst]
		if !okS || !okD {
			return fmt.Errorf("flow %d: %s -> %s: not nodes of the run", f.ID, f.Src, f.Dst)
		}
		r, ok := routes[src]
		if !ok {
			r = n.paths(src, payload)
			routes[src] = r
		}
		if r[dst].bw == 0 {
			return fmt.Errorf("flow %d: no path from %s to %s", f.ID, f.Src, f.Dst)
		}
		dport := DPort
		if f.Tag == scenarios.KindIncast {
			dport = DPortIncast
		}
		fmt.Fprintf(bw, "%08x %08x %d %d %d %d %d %d\n", IP(n.ID[src]), IP(n.ID[dst]), sport[i], dport,
			f.Size, StartNs(f.Start), ns(f.FCT), StandaloneFCT(r[dst], f.Size, payload, header))
	}
	return bw.Flush()
}

// WritePFC writes pfc.txt: one line per PFC frame a node received, `time_ns
// node node_type if_index type` with node_type 0 host / 1 switch and type 1
// PAUSE / 0 RESUME (qbb-net-device.cc's m_tracePfc), times 2 s later.
func (n *Numbering) WritePFC(w io.Writer, events []sim.PFCEvent) error {
	bw := bufio.NewWriter(w)
	for _, e := range events {
		if e.Port < 0 || int(e.Port) >= len(n.IfIndex) {
			return fmt.Errorf("PFC event at %d ps: port %d is not a port of the run", e.At, e.Port)
		}
		l := n.cfg.Links[e.Port/2]
		node := l.A
		if e.Port%2 == 1 {
			node = l.B
		}
		typ, kind := 0, 0
		if e.Pause {
			typ = 1
		}
		if n.Switch[node] {
			kind = 1
		}
		fmt.Fprintf(bw, "%d %d %d %d %d\n", ns(e.At+FlowOffset), n.ID[node], kind, n.IfIndex[e.Port], typ)
	}
	return bw.Flush()
}

// WriteQlen writes the queue-length histogram file as monitor_buffer's
// last dump: `time: <ns>`, then per switch (by node id) and port (by
// interface index) `node if_index c0 c1 …`, ck the samples with a queue of
// k KB (k·1000 … k·1000+999 bytes). samples is sim.Sim.QueueSamples();
// end is the run's end (the dump's time, 2 s later).
func (n *Numbering) WriteQlen(w io.Writer, end sim.Time, samples [][]int64) error {
	type row struct{ node, ifIndex, port int }
	var rows []row
	for pid, counts := range samples {
		if counts == nil {
			continue
		}
		l := n.cfg.Links[pid/2]
		node := l.A
		if pid%2 == 1 {
			node = l.B
		}
		rows = append(rows, row{n.ID[node], n.IfIndex[pid], pid})
	}
	sort.Slice(rows, func(a, b int) bool {
		if rows[a].node != rows[b].node {
			return rows[a].node < rows[b].node
		}
		return rows[a].ifIndex < rows[b].ifIndex
	})
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "time: %d\n", ns(end+FlowOffset))
	for _, r := range rows {
		fmt.Fprintf(bw, "%d %d", r.node, r.ifIndex)
		for _, c := range samples[r.port] {
			fmt.Fprintf(bw, " %d", c)
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}
