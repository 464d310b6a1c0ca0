package scenarios

import (
	"bytes"
	"testing"

	"cclab/sim"
)

// FuzzParse: Parse never panics; when it accepts a document, the canonical
// form exists, parses again and is a fixed point.
func FuzzParse(f *testing.F) {
	for _, e := range Library() {
		f.Add(e.Source)
	}
	f.Add([]byte(base))
	f.Add([]byte(`{"topology": {"kind": "custom", "nodes": [{"id": "a", "type": "host"}], "links": []}}`))
	f.Add([]byte(`{"seed": -1, "duration": "1e3us", "cc": {"algorithm": "none", "params": {"windowBDPs": "x"}}}`))
	f.Add([]byte(`{"topology": {"kind": "fattree", "pods": 0}, "workload": [{"kind": "poisson", "cdf": [[0, 0], [1, 100]]}]}`))
	f.Add([]byte(`{"a": 1, "a": 2}`))
	f.Add([]byte(`[[[[`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse(data)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Parse returned %T: %v", err, err)
			}
			return
		}
		checkRoundTrip(t, s)
	})
}

// checkRoundTrip checks that a parsed scenario's canonical form parses and
// is a fixed point of Parse and Canonical.
func checkRoundTrip(t *testing.T, s *Scenario) {
	t.Helper()
	c1, err := s.Canonical()
	if err != nil {
		t.Fatalf("Canonical: %v", err)
	}
	s2, err := Parse(c1)
	if err != nil {
		t.Fatalf("Parse(Canonical()): %v\n%s", err, c1)
	}
	c2, err := s2.Canonical()
	if err != nil {
		t.Fatalf("Canonical again: %v", err)
	}
	if !bytes.Equal(c1, c2) {
		t.Fatalf("canonical form not idempotent:\n%s\n---\n%s", c1, c2)
	}
}

// FuzzSets explores valid scenarios: it applies two --set edits to a valid
// document and, when the result parses, checks the canonical round trip and
// that Build succeeds or fails cleanly.
func FuzzSets(f *testing.F) {
	f.Add(uint8(0), "workload[0].flows[0].size", "2.5KB", "seed", "3")
	f.Add(uint8(1), "topology.hostLink.rate", "40Gbps", "switch.ecn.kmin", "1KB")
	f.Add(uint8(2), "workload[2].cdf", "[[0,0],[1e3,50],[2e6,100]]", "telemetry.flows", "[1,0]")
	f.Add(uint8(3), "workload[1].repeat", `{"every":"1ms","count":3}`, "events[0].at", "0.001")
	f.Add(uint8(4), "workload[0].cc", `{"algorithm":"none","params":{"windowBDPs":0.5}}`, "host.bdp", "path")
	docs := [][]byte{[]byte(base)}
	for _, e := range Library() {
		docs = append(docs, e.Source)
	}
	f.Fuzz(func(t *testing.T, which uint8, p1, v1, p2, v2 string) {
		doc, err := ApplySets(docs[int(which)%len(docs)], []string{p1 + "=" + v1, p2 + "=" + v2})
		if err != nil {
			return
		}
		s, err := Parse(doc)
		if err != nil {
			return
		}
		checkRoundTrip(t, s)
		if small(s) {
			if _, _, err := Build(s); err != nil {
				if _, ok := err.(*Error); !ok {
					t.Fatalf("Build returned %T: %v", err, err)
				}
			}
		}
	})
}

// small tells whether a scenario generates few enough flows to Build inside
// a fuzz iteration.
func small(s *Scenario) bool {
	for _, w := range s.Workload {
		switch {
		case w.Poisson != nil && w.Poisson.Until-w.Poisson.From > 20*sim.Millisecond,
			w.Incast != nil && w.Incast.RepeatCount > 1000,
			w.LongShort != nil && w.LongShort.Short.Count > 1000,
			w.AllToAll != nil && w.AllToAll.Iterations*w.AllToAll.RanksPerHost > 16:
			return false
		}
	}
	return true
}
