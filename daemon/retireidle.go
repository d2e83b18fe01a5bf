package daemon

import (
	"context"
	"time"

	"github.com/agentmap/agentmap/watchers"
)

// A daemon that follows would otherwise keep, for as long as it runs, the
// records of every session it ever met and of every log it follows, with
// their index entries: some 1.7 KB a session, 250 MiB of RSS at 100,000
// sessions of history, nearly all of which will never change again. So,
// as a scan lets go of the sessions it has written (retire.go), the daemon
// lets go of each session that has been quiet for RetireAfter: its map
// written for its last change and recorded, every byte of its logs read
// and committed (or the log deleted: agents delete old transcripts, and
// their sessions are most of a long history), nothing waiting for it (no
// retry, no fault, no reroute), no skipped line (status lists those
// sessions), no parent and no child. What stays is what a scan keeps (its
// key's hash, its sources' ids, their files' identities), their paths'
// hashes and, per agent, how many logs and sessions status counts. It is
// looked at when its flush record is committed and after each full
// rescan; one that may not leave until it changes (a parent, a skipped
// line, a Cursor conversation) is noted and not looked at again before.
//
// A retired session is taken up again, its records read back from the
// state database as they were committed, before anything can act on it:
//
//   - news of one of its logs from the watcher (the log appended to,
//     replaced, truncated, deleted, back under its name; a new watcher's
//     first scan), by the path's hash, before the update is read (ingest);
//   - a log met under another name with the identity of one of its logs
//     (adopt, as in a scan);
//   - a log routed to its key: a new child or subagent log (session, as
//     in a scan);
//   - a command naming it (flush ID: by its key or native id alone, by a
//     prefix all retired sessions), or acting on every session (flush
//     --all, scan, a privacy.exclude reloaded), which takes every retired
//     session up first (restoreAll). Those are rare; the sessions leave
//     again as they are written or at the next rescan (not during a scan
//     the daemon is asked for).
//
// Retiring writes nothing, so a crash leaves the state database as it did.
// A session that could not be read back (damage to the state database, a
// failing disk) is logged, counted and goes on as one never seen: its
// logs are followed again from where a new record starts them.

// DefaultRetireAfter is how long a following daemon keeps the records of a
// session with nothing to do before it lets go of them (RetireAfter).
const DefaultRetireAfter = 30 * time.Minute

// retireAfterDefault is what a zero RetireAfter takes; the tests make it
// tiny to run every following daemon's test with sessions let go of.
var retireAfterDefault = DefaultRetireAfter

// retiredHook, when set (by tests), is told after every rescan how many
// sessions are retired.
var retiredHook func(retired int)

// retireIdle lets go of the sessions that have been quiet for RetireAfter;
// it runs after a full rescan, when the watcher has said what is on disk.
func (d *Daemon) retireIdle() {
	if !d.letsGo() {
		return
	}
	if retiredHook != nil {
		defer func() { retiredHook(d.retired.len()) }()
	}
	keys := make([]string, 0, len(d.sessions))
	for key := range d.sessions {
		keys = append(keys, key)
	}
	d.retireIdleOf(keys)
}

// retireWrittenIdle lets go, of the sessions whose flush records were just
// committed, of those quiet for RetireAfter: a catch-up's sessions leave
// memory as their maps are written, not a rescan later.
func (d *Daemon) retireWrittenIdle(keys []string) {
	if !d.letsGo() || len(keys) == 0 {
		return
	}
	if retiredHook != nil {
		defer func() { retiredHook(d.retired.len()) }()
	}
	d.retireIdleOf(keys)
}

// letsGo reports whether this daemon lets go of idle sessions: one that
// follows, unless told to keep them.
func (d *Daemon) letsGo() bool { return !d.opt.Once && d.opt.RetireAfter >= 0 }

// retireIdleOf retires, of the given sessions, those quiet for RetireAfter
// that may be (retirable), reading back in one transaction whether their
// sources' records are committed. A session that may not until it changes
// (a parent, a skipped line, a Cursor conversation) is noted with its
// generation and not looked at again before it changes: rescans then cost
// nothing for it.
func (d *Daemon) retireIdleOf(keys []string) {
	if d.holdRetire {
		return
	}
	d.commitGroup() // what a batch queued is committed, or its session stays
	d.mapsPeak = max(d.mapsPeak, len(d.srcs))
	cutoff := ms(d.opt.Clock.Now().Add(-d.opt.RetireAfter))
	var quiet []string
	var ids []uint64
	for _, key := range keys {
		s := d.sessions[key]
		if s == nil || s.ActivityMs > cutoff || s.Flush == nil || s.Flush.Path == "" || s.Dirty() {
			continue
		}
		if gen, noted := d.keptInMemory[key]; noted && gen == s.Gen {
			continue
		}
		srcs, ok, lasting := d.retirable(key)
		if !ok {
			if lasting {
				d.keptInMemory[key] = s.Gen
			}
			continue
		}
		quiet = append(quiet, key)
		for _, src := range srcs {
			ids = append(ids, src.ID)
		}
	}
	if len(quiet) == 0 {
		return
	}
	stored, err := d.db.HasSources(ids)
	d.releaseMapped(len(ids) * recordWeight) // the pages of the records looked up
	if err != nil {
		return // kept in memory: nothing is lost but the room
	}
	n := 0
	for _, key := range quiet {
		if d.retire(key, stored) {
			delete(d.keptInMemory, key)
			n++
		}
	}
	if n > 0 {
		d.log.Debug("sessions let go of from memory", "component", "daemon", "sessions", n,
			"retired", d.retired.len(), "kept", len(d.sessions))
		d.compactMaps()
	}
}

// compactMaps rebuilds the maps keyed by source, path or session once
// most of their entries have left with the sessions let go of: a Go map
// keeps the room of every entry it ever held (at 20,000 sessions, some
// 10 MB of empty tables). Each rebuild halves the peak at least, so over
// a catch-up's sessions leaving memory the copies cost about one pass.
func (d *Daemon) compactMaps() {
	if d.mapsPeak < compactMapsFrom || len(d.srcs) > d.mapsPeak/2 {
		return
	}
	d.srcs = rebuilt(d.srcs)
	d.byPath = rebuilt(d.byPath)
	d.sessions = rebuilt(d.sessions)
	d.parsers = rebuilt(d.parsers)
	d.sizes = rebuilt(d.sizes)
	d.summed = rebuilt(d.summed)
	d.idx.bySession = rebuilt(d.idx.bySession)
	d.idx.byFileID = rebuilt(d.idx.byFileID)
	d.idx.noFileID = rebuilt(d.idx.noFileID)
	d.idx.pending = rebuilt(d.idx.pending)
	for key := range d.keptInMemory {
		if d.sessions[key] == nil {
			delete(d.keptInMemory, key) // let go of after all, or forgotten
		}
	}
	d.keptInMemory = rebuilt(d.keptInMemory)
	d.mapsPeak = len(d.srcs)
}

// compactMapsFrom is the fewest sources worth a rebuild; a variable so
// that tests rebuild at every chance.
var compactMapsFrom = 1024

// rebuilt returns a copy of m sized for what it holds now.
func rebuilt[K comparable, V any](m map[K]V) map[K]V {
	out := make(map[K]V, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// restorePath takes up again the retired session a log at path belongs
// to, if there is one.
func (d *Daemon) restorePath(path string) {
	if h, ids, ok := d.retired.byPath(path); ok {
		d.restoreRetired(h, ids)
	}
}

// restoreNamed takes up again the retired session whose key, or native id
// for one of the agents, is id.
func (d *Daemon) restoreNamed(id string) {
	if d.retired.len() == 0 {
		return
	}
	keys := []string{id}
	for _, a := range d.retired.agents { // the agents of retired sessions, enabled or not
		keys = append(keys, sessionKey(a.name, id))
	}
	for _, key := range keys {
		if d.sessions[key] == nil {
			d.restore(key)
		}
	}
}

// restoreAll takes every retired session up again.
func (d *Daemon) restoreAll() {
	if d.retired.len() == 0 {
		return
	}
	var all []retiredSession
	d.retired.each(func(h uint64, ids []uint64) { all = append(all, retiredSession{h, ids}) })
	for _, r := range all {
		d.restoreRetired(r.h, r.ids)
	}
}

// catchUpInPieces reads a following daemon's first full scan in pieces of
// walkChunk logs, in the watcher's order (a session's log before its
// subagents'), and writes the maps then due after each piece: the sessions
// of history, quiet for long, are written and let go of as the catch-up
// goes, instead of all being held until its end (the peak of a first `run`
// over 100,000 sessions). The last piece ends the scan: the sweep then
// looks at every record. A daemon that keeps its sessions reads the scan
// whole, as before.
func (d *Daemon) catchUpInPieces(ctx context.Context, u watchers.Update) {
	files := u.Files
	for d.letsGo() && len(files) > walkChunk && ctx.Err() == nil {
		d.ingest(ctx, watchers.Update{Files: files[:walkChunk]})
		files = files[walkChunk:]
		d.flushDue(ctx, d.opt.Clock.Now())
	}
	if ctx.Err() == nil {
		d.ingest(ctx, watchers.Update{Files: files, Full: u.Full})
	}
}
