package sim_test

import (
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
