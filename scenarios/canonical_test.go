package scenarios

import (
	"bytes"
	"sort"
	"strings"
	"testing"
)

func canonical(t *testing.T, doc []byte) []byte {
	t.Helper()
	c, err := mustParse(t, doc).Canonical()
	if err != nil {
		t.Fatalf("Canonical: %v", err)
	}
	return c
}

// canonDocs are valid documents covering every kind.
func canonDocs(t *testing.T) map[string][]byte {
	docs := map[string][]byte{
		"base":   []byte(base),
		"custom": mustSet(t, base, "topology="+customTopo, `workload=[{"kind":"flows","flows":[{"src":"a","dst":"b","size":1}]}]`, "events=[]", "telemetry.queues=none"),
		"fattree": mustSet(t, base, `topology={"kind":"fattree","pods":2,"tor":4,"agg":4,"core":2,"aggCore":"full","hostsPerTor":4,"hostLink":{"rate":"100Gbps"}}`,
			"workload[0].flows[0].dst=h5", "workload[1].receiver=h7", "workload[3].dst=h9", "workload[4].long.dst=h3", "workload[4].short.dst=h3",
			"events[1].link=tor0->agg1", "events[2].link=agg0->core1", "telemetry.queues=[\"tor1->h4\",\"agg0->core0\"]"),
		"leafspine": mustSet(t, base, `topology={"kind":"leafspine","leaves":2,"spines":2,"hostsPerLeaf":2,"uplinksPerPair":2}`,
			"workload[0].flows[0].dst=h3", "workload[1].receiver=h3", "workload[3].dst=h3", "workload[4].long.dst=h3", "workload[4].short.dst=h3",
			"events[1].link=leaf0->spine1#1", "events[2].link=spine0->leaf1#0", "telemetry.queues=all"),
		"inline cdf, counts, ecn, cc": mustSet(t, base, "workload[2].cdf=[[0,0],[1000,50.5],[2e6,100]]", `workload[2].hosts=["h1","r0"]`,
			"workload[1].senders=2", `workload[1].repeat={"every":"1ms","count":3}`, `workload[5].hosts=["r0","h1","h0"]`,
			`switch.ecn={"kmin":"100KB","kmax":"400KB","pmax":0.1,"scale":"none"}`, `workload[0].flows[0].cc={"algorithm":"none","preset":"nowindow"}`,
			`workload[3].cc={"algorithm":"none","params":{"windowBDPs":0.5}}`, "host.bdp=path", "telemetry.flows=none"),
		"ecn off":                         mustSet(t, base, `switch.ecn={"enabled":false,"kmin":"1KB"}`),
		"normal jitter, flows per sender": mustSet(t, base, "workload[1].jitterDist=normal", "workload[1].flowsPerSender=3"),
		"tagged flow":                     mustSet(t, base, "workload[0].flows[0].tag=incast"),
	}
	for _, e := range Library() {
		docs["library "+e.ID] = e.Source
	}
	return docs
}

func TestCanonicalIdempotent(t *testing.T) {
	for name, doc := range canonDocs(t) {
		c1 := canonical(t, doc)
		c2 := canonical(t, c1)
		if !bytes.Equal(c1, c2) {
			t.Errorf("%s: canonical form changes when re-parsed:\n%s\n---\n%s", name, c1, c2)
		}
		checkSortedKeys(t, name, c1)
	}
}

// checkSortedKeys walks the document and checks every object's key order.
func checkSortedKeys(t *testing.T, name string, doc []byte) {
	t.Helper()
	var errs errorList
	tree, err := decodeJSON(doc, &errs)
	if err != nil || errs.count() > 0 {
		t.Fatalf("%s: %v %v", name, err, errs.list)
	}
	var walk func(v any, path string)
	walk = func(v any, path string) {
		switch x := v.(type) {
		case *object:
			if !sort.StringsAreSorted(x.keys) {
				t.Errorf("%s: keys at %q not sorted: %v", name, path, x.keys)
			}
			for _, k := range x.keys {
				walk(x.vals[k], join(path, k))
			}
		case []any:
			for i, e := range x {
				walk(e, index(path, i))
			}
		}
	}
	walk(tree, "")
}

func TestCanonicalEqualScenarios(t *testing.T) {
	groups := [][][]byte{
		{ // units written differently, key order, number vs string, single space
			mustSet(t, base, "workload[0].flows[0].size=1000KB"),
			mustSet(t, base, "workload[0].flows[0].size=1MB"),
			mustSet(t, base, "workload[0].flows[0].size=1000000"),
			mustSet(t, base, "workload[0].flows[0].size=1 MB"),
			mustSet(t, base, "workload[0].flows[0].size=0.001GB"),
		},
		{ // omitted defaults vs explicit defaults
			[]byte(`{"topology": {"kind": "dumbbell", "senders": 2}, "cc": {"algorithm": "none"},
			  "workload": [{"kind": "incast", "senders": ["h0", "h1"], "receiver": "r0", "size": "64KiB"}]}`),
			[]byte(`{"workload": [{"receiver": "r0", "kind": "incast", "size": 65536, "senders": ["h0", "h1"],
			    "start": "0s", "jitter": "0us", "repeat": {"count": 1, "every": "5ms"}}],
			  "cc": {"params": {}, "preset": "", "algorithm": "none"},
			  "seed": 1, "name": "", "description": "", "events": [],
			  "topology": {"senders": 2, "receivers": 1, "kind": "dumbbell", "hostLink": {"rate": "100 Gbps", "delay": 1e-6}},
			  "switch": {"buffer": "32MiB", "pfc": {"enabled": true}, "int": true, "flowCountTimeout": "0.1ms", "ackClass": "data"},
			  "host": {"mtu": "1000B", "header": "36B", "idealHeader": "48B", "ack": "48B", "nack": "48B", "ackHeader": "34B",
			    "ackEvery": 1, "cnpInterval": "0us", "bdp": "global", "rto": "auto", "nackInterval": "500us"},
			  "telemetry": {"interval": "10us", "queues": "all", "flows": "all"}}`),
		},
		{ // the incast's defaults written out or left out
			mustSet(t, base, "workload[1].jitterDist=uniform", "workload[1].flowsPerSender=1"),
			[]byte(base),
		},
		{ // selection lists in any order; events at different times in any order
			mustSet(t, base, `telemetry.flows=[3,1,2]`, `telemetry.queues=["s1->s0","s0->s1"]`),
			mustSet(t, base, `telemetry.flows=[1,2,3]`, `telemetry.queues=["s0->s1","s1->s0"]`,
				`events=[{"at":"3ms","link":"s0->s1","loss":0.01},{"at":"1ms","params":{"windowBDPs":3}},{"at":"2ms","link":"s0->s1","up":false}]`),
		},
		{ // an empty selection list is "none"
			mustSet(t, base, `telemetry.flows=[]`),
			mustSet(t, base, `telemetry.flows=none`),
		},
	}
	for g, docs := range groups {
		want := canonical(t, docs[0])
		for i, doc := range docs[1:] {
			if got := canonical(t, doc); !bytes.Equal(got, want) {
				t.Errorf("group %d doc %d differs:\n%s\n---\n%s", g, i+1, got, want)
			}
		}
	}
	// different scenarios stay different
	if bytes.Equal(canonical(t, []byte(base)), canonical(t, mustSet(t, base, "name=other"))) {
		t.Error("the name is not part of the canonical form")
	}
}

func TestCanonicalContent(t *testing.T) {
	c := string(canonical(t, mustSet(t, base, "topology.hostLink.delay=20.96ns", "workload[2].until=2500us")))
	for _, want := range []string{`"delay": "20.96ns"`, `"until": "2.5ms"`, `"buffer": "16MiB"`, `"mtu": "1KB"`,
		`"link": "s0->s1"`, `"windowBDPs": 2`, `"rate": "10Gbps"`} {
		if !strings.Contains(c, want) {
			t.Errorf("canonical form lacks %s:\n%s", want, c)
		}
	}
	// fields of other kinds, the default-following ecn and the incast's
	// defaults (written only when set, so older scenarios keep their ids)
	// do not appear
	for _, absent := range []string{`"ecn"`, `"pods"`, `"repeat"`, `"hosts": [`, `"jitterDist"`, `"flowsPerSender"`} {
		if strings.Contains(c, absent) {
			t.Errorf("canonical form has %s:\n%s", absent, c)
		}
	}
	in := string(canonical(t, mustSet(t, base, "workload[1].jitterDist=normal", "workload[1].flowsPerSender=4")))
	for _, want := range []string{`"jitterDist": "normal"`, `"flowsPerSender": 4`} {
		if !strings.Contains(in, want) {
			t.Errorf("canonical form lacks %s:\n%s", want, in)
		}
	}
	off := string(canonical(t, mustSet(t, base, `switch.ecn={"enabled":false,"kmin":"1KB"}`)))
	if !strings.Contains(off, `"ecn": {
      "enabled": false
    }`) {
		t.Errorf("disabled ecn:\n%s", off)
	}
}
