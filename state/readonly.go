package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	bolt "go.etcd.io/bbolt"
)

// OpenReadOnly opens the state database for reading, alongside no daemon:
// a daemon holds the file locked, so this fails with ErrLocked within
// OpenTimeout while one runs. A missing database is fs.ErrNotExist. Nothing
// is migrated or moved aside; a damaged database is an error.
func OpenReadOnly(path string) (*DB, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if err := notAFile(path); err != nil {
		return nil, err // not damage, which scan would move aside: refused there too
	}
	if fi.Size() == 0 {
		// bbolt would write a new database into it, and, opened for
		// reading, fail with the descriptor's error: a read-only open
		// says what it found.
		return nil, fmt.Errorf("open state %s: %w", path, damagedHint(errors.New("the file is empty")))
	}
	db, file, err := boltOpenWith(path, &bolt.Options{ReadOnly: true, Timeout: OpenTimeout})
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("%w (state %s is locked)", ErrLocked, path)
	}
	if IsFault(err) {
		return nil, fmt.Errorf("open state %s: %w", path, err)
	}
	if err != nil {
		// What Open would move aside: say so, and what mends it, so that
		// a reader alongside no daemon is not left with bbolt's words.
		return nil, fmt.Errorf("open state %s: %w", path, damagedHint(err))
	}
	d := newDB(db, file, path)
	// Walked first, as the daemon does at open: a damaged tree could
	// send a reader past the file or round a loop.
	if err := d.checkStructure(); err != nil {
		d.Close()
		return nil, fmt.Errorf("open state %s: %w", path, damagedHint(err))
	}
	v, err := d.Version()
	switch {
	case err != nil:
		d.Close()
		return nil, fmt.Errorf("open state %s: %w", path, err)
	case v > SchemaVersion:
		d.Close()
		return nil, fmt.Errorf("%w (schema %d, this build reads up to %d)", ErrTooNew, v, SchemaVersion)
	case v < oldestReadable:
		// Buckets of an older layout may be missing; the next daemon
		// start migrates it.
		d.Close()
		return nil, fmt.Errorf("open state %s: schema %d is older than %d (start the daemon once to migrate it): %w",
			path, v, oldestReadable, fs.ErrNotExist)
	}
	return d, nil
}

// damagedHint wraps the error of a damaged database with what to do.
func damagedHint(err error) error {
	return fmt.Errorf("the database is damaged (%w); `agentmap scan`, or the daemon at its next start, moves it aside and reads the logs again", err)
}
