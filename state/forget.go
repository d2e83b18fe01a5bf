package state

import (
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Forget removes a session entirely, in one transaction: its record, its
// events, and the records and carry-state of the sources that fed it. It
// is how a session that privacy.exclude now covers leaves the state.
func (d *DB) Forget(session string, sources []*Source) error {
	if err := d.update(func(tx *bolt.Tx) error {
		for _, s := range sources {
			if err := tx.Bucket(bucketCarry).Delete(idKey(s.ID)); err != nil {
				return err
			}
			if err := tx.Bucket(bucketSources).Delete(idKey(s.ID)); err != nil {
				return err
			}
		}
		if err := tx.Bucket(bucketEvents).DeleteBucket([]byte(session)); err != nil && !errors.Is(err, bolt.ErrBucketNotFound) {
			return err
		}
		return tx.Bucket(bucketSessions).Delete([]byte(session))
	}); err != nil {
		return fmt.Errorf("commit state: %w", err)
	}
	return nil
}
