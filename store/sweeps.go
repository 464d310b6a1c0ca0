package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Sweep statuses.
const (
	SweepRunning   = "running"
	SweepDone      = "done"
	SweepCancelled = "cancelled"
)

// Sweep is a scenario run over a grid of parameter values and seeds; its
// runs are ordinary runs (SweepRun links them).
type Sweep struct {
	ID, Name, ScenarioID string
	Scenario             []byte          // the scenario JSON swept
	Spec                 json.RawMessage // {"axes": [...], "seeds": [...]}
	Owner, Status        string
	Created, Finished    time.Time // Finished is zero while running
}

// SweepRun is one (point, seed) of a sweep and its run, with what the store
// knows of that run: Run is "" until submitted; Status is "" when the run
// is missing (not submitted, or deleted by retention).
type SweepRun struct {
	Point, Seed int
	Run         string
	Status      string
	Error       string
	Summary     json.RawMessage // nil until the run finished
}

// CreateSweep stores a sweep (a new ID when it has none) with a row for
// every one of its points × seeds runs, none submitted.
func (db *DB) CreateSweep(ctx context.Context, s *Sweep, points, seeds int) error {
	if s.ID == "" {
		s.ID = NewRunID()
	}
	if s.Created.IsZero() {
		s.Created = time.Now()
	}
	if s.Status == "" {
		s.Status = SweepRunning
	}
	err := db.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO sweeps (id, name, scenario_id, scenario, spec, owner, status, created)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, s.ID, s.Name, s.ScenarioID, string(s.Scenario), string(s.Spec), s.Owner, s.Status,
			s.Created.UnixNano()); err != nil {
			return err
		}
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO sweep_runs (sweep, point, seed) VALUES (?, ?, ?)`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for p := 0; p < points; p++ {
			for k := 0; k < seeds; k++ {
				if _, err := stmt.ExecContext(ctx, s.ID, p, k); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: creating sweep %s: %w", s.Name, err)
	}
	return nil
}

const sweepCols = `id, name, scenario_id, scenario, spec, owner, status, created, finished`

func scanSweep(row interface{ Scan(...any) error }) (*Sweep, error) {
	var s Sweep
	var scenario, spec string
	var created int64
	var finished sql.NullInt64
	if err := row.Scan(&s.ID, &s.Name, &s.ScenarioID, &scenario, &spec, &s.Owner, &s.Status, &created, &finished); err != nil {
		return nil, err
	}
	s.Scenario, s.Spec = []byte(scenario), json.RawMessage(spec)
	s.Created = time.Unix(0, created)
	if finished.Valid {
		s.Finished = time.Unix(0, finished.Int64)
	}
	return &s, nil
}

// GetSweep returns a sweep by id.
func (db *DB) GetSweep(ctx context.Context, id string) (*Sweep, error) {
	s, err := scanSweep(db.sql.QueryRowContext(ctx, `SELECT `+sweepCols+` FROM sweeps WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: sweep %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: sweep %s: %w", id, err)
	}
	return s, nil
}

// ListSweeps returns the sweeps, newest first (status "" for all).
func (db *DB) ListSweeps(ctx context.Context, status string) ([]Sweep, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT `+sweepCols+` FROM sweeps WHERE ? = '' OR status = ? ORDER BY created DESC, id DESC`,
		status, status)
	if err != nil {
		return nil, fmt.Errorf("store: list sweeps: %w", err)
	}
	defer rows.Close()
	var out []Sweep
	for rows.Next() {
		s, err := scanSweep(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list sweeps: %w", err)
		}
		out = append(out, *s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list sweeps: %w", err)
	}
	return out, nil
}

// SweepRuns returns a sweep's runs by point, then seed, each with its
// run's status and error, and its summary when withSummary is set.
func (db *DB) SweepRuns(ctx context.Context, id string, withSummary bool) ([]SweepRun, error) {
	summary := "NULL"
	if withSummary {
		summary = "r.summary"
	}
	rows, err := db.sql.QueryContext(ctx, `SELECT w.point, w.seed, w.run, coalesce(r.status, ''), coalesce(r.error, ''), `+summary+`
		FROM sweep_runs w LEFT JOIN runs r ON r.id = w.run AND w.run != ''
		WHERE w.sweep = ? ORDER BY w.point, w.seed`, id)
	if err != nil {
		return nil, fmt.Errorf("store: runs of sweep %s: %w", id, err)
	}
	defer rows.Close()
	var out []SweepRun
	for rows.Next() {
		var x SweepRun
		var sum sql.NullString
		if err := rows.Scan(&x.Point, &x.Seed, &x.Run, &x.Status, &x.Error, &sum); err != nil {
			return nil, fmt.Errorf("store: runs of sweep %s: %w", id, err)
		}
		if sum.Valid {
			x.Summary = json.RawMessage(sum.String)
		}
		out = append(out, x)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: runs of sweep %s: %w", id, err)
	}
	return out, nil
}

// SetSweepRun links (point, seed) of a sweep to a run (replacing the run
// it had, which the caller deletes if it should go).
func (db *DB) SetSweepRun(ctx context.Context, id string, point, seed int, run string) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE sweep_runs SET run = ? WHERE sweep = ? AND point = ? AND seed = ?`, run, id, point, seed)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: sweep %s point %d seed %d: %w", id, point, seed, err)
	}
	return nil
}

// FinishSweep sets a running sweep's final status (done or cancelled); it
// reports whether the sweep was running.
func (db *DB) FinishSweep(ctx context.Context, id, status string, at time.Time) (bool, error) {
	var changed bool
	err := db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `UPDATE sweeps SET status = ?, finished = ? WHERE id = ? AND status = ?`,
			status, at.UnixNano(), id, SweepRunning)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		changed = n > 0
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("store: finish sweep %s: %w", id, err)
	}
	return changed, nil
}

// SweepOfRun returns the id of the sweep a run belongs to, or "".
func (db *DB) SweepOfRun(ctx context.Context, run string) (string, error) {
	var id string
	err := db.sql.QueryRowContext(ctx, `SELECT sweep FROM sweep_runs WHERE run = ? LIMIT 1`, run).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("store: sweep of run %s: %w", run, err)
	}
	return id, nil
}

// DeleteSweep deletes a sweep, its links and the runs it made.
func (db *DB) DeleteSweep(ctx context.Context, id string) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM runs WHERE id IN (SELECT run FROM sweep_runs WHERE sweep = ? AND run != '')`, id); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM sweeps WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return ErrNotFound
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: delete sweep %s: %w", id, err)
	}
	return nil
}

// RunSummary returns a run's summary.json (nil until it has finished).
func (db *DB) RunSummary(ctx context.Context, id string) ([]byte, error) {
	var sum sql.NullString
	err := db.sql.QueryRowContext(ctx, `SELECT summary FROM runs WHERE id = ?`, id).Scan(&sum)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: run %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: summary of run %s: %w", id, err)
	}
	if !sum.Valid {
		return nil, nil
	}
	return []byte(sum.String), nil
}
