package runs

import (
	"context"

	"cclab/store"
)

// storedHub builds a hub holding a finished run's decimated history, its
// changes, its last progress and its final message, from the store.
func storedHub(ctx context.Context, db *store.DB, id string) (*Hub, error) {
	run, err := db.GetRun(ctx, id)
	if err != nil {
		return nil, err
	}
	h := newHub(run.BucketPS)
	series, err := db.Series(ctx, id, store.SeriesQuery{Level: 1})
	if err != nil {
		return nil, err
	}
	keys, err := db.SeriesKeys(ctx, id)
	if err != nil {
		return nil, err
	}
	for _, k := range keys {
		h.addKeyLocked(SeriesKey{Index: k.Index, Metric: k.Metric, Entity: k.Entity})
	}
	for _, sr := range series {
		if sr.Index >= len(h.pts) {
			continue
		}
		pts := make([]point, len(sr.T))
		for j := range sr.T {
			pts[j] = point{sr.T[j], sr.V[j]}
		}
		h.pts[sr.Index] = pts
	}
	evs, err := db.RunEvents(ctx, id)
	if err != nil {
		return nil, err
	}
	for _, e := range evs {
		h.changes = append(h.changes, ChangeOf(e))
	}
	h.progress = Progress{Type: "progress", Status: run.Status, Progress: run.Progress.Fraction,
		SimNs: float64(run.Progress.SimPS) / 1e3, Events: run.Progress.Events, WallSeconds: run.Progress.WallSeconds,
		Speed: SpeedJSON(run.Speed)}
	if run.Progress.WallSeconds > 0 {
		h.progress.EventsPerSecond = float64(run.Progress.Events) / run.Progress.WallSeconds
	}
	f := Final{Type: "done", Status: run.Status, Error: run.Error, Summary: run.Summary}
	if run.Status == store.StatusFailed {
		f.Type = "failed"
	}
	h.final = &f
	return h, nil
}

// ChangeOf is a stored live change as the stream shows it.
func ChangeOf(e store.RunEvent) Change {
	return Change{Type: "parameter-changed", Seq: e.Seq, AtNs: float64(e.AtPS) / 1e3, Params: e.Params}
}

// SpeedJSON is a run's speed as the API shows it: "max", or simulated
// microseconds per wall second.
func SpeedJSON(speed float64) any {
	if speed <= 0 {
		return "max"
	}
	return speed
}
