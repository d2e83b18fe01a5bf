package state

import (
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// Forgotten is a session to forget and the sources that fed it, or, with
// OnlySources, some of its sources only.
type Forgotten struct {
	Session string
	Sources []*Source
	// OnlySources keeps the session: only Sources leave, with their
	// carry-states and the events they committed under it. What was sent
	// or exported of the session stays (its next map replaces it).
	OnlySources bool
	// Rewrite are session records written in the same transaction: the
	// session itself when only some of its sources leave, a parent whose
	// map loses the lane of a child forgotten, each with its Gen advanced,
	// so that a crash before their maps are written again still leaves
	// them to write.
	Rewrite []*Session
}

// Forget removes sessions entirely (or some of their sources, OnlySources),
// in one transaction: their records,
// their events, the records and carry-state of the sources that fed them,
// and what the sinks' outboxes and the exports keep of them (a queued
// send, the hash of what was sent or exported). It is how sessions that
// privacy.exclude now covers leave the state; one transaction for many
// spares each its own commit (a disk sync each: a second for a thousand
// sessions).
func (d *DB) Forget(sessions ...Forgotten) error {
	var rewrite []*Session
	for _, f := range sessions {
		rewrite = append(rewrite, f.Rewrite...)
	}
	enc, err := encodeSessions(rewrite)
	if err != nil {
		return err
	}
	if err := d.update(func(tx *bolt.Tx) error {
		for _, f := range sessions {
			if f.OnlySources {
				for _, s := range f.Sources {
					if err := dropEvents(tx, f.Session, s.ID); err != nil {
						return err
					}
				}
			}
			for _, s := range f.Sources {
				if err := tx.Bucket(bucketCarry).Delete(idKey(s.ID)); err != nil {
					return err
				}
				if err := dropTails(tx, s.ID); err != nil {
					return err
				}
				if err := tx.Bucket(bucketSources).Delete(idKey(s.ID)); err != nil {
					return err
				}
			}
			if f.OnlySources {
				continue
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
		// After the deletions: a session forgotten whole is not written
		// back, even when it is another's parent named here too.
		gone := map[string]bool{}
		for _, f := range sessions {
			if !f.OnlySources {
				gone[f.Session] = true
			}
		}
		kept := enc[:0:0]
		for _, e := range enc {
			if !gone[string(e.key)] {
				kept = append(kept, e)
			}
		}
		return d.putSessions(tx, kept)
	}); err != nil {
		return fmt.Errorf("commit state: %w", err)
	}
	return nil
}

// forgetSent deletes what the exports keep of a session, and has each sink
// that was sent it (or has it queued) retract it: the sink's queued entry
// becomes a retraction of what it stored (retract). (A send or an export
// under way when the session is forgotten records nothing of it
// afterwards: Ack and CommitExport skip sessions without a record.)
func forgetSent(tx *bolt.Tx, key []byte) error {
	if ob := tx.Bucket(bucketOutbox); ob != nil {
		now := time.Now().UnixMilli()
		c := ob.Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			sb := ob.Bucket(k)
			if v != nil || sb == nil {
				continue
			}
			if err := retract(sb, key, now); err != nil {
				return err
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
