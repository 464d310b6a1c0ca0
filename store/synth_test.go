package store

import (
	"fmt"
	"math"
	"math/rand/v2"
)

// synthetic telemetry shaped like the engine's (sim/telemetry.go) on a
// 16-host fat-tree: every tick, queue_bytes and pfc_pause of every port,
// then throughput_bps, rate_bps and cwnd_bytes of every active flow.
// Values are what the engine produces: integer byte counts and bit rates
// as float64, throughput as delivered bytes * 8 / interval.

const (
	synthInterval = 10_000_000 // ps: 10 µs
	synthPktBytes = 1048       // an MTU packet with headers
	synthLineBps  = 100e9
)

type synthPort struct {
	class   int // 0 idle, 1 light, 2 hot
	pkts    int // queued packets
	burst   int // ticks left in the current burst
	inRate  int // packets a tick arriving during a burst
	paused  bool
	qIdx    int
	pfcIdx  int
	hasIdxs bool
}

type synthFlow struct {
	id         int
	start, end int // active ticks [start, end)
	hpcc       bool
	rate       int64 // bps
	target     int64
	alpha      float64
	window     int64 // bytes
	idx        [3]int
	hasIdxs    bool
}

// sink is what synth writes to: a Recorder, or a capture of its calls.
type sink interface {
	Series(metric, entity string, agg Agg) int
	Add(idx int, tPS int64, v float64)
}

// synth generates the workload tick by tick.
type synth struct {
	rng   *rand.Rand
	ports []synthPort
	flows []synthFlow
	tick  int
}

func newSynth(seed uint64, ports, flows, ticks int) *synth {
	s := &synth{rng: rand.New(rand.NewPCG(seed, seed^0x5eed))}
	for range ports {
		c := 0
		switch r := s.rng.Float64(); {
		case r < 0.2:
			c = 2
		case r < 0.6:
			c = 1
		}
		s.ports = append(s.ports, synthPort{class: c})
	}
	for i := range flows {
		start := s.rng.IntN(ticks * 9 / 10)
		dur := 10 + s.rng.IntN(990)
		f := synthFlow{id: i, start: start, end: min(start+dur, ticks), hpcc: i%2 == 0,
			rate: synthLineBps, target: synthLineBps}
		f.window = f.rate * 8_000 / 8_000_000 // rate x 8 µs base RTT, bytes
		s.flows = append(s.flows, f)
	}
	return s
}

// step adds one tick of samples to rec and returns the number of points.
func (s *synth) step(rec sink) int {
	s.tick++
	t := int64(s.tick) * synthInterval
	n := 0
	for i := range s.ports {
		p := &s.ports[i]
		if !p.hasIdxs {
			name := fmt.Sprintf("sw%d.p%d", i/8, i%8)
			p.qIdx = rec.Series("queue_bytes", name, AggMax)
			p.pfcIdx = rec.Series("pfc_pause", name, AggMax)
			p.hasIdxs = true
		}
		s.stepPort(p)
		bytes := p.pkts * synthPktBytes
		if p.pkts > 0 && s.rng.IntN(2) == 0 {
			bytes += 64 * s.rng.IntN(4) // ACKs and CNPs
		}
		rec.Add(p.qIdx, t, float64(bytes))
	}
	for i := range s.ports {
		p := &s.ports[i]
		v := 0.0
		if p.paused {
			v = 1
		}
		rec.Add(p.pfcIdx, t, v)
	}
	n += 2 * len(s.ports)
	active := make([]*synthFlow, 0, 64)
	for i := range s.flows {
		if f := &s.flows[i]; s.tick > f.start && s.tick <= f.end {
			active = append(active, f)
			if !f.hasIdxs {
				e := fmt.Sprint(f.id)
				f.idx = [3]int{rec.Series("throughput_bps", e, AggMean), rec.Series("rate_bps", e, AggMean), rec.Series("cwnd_bytes", e, AggMean)}
				f.hasIdxs = true
			}
			s.stepFlow(f)
		}
	}
	secs := float64(synthInterval) / 1e12
	for _, f := range active {
		// delivered bytes: the rate's share of the tick, in packets
		pkts := int(float64(f.rate)*secs/8/1000 + s.rng.Float64())
		if s.rng.IntN(4) == 0 {
			pkts -= s.rng.IntN(3)
		}
		pkts = max(pkts, 0)
		rec.Add(f.idx[0], t, float64(pkts*1000)*8/secs)
	}
	for _, f := range active {
		rec.Add(f.idx[1], t, float64(f.rate))
	}
	for _, f := range active {
		rec.Add(f.idx[2], t, float64(f.window))
	}
	return n + 3*len(active)
}

func (s *synth) stepPort(p *synthPort) {
	switch p.class {
	case 0: // idle: a packet now and then
		p.pkts = 0
		if s.rng.IntN(50) == 0 {
			p.pkts = 1
		}
		return
	case 1:
		if p.burst == 0 && s.rng.IntN(40) == 0 {
			p.burst, p.inRate = 1+s.rng.IntN(10), 1+s.rng.IntN(20)
		}
	case 2:
		if p.burst == 0 && s.rng.IntN(8) == 0 {
			p.burst, p.inRate = 5+s.rng.IntN(60), 10+s.rng.IntN(120)
		}
	}
	in := 0
	if p.burst > 0 {
		p.burst--
		in = s.rng.IntN(p.inRate + 1)
	}
	// The port drains up to ~95 packets a tick at 100 Gb/s... while it
	// is not paused by its downstream.
	out := 0
	if !(p.paused && s.rng.IntN(2) == 0) {
		out = 80 + s.rng.IntN(16)
	}
	p.pkts = max(0, p.pkts+in-out+s.rng.IntN(2))
	if p.class == 2 && p.burst > 0 {
		p.pkts += in / 2 // incast: the queue builds up
	}
	p.paused = p.pkts*synthPktBytes > 400_000
}

func (s *synth) stepFlow(f *synthFlow) {
	if f.hpcc {
		// HPCC: the window follows the measured utilisation every ACK.
		u := 0.9 + 0.2*s.rng.Float64()
		w := float64(f.window)/u*0.95 + 100
		f.window = int64(math.Min(w, 100_000))
		f.rate = f.window * 8_000_000 / 8_000
		return
	}
	// DCQCN: a CNP now and then cuts the rate; a timer raises it.
	f.alpha *= 1 - 1.0/16
	if s.rng.IntN(12) == 0 {
		f.alpha += 1.0 / 16
		f.target = f.rate
		f.rate = int64(float64(f.rate) * (1 - f.alpha/2))
	} else if s.tick%5 == 0 {
		f.target = min(f.target+40_000_000, synthLineBps)
		f.rate = (f.rate + f.target) / 2
	}
	f.window = f.rate * 8_000 / 8_000_000
}

// capture records a synth's samples to replay them into Recorders.
type capture struct {
	names   []seriesName
	aggs    []Agg
	byName  map[seriesName]int
	samples []sample
}

type sample struct {
	idx int32
	t   int64
	v   float64
}

func (c *capture) Series(metric, entity string, agg Agg) int {
	k := seriesName{metric, entity}
	if i, ok := c.byName[k]; ok {
		return i
	}
	if c.byName == nil {
		c.byName = map[seriesName]int{}
	}
	c.byName[k] = len(c.names)
	c.names, c.aggs = append(c.names, k), append(c.aggs, agg)
	return len(c.names) - 1
}

func (c *capture) Add(idx int, tPS int64, v float64) {
	c.samples = append(c.samples, sample{int32(idx), tPS, v})
}

// captureSynth returns the samples of the fat-tree workload over ticks.
func captureSynth(seed uint64, ticks int) *capture {
	c := &capture{}
	syn := newSynth(seed, 288, 700, ticks)
	for range ticks {
		syn.step(c)
	}
	return c
}
