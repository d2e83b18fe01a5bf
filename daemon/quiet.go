package daemon

import (
	"cmp"
	"hash/maphash"
	"slices"

	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/agents"
)

// A `scan` over a data directory that has caught up before would load the
// record of every source and session it knows (1.2–1.7 KB of heap each)
// only to find most of them with nothing to do: at 100,000 sessions that
// is most of its memory. So while a one-shot catch-up reads the records,
// it lets go at once of each session that is quiet (a daemon that follows,
// started again, too: see below): every one of its logs
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
//
// A daemon that follows does the same as it starts (the peak of its start
// over 100,000 sessions was 460 MiB, every record held until its first
// look at the quiet ones), with retireIdle's rules: the session quiet for
// RetireAfter, its map written, no line of it skipped, each of its logs
// holding its path alone, as news of a retired log is found by its path
// (a path another record or retired session holds has the session taken
// up again once the load is done); and, as retireIdle lets go of them, a
// deleted log is quiet too (goneQuietly). Its watcher's first full scan is
// then read without the quiet logs it lists as they were (leaveOutQuiet);
// a quiet log listed changed or not listed has its session taken up
// first, and a deleted log listed again is news of its path. A deleted
// log's record and a present log's may name one path (a log moved onto
// the name of another). A load that keeps both gives it to the present
// one (takesPathFrom). One that lets go of the present one's session and
// takes up the deleted one's at its end leaves the path to the deleted
// record meanwhile: the present log is still left out of the first scan
// (stillRetired), and the path goes back to its record when its session
// is taken up (restoreFrom) or on news of the path (ingest). Until then the
// deleted record's session stays in memory: retiring it would ask to hold
// the path the retired session holds (a rare case: a log moved onto
// another followed log's name, then a restart; only room is lost). A
// retired session holding the path of its own deleted Codex rollout is
// taken up by the rollout's compressed copy, which its record reads
// (adopt).

// retireOnLoad lets tests compare with the load that keeps everything.
var retireOnLoad = true

// quietLoad is what load keeps while it reads the records. The records
// are read in passes (state.Passes), so that it holds a few counts a
// session, never a record: every session's key, to learn which hashes two
// keys share; every source, to count each session's sources and those of
// them quiet; every session, to retire those all of whose sources are
// quiet; and every source again, to place the ids and file identities of
// the retired sessions' sources in the retired set and keep the others.
type quietLoad struct {
	roots  []watchers.Root         // where a walk meets the logs
	agents map[string]agents.Agent // a log an earlier parser read is not quiet (reread.go)
	// logs are the logs of the sessions retired on load, as they were
	// found (see quietLogs).
	logs []quietLog
	// groups counts each session's sources, by its key's hash
	// (retiredKeyHash), until the sessions are read: 34–43 bytes of heap
	// a session (a map entry), where holding the quiet sources until their
	// session record was read took 150. Dropped as the last pass begins,
	// which finds the retired sessions in the retired set.
	groups map[uint64]quietGroup
	// quiet counts the quiet sources, retired the sources of the sessions
	// retired: what the tables they fill are sized for.
	quiet, retired int
	// follow is set for a daemon that follows, which lets go of a session
	// only as retireIdle would: quiet for RetireAfter (activity at cutoff
	// or before, now being the load's time), its map written, no skipped
	// line, each log holding its path (see place).
	follow      bool
	now, cutoff int64
	// recheck are the sessions retired whose paths turned out to be held
	// by another record or another retired session: taken up again once
	// the load is done.
	recheck []uint64
}

// quietGroup is one session while its records are read.
type quietGroup struct {
	total int32 // sources routed to the session, quiet or not
	quiet int32 // of them, those found quiet (not kept in memory)
	gone  int32 // of those, the logs deleted (only a daemon that follows lets go of them)
	flags groupFlags
}

type groupFlags uint8

const (
	groupKey    groupFlags = 1 << iota // a session record has the hash
	groupShared                        // two have it: neither is let go of
	groupParent                        // a source names a session of the hash as its parent
)

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

func newQuietLoad(roots []watchers.Root, reg map[string]agents.Agent) *quietLoad {
	return &quietLoad{roots: roots, agents: reg, groups: map[uint64]quietGroup{}}
}

// sessionKey notes a session's key's hash; a hash two keys share keeps
// both sessions (whose sources it cannot tell apart) in memory.
func (q *quietLoad) sessionKey(key []byte) { q.sessionKeyHash(retiredKeyHash(string(key))) }

// sessionKeyHash is sessionKey for a key's hash.
func (q *quietLoad) sessionKeyHash(h uint64) {
	g := q.groups[h]
	if g.flags&groupKey != 0 {
		g.flags |= groupShared
	}
	g.flags |= groupKey
	q.groups[h] = g
}

// park reports whether a source's file is quiet, and if so counts it for
// its session instead of the caller keeping the record. Every source of
// a session is counted, quiet or not. A source whose session has no
// record (there is none after the open's check, repair.go) is kept, and
// so is one of id 0, which place could not tell from a free slot.
func (q *quietLoad) park(s *state.Source) bool {
	if s.ParentSession != "" {
		q.namedParent(retiredKeyHash(s.ParentSession))
	}
	if s.Session == "" {
		return false
	}
	h := retiredKeyHash(s.Session)
	g, ok := q.groups[h]
	if !ok {
		return false
	}
	g.total++
	var quiet bool
	switch {
	case g.flags&groupShared != 0 || s.ID == 0:
	case !q.follow:
		quiet = quietSource(s, q.roots, q.agents)
	case s.Skipped > 0 || s.Oversized > 0:
	case s.Missing:
		quiet = goneQuietly(s)
	default:
		quiet = quietSource(s, q.roots, q.agents)
	}
	if quiet {
		g.quiet++
		q.quiet++
		if s.Missing {
			g.gone++
		}
	}
	q.groups[h] = g
	return quiet
}

// namedParent notes that a source names a session of hash h as its
// parent: that session is not let go of (a hash two keys share keeps
// both anyway).
func (q *quietLoad) namedParent(h uint64) {
	if g, ok := q.groups[h]; ok {
		g.flags |= groupParent
		q.groups[h] = g
	}
}

// quietSource reports whether a visit of s's log would find nothing to do
// (see tail): a log a walk of the roots meets where it was, as a line log
// of the same agent, every byte of it consumed, untouched since, read by
// the version of its agent's parser reg has (reread.go). The file is
// opened and checked as the tailer would.
func quietSource(s *state.Source, roots []watchers.Root, reg map[string]agents.Agent) bool {
	id := watchers.FileID{Dev: s.Dev, Ino: s.Ino}
	return s.Form == watchers.FormLines && !s.Missing && s.ParentSession == "" && id.Known() && parsedCurrent(s, reg) &&
		s.HeadLen > 0 && s.Offset > 0 && s.Offset == s.Size && metAsLog(s, roots) &&
		(s.Sidecar || !sidecarAppeared(s)) && unchangedOnDisk(s)
}

// goneQuietly reports whether a daemon that follows may let go, on load,
// of s, a log deleted (agents delete old transcripts: in a long history
// most sessions are kept only by agentmap): as retirable has it, an
// appended log with a known identity and no parent session. Whether a log
// is back at its path is the watcher's to say: its first scan lists it,
// and ingest takes the session up by the path (place holds it).
func goneQuietly(s *state.Source) bool {
	return s.Form == watchers.FormLines && s.ParentSession == "" && (watchers.FileID{Dev: s.Dev, Ino: s.Ino}).Known()
}

// metAsLog reports whether a walk of the roots meets s's path as a line
// log of s's agent, not archived: under the first root that meets it, as
// the walk names it.
func metAsLog(s *state.Source, roots []watchers.Root) bool {
	r, form, ok := firstMeeting(s.Path, roots)
	return ok && form == watchers.FormLines && r.Agent == s.Agent && !r.Archived(s.Path)
}

// firstMeeting is the first root a walk meets path under, and the form it
// names it with.
func firstMeeting(path string, roots []watchers.Root) (watchers.Root, string, bool) {
	for _, r := range roots {
		if form, ok := r.Meets(path); ok {
			return r, form, true
		}
	}
	return watchers.Root{}, "", false
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
// are quiet; it reports whether it did. The ids of its sources are
// placed in the retired set by place, in the pass after.
func (d *Daemon) retireQuiet(q *quietLoad, s *state.Session) bool {
	g, ok := q.groups[retiredKeyHash(s.Key)]
	if !ok || g.flags&(groupShared|groupParent) != 0 || g.total == 0 || g.quiet != g.total || s.Parent != "" ||
		s.Dirty() || d.mapMissing(s) {
		return false
	}
	if q.follow && (min(s.ActivityMs, q.now) > q.cutoff || s.Flush == nil || s.Flush.Path == "") {
		return false // not quiet for long enough, or no map written: retireIdle looks at it
	}
	if d.retired.ids == nil {
		d.retired.ids = make([]uint64, 0, q.quiet) // (at most)
	}
	if !d.retired.reserve(retiredEntry{key: s.Key, agent: s.Agent, logs: int(g.total - g.gone),
		counted: counted(s, func(string) bool { return true })}, int(g.total)) {
		return false
	}
	q.retired += int(g.total)
	d.retiredOnLoad++
	return true
}

// place reports whether a source not kept belongs to a session retired on
// load, and if so puts its id and file identity in the retired set and its
// log among the quiet ones.
func (d *Daemon) place(q *quietLoad, s *state.Source) bool {
	if s.Session == "" {
		return false
	}
	id := watchers.FileID{Dev: s.Dev, Ino: s.Ino}
	h := retiredKeyHash(s.Session)
	// A deleted log's identity may be a live log's now (inodes are
	// reused): the live one keeps it, as in retire.
	if !d.retired.place(h, s.ID, id, s.Missing) {
		return false
	}
	// A daemon that follows hears of a retired log by its path, which the
	// log must hold alone: one held by a record kept (a log deleted from
	// that name, say) or by another retired session has its session taken
	// up again after the load, where its sources take their paths as the
	// load would have (restoreFrom).
	if q.follow && (d.byPath[s.Path] != nil || !d.retired.holdPath(h, s.Path)) {
		q.recheck = append(q.recheck, h)
	}
	if s.Missing {
		return true // not met by a walk: nothing to leave out
	}
	if q.logs == nil {
		q.logs = make([]quietLog, 0, q.retired)
	}
	q.logs = append(q.logs, quietLog{path: quietPathHash(s.Path), id: id, size: s.Offset, modMs: s.ModMs})
	return true
}

// quietLogs are the logs of the sessions retired on load as they were
// found then, in order of their paths' hashes: the catch-up's walk, which
// comes after the load, leaves out a log it finds as it was (the same
// path, identity, size and time: 40 bytes a log, where the walk held whole
// during the load took 200), and takes the session up again for one that
// changed since (appended to, replaced) before it is visited. A log moved
// away is met under a name not here, and its visit finds its session by
// the file's identity, as for a session retired by the scan itself. A
// log deleted between the load and the walk is not met at all: once the
// walk is done, the session of every quiet log whose path it did not meet
// is taken up, before the last piece, whose sweep marks the log gone
// (ingestAsWalked).
type quietLogs []quietLog

func (q *quietLoad) sortedLogs() quietLogs {
	slices.SortFunc(q.logs, func(a, b quietLog) int { return cmp.Compare(a.path, b.path) })
	return q.logs
}

// table is the quiet logs of a load in one piece, in memory.
func (q *quietLoad) table() *quietTable { return &quietTable{mem: q.sortedLogs()} }

// leaveOutQuiet is, for a daemon that follows, its watcher's first full
// scan without the logs of the sessions retired on load that it lists as
// they were: their sessions stay retired, where a visit would take each up
// again (ingest, restorePath) only to find nothing to read. A quiet log
// listed changed (appended to, replaced) has its session taken up first,
// as news of it would; one not listed at all (deleted or moved away since
// the load) too, so that the sweep that ends the scan marks it gone, or
// the visit of its new name finds it by its file's identity. A log whose
// session a command took up meanwhile is listed as any other.
func (d *Daemon) leaveOutQuiet(files []watchers.FileStat) []watchers.FileStat {
	quiet := d.quietLogs
	if quiet == nil {
		return files
	}
	d.quietLogs = nil // it serves this one scan
	// First every session to take up: those of the quiet logs listed
	// changed, then those of the quiet logs not listed. Only then is it
	// known which sessions stay retired.
	met := make([]bool, quiet.len())
	asFound := make([]bool, len(files)) // listed as a quiet log was found
	for n, f := range files {
		if f.Gone {
			continue
		}
		i, logs := quiet.span(f.Path)
		same := -1
		for k, q := range logs {
			if q.same(f) {
				same = i + k
			}
		}
		if same >= 0 {
			met[same], asFound[n] = true, true
			continue
		}
		for k, q := range logs {
			met[i+k] = true
			d.restoreFile(q.id) // changed since the load
		}
	}
	quiet.each(func(k int, q quietLog) {
		if !met[k] {
			d.restoreFile(q.id)
		}
	})
	listed := files[:0]
	for n, f := range files {
		if asFound[n] && d.stillRetired(f) {
			continue
		}
		listed = append(listed, f)
	}
	clear(files[len(listed):]) // the paths of the logs left out
	return listed
}

// stillRetired reports whether the log f, listed as a quiet log was found
// at the load, is one of a session still retired: its path and its
// file's identity name the same retired session, and no record in memory
// holds the path but a deleted log's (one taken up at the end of the
// load, which took the path while the log's own session was retired: news
// of the path gives it back, see ingest).
func (d *Daemon) stillRetired(f watchers.FileStat) bool {
	byPath, _, ok := d.retired.byPath(f.Path)
	if s := d.byPath[f.Path]; !ok || s != nil && !s.Missing {
		return false
	}
	byFile, _, ok := d.retired.byFile(f.ID)
	return ok && byFile == byPath
}

// metIn says what the walk does with a log f it meets, given the quiet
// logs whose paths have f's path's hash (quietTable.span): leave it out
// (skip), or read the records of the sessions retired on load whose log
// had its path (their files' identities: restore), then visit it. Two
// paths with one hash cost a read-back, not a log left out, as identity,
// size and time must match too; the one log a shared hash can leave out
// is a quiet one moved after the load to a path whose 64-bit hash is its
// old one's, which the next scan, finding the old path gone, follows.
func (l quietLogs) metIn(f watchers.FileStat) (skip bool, restore []watchers.FileID) {
	for _, q := range l {
		if q.same(f) {
			return true, nil
		}
		restore = append(restore, q.id)
	}
	return false, restore
}

// same reports whether f is the quiet log as it was found.
func (q quietLog) same(f watchers.FileStat) bool {
	return q.id == f.ID && q.size == f.Size && q.modMs == ms(f.ModTime)
}

// span is where in l the quiet logs whose paths have path's hash are.
func (l quietLogs) span(path string) (i, j int) {
	h := quietPathHash(path)
	i, _ = slices.BinarySearchFunc(l, h, func(q quietLog, h uint64) int { return cmp.Compare(q.path, h) })
	j = i
	for j < len(l) && l[j].path == h {
		j++
	}
	return i, j
}

// readTo is where the record of the quiet log at f's path left f's file,
// when it is there and f only grew since: what sizes the catch-up of a log
// appended to between the load and the walk, whose record is not read back
// until the walk visits it. l are the quiet logs whose paths have f's
// path's hash (quietTable.span).
func (l quietLogs) readTo(f watchers.FileStat) (int64, bool) {
	for _, q := range l {
		if q.id == f.ID && q.size <= f.Size {
			return q.size, true
		}
	}
	return 0, false
}
