package fdcc

import (
	"strings"
	"testing"
)

// TestShippedPolicies: the FDCC policy the lab ships loads, has the
// committed shape, and says how it was trained; RL-CC ships none yet.
func TestShippedPolicies(t *testing.T) {
	p, meta, err := Shipped("fdcc")
	if err != nil {
		t.Fatal(err)
	}
	if a := p.Arch(); a != (Arch{Obs: 8, Hist: 8, Hidden: 16, ActLimit: 2}) {
		t.Errorf("shipped fdcc policy is %+v", a)
	}
	for _, k := range []string{"algo", "command", "seed", "episodes", "wall_s"} {
		if meta[k] == "" {
			t.Errorf("shipped fdcc policy has no %q in its metadata", k)
		}
	}
	if !strings.HasPrefix(meta["command"], "cclab train fdcc") {
		t.Errorf("shipped policy's command %q", meta["command"])
	}
	// Its decisions are finite on a plausible observation.
	s := p.NewScratch()
	if v := p.Act(s, nil, 0, []float64{1.1, 0.2, 0.9, 0.25, 0, 0, 0.25, 0}); !(v >= -2 && v <= 2) {
		t.Errorf("shipped policy acts %v", v)
	}
	if _, _, err := Shipped("rlcc"); err == nil {
		t.Error("an RL-CC policy ships: update this test, the rlcc help and the contract")
	}
}
