package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrExists is returned (wrapped) when a policy of that name is already
// stored.
var ErrExists = errors.New("already exists")

// Policy is a trained policy of a learned algorithm: its safetensors file
// and what the file says about itself. A stored policy never changes.
type Policy struct {
	ID        string
	Name      string // unique
	Algorithm string // "fdcc" or "rlcc"
	Created   time.Time
	Meta      map[string]string // the file's metadata
	Source    string            // a training job id, or "upload"
	Size      int64             // bytes of Data
	Data      []byte            // the safetensors file; empty in lists
}

// PutPolicy stores a new policy (with a new ID when it has none). A name
// already taken is ErrExists.
func (db *DB) PutPolicy(ctx context.Context, p *Policy) error {
	return db.ReplacePolicy(ctx, "", p)
}

// ReplacePolicy stores a new policy as PutPolicy does, first deleting the
// policy old (when not "" and still stored) in the same transaction: a
// resumed training job's final policy takes the place of the one it
// stored when it was stopped, under the same name.
func (db *DB) ReplacePolicy(ctx context.Context, old string, p *Policy) error {
	if p.ID == "" {
		p.ID = NewRunID()
	}
	if p.Created.IsZero() {
		p.Created = time.Now()
	}
	p.Size = int64(len(p.Data))
	meta := p.Meta
	if meta == nil {
		meta = map[string]string{}
	}
	mj, err := json.Marshal(meta)
	if err != nil {
		return fmt.Errorf("store: policy %s: metadata: %w", p.Name, err)
	}
	err = db.write(ctx, func(tx *sql.Tx) error {
		if old != "" {
			if _, err := tx.ExecContext(ctx, `DELETE FROM policies WHERE id = ?`, old); err != nil {
				return err
			}
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM policies WHERE name = ?`, p.Name).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("a policy named %q: %w", p.Name, ErrExists)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO policies (id, name, algorithm, created, meta, source, size, data)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, p.ID, p.Name, p.Algorithm, p.Created.UnixNano(), string(mj), p.Source, p.Size, p.Data)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: storing policy %s: %w", p.Name, err)
	}
	return nil
}

const policyColumns = `id, name, algorithm, created, meta, source, size`

// ListPolicies lists the stored policies without their data, newest first.
func (db *DB) ListPolicies(ctx context.Context) ([]Policy, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT `+policyColumns+` FROM policies ORDER BY created DESC, rowid DESC`)
	if err != nil {
		return nil, fmt.Errorf("store: listing policies: %w", err)
	}
	defer rows.Close()
	var out []Policy
	for rows.Next() {
		p, err := scanPolicy(rows, false)
		if err != nil {
			return nil, fmt.Errorf("store: listing policies: %w", err)
		}
		out = append(out, *p)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: listing policies: %w", err)
	}
	return out, nil
}

// GetPolicy returns a policy with its data, by id.
func (db *DB) GetPolicy(ctx context.Context, id string) (*Policy, error) {
	return db.policy(ctx, "id", id)
}

// PolicyByName returns a policy with its data, by name.
func (db *DB) PolicyByName(ctx context.Context, name string) (*Policy, error) {
	return db.policy(ctx, "name", name)
}

func (db *DB) policy(ctx context.Context, col, v string) (*Policy, error) {
	row := db.sql.QueryRowContext(ctx, `SELECT `+policyColumns+`, data FROM policies WHERE `+col+` = ?`, v)
	p, err := scanPolicy(row, true)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: policy %s: %w", v, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: policy %s: %w", v, err)
	}
	return p, nil
}

func scanPolicy(row interface{ Scan(...any) error }, data bool) (*Policy, error) {
	var p Policy
	var created int64
	var meta string
	dst := []any{&p.ID, &p.Name, &p.Algorithm, &created, &meta, &p.Source, &p.Size}
	if data {
		dst = append(dst, &p.Data)
	}
	if err := row.Scan(dst...); err != nil {
		return nil, err
	}
	p.Created = time.Unix(0, created)
	if err := json.NewDecoder(strings.NewReader(meta)).Decode(&p.Meta); err != nil {
		return nil, fmt.Errorf("metadata of policy %s: %w", p.ID, err)
	}
	return &p, nil
}

// DeletePolicy deletes a policy by id.
func (db *DB) DeletePolicy(ctx context.Context, id string) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM policies WHERE id = ?`, id)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return ErrNotFound
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: deleting policy %s: %w", id, err)
	}
	return nil
}
