package scenarios

import (
	"fmt"
	"strconv"
	"strings"

	"cclab/sim"
)

// Size limits of a topology.
const (
	MaxHosts    = 10000
	MaxSwitches = 10000
	MaxLinks    = 100000
)

// network is a generated topology in the engine's terms.
//
// Node order: every host first, then every switch, so host i is node i.
// Generated kinds list hosts h0.. (dumbbell: h0.. then r0..) and switches
// tier by tier from the hosts up (dumbbell: s0, s1; fattree: tor0.., agg0..,
// core0..; leafspine: leaf0.., spine0..); custom keeps the document order
// within hosts and within switches. Link order: host links in host order, then
// switch–switch links from the lower tier up (each lower switch in order, its
// upper neighbours in order, parallel links together); custom keeps the
// document order. A link's A end is the host or the lower-tier switch.
type network struct {
	nodes     []sim.NodeSpec
	links     []sim.LinkSpec
	hostCount int
	index     map[string]int // node name -> node index
	hostRate  []int64        // rate of each host's first link (in link order)
	comp      []int          // connected component of each switch
	hostComps [][]int        // components of the switches each host attaches to
	ports     []string       // port names by port id (sim.PortNames)
	portIndex map[string]int
}

// newNetwork generates the nodes and links of a validated topology.
func newNetwork(t *Topology) (*network, error) {
	b := &netBuilder{index: map[string]int{}}
	switch t.Kind {
	case KindDumbbell:
		b.dumbbell(t.Dumbbell)
	case KindFatTree:
		b.fatTree(t.FatTree)
	case KindLeafSpine:
		b.leafSpine(t.LeafSpine)
	case KindCustom:
		b.custom(t.Custom)
	default:
		return nil, fmt.Errorf("unknown topology kind %q", t.Kind)
	}
	if err := sim.CheckTopology(b.nodes, b.links); err != nil {
		return nil, err
	}
	n := &network{nodes: b.nodes, links: b.links, index: b.index}
	for _, node := range n.nodes {
		if node.Kind == sim.Host {
			n.hostCount++
		}
	}
	n.hostRate = make([]int64, n.hostCount)
	for _, l := range n.links {
		for _, end := range []int{l.A, l.B} {
			if end < n.hostCount && n.hostRate[end] == 0 {
				n.hostRate[end] = l.Rate
			}
		}
	}
	n.comp = components(n.nodes, n.links)
	n.hostComps = make([][]int, n.hostCount)
	for _, l := range n.links {
		for _, end := range [2][2]int{{l.A, l.B}, {l.B, l.A}} {
			if h, sw := end[0], end[1]; n.nodes[h].Kind == sim.Host {
				n.hostComps[h] = append(n.hostComps[h], n.comp[sw])
			}
		}
	}
	n.ports = sim.PortNames(n.nodes, n.links)
	n.portIndex = make(map[string]int, len(n.ports))
	for i, p := range n.ports {
		n.portIndex[p] = i
	}
	return n, nil
}

// connected reports whether hosts a and b are joined by a path through
// switches (hosts never relay, as in the engine).
func (n *network) connected(a, b int) bool {
	for _, ca := range n.hostComps[a] {
		for _, cb := range n.hostComps[b] {
			if ca == cb {
				return true
			}
		}
	}
	return false
}

// hostNames lists the host names in node order.
func (n *network) hostNames() []string {
	names := make([]string, n.hostCount)
	for i := range names {
		names[i] = n.nodes[i].Name
	}
	return names
}

// describeHosts summarises the host names for error messages: runs of a
// common prefix with consecutive numbers are shown as "h0..h15".
func (n *network) describeHosts() string {
	const maxItems = 8
	var items []string
	names := n.hostNames()
	for i := 0; i < len(names); {
		prefix, num, ok := splitNumber(names[i])
		j := i + 1
		if ok {
			for j < len(names) {
				p2, n2, ok2 := splitNumber(names[j])
				if !ok2 || p2 != prefix || n2 != num+(j-i) {
					break
				}
				j++
			}
		}
		if j-i > 1 {
			items = append(items, names[i]+".."+names[j-1])
		} else {
			items = append(items, names[i])
		}
		i = j
	}
	if len(items) > maxItems {
		items = append(items[:maxItems], "…")
	}
	return strings.Join(items, ", ")
}

// splitNumber splits "tor12" into "tor", 12. Names without a trailing number,
// or with a leading zero in it, do not split.
func splitNumber(s string) (string, int, bool) {
	i := len(s)
	for i > 0 && isDigit(s[i-1]) {
		i--
	}
	digits := s[i:]
	if digits == "" || len(digits) > 9 || (len(digits) > 1 && digits[0] == '0') {
		return s, 0, false
	}
	v, err := strconv.Atoi(digits)
	if err != nil {
		return s, 0, false
	}
	return s[:i], v, true
}

// components labels the connected components of the switches (union-find
// over switch-to-switch links; a host's own label is unused).
func components(nodes []sim.NodeSpec, links []sim.LinkSpec) []int {
	n := len(nodes)
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	find := func(x int) int {
		for parent[x] != x {
			parent[x] = parent[parent[x]]
			x = parent[x]
		}
		return x
	}
	for _, l := range links {
		if nodes[l.A].Kind != sim.Switch || nodes[l.B].Kind != sim.Switch {
			continue
		}
		a, b := find(l.A), find(l.B)
		if a != b {
			parent[a] = b
		}
	}
	comp := make([]int, n)
	for i := range comp {
		comp[i] = find(i)
	}
	return comp
}

// netBuilder accumulates nodes and links.
type netBuilder struct {
	nodes []sim.NodeSpec
	links []sim.LinkSpec
	index map[string]int
}

func (b *netBuilder) node(name string, kind sim.NodeKind) int {
	i := len(b.nodes)
	b.nodes = append(b.nodes, sim.NodeSpec{Name: name, Kind: kind})
	b.index[name] = i
	return i
}

// nodes adds count nodes named prefix0.. and returns the first index.
func (b *netBuilder) series(prefix string, count int, kind sim.NodeKind) int {
	first := len(b.nodes)
	for i := 0; i < count; i++ {
		b.node(prefix+strconv.Itoa(i), kind)
	}
	return first
}

func (b *netBuilder) link(a, c int, l Link) {
	b.links = append(b.links, sim.LinkSpec{A: a, B: c, Rate: l.Rate, Delay: l.Delay})
}

func (b *netBuilder) dumbbell(d *Dumbbell) {
	h := b.series("h", d.Senders, sim.Host)
	r := b.series("r", d.Receivers, sim.Host)
	s0 := b.node("s0", sim.Switch)
	if d.Bottleneck == nil {
		for i := 0; i < d.Senders+d.Receivers; i++ {
			b.link(h+i, s0, d.HostLink)
		}
		return
	}
	s1 := b.node("s1", sim.Switch)
	for i := 0; i < d.Senders; i++ {
		b.link(h+i, s0, d.HostLink)
	}
	for i := 0; i < d.Receivers; i++ {
		b.link(r+i, s1, d.HostLink)
	}
	b.link(s0, s1, *d.Bottleneck)
}

// fatTree: pod p holds ToRs p×torsPerPod.. and aggs p×aggsPerPod..; every ToR
// links to every agg of its pod. Grouped: the cores split into aggsPerPod
// consecutive groups and agg j of every pod (j counted within the pod) links
// to every core of group j. Full: every agg links to every core.
func (b *netBuilder) fatTree(f *FatTree) {
	h := b.series("h", f.Tor*f.HostsPerTor, sim.Host)
	tor := b.series("tor", f.Tor, sim.Switch)
	agg := b.series("agg", f.Agg, sim.Switch)
	core := b.series("core", f.Core, sim.Switch)
	torsPerPod, aggsPerPod := f.Tor/f.Pods, f.Agg/f.Pods
	for i := 0; i < f.Tor*f.HostsPerTor; i++ {
		b.link(h+i, tor+i/f.HostsPerTor, f.HostLink)
	}
	for t := 0; t < f.Tor; t++ {
		pod := t / torsPerPod
		for j := 0; j < aggsPerPod; j++ {
			b.link(tor+t, agg+pod*aggsPerPod+j, f.TorAggLink)
		}
	}
	for a := 0; a < f.Agg; a++ {
		if f.AggCore == AggCoreFull {
			for c := 0; c < f.Core; c++ {
				b.link(agg+a, core+c, f.AggCoreLink)
			}
			continue
		}
		group := f.Core / aggsPerPod
		j := a % aggsPerPod
		for c := j * group; c < (j+1)*group; c++ {
			b.link(agg+a, core+c, f.AggCoreLink)
		}
	}
}

func (b *netBuilder) leafSpine(l *LeafSpine) {
	h := b.series("h", l.Leaves*l.HostsPerLeaf, sim.Host)
	leaf := b.series("leaf", l.Leaves, sim.Switch)
	spine := b.series("spine", l.Spines, sim.Switch)
	for i := 0; i < l.Leaves*l.HostsPerLeaf; i++ {
		b.link(h+i, leaf+i/l.HostsPerLeaf, l.HostLink)
	}
	for i := 0; i < l.Leaves; i++ {
		for j := 0; j < l.Spines; j++ {
			for k := 0; k < l.UplinksPerPair; k++ {
				b.link(leaf+i, spine+j, l.LeafSpineLink)
			}
		}
	}
}

func (b *netBuilder) custom(c *Custom) {
	for _, n := range c.Nodes {
		if n.Type == NodeHost {
			b.node(n.ID, sim.Host)
		}
	}
	for _, n := range c.Nodes {
		if n.Type != NodeHost {
			b.node(n.ID, sim.Switch)
		}
	}
	for _, l := range c.Links {
		b.link(b.index[l.A], b.index[l.B], Link{Rate: l.Rate, Delay: l.Delay})
	}
}

// fatTreeLinks counts a fat-tree's links (for the size limit, before any is
// generated). The counts are already bounded, so nothing overflows.
func fatTreeLinks(f *FatTree) int64 {
	aggsPerPod := int64(f.Agg / f.Pods)
	n := int64(f.Tor)*int64(f.HostsPerTor) + int64(f.Tor)*aggsPerPod
	if f.AggCore == AggCoreFull {
		return n + int64(f.Agg)*int64(f.Core)
	}
	return n + int64(f.Agg)*(int64(f.Core)/aggsPerPod)
}
