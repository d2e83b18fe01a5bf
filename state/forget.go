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
// their events, the records and carry-state of the sources that fed them,
// and what the sinks' outboxes and the exports keep of them (a queued
// send, the hash of what was sent or exported). It is how sessions that
// privacy.exclude now covers leave the state; one transaction for many
// spares each its own commit (a disk sync each: a second for a thousand
// sessions).
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
			if err := forgetSent(tx, []byte(f.Session)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("commit state: %w", err)
	}
	return nil
}

// forgetSent deletes what the sinks' outboxes and the exports keep of a
// session: its queued entry and its place in the queue, and the hashes of
// what was last sent or exported. (A send or an export under way when the
// session is forgotten records nothing of it afterwards: Ack and
// CommitExport skip sessions without a record.)
func forgetSent(tx *bolt.Tx, key []byte) error {
	if ob := tx.Bucket(bucketOutbox); ob != nil {
		c := ob.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			sb := ob.Bucket(k)
			if v != nil || sb == nil {
				continue
			}
			if pending, queue := sb.Bucket(bucketPending), sb.Bucket(bucketQueue); pending != nil && queue != nil {
				if q, ok, _ := pendingEntry(pending, key); ok {
					if err := queue.Delete(idKey(q.Seq)); err != nil {
						return err
					}
				}
			}
			for _, name := range [][]byte{bucketPending, bucketSent} {
				if b := sb.Bucket(name); b != nil {
					if err := b.Delete(key); err != nil {
						return err
					}
				}
			}
		}
	}
	if eb := tx.Bucket(bucketExports); eb != nil {
		if b := eb.Bucket(bucketExported); b != nil {
			return b.Delete(key)
		}
	}
	return nil
}
