package web

import "testing"

func TestPlaceTopo(t *testing.T) {
	hosts := []string{"h0", "h1", "h2", "h3"}
	// a leaf-spine with two parallel uplinks between leaf0 and spine0
	ports := []string{
		"h0->leaf0", "leaf0->h0", "h1->leaf0", "leaf0->h1", "h2->leaf1", "leaf1->h2", "h3->leaf1", "leaf1->h3",
		"leaf0->spine0", "spine0->leaf0", "leaf0->spine0#1", "spine0->leaf0#1", "leaf1->spine0", "spine0->leaf1",
	}
	tp := PlaceTopo(hosts, ports)
	y := map[string]float64{}
	host := map[string]bool{}
	for _, n := range tp.Nodes {
		y[n.Name] = n.Y
		host[n.Name] = n.Host
	}
	if len(tp.Nodes) != 7 || len(tp.Links) != 7 {
		t.Fatalf("%d nodes, %d links", len(tp.Nodes), len(tp.Links))
	}
	// hosts on the bottom row, leaves above them, the spine on top
	if !(y["h0"] == y["h3"] && y["leaf0"] == y["leaf1"] && y["h0"] > y["leaf0"] && y["leaf0"] > y["spine0"]) {
		t.Fatalf("rows: %v", y)
	}
	if !host["h2"] || host["leaf1"] {
		t.Fatal("host flags wrong")
	}
	// every port name is kept, on the right half of its link
	seen := map[string]bool{}
	for _, l := range tp.Links {
		seen[l.PortAB], seen[l.PortBA] = true, true
		if l.PortAB == "" || l.PortBA == "" {
			t.Fatalf("link %s-%s lacks a port: %+v", l.A, l.B, l)
		}
	}
	for _, p := range ports {
		if !seen[p] {
			t.Errorf("port %s not drawn", p)
		}
	}
}
