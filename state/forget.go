package state

import (
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Forgotten is a session to forget and the sources that fed it.
type Forgotten struct {
	Session string
	Sources []*Source
}

// Forget removes sessions entirely, in one transaction: their records,
// their events, and the records and carry-state of the sources that fed
// them. It is how sessions that privacy.exclude now covers leave the
// state; one transaction for many spares each its own commit (a disk
// sync each: a second for a thousand sessions).
func (d *DB) Forget(sessions ...Forgotten) error {
	if err := d.update(func(tx *bolt.Tx) error {
		for _, f := range sessions {
			for _, s := range f.Sources {
				if err := tx.Bucket(bucketCarry).Delete(idKey(s.ID)); err != nil {
					return err
				}
				if err := tx.Bucket(bucketSources).Delete(idKey(s.ID)); err != nil {
					return err
				}
			}
			if err := tx.Bucket(bucketEvents).DeleteBucket([]byte(f.Session)); err != nil && !errors.Is(err, bolt.ErrBucketNotFound) {
				return err
			}
			if err := tx.Bucket(bucketSessions).Delete([]byte(f.Session)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("commit state: %w", err)
	}
	return nil
}
