package sim

import (
	"fmt"
	"strconv"
)

// Port ids: link i has port 2i (A's egress towards B) and port 2i+1 (B's
// egress towards A). reverse(p) = p ^ 1 is the other direction of the link.

// PortNames returns the name of every port in port-id order: "node->peer",
// with "#k" (k from 0, in link order) when several links join the same pair.
func PortNames(nodes []NodeSpec, links []LinkSpec) []string {
	type pair struct{ a, b int }
	count := map[pair]int{}
	for _, l := range links {
		count[pair{l.A, l.B}]++
		if l.A != l.B {
			count[pair{l.B, l.A}]++
		}
	}
	seen := map[pair]int{}
	names := make([]string, 2*len(links))
	for i, l := range links {
		for d := 0; d < 2; d++ {
			from, to := l.A, l.B
			if d == 1 {
				from, to = l.B, l.A
			}
			name := nodes[from].Name + "->" + nodes[to].Name
			p := pair{from, to}
			if count[p] > 1 {
				name += "#" + strconv.Itoa(seen[p])
			}
			seen[p]++
			names[2*i+d] = name
		}
	}
	return names
}

// CheckTopology validates node and link lists: unique non-empty names, links
// between existing distinct nodes with positive rates and non-negative delays,
// and every host attached to at least one link.
func CheckTopology(nodes []NodeSpec, links []LinkSpec) error {
	if len(nodes) == 0 {
		return fmt.Errorf("topology has no nodes")
	}
	names := map[string]int{}
	for i, n := range nodes {
		if n.Name == "" {
			return fmt.Errorf("node %d has no name", i)
		}
		if j, dup := names[n.Name]; dup {
			return fmt.Errorf("nodes %d and %d are both named %q", j, i, n.Name)
		}
		names[n.Name] = i
	}
	degree := make([]int, len(nodes))
	for i, l := range links {
		if l.A < 0 || l.A >= len(nodes) || l.B < 0 || l.B >= len(nodes) {
			return fmt.Errorf("link %d joins unknown node", i)
		}
		if l.A == l.B {
			return fmt.Errorf("link %d joins %q to itself", i, nodes[l.A].Name)
		}
		if l.Rate <= 0 {
			return fmt.Errorf("link %d (%s-%s) has rate %d, want > 0", i, nodes[l.A].Name, nodes[l.B].Name, l.Rate)
		}
		if l.Delay < 0 {
			return fmt.Errorf("link %d (%s-%s) has a negative delay", i, nodes[l.A].Name, nodes[l.B].Name)
		}
		if nodes[l.A].Kind == Host && nodes[l.B].Kind == Host {
			return fmt.Errorf("link %d joins two hosts (%s, %s); hosts attach to switches", i, nodes[l.A].Name, nodes[l.B].Name)
		}
		degree[l.A]++
		degree[l.B]++
	}
	for i, n := range nodes {
		if n.Kind == Host && degree[i] == 0 {
			return fmt.Errorf("host %q has no link", n.Name)
		}
	}
	return nil
}
