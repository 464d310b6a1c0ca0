package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Backup writes a consistent copy of the database to the file path, which
// must not exist yet (the error then wraps fs.ErrExist). It may run while
// this process or another one (a running `cclab serve`) keeps writing: the
// copy is made with VACUUM INTO inside one read transaction, so it is the
// database as of one commit, with every transaction either all there or
// not at all, and writers are not held up (WAL). The copy is compact (no
// free pages), has the same schema version, and opens with Open like any
// lab database; to restore, use it as the lab's database file.
//
// The copy, with the database file's permissions, is written to a
// temporary file beside path, synced, and then linked to path, so path never holds a partial copy, and a file created
// at path meanwhile is not overwritten.
func (db *DB) Backup(ctx context.Context, path string) error {
	if err := db.backup(ctx, path); err != nil {
		return fmt.Errorf("store: backup of %s to %s: %w", db.path, path, err)
	}
	return nil
}

func (db *DB) backup(ctx context.Context, path string) error {
	if path == "" || strings.ContainsAny(path, "?#") {
		return errors.New("want the path of a file, without '?' or '#'")
	}
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%w: will not overwrite it", fs.ErrExist)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmpPath := tmp.Name()
	tmp.Close()
	// the copy gets the database file's permissions, not CreateTemp's 0600
	if st, err := os.Stat(db.path); err == nil {
		os.Chmod(tmpPath, st.Mode().Perm())
	}
	// VACUUM INTO refuses a file that exists and is not empty; this one is
	// empty. Whatever happens below, the temporary file goes.
	defer os.Remove(tmpPath)

	if _, err := db.sql.ExecContext(ctx, `VACUUM INTO ?`, tmpPath); err != nil {
		return fmt.Errorf("VACUUM INTO: %w", err)
	}
	if err := syncFile(tmpPath); err != nil {
		return err
	}
	// A hard link fails if path exists by now; a file system without hard
	// links gets a rename, after checking again.
	if err := os.Link(tmpPath, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%w: created while the copy was made; will not overwrite it", fs.ErrExist)
		}
		if _, serr := os.Lstat(path); serr == nil {
			return fmt.Errorf("%w: will not overwrite it", fs.ErrExist)
		}
		if err := os.Rename(tmpPath, path); err != nil {
			return err
		}
	}
	// make the new name durable too (not every system can sync a folder)
	if d, err := os.Open(filepath.Dir(path)); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// syncFile flushes the file at path to stable storage.
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
