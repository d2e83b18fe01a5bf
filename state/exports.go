package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	bolt "go.etcd.io/bbolt"
)

// Inside bucketExports: keyExportCursor holds the JSON ExportState, and the
// nested bucket bucketExported maps a session key to the JSON Exported
// record of the map content last exported for it. A session is due in an
// incremental export when its flush's content hash differs from that
// record's: the comparison neither skips a flush that landed while an
// export was being written nor repeats one, whatever the clocks say.
var (
	keyExportCursor = []byte("cursor")
	bucketExported  = []byte("exported")
)

// ExportState is the scheduled exports' cursor and their last outcome.
type ExportState struct {
	// DeviceID is AttemptDB's device id, generated once and kept for ever;
	// NextSeq the first source_seq of the next export.
	DeviceID string `json:"deviceId,omitempty"`
	NextSeq  uint64 `json:"nextSeq,omitempty"`
	// Count is the number of exports written; LastMs the stamp (Unix ms)
	// of the last one, LastFiles its file names and LastSessions how many
	// sessions it held.
	Count        uint64   `json:"count,omitempty"`
	LastMs       int64    `json:"lastMs,omitempty"`
	LastFiles    []string `json:"lastFiles,omitempty"`
	LastSessions int      `json:"lastSessions,omitempty"`
	// Owned are the export files this data directory wrote and may prune
	// (export keep), each as it was once written: a file of the same
	// name that is not that is someone else's. Recorded only while keep
	// prunes; exports written before it was recorded are never pruned.
	Owned []OwnedExport `json:"owned,omitempty"`
	// AttemptMs is when an export was last attempted (written, found
	// empty, or failed).
	AttemptMs int64 `json:"attemptMs,omitempty"`
	// LastError is the error of the last attempt when it failed ("" when
	// it succeeded), Failures the failed attempts in a row.
	LastError string `json:"lastError,omitempty"`
	Failures  int    `json:"failures,omitempty"`
	// Pending is an export chosen but not yet recorded as done. After a
	// crash it is written again under the same stamp with the same
	// sessions and first source_seq, so the retry is the same export.
	Pending *PendingExport `json:"pending,omitempty"`
}

// OwnedExport is an export file as its writer found it once written.
type OwnedExport struct {
	Dir   string `json:"dir"`
	Name  string `json:"name"`
	Size  int64  `json:"size"`
	ModNs int64  `json:"modNs"`
}

// PendingExport is the selection of an export in progress.
type PendingExport struct {
	StampMs  int64      `json:"stampMs"`
	FirstSeq uint64     `json:"firstSeq"`
	Sessions []Exported `json:"sessions"`
	// Written are the files of this export written so far, each as it
	// was once written: a retry removes those, and no other file of the
	// stamp's names (another data directory's export of the same second).
	Written []OwnedExport `json:"written,omitempty"`
}

// Exported is one session's map as chosen for (or written by) an export.
type Exported struct {
	Key    string `json:"key"`
	Path   string `json:"path"` // relative to the map store
	SHA256 string `json:"sha256"`
	// FlushedMs is when the map was written; StampMs the stamp of the
	// export that holds it.
	FlushedMs int64 `json:"flushedMs,omitempty"`
	StampMs   int64 `json:"stampMs,omitempty"`
}

// ExportState reads the cursor (the zero value before the first export).
func (d *DB) ExportState() (ExportState, error) {
	var st ExportState
	err := d.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketExports)
		if b == nil {
			return nil
		}
		raw := b.Get(keyExportCursor)
		if raw == nil {
			return nil
		}
		if err := json.Unmarshal(raw, &st); err != nil {
			return errors.New("export cursor is undecodable")
		}
		return nil
	})
	return st, err
}

// PutExportState records the cursor alone: a pending selection, or the
// outcome of an attempt that exported nothing.
func (d *DB) PutExportState(st ExportState) error {
	return d.update(func(tx *bolt.Tx) error { return putExportState(tx, st) })
}

func putExportState(tx *bolt.Tx, st ExportState) error {
	raw, err := json.Marshal(st)
	if err != nil {
		return err
	}
	b, err := tx.CreateBucketIfNotExists(bucketExports)
	if err != nil {
		return err
	}
	return b.Put(keyExportCursor, raw)
}

// CommitExport records an export as done, in one transaction: the content
// of every session it wrote and the cursor (whose Pending the caller has
// cleared). The files must be durable before this is called.
func (d *DB) CommitExport(st ExportState, done []Exported) error {
	return d.update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketExports)
		if err != nil {
			return err
		}
		ex, err := b.CreateBucketIfNotExists(bucketExported)
		if err != nil {
			return err
		}
		sessions := tx.Bucket(bucketSessions)
		for _, e := range done {
			if sessions.Get([]byte(e.Key)) == nil {
				continue // forgotten while it was exported (privacy.exclude)
			}
			raw, err := json.Marshal(e)
			if err != nil {
				return err
			}
			if err := ex.Put([]byte(e.Key), raw); err != nil {
				return err
			}
		}
		return putExportState(tx, st)
	})
}

// ExportedContent returns, by session key, the content hash of the map last
// exported for each session.
func (d *DB) ExportedContent() (map[string]string, error) {
	out := map[string]string{}
	err := d.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketExports)
		if b == nil {
			return nil
		}
		ex := b.Bucket(bucketExported)
		if ex == nil {
			return nil
		}
		return ex.ForEach(func(k, v []byte) error {
			var e Exported
			if err := json.Unmarshal(v, &e); err != nil {
				return fmt.Errorf("exported record of %d bytes is undecodable", len(k))
			}
			out[string(k)] = e.SHA256
			return nil
		})
	})
	return out, err
}

// Flushed lists every session whose map is in the store (a flush that
// wrote a file), sorted by key, as its last flush recorded it.
func (d *DB) Flushed() ([]Exported, error) {
	var out []Exported
	err := d.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSessions)
		if b == nil {
			return nil
		}
		return b.ForEach(func(k, v []byte) error {
			var s Session
			if err := decodeRecord(bucketSessions, k, v, &s); err != nil {
				return errors.New("session record is undecodable")
			}
			if f := s.Flush; f != nil && f.Path != "" && f.SHA256 != "" {
				out = append(out, Exported{Key: string(k), Path: f.Path, SHA256: f.SHA256, FlushedMs: f.AtMs})
			}
			return nil
		})
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, err
}
