package state

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"runtime/debug"
	"strings"
	"syscall"
	"time"

	bolt "go.etcd.io/bbolt"
)

// A damaged state database must never take the daemon down: under a
// service manager it would restart into the same panic for ever. Damage
// is handled at two depths.
//
//   - The file's structure (a cut file, a broken page, a bad freelist):
//     bbolt may fail, panic, or fault on memory past the end of a cut
//     file. All three are caught at open (panics recovered, faults turned
//     into panics), and the file is moved aside whole.
//   - One record (a flipped byte in a value, a key or a nested bucket's
//     name): caught by the seals (seal.go) and by the links between
//     records. The damaged records are dropped, with the sources that fed
//     them, so that only their logs are read again from the start.
//
// Either way the maps already written stay where they are; a session
// whose logs are gone keeps its last map.

// Repair is what Open found damaged and did about it.
type Repair struct {
	At time.Time
	// Aside is where a database too damaged to read was moved; the daemon
	// started from an empty one. Reason is what was wrong with it.
	Aside  string
	Reason string
	// Records counts the damaged records dropped from a readable
	// database; Sources the sources forgotten with them, whose logs are
	// read again from the start.
	Records int
	Sources int
}

// Happened reports whether anything was repaired.
func (r Repair) Happened() bool {
	return r.Aside != "" || r.Reason != "" || r.Records > 0 || r.Sources > 0
}

// Repaired returns what Open repaired (the zero Repair when nothing).
func (d *DB) Repaired() Repair { return d.repair }

// DamagedError is a damaged record met while reading a session's events.
// Sources are the sources whose batches are damaged or unknown; empty
// means any of the session's.
type DamagedError struct {
	Session string
	Sources []uint64
}

func (e *DamagedError) Error() string {
	return fmt.Sprintf("session %s: %v", e.Session, ErrDamaged)
}

func (e *DamagedError) Unwrap() error { return ErrDamaged }

// decodeRecord checks a JSON value's seal and decodes it.
func decodeRecord(scope, key, v []byte, into any) error {
	payload, err := unseal(scope, key, v)
	if err != nil {
		return err
	}
	if decodeFast(payload, into) {
		return nil
	}
	if err := json.Unmarshal(payload, into); err != nil {
		return fmt.Errorf("%w (bucket %s: undecodable)", ErrDamaged, scope)
	}
	return nil
}

// view and update run a transaction with bbolt's panics, and memory
// faults on a damaged mapping, turned into ErrDamaged. A panic of bbolt's
// own, outside fn (beginning, committing or rolling back the transaction),
// leaves the database unusable (Unusable): bbolt may hold its locks, and
// every later transaction fails at once. So does one inside a write's fn:
// the tree it writes to is damaged (bbolt asserts on a page that does not
// name itself, faults past the file), and a repair of the records, itself
// a write, would meet it again; only opening the file again checks it. One
// inside a read's fn (a fault reading a damaged record, a bug of ours) is
// rolled back by bbolt, which lets go of its locks: the error is that
// read's alone, and the record repairs take over.
func (d *DB) view(fn func(*bolt.Tx) error) error { return d.guarded(d.db.View, fn, false) }

func (d *DB) update(fn func(*bolt.Tx) error) error {
	d.writes.Add(1)
	return d.guarded(d.db.Update, fn, true)
}

// updateQueue is update for the sinks' queue (outbox.go), which Writes
// does not count.
func (d *DB) updateQueue(fn func(*bolt.Tx) error) error { return d.guarded(d.db.Update, fn, true) }

func (d *DB) guarded(run func(func(*bolt.Tx) error) error, fn func(*bolt.Tx) error, write bool) (err error) {
	if err := d.Unusable(); err != nil {
		return err
	}
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer d.recoverUnusable(&err)
	return run(func(tx *bolt.Tx) (err error) {
		if write {
			defer d.recoverUnusable(&err)
		} else {
			defer recoverDamage(&err)
		}
		return fn(tx)
	})
}

// ErrUnusable means that bbolt panicked beginning, committing or rolling
// back a transaction on this open database (the file was damaged under it, by a disk or by another
// writer): bbolt may hold its locks still, and its pages and freelist are
// not to be trusted, so no transaction is begun on it again (the next one
// would wait for ever on a lock). Opening the file again checks and
// repairs it (Open moves a damaged one aside).
var ErrUnusable = errors.New("the state database failed while in use")

// recoverUnusable turns a panic of bbolt's own into ErrDamaged and marks
// the database unusable.
func (d *DB) recoverUnusable(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w: %v", ErrDamaged, r)
		d.failOnce.Do(func() {
			d.failure.Store(err2ptr(fmt.Errorf("%w (%w)", ErrUnusable, *err)))
			close(d.failed)
		})
	}
}

func err2ptr(err error) *error { return &err }

// Unusable is ErrUnusable, with the panic that made the database so, once
// a transaction panicked; nil until then.
func (d *DB) Unusable() error {
	if p := d.failure.Load(); p != nil {
		return *p
	}
	return nil
}

// Failed is closed when the database becomes unusable.
func (d *DB) Failed() <-chan struct{} { return d.failed }

func recoverDamage(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w: %v", ErrDamaged, r)
	}
}

// IsFault reports whether an error of Open is the system refusing (no
// space, a quota or a file-size limit, no permission, a read-only or
// failing disk) rather than damage in
// the file: such a database is kept as it is and the open tried again
// later, never moved aside.
func IsFault(err error) bool {
	if err == nil {
		return false
	}
	for _, e := range []error{syscall.ENOSPC, syscall.EDQUOT, syscall.EFBIG, syscall.EROFS, syscall.EIO, fs.ErrPermission} {
		if errors.Is(err, e) {
			return true
		}
	}
	// bbolt words some of its errors with the system's text rather than
	// wrapping it ("file resize error: truncate …: file too large"): the
	// text of a space or size limit tells them too.
	msg := err.Error()
	for _, e := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EFBIG} {
		if strings.HasSuffix(msg, ": "+e.Error()) {
			return true
		}
	}
	return false
}

// moveAside renames a damaged database to <path>.corrupt-<UTC time>,
// never over an earlier one: it is kept for whoever wants to look.
func moveAside(path string) (string, error) {
	if err := notAFile(path); err != nil {
		return "", err // checked at open too; one put there since is not moved either
	}
	base := fmt.Sprintf("%s.corrupt-%s", path, time.Now().UTC().Format("20060102T150405Z"))
	aside := base
	for i := 2; ; i++ {
		if _, err := os.Lstat(aside); errors.Is(err, os.ErrNotExist) {
			break
		}
		aside = fmt.Sprintf("%s-%d", base, i)
	}
	return aside, os.Rename(path, aside)
}

func boltOpen(path string) (*bolt.DB, *os.File, error) {
	db, file, err := boltOpenWith(path, &bolt.Options{Timeout: OpenTimeout, InitialMmapSize: mmapReserve()})
	if errors.Is(err, syscall.ENOMEM) && mmapReserve() > 0 {
		// An address-space limit (ulimit -v) too tight for the reserve:
		// bbolt's own growth, remaps and all, still works within it.
		db, file, err = boltOpenWith(path, &bolt.Options{Timeout: OpenTimeout})
	}
	return db, file, err
}

// boltOpenWith opens with bbolt's panics and faults turned into
// ErrDamaged. bbolt locks the file before it reads it; when it panics it
// forgets the file without closing it, so the lock is dropped here (a
// second open of the same file must not wait for it). The file is
// returned too, for the same reason (DB.Close of an unusable database).
func boltOpenWith(path string, opt *bolt.Options) (db *bolt.DB, file *os.File, err error) {
	o := *opt
	o.OpenFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
		f, err := os.OpenFile(name, flag, perm)
		file = f
		return f, err
	}
	defer func() {
		if err != nil && file != nil && errors.Is(err, ErrDamaged) {
			dropLock(file)
		}
	}()
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer recoverDamage(&err)
	db, err = bolt.Open(path, 0o600, &o)
	return db, file, err
}

// open opens one file, checks its structure, migrates it and repairs its
// records. Any error but a lock or a newer schema means the file is to be
// moved aside.
func open(path string, log *slog.Logger) (d *DB, err error) {
	created, err := create(path)
	if err != nil {
		return nil, fmt.Errorf("open state %s: %w", path, err)
	}
	if created != nil {
		defer func() {
			if err != nil && !errors.Is(err, ErrLocked) {
				removeCreated(path, created, log)
			}
		}()
	}
	db, file, err := boltOpen(path)
	if errors.Is(err, bolt.ErrTimeout) {
		return nil, fmt.Errorf("%w (state %s is locked)", ErrLocked, path)
	}
	if err != nil {
		if errors.Is(err, ErrDamaged) {
			if why := cutShort(path); why != nil {
				err = why
			}
		}
		return nil, fmt.Errorf("open state %s: %w", path, err)
	}
	d = newDB(db, file, path)
	d.opened, _ = os.Stat(path) // just after the open: a swap in between is not told
	defer func() {
		if err != nil {
			d.closeQuietly()
			d = nil
		}
	}()
	if err := d.checkStructure(); err != nil {
		return nil, fmt.Errorf("check state %s: %w", path, err)
	}
	if err := db.View(func(tx *bolt.Tx) error {
		v, err := schemaOf(tx)
		d.fresh = v == 0
		return err
	}); err != nil {
		return nil, fmt.Errorf("check state %s: %w", path, err)
	}
	if err := migrate(db); err != nil {
		return nil, fmt.Errorf("migrate state %s: %w", path, err)
	}
	// Looked for read-only first: a clean open writes nothing, so a full
	// disk does not stop it.
	var rep Repair
	if err := d.view(func(tx *bolt.Tx) error {
		var err error
		rep, err = findDamage(tx, &mappedReader{db: db, tx: tx})
		return err
	}); err != nil {
		return nil, fmt.Errorf("check state %s: %w", path, err)
	}
	if rep.Happened() {
		if err := d.update(func(tx *bolt.Tx) error {
			var err error
			rep, err = repairRecords(tx, true, &mappedReader{})
			return err
		}); err != nil {
			return nil, fmt.Errorf("repair state %s: %w", path, err)
		}
	}
	if rep.Happened() {
		rep.At = time.Now()
		d.repair = rep
		log.Error("state database had damaged records; dropped them, and their logs are read again",
			"component", "state", "path", path, "records", rep.Records, "sources", rep.Sources)
	}
	return d, nil
}

// create makes the file of a database that is not there yet, empty (bbolt
// makes a new database of it), and returns what it made, or nil when a
// file was there. A first open that fails (a full disk as bbolt writes
// its first pages, or the first commit) leaves a file cut short or
// empty, which holds nothing, and which the next open would report as
// damage and move aside: it is removed instead (removeCreated). Made
// here, with O_EXCL, so that only a file this open made is ever removed.
func create(path string) (os.FileInfo, error) {
	if _, err := os.Lstat(path); !errors.Is(err, fs.ErrNotExist) {
		return nil, nil // there (bbolt says what it is), or not to be told
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil, nil // made meanwhile by another: not this open's
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Stat()
}

// removeCreated removes the file create made, if it is still that file.
// The process's data directory lock keeps another daemon or scan from
// opening it meanwhile; a lock error is never passed here.
func removeCreated(path string, created os.FileInfo, log *slog.Logger) {
	fi, err := os.Lstat(path)
	if err != nil || !os.SameFile(fi, created) {
		return
	}
	if err := os.Remove(path); err != nil {
		log.Warn("cannot remove the state database this failed start made", "component", "state", "path", path, "err", err)
		return
	}
	log.Info("removed the state database this failed start made; nothing was stored in it", "component", "state", "path", path)
}

func (d *DB) closeQuietly() {
	defer func() { _ = recover() }()
	d.Close()
}

// checkStructure compares the size the database claims with the file's
// (a cut file would fault on the pages past its end) and walks its pages
// from the file (pages.go) before anything walks them in memory.
func (d *DB) checkStructure() error {
	fi, err := os.Stat(d.path)
	if err != nil {
		return err
	}
	pageSize := d.db.Info().PageSize
	return d.view(func(tx *bolt.Tx) error {
		if tx.Size() > fi.Size() {
			return fmt.Errorf("%w: the file is cut short (%d of %d bytes)", ErrDamaged, fi.Size(), tx.Size())
		}
		return checkPages(d.path, pageSize, uint64(tx.ID()))
	})
}

// mappedReader counts what a walk over every record reads through bbolt's
// mapping of the file and, every releaseMappedBytes, lets go of the pages
// it made resident (releaseMappedIn): the check at open reads the whole
// database, and without it the process's peak resident memory would count
// all of it (700 MB over 100,000 small sessions). With no database (the
// writable repair pass, where a release is not worth the thought) it only
// counts.
type mappedReader struct {
	db *bolt.DB
	tx *bolt.Tx
	n  int
}

var releaseMappedBytes = 8 << 20 // a variable for the tests

func (r *mappedReader) read(k, v []byte) {
	// A page holds more than its records; 64 bytes of headers and slack
	// a record keep the count from falling far behind the pages touched.
	r.add(len(k) + len(v) + 64)
}

// bucket counts a nested bucket: one that is not inline has a page of its
// own, mostly empty for a small session's events.
func (r *mappedReader) bucket() { r.add(4096) }

// lookup counts a look-up by key off the order of the walk: it lands on a
// leaf page of its own.
func (r *mappedReader) lookup() { r.add(4096) }

func (r *mappedReader) add(n int) {
	r.n += n
	if r.n < releaseMappedBytes || r.db == nil {
		return
	}
	r.n = 0
	_ = releaseMappedIn(r.db, r.tx) // only memory: a failure changes nothing read
}

// batchDamaged reports whether an event batch (its key and value, in
// the session whose seal scope is scope) is damaged: sealed ones are
// checked by their seal, older ones by being JSON at all.
func batchDamaged(scope, k, v []byte) bool {
	if len(k) != 16 || v == nil {
		return true
	}
	payload, err := unseal(scope, k, v)
	return err != nil || (len(payload) == len(v) && !json.Valid(payload))
}

// sessionDamaged reports whether a session record is damaged.
func sessionDamaged(k, v []byte) bool {
	var s Session
	return v == nil || decodeRecord(bucketSessions, k, v, &s) != nil
}

// damagedTails lists the keys of the damaged records of the tails bucket
// (none when there is no such bucket yet).
func damagedTails(tx *bolt.Tx, mr *mappedReader) ([][]byte, error) {
	tb := tx.Bucket(bucketTails)
	if tb == nil {
		return nil, nil
	}
	var bad [][]byte
	err := tb.ForEach(func(k, v []byte) error {
		mr.read(k, v)
		if batchDamaged(bucketTails, k, v) {
			bad = append(bad, append([]byte(nil), k...))
		}
		return nil
	})
	return bad, err
}

// carryDamaged reports whether a carry-state record is damaged.
func carryDamaged(k, v []byte) bool {
	_, err := unseal(bucketCarry, k, v)
	return err != nil || len(k) != 8 || v == nil
}

// repairRecords drops every damaged record, and with it every source it
// leaves without a consistent history: a source whose record, carry-state
// or one of whose event batches is damaged, or whose session record is
// gone, or that committed events of which none are left. Such a source's
// record, carry-state and events are deleted; the daemon meets its file as
// new and reads it from the start. A missing top-level bucket is damage to
// the structure: the file is moved aside.
func repairRecords(tx *bolt.Tx, apply bool, mr *mappedReader) (Repair, error) {
	var rep Repair
	srcB, sessB, carryB, evB := tx.Bucket(bucketSources), tx.Bucket(bucketSessions), tx.Bucket(bucketCarry), tx.Bucket(bucketEvents)
	if srcB == nil || sessB == nil || carryB == nil || evB == nil {
		return rep, fmt.Errorf("%w: a top-level bucket is missing", ErrDamaged)
	}
	// Of each good source, only what the checks below need: a repair of
	// a database of 100,000 sessions would otherwise hold every record at
	// once (some 50 MB). (It runs only on a database the check at open,
	// findDamage, found damaged.)
	type checked struct {
		session string
		nextSeq uint64
	}
	good := map[uint64]checked{}
	var badSrcKeys, badSessKeys, badCarryKeys [][]byte
	if err := srcB.ForEach(func(k, v []byte) error {
		mr.read(k, v)
		s := new(Source)
		if len(k) != 8 || v == nil || decodeRecord(bucketSources, k, v, s) != nil {
			badSrcKeys = append(badSrcKeys, append([]byte(nil), k...))
			return nil
		}
		seq := s.NextSeq
		if s.Offset == 0 && s.Digest == "" {
			// It has consumed nothing (a log reset to nothing): no events
			// are due, whatever a reset before batches counted from 0
			// again left in NextSeq.
			seq = 0
		}
		good[binary.BigEndian.Uint64(k)] = checked{s.Session, seq}
		return nil
	}); err != nil {
		return rep, err
	}
	sessions := map[string]bool{}
	if err := sessB.ForEach(func(k, v []byte) error {
		mr.read(k, v)
		if sessionDamaged(k, v) {
			badSessKeys = append(badSessKeys, append([]byte(nil), k...))
			return nil
		}
		sessions[string(k)] = true
		return nil
	}); err != nil {
		return rep, err
	}
	forget := map[uint64]bool{}
	if err := carryB.ForEach(func(k, v []byte) error {
		mr.read(k, v)
		if carryDamaged(k, v) {
			badCarryKeys = append(badCarryKeys, append([]byte(nil), k...))
			if len(k) == 8 {
				forget[binary.BigEndian.Uint64(k)] = true
			}
		}
		return nil
	}); err != nil {
		return rep, err
	}
	// A damaged tail (tails.go) is dropped alone: it stands for a line its
	// log still holds while the log is there.
	badTails, err := damagedTails(tx, mr)
	if err != nil {
		return rep, err
	}
	rep.Records = len(badSrcKeys) + len(badSessKeys) + len(badCarryKeys) + len(badTails)

	// Event batches: sealed ones are checked by their seal, older ones by
	// being JSON at all.
	type evKey struct{ bucket, key []byte }
	var badEvents []evKey
	var badBuckets [][]byte
	damagedSessions := map[string]bool{}
	hasEvents := map[uint64]bool{}
	if err := evB.ForEach(func(name, v []byte) error {
		mr.bucket()
		nb := evB.Bucket(name)
		if v != nil || nb == nil {
			badBuckets = append(badBuckets, append([]byte(nil), name...))
			return nil
		}
		scope := eventsScope(name)
		return nb.ForEach(func(k, v []byte) error {
			mr.read(k, v)
			if batchDamaged(scope, k, v) {
				badEvents = append(badEvents, evKey{append([]byte(nil), name...), append([]byte(nil), k...)})
				rep.Records++
				if len(k) >= 8 {
					forget[binary.BigEndian.Uint64(k[:8])] = true
				}
				// The key may be what is damaged: the source it names
				// is then not the one whose batch this was. Every source
				// of the session is read again, so that none keeps a
				// cursor past events that are gone.
				damagedSessions[string(name)] = true
				return nil
			}
			src := binary.BigEndian.Uint64(k[:8])
			if s, ok := good[src]; ok && s.session == string(name) {
				hasEvents[src] = true
			}
			return nil
		})
	}); err != nil {
		return rep, err
	}
	for id, s := range good {
		switch {
		case damagedSessions[s.session]:
			forget[id] = true // one of its session's batches is damaged, key and all
		case s.session != "" && !sessions[s.session]:
			forget[id] = true // its session record is damaged or gone
		case s.nextSeq > 0 && !hasEvents[id]:
			forget[id] = true // it committed events and none are left
		}
	}
	for id := range forget {
		if _, ok := good[id]; ok {
			rep.Sources++
		}
	}
	rep.Sources += len(badSrcKeys)
	rep.Records += len(badBuckets)
	if !apply || !rep.Happened() {
		return rep, nil
	}

	for _, k := range badSrcKeys {
		if err := srcB.Delete(k); err != nil {
			return rep, err
		}
	}
	for _, k := range badSessKeys {
		if err := sessB.Delete(k); err != nil {
			return rep, err
		}
	}
	for _, k := range badCarryKeys {
		if err := carryB.Delete(k); err != nil {
			return rep, err
		}
	}
	for _, k := range badTails {
		if err := tx.Bucket(bucketTails).Delete(k); err != nil {
			return rep, err
		}
	}
	for id := range forget {
		if err := srcB.Delete(idKey(id)); err != nil {
			return rep, err
		}
		if err := carryB.Delete(idKey(id)); err != nil {
			return rep, err
		}
	}
	for _, name := range badBuckets {
		if err := evB.Delete(name); err != nil && !errors.Is(err, bolt.ErrIncompatibleValue) {
			return rep, err
		}
	}
	for _, e := range badEvents {
		if nb := evB.Bucket(e.bucket); nb != nil {
			if err := nb.Delete(e.key); err != nil {
				return rep, err
			}
		}
	}
	// Sweep what no longer belongs: events of forgotten or unknown
	// sources, and nested buckets of no known session.
	var emptyBuckets [][]byte
	if err := evB.ForEach(func(name, v []byte) error {
		nb := evB.Bucket(name)
		if nb == nil {
			return nil
		}
		if !sessions[string(name)] {
			emptyBuckets = append(emptyBuckets, append([]byte(nil), name...))
			return nil
		}
		var keys [][]byte
		if err := nb.ForEach(func(k, _ []byte) error {
			if len(k) != 16 {
				keys = append(keys, append([]byte(nil), k...))
				return nil
			}
			src := binary.BigEndian.Uint64(k[:8])
			if s, ok := good[src]; !ok || forget[src] || s.session != string(name) {
				keys = append(keys, append([]byte(nil), k...))
			}
			return nil
		}); err != nil {
			return err
		}
		for _, k := range keys {
			if err := nb.Delete(k); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		return rep, err
	}
	for _, name := range emptyBuckets {
		if err := evB.DeleteBucket(name); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// ForgetSources deletes sources as a repair does, in one transaction:
// record, carry-state, and their events under their sessions. A damaged
// event batch met while running costs its source a read from the start.
func (d *DB) ForgetSources(srcs []*Source) error {
	if err := d.update(func(tx *bolt.Tx) error {
		for _, s := range srcs {
			if err := dropEvents(tx, s.Session, s.ID); err != nil {
				return err
			}
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
		return nil
	}); err != nil {
		return fmt.Errorf("commit state: %w", err)
	}
	return nil
}

// releaseLookups is how many records looked up by key (looked) make the
// database let go of its mapped pages.
var releaseLookups int64 = 64 // a variable for the tests

// looked counts n records looked up by key in tx (or 64 KiB read in a
// row) and, every releaseLookups of them, lets go of the pages they made
// resident (releaseMappedIn). A record looked up by key lies on a leaf
// page of its own, and the kernel maps up to 64 KiB of the file around
// each page it faults in: a rewrite that reads back the records and
// events of a few hundred sessions at random, then writes their records,
// would otherwise keep tens of MB more counted in the process's resident
// memory, the more the larger the database (150 MiB at 100,000 sessions
// where the heap held 50). The caller holds tx, so the mapping is the one
// in use; in a write transaction no remap happens before its commit.
func (d *DB) looked(tx *bolt.Tx, n int) {
	if n == 0 || d.lookups.Add(int64(n)) < releaseLookups {
		return
	}
	d.lookups.Store(0)
	_ = releaseMappedIn(d.db, tx) // only memory: a failure changes nothing read
}
