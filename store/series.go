package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
)

// Series is the points of one series of a run, or only its name
// (SeriesKeys).
type Series struct {
	Index          int
	Metric, Entity string
	T              []int64 // ps
	V              []float64
}

// SeriesQuery selects the points DB.Series returns.
type SeriesQuery struct {
	Level             int      // 0: every point; 1: decimated
	Metrics, Entities []string // empty: all
	// Points with FromPS <= t <= ToPS; ToPS 0 is unbounded.
	FromPS, ToPS int64
}

// checkChunks rejects chunks AppendSeries and FinishRun cannot store.
func checkChunks(chunks []Chunk) error {
	for i, c := range chunks {
		if c.Series < 0 || (c.Level != 0 && c.Level != 1) || c.N < 1 || c.T0 > c.T1 {
			return fmt.Errorf("chunk %d (series %d, level %d, %d points, t %d..%d): invalid",
				i, c.Series, c.Level, c.N, c.T0, c.T1)
		}
		n, _, _, err := chunkHeader(c.Data)
		if err != nil {
			return fmt.Errorf("chunk %d (series %d): %w", i, c.Series, err)
		}
		if n != c.N {
			return fmt.Errorf("chunk %d (series %d): data has %d points, N is %d", i, c.Series, n, c.N)
		}
	}
	return nil
}

// insertChunks stores chunks of run rid, adding the series rows the run does
// not have yet.
func insertChunks(ctx context.Context, tx *sql.Tx, rid int64, chunks []Chunk) error {
	if len(chunks) == 0 {
		return nil
	}
	addSeries, err := tx.PrepareContext(ctx, `INSERT INTO series (run, idx, metric, entity)
		VALUES (?, ?, ?, ?) ON CONFLICT (run, idx) DO NOTHING`)
	if err != nil {
		return err
	}
	defer addSeries.Close()
	addChunk, err := tx.PrepareContext(ctx, `INSERT INTO chunks (run, idx, level, t0, t1, n, data)
		VALUES (?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer addChunk.Close()
	seen := make(map[int]bool)
	for _, c := range chunks {
		if !seen[c.Series] {
			seen[c.Series] = true
			if _, err := addSeries.ExecContext(ctx, rid, c.Series, c.Metric, c.Entity); err != nil {
				return fmt.Errorf("series %d: %w", c.Series, err)
			}
		}
		if _, err := addChunk.ExecContext(ctx, rid, c.Series, c.Level, c.T0, c.T1, c.N, c.Data); err != nil {
			return fmt.Errorf("chunk of series %d: %w", c.Series, err)
		}
	}
	return nil
}

// chunkWhere is the FROM ... WHERE of the chunks a query selects.
func chunkWhere(runID string, q SeriesQuery) (string, []any) {
	query := `
		FROM runs r
		JOIN chunks c ON c.run = r.rid
		JOIN series s ON s.run = c.run AND s.idx = c.idx
		WHERE r.id = ? AND c.level = ? AND c.t1 >= ?`
	args := []any{runID, q.Level, q.FromPS}
	if q.ToPS != 0 {
		query += ` AND c.t0 <= ?`
		args = append(args, q.ToPS)
	}
	var cond string
	cond, args = inList("s.metric", q.Metrics, args)
	query += cond
	cond, args = inList("s.entity", q.Entities, args)
	return query + cond, args
}

// inList returns " AND col IN (?, ?, ...)" for the values, appending them
// to args, or "" for none.
func inList(col string, values []string, args []any) (string, []any) {
	if len(values) == 0 {
		return "", args
	}
	for _, v := range values {
		args = append(args, v)
	}
	return " AND " + col + " IN (?" + strings.Repeat(", ?", len(values)-1) + ")", args
}

// Series returns the points of a run's series that the query selects, by
// series index; a series without points in the range is left out. It reads
// the run's chunks with one SELECT.
func (db *DB) Series(ctx context.Context, runID string, q SeriesQuery) ([]Series, error) {
	where, args := chunkWhere(runID, q)
	query := `SELECT c.idx, s.metric, s.entity, c.t0, c.t1, c.data` + where + ` ORDER BY c.idx, c.seq`

	out, err := db.readSeries(ctx, query, args, q)
	if err != nil {
		return nil, fmt.Errorf("store: series of run %s: %w", runID, err)
	}
	if len(out) == 0 {
		if ok, err := db.runExists(ctx, runID); err != nil {
			return nil, fmt.Errorf("store: series of run %s: %w", runID, err)
		} else if !ok {
			return nil, fmt.Errorf("store: series of run %s: %w", runID, ErrNotFound)
		}
	}
	return out, nil
}

// readSeries runs the chunk query of Series and decodes its rows.
func (db *DB) readSeries(ctx context.Context, query string, args []any, q SeriesQuery) ([]Series, error) {
	rows, err := db.sql.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Series
	var cur *Series
	// keep drops the points of the current series' last chunk, from start
	// on, that are out of the query's range.
	keep := func(start int) {
		j := start
		for i := start; i < len(cur.T); i++ {
			if t := cur.T[i]; t >= q.FromPS && (q.ToPS == 0 || t <= q.ToPS) {
				cur.T[j], cur.V[j] = t, cur.V[i]
				j++
			}
		}
		cur.T, cur.V = cur.T[:j], cur.V[:j]
	}
	for rows.Next() {
		var idx int
		var metric, entity, data sql.RawBytes // valid until Next: copied when kept
		var t0, t1 int64
		if err := rows.Scan(&idx, &metric, &entity, &t0, &t1, &data); err != nil {
			return nil, err
		}
		if cur == nil || cur.Index != idx {
			if cur != nil && len(cur.T) == 0 {
				out = out[:len(out)-1]
			}
			out = append(out, Series{Index: idx, Metric: string(metric), Entity: string(entity)})
			cur = &out[len(out)-1]
		}
		start := len(cur.T)
		cur.T, cur.V, err = decodeChunk(data, cur.T, cur.V)
		if err != nil {
			return nil, fmt.Errorf("series %d (%s %s): %w", idx, cur.Metric, cur.Entity, err)
		}
		if t0 < q.FromPS || (q.ToPS != 0 && t1 > q.ToPS) {
			keep(start)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if cur != nil && len(cur.T) == 0 {
		out = out[:len(out)-1]
	}
	return out, nil
}

// SeriesKeys returns the index, metric and entity of every series of a run,
// by index, without points.
func (db *DB) SeriesKeys(ctx context.Context, runID string) ([]Series, error) {
	rows, err := db.sql.QueryContext(ctx, `SELECT s.idx, s.metric, s.entity
		FROM series s JOIN runs r ON r.rid = s.run WHERE r.id = ? ORDER BY s.idx`, runID)
	if err != nil {
		return nil, fmt.Errorf("store: series keys of run %s: %w", runID, err)
	}
	defer rows.Close()
	var out []Series
	for rows.Next() {
		var s Series
		if err := rows.Scan(&s.Index, &s.Metric, &s.Entity); err != nil {
			return nil, fmt.Errorf("store: series keys of run %s: %w", runID, err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: series keys of run %s: %w", runID, err)
	}
	if len(out) == 0 {
		if ok, err := db.runExists(ctx, runID); err != nil {
			return nil, fmt.Errorf("store: series keys of run %s: %w", runID, err)
		} else if !ok {
			return nil, fmt.Errorf("store: series keys of run %s: %w", runID, ErrNotFound)
		}
	}
	return out, nil
}

// compactRun merges the small chunks of a finished run: a live run is
// flushed every second or so, which leaves one short chunk per series and
// level per flush, and each chunk costs a row (~45 bytes) and a row read.
// Every series and level whose points fit in fewer chunks is rewritten as
// chunks of maxChunkPoints points; the points do not change.
func compactRun(ctx context.Context, tx *sql.Tx, rid int64) error {
	groups, err := compactable(ctx, tx, rid)
	if err != nil {
		return err
	}
	return compactGroups(ctx, tx, rid, groups)
}

// chunkGroup is one series at one level.
type chunkGroup struct{ level, idx int }

// compactable lists the series and levels of a run whose points fit in
// fewer chunks than they have.
func compactable(ctx context.Context, q interface {
	QueryContext(context.Context, string, ...any) (*sql.Rows, error)
}, rid int64) ([]chunkGroup, error) {
	var groups []chunkGroup
	rows, err := q.QueryContext(ctx, `SELECT level, idx FROM chunks WHERE run = ?
		GROUP BY level, idx HAVING (sum(n) + ?) / ? < count(*)`, rid, maxChunkPoints-1, maxChunkPoints)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var g chunkGroup
		if err := rows.Scan(&g.level, &g.idx); err != nil {
			return nil, err
		}
		groups = append(groups, g)
	}
	return groups, rows.Err()
}

// compactGroups rewrites the chunks of each group as full ones.
func compactGroups(ctx context.Context, tx *sql.Tx, rid int64, groups []chunkGroup) error {
	if len(groups) == 0 {
		return nil
	}
	del, err := tx.PrepareContext(ctx, `DELETE FROM chunks WHERE run = ? AND level = ? AND idx = ?`)
	if err != nil {
		return err
	}
	defer del.Close()
	add, err := tx.PrepareContext(ctx, `INSERT INTO chunks (run, idx, level, t0, t1, n, data)
		VALUES (?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer add.Close()
	var ts []int64
	var vs []float64
	var buf []byte
	for _, g := range groups {
		ts, vs = ts[:0], vs[:0]
		rows, err := tx.QueryContext(ctx, `SELECT data FROM chunks WHERE run = ? AND level = ? AND idx = ? ORDER BY seq`,
			rid, g.level, g.idx)
		if err != nil {
			return err
		}
		for rows.Next() {
			var data sql.RawBytes
			if err := rows.Scan(&data); err != nil {
				rows.Close()
				return err
			}
			if ts, vs, err = decodeChunk(data, ts, vs); err != nil {
				rows.Close()
				return fmt.Errorf("series %d level %d: %w", g.idx, g.level, err)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if _, err := del.ExecContext(ctx, rid, g.level, g.idx); err != nil {
			return err
		}
		for lo := 0; lo < len(ts); lo += maxChunkPoints {
			hi := min(lo+maxChunkPoints, len(ts))
			t0, t1 := slices.Min(ts[lo:hi]), slices.Max(ts[lo:hi])
			buf = appendChunk(buf[:0], ts[lo:hi], vs[lo:hi])
			if _, err := add.ExecContext(ctx, rid, g.idx, g.level, t0, t1, hi-lo, buf); err != nil {
				return err
			}
		}
	}
	return nil
}

// SeriesPoints counts the points of the chunks the query selects (whole
// chunks: an upper bound when From or To cut through one), without
// decoding anything, so a caller can refuse an export that is too large.
func (db *DB) SeriesPoints(ctx context.Context, runID string, q SeriesQuery) (int64, error) {
	where, args := chunkWhere(runID, q)
	query := `SELECT coalesce(sum(c.n), 0)` + where
	var n int64
	if err := db.sql.QueryRowContext(ctx, query, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: counting the points of run %s: %w", runID, err)
	}
	return n, nil
}
