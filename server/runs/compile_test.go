package runs

import (
	"fmt"
	"reflect"
	"testing"

	"cclab/scenarios"
)

// Compiling builds the engine's input from the canonical form it keeps
// (scenarios.BuildCanonical), which must be the run scenarios.BuildWith
// makes from the parsed scenario: the same configuration and names for
// every library scenario, and for one changed after parsing.
func TestCheckBuildsAsBuildWith(t *testing.T) {
	lib := scenarios.Library()
	edited := lib[0]
	edited.ID += " (seed changed after parsing)"
	sc := *edited.Scenario
	sc.Seed += 7
	edited.Scenario = &sc
	for _, e := range append(lib, edited) {
		t.Run(e.ID, func(t *testing.T) {
			want, wantMeta, err := scenarios.BuildWith(e.Scenario, scenarios.BuildOptions{})
			if err != nil {
				t.Fatal(err)
			}
			c, err := checkParsed(e.Scenario, Limits{}, "", scenarios.BuildOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// %+v prints function fields as their addresses, which are
			// the same for the same function, but pointers as addresses
			// too: the workload distribution (a pointer) is compared apart
			gotCfg, wantCfg := *c.Config, *want
			if !reflect.DeepEqual(gotCfg.Workload, wantCfg.Workload) {
				t.Errorf("workload differs from BuildWith's")
			}
			gotCfg.Workload, wantCfg.Workload = nil, nil
			if got, w := fmt.Sprintf("%+v", gotCfg), fmt.Sprintf("%+v", wantCfg); got != w {
				i := 0
				for i < len(got) && i < len(w) && got[i] == w[i] {
					i++
				}
				t.Errorf("configuration differs from BuildWith's at byte %d: %.200q, want %.200q", i, got[max(0, i-100):], w[max(0, i-100):])
			}
			if got, w := fmt.Sprintf("%+v", *c.Meta), fmt.Sprintf("%+v", *wantMeta); got != w {
				t.Errorf("names differ from BuildWith's")
			}
		})
	}
}
