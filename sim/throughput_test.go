package sim_test

import (
	"testing"

	"cclab/sim"
)

// tputMax records each flow's largest throughput_bps sample.
type tputMax map[int32]float64

func (m tputMax) Observe(b []sim.Sample) {
	for _, s := range b {
		if s.Metric == sim.MetricThroughput && s.Value > m[s.Entity] {
			m[s.Entity] = s.Value
		}
	}
}

// TestThroughputNeverAboveLink: mpcc-exp1 samples every 1 µs on 1 Gbps
// links, where a 1000-byte packet takes 8 µs; throughput_bps used to count
// a packet in the interval its last bit landed in, so samples read 0 or
// 8 Gbps. No sample may exceed the fastest link.
func TestThroughputNeverAboveLink(t *testing.T) {
	for _, name := range []string{"mpcc-exp1", "incast-8to1", "fairness-2flows-hpcc", "rcc-fairness-4flows"} {
		cfg := libraryConfig(t, name, "", "duration=1ms")
		var link int64
		for _, l := range cfg.Links {
			link = max(link, l.Rate)
		}
		m := tputMax{}
		run(t, cfg, m)
		if len(m) == 0 {
			t.Fatalf("%s: no throughput samples", name)
		}
		for f, v := range m {
			if v > float64(link)*(1+1e-9) {
				t.Errorf("%s: flow %d: throughput sample %.4g bps above the link rate %d", name, f, v, link)
			}
		}
	}
}

// seriesOf records one flow's throughput samples.
type seriesOf struct{ v []float64 }

func (o *seriesOf) Observe(b []sim.Sample) {
	for _, s := range b {
		if s.Metric == sim.MetricThroughput && s.Entity == 0 {
			o.v = append(o.v, s.Value)
		}
	}
}

// TestThroughputFirstPartialInterval: a flow that starts halfway through
// a 10 µs interval is measured over its 5 µs of it, not over 10 µs (which
// read half its rate).
func TestThroughputFirstPartialInterval(t *testing.T) {
	doc := `{"name": "half", "duration": "40us",
		"topology": {"kind": "dumbbell", "senders": 1, "hostLink": {"rate": "10Gbps", "delay": "0.1us"}},
		"cc": {"algorithm": "none"}, "telemetry": {"interval": "10us"},
		"workload": [{"kind": "flows", "flows": [{"src": "h0", "dst": "r0", "size": "1MB", "start": "5us"}]}]}`
	cfg := docConfig(t, []byte(doc))
	o := &seriesOf{}
	run(t, cfg, o)
	if len(o.v) < 2 {
		t.Fatalf("samples %v", o.v)
	}
	first, full := o.v[0], o.v[1]
	// the first ~1.5 µs go to the first packet's way there; the rest of
	// the 5 µs deliver at the full rate: about 0.7 of it (0.35 over 10 µs)
	t.Logf("first %.3g, second %.3g", first, full)
	if first < 0.5*full || first > 10e9 {
		t.Fatalf("first sample %.3g bps, a full interval %.3g bps: want the first over the flow's 5 µs", first, full)
	}
}

// timed records one flow's throughput samples with their times.
type timed struct {
	t []sim.Time
	v []float64
}

func (o *timed) Observe(b []sim.Sample) {
	for _, s := range b {
		if s.Metric == sim.MetricThroughput && s.Entity == 0 {
			o.t = append(o.t, s.T)
			o.v = append(o.v, s.Value)
		}
	}
}

// TestThroughputLastPartialInterval: a flow at line rate (no congestion
// control, alone on its link) that ends partway through a 10 µs interval
// is reported for that last part too, over its own length: the line rate,
// not nothing (the flow used to leave the sampled flows unreported) nor
// its bytes over the whole interval. Whether the run goes on after it
// (a duration) or ends with it, and the bytes the samples account for
// are the flow's size.
func TestThroughputLastPartialInterval(t *testing.T) {
	for _, duration := range []string{`"duration": "200us",`, ""} {
		doc := `{"name": "last", ` + duration + `
			"topology": {"kind": "dumbbell", "senders": 1, "hostLink": {"rate": "10Gbps", "delay": "0.1us"}},
			"cc": {"algorithm": "none"}, "telemetry": {"interval": "10us"},
			"workload": [{"kind": "flows", "flows": [{"src": "h0", "dst": "r0", "size": "45KB", "start": "0us"}]}]}`
		cfg := docConfig(t, []byte(doc))
		o := &timed{}
		_, res := run(t, cfg, o)
		fin := res.Flows[0].Finish
		if !res.Flows[0].Finished || len(o.t) < 3 {
			t.Fatalf("%q: finished %v, samples %v at %v", duration, res.Flows[0].Finished, o.v, o.t)
		}
		last := len(o.v) - 1
		t.Logf("%q: finished at %v; samples %v at %v", duration, fin, o.v, o.t)
		if o.t[last] < fin {
			t.Fatalf("%q: the last sample at %v, before the flow finished at %v: its last %v unreported", duration, o.t[last], fin, fin-o.t[last])
		}
		// ~45 KB at 10 Gbps: 36 µs of payload on the wire, less the
		// header's share; the last part is at the full rate too
		full := o.v[1]
		if o.v[last] < 0.9*full || o.v[last] > 10e9*(1+1e-9) {
			t.Errorf("%q: last sample %.4g bps, a full interval %.4g bps: want it over its own length", duration, o.v[last], full)
		}
		// the samples account for the flow's payload: each over its own
		// part (the first from the start, the last to the finish; its
		// last packet still counts for its time on the link after the
		// finish, so up to one packet, 1000 B, is over that time)
		var bits float64
		for i := range o.v {
			from := sim.Time(0)
			if i > 0 {
				from = o.t[i-1]
			}
			to := o.t[i]
			if i == last {
				to = fin
			}
			bits += o.v[i] * float64(to-from) / float64(sim.Second)
		}
		if bits < (45000-1000)*8 || bits > 45000*8 {
			t.Errorf("%q: the samples account for %.0f bytes of 45000", duration, bits/8)
		}
		// no sample after the last: the flow is reported once
		if n := len(o.t); o.t[n-1] == o.t[n-2] {
			t.Errorf("%q: two samples at %v", duration, o.t[n-1])
		}
	}
}
