package daemon

import (
	"errors"
	"os"

	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
)

// A one-shot catch-up (`scan`) would otherwise end holding the record of
// every session it met and of every log it read, with their index
// entries: about 1.5 KB a session, so that its memory grew with the
// history it caught up on. A session it writes early (flushHeld) is done
// with: everything of it is committed, its map is written and recorded,
// and each log of the catch-up is visited once. Such a session is retired:
// its records leave memory, and only its key, the ids of its sources and
// their files' identities stay (about 60 bytes: retiredset.go), spilled
// to a file of the scan's own every 16,384 sessions (retiredspill.go).
// When a later log routes to a retired session (a
// Claude subagent log met after its main log, a Codex child rollout of
// another day), the records are read back from the state database as they
// were committed (restore), and the session is written again at the end
// from its stored events, exactly as a session that was never let go of.
//
// Only plain sessions are retired: no parent, no child, every source an
// appended log with a known file identity, its record committed (read
// back to be sure, in one transaction for all the sessions written
// together), and nothing waiting (no failed commit, no retry, no pending
// reroute or removal). Anything else stays in memory as before.
//
// A retired log's identity stays too: a path met later whose file is that
// of a retired log (the log renamed while the scan ran, the walk listing
// both names) takes its session up again before adopt looks for the file
// it moved from, so it is followed, not read a second time. (A rollout
// compressed to .zst while the scan ran is met right after its plain
// file, whose session, the last one held, is never written early. A
// retired log deleted while the scan ran is not marked gone by this run's
// sweep, which looks at the records in memory; the next run's does.)
//
// A scan over a data directory that caught up before retires, as they are
// loaded, the sessions with nothing new (quiet.go).

// retireWritten retires, of the sessions just written early, those that
// may be.
func (d *Daemon) retireWritten(keys []string) {
	if !d.opt.Once {
		return
	}
	var ids []uint64
	for _, key := range keys {
		for _, src := range d.sessionSources(key) {
			ids = append(ids, src.ID)
		}
	}
	stored, err := d.db.HasSources(ids)
	if err != nil {
		return // kept in memory: nothing is lost but the room
	}
	for _, key := range keys {
		d.retire(key, stored)
	}
}

// retire lets go of a session's records when nothing of it is left to do;
// it reports whether it did. stored says which sources have their records
// committed.
func (d *Daemon) retire(key string, stored map[uint64]bool) bool {
	srcs, ok, _ := d.retirable(key)
	if !ok {
		return false
	}
	s := d.sessions[key]
	e := retiredEntry{key: key, agent: s.Agent, counted: counted(s, d.hasSources), summed: true,
		ids: make([]uint64, 0, len(srcs)), files: make([]watchers.FileID, 0, len(srcs))}
	// Of a path, only the source holding it answers for it (a deleted
	// log's path may be another log's since, of this session too): the
	// sources holding theirs go last, counted, so that exactly those take
	// their paths back (restoreFrom). The path alone could not tell a
	// deleted log's record from that of the log moved onto its name.
	holds := func(src *state.Source) bool { return !d.opt.Once && d.byPath[src.Path] == src }
	for _, last := range []bool{false, true} {
		for _, src := range srcs {
			if holds(src) != last {
				continue
			}
			if !stored[src.ID] {
				return false
			}
			file := watchers.FileID{Dev: src.Dev, Ino: src.Ino}
			e.summed = e.summed && d.summed[src.ID]
			if !src.Missing {
				e.logs++
			} else if d.retired.hasFile(file) {
				// A deleted log's identity may be a live log's now (inodes
				// are reused): the live one keeps it.
				file = watchers.FileID{}
			}
			e.ids, e.files = append(e.ids, src.ID), append(e.files, file)
			if last {
				e.paths = append(e.paths, src.Path)
			}
		}
	}
	if !d.retired.addEntry(e) {
		return false // another retired session has its hash: it stays
	}
	for _, src := range srcs {
		d.unindexIdentity(src)
		delete(d.srcs, src.ID)
		if d.byPath[src.Path] == src {
			delete(d.byPath, src.Path)
			delete(d.sizes, src.Path)
		}
		delete(d.parsers, src.ID)
		delete(d.summed, src.ID)
	}
	delete(d.idx.bySession, key)
	delete(d.idx.pending, key)
	delete(d.sessions, key)
	return true
}

// retirable reports whether a session may leave memory as far as memory
// tells (the caller checks that its sources' records are committed), and
// returns its sources. When it may not, lasting says whether that holds
// until the session changes: it has a parent or a child, a log that is no
// appended file with a known identity, or a skipped line.
func (d *Daemon) retirable(key string) (srcs sourceList, ok, lasting bool) {
	s := d.sessions[key]
	if s == nil {
		return nil, false, false
	}
	if s.Parent != "" || len(d.childrenOf(key)) > 0 {
		return nil, false, true
	}
	if s.Dirty() || d.retry[key] != nil || d.vacated[key] || d.unrecorded[key] != nil || d.held.fresh[key] {
		return nil, false, false
	}
	if srcs = d.sessionSources(key); len(srcs) == 0 {
		return nil, false, false
	}
	for _, src := range srcs {
		if src.Form != watchers.FormLines || src.ParentSession != "" || !(watchers.FileID{Dev: src.Dev, Ino: src.Ino}).Known() ||
			(!d.opt.Once && (src.Skipped > 0 || src.Oversized > 0)) {
			return nil, false, true
		}
		// A scan lets go of no deleted log: its sweep marks the logs of the
		// records in memory. A daemon that follows hears of a log back at
		// its path, or of its identity under another, as of any other.
		if (src.Missing && d.opt.Once) || d.faults.waiting[src.ID] || d.reroute[src.ID] || d.unreadable[src.Path] != nil || d.toReread(src) {
			return nil, false, false
		}
		if _, held := d.held.srcs[src.ID]; held {
			return nil, false, false
		}
		if !d.opt.Once && !src.Missing {
			if size, there := d.sizes[src.Path]; !there || size != src.Offset {
				return nil, false, false // not read to the end the watcher last saw, or not seen there
			}
		}
	}
	return srcs, true, false
}

// unindexIdentity drops a source from the index by file identity.
func (d *Daemon) unindexIdentity(src *state.Source) {
	delete(d.idx.noFileID, src.ID)
	id := watchers.FileID{Dev: src.Dev, Ino: src.Ino}
	l, ok := d.idx.byFileID[id]
	if !ok {
		return
	}
	if l = l.holding(func(o *state.Source) bool { return o != src }); len(l) == 0 {
		delete(d.idx.byFileID, id)
	} else {
		d.idx.byFileID[id] = l
	}
}

// restoreFile takes up again the retired session of a log whose file has
// identity id, if there is one.
func (d *Daemon) restoreFile(id watchers.FileID) {
	if h, ids, ok := d.retired.byFile(id); ok {
		d.restoreRetired(h, ids)
	}
}

// restoreRetired takes up again the retired session of hash h, whose
// sources have the given ids.
func (d *Daemon) restoreRetired(h uint64, ids []uint64) (key string) {
	srcs, err := d.db.Sources(ids)
	if err == nil && (len(srcs) == 0 || retiredKeyHash(srcs[0].Session) != h) {
		err = errors.New("the source records name another session")
	}
	if err != nil {
		d.retired.remove(h, nil, nil) // tried once, as restore does
		d.restoreFailure(err, "")
		return ""
	}
	key = srcs[0].Session
	if d.restoreFrom(key, h, srcs) == nil {
		return "" // its records could not be read (restoreFrom counted it)
	}
	return key
}

// restore takes a retired session's records up again. It returns nil when
// the session was not retired, or when its records cannot be read; retired
// says whether it was. Those records were read back when it was retired,
// so a failure here is damage to the state database or a failing disk: it
// is logged and counted, and the scan ends with an error (restoreFailed);
// the caller goes on as for a session never seen, and the flush treats
// the events of the sources it does not know as damage (their logs are
// read again by the next run).
func (d *Daemon) restore(key string) (sess *state.Session, retired bool) {
	h, ids, ok := d.retired.lookup(key)
	if !ok {
		return nil, false
	}
	srcs, err := d.db.Sources(ids)
	if err != nil {
		// Tried once: the session goes on as one never seen (its logs'
		// identities, left in the set, find no session any more).
		d.retired.remove(h, nil, nil)
		d.restoreFailure(err, key)
		return nil, true
	}
	for _, src := range srcs {
		if src.Session != key {
			// The sources of another session whose key hashes as this
			// one's: this one was never retired (add refuses a hash
			// taken), it is new.
			return nil, false
		}
	}
	return d.restoreFrom(key, h, srcs), true
}

// restoreFrom takes up the retired session key again, with the records of
// its sources read back.
func (d *Daemon) restoreFrom(key string, h uint64, srcs []*state.Source) *state.Session {
	files, paths := make([]watchers.FileID, len(srcs)), make([]string, len(srcs))
	for i, src := range srcs {
		files[i], paths[i] = watchers.FileID{Dev: src.Dev, Ino: src.Ino}, src.Path
	}
	summed, held := d.retired.summed(h), d.retired.held(h)
	// Of its paths, a source takes back those it held when it was let go
	// of (in a following daemon, the last held of them: a deleted log's
	// name may have gone to a log moved onto it), or, in a scan or for a
	// session retired as it was loaded, one it would take at load
	// (takesPathFrom).
	// Two of its own sources may name one path (a log moved onto the name
	// of another of its logs): as at load, the path goes to the one
	// takesPathFrom prefers, not to the later.
	loaded := d.retired.loaded(h)
	owns := make([]bool, len(srcs))
	for i, src := range srcs {
		if !d.opt.Once && !loaded {
			owns[i] = i >= len(srcs)-held
			continue
		}
		holder, own := d.byPath[src.Path], -1
		for j := range i {
			if owns[j] && srcs[j].Path == src.Path {
				holder, own = srcs[j], j
			}
		}
		if owns[i] = takesPathFrom(src, holder); owns[i] && own >= 0 {
			owns[own] = false
		}
	}
	d.retired.remove(h, files, paths)
	sess, _, err := d.db.Records(key, nil)
	if err != nil {
		d.restoreFailure(err, key)
		return nil
	}
	d.restored++
	sess.ActivityMs = min(sess.ActivityMs, ms(d.opt.Clock.Now())) // as load does
	d.sessions[key] = sess
	for i, src := range srcs {
		d.srcs[src.ID] = src
		if owns[i] {
			d.byPath[src.Path] = src
		}
		d.index(src)
		if summed {
			d.summed[src.ID] = true // its whole prefix was checked in this run
		}
		if d.byPath[src.Path] != src {
			continue
		}
		if fi, err := os.Stat(src.Path); err == nil {
			d.sizes[src.Path] = fi.Size()
		}
	}
	return sess
}

func (d *Daemon) restoreFailure(err error, key string) {
	d.restoreFailed++
	d.log.Error("cannot read back the records of a session let go of from memory", "component", "daemon",
		"session", key, "err", err)
}

// sessionCount is how many sessions the loop knows, retired ones too.
func (d *Daemon) sessionCount() int { return len(d.sessions) + d.retired.len() }
