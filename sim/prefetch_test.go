package sim_test

import (
	"reflect"
	"testing"

	"cclab/sim"
)

// Prefetching is a hint: a run with it must equal the run without, result
// and samples, whatever the algorithm. The 16-host fabric is below the size
// where the engine turns it on, so both settings are forced.
func TestPrefetchChangesNothing(t *testing.T) {
	for _, algo := range []string{"dcqcn", "hpcc", "homa", "expresspass"} {
		t.Run(algo, func(t *testing.T) {
			results := make([]*sim.Result, 2)
			samples := make([][]sim.Sample, 2)
			for i, on := range []bool{false, true} {
				cfg := libraryConfig(t, "fattree16-websearch30", algo, "workload[0].until=2ms")
				s, err := sim.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				s.SetPrefetch(on)
				c := &collector{}
				s.Subscribe(c)
				if err := s.Run(); err != nil {
					t.Fatal(err)
				}
				results[i], samples[i] = s.Result(), c.s
			}
			if results[0].FlowsFinished() == 0 || len(samples[0]) == 0 {
				t.Fatal("nothing ran")
			}
			if !reflect.DeepEqual(results[0], results[1]) || !reflect.DeepEqual(samples[0], samples[1]) {
				t.Fatal("the run with prefetching differs from the one without")
			}
		})
	}
}
