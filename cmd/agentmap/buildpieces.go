package main

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"io"
	"os"
	"runtime"
	"slices"

	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/agents"
	"github.com/agentmap/agentmap/watchers/cursor"
	"github.com/agentmap/agentmap/watchers/opencode"
)

// A build into a directory of more inputs than piecesFrom is made in
// pieces, so that its memory does not grow with the number of inputs: the
// plan of a whole list kept some 105 bytes an input, 40 MB of heap for
// 200,000 sessions. As the inputs are given, each is routed by the session
// its first line names (a Codex child by its parent's, so that a family is
// never split; a Gemini subagent file that names a session of its own, by
// its main log's) and written, with that session's hash and, for a line
// log, the agent and ids its first line names, to a file of the build's
// own (unlinked at once where the system allows it; paths and ids are all
// there is in it). Then the inputs are planned and built one piece at a
// time: the piece of an input is its session's (its family root's) hash
// modulo the number of pieces, which keeps every log of a session in one
// piece, and each piece holds about piecesFrom inputs; a line log
// identified as it was given is not read again by the plan. A database
// input (Cursor's, OpenCode's store), which holds many sessions, is read
// in every piece, which keeps the sessions of its own; its problems are
// reported once, by the first piece. OpenCode's storage session files,
// one a session, go to their session's piece. An input whose session is
// not found this way (unreadable, not a log) goes to the first piece,
// whose plan reports it as a plan of the whole list would.
//
// What differs from a build in one plan is the order: sessions are
// written piece by piece, each piece in the order its inputs were given.
// What stays through the whole build is, for each Codex child session, its
// parent's hash (16 bytes and a map entry), so that its piece is its
// family's (a Gemini subagent file of its own session too), and for each directory with main logs in it the names of its
// flat subagent logs (the old layout's agent-*.jsonl) and the sessions
// they name, which each piece would otherwise list again.

// piecesFrom is how many inputs make a build go in pieces, and about how
// many each piece has; a variable so that tests can make small pieces.
var piecesFrom = 16384

// piecesMade, when set (by tests), is told how many pieces a build in
// pieces had.
var piecesMade func(pieces int)

// inputPieces is the file of a build's inputs, routed.
type inputPieces struct {
	f       *os.File
	w       *bufio.Writer
	agent   string            // --agent
	parents map[uint64]uint64 // a Codex child session's hash → its parent's (pieceOf)
	n       int               // inputs written
	err     error             // the first error writing the file
	path    string            // where the file is, when it could not be unlinked
}

// Flags of an input in the file.
const (
	pieceWalked   = 1 << iota // found in a directory given
	pieceDB                   // a database: read in every piece
	piecePrepared             // a line log identified: its agent and source follow its path
)

// preparedLog is a line log a build in pieces identified as it was given
// (routeInput), so that the plan of its piece does not read it again: its
// agent (an index in the plan's agents) and what its first line says, as
// strs refs.
type preparedLog struct {
	agent                            uint8
	session, lane, parent, childLane uint64
}

// prepared returns the agent and source of an input a build in pieces
// identified.
func (pl *buildPlan) prepared(in queued) (agents.Agent, watchers.Source, bool) {
	if in.prep == 0 {
		return agents.Agent{}, watchers.Source{}, false
	}
	p := pl.preps[in.prep-1]
	a, _ := agents.ByName(pl.agents[p.agent])
	return a, watchers.Source{Agent: a.Name, Session: pl.strs.get(p.session), Lane: pl.strs.get(p.lane),
		ParentSession: pl.strs.get(p.parent), ChildLane: pl.strs.get(p.childLane)}, true
}

var pieceSeed = maphash.MakeSeed()

func pieceHash(native string) uint64 { return maphash.String(pieceSeed, native) }

func newInputPieces(agent string) *inputPieces { return &inputPieces{agent: agent} }

// take writes the inputs queued to the file and empties the plan's queue
// and tables.
func (p *inputPieces) take(pl *buildPlan) {
	if p.err == nil && p.f == nil {
		p.err = p.open()
	}
	for _, in := range pl.queue {
		if p.err != nil {
			break
		}
		path := pl.path(in.path)
		var flags uint8
		if in.walked {
			flags |= pieceWalked
		}
		r := routeInput(path, p.agent)
		h := pieceHash(r.src.Session)
		switch {
		case r.db:
			flags |= pieceDB
		case r.src.Session == "":
			h = 0
		case r.src.ParentSession != "":
			if p.parents == nil {
				p.parents = map[uint64]uint64{}
			}
			p.parents[h] = pieceHash(r.src.ParentSession)
		}
		if r.agent != "" {
			flags |= piecePrepared
			p.companionsAlong(path, r)
		}
		var head [9]byte
		binary.LittleEndian.PutUint64(head[:8], h)
		head[8] = flags
		p.w.Write(head[:])
		fields := []string{path}
		if r.agent != "" {
			fields = append(fields, r.agent, r.src.Session, r.src.Lane, r.src.ParentSession, r.src.ChildLane)
		}
		for _, f := range fields {
			p.w.Write(binary.AppendUvarint(head[:0], uint64(len(f))))
			p.w.WriteString(f)
		}
		p.n++
	}
	if p.err == nil {
		// (A bufio.Writer keeps its first error: each write needs no check.)
		if _, err := p.w.Write(nil); err != nil {
			p.err = err
		}
	}
	pl.queue, pl.nGiven = pl.queue[:0], 0
	pl.strs.b, pl.dirs, pl.dirIndex = pl.strs.b[:0], pl.dirs[:0], nil
}

func (p *inputPieces) open() error {
	f, err := os.CreateTemp("", "agentmap-build-*.inputs")
	if err != nil {
		return fmt.Errorf("a build of many inputs keeps their list in a file, which could not be made: %w", err)
	}
	p.f, p.w = f, bufio.NewWriterSize(f, 256<<10)
	if runtime.GOOS != "windows" && os.Remove(f.Name()) == nil {
		return nil // unlinked: nothing is left behind, however the build ends
	}
	p.path = f.Name()
	return nil
}

// close removes the file.
func (p *inputPieces) close() {
	if p.f != nil {
		p.f.Close()
		if p.path != "" {
			os.Remove(p.path)
		}
	}
}

// count is how many pieces the build has.
func (p *inputPieces) count() int { return max(1, (p.n+piecesFrom-1)/piecesFrom) }

// pieceOf is the piece of the session of hash h: its family's root's. A
// cycle of parents, which no agent writes, has the smallest hash in it
// for a root, so that every session of it lands in one piece.
func (p *inputPieces) pieceOf(h uint64, pieces int) int {
	var path []uint64 // (families are shallow: a child, now and then a grandchild)
	for {
		parent, ok := p.parents[h]
		if !ok {
			break
		}
		if at := slices.Index(path, h); at >= 0 {
			h = slices.Min(path[at:])
			break
		}
		path = append(path, h)
		h = parent
	}
	if h == 0 {
		return 0
	}
	return int(h % uint64(pieces))
}

// plan is the plan of piece k: its inputs and the databases, in the order
// they were given.
func (p *inputPieces) plan(k, pieces int, exclude func(string) bool) (*buildPlan, error) {
	if err := p.w.Flush(); err != nil {
		return nil, err
	}
	if _, err := p.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	pl := &buildPlan{exclude: exclude, keep: func(native string) bool { return p.pieceOf(pieceHash(native), pieces) == k }}
	r := bufio.NewReaderSize(p.f, 256<<10)
	var head [9]byte
	var fields [6]string
	var field []byte
	for range p.n {
		if _, err := io.ReadFull(r, head[:]); err != nil {
			return nil, err
		}
		h, flags := binary.LittleEndian.Uint64(head[:8]), head[8]
		n := 1
		if flags&piecePrepared != 0 {
			n = 6
		}
		// Another piece's input is stepped over, not decoded.
		mine := flags&pieceDB != 0 || p.pieceOf(h, pieces) == k
		for i := range n {
			l, err := binary.ReadUvarint(r)
			if err != nil {
				return nil, err
			}
			if !mine {
				if _, err := r.Discard(int(l)); err != nil {
					return nil, err
				}
				continue
			}
			field = slices.Grow(field[:0], int(l))[:l]
			if _, err := io.ReadFull(r, field); err != nil {
				return nil, err
			}
			fields[i] = string(field)
		}
		if !mine {
			continue
		}
		// A database after the first piece is read for its sessions of
		// this piece; its problems are the first piece's to say.
		in := queued{path: pl.addPath(fields[0]), walked: flags&pieceWalked != 0, unsaid: flags&pieceDB != 0 && k > 0}
		if flags&piecePrepared != 0 {
			pl.preps = append(pl.preps, preparedLog{agent: pl.agent(fields[1]), session: pl.within(in.path, fields[2]),
				lane: pl.strs.add(fields[3]), parent: pl.strs.add(fields[4]), childLane: pl.strs.add(fields[5])})
			in.prep = int32(len(pl.preps))
		}
		pl.queue = append(pl.queue, in)
	}
	pl.nGiven = len(pl.queue)
	return pl, nil
}

// companionsAlong puts the companions of a main log that name sessions of
// their own (Gemini's subagent files outside a chats directory) in its
// family, so that they are in its piece: the plan of its piece finds them
// as companions, and in another piece one given too would be built twice.
// A Claude log's companions name its session (the flat ones are chosen by
// it, the nested ones take it from their directory): they are not read
// here, which would list every project directory again.
func (p *inputPieces) companionsAlong(path string, r route) {
	a, _ := agents.ByName(r.agent)
	if a.Companions == nil || r.src.Lane != "" || a.Name == "claude" {
		return
	}
	for _, c := range a.Companions(path, r.src, nil) {
		cr := routeInput(c, a.Name)
		if cr.src.Session != "" && cr.src.Session != r.src.Session {
			if p.parents == nil {
				p.parents = map[uint64]uint64{}
			}
			p.parents[pieceHash(cr.src.Session)] = pieceHash(r.src.Session)
		}
	}
}

// route is what a build in pieces finds of an input as it is given: the
// agent and source of a line log (agent "" when it is none, or was not
// identified so), the session of a single-document log, or that it is a
// database, which holds many sessions.
type route struct {
	agent string
	src   watchers.Source
	db    bool
}

// routeInput finds an input's session as the plan does (planBuild). An
// input whose session is not found so has none: the plan of the first
// piece reads it again and reports what it is.
func routeInput(path, agentName string) route {
	info, err := os.Stat(path)
	if err != nil || info.IsDir() || info.Size() == 0 {
		return route{}
	}
	if (agentName == "auto" || agentName == "cursor") && (cursor.IsVSCDB(path) || cursor.IsStoreDB(path)) {
		return route{db: true}
	}
	if a, ok := agents.DBReader(agentName, path); ok {
		if a.Name == "opencode" && opencode.IsStorageSession(path) {
			// A session of OpenCode's storage, one a file: its own piece
			// (a child session's file gives nothing; its root's reads it).
			if id, err := opencode.StorageSessionID(path); err == nil {
				return route{src: watchers.Source{Session: id}}
			}
		}
		return route{db: true}
	}
	first, err := agents.FirstLine(path)
	if err != nil {
		return route{}
	}
	a, ok := pickAgent(agentName, first)
	if !ok && agentName == "auto" && !agents.LooksLikeWholeJSON(first) {
		a, ok = agents.DetectFile(path)
	}
	if !ok && (agentName == "auto" || a.Whole) && agents.LooksLikeWholeJSON(first) {
		_, src, err := agents.ParseWhole(path)
		if err != nil {
			return route{}
		}
		return route{src: watchers.Source{Session: src.Session, ParentSession: src.ParentSession}}
	}
	if !ok {
		return route{}
	}
	src, err := a.Identify(path, first)
	if err != nil || src.Session == "" || routable(src) != nil {
		return route{}
	}
	return route{agent: a.Name, src: src}
}

// sessionOfPieces is the native id build --session names in a build in
// pieces (sessionMatch): a prefix can be told unique only once every piece
// was looked at, and a piece built meanwhile might have been another
// session's. So the pieces are planned once for their sessions alone (a
// plan reads first lines, not logs) before any is built, unless the id
// itself turns up first. Their problems are said by the build that follows.
// An id that no session has or starts with is left as it was: the build
// reports the inputs' problems and then that it found no such session.
func sessionOfPieces(ctx context.Context, p *inputPieces, pieces int, exclude func(string) bool, agentName, want string, stderr io.Writer) (string, int) {
	m := newSessionMatch(want)
	beside := &agents.Beside{}
	for k := 0; k < pieces && !m.exact; k++ {
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "agentmap build: stopped before any map was written")
			return "", exitFailure
		}
		pl, err := p.plan(k, pieces, exclude)
		if err != nil {
			fmt.Fprintf(stderr, "agentmap build: reading back the list of inputs: %v\n", err)
			return "", exitFailure
		}
		pl.beside = beside
		planBuild(ctx, pl, agentName, io.Discard)
		m.add(pl)
	}
	id, err := m.id()
	switch {
	case errors.Is(err, errNoSessionMatch):
		return want, exitOK
	case err != nil:
		fmt.Fprintf(stderr, "agentmap build: --session: %v\n", err)
		return "", exitUsage
	}
	return id, exitOK
}

// buildInPieces plans and builds the inputs of p piece by piece into the
// directory out (cmdBuild has checked it). It returns the exit code.
func buildInPieces(ctx context.Context, p *inputPieces, b *streamBuild, gc *buildGC, agentName, out string,
	exclude func(string) bool, given *buildPlan) int {
	if p.err == nil {
		p.take(given) // the inputs given since the last take
	}
	if p.err != nil {
		fmt.Fprintf(b.stderr, "agentmap build: %v; nothing is built\n", p.err)
		return exitFailure
	}
	if code := checkBuildOutput(out, false, b.stderr); code != exitOK {
		return code
	}
	pieces := p.count()
	if piecesMade != nil {
		piecesMade(pieces)
	}
	if b.session != "" {
		id, code := sessionOfPieces(ctx, p, pieces, exclude, agentName, b.session, b.stderr)
		if code != exitOK {
			return code
		}
		b.session = id
	}
	read, skipped, keptOut := 0, 0, 0
	// What the pieces' plans find of the directories' flat subagent logs
	// (the old layout's agent-*.jsonl: their names and the sessions they
	// name), kept for all of them.
	beside := &agents.Beside{}
	for k := range pieces {
		if k > 0 {
			gc.planning()
		}
		pl, err := p.plan(k, pieces, exclude)
		if err != nil {
			fmt.Fprintf(b.stderr, "agentmap build: reading back the list of inputs: %v\n", err)
			return exitFailure
		}
		pl.beside = beside
		planBuild(ctx, pl, agentName, b.stderr)
		gc.planned()
		b.failed = b.failed || pl.failed
		skipped, keptOut = skipped+pl.skipped, keptOut+pl.keptOut
		var sessions []int32
		for i := range pl.sessions {
			if b.session == "" || pl.strs.get(pl.sessions[i].native) == b.session {
				sessions = append(sessions, int32(i))
			}
		}
		b.plan = pl
		read += b.intoDir(sessions, out)
		if ctx.Err() != nil && k < pieces-1 {
			fmt.Fprintf(b.stderr, "agentmap build: stopped after %d of %d pieces of the inputs; the maps written are complete\n", k+1, pieces)
			return exitFailure
		}
	}
	sayLeftOut(b.stderr, given.unnamed)
	if skipped > 0 {
		fmt.Fprintf(b.stderr, "agentmap build: %s found in the directories %s of no agent: skipped\n", counted(skipped, "file"), isAre(skipped, "a log", "logs"))
	}
	if keptOut > 0 {
		fmt.Fprintf(b.stderr, "agentmap build: %s kept out by the config's privacy.exclude\n", counted(keptOut, "log"))
	}
	return b.end(read)
}
