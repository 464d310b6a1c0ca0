package scenarios

import (
	"strings"
	"testing"

	"cclab/cc"
)

func TestCCPolicy(t *testing.T) {
	doc := func(algo, policy string) []byte {
		p := ""
		if policy != "" {
			p = `, "policy": "` + policy + `"`
		}
		return []byte(`{"name": "p", "topology": {"kind": "dumbbell", "senders": 2, "receivers": 1,
		  "hostLink": {"rate": "100Gbps", "delay": "1us"}},
		  "cc": {"algorithm": "` + algo + `"` + p + `},
		  "workload": [{"kind": "incast", "senders": ["h0", "h1"], "receiver": "r0", "size": "100KB", "start": "0s"}]}`)
	}
	for _, tc := range []struct {
		algo, policy, parseErr, buildErr string
	}{
		{"fdcc", "", "", ""},
		{"fdcc", "default", "", ""},
		{"rlcc", "mine", "", `cc.policy: policy "mine": only the shipped policy`},
		{"hpcc", "mine", "cc.policy: hpcc takes no trained policy", ""},
	} {
		s, err := Parse(doc(tc.algo, tc.policy))
		if tc.parseErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.parseErr) {
				t.Errorf("%s/%q: parse error %v, want %q", tc.algo, tc.policy, err, tc.parseErr)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s/%q: %v", tc.algo, tc.policy, err)
		}
		canon, err := s.Canonical()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(string(canon), `"policy"`); got != (tc.policy != "") {
			t.Errorf("%s/%q: canonical form %s: policy present %v", tc.algo, tc.policy, canon, got)
		}
		_, _, err = Build(s)
		if tc.buildErr == "" && err != nil || tc.buildErr != "" && (err == nil || !strings.Contains(err.Error(), tc.buildErr)) {
			t.Errorf("%s/%q: build error %v, want %q", tc.algo, tc.policy, err, tc.buildErr)
		}
	}
	// A resolver's policy of the wrong shape is refused at cc.policy.
	s, err := Parse(doc("fdcc", "two-values"))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = BuildWith(s, BuildOptions{Policy: func(algo, name string) (cc.Policy, error) { return shapePolicy{2}, nil }})
	if err == nil || !strings.Contains(err.Error(), "cc.policy") || !strings.Contains(err.Error(), "observations of 2 values") {
		t.Errorf("wrong-shape policy: %v", err)
	}
}

type shapePolicy struct{ obs int }

func (p shapePolicy) Shape() (int, int)  { return p.obs, 1 }
func (p shapePolicy) Limit() float64     { return 1 }
func (p shapePolicy) NewActor() cc.Actor { return nil }
