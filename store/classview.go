package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// The class view of a scenario (issue 21): the scenarios edited from one
// (their parent), the runs of them with the names students gave them, and
// pinned exercises.

// maxFamily bounds the scenarios of one family (a scenario and every copy
// edited from it, transitively).
const maxFamily = 2000

// SetScenarioParent records that scenario id was edited from parent. It
// keeps a parent already recorded, and ignores a parent equal to id or one
// that is not stored.
func (db *DB) SetScenarioParent(ctx context.Context, id, parent string) error {
	if parent == "" || parent == id {
		return nil
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE scenarios SET parent = ?
			WHERE id = ? AND parent IS NULL AND NOT builtin AND EXISTS (SELECT 1 FROM scenarios WHERE id = ?)`, parent, id, parent)
		if err != nil {
			return fmt.Errorf("store: set parent of %s: %w", id, err)
		}
		return nil
	})
}

// ScenarioParent returns the scenario id was edited from ("" if none).
func (db *DB) ScenarioParent(ctx context.Context, id string) (string, error) {
	var p sql.NullString
	err := db.sql.QueryRowContext(ctx, `SELECT parent FROM scenarios WHERE id = ?`, id).Scan(&p)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("store: parent of %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("store: parent of %s: %w", id, err)
	}
	return p.String, nil
}

// ScenarioFamily returns id and every scenario edited from it, directly or
// through other copies (at most maxFamily).
func (db *DB) ScenarioFamily(ctx context.Context, id string) ([]string, error) {
	rows, err := db.sql.QueryContext(ctx, `WITH RECURSIVE fam(id) AS (
			SELECT ? UNION SELECT s.id FROM scenarios s JOIN fam ON s.parent = fam.id)
		SELECT id FROM fam LIMIT ?`, id, maxFamily)
	if err != nil {
		return nil, fmt.Errorf("store: family of %s: %w", id, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, fmt.Errorf("store: family of %s: %w", id, err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// SetRunLabel stores the name a student gave a run.
func (db *DB) SetRunLabel(ctx context.Context, id, label string) error {
	return db.updateRun(ctx, `UPDATE runs SET label = ? WHERE id = ?`, label, id)
}

// ClassRun is one run in the class view of a scenario.
type ClassRun struct {
	ID, ScenarioID, Name, Algorithm, Status, Client, Label string
	CreatedAt                                              time.Time
	Summary                                                json.RawMessage // nil until finished
}

// ClassRuns returns the runs of the given scenarios, newest first (at most
// limit), only those of client unless client is "".
func (db *DB) ClassRuns(ctx context.Context, scenarios []string, client string, limit int) ([]ClassRun, error) {
	if len(scenarios) == 0 {
		return nil, nil
	}
	ids, _ := json.Marshal(scenarios)
	q := `SELECT id, scenario_id, name, algorithm, status, client, label, created_at, summary FROM runs
		WHERE scenario_id IN (SELECT value FROM json_each(?))`
	args := []any{string(ids)}
	if client != "" {
		q += ` AND client = ?`
		args = append(args, client)
	}
	q += ` ORDER BY created_at DESC, id DESC LIMIT ?`
	args = append(args, limit)
	rows, err := db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("store: class runs: %w", err)
	}
	defer rows.Close()
	var out []ClassRun
	for rows.Next() {
		var r ClassRun
		var created int64
		var sum []byte
		if err := rows.Scan(&r.ID, &r.ScenarioID, &r.Name, &r.Algorithm, &r.Status, &r.Client, &r.Label, &created, &sum); err != nil {
			return nil, fmt.Errorf("store: class runs: %w", err)
		}
		r.CreatedAt = time.Unix(0, created)
		if len(sum) > 0 {
			r.Summary = sum
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Exercise is a pinned exercise: a scenario whose copies may change only
// the fields not locked, with a task for the students.
type Exercise struct {
	ScenarioID string
	Locked     []string
	Task       string
	Owner      string
	CreatedAt  time.Time
}

// PutExercise pins (or re-pins) an exercise on its scenario.
func (db *DB) PutExercise(ctx context.Context, ex *Exercise) error {
	if ex.CreatedAt.IsZero() {
		ex.CreatedAt = time.Now()
	}
	locked, err := json.Marshal(ex.Locked)
	if err != nil {
		return err
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO exercises (scenario_id, locked, task, owner, created) VALUES (?, ?, ?, ?, ?)
			ON CONFLICT (scenario_id) DO UPDATE SET locked = excluded.locked, task = excluded.task,
				owner = excluded.owner, created = excluded.created`,
			ex.ScenarioID, string(locked), ex.Task, ex.Owner, ex.CreatedAt.UnixNano())
		if err != nil {
			return fmt.Errorf("store: put exercise %s: %w", ex.ScenarioID, err)
		}
		return nil
	})
}

// GetExercise returns the exercise pinned on scenario id (ErrNotFound if
// none).
func (db *DB) GetExercise(ctx context.Context, id string) (*Exercise, error) {
	ex := &Exercise{ScenarioID: id}
	var locked string
	var created int64
	err := db.sql.QueryRowContext(ctx, `SELECT locked, task, owner, created FROM exercises WHERE scenario_id = ?`, id).
		Scan(&locked, &ex.Task, &ex.Owner, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: exercise %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: exercise %s: %w", id, err)
	}
	if err := json.Unmarshal([]byte(locked), &ex.Locked); err != nil {
		return nil, fmt.Errorf("store: exercise %s: %w", id, err)
	}
	ex.CreatedAt = time.Unix(0, created)
	return ex, nil
}

// maxAncestry bounds the parents followed from a scenario (a student
// editing and running all afternoon makes a long chain).
const maxAncestry = 100_000

// ancestors is a query of the scenarios id was edited from, with their
// distance (0: id itself).
const ancestors = `WITH RECURSIVE anc(id, depth) AS (
		SELECT ?, 0
		UNION ALL SELECT s.parent, anc.depth + 1 FROM scenarios s JOIN anc ON s.id = anc.id
			WHERE s.parent IS NOT NULL AND anc.depth < ?)`

// ExerciseOf returns the exercise that governs scenario id: its own, or the
// nearest ancestor's (through parents).
func (db *DB) ExerciseOf(ctx context.Context, id string) (*Exercise, error) {
	var at string
	err := db.sql.QueryRowContext(ctx, ancestors+`
		SELECT e.scenario_id FROM anc JOIN exercises e ON e.scenario_id = anc.id ORDER BY anc.depth LIMIT 1`,
		id, maxAncestry).Scan(&at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: exercise of %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: exercise of %s: %w", id, err)
	}
	return db.GetExercise(ctx, at)
}

// IsAncestor reports whether a is id or a scenario id was edited from.
func (db *DB) IsAncestor(ctx context.Context, a, id string) (bool, error) {
	var n int
	err := db.sql.QueryRowContext(ctx, ancestors+`SELECT count(*) FROM anc WHERE id = ?`, id, maxAncestry, a).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("store: ancestors of %s: %w", id, err)
	}
	return n > 0, nil
}

// DeleteExercise unpins the exercise of scenario id.
func (db *DB) DeleteExercise(ctx context.Context, id string) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM exercises WHERE scenario_id = ?`, id)
		return err
	})
}
