package server

import (
	"cclab/server/runs"
	"cclab/sim/report"
)

// The stream's and the export's message types, by the names the tests of
// this package have always used (they moved to server/runs and
// sim/report with the run lifecycle).
type (
	changeMsg  = runs.Change
	samplesMsg = runs.Samples
	seriesKey  = runs.SeriesKey
	seriesData = runs.SeriesData
	flowJSON   = report.FlowRow
)

// point is one charted sample a test viewer received.
type point struct {
	T int64 // picoseconds
	V float64
}
