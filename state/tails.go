package state

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/agentmap/agentmap/builder/event"
	bolt "go.etcd.io/bbolt"
)

// bucketTails holds, per source, the events of its log's last line when
// that line has no newline yet but parses: a writer that exits without
// ending its last record (a dozen of the corpus's logs end so). The cursor
// does not move over such a line (more may be written to it); a map takes
// its events from the log as it is (the daemon's partial), and the state
// keeps them here so that a map written again once the log is gone (an
// upgrade's rewrite, flush --all --rewrite) still has them. The key is the
// source id and the offset the line starts at (the cursor then), the value
// a sealed event batch as in the events bucket (which the privacy audit's
// SearchableBytes decompresses alike). One tail per source: a newer one
// replaces it. Created by the first tail, not by a migration, as
// bucketExports: a build without tails ignores it.
var bucketTails = []byte("tails")

func tailKey(id uint64, at int64) []byte {
	return binary.BigEndian.AppendUint64(idKey(id), uint64(at))
}

// Tail is the events of a source's unfinished last line at an offset, as
// EncodeEvents encodes them (taken when they are met: the events a map is
// built from are not copied, and bytes stay as they were).
type Tail struct {
	Source  uint64
	At      int64
	Encoded []byte
}

// Events decodes a tail's events.
func (t Tail) Events() ([]event.Event, error) {
	k := tailKey(t.Source, t.At)
	var evs []event.Event
	if err := decodeEvents(bucketTails, k, seal(bucketTails, k, bytes.Clone(t.Encoded)), &evs); err != nil {
		return nil, err
	}
	return evs, nil
}

// PutTails records the tails, each replacing the one its source had. A
// tail whose source is no longer recorded (forgotten by privacy.exclude,
// deleted, dropped by a repair since it was noted) is not written: its
// events would outlive their source, with nothing to remove them.
func (d *DB) PutTails(tails []Tail) error {
	if len(tails) == 0 {
		return nil
	}
	if err := d.update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketTails)
		if err != nil {
			return err
		}
		srcB := tx.Bucket(bucketSources)
		for _, t := range tails {
			if srcB.Get(idKey(t.Source)) == nil {
				continue
			}
			if err := dropTail(b, t.Source); err != nil {
				return err
			}
			k := tailKey(t.Source, t.At)
			if err := b.Put(k, seal(bucketTails, k, append([]byte(nil), t.Encoded...))); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("commit state: %w", err)
	}
	return nil
}

// TailAt returns the events recorded for a source's unfinished last line
// starting at at: ok is false when none is recorded there (none at all, or
// one of an earlier cursor, which the lines read since have replaced).
func (d *DB) TailAt(id uint64, at int64) (evs []event.Event, ok bool, err error) {
	err = d.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketTails)
		if b == nil {
			return nil
		}
		k := tailKey(id, at)
		v := b.Get(k)
		if v == nil {
			return nil
		}
		if err := decodeEvents(bucketTails, k, v, &evs); err != nil {
			return err
		}
		ok = true
		return nil
	})
	return evs, ok, err
}

// dropTail deletes the tail a source has, whatever its offset.
func dropTail(b *bolt.Bucket, id uint64) error {
	prefix := idKey(id)
	c := b.Cursor()
	for k, _ := c.Seek(prefix); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Seek(prefix) {
		if err := b.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

// dropTails deletes the tail of a source being forgotten.
func dropTails(tx *bolt.Tx, id uint64) error {
	if b := tx.Bucket(bucketTails); b != nil {
		return dropTail(b, id)
	}
	return nil
}
