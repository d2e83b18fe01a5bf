package daemon

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/agentmap/agentmap/internal/words"
)

// A commit that fails (the disk is full, state.db cannot be written) undoes
// its batches in memory: the cursors stay where they were and the parsers
// that read the lines are dropped. The watcher reports a file only when it
// changes, so the daemon itself keeps the sources whose lines are to be read
// again, and reads them again with back-off (1 s doubling to maxBackoff)
// until a commit succeeds. Until then their sessions count as live, not
// flushed, and `status` says how many logs wait.

type commitFaults struct {
	waiting map[uint64]bool // source id → lines to read again
	at      time.Time       // next attempt
	delay   time.Duration   // 0 while commits succeed
}

// commitFailed notes the sources of a failed commit. Several failures in
// one round count as one for the back-off, and a failure while a command's
// request is answered counts for none once a back-off runs: a scan or a
// flush asked for during the fault must not put off the retry.
func (d *Daemon) commitFailed(ids []uint64) {
	f := &d.faults
	if f.waiting == nil {
		f.waiting = map[uint64]bool{}
	}
	for _, id := range ids {
		f.waiting[id] = true
	}
	now := d.opt.Clock.Now()
	if f.delay > 0 && (now.Before(f.at) || d.asked) {
		return
	}
	if f.delay == 0 {
		f.delay = time.Second
	} else {
		f.delay = min(f.delay*2, maxBackoff)
	}
	f.at = now.Add(f.delay)
}

// commitSucceeded ends the back-off once nothing waits.
func (d *Daemon) commitSucceeded(ids []uint64) {
	for _, id := range ids {
		delete(d.faults.waiting, id)
	}
	if len(d.faults.waiting) == 0 {
		d.faults.delay = 0
	}
}

// retryDue reports when the next attempt is, if any source waits.
func (d *Daemon) retryDue() (time.Time, bool) {
	return d.faults.at, len(d.faults.waiting) > 0
}

// retryCommits reads again, when due, the sources whose commit failed.
func (d *Daemon) retryCommits(ctx context.Context) {
	at, ok := d.retryDue()
	if !ok || d.opt.Clock.Now().Before(at) {
		return
	}
	ids := d.faults.waiting
	d.faults.waiting = nil // a failure now puts them back
	seen := map[string]bool{}
	for id := range ids {
		if ctx.Err() != nil {
			d.commitFailed(keysOf(ids))
			return
		}
		s := d.srcs[id]
		if s == nil {
			continue
		}
		path, agent, form := s.Path, s.Agent, s.Form
		if form == formConversation {
			path, _, _ = strings.Cut(s.Path, "#")
			db := d.byPath[path]
			if db == nil {
				continue
			}
			db.Digest, form = "", db.Form
		}
		if seen[path] {
			continue
		}
		seen[path] = true
		d.revisit(path, agent, form)
	}
	d.commitGroup()
	if len(d.faults.waiting) == 0 {
		d.faults.delay = 0
		d.log.Info("state database writable again; lines read again and committed", "component", "state",
			"logs", len(seen))
	}
}

// retryOnce gives a one-shot catch-up a few attempts, with back-off, at
// the commits that failed; it returns an error when some never succeeded.
func (d *Daemon) retryOnce(ctx context.Context) error {
	for try := 0; len(d.faults.waiting) > 0 && try < 5 && ctx.Err() == nil; try++ {
		select {
		case <-ctx.Done():
			return nil
		case <-d.opt.Clock.After(max(0, d.faults.at.Sub(d.opt.Clock.Now()))):
		}
		d.retryCommits(ctx)
	}
	if n := len(d.faults.waiting); n > 0 {
		return fmt.Errorf("the lines of %s could not be committed to the state database (see the log); they are read again at the next run", words.Counted(n, "log"))
	}
	return nil
}

// waitingSessions are the sessions with lines that wait to be committed.
func (d *Daemon) waitingSessions() map[string]bool {
	out := map[string]bool{}
	for id := range d.faults.waiting {
		if s := d.srcs[id]; s != nil && s.Session != "" {
			out[s.Session] = true
			if s.ParentSession != "" {
				out[s.ParentSession] = true
			}
		}
	}
	return out
}

// waitingOwn returns, by session key, the agent of each session lines of
// whose own logs wait to be committed (a child's count for itself, where
// waitingSessions adds its parent): such a session counts in status
// though no source of it is committed yet, or it has no record at all.
func (d *Daemon) waitingOwn() map[string]string {
	out := map[string]string{}
	for id := range d.faults.waiting {
		if s := d.srcs[id]; s != nil && s.Session != "" {
			out[s.Session] = s.Agent
		}
	}
	return out
}

func keysOf(m map[uint64]bool) []uint64 {
	out := make([]uint64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
