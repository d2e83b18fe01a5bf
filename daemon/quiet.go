package daemon

import (
	"cmp"
	"hash/maphash"
	"slices"

	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
)

// A `scan` over a data directory that has caught up before would load the
// record of every source and session it knows (1.2–1.7 KB of heap each)
// only to find most of them with nothing to do: at 100,000 sessions that
// is most of its memory. So while a one-shot catch-up reads the records,
// it lets go at once of each session that is quiet: every one of its logs
// is where a walk meets it, unchanged since it was last read (the same
// path, file identity, size and modification time, every byte consumed),
// its map written for its last change and still in the store, and it has
// no parent and no child. Such a session is retired as one the scan wrote
// early is (retire.go): only its key, its sources' ids and their files'
// identities stay, its logs are left out of the catch-up when the walk,
// after the load, finds them as they were (quietLogs), and a log that
// joins it, or one of its logs changed since, reads its records back.
//
// What a visit of such a log would have done is nothing: the tailer stops
// at a cursor that is at the end of the file. The checks it makes first
// are made here too, on the file as it is when its record is read: the
// same identity, size and time, and its head and the bytes before the
// cursor those it followed (a log rewritten in place with its time put
// back is not quiet); a log that cannot be opened is not quiet either,
// and its visit reports it. Only the checksum of the whole prefix is
// skipped, as a visit skips it when the time did not move
// (rewrittenInPlace). A Claude subagent log whose sidecar appeared since
// it was read is not quiet: it is read again for its type.

// retireOnLoad lets tests compare with the load that keeps everything.
var retireOnLoad = true

// quietLoad is what load keeps while it reads the records.
type quietLoad struct {
	roots []watchers.Root // where a walk meets the logs
	// logs are the logs of the sessions retired on load, as they were
	// found (see quietLogs).
	logs []quietLog
	// groups indexes, by session key, each session's count of sources
	// while its records are read; parked holds the sources found quiet,
	// those of one group chained. Every session's sources are read before
	// any session record, so all of them are held at once: flat tables
	// (a map entry and 12 bytes a session, 56 a source) where a record and
	// two slices were allocated for each session.
	groups map[string]int32
	group  []quietGroup
	parked []parkedSource
	// parents are the sessions a source names as its parent.
	parents map[string]bool
}

// quietGroup is one session's sources while its records are read.
type quietGroup struct {
	total int32 // sources routed to the session, quiet or not
	quiet int32 // of them found quiet, not kept in memory
	last  int32 // the last of those in parked (-1: none)
}

// parkedSource is a quiet source, not kept in memory.
type parkedSource struct {
	id   uint64
	log  quietLog
	prev int32 // the one parked before it for the same session (-1: none)
}

// quietLog is a log of a session retired on load as it was found then.
type quietLog struct {
	path        uint64 // its path's hash (quietPathHash)
	id          watchers.FileID
	size, modMs int64
}

// quietPathHash hashes the paths of quiet logs; a variable so that tests
// can force collisions.
var quietPathHash = func() func(string) uint64 {
	seed := maphash.MakeSeed()
	return func(path string) uint64 { return maphash.String(seed, path) }
}()

func newQuietLoad(roots []watchers.Root) *quietLoad {
	return &quietLoad{roots: roots, groups: map[string]int32{}, parents: map[string]bool{}}
}

// sources returns a group's parked sources in the order they were parked.
func (q *quietLoad) sources(g quietGroup) []parkedSource {
	out := make([]parkedSource, g.quiet)
	for k, n := g.last, len(out); k >= 0; k = q.parked[k].prev {
		n--
		out[n] = q.parked[k]
	}
	return out
}

// park reports whether a source's file is quiet, and if so counts it for
// its session instead of the caller keeping the record.
func (q *quietLoad) park(s *state.Source) bool {
	if s.ParentSession != "" {
		q.parents[s.ParentSession] = true
	}
	if s.Session == "" {
		return false
	}
	gi, ok := q.groups[s.Session]
	if !ok {
		gi = int32(len(q.group))
		q.group = append(q.group, quietGroup{last: -1})
		q.groups[s.Session] = gi
	}
	g := &q.group[gi]
	g.total++
	if !quietSource(s, q.roots) {
		return false
	}
	log := quietLog{path: quietPathHash(s.Path), id: watchers.FileID{Dev: s.Dev, Ino: s.Ino}, size: s.Offset, modMs: s.ModMs}
	q.parked = append(q.parked, parkedSource{id: s.ID, log: log, prev: g.last})
	g.last = int32(len(q.parked) - 1)
	g.quiet++
	return true
}

// quietSource reports whether a visit of s's log would find nothing to do
// (see tail): a log a walk of the roots meets where it was, as a line log
// of the same agent, every byte of it consumed, untouched since. The file
// is opened and checked as the tailer would.
func quietSource(s *state.Source, roots []watchers.Root) bool {
	id := watchers.FileID{Dev: s.Dev, Ino: s.Ino}
	return s.Form == watchers.FormLines && !s.Missing && s.ParentSession == "" && id.Known() &&
		s.HeadLen > 0 && s.Offset > 0 && s.Offset == s.Size && metAsLog(s, roots) &&
		(s.Sidecar || !sidecarAppeared(s)) && unchangedOnDisk(s)
}

// metAsLog reports whether a walk of the roots meets s's path as a line
// log of s's agent, not archived: under the first root that meets it, as
// the walk names it.
func metAsLog(s *state.Source, roots []watchers.Root) bool {
	for _, r := range roots {
		if form, ok := r.Meets(s.Path); ok {
			return form == watchers.FormLines && r.Agent == s.Agent && !r.Archived(s.Path)
		}
	}
	return false
}

// unchangedOnDisk opens a source's log and checks it as tail does before
// it finds nothing to read: the same identity, size and time as recorded,
// and the head and the bytes before the cursor as they were read.
func unchangedOnDisk(s *state.Source) bool {
	f, err := watchers.OpenLog(s.Path)
	if err != nil {
		return false // the visit says why
	}
	defer f.Close()
	id, fi, err := watchers.IdentifyOpen(f)
	if err != nil || id != (watchers.FileID{Dev: s.Dev, Ino: s.Ino}) || fi.Size() != s.Offset ||
		ms(fi.ModTime()) != s.ModMs {
		return false
	}
	return watchers.Verify(f, id, fi.Size(), cursorOf(s)) == nil
}

// retireQuiet retires a session on load when it and all of its sources
// are quiet; it reports whether it did.
func (d *Daemon) retireQuiet(q *quietLoad, s *state.Session) bool {
	gi, ok := q.groups[s.Key]
	if !ok {
		return false
	}
	g := q.group[gi]
	if g.total == 0 || g.quiet != g.total || s.Parent != "" || q.parents[s.Key] ||
		s.Dirty() || d.mapMissing(s) {
		return false
	}
	srcs := q.sources(g)
	ids, files := make([]uint64, len(srcs)), make([]watchers.FileID, len(srcs))
	for i, p := range srcs {
		ids[i], files[i] = p.id, p.log.id
	}
	if !d.retired.addEntry(retiredEntry{key: s.Key, agent: s.Agent, ids: ids, files: files, logs: len(ids),
		counted: counted(s, func(string) bool { return true })}) {
		return false // another retired session has its hash: this one is kept
	}
	delete(q.groups, s.Key)
	for _, p := range srcs {
		q.logs = append(q.logs, p.log)
	}
	d.retiredOnLoad++
	return true
}

// unparked returns the ids of the quiet sources whose session was kept:
// their records are read back and kept as any other.
func (q *quietLoad) unparked() []uint64 {
	var ids []uint64
	for _, gi := range q.groups {
		for _, p := range q.sources(q.group[gi]) {
			ids = append(ids, p.id)
		}
	}
	return ids
}

// quietLogs are the logs of the sessions retired on load as they were
// found then, in order of their paths' hashes: the catch-up's walk, which
// comes after the load, leaves out a log it finds as it was (the same
// path, identity, size and time: 40 bytes a log, where the walk held whole
// during the load took 200), and takes the session up again for one that
// changed since (appended to, replaced) before it is visited. A log moved
// away is met under a name not here, and its visit finds its session by
// the file's identity, as for a session retired by the scan itself. A
// log deleted between the load and the walk is not met at all: its record
// stays as it was, retired, until the next catch-up's load, which finds
// the file gone, keeps the session, and has its sweep mark it missing.
type quietLogs []quietLog

func (q *quietLoad) sortedLogs() quietLogs {
	slices.SortFunc(q.logs, func(a, b quietLog) int { return cmp.Compare(a.path, b.path) })
	return q.logs
}

// met says what the walk does with a log it meets: leave it out (skip),
// or read the records of the sessions retired on load whose log had its
// path (their files' identities: restore), then visit it. Two paths with
// one hash cost a read-back, not a log left out, as identity, size and
// time must match too; the one log a shared hash can leave out is a quiet
// one moved after the load to a path whose 64-bit hash is its old one's,
// which the next scan, finding the old path gone, follows.
func (l quietLogs) met(f watchers.FileStat) (skip bool, restore []watchers.FileID) {
	for _, q := range l.at(f.Path) {
		if q.id == f.ID && q.size == f.Size && q.modMs == ms(f.ModTime) {
			return true, nil
		}
		restore = append(restore, q.id)
	}
	return false, restore
}

// at returns the quiet logs whose paths have path's hash.
func (l quietLogs) at(path string) quietLogs {
	h := quietPathHash(path)
	i, _ := slices.BinarySearchFunc(l, h, func(q quietLog, h uint64) int { return cmp.Compare(q.path, h) })
	j := i
	for j < len(l) && l[j].path == h {
		j++
	}
	return l[i:j]
}

// readTo is where the record of the quiet log at f's path left f's file,
// when it is there and f only grew since: what sizes the catch-up of a log
// appended to between the load and the walk, whose record is not read back
// until the walk visits it.
func (l quietLogs) readTo(f watchers.FileStat) (int64, bool) {
	for _, q := range l.at(f.Path) {
		if q.id == f.ID && q.size <= f.Size {
			return q.size, true
		}
	}
	return 0, false
}
