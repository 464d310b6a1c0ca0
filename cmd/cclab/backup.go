package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"time"

	"cclab/store"
)

// cmdBackup copies the lab's database to a new file with store.Backup
// (VACUUM INTO): a consistent snapshot, also while `cclab serve` is
// writing to it.
func cmdBackup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	flags := flag.NewFlagSet("backup", flag.ContinueOnError)
	flags.SetOutput(stderr)
	dbPath := flags.String("db", "./cclab.db", "the lab's SQLite database file (a running cclab serve may be using it)")
	out := flags.String("out", "", "the copy to write (required; must not exist)")
	pos, err := parseArgs(flags, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return &usageError{fmt.Sprintf("unexpected argument %q", pos[0])}
	}
	if *out == "" {
		return &usageError{"--out FILE is required"}
	}
	// store.Open would create a missing database: a typo in --db must not
	// back up a new, empty lab.
	if st, err := os.Stat(*dbPath); err != nil {
		return fmt.Errorf("--db %s: %w", *dbPath, err)
	} else if !st.Mode().IsRegular() {
		return fmt.Errorf("--db %s: not a database file", *dbPath)
	}
	if _, err := os.Lstat(*out); err == nil {
		return errOutExists(*out)
	}
	db, err := store.Open(ctx, *dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	start := time.Now()
	if err := db.Backup(ctx, *out); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return errOutExists(*out)
		}
		if ctx.Err() != nil {
			fmt.Fprintf(stderr, "cclab backup: interrupted; %s was not written\n", *out)
			return errInterrupted
		}
		return err
	}
	st, err := os.Stat(*out)
	if err != nil {
		return fmt.Errorf("--out %s: %w", *out, err)
	}
	fmt.Fprintf(stdout, "backed up %s to %s (%d bytes) in %v\n", *dbPath, *out, st.Size(), time.Since(start).Round(time.Millisecond))
	return nil
}

func errOutExists(path string) error {
	return fmt.Errorf("--out %s: the file exists; cclab backup never overwrites one (remove it or choose another name)", path)
}
