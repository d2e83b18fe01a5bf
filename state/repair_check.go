package state

import (
	"bytes"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// findDamage is the check every open makes: it counts what repairRecords
// would drop, record for record and source for source, without dropping
// anything, in memory that does not grow with the database. repairRecords
// joins the sources to their sessions and event batches through tables of
// every record (at 100,000 sessions some 15 MB of live heap, twice that
// with the collector's headroom, the larger of the two peaks of a scan that
// finds nothing new); here the tables hold only what is damaged, which is
// nothing on a clean open, and each source looks its session and its first
// event batch up in the database instead. A database found damaged is then
// repaired by repairRecords, whose tables are worth it once.
//
// The two must agree: TestFindDamageCountsAsRepairDoes compares them over
// databases damaged at random.
func findDamage(tx *bolt.Tx, mr *mappedReader) (Repair, error) {
	var rep Repair
	srcB, sessB, carryB, evB := tx.Bucket(bucketSources), tx.Bucket(bucketSessions), tx.Bucket(bucketCarry), tx.Bucket(bucketEvents)
	if srcB == nil || sessB == nil || carryB == nil || evB == nil {
		return rep, fmt.Errorf("%w: a top-level bucket is missing", ErrDamaged)
	}
	badSessions := map[string]bool{}
	if err := sessB.ForEach(func(k, v []byte) error {
		mr.read(k, v)
		if sessionDamaged(k, v) {
			badSessions[string(k)] = true
			rep.Records++
		}
		return nil
	}); err != nil {
		return rep, err
	}
	// forget holds the ids of sources a damaged carry-state or batch key
	// names; damagedSessions the sessions one of whose batches is damaged.
	forget := map[uint64]bool{}
	if err := carryB.ForEach(func(k, v []byte) error {
		mr.read(k, v)
		if carryDamaged(k, v) {
			rep.Records++
			if len(k) == 8 {
				forget[binary.BigEndian.Uint64(k)] = true
			}
		}
		return nil
	}); err != nil {
		return rep, err
	}
	badTails, err := damagedTails(tx, mr)
	if err != nil {
		return rep, err
	}
	rep.Records += len(badTails)
	damagedSessions := map[string]bool{}
	if err := evB.ForEach(func(name, v []byte) error {
		mr.bucket()
		nb := evB.Bucket(name)
		if v != nil || nb == nil {
			rep.Records++
			return nil
		}
		scope := eventsScope(name)
		return nb.ForEach(func(k, v []byte) error {
			mr.read(k, v)
			if batchDamaged(scope, k, v) {
				rep.Records++
				if len(k) >= 8 {
					forget[binary.BigEndian.Uint64(k[:8])] = true
				}
				damagedSessions[string(name)] = true
			}
			return nil
		})
	}); err != nil {
		return rep, err
	}
	// The sources last, each joined to its session and its batches by a
	// look-up, in the order repairRecords's cases take them.
	err = srcB.ForEach(func(k, v []byte) error {
		mr.read(k, v)
		s := new(Source)
		if len(k) != 8 || v == nil || decodeRecord(bucketSources, k, v, s) != nil {
			rep.Records++
			rep.Sources++
			return nil
		}
		id := binary.BigEndian.Uint64(k)
		committed := s.NextSeq > 0 && (s.Offset != 0 || s.Digest != "") // see repairRecords
		switch {
		case forget[id], damagedSessions[s.Session]:
			rep.Sources++
		case s.Session != "" && !sessionKept(sessB, badSessions, s.Session, mr):
			rep.Sources++
		case committed && !hasBatch(evB, s.Session, k, mr):
			rep.Sources++
		}
		return nil
	})
	return rep, err
}

// sessionKept reports whether a session's record is there and sound.
func sessionKept(sessB *bolt.Bucket, bad map[string]bool, key string, mr *mappedReader) bool {
	v := sessB.Get([]byte(key))
	mr.lookup()
	return v != nil && !bad[key]
}

// hasBatch reports whether a session's events hold a batch under a
// source's id (src, its 8-byte key). A damaged one counts: its session's
// sources are all read again anyway.
func hasBatch(evB *bolt.Bucket, session string, src []byte, mr *mappedReader) bool {
	if session == "" {
		return false
	}
	nb := evB.Bucket([]byte(session))
	if nb == nil {
		return false
	}
	mr.lookup() // its page, which the walk over the events may have let go of
	c := nb.Cursor()
	for k, _ := c.Seek(src); k != nil && bytes.HasPrefix(k, src); k, _ = c.Next() {
		if len(k) == 16 {
			return true
		}
	}
	return false
}
