// Package web holds the lab's pages as templ components. It knows nothing
// of the store or the engine: the server fills the view models below.
package web

import (
	"sort"
	"strings"
)

// Topo is a topology laid out for drawing: hosts on the bottom row, each
// switch tier on a row above (by its hop distance from the nearest host).
type Topo struct {
	W, H  float64
	Nodes []TopoNode
	Links []TopoLink
	Large bool // too many nodes to label
}

// TopoNode is one node at its place.
type TopoNode struct {
	Name string
	Host bool
	X, Y float64
}

// TopoLink is one link; its two halves stand for the two egress ports
// (PortAB is node A's port toward B, drawn on A's half).
type TopoLink struct {
	A, B           string
	X1, Y1, X2, Y2 float64
	MX, MY         float64 // the midpoint
	PortAB, PortBA string
}

// PlaceTopo places the nodes of a topology given its host names and its port
// names ("a->b", parallel links "a->b#1").
func PlaceTopo(hosts, ports []string) Topo {
	isHost := map[string]bool{}
	for _, h := range hosts {
		isHost[h] = true
	}
	adj := map[string][]string{}
	// a link is known by its ends and its parallel index; it keeps the
	// names of its two ports as the topology gives them
	type link struct{ a, b, ab, ba string }
	byKey := map[string]int{}
	var links []link
	var order []string
	addNode := func(n string) {
		if _, ok := adj[n]; !ok {
			adj[n] = nil
			order = append(order, n)
		}
	}
	for _, h := range hosts {
		addNode(h)
	}
	for _, p := range ports {
		a, rest, ok := strings.Cut(p, "->")
		if !ok {
			continue
		}
		b, k, _ := strings.Cut(rest, "#")
		addNode(a)
		addNode(b)
		if i, ok := byKey[b+"|"+a+"|"+k]; ok {
			links[i].ba = p
			continue
		}
		byKey[a+"|"+b+"|"+k] = len(links)
		links = append(links, link{a: a, b: b, ab: p})
		adj[a] = append(adj[a], b)
		adj[b] = append(adj[b], a)
	}
	// tier: hop distance from the nearest host (hosts 0)
	tier := map[string]int{}
	queue := []string{}
	for _, n := range order {
		if isHost[n] {
			tier[n] = 0
			queue = append(queue, n)
		}
	}
	for len(queue) > 0 {
		n := queue[0]
		queue = queue[1:]
		for _, m := range adj[n] {
			if _, ok := tier[m]; !ok {
				tier[m] = tier[n] + 1
				queue = append(queue, m)
			}
		}
	}
	maxTier := 0
	for _, n := range order {
		if _, ok := tier[n]; !ok {
			tier[n] = 1
		}
		maxTier = max(maxTier, tier[n])
	}
	rows := make([][]string, maxTier+1)
	for _, n := range order {
		rows[tier[n]] = append(rows[tier[n]], n)
	}
	widest := 1
	for _, r := range rows {
		widest = max(widest, len(r))
	}
	t := Topo{W: max(320, float64(widest)*36), H: float64(maxTier+1)*90 + 20, Large: widest > 40}
	pos := map[string][2]float64{}
	place := func(r int) {
		n := len(rows[r])
		for i, name := range rows[r] {
			x := t.W * (float64(i) + 0.5) / float64(n)
			y := t.H - 30 - float64(r)*90
			pos[name] = [2]float64{x, y}
		}
	}
	place(0)
	for r := 1; r <= maxTier; r++ {
		// order a tier by the mean position of its neighbours below
		bary := map[string]float64{}
		for _, n := range rows[r] {
			sum, cnt := 0.0, 0
			for _, m := range adj[n] {
				if p, ok := pos[m]; ok && tier[m] < r {
					sum += p[0]
					cnt++
				}
			}
			if cnt > 0 {
				bary[n] = sum / float64(cnt)
			}
		}
		sort.SliceStable(rows[r], func(i, j int) bool { return bary[rows[r][i]] < bary[rows[r][j]] })
		place(r)
	}
	for _, n := range order {
		p := pos[n]
		t.Nodes = append(t.Nodes, TopoNode{Name: n, Host: isHost[n], X: p[0], Y: p[1]})
	}
	for _, l := range links {
		a, b := pos[l.a], pos[l.b]
		t.Links = append(t.Links, TopoLink{A: l.a, B: l.b, X1: a[0], Y1: a[1], X2: b[0], Y2: b[1],
			MX: (a[0] + b[0]) / 2, MY: (a[1] + b[1]) / 2, PortAB: l.ab, PortBA: l.ba})
	}
	return t
}
