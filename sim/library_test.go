package sim_test

import (
	"os"
	"testing"

	"cclab/scenarios"
	"cclab/sim"
)

// libraryConfig builds a library scenario with --set style edits and, when
// algo is not empty, another algorithm.
func libraryConfig(t testing.TB, name, algo string, sets ...string) sim.Config {
	t.Helper()
	data, err := os.ReadFile("../scenarios/library/" + name + ".json")
	if err != nil {
		t.Fatal(err)
	}
	if len(sets) > 0 {
		if data, err = scenarios.ApplySets(data, sets); err != nil {
			t.Fatal(err)
		}
	}
	if algo != "" {
		if data, err = scenarios.SetAlgorithm(data, algo); err != nil {
			t.Fatal(err)
		}
	}
	return docConfig(t, data)
}

// docConfig is the engine config of a scenario document.
func docConfig(t testing.TB, doc []byte) sim.Config {
	t.Helper()
	sc, err := scenarios.Parse(doc)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _, err := scenarios.Build(sc)
	if err != nil {
		t.Fatal(err)
	}
	return *cfg
}
