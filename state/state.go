// Package state is the daemon's memory: cursors, parser carry-state and the
// redacted event log of every session, in one bbolt file. It stores only
// what package event can hold (no text) and each followed file's own path.
package state

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/agentmap/agentmap/builder/event"
)

// ErrLocked means another process holds the database: a daemon is running.
var ErrLocked = errors.New("agentmap is already running")

// ErrTooNew means the database was written by a newer agentmap.
var ErrTooNew = errors.New("state was written by a newer agentmap")

// OpenTimeout bounds the wait for the file lock.
const OpenTimeout = time.Second

// DB is the open state database.
type DB struct {
	db   *bolt.DB
	path string
}

// Open opens (or creates) the state database at path and migrates it to
// SchemaVersion. A database held by another process fails within
// OpenTimeout with ErrLocked. A corrupt one is moved aside to
// <path>.corrupt-<time> and replaced by an empty one, loudly: the logs are
// the source of truth and the daemon rebuilds from them.
func Open(path string, log *slog.Logger) (*DB, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open state %s: %w", path, err)
	}
	d, err := open(path)
	if err == nil || errors.Is(err, ErrLocked) || errors.Is(err, ErrTooNew) || errors.Is(err, os.ErrPermission) {
		return d, err
	}
	aside := fmt.Sprintf("%s.corrupt-%s", path, time.Now().UTC().Format("20060102T150405Z"))
	log.Error("state database is corrupt; moving it aside and rebuilding from the logs",
		"component", "state", "path", path, "aside", aside, "err", err)
	if rerr := os.Rename(path, aside); rerr != nil {
		return nil, fmt.Errorf("move corrupt state %s aside: %w", path, rerr)
	}
	return open(path)
}

func open(path string) (d *DB, err error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: OpenTimeout})
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("%w (state %s is locked)", ErrLocked, path)
	}
	if err != nil {
		return nil, fmt.Errorf("open state %s: %w", path, err)
	}
	// A damaged file can make bbolt panic while walking pages: treat that
	// as corruption, never as a crash.
	defer func() {
		if r := recover(); r != nil {
			db.Close()
			d, err = nil, fmt.Errorf("check state %s: %v", path, r)
		}
	}()
	if err := check(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("check state %s: %w", path, err)
	}
	if err := migrate(db); err != nil {
		db.Close()
		return nil, fmt.Errorf("migrate state %s: %w", path, err)
	}
	return &DB{db: db, path: path}, nil
}

// check runs bbolt's consistency check and reads every record, so that a
// damaged file is found at open rather than mid-run.
func check(db *bolt.DB) error {
	return db.View(func(tx *bolt.Tx) error {
		for err := range tx.Check() {
			return err
		}
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			switch string(name) {
			case string(bucketSources), string(bucketSessions):
				return b.ForEach(func(k, v []byte) error {
					var probe map[string]any
					if err := json.Unmarshal(v, &probe); err != nil {
						return fmt.Errorf("bucket %s: undecodable record", name)
					}
					return nil
				})
			}
			return nil
		})
	})
}

// Path is the database file.
func (d *DB) Path() string { return d.path }

// Close releases the database and its lock.
func (d *DB) Close() error { return d.db.Close() }

// Version returns the schema version recorded in the database.
func (d *DB) Version() (int, error) {
	var v int
	err := d.db.View(func(tx *bolt.Tx) error {
		var err error
		v, err = schemaOf(tx)
		return err
	})
	return v, err
}

func schemaOf(tx *bolt.Tx) (int, error) {
	b := tx.Bucket(bucketMeta)
	if b == nil {
		return 0, nil
	}
	raw := b.Get(keySchema)
	if raw == nil {
		return 0, nil
	}
	v, err := strconv.Atoi(string(raw))
	if err != nil {
		return 0, errors.New("schema version is not a number")
	}
	return v, nil
}

func idKey(id uint64) []byte {
	var k [8]byte
	binary.BigEndian.PutUint64(k[:], id)
	return k[:]
}

func eventKey(src, seq uint64) []byte {
	var k [16]byte
	binary.BigEndian.PutUint64(k[:8], src)
	binary.BigEndian.PutUint64(k[8:], seq)
	return k[:]
}

// Load returns every source and session record (without events or
// carry-state).
func (d *DB) Load() ([]*Source, []*Session, error) {
	var srcs []*Source
	var sess []*Session
	err := d.db.View(func(tx *bolt.Tx) error {
		if err := tx.Bucket(bucketSources).ForEach(func(k, v []byte) error {
			s := new(Source)
			if err := json.Unmarshal(v, s); err != nil {
				return fmt.Errorf("source record: %w", err)
			}
			s.ID = binary.BigEndian.Uint64(k)
			srcs = append(srcs, s)
			return nil
		}); err != nil {
			return err
		}
		return tx.Bucket(bucketSessions).ForEach(func(k, v []byte) error {
			s := new(Session)
			if err := json.Unmarshal(v, s); err != nil {
				return fmt.Errorf("session record: %w", err)
			}
			s.Key = string(k)
			sess = append(sess, s)
			return nil
		})
	})
	return srcs, sess, err
}

// Carry returns a source's parser carry-state (a copy), nil if none.
func (d *DB) Carry(id uint64) ([]byte, error) {
	var out []byte
	err := d.db.View(func(tx *bolt.Tx) error {
		if v := tx.Bucket(bucketCarry).Get(idKey(id)); v != nil {
			out = append([]byte(nil), v...)
		}
		return nil
	})
	return out, err
}

// Batch is one wake-up's worth of progress on one source: the events it
// produced, the parser's carry-state and the cursor after the last line
// consumed. A batch is committed in a single transaction (CommitAll may put
// the batches of several sources in one): a crash before the commit loses
// the whole batch and its lines are read again; after it, none is.
type Batch struct {
	// Source is written as it is when the transaction runs.
	Source *Source
	// Seq is the sequence of this batch's events in the source's log; the
	// caller advances Source.NextSeq past it.
	Seq uint64
	// Carry replaces the stored carry-state when SetCarry is true.
	Carry    []byte
	SetCarry bool
	// Reset drops every event the source committed before (under
	// ResetSession, the key it was routed to then) ahead of this batch:
	// the file was truncated, replaced or rewritten.
	Reset        bool
	ResetSession string
	Events       []event.Event
	// Encoded is Events as JSON when the caller encoded them already (off
	// the committing goroutine); nil lets CommitAll encode them.
	Encoded []byte
	// Sessions are written too (activity, generation, end flags).
	Sessions []*Session
}

// Commit applies one batch atomically, taking its Seq from the source's
// NextSeq and advancing it.
func (d *DB) Commit(b Batch) error {
	b.Seq = b.Source.NextSeq
	if len(b.Events) > 0 {
		b.Source.NextSeq++
	}
	if err := d.CommitAll([]Batch{b}); err != nil {
		if len(b.Events) > 0 {
			b.Source.NextSeq--
		}
		return err
	}
	return nil
}

// CommitAll applies batches in order, in one transaction.
func (d *DB) CommitAll(bs []Batch) error {
	type enc struct {
		events   []byte
		source   []byte
		sessions []encodedSession
	}
	encs := make([]enc, len(bs))
	for i, b := range bs {
		var err error
		if b.Encoded != nil {
			encs[i].events = b.Encoded
		} else if len(b.Events) > 0 {
			if encs[i].events, err = json.Marshal(b.Events); err != nil {
				return fmt.Errorf("encode events: %w", err)
			}
		}
		if encs[i].source, err = json.Marshal(b.Source); err != nil {
			return fmt.Errorf("encode source: %w", err)
		}
		if encs[i].sessions, err = encodeSessions(b.Sessions); err != nil {
			return err
		}
	}
	err := d.db.Update(func(tx *bolt.Tx) error {
		for i, b := range bs {
			if err := commitOne(tx, b, encs[i].events, encs[i].source); err != nil {
				return err
			}
			if err := putSessions(tx, encs[i].sessions); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("commit state: %w", err)
	}
	return nil
}

func commitOne(tx *bolt.Tx, b Batch, events, source []byte) error {
	if b.Reset {
		if err := dropEvents(tx, b.ResetSession, b.Source.ID); err != nil {
			return err
		}
	}
	if events != nil {
		eb, err := tx.Bucket(bucketEvents).CreateBucketIfNotExists([]byte(b.Source.Session))
		if err != nil {
			return err
		}
		if err := eb.Put(eventKey(b.Source.ID, b.Seq), events); err != nil {
			return err
		}
	}
	if err := tx.Bucket(bucketSources).Put(idKey(b.Source.ID), source); err != nil {
		return err
	}
	if b.SetCarry {
		cb := tx.Bucket(bucketCarry)
		if len(b.Carry) == 0 {
			return cb.Delete(idKey(b.Source.ID))
		}
		return cb.Put(idKey(b.Source.ID), b.Carry)
	}
	return nil
}

// dropEvents deletes the events one source committed under a session.
func dropEvents(tx *bolt.Tx, session string, src uint64) error {
	if session == "" {
		return nil
	}
	eb := tx.Bucket(bucketEvents).Bucket([]byte(session))
	if eb == nil {
		return nil
	}
	prefix := idKey(src)
	c := eb.Cursor()
	var keys [][]byte
	for k, _ := c.Seek(prefix); k != nil && len(k) == 16 && string(k[:8]) == string(prefix); k, _ = c.Next() {
		keys = append(keys, append([]byte(nil), k...))
	}
	for _, k := range keys {
		if err := eb.Delete(k); err != nil {
			return err
		}
	}
	return nil
}

type encodedSession struct {
	key   []byte
	data  []byte
	flush *Flush // queued in the sinks' outboxes (outbox.go)
}

func encodeSessions(ss []*Session) ([]encodedSession, error) {
	out := make([]encodedSession, 0, len(ss))
	for _, s := range ss {
		if s.Key == "" {
			return nil, errors.New("session record without key")
		}
		data, err := json.Marshal(s)
		if err != nil {
			return nil, fmt.Errorf("encode session: %w", err)
		}
		out = append(out, encodedSession{[]byte(s.Key), data, s.Flush})
	}
	return out, nil
}

func putSessions(tx *bolt.Tx, ss []encodedSession) error {
	b := tx.Bucket(bucketSessions)
	for _, s := range ss {
		if err := b.Put(s.key, s.data); err != nil {
			return err
		}
	}
	return queueFlushes(tx, ss)
}

// PutSessions writes session records (a flush, an end flag).
func (d *DB) PutSessions(ss ...*Session) error {
	enc, err := encodeSessions(ss)
	if err != nil {
		return err
	}
	if err := d.db.Update(func(tx *bolt.Tx) error { return putSessions(tx, enc) }); err != nil {
		return fmt.Errorf("commit state: %w", err)
	}
	return nil
}

// PutSource writes a source record alone (a path change after a rename, a
// missing flag).
func (d *DB) PutSource(s *Source) error {
	rec, err := json.Marshal(s)
	if err != nil {
		return fmt.Errorf("encode source: %w", err)
	}
	if err := d.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketSources).Put(idKey(s.ID), rec)
	}); err != nil {
		return fmt.Errorf("commit state: %w", err)
	}
	return nil
}

// DeleteSource forgets a source and drops its events.
func (d *DB) DeleteSource(s *Source) error {
	if err := d.db.Update(func(tx *bolt.Tx) error {
		if err := dropEvents(tx, s.Session, s.ID); err != nil {
			return err
		}
		if err := tx.Bucket(bucketCarry).Delete(idKey(s.ID)); err != nil {
			return err
		}
		return tx.Bucket(bucketSources).Delete(idKey(s.ID))
	}); err != nil {
		return fmt.Errorf("commit state: %w", err)
	}
	return nil
}

// Events calls fn for each source that committed events to the session, in
// source id order, with all its events in commit order. The events are
// decoded copies, valid after the call.
func (d *DB) Events(session string, fn func(src uint64, events []event.Event) error) error {
	type part struct {
		src    uint64
		events []event.Event
	}
	var parts []part
	err := d.db.View(func(tx *bolt.Tx) error {
		eb := tx.Bucket(bucketEvents).Bucket([]byte(session))
		if eb == nil {
			return nil
		}
		return eb.ForEach(func(k, v []byte) error {
			if len(k) != 16 {
				return nil
			}
			src := binary.BigEndian.Uint64(k[:8])
			var batch []event.Event
			if err := json.Unmarshal(v, &batch); err != nil {
				return fmt.Errorf("session %s: undecodable event batch", session)
			}
			if n := len(parts); n > 0 && parts[n-1].src == src {
				parts[n-1].events = append(parts[n-1].events, batch...)
			} else {
				parts = append(parts, part{src, batch})
			}
			return nil
		})
	})
	if err != nil {
		return fmt.Errorf("read events: %w", err)
	}
	for _, p := range parts {
		if err := fn(p.src, p.events); err != nil {
			return err
		}
	}
	return nil
}
