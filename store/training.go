package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// TrainJob is a training job of the lab server, as stored: what it
// trains, where it got, how it ended. Its learning curve is stored beside
// it, one point per round (AddTrainPoint, TrainPoints).
type TrainJob struct {
	ID, Name, Algorithm string
	// Config is the training configuration (JSON; the store does not
	// parse it).
	Config json.RawMessage
	// Status is queued, running, done, cancelled, interrupted or failed;
	// Error says why a job failed or stopped early.
	Status, Error              string
	Created, Started, Finished time.Time // Started, Finished: zero until then
	// Episode is the number of episodes played; Stage the curriculum's
	// newest fan-in.
	Episode, Stage int
	// Policy is the id of the policy the job stored ("" before);
	// Interrupted marks a policy stored when the job was stopped.
	Policy      string
	Interrupted bool
}

// CreateTrainJob stores a new job. It sets j.ID (NewRunID), j.Created (now)
// and j.Status (queued) if they are empty.
func (db *DB) CreateTrainJob(ctx context.Context, j *TrainJob) error {
	if j.ID == "" {
		j.ID = NewRunID()
	}
	if j.Created.IsZero() {
		j.Created = time.Now()
	}
	if j.Status == "" {
		j.Status = StatusQueued
	}
	if !validStatus(j.Status) {
		return fmt.Errorf("store: training job %s: unknown status %q", j.ID, j.Status)
	}
	err := db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO train_jobs (id, name, algorithm, config, status, error, created,
				started, finished, episode, stage, policy, interrupted)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			j.ID, j.Name, j.Algorithm, string(j.Config), j.Status, j.Error, j.Created.UnixNano(), nanos(j.Started),
			nanos(j.Finished), j.Episode, j.Stage, j.Policy, j.Interrupted)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: creating training job %s: %w", j.ID, err)
	}
	return nil
}

const trainJobColumns = `id, name, algorithm, config, status, error, created, started, finished, episode, stage, policy, interrupted`

func scanTrainJob(row interface{ Scan(...any) error }) (TrainJob, error) {
	var j TrainJob
	var config string
	var created int64
	var started, finished sql.NullInt64
	if err := row.Scan(&j.ID, &j.Name, &j.Algorithm, &config, &j.Status, &j.Error, &created, &started, &finished,
		&j.Episode, &j.Stage, &j.Policy, &j.Interrupted); err != nil {
		return TrainJob{}, err
	}
	j.Config = json.RawMessage(config)
	j.Created = time.Unix(0, created)
	j.Started = fromNanos(started)
	j.Finished = fromNanos(finished)
	return j, nil
}

// GetTrainJob returns a training job.
func (db *DB) GetTrainJob(ctx context.Context, id string) (*TrainJob, error) {
	j, err := scanTrainJob(db.sql.QueryRowContext(ctx, `SELECT `+trainJobColumns+` FROM train_jobs WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: training job %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: training job %s: %w", id, err)
	}
	return &j, nil
}

// ListTrainJobs returns the training jobs, newest first.
func (db *DB) ListTrainJobs(ctx context.Context) ([]TrainJob, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT `+trainJobColumns+` FROM train_jobs ORDER BY created DESC, rowid DESC`)
	if err != nil {
		return nil, fmt.Errorf("store: listing training jobs: %w", err)
	}
	defer rows.Close()
	var out []TrainJob
	for rows.Next() {
		j, err := scanTrainJob(rows)
		if err != nil {
			return nil, fmt.Errorf("store: listing training jobs: %w", err)
		}
		out = append(out, j)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: listing training jobs: %w", err)
	}
	return out, nil
}

// updateTrainJob runs one statement on a job; no such job is ErrNotFound.
func updateTrainJob(ctx context.Context, tx *sql.Tx, query string, args ...any) error {
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
}

// StartTrainJob marks a job running from at (a resumed job keeps its
// first start), with its progress so far: episode played, the stage's
// fan-in, and points rounds on its curve; points stored beyond them (a job
// resumed from a checkpoint older than its last round) are deleted.
func (db *DB) StartTrainJob(ctx context.Context, id string, at time.Time, episode, stage, points int) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		if err := updateTrainJob(ctx, tx, `UPDATE train_jobs SET status = ?, error = '', started = coalesce(started, ?),
				finished = NULL, episode = ?, stage = ? WHERE id = ?`, StatusRunning, at.UnixNano(), episode, stage, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `DELETE FROM train_points WHERE job = ? AND seq >= ?`, id, points)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: starting training job %s: %w", id, err)
	}
	return nil
}

// AddTrainPoint stores round seq (from 0) of a job's learning curve and
// the job's progress after it.
func (db *DB) AddTrainPoint(ctx context.Context, id string, seq int, point []byte, episode, stage int) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		if err := updateTrainJob(ctx, tx, `UPDATE train_jobs SET episode = ?, stage = ? WHERE id = ?`, episode, stage, id); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO train_points (job, seq, point) VALUES (?, ?, ?)`, id, seq, string(point))
		return err
	})
	if err != nil {
		return fmt.Errorf("store: training job %s: round %d: %w", id, seq, err)
	}
	return nil
}

// TrainPoints returns a job's learning curve, in order.
func (db *DB) TrainPoints(ctx context.Context, id string) ([]json.RawMessage, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT point FROM train_points WHERE job = ? ORDER BY seq`, id)
	if err != nil {
		return nil, fmt.Errorf("store: curve of training job %s: %w", id, err)
	}
	defer rows.Close()
	var out []json.RawMessage
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			return nil, fmt.Errorf("store: curve of training job %s: %w", id, err)
		}
		out = append(out, json.RawMessage(p))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: curve of training job %s: %w", id, err)
	}
	return out, nil
}

// TrainEnd is how a job ended.
type TrainEnd struct {
	Status, Error string    // Status must be terminal
	At            time.Time // zero: now
	// Policy is the id of the policy the job stored ("": it keeps the
	// one it had, if any); Interrupted marks it stored when the job was
	// stopped.
	Policy      string
	Interrupted bool
}

// FinishTrainJob ends a job.
func (db *DB) FinishTrainJob(ctx context.Context, id string, e TrainEnd) error {
	if !Terminal(e.Status) {
		return fmt.Errorf("store: ending training job %s: status %q is not terminal", id, e.Status)
	}
	if e.At.IsZero() {
		e.At = time.Now()
	}
	err := db.write(ctx, func(tx *sql.Tx) error {
		if e.Policy == "" {
			return updateTrainJob(ctx, tx, `UPDATE train_jobs SET status = ?, error = ?, finished = ? WHERE id = ?`,
				e.Status, e.Error, e.At.UnixNano(), id)
		}
		return updateTrainJob(ctx, tx, `UPDATE train_jobs SET status = ?, error = ?, finished = ?, policy = ?, interrupted = ?
			WHERE id = ?`, e.Status, e.Error, e.At.UnixNano(), e.Policy, e.Interrupted, id)
	})
	if err != nil {
		return fmt.Errorf("store: ending training job %s: %w", id, err)
	}
	return nil
}

// ResumeTrainJob puts an ended job back in the queue: status queued, no
// error, not finished.
func (db *DB) ResumeTrainJob(ctx context.Context, id string) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		return updateTrainJob(ctx, tx, `UPDATE train_jobs SET status = ?, error = '', finished = NULL WHERE id = ?`, StatusQueued, id)
	})
	if err != nil {
		return fmt.Errorf("store: resuming training job %s: %w", id, err)
	}
	return nil
}

// trainInterruptedError is the error MarkTrainInterrupted gives the jobs
// it ends.
const trainInterruptedError = "the server stopped before the training job ended"

// MarkTrainInterrupted ends every queued or running training job as
// interrupted, finished now, and returns their ids, oldest first. The
// server calls it at start-up for the jobs a previous process left.
func (db *DB) MarkTrainInterrupted(ctx context.Context) ([]string, error) {
	ids, err := db.markInterrupted(ctx, "train_jobs", "created", "finished", trainInterruptedError)
	if err != nil {
		return nil, fmt.Errorf("store: marking interrupted training jobs: %w", err)
	}
	return ids, nil
}

// PruneTrainJobs deletes the oldest ended jobs (with their curves) beyond
// the newest keep ended ones, and returns their ids.
func (db *DB) PruneTrainJobs(ctx context.Context, keep int) ([]string, error) {
	var ids []string
	err := db.write(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT id FROM train_jobs WHERE status NOT IN `+activeStatuses+`
			ORDER BY created DESC, rowid DESC LIMIT -1 OFFSET ?`, keep)
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
		for _, id := range ids {
			if _, err := tx.ExecContext(ctx, `DELETE FROM train_jobs WHERE id = ?`, id); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: pruning training jobs: %w", err)
	}
	return ids, nil
}
