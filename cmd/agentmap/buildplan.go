package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sort"
	"sync/atomic"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/agents"
	"github.com/agentmap/agentmap/watchers/codex"
	"github.com/agentmap/agentmap/watchers/cursor"
)

// A build reads its inputs in two passes, so that its memory does not grow
// with the number of inputs. The plan is a cheap pass over the paths: a
// line log is identified by its first line alone (the identity the daemon
// routes by), which says its session, its lane and its parent; the
// subagent files of a main Claude or Gemini log are found beside it. Then
// each session is read (its logs parsed), built and written, one after
// the other on a small pool of workers, and dropped.
//
// What the plan keeps is about 105 bytes an input (BenchmarkBuildPlan), in
// a few flat blocks the garbage collector does not scan: every string
// (paths, their directories once each, session ids, lanes) in one byte
// table, a session's id pointing into its log's name when the name holds
// it, a record of 24 bytes a log and a session, linked by indexes, not
// pointers. The
// indexes by session and by path are needed while planning only and are
// dropped before the first session is read. Only the inputs that are
// databases (Cursor's SQLite files, OpenCode's) are read in the plan, as
// they hold many sessions at once: their records stay until their session
// is read.

// buildPlan is what the plan found: every session, in the order its first
// input was met, and whether an input given failed.
type buildPlan struct {
	strs     strtab
	dirs     []uint64 // strs refs of the inputs' directories, trailing separator included
	sessions []plannedSession
	family   []kin // the sessions that are lanes of a parent, or have such lanes
	logs     []plannedLog
	said     []atomic.Uint32 // a bit a log: its problems were reported (a Codex child's logs are read twice)
	db       [][]event.Event
	agents   []string // the agent names the sessions refer to by index
	failed   bool
	skipped  int // files found in directories that no agent wrote
	// unnamed counts the files a walk left out by their names, which are
	// none an agent gives its logs (logName).
	unnamed int
	// exclude is privacy.exclude of the build's config (nil: none);
	// keptOut counts the logs it kept out.
	exclude func(string) bool
	keptOut int

	// While planning only.
	dirIndex map[string]uint32
	queue    []queued
	nGiven   int // the first nGiven of queue were given (as paths, in a list, or found in a directory)
	nQueued  int // inputs given so far, those a build in pieces took from the queue included

	// pieces, when set, takes the inputs to a file once they are many
	// (buildpieces.go); keep then says which databases' sessions are this
	// piece's (nil: all).
	pieces *inputPieces
	keep   func(native string) bool
	preps  []preparedLog
	// beside, when set, is shared by the plans of a build's pieces: each
	// directory is listed for its flat subagent logs once, not in every
	// piece (nil: the plan's own).
	beside *agents.Beside
}

// queued is an input on its way through the plan.
type queued struct {
	path   uint64 // a path ref (see addPath)
	walked bool   // found in a directory given: what is not a log is skipped, not an error
	prep   int32  // 1 + its index in preps when a build in pieces identified it (buildpieces.go); 0 if not
	unsaid bool   // its problems are said by another piece (buildpieces.go)
}

// plannedSession is one session of the inputs: its parts (the inputs
// that make it, in the order they are read) and its place in a family.
type plannedSession struct {
	native      uint64 // strs ref
	first, last int32  // its parts: indexes in logs, chained by next; -1 for none
	family      int32  // index in family, -1 when it is no parent or child
	agent       uint8  // index in agents
}

// kin is a session's family: the parent whose map it is a lane of (a
// Codex child), and its own children (Codex child sessions whose records
// also form lanes of its map), chained by sibling.
type kin struct {
	parent, lane                       uint64 // strs refs; lane: its lane id in the parent
	firstChild, lastChild, nextSibling int32  // session indexes, -1 for none
}

// plannedLog is one input's share of a session: a log whose records are
// read when its session is built, or the records a database input gave.
type plannedLog struct {
	ref   uint64 // a path ref; for a database part, the index in db
	lane  uint64 // strs ref of the log's lane ("" for a session's own log)
	next  int32  // the session's next part, -1 for none
	kind  uint8
	flags uint8
}

const (
	partLines = iota // a line log (agents.ParseFile)
	partWhole        // one JSON document (agents.ParseWhole), not lines
	partDB           // records a database gave
)

const (
	logExplicit = 1 << iota // given, not found as a companion: its problems count
	logParented             // routed with the session's parent and lane (a Codex child rollout)
)

// strtab keeps many short strings in one block. A string is a ref: its
// offset in the block (the high 36 bits: 64 GiB) and its length (the low
// 28 bits: 256 MiB, more than any path, first line or session id holds;
// routable refuses a longer id); 0 is "". A ref may point into the bytes
// of another string: a session id into its log's file name.
type strtab struct{ b []byte }

const (
	refLenBits = 28
	maxRefLen  = 1<<refLenBits - 1
)

func mkref(off, n int) uint64 { return uint64(off)<<refLenBits | uint64(n) }

func (t *strtab) add(s string) uint64 {
	if s == "" {
		return 0
	}
	off := len(t.b)
	t.b = append(t.b, s...)
	return mkref(off, len(s))
}

func (t *strtab) bytes(r uint64) []byte {
	off, n := r>>refLenBits, r&maxRefLen
	return t.b[off : off+n]
}

func (t *strtab) get(r uint64) string { return string(t.bytes(r)) }

// addPath keeps a path as its directory (kept once for all its files) and
// its name.
func (pl *buildPlan) addPath(p string) uint64 {
	i := len(p) - 1
	for i >= 0 && !os.IsPathSeparator(p[i]) {
		i--
	}
	return pl.addIn(pl.dir(p[:i+1]), p[i+1:])
}

// dir returns the index of a directory (with its trailing separator).
func (pl *buildPlan) dir(d string) uint32 {
	i, ok := pl.dirIndex[d]
	if !ok {
		if pl.dirIndex == nil {
			pl.dirIndex = map[string]uint32{}
		}
		i = uint32(len(pl.dirs))
		pl.dirs = append(pl.dirs, pl.strs.add(d))
		pl.dirIndex[d] = i
	}
	return i
}

// addIn keeps the path of the file name in the directory of index dir: a
// ref to the directory's index (a uvarint) followed by the name.
func (pl *buildPlan) addIn(dir uint32, name string) uint64 {
	off := len(pl.strs.b)
	pl.strs.b = binary.AppendUvarint(pl.strs.b, uint64(dir))
	pl.strs.b = append(pl.strs.b, name...)
	return mkref(off, len(pl.strs.b)-off)
}

// pathParts returns the directory index and the name of a path ref.
func (pl *buildPlan) pathParts(r uint64) (uint32, []byte) {
	b := pl.strs.bytes(r)
	d, w := binary.Uvarint(b)
	return uint32(d), b[w:]
}

func (pl *buildPlan) path(r uint64) string {
	d, name := pl.pathParts(r)
	dir := pl.strs.bytes(pl.dirs[d])
	b := make([]byte, 0, len(dir)+len(name))
	return string(append(append(b, dir...), name...))
}

// within returns a ref of s: into the file name of the path ref when the
// name holds s (a Claude log is named after its session, a Codex rollout
// ends with it), else a string of its own.
func (pl *buildPlan) within(path uint64, s string) uint64 {
	if path != 0 {
		b := pl.strs.bytes(path)
		_, w := binary.Uvarint(b)
		if i := bytes.Index(b[w:], []byte(s)); i >= 0 && s != "" {
			return mkref(int(path>>refLenBits)+w+i, len(s))
		}
	}
	return pl.strs.add(s)
}

// routable refuses what the plan cannot keep: an id longer than a ref
// holds (no agent writes one; a crafted file might).
func routable(src watchers.Source) error {
	for _, s := range []string{src.Session, src.Lane, src.ParentSession, src.ChildLane} {
		if len(s) > maxRefLen {
			return fmt.Errorf("a session or lane id of %d bytes: too long to be one", len(s))
		}
	}
	return nil
}

func (pl *buildPlan) agent(name string) uint8 {
	for i, a := range pl.agents {
		if a == name {
			return uint8(i)
		}
	}
	pl.agents = append(pl.agents, name)
	return uint8(len(pl.agents) - 1)
}

// sessionIndex finds a session by agent and native id while planning: a
// 64-bit hash of the two, checked against the session found; sessions
// whose hash another already has are kept by name.
type sessionIndex struct {
	pl     *buildPlan
	byHash map[uint64]int32
	clash  map[string]int32
}

var sessionSeed = maphash.MakeSeed()

// sessionHash is the hash of the index (a variable: tests make every
// session's the same).
var sessionHash = func(agent uint8, native string) uint64 {
	return maphash.String(sessionSeed, native) ^ uint64(agent)
}

func (x *sessionIndex) find(agent uint8, native string) (int32, bool) {
	h := sessionHash(agent, native)
	i, ok := x.byHash[h]
	if !ok {
		return -1, false
	}
	if s := &x.pl.sessions[i]; s.agent == agent && string(x.pl.strs.bytes(s.native)) == native {
		return i, true
	}
	i, ok = x.clash[x.pl.agents[agent]+"\x00"+native]
	return i, ok
}

// get returns the session of agent and native, adding it when new (its
// id kept in the name of the log at path, when the name holds it).
func (x *sessionIndex) get(agentName, native string, path uint64) int32 {
	agent := x.pl.agent(agentName)
	if i, ok := x.find(agent, native); ok {
		return i
	}
	i := int32(len(x.pl.sessions))
	x.pl.sessions = append(x.pl.sessions, plannedSession{native: x.pl.within(path, native), first: -1, last: -1, family: -1, agent: agent})
	h := sessionHash(agent, native)
	if _, taken := x.byHash[h]; taken {
		if x.clash == nil {
			x.clash = map[string]int32{}
		}
		x.clash[agentName+"\x00"+native] = i
	} else {
		x.byHash[h] = i
	}
	return i
}

// addPart appends a part to session s.
func (pl *buildPlan) addPart(s int32, part plannedLog) {
	part.next = -1
	i := int32(len(pl.logs))
	pl.logs = append(pl.logs, part)
	ss := &pl.sessions[s]
	if ss.last < 0 {
		ss.first = i
	} else {
		pl.logs[ss.last].next = i
	}
	ss.last = i
}

// kinOf returns the family record of session s, adding one.
func (pl *buildPlan) kinOf(s int32) *kin {
	ss := &pl.sessions[s]
	if ss.family < 0 {
		ss.family = int32(len(pl.family))
		pl.family = append(pl.family, kin{firstChild: -1, lastChild: -1, nextSibling: -1})
	}
	return &pl.family[ss.family]
}

// The collector through a build. While the build plans, its heap is the
// plan, flat blocks without pointers that a collection hardly has to
// scan, and short-lived garbage around it (file names, first lines):
// collecting four times as often as GOGC's default (planningGCPercent)
// costs little CPU, and the heap peaks at a quarter above the plan
// instead of twice it. Then sessions are built beside the plan, which
// stays: the heap is let grow by as much as is live (the default) while
// that is under buildHeadroom, and by buildHeadroom (at least a quarter)
// above that, rather than by the whole plan again. A GOGC or GOMEMLIMIT
// in the environment is the user's choice and is left alone.
const (
	planningGCPercent = 25
	buildHeadroom     = 16 << 20
)

// buildGC paces the collector through one build.
type buildGC struct {
	orig int
	on   bool
}

func paceBuildGC() *buildGC {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return &buildGC{}
	}
	return &buildGC{orig: debug.SetGCPercent(planningGCPercent), on: true}
}

// planned ends the planning: the indexes of the plan are garbage by now,
// and a collection measures what stays.
func (g *buildGC) planned() {
	if !g.on {
		return
	}
	runtime.GC()
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	percent := 100
	if s[0].Value.Kind() == metrics.KindUint64 && s[0].Value.Uint64() > 0 {
		percent = int(min(100, max(planningGCPercent, buildHeadroom*100/s[0].Value.Uint64())))
	}
	debug.SetGCPercent(percent)
}

// planning paces the collector for the plan of another piece of a build
// (buildpieces.go).
func (g *buildGC) planning() {
	if g.on {
		debug.SetGCPercent(planningGCPercent)
	}
}

// done gives the collector back its setting.
func (g *buildGC) done() {
	if g.on {
		debug.SetGCPercent(g.orig)
		g.on = false
	}
}

// planBuild is the cheap pass over the inputs queued (buildPlan.give, readInputList).
// It reports each problem it finds on stderr and carries on.
func planBuild(ctx context.Context, pl *buildPlan, agentName string, stderr io.Writer) {
	index := &sessionIndex{pl: pl, byHash: map[uint64]int32{}}
	seen := pathSet{}
	beside := pl.beside // directory listings shared by the main logs' companions
	if beside == nil {
		beside = &agents.Beside{}
	}
	pl.rotationsFirst()
	// A file under two names (a hard link, a symbolic link to it) is one
	// input, read under its first: read twice, every call of its session
	// would count twice. A link counts by the path it leads to; a file of
	// more than one hard link by its identity (few files have one: the
	// set stays small whatever the number of inputs).
	links := map[watchers.FileID]struct{}{}
	realDirs := map[string]string{} // a directory's path with no link in it, once each
	for qi := 0; qi < len(pl.queue); qi++ {
		in := pl.queue[qi]
		path := pl.path(in.path)
		abs, _ := filepath.Abs(path)
		li, lerr := os.Lstat(path)
		if lerr == nil && li.Mode()&fs.ModeSymlink != 0 {
			if real, err := filepath.EvalSymlinks(abs); err == nil {
				abs = real
			}
			li, lerr = os.Stat(path) // what it leads to, for its links below
		} else {
			dir := filepath.Dir(abs)
			real, ok := realDirs[dir]
			if !ok {
				var err error
				if real, err = filepath.EvalSymlinks(dir); err != nil {
					real = dir
				}
				realDirs[dir] = real
			}
			abs = filepath.Join(real, filepath.Base(abs))
		}
		if !seen.add(abs) {
			continue
		}
		if lerr == nil && li.Mode().IsRegular() && watchers.HardLinks(li) > 1 {
			if id := watchers.StatID(li); id.Known() {
				if _, dup := links[id]; dup {
					continue
				}
				links[id] = struct{}{}
			}
		}
		given := qi < pl.nGiven && !in.unsaid
		// report says a problem of a given input; one found in a
		// directory that is no log of any agent is only counted.
		report := func(err error, notALog bool) {
			switch {
			case !given:
			case in.walked && notALog:
				pl.skipped++
			default:
				fmt.Fprintf(stderr, "agentmap build: %s: %v\n", path, err)
				pl.failed = true
			}
		}
		var flags uint8
		if given {
			flags = logExplicit
		}
		// An input a build in pieces identified as it was given is not
		// read again here (buildpieces.go).
		a, src, prepared := pl.prepared(in)
		if !prepared {
			info, err := os.Stat(path)
			switch {
			case err != nil:
				report(describeOpenError(err), errors.Is(err, os.ErrNotExist))
				continue
			case info.IsDir():
				// A directory met here is a companion's or a symbolic link's
				// found in a walk: directories given are walked as they are given (buildPlan.give).
				report(errors.New("is a directory"), true)
				continue
			case info.Size() == 0:
				report(agents.ErrEmpty, true)
				continue
			}
			if (agentName == "auto" || agentName == "cursor") && (cursor.IsVSCDB(path) || cursor.IsStoreDB(path)) {
				read := cursor.ReadVSCDB
				if cursor.IsStoreDB(path) {
					read = cursor.ReadStoreDB
				}
				convs, err := read(ctx, path)
				if err != nil {
					report(err, false)
					continue
				}
				for _, c := range convs {
					pl.addConversation(index, "cursor", c.NativeID, c.Events, report)
				}
				continue
			}
			if a, ok := agents.DBReader(agentName, path); ok {
				convs, err := a.ReadDB(ctx, path)
				if err != nil {
					report(err, false)
					continue
				}
				for _, c := range convs {
					pl.addConversation(index, a.Name, c.NativeID, c.Events, report)
				}
				continue
			}
			first, err := agents.FirstLine(path)
			if err != nil {
				report(describeOpenError(err), false)
				continue
			}
			var ok bool
			a, ok = pickAgent(agentName, first)
			if !ok && agentName == "auto" && !agents.LooksLikeWholeJSON(first) {
				// A garbage first line: the agent is the one the next lines
				// name; the line is counted as skipped, as the daemon does.
				a, ok = agents.DetectFile(path)
			}
			if !ok && (agentName == "auto" || a.Whole) && agents.LooksLikeWholeJSON(first) {
				// Its session is in the document: read it now for that, and
				// again when the session is built (these are rare, and one
				// document each).
				_, src, err := agents.ParseWhole(path)
				noSession := errors.Is(err, codex.ErrNoSession) && agentName == "auto"
				if noSession {
					// Any pretty-printed JSON starts with "{": without a
					// session object it is no rollout, and no Codex file.
					err = errors.New(notALog + " (a JSON document without a Codex session)")
				}
				if err == nil {
					err = routable(src)
				}
				if err != nil {
					report(err, noSession)
					continue
				}
				pl.addPart(index.get(src.Agent, src.Session, in.path), plannedLog{ref: in.path, kind: partWhole, flags: flags})
				continue
			}
			if !ok {
				report(errors.New(notALog+" (first line not recognised)"), true)
				continue
			}
			src, err = a.Identify(path, first)
			if err != nil {
				report(err, false)
				continue
			}
		}
		err := routable(src)
		if err != nil {
			report(err, false)
			continue
		}
		if src.Session == "" {
			report(errors.New("no session id found"), false)
			continue
		}
		if pl.exclude != nil {
			// Judged alone, as the daemon judges each log: a main log
			// kept out still has its subagent logs looked at.
			if cwd, _ := agents.SniffCWD(path); cwd != "" && pl.exclude(cwd) {
				pl.keptOut++
				if a.Companions != nil && src.Lane == "" {
					for _, c := range a.Companions(path, src, beside) {
						pl.queue = append(pl.queue, queued{path: pl.addPath(c)})
					}
				}
				continue
			}
		}
		s := index.get(a.Name, src.Session, in.path)
		if src.ParentSession != "" {
			k := pl.kinOf(s)
			k.parent, k.lane = pl.strs.add(src.ParentSession), pl.strs.add(src.ChildLane)
			flags |= logParented
		}
		pl.addPart(s, plannedLog{ref: in.path, lane: pl.strs.add(src.Lane), kind: partLines, flags: flags})
		if a.Companions != nil && src.Lane == "" {
			for _, c := range a.Companions(path, src, beside) {
				pl.queue = append(pl.queue, queued{path: pl.addPath(c)})
			}
		}
	}
	for i := range pl.sessions {
		s := &pl.sessions[i]
		if s.family < 0 || pl.family[s.family].parent == 0 {
			continue
		}
		p, ok := index.find(s.agent, pl.strs.get(pl.family[s.family].parent))
		if !ok {
			continue
		}
		pk := pl.kinOf(p)
		if pk.lastChild < 0 {
			pk.firstChild = int32(i)
		} else {
			pl.family[pl.sessions[pk.lastChild].family].nextSibling = int32(i)
		}
		pk.lastChild = int32(i)
	}
	pl.said = make([]atomic.Uint32, (len(pl.logs)+31)/32)
	pl.queue, pl.dirIndex = nil, nil
}

// addConversation adds the records a database gave for one of its
// sessions, unless they are another piece's (keep).
func (pl *buildPlan) addConversation(index *sessionIndex, agent, native string, events []event.Event, report func(error, bool)) {
	if err := routable(watchers.Source{Session: native}); err != nil {
		report(err, false)
		return
	}
	if pl.keep == nil || pl.keep(native) {
		pl.addRecords(index.get(agent, native, 0), events)
	}
}

// addRecords adds the records a database gave for session s.
func (pl *buildPlan) addRecords(s int32, events []event.Event) {
	pl.addPart(s, plannedLog{ref: uint64(len(pl.db)), kind: partDB})
	pl.db = append(pl.db, events)
}

// rotationsFirst orders the inputs so that the rotated copies of a log
// (log.2, log.1) come just before it, oldest first, wherever they were
// given: the halves of a copy-truncate rotation then read as one session
// in the order the daemon reads them. Inputs without a rotated copy among
// them keep their place.
func (pl *buildPlan) rotationsFirst() {
	given := pl.queue[:pl.nGiven]
	rotated := map[string]bool{} // the logs with a rotated copy given
	for _, in := range given {
		if _, name := pl.pathParts(in.path); hasRotation(name) {
			base, _ := watchers.Rotation(pl.path(in.path))
			rotated[base] = true
		}
	}
	if len(rotated) == 0 {
		return
	}
	// Each input's group is its place, or that of the first input of its
	// log when the log has rotated copies.
	group := make([]int, len(given))
	first := map[string]int{}
	for i, in := range given {
		group[i] = i
		base, _ := watchers.Rotation(pl.path(in.path))
		if rotated[base] {
			if g, ok := first[base]; ok {
				group[i] = g
			} else {
				first[base] = i
			}
		}
	}
	order := make([]int, len(given))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(x, y int) bool {
		i, j := order[x], order[y]
		if group[i] != group[j] {
			return group[i] < group[j]
		}
		return watchers.RotationOrder(pl.path(given[i].path), pl.path(given[j].path)) < 0
	})
	sorted := make([]queued, len(given))
	for k, i := range order {
		sorted[k] = given[i]
	}
	copy(given, sorted)
}

// hasRotation says whether a file name ends in a rotation number (.1).
func hasRotation(name []byte) bool {
	_, n := watchers.Rotation(string(name))
	return n > 0
}

// pathSet is a set of paths kept as 128-bit hashes: a few dozen bytes a
// path, not the path, for the inputs met (a collision, at 2^-128 a pair,
// is not a concern).
type pathSet map[[2]uint64]struct{}

var pathSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

func pathKey(p string) [2]uint64 {
	return [2]uint64{maphash.String(pathSeeds[0], p), maphash.String(pathSeeds[1], p)}
}

// add adds p and reports whether it was new.
func (s pathSet) add(p string) bool {
	k := pathKey(p)
	if _, ok := s[k]; ok {
		return false
	}
	s[k] = struct{}{}
	return true
}

// read parses the logs of session i, in plan order, and returns its
// records. ok is false when no input gave the session anything (every log
// failed to read past its first line): such a session is none. failed
// says that a log given could not be read. Problems go to stderr, once a
// log. The records a database gave are let go of once read, unless the
// session is a lane of another, whose map reads them too.
func (pl *buildPlan) read(i int32, stderr io.Writer) (events []event.Event, ok, failed bool) {
	s := &pl.sessions[i]
	name := pl.agents[s.agent]
	child := s.family >= 0 && pl.family[s.family].parent != 0
	for p := s.first; p >= 0; p = pl.logs[p].next {
		l := &pl.logs[p]
		if l.kind == partDB {
			events = append(events, pl.db[l.ref]...)
			if !child {
				pl.db[l.ref] = nil
			}
			ok = true
			continue
		}
		path := pl.path(l.ref)
		var evs []event.Event
		var err error
		var st agents.FileStats
		if l.kind == partWhole {
			evs, _, err = agents.ParseWhole(path)
		} else {
			a, _ := agents.ByName(name)
			src := watchers.Source{Agent: name, Session: pl.strs.get(s.native), Lane: pl.strs.get(l.lane)}
			if l.flags&logParented != 0 {
				k := &pl.family[s.family]
				src.ParentSession, src.ChildLane = pl.strs.get(k.parent), pl.strs.get(k.lane)
			}
			evs, st, err = agents.ParseFile(path, a, src, watchers.DefaultMaxLine)
		}
		explicit := l.flags&logExplicit != 0
		first := pl.said[p/32].Or(1<<(p%32))&(1<<(p%32)) == 0
		if err != nil {
			if explicit && first {
				fmt.Fprintf(stderr, "agentmap build: %s: %v\n", path, err)
			}
			failed = failed || explicit
			continue
		}
		if st.Skipped+st.Oversized > 0 && first {
			fmt.Fprintf(stderr, "agentmap build: %s: %d of %d lines skipped (unreadable or over the size cap)\n",
				path, st.Skipped+st.Oversized, st.Lines+st.Oversized)
		}
		events = append(events, evs...)
		ok = true
	}
	return events, ok, failed
}

// input reads session i and its children: everything its map is built
// from.
func (pl *buildPlan) input(i int32, stderr io.Writer) (in *inputSession, ok, failed bool) {
	events, ok, failed := pl.read(i, stderr)
	if !ok {
		return nil, false, failed
	}
	in = pl.inputSession(i, events)
	if f := pl.sessions[i].family; f >= 0 {
		for c := pl.family[f].firstChild; c >= 0; c = pl.family[pl.sessions[c].family].nextSibling {
			evs, cok, cfailed := pl.read(c, stderr)
			failed = failed || cfailed
			if cok {
				in.children = append(in.children, pl.inputSession(c, evs))
			}
		}
	}
	return in, true, failed
}

func (pl *buildPlan) inputSession(i int32, events []event.Event) *inputSession {
	s := &pl.sessions[i]
	in := &inputSession{agent: pl.agents[s.agent], native: pl.strs.get(s.native), events: events}
	if s.family >= 0 {
		k := &pl.family[s.family]
		in.parent, in.lane = pl.strs.get(k.parent), pl.strs.get(k.lane)
	}
	return in
}

// inputSession is one session read from the inputs: its own records and the
// lanes that belong to it.
type inputSession struct {
	agent  string
	native string
	events []event.Event
	// children are Codex child sessions whose records also form lanes here.
	children []*inputSession
	lane     string // this session's lane id in its parent, if it is a child
	parent   string
}

func (s *inputSession) all() []event.Event {
	own := agents.EnsureSession(s.agent, s.native, s.events)
	if len(s.children) == 0 {
		return own
	}
	all := append([]event.Event(nil), own...)
	for _, c := range s.children {
		all = append(all, builder.AsLane(c.events, c.lane)...)
	}
	return all
}

// collect reads every session of the inputs at once: the plan, then every
// session read. Tests and audits use it to see all sessions together; the
// build itself streams (cmdBuild).
func collect(ctx context.Context, paths []string, agentName string, stderr io.Writer) ([]*inputSession, bool) {
	pl := &buildPlan{}
	pl.given(paths)
	planBuild(ctx, pl, agentName, stderr)
	failed := pl.failed
	var out []*inputSession
	for i := range pl.sessions {
		in, ok, f := pl.input(int32(i), stderr)
		failed = failed || f
		if ok {
			out = append(out, in)
		}
	}
	return out, failed
}
