package sim_test

import (
	"fmt"
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

// The engine prefetches from 512 ports (256 links) on: a 128-host fat-tree
// (384 links) does, the 16-host one (48 links) does not. Where it does, a
// run with queued packets must actually ask for some memory ahead (a peek
// that always came back empty would make prefetching a silent no-op); the
// 2 MB permutation keeps several events in each bucket.
func TestPrefetchFromLargeFabrics(t *testing.T) {
	for _, tc := range []struct {
		k    int
		want bool
	}{{4, false}, {8, true}} {
		tp := fatTreeK(tc.k, 100e9, sim.Microsecond)
		cfg := algoConfig(t, tp, "hpcc", 100e9, nil)
		cfg.Host.MTU = 4000
		n := tc.k * tc.k * tc.k / 4
		for i := 0; i < n; i++ {
			cfg.Flows = append(cfg.Flows, tp.flow(fmt.Sprintf("h%d", i), fmt.Sprintf("h%d", (i+n/2)%n), 200_000, 0))
		}
		s, err := sim.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Prefetching(); got != tc.want {
			t.Errorf("k=%d fat-tree (%d links): prefetching %v, want %v", tc.k, len(cfg.Links), got, tc.want)
		}
		if err := s.Run(); err != nil {
			t.Fatal(err)
		}
		// at least one prefetch per 20 events where it is on, none where off
		if got, ev := s.Prefetches(), s.Events(); tc.want && got < ev/20 || !tc.want && got != 0 {
			t.Errorf("k=%d fat-tree: %d prefetches in %d events", tc.k, got, ev)
		}
		t.Logf("k=%d: %d prefetches in %d events", tc.k, s.Prefetches(), s.Events())
	}
}
