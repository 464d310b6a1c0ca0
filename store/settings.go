package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
)

// Settings and ownership (issue 18): the server's persistent settings, and
// the owner of a scenario, training job or policy.

// Setting returns a setting's value, or ErrNotFound.
func (db *DB) Setting(ctx context.Context, name string) ([]byte, error) {
	var v []byte
	err := db.sql.QueryRowContext(ctx, `SELECT value FROM settings WHERE name = ?`, name).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: setting %s: %w", name, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: setting %s: %w", name, err)
	}
	return v, nil
}

// SetSetting stores a setting's value.
func (db *DB) SetSetting(ctx context.Context, name string, value []byte) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO settings (name, value) VALUES (?, ?)
			ON CONFLICT (name) DO UPDATE SET value = excluded.value`, name, value)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: set setting %s: %w", name, err)
	}
	return nil
}

// Secret returns the setting name, made of n random bytes the first time
// it is asked for (the key that signs owner tokens).
func (db *DB) Secret(ctx context.Context, name string, n int) ([]byte, error) {
	fresh := make([]byte, n)
	if _, err := rand.Read(fresh); err != nil {
		return nil, fmt.Errorf("store: secret %s: %w", name, err)
	}
	err := db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING`, name, fresh)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: secret %s: %w", name, err)
	}
	return db.Setting(ctx, name)
}

// Owned kinds: the tables whose rows have an owner.
const (
	OwnedScenario = "scenarios"
	OwnedTrainJob = "train_jobs"
	OwnedPolicy   = "policies"
)

func ownedTable(kind string) error {
	switch kind {
	case OwnedScenario, OwnedTrainJob, OwnedPolicy:
		return nil
	}
	return fmt.Errorf("store: %q has no owner", kind)
}

// Owner returns the owner of a row of an owned kind ("" when nobody
// claimed it), or ErrNotFound.
func (db *DB) Owner(ctx context.Context, kind, id string) (string, error) {
	if err := ownedTable(kind); err != nil {
		return "", err
	}
	var owner string
	err := db.sql.QueryRowContext(ctx, `SELECT owner FROM `+kind+` WHERE id = ?`, id).Scan(&owner)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("store: owner of %s %s: %w", kind, id, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("store: owner of %s %s: %w", kind, id, err)
	}
	return owner, nil
}

// Claim makes owner the owner of a row nobody has claimed yet (the first
// to store a content-addressed scenario owns it); it changes nothing when
// the row already has an owner.
func (db *DB) Claim(ctx context.Context, kind, id, owner string) error {
	if err := ownedTable(kind); err != nil {
		return err
	}
	err := db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE `+kind+` SET owner = ? WHERE id = ? AND owner = ''`, owner, id)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: claim %s %s: %w", kind, id, err)
	}
	return nil
}
