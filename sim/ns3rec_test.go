package sim_test

import (
	"fmt"
	"reflect"
	"testing"

	"cclab/sim"
)

// The ns-3 recorders see what the run does without changing it: the same
// result with and without them, every PAUSE a switch sent received once
// (and then resumed, alternately, per port), and every switch port sampled
// exactly at 0, step, … up to the end.
func TestNS3Recorders(t *testing.T) {
	build := func() sim.Config {
		tp := star(9, 100e9, sim.Microsecond)
		cfg := algoConfig(t, tp, "dcqcn", 100e9, nil)
		cfg.Telemetry = sim.TelemetryConfig{}
		cfg.Switch.Buffer = 600 << 10 // small, so that an 8:1 incast pauses
		cfg.Switch.ECN.Enabled = false
		for i := 0; i < 8; i++ {
			cfg.Flows = append(cfg.Flows, tp.flow(fmt.Sprintf("h%d", i), "h8", 500_000, 0))
		}
		return cfg
	}
	_, plain := run(t, build())
	s, err := sim.New(build())
	if err != nil {
		t.Fatal(err)
	}
	const step = 100 * sim.Nanosecond
	s.RecordPFC()
	s.RecordQueueSamples(step, 1000)
	if err := s.Run(); err != nil {
		t.Fatal(err)
	}
	res := s.Result()
	if !reflect.DeepEqual(plain, res) {
		t.Fatal("the recorders changed the run's result")
	}

	var sent int64
	for _, p := range res.Ports {
		sent += p.PausesSent
	}
	ev := s.PFCEvents()
	pauses := 0
	state := map[int32]bool{}
	for i, e := range ev {
		if i > 0 && e.At < ev[i-1].At {
			t.Fatalf("PFC event %d at %d ps is before the one before it", i, e.At)
		}
		if e.Pause {
			pauses++
		}
		if state[e.Port] == e.Pause {
			t.Errorf("PFC event %d: port %d pause=%v twice in a row", i, e.Port, e.Pause)
		}
		state[e.Port] = e.Pause
	}
	if sent == 0 || int64(pauses) != sent {
		t.Fatalf("%d PAUSE frames received, %d sent (want equal and > 0)", pauses, sent)
	}

	want := int64(s.Now()/step) + 1
	samples := s.QueueSamples()
	busy := false
	for pid, counts := range samples {
		if res.Ports[pid].Switch != (counts != nil) {
			t.Errorf("port %d (%s): switch=%v but counts=%v", pid, res.Ports[pid].Name, res.Ports[pid].Switch, counts != nil)
		}
		if counts == nil {
			continue
		}
		var n int64
		for _, c := range counts {
			n += c
		}
		if n != want {
			t.Errorf("port %s: %d samples, want %d (0 … %d ps every %d ps)", res.Ports[pid].Name, n, want, s.Now(), step)
		}
		if top := int64(len(counts)-1) * 1000; top > res.Ports[pid].QueueMax {
			t.Errorf("port %s: a sample in the %d B bucket above the queue's max %d B", res.Ports[pid].Name, top, res.Ports[pid].QueueMax)
		}
		busy = busy || len(counts) > 100
	}
	if !busy {
		t.Error("no switch port sampled a queue above 100 KB in an 8:1 incast")
	}
}
