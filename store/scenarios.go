package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Scenario is a stored scenario. Scenarios are content-addressed: the id is
// derived from the canonical JSON (ScenarioID), so storing the same scenario
// twice stores it once.
type Scenario struct {
	ID, Name, Description string
	// JSON is the canonical scenario JSON, as given by the caller; the store
	// does not parse it.
	JSON []byte
	// Builtin marks a scenario of the lab's library, which cannot be
	// deleted.
	Builtin   bool
	CreatedAt time.Time
	// Runs is the number of runs referring to the scenario (filled by
	// GetScenario and ListScenarios).
	Runs int
	// Parent is the scenario this one was edited from ("" if none; set by
	// SetScenarioParent).
	Parent string
}

// ScenarioID returns the id of a scenario: the lowercase hex of the first 12
// bytes of the SHA-256 of its canonical JSON (24 characters).
func ScenarioID(canonical []byte) string {
	sum := sha256.Sum256(canonical)
	return hex.EncodeToString(sum[:12])
}

// PutScenario stores sc unless a scenario with its id exists, and reports
// whether it inserted it. It sets sc.ID to ScenarioID(sc.JSON) if empty and
// sc.CreatedAt to now if zero. An existing scenario is left as it is, except
// that it becomes built-in if sc is.
func (db *DB) PutScenario(ctx context.Context, sc *Scenario) (created bool, err error) {
	if sc == nil {
		return false, errors.New("store: put scenario: nil scenario")
	}
	if len(sc.JSON) == 0 {
		return false, fmt.Errorf("store: put scenario %q: empty JSON", sc.Name)
	}
	if sc.ID == "" {
		sc.ID = ScenarioID(sc.JSON)
	}
	if sc.CreatedAt.IsZero() {
		sc.CreatedAt = time.Now()
	}
	err = db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `INSERT INTO scenarios (id, name, description, json, builtin, created_at)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
			sc.ID, sc.Name, sc.Description, string(sc.JSON), sc.Builtin, sc.CreatedAt.UnixNano())
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return err
		}
		created = n == 1
		if !created && sc.Builtin {
			_, err := tx.ExecContext(ctx, `UPDATE scenarios SET builtin = 1 WHERE id = ? AND builtin = 0`, sc.ID)
			return err
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("store: put scenario %s: %w", sc.ID, err)
	}
	return created, nil
}

// scenarioColumns are the columns scanScenario reads, without the JSON.
const scenarioColumns = `s.id, s.name, s.description, s.builtin, s.created_at,
	(SELECT count(*) FROM runs r WHERE r.scenario_id = s.id), coalesce(s.parent, '')`

// scanScenario scans scenarioColumns, then the extra destinations.
func scanScenario(row interface{ Scan(...any) error }, extra ...any) (Scenario, error) {
	var sc Scenario
	var created int64
	dest := append([]any{&sc.ID, &sc.Name, &sc.Description, &sc.Builtin, &created, &sc.Runs, &sc.Parent}, extra...)
	if err := row.Scan(dest...); err != nil {
		return Scenario{}, err
	}
	sc.CreatedAt = time.Unix(0, created)
	return sc, nil
}

// GetScenario returns the scenario with the given id, with its JSON.
func (db *DB) GetScenario(ctx context.Context, id string) (*Scenario, error) {
	var js []byte
	row := db.sql.QueryRowContext(ctx, `SELECT `+scenarioColumns+`, s.json FROM scenarios s WHERE s.id = ?`, id)
	sc, err := scanScenario(row, &js)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: get scenario %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get scenario %s: %w", id, err)
	}
	sc.JSON = js
	return &sc, nil
}

// ListScenarios returns every scenario without its JSON: the built-in ones
// first, by name, then the others, newest first.
func (db *DB) ListScenarios(ctx context.Context) ([]Scenario, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT `+scenarioColumns+` FROM scenarios s
		ORDER BY s.builtin DESC, CASE WHEN s.builtin THEN s.name END, s.created_at DESC, s.id`)
	if err != nil {
		return nil, fmt.Errorf("store: list scenarios: %w", err)
	}
	defer rows.Close()
	var out []Scenario
	for rows.Next() {
		sc, err := scanScenario(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list scenarios: %w", err)
		}
		out = append(out, sc)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list scenarios: %w", err)
	}
	return out, nil
}

// DeleteScenario deletes a scenario. It fails with ErrNotFound if there is
// none, ErrBuiltin if it is built-in and ErrInUse if a run refers to it.
func (db *DB) DeleteScenario(ctx context.Context, id string) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		var builtin bool
		err := tx.QueryRowContext(ctx, `SELECT builtin FROM scenarios WHERE id = ?`, id).Scan(&builtin)
		if errors.Is(err, sql.ErrNoRows) {
			return ErrNotFound
		}
		if err != nil {
			return err
		}
		if builtin {
			return ErrBuiltin
		}
		var runs int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM runs WHERE scenario_id = ?`, id).Scan(&runs); err != nil {
			return err
		}
		if runs > 0 {
			return fmt.Errorf("%w by %d runs", ErrInUse, runs)
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM scenarios WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: delete scenario %s: %w", id, err)
	}
	return nil
}
