package fdcc

import (
	"strings"
	"testing"
)

// TestShippedPolicies: each policy the lab ships loads, has the committed
// shape, says how it was trained and acts within its limit on a plausible
// observation.
func TestShippedPolicies(t *testing.T) {
	for _, tc := range []struct {
		algo string
		arch Arch
		obs  []float64
	}{
		{"fdcc", Arch{Obs: 8, Hist: 8, Hidden: 16, ActLimit: 2}, []float64{1.1, 0.2, 0.9, 0.25, 0, 0, 0.25, 0}},
		{"rlcc", Arch{Obs: 2, Hist: 1, Hidden: 12, ActLimit: 1}, []float64{1, 0.5}},
	} {
		p, meta, err := Shipped(tc.algo)
		if err != nil {
			t.Fatal(err)
		}
		if a := p.Arch(); a != tc.arch {
			t.Errorf("shipped %s policy is %+v", tc.algo, a)
		}
		for _, k := range []string{"algo", "command", "seed", "episodes", "wall_s"} {
			if meta[k] == "" {
				t.Errorf("shipped %s policy has no %q in its metadata", tc.algo, k)
			}
		}
		if meta["algo"] != tc.algo || !strings.HasPrefix(meta["command"], "cclab train "+tc.algo) {
			t.Errorf("shipped %s policy's algo %q, command %q", tc.algo, meta["algo"], meta["command"])
		}
		L := tc.arch.ActLimit
		if v := p.Act(p.NewScratch(), nil, 0, tc.obs); !(v >= -L && v <= L) {
			t.Errorf("shipped %s policy acts %v", tc.algo, v)
		}
	}
}

// TestShippedRLCCFollowsRTTReward: the RL-CC policy, trained by ADPG,
// slows a flow down when its rtt_reward is well above zero (RTT inflation
// × √rate far above the target) and speeds it up when it is at its floor
// −target·scale = −0.8 (inflation under β), after a step that kept the
// rate (previous multiplier 1).
func TestShippedRLCCFollowsRTTReward(t *testing.T) {
	p, _, err := Shipped("rlcc")
	if err != nil {
		t.Fatal(err)
	}
	s := p.NewScratch()
	for _, tc := range []struct {
		rtt  float64
		want string
	}{{-0.8, "up"}, {5, "down"}, {50, "down"}} {
		obs := []float64{1, tc.rtt}
		v := p.Act(s, obs, 1, obs)
		if got := map[bool]string{true: "up", false: "down"}[v > 0]; got != tc.want {
			t.Errorf("rtt_reward %v held for two steps: output %v, want the rate %s", tc.rtt, v, tc.want)
		}
	}
}
