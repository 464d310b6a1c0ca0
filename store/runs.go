package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"cclab/sim"
)

// Run statuses. A run is queued, then running (possibly paused and resumed),
// and ends in one of the terminal statuses.
const (
	StatusQueued      = "queued"
	StatusRunning     = "running"
	StatusPaused      = "paused"
	StatusDone        = "done"
	StatusFailed      = "failed"
	StatusCancelled   = "cancelled"
	StatusInterrupted = "interrupted"
)

// interruptedError is the error MarkInterrupted gives the runs it ends.
const interruptedError = "the server stopped before the run finished"

// Terminal reports whether status is final: done, failed, cancelled or
// interrupted.
func Terminal(status string) bool {
	switch status {
	case StatusDone, StatusFailed, StatusCancelled, StatusInterrupted:
		return true
	}
	return false
}

// validStatus reports whether status is one of the Status constants.
func validStatus(status string) bool {
	switch status {
	case StatusQueued, StatusRunning, StatusPaused:
		return true
	}
	return Terminal(status)
}

// Run is one simulation of a scenario.
type Run struct {
	ID, ScenarioID, Name, Algorithm string
	// Params is the effective congestion-control parameter object, e.g.
	// {"wq":1,"wr":10}.
	Params      json.RawMessage
	Seed        uint64
	CodeVersion string
	// Scenario is the effective scenario JSON of this run: overrides
	// applied, live changes appended. GetRun fills it, ListRuns does not.
	Scenario              []byte
	Status, Error, Client string
	Pinned                bool
	// Speed is 0 for as fast as possible, else simulated µs per wall
	// second.
	Speed float64
	// BucketPS is the width of the level-1 (decimated) buckets in
	// picoseconds.
	BucketPS int64
	// CreatedAt, StartedAt and FinishedAt are zero when not set; they are
	// stored with nanosecond precision.
	CreatedAt, StartedAt, FinishedAt time.Time
	Progress                         Progress
	// Summary is the exact bytes of the run's summary.json; nil until the
	// run has finished. GetRun fills it, ListRuns does not.
	Summary json.RawMessage
}

// Progress is how far a run has got.
type Progress struct {
	Fraction    float64 // 0..1 of the simulated time
	SimPS       int64   // simulated time reached
	Events      uint64  // events processed
	WallSeconds float64 // wall time spent simulating
}

// RunEvent is a live parameter change of a run.
type RunEvent struct {
	Seq    int                // 1, 2, 3, ... in the order they were added
	AtPS   int64              // simulated time it took effect
	Params map[string]float64 // the parameters it set
	Wall   time.Time          // wall time it was made
}

// RunFilter selects runs; empty fields match any run.
type RunFilter struct {
	ScenarioID, Algorithm, Status, Client string
	// Limit is the most runs ListRuns returns (0: 100); Offset skips the
	// newest ones. CountRuns ignores both.
	Limit, Offset int
}

// Finish is what FinishRun stores at the end of a run.
type Finish struct {
	Status, Error string    // Status must be terminal
	At            time.Time // finished_at; zero: now
	Progress      Progress
	Chunks        []Chunk // the series' last chunks (Recorder.Flush(true))
	Flows         []sim.FlowResult
	Summary       []byte // summary.json
	// DeferCompaction leaves the chunks as they are, for CompactRun to
	// merge after the run's end is stored and shown (compacting a big run
	// takes seconds: its viewers need not wait for it). Not sent by workers.
	DeferCompaction bool `json:"-"`
}

// NewRunID returns a new random run id: 16 lowercase hex digits.
func NewRunID() string {
	var b [8]byte
	rand.Read(b[:]) // never fails (crypto/rand)
	return hex.EncodeToString(b[:])
}

// nanos returns t as nanoseconds since the epoch, or nil (NULL) for the
// zero time.
func nanos(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}

// fromNanos is the inverse of nanos.
func fromNanos(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.Unix(0, n.Int64)
}

// text returns b as a TEXT value, or nil (NULL) for a nil slice.
func text(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// runKey returns the integer key of the run with the given id, or
// ErrNotFound.
func runKey(ctx context.Context, tx *sql.Tx, id string) (int64, error) {
	var rid int64
	err := tx.QueryRowContext(ctx, `SELECT rid FROM runs WHERE id = ?`, id).Scan(&rid)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrNotFound
	}
	return rid, err
}

// runExists reports whether the run exists, for reads whose query found
// nothing.
func (db *DB) runExists(ctx context.Context, id string) (bool, error) {
	var n int
	err := db.sql.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE id = ?`, id).Scan(&n)
	return n > 0, err
}

// CreateRun stores a new run. It sets r.ID (NewRunID) and r.CreatedAt (now)
// if they are empty, and r.Status to queued if it is empty. The run's
// scenario must exist (ErrNotFound).
func (db *DB) CreateRun(ctx context.Context, r *Run) error {
	if r == nil {
		return errors.New("store: create run: nil run")
	}
	if r.ID == "" {
		r.ID = NewRunID()
	}
	if r.CreatedAt.IsZero() {
		r.CreatedAt = time.Now()
	}
	if r.Status == "" {
		r.Status = StatusQueued
	}
	if !validStatus(r.Status) {
		return fmt.Errorf("store: create run %s: unknown status %q", r.ID, r.Status)
	}
	err := db.write(ctx, func(tx *sql.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM scenarios WHERE id = ?`, r.ScenarioID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("scenario %s: %w", r.ScenarioID, ErrNotFound)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO runs (id, scenario_id, name, algorithm, params, seed,
				code_version, scenario, status, error, client, pinned, speed, bucket_ps,
				created_at, started_at, finished_at, progress_fraction, progress_sim_ps,
				progress_events, progress_wall_seconds, summary)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			r.ID, r.ScenarioID, r.Name, r.Algorithm, text(r.Params), int64(r.Seed),
			r.CodeVersion, text(r.Scenario), r.Status, r.Error, r.Client, r.Pinned, r.Speed, r.BucketPS,
			nanos(r.CreatedAt), nanos(r.StartedAt), nanos(r.FinishedAt), r.Progress.Fraction, r.Progress.SimPS,
			int64(r.Progress.Events), r.Progress.WallSeconds, text(r.Summary))
		return err
	})
	if err != nil {
		return fmt.Errorf("store: create run %s: %w", r.ID, err)
	}
	return nil
}

// runColumns are the columns scanRun reads; the full ones add the scenario
// and the summary.
const (
	runColumns = `r.id, r.scenario_id, r.name, r.algorithm, r.params, r.seed, r.code_version,
		r.status, r.error, r.client, r.pinned, r.speed, r.bucket_ps, r.created_at, r.started_at,
		r.finished_at, r.progress_fraction, r.progress_sim_ps, r.progress_events,
		r.progress_wall_seconds`
	runColumnsFull = runColumns + `, r.scenario, r.summary`
)

// scanRun scans runColumns, or runColumnsFull if full.
func scanRun(row interface{ Scan(...any) error }, full bool) (Run, error) {
	var r Run
	var params, scenario, summary []byte
	var seed, events, created int64
	var started, finished sql.NullInt64
	dest := []any{&r.ID, &r.ScenarioID, &r.Name, &r.Algorithm, &params, &seed, &r.CodeVersion,
		&r.Status, &r.Error, &r.Client, &r.Pinned, &r.Speed, &r.BucketPS, &created, &started,
		&finished, &r.Progress.Fraction, &r.Progress.SimPS, &events,
		&r.Progress.WallSeconds}
	if full {
		dest = append(dest, &scenario, &summary)
	}
	if err := row.Scan(dest...); err != nil {
		return Run{}, err
	}
	r.Params = params
	r.Seed = uint64(seed)
	r.Progress.Events = uint64(events)
	r.CreatedAt = time.Unix(0, created)
	r.StartedAt = fromNanos(started)
	r.FinishedAt = fromNanos(finished)
	r.Scenario = scenario
	r.Summary = summary
	return r, nil
}

// GetRun returns a run with everything, its scenario and summary included.
func (db *DB) GetRun(ctx context.Context, id string) (*Run, error) {
	row := db.sql.QueryRowContext(ctx, `SELECT `+runColumnsFull+` FROM runs r WHERE r.id = ?`, id)
	r, err := scanRun(row, true)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: get run %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get run %s: %w", id, err)
	}
	return &r, nil
}

// where returns the WHERE clause (or "") of the filter and its arguments.
func (f RunFilter) where() (string, []any) {
	var conds []string
	var args []any
	for _, c := range []struct{ col, v string }{
		{"r.scenario_id", f.ScenarioID},
		{"r.algorithm", f.Algorithm},
		{"r.status", f.Status},
		{"r.client", f.Client},
	} {
		if c.v != "" {
			conds = append(conds, c.col+" = ?")
			args = append(args, c.v)
		}
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// ListRuns returns the runs the filter selects, newest first, without their
// scenario and summary.
func (db *DB) ListRuns(ctx context.Context, f RunFilter) ([]Run, error) {
	limit, offset := f.Limit, f.Offset
	if limit <= 0 {
		limit = 100
	}
	if offset < 0 {
		offset = 0
	}
	where, args := f.where()
	args = append(args, limit, offset)
	rows, err := db.sql.QueryContext(ctx, `SELECT `+runColumns+` FROM runs r`+where+`
		ORDER BY r.created_at DESC, r.id DESC LIMIT ? OFFSET ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("store: list runs: %w", err)
	}
	defer rows.Close()
	var out []Run
	for rows.Next() {
		r, err := scanRun(rows, false)
		if err != nil {
			return nil, fmt.Errorf("store: list runs: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list runs: %w", err)
	}
	return out, nil
}

// CountRuns returns the number of runs the filter selects (Limit and Offset
// are ignored).
func (db *DB) CountRuns(ctx context.Context, f RunFilter) (int, error) {
	where, args := f.where()
	var n int
	if err := db.sql.QueryRowContext(ctx, `SELECT count(*) FROM runs r`+where, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: count runs: %w", err)
	}
	return n, nil
}

// updateRun runs one UPDATE of a run's row in a write transaction, with
// ErrNotFound if no row matched. The query's last parameter is the run id.
func (db *DB) updateRun(ctx context.Context, query string, args ...any) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, query, args...)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		if n == 0 {
			return ErrNotFound
		}
		return nil
	})
}

// StartRun sets a run's status to running and its start time.
func (db *DB) StartRun(ctx context.Context, id string, at time.Time) error {
	err := db.updateRun(ctx, `UPDATE runs SET status = ?, started_at = ? WHERE id = ?`,
		StatusRunning, nanos(at), id)
	if err != nil {
		return fmt.Errorf("store: start run %s: %w", id, err)
	}
	return nil
}

// SetStatus sets a run's status and error message, e.g. running <-> paused.
// A terminal status also sets the finish time to now if it is not set.
func (db *DB) SetStatus(ctx context.Context, id, status, errMsg string) error {
	if !validStatus(status) {
		return fmt.Errorf("store: set status of run %s: unknown status %q", id, status)
	}
	var finished any
	if Terminal(status) {
		finished = time.Now().UnixNano()
	}
	err := db.updateRun(ctx, `UPDATE runs SET status = ?, error = ?,
			finished_at = coalesce(finished_at, ?) WHERE id = ?`,
		status, errMsg, finished, id)
	if err != nil {
		return fmt.Errorf("store: set status of run %s: %w", id, err)
	}
	return nil
}

// SetSpeed records a run's pacing (0: as fast as possible, else simulated
// µs per wall second) when it changes during the run.
func (db *DB) SetSpeed(ctx context.Context, id string, speed float64) error {
	err := db.updateRun(ctx, `UPDATE runs SET speed = ? WHERE id = ?`, speed, id)
	if err != nil {
		return fmt.Errorf("store: set speed of run %s: %w", id, err)
	}
	return nil
}

// SetPinned pins or unpins a run; Prune never deletes a pinned run.
func (db *DB) SetPinned(ctx context.Context, id string, pinned bool) error {
	err := db.updateRun(ctx, `UPDATE runs SET pinned = ? WHERE id = ?`, pinned, id)
	if err != nil {
		return fmt.Errorf("store: pin run %s: %w", id, err)
	}
	return nil
}

// AddRunEvent stores a live parameter change of a run, numbered next
// (ev.Seq is ignored; a zero ev.Wall is now), and sets the run's effective
// scenario and params to the given ones (nil leaves them as they are), in
// one transaction.
func (db *DB) AddRunEvent(ctx context.Context, runID string, ev RunEvent, scenario, params []byte) error {
	pm := ev.Params
	if pm == nil {
		pm = map[string]float64{}
	}
	pj, err := json.Marshal(pm)
	if err != nil {
		return fmt.Errorf("store: add event to run %s: %w", runID, err)
	}
	wall := ev.Wall
	if wall.IsZero() {
		wall = time.Now()
	}
	err = db.write(ctx, func(tx *sql.Tx) error {
		rid, err := runKey(ctx, tx, runID)
		if err != nil {
			return err
		}
		var seq int
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(seq), 0) + 1 FROM run_events WHERE run = ?`, rid).Scan(&seq); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO run_events (run, seq, at_ps, params, wall_at) VALUES (?, ?, ?, ?, ?)`,
			rid, seq, ev.AtPS, string(pj), wall.UnixNano()); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE runs SET scenario = coalesce(?, scenario), params = coalesce(?, params) WHERE rid = ?`,
			text(scenario), text(params), rid)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: add event to run %s: %w", runID, err)
	}
	return nil
}

// RunEvents returns a run's live parameter changes in order.
func (db *DB) RunEvents(ctx context.Context, runID string) ([]RunEvent, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT e.seq, e.at_ps, e.params, e.wall_at
		FROM run_events e JOIN runs r ON r.rid = e.run WHERE r.id = ? ORDER BY e.seq`, runID)
	if err != nil {
		return nil, fmt.Errorf("store: events of run %s: %w", runID, err)
	}
	defer rows.Close()
	var out []RunEvent
	for rows.Next() {
		var ev RunEvent
		var pj []byte
		var wall int64
		if err := rows.Scan(&ev.Seq, &ev.AtPS, &pj, &wall); err != nil {
			return nil, fmt.Errorf("store: events of run %s: %w", runID, err)
		}
		if err := json.Unmarshal(pj, &ev.Params); err != nil {
			return nil, fmt.Errorf("store: events of run %s: event %d: %w", runID, ev.Seq, err)
		}
		ev.Wall = time.Unix(0, wall)
		out = append(out, ev)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: events of run %s: %w", runID, err)
	}
	if len(out) == 0 {
		if ok, err := db.runExists(ctx, runID); err != nil {
			return nil, fmt.Errorf("store: events of run %s: %w", runID, err)
		} else if !ok {
			return nil, fmt.Errorf("store: events of run %s: %w", runID, ErrNotFound)
		}
	}
	return out, nil
}

// setProgress is the UPDATE of a run's progress columns; its parameters are
// progressArgs then the rid.
const setProgress = `UPDATE runs SET progress_fraction = ?, progress_sim_ps = ?,
	progress_events = ?, progress_wall_seconds = ? WHERE rid = ?`

func progressArgs(p Progress, rid int64) []any {
	return []any{p.Fraction, p.SimPS, int64(p.Events), p.WallSeconds, rid}
}

// AppendSeries stores chunks of a run's series (from Recorder.Flush) and its
// progress, in one transaction.
func (db *DB) AppendSeries(ctx context.Context, runID string, chunks []Chunk, p Progress) error {
	if err := checkChunks(chunks); err != nil {
		return fmt.Errorf("store: append series of run %s: %w", runID, err)
	}
	err := db.write(ctx, func(tx *sql.Tx) error {
		rid, err := runKey(ctx, tx, runID)
		if err != nil {
			return err
		}
		if err := insertChunks(ctx, tx, rid, chunks); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, setProgress, progressArgs(p, rid)...)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: append series of run %s: %w", runID, err)
	}
	return nil
}

// FinishRun stores the end of a run in one transaction: its last chunks,
// its flows, summary, status, error, finish time and progress. In the same
// transaction it rewrites the run's short chunks (one per series, level and
// flush) as full ones (compactRun), which makes them smaller and several
// times faster to read; the points do not change.
func (db *DB) FinishRun(ctx context.Context, runID string, f Finish) error {
	if !Terminal(f.Status) {
		return fmt.Errorf("store: finish run %s: status %q is not terminal", runID, f.Status)
	}
	if err := checkChunks(f.Chunks); err != nil {
		return fmt.Errorf("store: finish run %s: %w", runID, err)
	}
	at := f.At
	if at.IsZero() {
		at = time.Now()
	}
	err := db.write(ctx, func(tx *sql.Tx) error {
		rid, err := runKey(ctx, tx, runID)
		if err != nil {
			return err
		}
		if err := insertChunks(ctx, tx, rid, f.Chunks); err != nil {
			return err
		}
		if !f.DeferCompaction {
			if err := compactRun(ctx, tx, rid); err != nil {
				return fmt.Errorf("compacting the series: %w", err)
			}
		}
		if err := insertFlows(ctx, tx, rid, f.Flows); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE runs SET status = ?, error = ?, finished_at = ?, summary = ? WHERE rid = ?`,
			f.Status, f.Error, at.UnixNano(), text(f.Summary), rid); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, setProgress, progressArgs(f.Progress, rid)...)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: finish run %s: %w", runID, err)
	}
	return nil
}

// CompactRun merges a finished run's short chunks (see FinishRun and
// Finish.DeferCompaction) in transactions of compactBatch series each, so
// that other runs' writes (a Stop's final write among them) wait for one
// batch at most, not for the whole run; each series is rewritten in one
// transaction, so readers see its old chunks or its new ones. The points do
// not change.
func (db *DB) CompactRun(ctx context.Context, runID string) error {
	err := func() error {
		var rid int64
		if err := db.sql.QueryRowContext(ctx, `SELECT rid FROM runs WHERE id = ?`, runID).Scan(&rid); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return ErrNotFound
			}
			return err
		}
		groups, err := compactable(ctx, db.sql, rid)
		if err != nil {
			return err
		}
		for lo := 0; lo < len(groups); lo += compactBatch {
			batch := groups[lo:min(lo+compactBatch, len(groups))]
			if err := db.write(ctx, func(tx *sql.Tx) error { return compactGroups(ctx, tx, rid, batch) }); err != nil {
				return err
			}
		}
		return nil
	}()
	if err != nil {
		return fmt.Errorf("store: compact run %s: %w", runID, err)
	}
	return nil
}

// compactBatch is how many series CompactRun rewrites per transaction
// (a 1024-host run has tens of thousands).
const compactBatch = 256

// insertFlows inserts a run's flows, one row each.
func insertFlows(ctx context.Context, tx *sql.Tx, rid int64, flows []sim.FlowResult) error {
	if len(flows) == 0 {
		return nil
	}
	stmt, err := tx.PrepareContext(ctx, `INSERT INTO flows (run, id, src, dst, size, start_ps, finish_ps,
		fct_ps, ideal_ps, started, finished, algorithm, tag, retx, timeouts)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for _, f := range flows {
		if _, err := stmt.ExecContext(ctx, rid, f.ID, f.Src, f.Dst, f.Size, int64(f.Start), int64(f.Finish),
			int64(f.FCT), int64(f.IdealFCT), f.Started, f.Finished, f.Algorithm, f.Tag, f.Retx, f.Timeouts); err != nil {
			return fmt.Errorf("flow %d: %w", f.ID, err)
		}
	}
	return nil
}

// Flows returns a finished run's flows by id, as the engine reported them.
func (db *DB) Flows(ctx context.Context, runID string) ([]sim.FlowResult, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT f.id, f.src, f.dst, f.size, f.start_ps, f.finish_ps,
			f.fct_ps, f.ideal_ps, f.started, f.finished, f.algorithm, f.tag, f.retx, f.timeouts
		FROM flows f JOIN runs r ON r.rid = f.run WHERE r.id = ? ORDER BY f.id`, runID)
	if err != nil {
		return nil, fmt.Errorf("store: flows of run %s: %w", runID, err)
	}
	defer rows.Close()
	var out []sim.FlowResult
	for rows.Next() {
		var f sim.FlowResult
		if err := rows.Scan(&f.ID, &f.Src, &f.Dst, &f.Size, &f.Start, &f.Finish,
			&f.FCT, &f.IdealFCT, &f.Started, &f.Finished, &f.Algorithm, &f.Tag, &f.Retx, &f.Timeouts); err != nil {
			return nil, fmt.Errorf("store: flows of run %s: %w", runID, err)
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: flows of run %s: %w", runID, err)
	}
	if len(out) == 0 {
		if ok, err := db.runExists(ctx, runID); err != nil {
			return nil, fmt.Errorf("store: flows of run %s: %w", runID, err)
		} else if !ok {
			return nil, fmt.Errorf("store: flows of run %s: %w", runID, ErrNotFound)
		}
	}
	return out, nil
}

// DeleteRun deletes a run with its series, flows and events.
func (db *DB) DeleteRun(ctx context.Context, id string) error {
	err := db.updateRun(ctx, `DELETE FROM runs WHERE id = ?`, id)
	if err != nil {
		return fmt.Errorf("store: delete run %s: %w", id, err)
	}
	return nil
}

// activeStatuses are the statuses of runs that have not finished.
const activeStatuses = `('queued', 'running', 'paused')`

// MarkInterrupted ends every queued, running or paused run as interrupted,
// finished now, and returns their ids, oldest first. The server calls it at
// start-up for the runs a previous process left.
func (db *DB) MarkInterrupted(ctx context.Context) ([]string, error) {
	ids, err := db.markInterrupted(ctx, "runs", "created_at", "finished_at", interruptedError)
	if err != nil {
		return nil, fmt.Errorf("store: mark interrupted runs: %w", err)
	}
	return ids, nil
}

// markInterrupted ends every row of table (runs or train_jobs) whose
// status is active as interrupted with message msg, finished now, and
// returns their ids in order of the created column.
func (db *DB) markInterrupted(ctx context.Context, table, created, finished, msg string) ([]string, error) {
	var ids []string
	err := db.write(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id FROM `+table+` WHERE status IN `+activeStatuses+` ORDER BY `+created+`, id`)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		if err := rows.Err(); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE `+table+` SET status = ?, error = ?, `+finished+` = ? WHERE status IN `+activeStatuses,
			StatusInterrupted, msg, time.Now().UnixNano())
		return err
	})
	return ids, err
}

// Prune deletes the oldest (by creation) unpinned runs in a terminal status
// until at most maxRuns runs are left (0: no limit) and SizeBytes is at most
// maxBytes (0: no limit), or no such run is left; then it gives the freed
// pages back to the file system (PRAGMA incremental_vacuum). It returns the
// ids it deleted, oldest first. Each run is deleted in its own transaction,
// so that writers of live runs wait for one deletion at most.
func (db *DB) Prune(ctx context.Context, maxRuns int, maxBytes int64) ([]string, error) {
	var deleted []string
	for {
		id, err := db.pruneOne(ctx, maxRuns, maxBytes)
		if err != nil {
			return deleted, fmt.Errorf("store: prune: %w", err)
		}
		if id == "" {
			break
		}
		deleted = append(deleted, id)
	}
	if len(deleted) > 0 {
		db.wmu.Lock()
		_, err := db.sql.ExecContext(ctx, `PRAGMA incremental_vacuum`)
		db.wmu.Unlock()
		if err != nil {
			return deleted, fmt.Errorf("store: prune: incremental vacuum: %w", err)
		}
	}
	return deleted, nil
}

// pruneOne deletes the oldest prunable run if the database is over a limit,
// and returns its id, or "" if it deleted nothing.
func (db *DB) pruneOne(ctx context.Context, maxRuns int, maxBytes int64) (string, error) {
	var id string
	err := db.write(ctx, func(tx *sql.Tx) error {
		over := false
		if maxRuns > 0 {
			var n int
			if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM runs`).Scan(&n); err != nil {
				return err
			}
			over = n > maxRuns
		}
		if !over && maxBytes > 0 {
			var size int64
			if err := tx.QueryRowContext(ctx, sizeQuery).Scan(&size); err != nil {
				return err
			}
			over = size > maxBytes
		}
		if !over {
			return nil
		}
		var rid int64
		err := tx.QueryRowContext(ctx, `SELECT rid, id FROM runs
			WHERE pinned = 0 AND status IN ('done', 'failed', 'cancelled', 'interrupted')
			ORDER BY created_at, id LIMIT 1`).Scan(&rid, &id)
		if errors.Is(err, sql.ErrNoRows) {
			return nil
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM runs WHERE rid = ?`, rid)
		return err
	})
	if err != nil {
		return "", err
	}
	return id, nil
}

// ResetRun clears what an earlier attempt of a run stored before a new
// attempt starts it again (a remote worker that died mid-run: its work is
// redelivered): series, chunks, flows and live changes go, the scenario and
// parameters go back to the run's own, progress to zero, status to queued.
// Nothing is then stored twice.
func (db *DB) ResetRun(ctx context.Context, id string, scenario, params []byte) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		rid, err := runKey(ctx, tx, id)
		if err != nil {
			return err
		}
		for _, table := range []string{"chunks", "series", "flows", "run_events"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE run = ?`, rid); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE runs SET status = ?, error = '', scenario = ?, params = ?, started_at = NULL,
			finished_at = NULL, summary = NULL, progress_fraction = 0, progress_sim_ps = 0, progress_events = 0,
			progress_wall_seconds = 0 WHERE rid = ?`, StatusQueued, text(scenario), text(params), rid)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: reset run %s: %w", id, err)
	}
	return nil
}
