package state

import (
	"fmt"
	"strconv"

	bolt "go.etcd.io/bbolt"
)

// migrations[i] takes a database from schema i to i+1. Each runs in its own
// transaction with the version bump, so a crash mid-way leaves a database
// at one version or the next, never between.
var migrations = []func(tx *bolt.Tx) error{
	// 0 → 1: the initial layout.
	func(tx *bolt.Tx) error {
		for _, name := range topBuckets {
			if _, err := tx.CreateBucketIfNotExists(name); err != nil {
				return err
			}
		}
		return nil
	},
	// 1 → 2: event batches are written compressed (events.go). The
	// batches already stored stay plain JSON, which this build still
	// reads, so nothing is rewritten; the version is bumped so that an
	// older build, which cannot read a compressed batch, refuses the
	// database with ErrTooNew instead of taking its batches for damage.
	func(tx *bolt.Tx) error { return nil },
}

func migrate(db *bolt.DB) error {
	var v int
	if err := db.View(func(tx *bolt.Tx) error {
		var err error
		v, err = schemaOf(tx)
		return err
	}); err != nil {
		return err
	}
	if v > len(migrations) {
		return fmt.Errorf("%w (schema %d, this build reads up to %d)", ErrTooNew, v, len(migrations))
	}
	for ; v < len(migrations); v++ {
		step := migrations[v]
		next := v + 1
		if err := db.Update(func(tx *bolt.Tx) error {
			if err := step(tx); err != nil {
				return err
			}
			meta, err := tx.CreateBucketIfNotExists(bucketMeta)
			if err != nil {
				return err
			}
			return meta.Put(keySchema, seal(bucketMeta, keySchema, []byte(strconv.Itoa(next))))
		}); err != nil {
			return fmt.Errorf("schema %d to %d: %w", v, next, err)
		}
	}
	return nil
}
