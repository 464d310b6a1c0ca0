package scenarios

import (
	"errors"
	"math"
	"os"
	"strings"
	"testing"

	"cclab/sim"
)

// base is a valid scenario that uses every section and every workload kind:
// workload[0] flows, [1] incast, [2] poisson, [3] staggered, [4] longshort,
// [5] alltoall.
const base = `{
  "name": "base",
  "description": "every section",
  "seed": 7,
  "duration": "5ms",
  "topology": {
    "kind": "dumbbell", "senders": 3, "receivers": 1,
    "hostLink": {"rate": "10Gbps", "delay": "1us"},
    "bottleneck": {"rate": "10Gbps", "delay": "2us"}
  },
  "switch": {"buffer": "16MiB", "pfc": {"enabled": false}, "int": true},
  "host": {"mtu": "1000B", "ackEvery": 2},
  "cc": {"algorithm": "none", "params": {"windowBDPs": 2}},
  "workload": [
    {"kind": "flows", "flows": [{"src": "h0", "dst": "r0", "size": "100KB", "start": "10us"}]},
    {"kind": "incast", "senders": ["h0", "h1"], "receiver": "r0", "size": "10KB", "jitter": "5us"},
    {"kind": "poisson", "cdf": "websearch", "load": 0.1, "until": "1ms"},
    {"kind": "staggered", "src": ["h0", "h1"], "dst": "r0", "sizes": ["1MB", "2MB"], "starts": ["0s", "1ms"]},
    {"kind": "longshort", "long": {"src": "h0", "dst": "r0", "size": "10MB"},
     "short": {"src": "h1", "dst": "r0", "size": "10KB", "count": 5, "every": "100us"}},
    {"kind": "alltoall", "hosts": 4, "size": "10KB", "iterations": 2}
  ],
  "events": [
    {"at": "1ms", "params": {"windowBDPs": 3}},
    {"at": "2ms", "link": "s0->s1", "up": false},
    {"at": "3ms", "link": "s0->s1", "loss": 0.01}
  ],
  "telemetry": {"interval": "20us", "queues": ["s0->s1"], "flows": [0, 1]}
}`

// custom is a valid custom topology with two separate islands.
const customTopo = `{"kind": "custom",
  "nodes": [{"id": "a", "type": "host"}, {"id": "b", "type": "host"}, {"id": "sw", "type": "switch"},
            {"id": "c", "type": "host"}, {"id": "sw2", "type": "switch"}, {"id": "d", "type": "host"}],
  "links": [{"a": "a", "b": "sw"}, {"a": "b", "b": "sw", "rate": "25Gbps"}, {"a": "c", "b": "sw2"}, {"a": "d", "b": "sw2"}]}`

func mustSet(t *testing.T, doc string, sets ...string) []byte {
	t.Helper()
	out, err := ApplySets([]byte(doc), sets)
	if err != nil {
		t.Fatalf("ApplySets(%v): %v", sets, err)
	}
	return out
}

func mustParse(t *testing.T, doc []byte) *Scenario {
	t.Helper()
	s, err := Parse(doc)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, doc)
	}
	return s
}

func TestBaseParses(t *testing.T) {
	s := mustParse(t, []byte(base))
	if s.Seed != 7 || s.Duration != 5*sim.Millisecond || len(s.Workload) != 6 || len(s.Events) != 3 {
		t.Fatalf("unexpected scenario: %+v", s)
	}
	if s.Switch.Buffer != 16<<20 || s.Switch.PFC || !s.Switch.INT || s.Switch.ECN != nil {
		t.Errorf("switch = %+v", s.Switch)
	}
	if s.Host.AckEvery != 2 || s.Host.MTU != 1000 || s.Host.Header != 36 || s.Host.RTO != sim.Millisecond {
		t.Errorf("host = %+v", s.Host)
	}
	if s.CC.Params["windowBDPs"] != 2 {
		t.Errorf("cc = %+v", s.CC)
	}
	if e := s.Events[2]; e.Kind != EventLoss || e.Loss != 0.01 || e.Link != "s0->s1" {
		t.Errorf("event 2 = %+v", e)
	}
	if s.Telemetry.Interval != 20*sim.Microsecond || s.Telemetry.AllQueues || len(s.Telemetry.Queues) != 1 {
		t.Errorf("telemetry = %+v", s.Telemetry)
	}
	mustParse(t, mustSet(t, base, "topology="+customTopo, `workload=[{"kind":"flows","flows":[{"src":"a","dst":"b","size":1}]}]`,
		"events=[]", "telemetry.queues=all"))
}

func TestDefaults(t *testing.T) {
	s := mustParse(t, []byte(`{"topology": {"kind": "dumbbell", "senders": 1}, "cc": {"algorithm": "none"},
		"workload": [{"kind": "flows", "flows": [{"src": "h0", "dst": "r0", "size": "1MB"}]}]}`))
	want := Scenario{
		Seed:     1,
		Topology: Topology{Kind: KindDumbbell, Dumbbell: &Dumbbell{Senders: 1, Receivers: 1, HostLink: Link{100e9, sim.Microsecond}}},
		Switch:   Switch{Buffer: 32 << 20, PFC: true, INT: true, FlowCountTimeout: 100 * sim.Microsecond, AckClass: AckClassData, Routing: RoutingECMP},
		Host: Host{MTU: 1000, Header: 36, IdealHeader: 48, Ack: 48, Nack: 48, AckHeader: 34, AckEvery: 1, CNPInterval: 0, BDP: BDPGlobal,
			RTO: sim.Millisecond, RTOAuto: true, NackInterval: 500 * sim.Microsecond},
		Telemetry: Telemetry{Interval: 10 * sim.Microsecond, AllQueues: true, AllFlows: true},
	}
	if s.Seed != want.Seed || s.Duration != 0 || *s.Topology.Dumbbell != *want.Topology.Dumbbell ||
		s.Switch != want.Switch || s.Host != want.Host || s.Telemetry.Interval != want.Telemetry.Interval ||
		!s.Telemetry.AllQueues || !s.Telemetry.AllFlows || s.CC.Preset != "" || len(s.CC.Params) != 0 {
		t.Errorf("defaults:\n got %+v\nwant %+v", s, want)
	}
	if f := s.Workload[0].Flows[0]; f.Start != 0 || f.CC != nil {
		t.Errorf("flow defaults: %+v", f)
	}
}

func TestMalformed(t *testing.T) {
	tests := []struct {
		name  string
		doc   string   // raw document; base when empty
		sets  []string // applied to doc
		field string   // the first error's field must start with this
		msg   string   // and, when set, its message must contain this
	}{
		// document level
		{name: "invalid json", doc: `{"seed": 1,`, msg: "invalid JSON"},
		{name: "trailing data", doc: `{} {}`, msg: "invalid JSON"},
		{name: "not an object", doc: `[1, 2]`, msg: "want an object"},
		{name: "duplicate key", doc: strings.Replace(base, `"seed": 7,`, `"seed": 7, "seed": 8,`, 1), field: "seed", msg: "duplicate key"},
		{name: "unknown top-level", sets: []string{"colour=1"}, field: "colour", msg: "unknown field"},
		{name: "name type", sets: []string{"name=5"}, field: "name", msg: "want a string"},
		{name: "seed type", sets: []string{`seed="x"`}, field: "seed", msg: `want a whole number, got "x"`},
		{name: "seed negative", sets: []string{"seed=-1"}, field: "seed"},
		{name: "seed fraction", sets: []string{"seed=1.5"}, field: "seed"},
		{name: "duration zero", sets: []string{"duration=0s"}, field: "duration", msg: "must be > 0"},
		{name: "duration negative", sets: []string{"duration=-1ms"}, field: "duration", msg: "must not be negative"},
		{name: "duration unit", sets: []string{"duration=5mins"}, field: "duration", msg: "unknown unit"},
		{name: "missing cc", sets: []string{"cc=null"}, field: "cc", msg: "required"},
		{name: "missing topology", sets: []string{"topology=null"}, field: "topology", msg: "required"},
		// topology
		{name: "contract rate example", sets: []string{"topology.hostLink.rate=10Gps"}, field: "topology.hostLink.rate",
			msg: `unknown unit "Gps" (want bps, Kbps, Mbps, Gbps, Tbps)`},
		{name: "link rate zero", sets: []string{"topology.bottleneck.rate=0Gbps"}, field: "topology.bottleneck.rate", msg: "must be > 0"},
		{name: "link delay type", sets: []string{"topology.hostLink.delay=true"}, field: "topology.hostLink.delay", msg: "want a time"},
		{name: "link unknown member", sets: []string{"topology.hostLink.jitter=1us"}, field: "topology.hostLink.jitter", msg: "unknown field"},
		{name: "topology unknown field", sets: []string{"topology.foo=1"}, field: "topology.foo", msg: "unknown field"},
		{name: "topology field of another kind", sets: []string{"topology.pods=2"}, field: "topology.pods", msg: "unknown field"},
		{name: "topology kind", sets: []string{"topology.kind=ring"}, field: "topology.kind", msg: `unknown kind "ring"`},
		{name: "senders zero", sets: []string{"topology.senders=0"}, field: "topology.senders", msg: "must be > 0"},
		{name: "too many hosts", sets: []string{"topology.senders=10000"}, field: "topology.senders", msg: "more than 10000"},
		{name: "fattree tor per pod", sets: []string{`topology={"kind":"fattree","pods":2,"tor":3,"agg":4,"core":2,"hostsPerTor":2}`}, field: "topology.tor", msg: "multiple of pods"},
		{name: "fattree grouped cores", sets: []string{`topology={"kind":"fattree","pods":2,"tor":4,"agg":4,"core":3,"hostsPerTor":2}`}, field: "topology.core", msg: "aggs per pod"},
		{name: "fattree missing", sets: []string{`topology={"kind":"fattree","pods":2,"tor":4,"agg":4,"hostsPerTor":2}`}, field: "topology.core", msg: "required"},
		{name: "fattree aggCore", sets: []string{`topology={"kind":"fattree","pods":1,"tor":1,"agg":1,"core":1,"hostsPerTor":4,"aggCore":"mesh"}`}, field: "topology.aggCore"},
		{name: "fattree hosts", sets: []string{`topology={"kind":"fattree","pods":1,"tor":100,"agg":1,"core":1,"hostsPerTor":200}`}, field: "topology.hostsPerTor", msg: "more than 10000"},
		{name: "leafspine uplinks", sets: []string{`topology={"kind":"leafspine","leaves":2,"spines":2,"hostsPerLeaf":2,"uplinksPerPair":0}`}, field: "topology.uplinksPerPair"},
		{name: "custom unknown node", sets: []string{"topology=" + strings.Replace(customTopo, `{"a": "a", "b": "sw"}`, `{"a": "a", "b": "nowhere"}`, 1)},
			field: "topology.links[0].b", msg: `unknown node "nowhere"`},
		{name: "custom duplicate id", sets: []string{"topology=" + strings.Replace(customTopo, `{"id": "b", "type": "host"}`, `{"id": "a", "type": "host"}`, 1)},
			field: "topology.nodes[1].id", msg: "duplicate id"},
		{name: "custom host without link", sets: []string{"topology=" + strings.Replace(customTopo, `{"a": "c", "b": "sw2"}, `, ``, 1)},
			field: "topology.nodes[3]", msg: `host "c" has no link`},
		{name: "custom host-host link", sets: []string{"topology=" + strings.Replace(customTopo, `{"a": "a", "b": "sw"}`, `{"a": "a", "b": "b"}`, 1)},
			field: "topology.links[0]", msg: "two hosts"},
		{name: "custom bad id", sets: []string{"topology=" + strings.Replace(customTopo, `"sw2"`, `"s->2"`, -1)}, field: "topology.nodes[4].id", msg: "invalid id"},
		{name: "custom node type", sets: []string{"topology=" + strings.Replace(customTopo, `"switch"}`, `"router"}`, 1)}, field: "topology.nodes[2].type"},
		// switch
		{name: "buffer zero", sets: []string{"switch.buffer=0B"}, field: "switch.buffer", msg: "must be > 0"},
		{name: "ecn needs thresholds", sets: []string{`switch.ecn={"kmin":"100KB"}`}, field: "switch.ecn.kmax", msg: "no ECN defaults"},
		{name: "ecn kmin above kmax", sets: []string{`switch.ecn={"kmin":"200KB","kmax":"100KB","pmax":0.2}`}, field: "switch.ecn.kmax", msg: ">= kmin"},
		{name: "ecn pmax", sets: []string{`switch.ecn={"kmin":"100KB","kmax":"200KB","pmax":1.5}`}, field: "switch.ecn.pmax", msg: "must be in [0, 1]"},
		{name: "ecn scale", sets: []string{`switch.ecn={"kmin":"100KB","kmax":"200KB","pmax":0.5,"scale":"log"}`}, field: "switch.ecn.scale", msg: `unknown value "log"`},
		{name: "pfc not object", sets: []string{"switch.pfc=true"}, field: "switch.pfc", msg: "want an object"},
		{name: "int not bool", sets: []string{"switch.int=1"}, field: "switch.int", msg: "want true or false"},
		{name: "flow count timeout", sets: []string{"switch.flowCountTimeout=0s"}, field: "switch.flowCountTimeout"},
		{name: "hpcc without int", sets: []string{"switch.int=false", `cc={"algorithm":"hpcc"}`, "events=[]"}, field: "switch.int", msg: "hpcc reads the switches' INT"},
		{name: "flow hpcc without int", sets: []string{"switch.int=false", `workload[0].flows[0].cc={"algorithm":"hpcc"}`}, field: "switch.int", msg: "hpcc reads the switches' INT"},
		// host
		{name: "mtu zero", sets: []string{"host.mtu=0B"}, field: "host.mtu", msg: "must be > 0"},
		{name: "mtu too big", sets: []string{"host.mtu=1MB"}, field: "host.mtu", msg: "at most"},
		{name: "header negative", sets: []string{"host.header=-1"}, field: "host.header"},
		{name: "header too big", sets: []string{"host.idealHeader=1MB"}, field: "host.idealHeader", msg: "at most"},
		{name: "ack zero", sets: []string{"host.ack=0B"}, field: "host.ack", msg: "must be > 0"},
		{name: "nack zero", sets: []string{"host.nack=0B"}, field: "host.nack", msg: "must be > 0"},
		{name: "ack header unit", sets: []string{"host.ackHeader=34b"}, field: "host.ackHeader", msg: "unknown unit"},
		{name: "ack class", sets: []string{"switch.ackClass=strict"}, field: "switch.ackClass", msg: "want data, high"},
		{name: "data classes zero", sets: []string{"switch.dataClasses=0"}, field: "switch.dataClasses"},
		{name: "data classes too many", sets: []string{"switch.dataClasses=9"}, field: "switch.dataClasses"},
		{name: "data classes fraction", sets: []string{"switch.dataClasses=2.5"}, field: "switch.dataClasses"},
		{name: "data classes string", sets: []string{"switch.dataClasses=many"}, field: "switch.dataClasses"},
		{name: "ackEvery zero", sets: []string{"host.ackEvery=0"}, field: "host.ackEvery", msg: "must be > 0"},
		{name: "bdp mode", sets: []string{"host.bdp=local"}, field: "host.bdp", msg: "want global, path"},
		{name: "host unknown", sets: []string{"host.window=1"}, field: "host.window", msg: "unknown field"},
		// cc
		{name: "unknown algorithm", sets: []string{"cc.algorithm=foo"}, field: "cc.algorithm", msg: `unknown algorithm "foo" (want one of none`},
		{name: "unknown param", sets: []string{"cc.params.wr=10"}, field: "cc.params.wr", msg: "unknown parameter"},
		{name: "param range", sets: []string{"cc.params.windowBDPs=-1"}, field: "cc.params.windowBDPs", msg: "out of range"},
		{name: "param type", sets: []string{"cc.params.windowBDPs=lots"}, field: "cc.params.windowBDPs", msg: "want a number"},
		{name: "unknown preset", sets: []string{"cc.preset=fast"}, field: "cc.preset", msg: "unknown preset"},
		{name: "cc unknown field", sets: []string{"cc.mode=1"}, field: "cc.mode", msg: "unknown field"},
		// workload
		{name: "workload empty", sets: []string{"workload=[]"}, field: "workload", msg: "at least one"},
		{name: "workload kind", sets: []string{"workload[0].kind=bulk"}, field: "workload[0].kind", msg: `unknown kind "bulk"`},
		{name: "contract size example", sets: []string{"workload[0].flows[0].size=0B"}, field: "workload[0].flows[0].size", msg: "must be > 0"},
		{name: "unknown host", sets: []string{"workload[0].flows[0].src=h9"}, field: "workload[0].flows[0].src", msg: `unknown host "h9" (hosts are h0..h2, r0)`},
		{name: "switch as host", sets: []string{"workload[0].flows[0].src=s0"}, field: "workload[0].flows[0].src", msg: "is a switch"},
		{name: "src is dst", sets: []string{"workload[0].flows[0].dst=h0"}, field: "workload[0].flows[0].dst", msg: "same host"},
		{name: "flow cc", sets: []string{`workload[0].flows[0].cc={"algorithm":"bogus"}`}, field: "workload[0].flows[0].cc.algorithm"},
		{name: "flow tag chars", sets: []string{`workload[0].flows[0].tag="an incast"`}, field: "workload[0].flows[0].tag", msg: "want 1 to 32 letters, digits"},
		{name: "flow tag empty", sets: []string{`workload[0].flows[0].tag=""`}, field: "workload[0].flows[0].tag", msg: "want 1 to 32"},
		{name: "flow tag long", sets: []string{`workload[0].flows[0].tag="` + strings.Repeat("x", 33) + `"`}, field: "workload[0].flows[0].tag"},
		{name: "flow tag type", sets: []string{`workload[0].flows[0].tag=7`}, field: "workload[0].flows[0].tag", msg: "want a string"},
		{name: "workload cc", sets: []string{`workload[2].cc={"algorithm":"none","params":{"x":1}}`}, field: "workload[2].cc.params.x"},
		{name: "flow unknown field", sets: []string{"workload[0].flows[0].prio=3"}, field: "workload[0].flows[0].prio"},
		{name: "incast too many", sets: []string{"workload[1].senders=4"}, field: "workload[1].senders", msg: "at most 3"},
		{name: "incast receiver sends", sets: []string{`workload[1].senders=["h0","r0"]`}, field: "workload[1].senders[1]", msg: "same host"},
		{name: "incast duplicate sender", sets: []string{`workload[1].senders=["h0","h0"]`}, field: "workload[1].senders[1]", msg: "duplicate host"},
		{name: "incast repeat", sets: []string{`workload[1].repeat={"count":3}`}, field: "workload[1].repeat.every", msg: "required"},
		{name: "incast jitterDist", sets: []string{"workload[1].jitterDist=gauss"}, field: "workload[1].jitterDist", msg: `unknown value "gauss" (want uniform, normal)`},
		{name: "incast normal without jitter", sets: []string{"workload[1].jitter=0s", "workload[1].jitterDist=normal"}, field: "workload[1].jitterDist", msg: "needs a jitter > 0"},
		{name: "incast flowsPerSender zero", sets: []string{"workload[1].flowsPerSender=0"}, field: "workload[1].flowsPerSender", msg: "must be > 0"},
		{name: "incast flowsPerSender fraction", sets: []string{"workload[1].flowsPerSender=1.5"}, field: "workload[1].flowsPerSender"},
		{name: "incast flowsPerSender too many", sets: []string{"workload[1].flowsPerSender=4000000"}, field: "workload[1]", msg: "more than the limit"},
		{name: "incast repeat too late", sets: []string{`workload[1].repeat={"count":1000000,"every":"1s"}`}, field: "workload[1].repeat.count", msg: "after 3600s"},
		{name: "poisson load zero", sets: []string{"workload[2].load=0"}, field: "workload[2].load", msg: "must be in (0, 1]"},
		{name: "poisson load high", sets: []string{"workload[2].load=1.5"}, field: "workload[2].load"},
		{name: "poisson cdf name", sets: []string{"workload[2].cdf=foo"}, field: "workload[2].cdf", msg: `unknown cdf "foo"`},
		{name: "poisson cdf order", sets: []string{"workload[2].cdf=[[0,0],[100,50],[50,100]]"}, field: "workload[2].cdf[2]", msg: "sizes must increase"},
		{name: "poisson cdf start", sets: []string{"workload[2].cdf=[[0,10],[100,100]]"}, field: "workload[2].cdf[0]", msg: "0 percent"},
		{name: "poisson cdf pair", sets: []string{`workload[2].cdf=[[0,0],[100]]`}, field: "workload[2].cdf[1]", msg: "pair"},
		{name: "poisson until", sets: []string{"workload[2].from=2ms", "workload[2].until=1ms"}, field: "workload[2].until", msg: "after from"},
		{name: "poisson hosts", sets: []string{`workload[2].hosts=["h0"]`}, field: "workload[2].hosts", msg: "at least 2"},
		{name: "poisson cdf and size", sets: []string{"workload[2].size=1KB"}, field: "workload[2].size", msg: "either cdf or size"},
		{name: "poisson no size", sets: []string{"workload[2].cdf=null"}, field: "workload[2].cdf", msg: "required"},
		{name: "poisson size zero", sets: []string{"workload[2].cdf=null", "workload[2].size=0B"}, field: "workload[2].size", msg: "must be > 0"},
		{name: "poisson hosts and pairs", sets: []string{`workload[2].hosts=["h0","h1"]`, `workload[2].pairs=[["h0","h1"]]`}, field: "workload[2].pairs", msg: "either hosts or pairs"},
		{name: "poisson pair shape", sets: []string{`workload[2].pairs=[["h0"]]`}, field: "workload[2].pairs[0]", msg: "[src, dst] pair"},
		{name: "poisson pair same host", sets: []string{`workload[2].pairs=[["h0","h0"]]`}, field: "workload[2].pairs[0][1]", msg: "same host"},
		{name: "poisson pair unknown host", sets: []string{`workload[2].pairs=[["h0","zz"]]`}, field: "workload[2].pairs[0][1]", msg: "zz"},
		{name: "poisson pairs empty", sets: []string{`workload[2].pairs=[]`}, field: "workload[2].pairs", msg: "at least one"},
		{name: "poisson too many flows", sets: []string{"workload[2].cdf=[[0,0],[1,100]]", "workload[2].load=1", "workload[2].until=3600s"}, field: "workload[2]", msg: "flows"},
		{name: "staggered lengths", sets: []string{`workload[3].sizes=["1MB"]`}, field: "workload[3].sizes", msg: "one per src"},
		{name: "staggered start", sets: []string{`workload[3].starts[1]=soon`}, field: "workload[3].starts[1]"},
		{name: "longshort every", sets: []string{"workload[4].short.every=null"}, field: "workload[4].short.every", msg: "required"},
		{name: "longshort long", sets: []string{"workload[4].long.dst=h0"}, field: "workload[4].long.dst", msg: "same host"},
		{name: "alltoall hosts", sets: []string{"workload[5].hosts=1"}, field: "workload[5].hosts", msg: "at least 2"},
		{name: "alltoall hosts too many", sets: []string{"workload[5].hosts=5"}, field: "workload[5].hosts", msg: "at most 4"},
		{name: "alltoall ranks", sets: []string{"workload[5].ranksPerHost=0"}, field: "workload[5].ranksPerHost"},
		{name: "disconnected", sets: []string{"topology=" + customTopo, "events=[]", "telemetry.queues=all",
			`workload=[{"kind":"flows","flows":[{"src":"a","dst":"c","size":"1KB"}]}]`}, field: "workload[0].flows[0].dst", msg: "no path from a to c"},
		{name: "hosts do not relay", sets: []string{`topology={"kind":"custom","nodes":[{"id":"h0","type":"host"},{"id":"h1","type":"host"},` +
			`{"id":"h2","type":"host"},{"id":"s0","type":"switch"},{"id":"s1","type":"switch"}],` +
			`"links":[{"a":"h0","b":"s0"},{"a":"h1","b":"s0"},{"a":"h1","b":"s1"},{"a":"h2","b":"s1"}]}`, "events=[]", "telemetry.queues=all",
			`workload=[{"kind":"flows","flows":[{"src":"h0","dst":"h2","size":"1KB"}]}]`}, field: "workload[0].flows[0].dst", msg: "no path from h0 to h2"},
		{name: "rto", sets: []string{"host.rto=soon"}, field: "host.rto"},
		{name: "telemetry interval too short", sets: []string{"telemetry.interval=100ns"}, field: "telemetry.interval", msg: "at least 1us"},
		{name: "disconnected poisson", sets: []string{"topology=" + customTopo, "events=[]", "telemetry.queues=all",
			`workload=[{"kind":"poisson","cdf":"websearch","load":0.1,"until":"1ms"}]`}, field: "workload[0]", msg: "not connected"},
		// events
		{name: "event param unknown", sets: []string{"events[0].params={\"foo\":1}"}, field: "events[0].params.foo", msg: "no algorithm of this run"},
		{name: "event param range", sets: []string{"events[0].params.windowBDPs=5000"}, field: "events[0].params.windowBDPs", msg: "out of range"},
		{name: "event param empty", sets: []string{"events[0].params={}"}, field: "events[0].params", msg: "at least one"},
		{name: "event port", sets: []string{"events[1].link=s0->s9"}, field: "events[1].link", msg: `unknown port "s0->s9"`},
		{name: "event after duration", sets: []string{"events[0].at=10ms"}, field: "events[0].at", msg: "after the duration"},
		{name: "event up and loss", sets: []string{"events[1].loss=0.5"}, field: "events[1]", msg: "not both"},
		{name: "event loss range", sets: []string{"events[2].loss=2"}, field: "events[2].loss"},
		{name: "event nothing", sets: []string{`events[0]={"at":"1ms"}`}, field: "events[0]", msg: `want "params"`},
		{name: "event missing at", sets: []string{`events[0].at=null`}, field: "events[0].at", msg: "required"},
		// telemetry
		{name: "telemetry port", sets: []string{`telemetry.queues=["x"]`}, field: "telemetry.queues[0]", msg: `unknown port "x"`},
		{name: "telemetry flow id", sets: []string{"telemetry.flows=[-1]"}, field: "telemetry.flows[0]"},
		{name: "telemetry duplicate", sets: []string{"telemetry.flows=[1,1]"}, field: "telemetry.flows[1]", msg: "duplicate"},
		{name: "telemetry selection", sets: []string{"telemetry.queues=some"}, field: "telemetry.queues", msg: `want "all", "none" or a list`},
		{name: "telemetry interval", sets: []string{"telemetry.interval=-1us"}, field: "telemetry.interval"},
	}
	if len(tests) < 30 {
		t.Fatalf("only %d cases", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := []byte(tt.doc)
			if tt.doc == "" {
				doc = mustSet(t, base, tt.sets...)
			}
			_, err := Parse(doc)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("Parse succeeded or returned %T (%v), want *Error", err, err)
			}
			first := e.Errors[0]
			if !strings.HasPrefix(first.Field, tt.field) || !strings.Contains(first.Error, tt.msg) {
				t.Errorf("first error %q, want field %q and message containing %q; all: %v", first.String(), tt.field, tt.msg, e.Errors)
			}
		})
	}
}

// Parse reports every problem, not only the first.
func TestAllErrorsReported(t *testing.T) {
	doc := mustSet(t, base, "seed=x", "switch.buffer=0B", "host.mtu=0B", "cc.params.windowBDPs=-1",
		"workload[0].flows[0].size=0B", "workload[1].receiver=h9", "telemetry.flows=[1,1]", "extra=1")
	_, err := Parse(doc)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Parse: %v", err)
	}
	want := []string{"seed", "switch.buffer", "host.mtu", "cc.params.windowBDPs", "workload[0].flows[0].size",
		"workload[1].receiver", "telemetry.flows[1]", "extra"}
	got := map[string]bool{}
	for _, fe := range e.Errors {
		got[fe.Field] = true
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("no error for %s; got %v", w, e.Errors)
		}
	}
	if !strings.Contains(err.Error(), "more)") {
		t.Errorf("Error() = %q, want the count of the others", err.Error())
	}
}

// Exact messages promised by the contract.
func TestContractMessages(t *testing.T) {
	doc := mustSet(t, base, "topology.hostLink.rate=10Gps", `workload[2]={"kind":"flows","flows":[{"src":"h0","dst":"r0","size":"0B"}]}`)
	_, err := Parse(doc)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("Parse: %v", err)
	}
	want := []string{
		`topology.hostLink.rate: unknown unit "Gps" (want bps, Kbps, Mbps, Gbps, Tbps)`,
		`workload[2].flows[0].size: must be > 0`,
	}
	for _, w := range want {
		found := false
		for _, fe := range e.Errors {
			found = found || fe.String() == w
		}
		if !found {
			t.Errorf("missing %q in %v", w, e.Errors)
		}
	}
}

func TestParamUnitsAndBools(t *testing.T) {
	// none has only windowBDPs (a number), so a string is refused, and the
	// error says what would be accepted.
	_, err := Parse(mustSet(t, base, `cc.params.windowBDPs="2BDP"`))
	if err == nil || !strings.Contains(err.Error(), "want a number in BDP") {
		t.Errorf("err = %v", err)
	}
	// null parameters are left out
	s := mustParse(t, mustSet(t, base, "cc.params.windowBDPs=null"))
	if len(s.CC.Params) != 0 {
		t.Errorf("params = %v", s.CC.Params)
	}
}

func TestNullMeansLeftOut(t *testing.T) {
	s := mustParse(t, mustSet(t, base, "seed=null", "switch.buffer=null", "duration=null"))
	if s.Seed != DefaultSeed || s.Switch.Buffer != DefaultBuffer || s.Duration != 0 {
		t.Errorf("seed %d buffer %d duration %d", s.Seed, s.Switch.Buffer, s.Duration)
	}
}

func TestDeepNesting(t *testing.T) {
	doc := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	if _, err := Parse([]byte(doc)); err == nil || !strings.Contains(err.Error(), "nested deeper") {
		t.Errorf("err = %v", err)
	}
}

// contractExample is the example scenario of the contract document
// (scenario-format.md, the first json block), read from the in-repo copy so
// the document stays true: it must parse once its algorithm is registered.
func contractExample(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile("scenario-format.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(doc)
	i := strings.Index(s, "```json\n")
	j := strings.Index(s[i+8:], "\n```")
	if i < 0 || j < 0 {
		t.Fatal("no json block in scenario-format.md")
	}
	return s[i+8 : i+8+j]
}

func TestContractExample(t *testing.T) {
	doc := contractExample(t)
	s := mustParse(t, []byte(doc))
	if s.CC.Algorithm != "mpcc" || s.CC.Params["wr"] != 10 || s.Switch.ECN == nil || s.Switch.ECN.Kmax != 1600e3 || len(s.Workload) != 4 {
		t.Errorf("scenario %+v", s)
	}
	// the live change in the example names one of MPCC's parameters
	if len(s.Events) != 2 || s.Events[0].Params["wr"] != 100 {
		t.Errorf("events %+v", s.Events)
	}
	_, err := Parse(mustSet(t, doc, "duration=2ms"))
	if err == nil || !strings.Contains(err.Error(), "events[1].at: 3ms is after the duration (2ms)") {
		t.Errorf("err = %v", err)
	}
	build(t, []byte(doc))
}

// switch.dataClasses reaches the engine and the canonical form; left out
// it is what the algorithms are designed for (one class, or Homa's 8) and
// the canonical form does not mention it, so scenarios written before the
// field keep their canonical bytes and a run with another algorithm
// (--algo) gets that algorithm's classes; set, it holds for every
// algorithm.
func TestDataClasses(t *testing.T) {
	for _, tt := range []struct {
		sets   []string
		engine int // sim.SwitchConfig.DataClasses
		canon  bool
		parsed int // Switch.DataClasses after reparsing the canonical form
	}{
		{nil, 1, false, 0},
		{[]string{"switch.dataClasses=1"}, 1, true, 1},
		{[]string{"switch.dataClasses=8"}, 8, true, 8},
		{[]string{"switch.dataClasses=3"}, 3, true, 3},
		{[]string{`cc={"algorithm": "homa"}`}, 8, false, 0},
		{[]string{`cc={"algorithm": "homa"}`, "switch.dataClasses=1"}, 1, true, 1},
		{[]string{`cc={"algorithm": "expresspass"}`}, 1, false, 0},
	} {
		doc := base
		if strings.Contains(strings.Join(tt.sets, " "), "cc=") {
			doc = oneFlow // base's events set none's parameters
		}
		s := mustParse(t, mustSet(t, doc, tt.sets...))
		cfg, _, err := Build(s)
		if err != nil {
			t.Fatalf("%v: %v", tt.sets, err)
		}
		if cfg.Switch.DataClasses != tt.engine {
			t.Errorf("%v: engine has %d data classes, want %d", tt.sets, cfg.Switch.DataClasses, tt.engine)
		}
		c, err := s.Canonical()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(c), `"dataClasses"`); got != tt.canon {
			t.Errorf("%v: canonical mentions dataClasses: %v, want %v\n%s", tt.sets, got, tt.canon, c)
		}
		again := mustParse(t, c)
		if again.Switch.DataClasses != tt.parsed {
			t.Errorf("%v: canonical form reparses to %d classes, want %d", tt.sets, again.Switch.DataClasses, tt.parsed)
		}
	}
}

const oneFlow = `{"name": "one", "topology": {"kind": "dumbbell", "senders": 1, "receivers": 1,
	"hostLink": {"rate": "100Gbps", "delay": "1us"}}, "workload": [{"kind": "flows", "flows": [{"src": "h0", "dst": "r0", "size": "1MB"}]}]}`

// switch.routing: per-flow ECMP by default (left out of the canonical
// form), per-packet spraying when asked; anything else names the field.
func TestRouting(t *testing.T) {
	for _, tt := range []struct {
		sets  []string
		spray bool
	}{
		{nil, false},
		{[]string{"switch.routing=ecmp"}, false},
		{[]string{"switch.routing=spray"}, true},
	} {
		s := mustParse(t, mustSet(t, base, tt.sets...))
		cfg, _, err := Build(s)
		if err != nil {
			t.Fatalf("%v: %v", tt.sets, err)
		}
		if cfg.Switch.Spray != tt.spray {
			t.Errorf("%v: engine sprays %v, want %v", tt.sets, cfg.Switch.Spray, tt.spray)
		}
		c, _ := s.Canonical()
		if got := strings.Contains(string(c), `"routing"`); got != tt.spray {
			t.Errorf("%v: canonical mentions routing: %v, want %v", tt.sets, got, tt.spray)
		}
	}
	_, err := Parse(mustSet(t, base, "switch.routing=random"))
	if err == nil || !strings.Contains(err.Error(), "switch.routing") {
		t.Errorf("switch.routing=random: err = %v, want one naming switch.routing", err)
	}
}

// A Poisson workload gives the algorithms its CDF (Homa's cut-offs), in
// equal-mass slices of each segment; explicit flows give none (the engine
// takes the flows' own sizes).
func TestWorkloadOf(t *testing.T) {
	s := mustParse(t, mustSet(t, base, `workload=[{"kind": "poisson", "cdf": [[1000, 0], [3000, 50], [5000, 100]], "load": 0.3, "until": "10us"}]`))
	w := workloadOf(s)
	// 16 slices of each segment, at their middles (1062.5 … 4937.5 B)
	if w == nil || len(w.Sizes) != 32 || w.Sizes[0] != 1063 || w.Sizes[31] != 4938 {
		t.Fatalf("workload %+v, want 32 slices of 1000–5000 B", w)
	}
	sum := 0.0
	for i, v := range w.Sizes {
		sum += w.Weights[i]
		if i > 0 && v <= w.Sizes[i-1] {
			t.Errorf("size %d = %d: not ascending", i, v)
		}
	}
	if math.Abs(sum-1) > 1e-12 || math.Abs(w.Weights[16]-1.0/32) > 1e-12 {
		t.Errorf("weights sum to %g, slice 16 weighs %g, want 1 and 1/32", sum, w.Weights[16])
	}
	if workloadOf(mustParse(t, []byte(base))) != nil {
		t.Error("explicit flows: want no workload CDF")
	}
}

// TestFlowTag: an explicit flow's tag labels it in the built run (the
// others keep the workload's kind) and survives the canonical form.
func TestFlowTag(t *testing.T) {
	sc := mustParse(t, mustSet(t, base, "workload[0].flows[0].tag=incast"))
	if got := sc.Workload[0].Flows[0].Tag; got != "incast" {
		t.Fatalf("parsed tag %q", got)
	}
	count := func(sc *Scenario) map[string]int {
		cfg, _, err := Build(sc)
		if err != nil {
			t.Fatal(err)
		}
		tags := map[string]int{}
		for _, f := range cfg.Flows {
			tags[f.Tag]++
		}
		return tags
	}
	tags, untagged := count(sc), count(mustParse(t, []byte(base)))
	if tags["incast"] != untagged["incast"]+1 || tags[KindFlows] != untagged[KindFlows]-1 {
		t.Errorf("built flow tags %v (untagged %v): want one flow moved from %q to incast", tags, untagged, KindFlows)
	}
	c, err := sc.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(c), `"tag":"incast"`) && !strings.Contains(string(c), `"tag": "incast"`) {
		t.Errorf("canonical form lost the tag:\n%s", c)
	}
}
