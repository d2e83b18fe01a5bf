// Package state is the daemon's memory: cursors, parser carry-state and the
// redacted event log of every session, in one bbolt file. It stores only
// what package event can hold (no text) and each followed file's own path.
package state

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/internal/regular"
)

// ErrLocked means another process holds the database: a daemon is running.
var ErrLocked = errors.New("agentmap is already running")

// ErrTooNew means the database was written by a newer agentmap.
var ErrTooNew = errors.New("state was written by a newer agentmap")

// OpenTimeout bounds the wait for the file lock.
const OpenTimeout = time.Second

// DB is the open state database.
type DB struct {
	db     *bolt.DB
	path   string
	repair Repair
	// writes counts the write transactions begun (update), so that a
	// reader of the records can tell that none changed since it looked.
	writes atomic.Uint64
	// opened is the file as it was opened, to tell it from one put in
	// its place (see Replaced).
	opened os.FileInfo
	// fresh is set when the file held no schema when opened: a database
	// this open made (of an empty file, or none).
	fresh bool
	// lookups counts the records looked up by key since the mapping's
	// pages were last let go of (looked).
	lookups atomic.Int64
	// file is the database file bbolt opened (Close of an unusable
	// database lets go of its lock).
	file *os.File
	// failure is ErrUnusable once bbolt panicked in a transaction of its
	// own accord (recoverUnusable), when failed is closed.
	failure  atomic.Pointer[error]
	failed   chan struct{}
	failOnce sync.Once
}

// Writes is how many write transactions were begun on the records (the
// sink's queue aside), successful or not: equal counts mean no record was
// written in between.
func (d *DB) Writes() uint64 { return d.writes.Load() }

// Open opens (or creates) the state database at path and migrates it to
// SchemaVersion. A database held by another process fails within
// OpenTimeout with ErrLocked. A damaged one never panics: damage to its
// structure (a cut file, a broken page) moves it aside to
// <path>.corrupt-<time> and starts an empty one; damage to single records
// drops those records and the sources that fed them, which the daemon
// then reads again from the start (repair.go). Either way the logs are the
// source of truth, the maps already written are kept, and Repaired says
// what happened.
func Open(path string, log *slog.Logger) (*DB, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("open state %s: %w", path, err)
	}
	if err := notAFile(path); err != nil {
		return nil, err
	}
	// A file of no bytes bbolt makes a new database of, in silence: it
	// was one that lost everything (cut to nothing, or a crash as it was
	// made). Nothing in it is worth keeping aside; what is said is why
	// every log is read again. Told only once this process holds the
	// file's lock and it is still that file (os.SameFile): another
	// process may have just created it, and made it a database since.
	empty, _ := os.Stat(path)
	if empty != nil && (!empty.Mode().IsRegular() || empty.Size() != 0) {
		empty = nil
	}
	d, err := open(path, log)
	if err == nil && empty != nil && d.opened != nil && os.SameFile(empty, d.opened) && d.fresh {
		d.repair = Repair{At: time.Now(), Reason: errEmptyFile.Error()}
		log.Error("state database was empty; reading every log again", "component", "state", "path", path)
	}
	if err == nil || errors.Is(err, ErrLocked) || errors.Is(err, ErrTooNew) || IsFault(err) {
		return d, err
	}
	cause := err
	aside, err := moveAside(path)
	if err != nil {
		return nil, fmt.Errorf("move damaged state %s aside (%v): %w", path, cause, err)
	}
	log.Error("state database is corrupt; moved it aside and rebuilding from the logs",
		"component", "state", "path", path, "aside", aside, "err", cause)
	if d, err = open(path, log); err != nil {
		return nil, err
	}
	d.repair = Repair{At: time.Now(), Aside: aside, Reason: cause.Error()}
	return d, nil
}

// ErrNotAFile means something that is not a regular file (a directory, a
// device, a FIFO) is where the state database is kept. agentmap did not
// write it, so it is refused, never moved aside as a damaged database.
var ErrNotAFile = errors.New("not a regular file, so not a state database agentmap wrote")

// notAFile refuses a path that holds something other than a regular file
// (followed through a link, which the data directory's checks refuse on
// their own).
func notAFile(path string) error {
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().IsRegular() {
		return nil // missing (made), or the open says what is wrong
	}
	return fmt.Errorf("open state %s: %w: it is a %s; agentmap does not move or remove what it did not write: move it out of the way yourself and start again", path, ErrNotAFile, regular.Kind(fi.Mode()))
}

// errEmptyFile is what a state database of no bytes is said to be.
var errEmptyFile = errors.New("the file was empty")

// Path is the database file.
func (d *DB) Path() string { return d.path }

// Replaced says when the file at Path is no longer the one this process
// opened: removed, or another file moved onto its name. Its writes then go
// to a file nobody reads again, and its lock no longer keeps a second
// daemon out. nil when it is still there, or when that cannot be told.
func (d *DB) Replaced() error {
	if d.opened == nil {
		return nil
	}
	fi, err := os.Stat(d.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("the state database %s was removed while agentmap ran", d.path)
	case err != nil:
		return nil // a fault of the directory, which the writes report
	case !os.SameFile(fi, d.opened):
		return fmt.Errorf("the state database %s was replaced by another file while agentmap ran", d.path)
	}
	return nil
}

// Close releases the database and its lock. Of an unusable database, only
// the lock and the file are let go of: bbolt's Close would wait for the
// locks a panicked transaction may hold (its mapping stays until the
// process ends).
func (d *DB) Close() error {
	if d.Unusable() != nil && d.file != nil {
		dropLock(d.file)
		return nil
	}
	return d.db.Close()
}

func newDB(db *bolt.DB, file *os.File, path string) *DB {
	return &DB{db: db, file: file, path: path, failed: make(chan struct{})}
}

// Version returns the schema version recorded in the database.
func (d *DB) Version() (int, error) {
	var v int
	err := d.view(func(tx *bolt.Tx) error {
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
	raw, err := unseal(bucketMeta, keySchema, raw)
	if err != nil {
		return 0, err
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
	err := d.LoadEach(func(s *Source) error {
		srcs = append(srcs, s)
		return nil
	}, func(s *Session) error {
		sess = append(sess, s)
		return nil
	})
	return srcs, sess, err
}

// LoadEach hands every source record, then every session record, to the
// given functions, one at a time, in one read transaction: a caller that
// keeps only some of them (a one-shot catch-up lets go of the sessions
// with nothing new) never holds them all. An error from a function ends
// the walk and is returned.
func (d *DB) LoadEach(source func(*Source) error, session func(*Session) error) error {
	return d.LoadPasses(Passes{Sources: source, Sessions: session})
}

// Passes are the walks LoadPasses makes over the records, in this order,
// each one skipped when nil. A caller that lets go of most records as it
// reads them (a one-shot catch-up, quiet.go) learns in one pass what it
// needs for the next instead of holding them.
type Passes struct {
	// SessionKeys has every session's key (valid only during the call),
	// no record decoded.
	SessionKeys func(key []byte)
	Sources     func(*Source) error
	Sessions    func(*Session) error
	// SessionsWhere, when set, narrows Sessions to the records it keeps,
	// given each one's key and stored bytes (the record's JSON and its
	// seal) before they are decoded: a caller after a few sessions of
	// many skips decoding the rest. A record it passes over is not
	// checked either.
	SessionsWhere func(key, stored []byte) bool
	// SourcesAgain has every source's id again, and a function that
	// decodes its record, for those the caller did not keep.
	SourcesAgain func(id uint64, record func() (*Source, error)) error
}

// LoadPasses walks the records as p asks, in one read transaction.
func (d *DB) LoadPasses(p Passes) error {
	return d.Read(func(l *Loader) error {
		if p.SessionKeys != nil {
			if err := l.SessionKeys(p.SessionKeys); err != nil {
				return err
			}
		}
		if p.Sources != nil {
			if err := l.Sources(p.Sources); err != nil {
				return err
			}
		}
		if p.Sessions != nil {
			if err := l.sessions(p.SessionsWhere, p.Sessions); err != nil {
				return err
			}
		}
		if p.SourcesAgain != nil {
			return l.SourcesAgain(p.SourcesAgain)
		}
		return nil
	})
}

// Loader reads the records in one read transaction (DB.Read), in as many
// walks over them as its caller needs: a one-shot catch-up over many
// sessions reads them in pieces of sessions, so that what it learns of
// each while it reads them never grows with their number. What it reads
// through the database's mapping is let go of as it goes (mappedReader).
type Loader struct {
	mr             *mappedReader
	sources, sessB *bolt.Bucket
}

// Read runs fn with a Loader of the records, in one read transaction.
func (d *DB) Read(fn func(*Loader) error) error {
	return d.view(func(tx *bolt.Tx) error {
		return fn(&Loader{mr: &mappedReader{db: d.db, tx: tx},
			sources: tx.Bucket(bucketSources), sessB: tx.Bucket(bucketSessions)})
	})
}

// SessionKeys hands every session's key (valid only during the call) to
// fn, no record decoded.
func (l *Loader) SessionKeys(fn func(key []byte)) error {
	return l.sessB.ForEach(func(k, v []byte) error {
		l.mr.read(k, v)
		fn(k)
		return nil
	})
}

// Sources hands every source record to fn, decoded; an error from fn ends
// the walk and is returned.
func (l *Loader) Sources(fn func(*Source) error) error {
	return l.sources.ForEach(func(k, v []byte) error {
		l.mr.read(k, v)
		s, err := decodeSource(k, v)
		if err != nil {
			return err
		}
		return fn(s)
	})
}

// Sessions hands to fn every session record whose key where accepts (nil:
// every one), decoded; the others are not decoded.
func (l *Loader) Sessions(where func(key []byte) bool, fn func(*Session) error) error {
	if where == nil {
		return l.sessions(nil, fn)
	}
	return l.sessions(func(k, _ []byte) bool { return where(k) }, fn)
}

// sessions is Sessions narrowed by the key and stored bytes of each record.
func (l *Loader) sessions(where func(key, stored []byte) bool, fn func(*Session) error) error {
	return l.sessB.ForEach(func(k, v []byte) error {
		l.mr.read(k, v) // its page is read, decoded or not
		if where != nil && !where(k, v) {
			return nil
		}
		s := new(Session)
		if err := decodeRecord(bucketSessions, k, v, s); err != nil {
			return fmt.Errorf("session record: %w", err)
		}
		s.Key = string(k)
		return fn(s)
	})
}

// SourcesAgain hands every source's id to fn, with a function that decodes
// its record, for the records the caller did not keep.
func (l *Loader) SourcesAgain(fn func(id uint64, record func() (*Source, error)) error) error {
	return l.sources.ForEach(func(k, v []byte) error {
		l.mr.read(k, v)
		if len(k) != 8 {
			return fmt.Errorf("source record: %w (a key of %d bytes)", ErrDamaged, len(k))
		}
		return fn(binary.BigEndian.Uint64(k), func() (*Source, error) { return decodeSource(k, v) })
	})
}

// Source reads one source record by its id, off the order of a walk; a
// record that is not there is an error (the caller met it in a walk).
func (l *Loader) Source(id uint64) (*Source, error) {
	l.mr.lookup()
	k := idKey(id)
	v := l.sources.Get(k)
	if v == nil {
		return nil, fmt.Errorf("source record %d: not in the state database", id)
	}
	return decodeSource(k, v)
}

func decodeSource(k, v []byte) (*Source, error) {
	s := new(Source)
	if err := decodeRecord(bucketSources, k, v, s); err != nil {
		return nil, fmt.Errorf("source record: %w", err)
	}
	s.ID = binary.BigEndian.Uint64(k)
	return s, nil
}

// Sources reads back, as committed, the records of the given sources; a
// record that is not there is an error (the caller met it in LoadEach).
func (d *DB) Sources(ids []uint64) ([]*Source, error) {
	var srcs []*Source
	err := d.view(func(tx *bolt.Tx) error {
		var err error
		srcs, err = d.sourcesIn(tx, ids)
		return err
	})
	if err != nil {
		return nil, err
	}
	return srcs, nil
}

// Records reads back, as committed, one session's record and the records
// of the given sources: a one-shot catch-up lets go of the records of
// sessions it wrote, and takes them up again here when a later log joins
// one of them. A record that is not there is an error: the caller holds
// its key because it was committed.
func (d *DB) Records(key string, ids []uint64) (*Session, []*Source, error) {
	sess := &Session{Key: key}
	var srcs []*Source
	err := d.view(func(tx *bolt.Tx) error {
		k := []byte(key)
		v := tx.Bucket(bucketSessions).Get(k)
		if v == nil {
			return fmt.Errorf("session record %q: not in the state database", key)
		}
		if err := decodeRecord(bucketSessions, k, v, sess); err != nil {
			return fmt.Errorf("session record: %w", err)
		}
		d.looked(tx, 1)
		var err error
		srcs, err = d.sourcesIn(tx, ids)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return sess, srcs, nil
}

// sourcesIn reads the records of the given sources, each of which must be
// there.
func (d *DB) sourcesIn(tx *bolt.Tx, ids []uint64) ([]*Source, error) {
	b := tx.Bucket(bucketSources)
	srcs := make([]*Source, 0, len(ids))
	for _, id := range ids {
		k := idKey(id)
		v := b.Get(k)
		if v == nil {
			return nil, fmt.Errorf("source record %d: not in the state database", id)
		}
		s := &Source{ID: id}
		if err := decodeRecord(bucketSources, k, v, s); err != nil {
			return nil, fmt.Errorf("source record: %w", err)
		}
		srcs = append(srcs, s)
		d.looked(tx, 1)
	}
	return srcs, nil
}

// HasSources reports which of the given sources have a record committed.
func (d *DB) HasSources(ids []uint64) (map[uint64]bool, error) {
	out := make(map[uint64]bool, len(ids))
	err := d.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketSources)
		for _, id := range ids {
			if b.Get(idKey(id)) != nil {
				out[id] = true
			}
			d.looked(tx, 1)
		}
		return nil
	})
	return out, err
}

// Carry returns a source's parser carry-state (a copy), nil if none.
func (d *DB) Carry(id uint64) ([]byte, error) {
	var out []byte
	err := d.view(func(tx *bolt.Tx) error {
		k := idKey(id)
		if v := tx.Bucket(bucketCarry).Get(k); v != nil {
			payload, err := unseal(bucketCarry, k, v)
			if err != nil {
				return err
			}
			out = append([]byte(nil), payload...)
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
	// the file was truncated, replaced or rewritten. The source's batches
	// then count from 0 again (Source.NextSeq): one with batches counted
	// has events stored.
	Reset        bool
	ResetSession string
	Events       []event.Event
	// Encoded is EncodeEvents(Events), when the caller encoded them
	// already (off the loop that commits); nil otherwise. It must be
	// exactly that: it is stored as it is, unchecked, while the caller
	// keeps Events. The commit appends the seal in its spare room.
	Encoded []byte
	// Sessions are written too (activity, generation, end flags).
	Sessions []*Session
}

// Commit applies one batch atomically, taking its Seq from the source's
// NextSeq and advancing it.
func (d *DB) Commit(b Batch) error {
	before := b.Source.NextSeq
	if b.Reset {
		b.Source.NextSeq = 0 // its events are all dropped (see Batch.Reset)
	}
	b.Seq = b.Source.NextSeq
	if len(b.Events) > 0 {
		b.Source.NextSeq++
	}
	if err := d.CommitAll([]Batch{b}); err != nil {
		b.Source.NextSeq = before
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
		if len(b.Events) > 0 {
			encs[i].events = b.Encoded
			if encs[i].events == nil {
				encs[i].events = EncodeEvents(b.Events)
			}
			encs[i].events = seal(eventsScope([]byte(b.Source.Session)), eventKey(b.Source.ID, b.Seq), encs[i].events)
		}
		if encs[i].source, err = json.Marshal(b.Source); err != nil {
			return fmt.Errorf("encode source: %w", err)
		}
		encs[i].source = seal(bucketSources, idKey(b.Source.ID), encs[i].source)
		if encs[i].sessions, err = encodeSessions(b.Sessions); err != nil {
			return err
		}
	}
	err := d.update(func(tx *bolt.Tx) error {
		for i, b := range bs {
			if err := commitOne(tx, b, encs[i].events, encs[i].source); err != nil {
				return err
			}
			if err := d.putSessions(tx, encs[i].sessions); err != nil {
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
		if err := dropTails(tx, b.Source.ID); err != nil { // of the file read before
			return err
		}
	}
	if events != nil {
		eb, err := tx.Bucket(bucketEvents).CreateBucketIfNotExists([]byte(b.Source.Session))
		if err != nil {
			return err
		}
		if err := appending(eb).Put(eventKey(b.Source.ID, b.Seq), events); err != nil {
			return err
		}
	}
	if err := appending(tx.Bucket(bucketSources)).Put(idKey(b.Source.ID), source); err != nil {
		return err
	}
	if b.SetCarry {
		cb := appending(tx.Bucket(bucketCarry))
		if len(b.Carry) == 0 {
			return cb.Delete(idKey(b.Source.ID))
		}
		k := idKey(b.Source.ID)
		return cb.Put(k, seal(bucketCarry, k, append([]byte(nil), b.Carry...)))
	}
	return nil
}

// appending sets a bucket whose keys mostly grow (source ids, and a
// session's events by source and sequence) to fill its pages when they
// split: bbolt's default, half, suits keys that arrive in any order, and
// left the records of sources and carry-states on pages half empty (a
// database of 100,000 small sessions held 97 MB of pages for each, 44 MB
// of records). The setting holds for the transaction's handle.
func appending(b *bolt.Bucket) *bolt.Bucket {
	b.FillPercent = 0.9
	return b
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
		out = append(out, encodedSession{[]byte(s.Key), seal(bucketSessions, []byte(s.Key), data), s.Flush})
	}
	return out, nil
}

func (d *DB) putSessions(tx *bolt.Tx, ss []encodedSession) error {
	b := tx.Bucket(bucketSessions)
	for _, s := range ss {
		if err := b.Put(s.key, s.data); err != nil {
			return err
		}
		d.looked(tx, 1)
	}
	return queueFlushes(tx, ss)
}

// PutSessions writes session records (a flush, an end flag).
func (d *DB) PutSessions(ss ...*Session) error {
	enc, err := encodeSessions(ss)
	if err != nil {
		return err
	}
	if err := d.update(func(tx *bolt.Tx) error { return d.putSessions(tx, enc) }); err != nil {
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
	rec = seal(bucketSources, idKey(s.ID), rec)
	if err := d.update(func(tx *bolt.Tx) error {
		return appending(tx.Bucket(bucketSources)).Put(idKey(s.ID), rec)
	}); err != nil {
		return fmt.Errorf("commit state: %w", err)
	}
	return nil
}

// DeleteSource forgets a source and drops its events.
func (d *DB) DeleteSource(s *Source) error {
	if err := d.update(func(tx *bolt.Tx) error {
		if err := dropEvents(tx, s.Session, s.ID); err != nil {
			return err
		}
		if err := tx.Bucket(bucketCarry).Delete(idKey(s.ID)); err != nil {
			return err
		}
		if err := dropTails(tx, s.ID); err != nil {
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
	scope := eventsScope([]byte(session))
	err := d.view(func(tx *bolt.Tx) error {
		eb := tx.Bucket(bucketEvents).Bucket([]byte(session))
		if eb == nil {
			return nil
		}
		d.looked(tx, 1)
		return eb.ForEach(func(k, v []byte) error {
			d.looked(tx, len(v)>>16) // a batch's pages past the first
			if len(k) != 16 {
				return &DamagedError{Session: session}
			}
			src := binary.BigEndian.Uint64(k[:8])
			var batch []event.Event
			if err := decodeEvents(scope, k, v, &batch); err != nil {
				return &DamagedError{Session: session, Sources: []uint64{src}}
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
