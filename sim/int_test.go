package sim_test

import (
	"slices"
	"testing"

	"cclab/cc"
	"cclab/sim"
)

// Switches push INT records only in a run with an algorithm that reads
// them (its IntSpec adds INT bytes or needs the flow counter); the others
// ignore Ack.INT, so their runs skip the work. With switch.int off no run
// pushes them.
func TestSwitchesPushINTOnlyForReaders(t *testing.T) {
	for _, tc := range []struct {
		algo string
		int  bool
		want bool
	}{
		{"none", true, false},
		{"dcqcn", true, false},
		{"dctcp", true, false},
		{"timely", true, false},
		{"hpcc", true, true},
		{"mpcc", true, true},
		{"dcqcn", false, false},
		{"timely", false, false},
	} {
		a, ok := cc.Lookup(tc.algo)
		if !ok {
			t.Fatalf("no algorithm %q", tc.algo)
		}
		if a.INT.NeedsSwitches() != tc.want && tc.int {
			t.Fatalf("%s: the table disagrees with its IntSpec", tc.algo)
		}
		sets := []string{"switch.int=false"}
		if tc.int {
			sets = nil
		}
		s, err := sim.New(libraryConfig(t, "fattree16-websearch30", tc.algo, sets...))
		if err != nil {
			t.Fatal(err)
		}
		if got := s.PushesINT(); got != tc.want {
			t.Errorf("%s, switch.int %v: switches push INT %v, want %v", tc.algo, tc.int, got, tc.want)
		}
	}
}

// An algorithm whose IntSpec adds bytes at every hop (none of the shipped
// ones does) has its data packets grow by that much at each of the two
// switches of a dumbbell: the data bytes created grow by packets × 2 ×
// PerHopBytes, and the bytes are conserved.
func TestINTGrowsPerHop(t *testing.T) {
	const size, mtu = 100_000, 1000
	created := func(perHop int64) int64 {
		spec := noneAlgo(t, 1)
		a := *spec.Algo
		a.INT.PerHopBytes = perHop
		spec.Algo = &a
		tp := dumbbell(1, 100e9, sim.Microsecond)
		cfg := baseConfig(t, tp, spec)
		cfg.Host.MTU = mtu
		cfg.Flows = []sim.FlowSpec{tp.flow("h0", "r0", size, 0)}
		s, res := run(t, cfg)
		if !res.Flows[0].Finished {
			t.Fatalf("per hop %d: the flow did not finish", perHop)
		}
		if s.PushesINT() != (perHop > 0) {
			t.Fatalf("per hop %d: switches push INT %v", perHop, s.PushesINT())
		}
		c := s.Conservation()
		return c.Created[slices.Index(c.Kinds, "data")]
	}
	base := created(0)
	for _, perHop := range []int64{4, 10} {
		if got, want := created(perHop)-base, int64(size/mtu)*2*perHop; got != want {
			t.Errorf("per hop %d B: data bytes grew by %d, want %d", perHop, got, want)
		}
	}
}
