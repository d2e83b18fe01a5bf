package daemon

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/agentmap/agentmap/internal/words"
	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/cursor"
	"github.com/agentmap/agentmap/watchers/opencode"
	"github.com/agentmap/agentmap/watchers/sqlitero"
)

// A store that cannot be read (its agent holding the write lock, a hot
// journal a killed writer left, mode 000) is, like an unreadable log
// (unreadable.go), kept and tried again on a schedule: sqliteRetry
// doubling to maxUnreadableRetry. The watcher does not report it again
// until it changes, and neither a lock nor a chmod changes it; a store
// that stays unreadable for days must not be read every few seconds, nor
// fill the journal: a failure is logged when its kind changes and once
// per step of the back-off, so at most a handful of times. status counts
// these stores and a one-shot scan fails naming how many, as for logs. A
// lock is worth the one-shot scan's short wait (once); any other error
// would only come back.

// unreadableDB is the retry schedule of a store; the time of the next try
// is in d.polls, which nextDue wakes the loop for.
type unreadableDB struct {
	delay     time.Duration // the wait before the next try
	err       string        // the error's kind, never content
	transient bool          // a lock or a page mid-write: gone in a moment
	logged    time.Duration // the delay when a failure was last logged
	size      int64         // the store's size, which a catch-up counted to read
}

// cannotReadDB notes a store that could not be read and schedules its
// next try further each time.
func (d *Daemon) cannotReadDB(s *state.Source, size int64, err error) {
	kind, transient := dbErrorKind(s.Path, err)
	u := d.badDBs[s.Path]
	first := u == nil
	if first {
		u = &unreadableDB{delay: sqliteRetry}
		d.badDBs[s.Path] = u
	} else {
		u.delay = min(u.delay*2, maxUnreadableRetry)
	}
	changed := u.err != kind
	u.err, u.transient = kind, transient
	if size > 0 { // 0: not even a stat
		u.size = size
	}
	d.polls[s.Path] = d.opt.Clock.Now().Add(u.delay)
	if !changed && u.delay <= u.logged {
		return
	}
	u.logged = u.delay
	msg := "database not readable; trying again on a schedule"
	if !first {
		msg = "database still not readable; trying again later"
	}
	d.log.Warn(msg, "component", "sqlite", "agent", s.Agent, "path", s.Path,
		"reason", kind, "next", u.delay, "err", err)
}

// readableDB notes that a store was read: it leaves the retry schedule.
func (d *Daemon) readableDB(path string) {
	delete(d.polls, path)
	if _, ok := d.badDBs[path]; ok {
		delete(d.badDBs, path)
		d.log.Info("database readable again", "component", "sqlite", "path", path)
	}
}

// forgetDB drops the schedule of a store that is gone, or whose record is
// (kept out by privacy.exclude, dropped to be read again).
func (d *Daemon) forgetDB(path string) {
	delete(d.polls, path)
	delete(d.badDBs, path)
}

// dbErrorKind is what status shows of a store's read error, and whether
// it is a lock, worth a one-shot scan's short wait. The readers mark a
// lock and a page caught mid-write alike with their ErrBusy, keeping
// SQLite's words, which tell them apart. A store that reads as damaged is
// tried again on the schedule (one being rewritten looks so for a moment)
// but not waited for: one cut short stays so.
func dbErrorKind(path string, err error) (kind string, transient bool) {
	switch {
	case sqlitero.Damaged(err):
		return "damaged or changing (read error)", false
	case sqlitero.Locked(err), errors.Is(err, cursor.ErrBusy), errors.Is(err, opencode.ErrBusy):
		return "locked by its writer", true
	case sqlitero.HotJournal(err):
		return "left mid-write by a stopped writer (hot journal)", false
	}
	// SQLite says "unable to open" of a file it may not read: the file
	// itself says why.
	f, oerr := watchers.OpenLog(path)
	if oerr != nil {
		return errorKind(oerr), false
	}
	f.Close()
	return errorKind(err), false
}

// lockedDBs reports whether some store failed on a lock.
func (d *Daemon) lockedDBs() bool {
	for _, u := range d.badDBs {
		if u.transient {
			return true
		}
	}
	return false
}

// dbRetryDue is the next try at an unreadable store, if any: what nextDue
// wakes the loop for. A try scheduled for a store no longer counted
// unreadable is dropped, as nothing would take it off again and the loop
// would wake for it at once, over and over.
func (d *Daemon) dbRetryDue() (time.Time, bool) {
	var next time.Time
	for path, at := range d.polls {
		if d.badDBs[path] == nil {
			delete(d.polls, path)
		} else if next.IsZero() || at.Before(next) {
			next = at
		}
	}
	return next, !next.IsZero()
}

// unreadableDBCount counts the unreadable stores that are still there: a
// store deleted is no longer one a scan failed to read, even before its
// retry finds it gone.
func (d *Daemon) unreadableDBCount() int {
	n := 0
	for path := range d.badDBs {
		if _, err := os.Stat(path); d.byPath[path] != nil && !watchers.Missing(err) {
			n++
		}
	}
	return n
}

// unreadableDBStatus is what status shows of them: how many, the first
// kind of error, and the next try.
func (d *Daemon) unreadableDBStatus(st *Status) {
	if len(d.badDBs) == 0 {
		return
	}
	st.UnreadableDBs = &UnreadableLogs{Count: len(d.badDBs)}
	st.UnreadableDBs.RetryAt, _ = d.dbRetryDue()
	for _, u := range d.badDBs {
		st.UnreadableDBs.Reason = firstReason(st.UnreadableDBs.Reason, u.err)
	}
}

// waitForLockedDBs gives the stores a one-shot catch-up found locked by
// their agent a few more tries, a short wait apart. Only those: one that
// failed otherwise (a hot journal, a permission, a damaged file) would
// fail the same, and is counted at once.
func (d *Daemon) waitForLockedDBs(ctx context.Context) {
	for try := 0; d.lockedDBs() && try < 3 && ctx.Err() == nil; try++ {
		select {
		case <-ctx.Done():
		case <-d.opt.Clock.After(sqliteRetry):
		}
		d.retryLockedDBs(ctx)
		d.commitGroup()
	}
}

// giveUpDBs ends a one-shot catch-up's wait for the stores it could not
// read: what they hold is not read in this run, and the progress ends
// done rather than stopped (the error says what was left out).
func (d *Daemon) giveUpDBs() {
	for _, u := range d.badDBs {
		d.progress.total -= u.size
	}
	d.progress.total = max(d.progress.total, d.progress.done)
}

// unreadableDBError is what a one-shot catch-up returns when some stores
// could not be read: their sessions are not in the store.
func (d *Daemon) unreadableDBError() error {
	switch n := d.unreadableDBCount(); n {
	case 0:
	case 1:
		return errors.New("1 database could not be read (see the log); its sessions are mapped by a later scan once it can be")
	default:
		return fmt.Errorf("%s could not be read (see the log); their sessions are mapped by a later scan once they can be", words.Counted(n, "database"))
	}
	return nil
}
