package web

import (
	"strconv"
	"strings"
)

// SweepAxis is one swept parameter: its scenario path and values.
type SweepAxis struct {
	Path   string
	Values []string
}

// SweepPage is one sweep's page: what the server knows when it renders it
// (static/js/sweep.js then polls GET /api/sweeps/{id} for the points).
type SweepPage struct {
	ID, Name                  string
	ScenarioID, ScenarioName  string
	Status, Created, Finished string
	Axes                      []SweepAxis
	Seeds                     []uint64
	RunsDone, RunsTotal       int
	// Mine: the viewer may cancel and delete it (its owner, or an
	// instructor).
	Mine bool
}

// SweepRow is one sweep in the list.
type SweepRow struct {
	ID, Name, ScenarioID, Status, Created string
	Paths                                 []string
	RunsDone, RunsTotal                   int
}

// SweepsPage is the list of sweeps, newest first.
type SweepsPage struct {
	Sweeps []SweepRow
}

// gridText writes a sweep's grid as "cc.params.wr ∈ {1, 10, 100} × workload[0].load ∈ {0.3, 0.5}".
func gridText(axes []SweepAxis) string {
	parts := make([]string, len(axes))
	for i, a := range axes {
		parts[i] = a.Path + " ∈ {" + strings.Join(a.Values, ", ") + "}"
	}
	return strings.Join(parts, " × ")
}

// seedsText writes seeds as "1, 2, 3".
func seedsText(seeds []uint64) string {
	parts := make([]string, len(seeds))
	for i, s := range seeds {
		parts[i] = strconv.FormatUint(s, 10)
	}
	return strings.Join(parts, ", ")
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// joinPaths writes a sweep's axes as "cc.params.wr × workload[0].load".
func joinPaths(paths []string) string { return strings.Join(paths, " × ") }
