package daemon

import (
	"hash/maphash"
	"math"
	"slices"

	"github.com/agentmap/agentmap/watchers"
)

// retiredSet is what a one-shot catch-up keeps of the sessions it let go
// of (retire.go, quiet.go): for each, the ids of its sources and whether
// it counts as a session; for each of their logs, the file's identity. It
// was the one part of a scan's memory that grew with every session met,
// so it holds no strings: a session is known by a 64-bit hash of its key
// and its sources' ids sit in one shared slice, some 60 to 90 bytes a session
// where a map by key with a slice each took over 200. A scan spills them
// to a file of its own every 16,384 sessions (retiredspill.go), keeping
// some 2.5 to 3 bytes of each in memory.
//
// A hash is not a key, so the set never answers alone: a session looked
// up by key is taken up again only when the records read back from the
// state database are that session's (restore checks), and a session
// whose hash is already taken by another is simply not retired (add
// refuses it; it stays in memory as before). A collision thus costs room,
// never a session.
type retiredSet struct {
	byKey map[uint64]retiredRef
	// files maps the identity of a retired log to its session's hash: a
	// log renamed while the scan runs is still that session's.
	files map[watchers.FileID]uint64
	// paths maps the hash of a retired log's path to its session's hash,
	// for a daemon that follows (retireIdle): any news of that path (the
	// log appended to, replaced or deleted) takes the session up again. A
	// scan meets each log once and keeps none.
	paths   map[uint64]uint64
	ids     []uint64 // the sources' ids, those of one session together
	dead    int      // of ids, those of sessions taken up again
	counted int      // how many of the sessions count (see counted)
	// agents are the agents of the retired sessions, and per agent what
	// status counts of them (a retired session counts as written).
	agents []retiredAgent
	// spill holds the sessions a one-shot catch-up spilled to its file
	// (retiredspill.go); nil in a daemon that follows.
	spill *retiredSpill
	// holdSpill is set while a load reserves sessions and places their
	// sources, which it does in memory only: the load spills them itself
	// once they are placed (after each of its pieces, loadpieces.go).
	holdSpill bool
}

// retiredAgent is what status counts of one agent's retired sessions.
type retiredAgent struct {
	name           string
	logs, sessions int // logs followed; sessions that count
}

// retiredRef locates a retired session's source ids in retiredSet.ids.
type retiredRef struct {
	at, n uint32
	logs  uint32 // of the sources, those whose log is there (status counts them)
	held  uint16 // of the sources, the last ones, that held their paths (retire)
	flags refFlags
	agent uint8 // index in agents
}

// refFlags are a retiredRef's yes-or-no facts, in one byte so that a ref
// stays 16 bytes.
type refFlags uint8

const (
	refCounted refFlags = 1 << iota // the session counts (see counted)
	refSummed                       // every log's whole prefix was checked in this run (rewrittenInPlace)
	refLoaded                       // retired as it was loaded (quiet.go): its paths are taken back as a load takes them
)

// retiredEntry is a session being retired: its key and agent, its
// sources' ids, their logs' identities and, for a daemon that follows,
// their paths.
type retiredEntry struct {
	key, agent string
	ids        []uint64
	files      []watchers.FileID
	paths      []string // of the last len(paths) sources, that held them
	logs       int      // of the sources, those whose log is there
	counted    bool
	summed     bool
	loaded     bool // retired as it was loaded (see reserve)
}

// retiredKeyHash hashes session keys for the set; a variable so that
// tests can force collisions.
var retiredKeyHash = func() func(string) uint64 {
	seed := maphash.MakeSeed()
	return func(key string) uint64 { return maphash.String(seed, key) }
}()

// add retires a session with the given sources and log identities; it
// reports false, retiring nothing, when another retired session has the
// same hash (or there is nothing to record).
func (r *retiredSet) add(key string, ids []uint64, files []watchers.FileID, counted bool) bool {
	return r.addEntry(retiredEntry{key: key, ids: ids, files: files, counted: counted})
}

// addEntry retires a session; it reports false, retiring nothing, when
// another retired session has its key's hash or one of its paths' hashes
// (or there is nothing to record).
func (r *retiredSet) addEntry(e retiredEntry) bool {
	h := retiredKeyHash(e.key)
	if _, taken := r.byKey[h]; taken || len(e.ids) == 0 || len(e.paths) > math.MaxUint16 {
		return false // (more paths than a ref counts: kept in memory)
	}
	if r.spill != nil {
		if _, taken, err := r.spill.key(h); taken || err != nil {
			return false // (not known whether it is taken: kept in memory)
		}
	}
	for _, p := range e.paths {
		if _, taken := r.paths[retiredPathHash(p)]; taken {
			return false
		}
	}
	if r.byKey == nil {
		r.byKey, r.files = map[uint64]retiredRef{}, map[watchers.FileID]uint64{}
	}
	agent := r.agentIndex(e.agent)
	if agent < 0 {
		return false // more agents than a ref can name: kept in memory
	}
	ref := retiredRef{at: uint32(len(r.ids)), n: uint32(len(e.ids)), logs: uint32(e.logs),
		held: uint16(len(e.paths)), agent: uint8(agent)}
	if e.counted {
		ref.flags |= refCounted
	}
	if e.summed {
		ref.flags |= refSummed
	}
	if e.loaded {
		ref.flags |= refLoaded
	}
	r.byKey[h] = ref
	r.ids = append(r.ids, e.ids...)
	for _, id := range e.files {
		if id.Known() {
			r.files[id] = h
			if r.spill != nil {
				if _, run, ok, _ := r.spill.file(id); ok {
					run.shadow(id) // this newer session holds the identity now
				}
			}
		}
	}
	if len(e.paths) > 0 && r.paths == nil {
		r.paths = map[uint64]uint64{}
	}
	for _, p := range e.paths {
		r.paths[retiredPathHash(p)] = h
	}
	a := &r.agents[agent]
	a.logs += e.logs
	if e.counted {
		r.counted++
		a.sessions++
	}
	if r.spill != nil && !r.holdSpill && len(r.byKey) >= retiredSpillAt {
		r.spillNow()
	}
	return true
}

// spillNow moves the sessions in memory to a run of the spill file; when
// the file cannot be written they stay, and no more are spilled.
func (r *retiredSet) spillNow() {
	if r.spill.writeErr != nil {
		return
	}
	if err := r.spill.write(r.byKey, r.ids, r.files); err != nil {
		r.spill.writeErr = err
		return
	}
	// New maps, not cleared ones: a cleared map keeps its table.
	r.byKey, r.files, r.ids, r.dead = map[uint64]retiredRef{}, map[watchers.FileID]uint64{}, nil, 0
}

// reserve retires a session whose n sources' ids are not known yet: the
// load counts a session's sources before it reads its record, and reads
// them again after (quiet.go), placing each with place. It reports false,
// retiring nothing, as addEntry does.
func (r *retiredSet) reserve(e retiredEntry, n int) bool {
	if n <= 0 {
		return false
	}
	e.ids, e.files, e.paths, e.loaded = unplaced[:min(n, len(unplaced))], nil, nil, true
	if n > len(unplaced) {
		e.ids = make([]uint64, n)
	}
	return r.addEntry(e)
}

// unplaced stands for the ids reserve does not know yet (0: no source has
// that id, quiet.go), for most sessions (a session has a main log and a
// few subagent logs).
var unplaced [64]uint64

// place puts the id and file identity of a source of the session of hash
// h, reserved in memory by the load at hand, in its first free slot; it
// reports false when no such session is (or it has no free slot). An
// identity another retired log has already is left to it when yield is
// set, and taken otherwise: in a load in one piece the source placed last
// (the highest id) holds it, in a load in pieces the last piece's (two
// logs of one identity, both quiet, are hard links of one file, whose
// paths the walk meets as they were: which session the identity names
// matters only if one of them is moved between the load and the walk).
func (r *retiredSet) place(h uint64, id uint64, file watchers.FileID, yield bool) bool {
	ref, ok := r.byKey[h] // reserved in this load: in memory (see holdSpill)
	if !ok {
		return false
	}
	ids := r.ids[ref.at : ref.at+ref.n]
	at := slices.Index(ids, 0)
	if at < 0 {
		return false
	}
	ids[at] = id
	if !file.Known() {
		return true
	}
	// A load in pieces has spilled the sessions of the pieces before: the
	// identity may be one of theirs, and is then left or taken as here.
	_, taken := r.files[file]
	var spilled *retiredRun
	if !taken && r.spill != nil {
		_, spilled, taken, _ = r.spill.file(file)
	}
	if !(yield && taken) {
		r.files[file] = h
		if spilled != nil {
			spilled.shadow(file) // this session holds the identity now
		}
	}
	return true
}

// holdPath notes that a log at path belongs to the retired session of
// hash h, reserved, for a daemon that follows: news of the path takes the
// session up again. It reports false, noting nothing, when the path's
// hash is another retired session's.
func (r *retiredSet) holdPath(h uint64, path string) bool {
	ph := retiredPathHash(path)
	if o, taken := r.paths[ph]; taken && o != h {
		return false
	}
	if r.paths == nil {
		r.paths = map[uint64]uint64{}
	}
	r.paths[ph] = h
	return true
}

// pathHolder returns the hash of the retired session that holds path's
// hash, if one does.
func (r *retiredSet) pathHolder(path string) (uint64, bool) {
	h, ok := r.paths[retiredPathHash(path)]
	return h, ok
}

// agentIndex returns the index of an agent in agents, adding it; -1 when
// there are already as many as a ref can name.
func (r *retiredSet) agentIndex(name string) int {
	for i, a := range r.agents {
		if a.name == name {
			return i
		}
	}
	if len(r.agents) > 255 {
		return -1
	}
	r.agents = append(r.agents, retiredAgent{name: name})
	return len(r.agents) - 1
}

// retiredPathHash hashes the paths of retired logs; a variable so that
// tests can force collisions.
var retiredPathHash = func() func(string) uint64 {
	seed := maphash.MakeSeed()
	return func(path string) uint64 { return maphash.String(seed, path) }
}()

// lookup returns the source ids of the retired session whose key hashes as
// key does: that session's, unless two keys share a hash (the caller
// checks the records).
func (r *retiredSet) lookup(key string) (h uint64, ids []uint64, ok bool) {
	h = retiredKeyHash(key)
	ids, ok = r.idsOf(h)
	return h, ids, ok
}

// idsOf returns the source ids of the retired session of hash h. Those of
// a spilled session are read from the spill file (a scan stops when it
// cannot read them: retiredspill.go).
func (r *retiredSet) idsOf(h uint64) ([]uint64, bool) {
	ref, ok := r.byKey[h]
	if !ok {
		if r.spill != nil {
			if sr, ok, _ := r.spill.key(h); ok {
				return r.spill.ids(sr), true
			}
		}
		return nil, false
	}
	return r.ids[ref.at : ref.at+ref.n : ref.at+ref.n], true
}

// refOf returns the ref of the retired session of hash h, in memory or
// spilled (its at then indexes the run's ids).
func (r *retiredSet) refOf(h uint64) retiredRef {
	if ref, ok := r.byKey[h]; ok || r.spill == nil {
		return ref
	}
	sr, _, _ := r.spill.key(h)
	return sr.ref
}

// byFile returns the hash and source ids of the retired session a log of
// identity id belongs to.
func (r *retiredSet) byFile(id watchers.FileID) (h uint64, ids []uint64, ok bool) {
	if !id.Known() {
		return 0, nil, false
	}
	if h, ok = r.files[id]; !ok {
		if r.spill == nil {
			return 0, nil, false
		}
		if h, _, ok, _ = r.spill.file(id); !ok {
			return 0, nil, false
		}
	}
	ids, ok = r.idsOf(h)
	return h, ids, ok
}

// hasFile reports whether a retired log has identity id.
func (r *retiredSet) hasFile(id watchers.FileID) bool {
	if _, ok := r.files[id]; ok || r.spill == nil {
		return ok
	}
	_, _, ok, err := r.spill.file(id)
	return ok || err != nil
}

// held is how many of the retired session's sources, the last ones, held
// their paths when it was let go of.
func (r *retiredSet) held(h uint64) int { return int(r.refOf(h).held) }

// loaded reports whether the retired session of hash h was retired as it
// was loaded (reserve).
func (r *retiredSet) loaded(h uint64) bool { return r.refOf(h).flags&refLoaded != 0 }

// summed reports whether every log of the retired session of hash h had
// its whole prefix checked in this run.
func (r *retiredSet) summed(h uint64) bool { return r.refOf(h).flags&refSummed != 0 }

// byPath returns the hash and source ids of the retired session a log at
// path belongs to (or another whose path hashes alike: the caller checks
// the records).
func (r *retiredSet) byPath(path string) (h uint64, ids []uint64, ok bool) {
	if len(r.paths) == 0 {
		return 0, nil, false
	}
	if h, ok = r.paths[retiredPathHash(path)]; !ok {
		return 0, nil, false
	}
	if ids, ok = r.idsOf(h); !ok {
		delete(r.paths, retiredPathHash(path)) // left by a session tried once
	}
	return h, ids, ok
}

// remove forgets a session taken up again, and the identities and paths
// of its logs. Its ids stay in the shared slice until those of sessions
// taken up again are half of it (a following daemon takes sessions up
// and lets them go for as long as it runs).
func (r *retiredSet) remove(h uint64, files []watchers.FileID, paths []string) {
	ref, ok := r.byKey[h]
	if !ok {
		if r.spill == nil {
			return
		}
		sr, ok, _ := r.spill.key(h)
		if !ok {
			return
		}
		r.spill.gone(sr, h)
		r.uncount(sr.ref)
		for _, id := range files {
			r.forgetFile(id, h)
		}
		return // (a scan keeps no paths)
	}
	delete(r.byKey, h)
	r.uncount(ref)
	for _, id := range files {
		r.forgetFile(id, h)
	}
	for _, p := range paths {
		if ph := retiredPathHash(p); r.paths[ph] == h {
			delete(r.paths, ph)
		}
	}
	if r.dead += int(ref.n); r.dead > 1024 && r.dead > len(r.ids)/2 {
		r.compact()
	}
}

// forgetFile forgets that a log of identity id is the retired session h's,
// if the newest session to hold the identity is that one.
func (r *retiredSet) forgetFile(id watchers.FileID, h uint64) {
	if held, ok := r.files[id]; ok || r.spill == nil {
		if ok && held == h {
			delete(r.files, id)
		}
		return
	}
	if held, run, ok, _ := r.spill.file(id); ok && held == h {
		run.shadow(id)
	}
}

// uncount takes a session taken up again out of the counts.
func (r *retiredSet) uncount(ref retiredRef) {
	a := &r.agents[ref.agent]
	a.logs -= int(ref.logs)
	if ref.flags&refCounted != 0 {
		r.counted--
		a.sessions--
	}
}

// compact drops the ids of the sessions taken up again.
func (r *retiredSet) compact() {
	ids := make([]uint64, 0, len(r.ids)-r.dead)
	for h, ref := range r.byKey {
		at := len(ids)
		ids = append(ids, r.ids[ref.at:ref.at+ref.n]...)
		ref.at = uint32(at)
		r.byKey[h] = ref
	}
	r.ids, r.dead = ids, 0
}

// each calls fn with every retired session's hash and source ids (nil for
// a spilled one whose ids could not be read back: see idsOf).
func (r *retiredSet) each(fn func(h uint64, ids []uint64)) {
	for h, ref := range r.byKey {
		fn(h, r.ids[ref.at:ref.at+ref.n:ref.at+ref.n])
	}
	if r.spill != nil {
		r.spill.each(fn)
	}
}

// len is how many sessions are retired.
func (r *retiredSet) len() int {
	if r.spill != nil {
		return len(r.byKey) + r.spill.n
	}
	return len(r.byKey)
}
