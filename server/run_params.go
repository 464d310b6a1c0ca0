package server

import (
	"fmt"
	"sort"
	"strings"

	"cclab/scenarios"
	"cclab/sim"
	"cclab/store"
	"cclab/web"
)

// The run page's parameters: their values at the start of the run (the
// stored run keeps the effective ones, live changes applied) and each live
// change at its simulated time, with the value it replaced.

// startParams are the resolved parameters of the scenario's algorithm as
// the run started (cfg is the run's scenario built; its scripted events
// are not applied), nil when cfg has none.
func startParams(sc *scenarios.Scenario, cfg *sim.Config) map[string]float64 {
	for _, a := range cfg.Algos {
		if a.Algo != nil && a.Algo.Name == sc.CC.Algorithm {
			m := make(map[string]float64, len(a.Params))
			for k, v := range a.Params {
				m[k] = v
			}
			return m
		}
	}
	return nil
}

// paramRows lists parameters by name.
func paramRows(params map[string]float64) []web.Row {
	names := make([]string, 0, len(params))
	for k := range params {
		names = append(names, k)
	}
	sort.Strings(names)
	rows := make([]web.Row, 0, len(names))
	for _, k := range names {
		rows = append(rows, web.Row{Label: k, Value: g(params[k])})
	}
	return rows
}

// changeRows writes each live change at its simulated time as
// "name: old → new", the old value followed from start.
func changeRows(start map[string]float64, evs []store.RunEvent) []web.Row {
	cur := make(map[string]float64, len(start))
	for k, v := range start {
		cur[k] = v
	}
	rows := make([]web.Row, 0, len(evs))
	for _, e := range evs {
		names := make([]string, 0, len(e.Params))
		for k := range e.Params {
			names = append(names, k)
		}
		sort.Strings(names)
		parts := make([]string, 0, len(names))
		for _, k := range names {
			v := e.Params[k]
			if old, ok := cur[k]; ok {
				parts = append(parts, fmt.Sprintf("%s: %s → %s", k, g(old), g(v)))
			} else {
				parts = append(parts, fmt.Sprintf("%s → %s", k, g(v)))
			}
			cur[k] = v
		}
		rows = append(rows, web.Row{Label: scenarios.FormatTime(sim.Time(e.AtPS)), Value: strings.Join(parts, ", ")})
	}
	return rows
}
