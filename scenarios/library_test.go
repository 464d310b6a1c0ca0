package scenarios

import (
	"slices"
	"testing"

	"cclab/sim"
)

func TestLibrary(t *testing.T) {
	lib := Library()
	var ids []string
	for _, e := range lib {
		ids = append(ids, e.ID)
		if e.Description == "" || e.Scenario.Name != e.ID {
			t.Errorf("%s: name %q, description %q", e.ID, e.Scenario.Name, e.Description)
		}
		cfg, meta, err := Build(e.Scenario)
		if err != nil {
			t.Errorf("%s: Build: %v", e.ID, err)
			continue
		}
		if len(cfg.Flows) == 0 || len(meta.FlowCC) != len(cfg.Flows) {
			t.Errorf("%s: %d flows", e.ID, len(cfg.Flows))
		}
		if _, err := sim.New(*cfg); err != nil {
			t.Errorf("%s: the engine refuses the config: %v", e.ID, err)
		}
	}
	want := []string{"dolce-alltoall-ppn16", "dolce-alltoall-ppn40", "dolce-fattree16-cachefollower30", "dolce-fattree16-cachefollower50",
		"dolce-fattree16-datamining30", "dolce-fattree16-datamining50",
		"dolce-fattree8-cachefollower30", "dolce-fattree8-cachefollower50", "dolce-fattree8-datamining30", "dolce-fattree8-datamining50",
		"dolce-incast-repeat", "dolceplus-dumbbell",
		"dumbbell-4to1-none", "fairness-2flows-hpcc", "fattree1024-permutation-hpcc", "fattree16-websearch30", "fdcc-dumbbell-1024to1", "fdcc-dumbbell-16to1", "fdcc-dumbbell-256to1", "fdcc-dumbbell-4to1",
		"fdcc-fattree-192to1", "fdcc-fattree-48to1", "fdcc-fattree-768to1", "fdcc-fattree-fbhadoop", "fdcc-fattree-websearch",
		"fdcc-join4", "fdcc-longshort",
		"incast-16to1-dcqcn", "incast-8to1",
		"leafspine-alltoall-none", "mpcc-exp1", "mpcc-exp1-1ms", "mpcc-exp1-literal", "mpcc-exp2",
		"mpcc-exp3-fbhadoop30", "mpcc-exp3-fbhadoop30-incast", "mpcc-exp3-fbhadoop60", "mpcc-exp3-fbhadoop60-incast",
		"mpcc-exp3-websearch30", "mpcc-exp3-websearch30-incast", "mpcc-exp3-websearch60", "mpcc-exp3-websearch60-incast",
		"qcn-aimd-350us", "qcn-averaging-350us", "qcn-buffer-qcn", "qcn-buffer-tcp",
		"rcc-fairness-4flows", "rcc-fattree320-websearch", "rcc-incast-256to1", "rcc-multibottleneck"}
	if !slices.Equal(ids, want) {
		t.Errorf("library %v, want %v", ids, want)
	}
	e := libraryEntry(t, "dumbbell-4to1-none")
	cfg, _, _ := Build(e.Scenario)
	if len(cfg.Flows) != 4 || cfg.Links[len(cfg.Links)-1].Rate != 1e9 || cfg.Algos[0].Params["windowBDPs"] != 0 {
		t.Errorf("E0a setting: %d flows, links %+v, algos %+v", len(cfg.Flows), cfg.Links, cfg.Algos)
	}
}
