package main

import (
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"path/filepath"
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
// What the plan keeps is a few hundred bytes an input (its path, its
// routing) and a session record per session; only the inputs that are
// databases (Cursor's SQLite files, OpenCode's) are read in the plan, as
// they hold many sessions at once: their records stay until written.

// buildPlan is what the plan found: every session, in the order its first
// input was met, and whether an input given on the command line failed.
type buildPlan struct {
	sessions []*plannedSession
	failed   bool
}

// plannedSession is one session of the inputs: the inputs that make it, in
// the order they are read, and the Codex child sessions whose records also
// form lanes of its map.
type plannedSession struct {
	agent    string
	native   string
	parts    []sessionPart
	children []*plannedSession
	lane     string // this session's lane id in its parent, if it is a child
	parent   string
}

// sessionPart is one input's share of a session: a log to parse, or the
// records a database input gave for the session.
type sessionPart struct {
	log    *plannedLog
	events []event.Event
}

// plannedLog is a log whose records are read when its session is built.
type plannedLog struct {
	path     string
	explicit bool          // given on the command line: its problems count
	agent    *agents.Agent // one value an agent, shared by its logs
	src      watchers.Source
	whole    bool // one JSON document (agents.ParseWhole), not lines
	// said is set once the log's problems were reported: a Codex child's
	// logs are read for its own map and for its parent's.
	said atomic.Bool
}

// planBuild is the cheap pass over the inputs. It reports each problem it
// finds on stderr (as the old single pass did) and carries on.
func planBuild(ctx context.Context, paths []string, agentName string, stderr io.Writer) *buildPlan {
	pl := &buildPlan{}
	bySession := map[string]*plannedSession{}
	get := func(agent, native string) *plannedSession {
		k := agent + "\x00" + native
		s, ok := bySession[k]
		if !ok {
			s = &plannedSession{agent: agent, native: native}
			bySession[k] = s
			pl.sessions = append(pl.sessions, s)
		}
		return s
	}
	byAgent := map[string]*agents.Agent{}
	seen := pathSet{}
	var beside agents.Beside // directory listings shared by the main logs' companions
	queue := rotationsFirst(paths)
	explicit := pathSet{}
	for _, p := range paths {
		explicit.add(p)
	}
	for len(queue) > 0 {
		path := queue[0]
		queue = queue[1:]
		abs, _ := filepath.Abs(path)
		if !seen.add(abs) {
			continue
		}
		given := explicit.has(path)
		report := func(err error) {
			if given {
				fmt.Fprintf(stderr, "agentmap build: %s: %v\n", path, err)
				pl.failed = true
			}
		}
		info, err := os.Stat(path)
		switch {
		case err != nil:
			report(describeOpenError(err))
			continue
		case info.IsDir():
			report(errors.New("is a directory; give the log files"))
			continue
		case info.Size() == 0:
			report(agents.ErrEmpty)
			continue
		}
		if (agentName == "auto" || agentName == "cursor") && (cursor.IsVSCDB(path) || cursor.IsStoreDB(path)) {
			read := cursor.ReadVSCDB
			if cursor.IsStoreDB(path) {
				read = cursor.ReadStoreDB
			}
			convs, err := read(ctx, path)
			if err != nil {
				report(err)
				continue
			}
			for _, c := range convs {
				s := get("cursor", c.NativeID)
				s.parts = append(s.parts, sessionPart{events: c.Events})
			}
			continue
		}
		if a, ok := agents.DBReader(agentName, path); ok {
			convs, err := a.ReadDB(ctx, path)
			if err != nil {
				report(err)
				continue
			}
			for _, c := range convs {
				s := get(a.Name, c.NativeID)
				s.parts = append(s.parts, sessionPart{events: c.Events})
			}
			continue
		}
		first, err := agents.FirstLine(path)
		if err != nil {
			report(describeOpenError(err))
			continue
		}
		a, ok := pickAgent(agentName, first)
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
			if errors.Is(err, codex.ErrNoSession) && agentName == "auto" {
				// Any pretty-printed JSON starts with "{": without a
				// session object it is no rollout, and no Codex file.
				err = errors.New(notALog + " (a JSON document without a Codex session)")
			}
			if err != nil {
				report(err)
				continue
			}
			s := get(src.Agent, src.Session)
			s.parts = append(s.parts, sessionPart{log: &plannedLog{path: path, explicit: given, whole: true}})
			continue
		}
		if !ok {
			report(errors.New(notALog + " (first line not recognised)"))
			continue
		}
		src, err := a.Identify(path, first)
		if err != nil {
			report(err)
			continue
		}
		if src.Session == "" {
			report(errors.New("no session id found"))
			continue
		}
		ap := byAgent[a.Name]
		if ap == nil {
			ap = &a
			byAgent[a.Name] = ap
		}
		s := get(a.Name, src.Session)
		s.parts = append(s.parts, sessionPart{log: &plannedLog{path: path, explicit: given, agent: ap, src: src}})
		if src.ParentSession != "" {
			s.parent, s.lane = src.ParentSession, src.ChildLane
		}
		if a.Companions != nil && src.Lane == "" {
			queue = append(queue, a.Companions(path, src, &beside)...)
		}
	}
	for _, s := range pl.sessions {
		if s.parent != "" {
			if p, ok := bySession[s.agent+"\x00"+s.parent]; ok {
				p.children = append(p.children, s)
			}
		}
	}
	return pl
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

func (s pathSet) has(p string) bool {
	_, ok := s[pathKey(p)]
	return ok
}

// read parses the session's logs, in plan order, and returns its records.
// ok is false when no input gave the session anything (every log failed to
// read past its first line): such a session is none. failed says that a
// log given on the command line could not be read. Problems go to stderr,
// once a log.
func (s *plannedSession) read(stderr io.Writer) (events []event.Event, ok, failed bool) {
	for _, part := range s.parts {
		if part.log == nil {
			events = append(events, part.events...)
			ok = true
			continue
		}
		l := part.log
		var evs []event.Event
		var err error
		var st agents.FileStats
		if l.whole {
			evs, _, err = agents.ParseWhole(l.path)
		} else {
			evs, st, err = agents.ParseFile(l.path, *l.agent, l.src, watchers.DefaultMaxLine)
		}
		first := l.said.CompareAndSwap(false, true)
		if err != nil {
			if l.explicit && first {
				fmt.Fprintf(stderr, "agentmap build: %s: %v\n", l.path, err)
			}
			failed = failed || l.explicit
			continue
		}
		if st.Skipped+st.Oversized > 0 && first {
			fmt.Fprintf(stderr, "agentmap build: %s: %d of %d lines skipped (unreadable or over the size cap)\n",
				l.path, st.Skipped+st.Oversized, st.Lines+st.Oversized)
		}
		events = append(events, evs...)
		ok = true
	}
	return events, ok, failed
}

// input reads the session and its children: everything its map is built
// from.
func (s *plannedSession) input(stderr io.Writer) (in *inputSession, ok, failed bool) {
	events, ok, failed := s.read(stderr)
	if !ok {
		return nil, false, failed
	}
	in = &inputSession{agent: s.agent, native: s.native, events: events, lane: s.lane, parent: s.parent}
	for _, c := range s.children {
		evs, cok, cfailed := c.read(stderr)
		failed = failed || cfailed
		if cok {
			in.children = append(in.children, &inputSession{agent: c.agent, native: c.native, events: evs, lane: c.lane, parent: c.parent})
		}
	}
	return in, true, failed
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
	pl := planBuild(ctx, paths, agentName, stderr)
	failed := pl.failed
	var out []*inputSession
	for _, p := range pl.sessions {
		in, ok, f := p.input(stderr)
		failed = failed || f
		if ok {
			out = append(out, in)
		}
	}
	return out, failed
}
