package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Reproduction is a request to run one experiment of `cclab reproduce` in
// the lab: which runs carry it, by the experiment's run keys.
type Reproduction struct {
	ID         string
	Experiment string
	Quick      bool
	Created    time.Time
	Runs       []ReproductionRun // in the experiment's order
}

// ReproductionRun is one run of a reproduction.
type ReproductionRun struct {
	Key, Run string
}

// CreateReproduction stores a reproduction (with a new ID when it has none).
func (db *DB) CreateReproduction(ctx context.Context, r *Reproduction) error {
	if r.ID == "" {
		r.ID = NewRunID()
	}
	if r.Created.IsZero() {
		r.Created = time.Now()
	}
	err := db.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO reproductions (id, experiment, quick, created) VALUES (?, ?, ?, ?)`,
			r.ID, r.Experiment, r.Quick, r.Created.UnixNano()); err != nil {
			return err
		}
		for i, x := range r.Runs {
			if _, err := tx.ExecContext(ctx, `INSERT INTO reproduction_runs (reproduction, seq, key, run) VALUES (?, ?, ?, ?)`,
				r.ID, i, x.Key, x.Run); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: creating reproduction of %s: %w", r.Experiment, err)
	}
	return nil
}

// GetReproduction returns a reproduction by id.
func (db *DB) GetReproduction(ctx context.Context, id string) (*Reproduction, error) {
	return db.reproduction(ctx, `SELECT id, experiment, quick, created FROM reproductions WHERE id = ?`, id)
}

// LatestReproduction returns the newest reproduction of an experiment
// (ErrNotFound when there is none).
func (db *DB) LatestReproduction(ctx context.Context, experiment string) (*Reproduction, error) {
	return db.reproduction(ctx, `SELECT id, experiment, quick, created FROM reproductions
		WHERE experiment = ? ORDER BY created DESC, rowid DESC LIMIT 1`, experiment)
}

func (db *DB) reproduction(ctx context.Context, query string, arg string) (*Reproduction, error) {
	var r Reproduction
	var created int64
	err := db.sql.QueryRowContext(ctx, query, arg).Scan(&r.ID, &r.Experiment, &r.Quick, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: reproduction %s: %w", arg, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: reproduction %s: %w", arg, err)
	}
	r.Created = time.Unix(0, created)
	rows, err := db.sql.QueryContext(ctx, `SELECT key, run FROM reproduction_runs WHERE reproduction = ? ORDER BY seq`, r.ID)
	if err != nil {
		return nil, fmt.Errorf("store: runs of reproduction %s: %w", r.ID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var x ReproductionRun
		if err := rows.Scan(&x.Key, &x.Run); err != nil {
			return nil, fmt.Errorf("store: runs of reproduction %s: %w", r.ID, err)
		}
		r.Runs = append(r.Runs, x)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: runs of reproduction %s: %w", r.ID, err)
	}
	return &r, nil
}
