package runs

import (
	"testing"

	"cclab/scenarios"
)

// The expected wall time orders the library as measured (see
// estimateWall): MPCC Exp. 1 is a blink, the 1024-host permutation takes
// seconds, the 1024-to-1 FDCC incast over 30 s (the lab asks first).
func TestEstimateWall(t *testing.T) {
	want := map[string][2]float64{
		"mpcc-exp1":                    {0, 0.5},
		"incast-16to1-dcqcn":           {0.01, 0.5},
		"mpcc-exp3-websearch30":        {0.5, 3},
		"fattree1024-permutation-hpcc": {1, 20},
		"fdcc-dumbbell-1024to1":        {30, 3600},
	}
	for _, e := range scenarios.Library() {
		w, ok := want[e.ID]
		if !ok {
			continue
		}
		c, err := Compile(e.Source, Limits{}, "")
		if err != nil {
			t.Fatal(err)
		}
		c.Release()
		if got := c.Cost.WallSeconds; got < w[0] || got > w[1] {
			t.Errorf("%s: expected %.3g s, want within [%g, %g]", e.ID, got, w[0], w[1])
		}
		delete(want, e.ID)
	}
	if len(want) > 0 {
		t.Errorf("not in the library: %v", want)
	}
}
