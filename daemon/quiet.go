package daemon

import (
	"slices"
	"strings"

	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
)

// A `scan` over a data directory that has caught up before would load the
// record of every source and session it knows (1.2–1.7 KB of heap each)
// only to find most of them with nothing to do: at 100,000 sessions that
// is most of its memory. So a one-shot catch-up walks the logs first, and
// while the records are read, it lets go at once of each session that is
// quiet: every one of its logs is there, unchanged since it was last
// read (the same path, file identity, size and modification time, every
// byte consumed), its map written for its last change and still in the
// store, and it has no parent and no child. Such a session is retired as
// one the scan wrote early is (retire.go): only its key, its sources' ids
// and their files' identities stay, its logs are left out of the catch-up,
// and a new log that joins it reads its records back.
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

// quietLoad is what load knows of the walk while it reads the records.
type quietLoad struct {
	walked []watchers.FileStat // in path order
	skip   []bool              // walked[i] is a log of a session retired on load
	// groups indexes, by session key, each session's count of sources
	// while its records are read; parked holds the sources found quiet,
	// those of one group chained. Every session's sources are read before
	// any session record, so all of them are held at once: flat tables
	// (a map entry and 12 bytes a session, 16 a source) where a 56-byte
	// record and two slices were allocated for each session.
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
	file int32 // its file's index in walked
	prev int32 // the one parked before it for the same session (-1: none)
}

func newQuietLoad(walked []watchers.FileStat) *quietLoad {
	return &quietLoad{walked: walked, groups: map[string]int32{}, parents: map[string]bool{}}
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

// index returns the walk's index of a path. The walk is in path order
// (watchers.Scan sorts it), so a binary search finds it: a map of every
// path took 40 bytes a log more while the records were read.
func (q *quietLoad) index(path string) (int, bool) {
	i, ok := slices.BinarySearchFunc(q.walked, path, func(f watchers.FileStat, p string) int {
		return strings.Compare(f.Path, p)
	})
	return i, ok && !q.walked[i].Gone
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
	i, ok := q.index(s.Path)
	if !ok || !quietSource(s, q.walked[i]) {
		return false
	}
	q.parked = append(q.parked, parkedSource{id: s.ID, file: int32(i), prev: g.last})
	g.last = int32(len(q.parked) - 1)
	g.quiet++
	return true
}

// quietSource reports whether a visit of f would find nothing to do for
// s (see tail): the same file, every byte of it consumed, untouched since.
// The walk's look at the file comes first; the file is then opened and
// checked as the tailer would.
func quietSource(s *state.Source, f watchers.FileStat) bool {
	id := watchers.FileID{Dev: s.Dev, Ino: s.Ino}
	return s.Form == watchers.FormLines && f.Form == watchers.FormLines && !s.Missing && !f.Archived &&
		s.ParentSession == "" && s.Agent == f.Agent && id.Known() && f.ID == id &&
		s.HeadLen > 0 && s.Offset > 0 && f.Size == s.Offset && f.Size == s.Size &&
		ms(f.ModTime) == s.ModMs && (s.Sidecar || !sidecarAppeared(s)) && unchangedOnDisk(s)
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
		ids[i], files[i] = p.id, q.walked[p.file].ID
	}
	if !d.retired.add(s.Key, ids, files, counted(s, func(string) bool { return true })) {
		return false // another retired session has its hash: this one is kept
	}
	delete(q.groups, s.Key)
	if q.skip == nil {
		q.skip = make([]bool, len(q.walked))
	}
	for _, p := range srcs {
		q.skip[p.file] = true
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

// skips reports whether walked[i] is a log of a session retired on load:
// the catch-up leaves it out.
func (q *quietLoad) skips(i int) bool { return q.skip != nil && q.skip[i] }
