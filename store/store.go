// Package store keeps the lab's scenarios, runs and their results in one
// SQLite file (modernc.org/sqlite, no cgo).
//
// Every connection runs in WAL mode with a busy timeout, foreign keys and
// synchronous=NORMAL (set in the DSN, so on each connection the pool opens).
// The schema is created and upgraded by the numbered SQL files in
// migrations/, applied at Open, each in its own transaction, and tracked with
// PRAGMA user_version. A new database is created with
// auto_vacuum=INCREMENTAL so that Prune can give space back to the file
// system.
//
// Writes are serialised by a mutex in DB, so writers of one DB never meet
// SQLITE_BUSY; readers run concurrently with them (WAL). Every write that
// touches more than one row is one transaction, so a crash (kill -9) leaves
// either all of it or none of it.
//
// Time series are recorded with a Recorder, which buffers the points of one
// run and encodes them into compact, lossless chunks (see encoding.go) at two
// levels: level 0 holds every point, level 1 one point per bucket of
// Recorder's bucket width (the mean or the max of the bucket's points), for
// charts of long runs. A live run stores one chunk per series, level and
// flush; FinishRun merges them into full chunks.
package store

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	_ "modernc.org/sqlite" // the "sqlite" database/sql driver
)

// ErrNotFound is returned (wrapped) when a scenario or run does not exist.
var ErrNotFound = errors.New("not found")

// ErrInUse is returned (wrapped) when a scenario cannot be deleted because
// runs refer to it.
var ErrInUse = errors.New("in use")

// ErrBuiltin is returned (wrapped) when deleting a built-in scenario.
var ErrBuiltin = errors.New("built-in")

// DB is the lab's database. It is safe for concurrent use.
type DB struct {
	sql  *sql.DB
	path string
	// wmu serialises write transactions: SQLite has one writer at a time,
	// and waiting here instead of in SQLite's busy handler means no writer
	// of this DB ever gets SQLITE_BUSY.
	wmu sync.Mutex
}

//go:embed migrations/*.sql
var migrationFiles embed.FS

// dsnPragmas are run by the driver on every new connection, busy_timeout
// first. _txlock=immediate makes every transaction (they are all write
// transactions here) take the write lock at BEGIN, so that another process
// writing to the same file makes it wait (busy_timeout) instead of failing
// at its first write.
const dsnPragmas = "_pragma=busy_timeout(10000)" +
	"&_pragma=foreign_keys(1)" +
	"&_pragma=journal_mode(WAL)" +
	"&_pragma=synchronous(NORMAL)" +
	"&_txlock=immediate"

// Open opens the database at path, creating the file if it is missing, and
// applies the migrations it does not have yet.
func Open(ctx context.Context, path string) (*DB, error) {
	if path == "" || path == ":memory:" || strings.ContainsAny(path, "?#") {
		return nil, fmt.Errorf("store: open %q: want the path of a file, without '?' or '#'", path)
	}
	sdb, err := sql.Open("sqlite", path+"?"+dsnPragmas)
	if err != nil {
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	// Keep a few connections open: a new one runs the DSN pragmas.
	sdb.SetMaxIdleConns(4)
	db := &DB{sql: sdb, path: path}
	if err := db.init(ctx); err != nil {
		sdb.Close()
		return nil, fmt.Errorf("store: open %s: %w", path, err)
	}
	return db, nil
}

// Close closes the database.
func (db *DB) Close() error {
	if err := db.sql.Close(); err != nil {
		return fmt.Errorf("store: close %s: %w", db.path, err)
	}
	return nil
}

// migration is one numbered SQL file of migrations/.
type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations returns the embedded migrations by version; the versions
// must be 1, 2, 3, ... (file names "0001_what.sql").
func loadMigrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, name := range names {
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		if !ok {
			return nil, fmt.Errorf("migration %s: want NNNN_name.sql", base)
		}
		v, err := strconv.Atoi(num)
		if err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: want NNNN_name.sql", base)
		}
		b, err := migrationFiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: base, sql: string(b)})
	}
	slices.SortFunc(ms, func(a, b migration) int { return a.version - b.version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: version %d, want %d", m.name, m.version, i+1)
		}
	}
	return ms, nil
}

// init makes a new database incremental-vacuum and applies the migrations,
// on one connection, holding the write lock.
func (db *DB) init(ctx context.Context) error {
	ms, err := loadMigrations()
	if err != nil {
		return err
	}
	db.wmu.Lock()
	defer db.wmu.Unlock()
	conn, err := db.sql.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()

	// auto_vacuum can only be changed before the first table is created
	// (or by a VACUUM). Setting journal_mode=WAL (in the DSN) has already
	// written the file header, so a new, empty database needs the VACUUM.
	var tables, autoVacuum int
	if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&tables); err != nil {
		return fmt.Errorf("reading the schema: %w", err)
	}
	if err := conn.QueryRowContext(ctx, `PRAGMA auto_vacuum`).Scan(&autoVacuum); err != nil {
		return fmt.Errorf("reading auto_vacuum: %w", err)
	}
	if tables == 0 && autoVacuum != 2 {
		if _, err := conn.ExecContext(ctx, `PRAGMA auto_vacuum = INCREMENTAL`); err != nil {
			return fmt.Errorf("setting auto_vacuum: %w", err)
		}
		if _, err := conn.ExecContext(ctx, `VACUUM`); err != nil {
			return fmt.Errorf("setting auto_vacuum: %w", err)
		}
	}

	for _, m := range ms {
		if err := applyMigration(ctx, conn, m, len(ms)); err != nil {
			return fmt.Errorf("migration %s: %w", m.name, err)
		}
	}
	return nil
}

// applyMigration applies m in one transaction unless the database already
// has it. The version is read inside the transaction, which holds the write
// lock from BEGIN, so two processes opening the same new file do not both
// apply it.
func applyMigration(ctx context.Context, conn *sql.Conn, m migration, latest int) error {
	tx, err := conn.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var have int
	if err := tx.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&have); err != nil {
		return err
	}
	if have > latest {
		return fmt.Errorf("the database has schema version %d, newer than this program's %d", have, latest)
	}
	if have >= m.version {
		return nil
	}
	if _, err := tx.ExecContext(ctx, m.sql); err != nil {
		return err
	}
	// PRAGMA takes no parameters; the version is an int.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA user_version = %d`, m.version)); err != nil {
		return err
	}
	return tx.Commit()
}

// write runs fn in a write transaction, holding the write lock; fn's error
// rolls it back.
func (db *DB) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	db.wmu.Lock()
	defer db.wmu.Unlock()
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		tx.Rollback()
		return err
	}
	return tx.Commit()
}

// IntegrityCheck runs PRAGMA integrity_check and returns "ok" or the
// problems it found, one a line.
func (db *DB) IntegrityCheck(ctx context.Context) (string, error) {
	rows, err := db.sql.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return "", fmt.Errorf("store: integrity check: %w", err)
	}
	defer rows.Close()
	var msgs []string
	for rows.Next() {
		var m string
		if err := rows.Scan(&m); err != nil {
			return "", fmt.Errorf("store: integrity check: %w", err)
		}
		msgs = append(msgs, m)
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("store: integrity check: %w", err)
	}
	return strings.Join(msgs, "\n"), nil
}

// sizeQuery is the bytes of the database's pages in use: the file's pages
// less the free ones.
const sizeQuery = `SELECT (p.page_count - f.freelist_count) * s.page_size
	FROM pragma_page_count() p, pragma_freelist_count() f, pragma_page_size() s`

// SizeBytes returns the bytes of the database's pages in use:
// (page_count - freelist_count) * page_size.
func (db *DB) SizeBytes(ctx context.Context) (int64, error) {
	var n int64
	if err := db.sql.QueryRowContext(ctx, sizeQuery).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: size: %w", err)
	}
	return n, nil
}
