package daemon

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/agentmap/agentmap/internal/regular"
	"github.com/agentmap/agentmap/internal/words"
	"github.com/agentmap/agentmap/watchers"
)

// A log that cannot be opened or read when it is found (mode 000, a file
// the agent still holds locked, an I/O error) is not reported by the
// watcher again until its size or time changes, and a chmod changes
// neither. So the daemon keeps such logs itself and tries them again on a
// schedule (unreadableRetry doubling to maxUnreadableRetry) until a read
// works or the file goes; `status` counts them and says when the next try
// is. A missing file is not unreadable: it is gone.

const (
	unreadableRetry    = 2 * time.Second
	maxUnreadableRetry = 2 * time.Minute
)

type unreadableLog struct {
	f     watchers.FileStat
	at    time.Time
	delay time.Duration
	err   string // the error's kind, never content ("permission denied")
}

// cannotRead notes a log that could not be read and schedules its next
// try; the first failure of a log is logged, the retries are not.
func (d *Daemon) cannotRead(f watchers.FileStat, err error) {
	if watchers.Missing(err) {
		delete(d.unreadable, f.Path)
		return
	}
	u := d.unreadable[f.Path]
	if u == nil {
		u = &unreadableLog{delay: unreadableRetry}
		d.unreadable[f.Path] = u
		d.log.Warn("cannot read log; trying again on a schedule", "component", "tail", "agent", f.Agent,
			"path", f.Path, "err", err)
	} else {
		u.delay = min(u.delay*2, maxUnreadableRetry)
	}
	u.f, u.at, u.err = f, d.opt.Clock.Now().Add(u.delay), errorKind(err)
}

// readable notes that a log could be opened: it leaves the retry list.
func (d *Daemon) readable(path string) {
	if _, ok := d.unreadable[path]; ok {
		delete(d.unreadable, path)
		d.log.Info("log readable again", "component", "tail", "path", path)
	}
}

// errorKind is what status shows of a read error: its kind, not its text
// (which names the path and could carry anything the OS puts there).
func errorKind(err error) string {
	switch {
	case errors.Is(err, fs.ErrPermission):
		return "permission denied"
	case errors.Is(err, fs.ErrNotExist):
		return "gone"
	case errors.Is(err, regular.ErrNotRegular):
		return "not a regular file"
	}
	return "read error"
}

// unreadableDue is the next try at an unreadable log, if any.
func (d *Daemon) unreadableDue() (time.Time, bool) {
	var next time.Time
	for _, u := range d.unreadable {
		if next.IsZero() || u.at.Before(next) {
			next = u.at
		}
	}
	return next, !next.IsZero()
}

// retryUnreadable tries again the unreadable logs that are due.
func (d *Daemon) retryUnreadable(ctx context.Context) {
	now := d.opt.Clock.Now()
	for path, u := range d.unreadable {
		if ctx.Err() != nil {
			return
		}
		if now.Before(u.at) {
			continue
		}
		fi, err := os.Stat(path)
		if watchers.Missing(err) {
			delete(d.unreadable, path) // gone: the watcher says so
			continue
		}
		if err != nil { // not even a stat (its directory cannot be searched)
			u.delay = min(u.delay*2, maxUnreadableRetry)
			u.at, u.err = now.Add(u.delay), errorKind(err)
			continue
		}
		f := u.f
		f.Size, f.ModTime, f.ID = fi.Size(), fi.ModTime(), watchers.StatID(fi)
		// Pushed back first: a visit that fails again doubles the delay,
		// one that reads the log removes it.
		u.at = now.Add(u.delay)
		d.visit(ctx, f)
	}
	d.commitGroup()
}

// unreadableStatus is what status shows: how many, the first kind of
// error, and the next try.
func (d *Daemon) unreadableStatus(st *Status) {
	if len(d.unreadable) == 0 {
		return
	}
	st.Unreadable = &UnreadableLogs{Count: len(d.unreadable)}
	st.Unreadable.RetryAt, _ = d.unreadableDue()
	for _, u := range d.unreadable {
		st.Unreadable.Reason = firstReason(st.Unreadable.Reason, u.err)
	}
}

// firstReason is what status names of several errors' kinds: the first
// in order, so that the line does not change from one look to the next.
func firstReason(kept, next string) string {
	if kept == "" || next < kept {
		return next
	}
	return kept
}

// UnreadableLogs counts the logs that could not be read and are tried again.
type UnreadableLogs struct {
	Count   int       `json:"count"`
	Reason  string    `json:"reason"`
	RetryAt time.Time `json:"retryAt"`
}

// unreadableError is what a one-shot catch-up returns when some logs could
// not be read: their sessions are not in the store.
func (d *Daemon) unreadableError() error {
	switch n := len(d.unreadable); n {
	case 0:
	case 1:
		return errors.New("1 log could not be read (see the log); its session is mapped by a later scan once it can be")
	default:
		return fmt.Errorf("%s could not be read (see the log); their sessions are mapped by a later scan once they can be", words.Counted(n, "log"))
	}
	return nil
}
