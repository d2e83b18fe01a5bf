package daemon

import (
	"context"
	"errors"
	"os"
	"strings"
	"time"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/agents"
)

func cursorOf(s *state.Source) watchers.Cursor {
	return watchers.Cursor{ID: watchers.FileID{Dev: s.Dev, Ino: s.Ino}, HeadLen: s.HeadLen, HeadHash: s.HeadHash,
		Offset: s.Offset, TailHash: s.TailHash, Sum: s.Sum}
}

func setCursor(s *state.Source, c watchers.Cursor) {
	s.Dev, s.Ino, s.HeadLen, s.HeadHash, s.Offset, s.TailHash, s.Sum = c.ID.Dev, c.ID.Ino, c.HeadLen, c.HeadHash, c.Offset, c.TailHash, c.Sum
}

// parser returns the live parser of a source, restoring it from the
// committed carry-state when it is not in memory.
func (d *Daemon) parser(s *state.Source) (watchers.Parser, error) {
	if p := d.parsers[s.ID]; p != nil {
		return p, nil
	}
	a, ok := d.agents[s.Agent]
	if !ok {
		return nil, errors.New("unknown agent")
	}
	var p watchers.Parser
	if s.Offset == 0 {
		p = a.New(routing(s))
	} else {
		carry, err := d.db.Carry(s.ID)
		if err != nil {
			return nil, err
		}
		if p, err = a.Restore(routing(s), carry); err != nil {
			return nil, err
		}
	}
	d.parsers[s.ID] = p
	return p, nil
}

// tail reads the complete lines a file gained since its cursor and commits
// them in batches: events, carry-state and cursor in one transaction each.
func (d *Daemon) tail(ctx context.Context, s *state.Source, fst watchers.FileStat) {
	log := d.log.With("component", "tail", "agent", s.Agent, "path", s.Path, "session", s.Session)
	v, err := d.openVisited(s.Path)
	if err != nil {
		d.cannotRead(fst, err)
		return
	}
	f := v.f
	defer f.Close()
	d.readable(s.Path)
	id, fi, err := v.id, v.fi, v.statErr
	if err != nil {
		log.Warn("cannot stat log", "err", err)
		return
	}
	size := fi.Size()
	reset := false
	resetSession := s.Session
	orig := *s // what a failed commit after a reset returns to
	if err := watchers.Verify(f, id, size, cursorOf(s)); err != nil {
		if !errors.Is(err, watchers.ErrTruncated) && !errors.Is(err, watchers.ErrReplaced) && !errors.Is(err, watchers.ErrRewritten) {
			log.Warn("cannot check log", "offset", s.Offset, "err", err)
			return
		}
		log.Warn("log changed under its cursor; rebuilding it from the start", "offset", s.Offset, "reason", err)
		if !d.rebase(s, id) {
			return
		}
		reset = true
	}
	if !reset && !parsedCurrent(s, d.agents) {
		// Every byte read is still there (Verify): read again by this
		// build's parser (reread.go).
		log.Debug("log read by an earlier version of its parser; reading it again", "offset", s.Offset,
			"parsed", s.Parsed, "parser", d.parserVersion(s.Agent))
		if !d.rebase(s, id) {
			return
		}
		reset = true
	}
	if !reset && s.Offset > 0 && !s.Sidecar && sidecarAppeared(s) {
		// The lane was read before its meta.json existed: read it again
		// so its type and launching call are the ones the file now has.
		log.Info("subagent sidecar appeared; reading the lane again", "offset", s.Offset)
		if !d.rebase(s, id) {
			return
		}
		reset = true
	}
	if d.reroute[s.ID] {
		// Moved to a name of another session. A rebuild above already
		// routed it from its new name.
		delete(d.reroute, s.ID)
		if !reset {
			log.Info("log renamed to another session; reading it again under the new name", "offset", s.Offset)
			if !d.rebase(s, id) {
				return
			}
			reset = true
		}
	}
	if !reset && emptiedAndRefilled(s, size) {
		if _, complete, err := firstLine(s.Path, s.Form); err != nil || !complete {
			return // nothing to route by yet: no commit until a whole first line
		}
		log.Info("emptied log written again; routing it by its new first line")
		if !d.rebase(s, id) {
			return
		}
		reset = true
	}
	checked := false // the whole prefix found as it was read
	if !reset {
		var rewritten bool
		if rewritten, checked = d.rewrittenInPlace(s, f, size, fi.ModTime()); rewritten {
			log.Warn("log rewritten in place; rebuilding it from the start", "offset", s.Offset)
			if !d.rebase(s, id) {
				return
			}
			reset = true
		}
	}
	if s.Offset == size && !reset && s.HeadLen > 0 {
		if checked {
			d.recordCheckedTime(s, fi.ModTime())
		}
		return
	}
	spec := d.takeParsed(s, reset, id, fi)
	var p watchers.Parser
	if spec != nil {
		// Read ahead by a parse worker from the same bytes, with a
		// parser made as d.parser would make it (takeParsed checked).
		p = spec.parser
		d.parsers[s.ID] = p
	} else if p, err = d.parser(s); err != nil {
		log.Error("cannot resume parser; rebuilding the log from the start", "err", err)
		if !d.rebase(s, id) {
			return
		}
		reset = true
		if p, err = d.parser(s); err != nil {
			log.Error("cannot start parser", "err", err)
			return
		}
	}
	// The file's path and times, for parsers that take them (Cursor
	// transcripts have no times of their own), read after the size so
	// they are at least as new as the lines read: `agentmap build` reads
	// them once from the finished file, and the last batch here agrees.
	var sidecar bool
	if spec != nil {
		sidecar = spec.sidecar
	} else {
		sidecar = sidecarAppeared(s) // before the parser reads it: a race errs towards a re-read
		agents.AttachFile(p, s.Path)
	}
	mod := ms(fi.ModTime())
	committed := s.Offset
	partialGrew := false // set before the last commit
	commit := func(c chunk) bool {
		next := *s
		setCursor(&next, c.cursor)
		if reset {
			// The source's events are replaced from its start: so are its
			// counts of lines, or a log read again counts each skipped
			// line twice (and one a new parser reads is still skipped).
			next.Lines, next.Skipped, next.Oversized = 0, 0, 0
		}
		next.Lines += c.lines
		next.Skipped += c.skipped
		next.Oversized += int64(c.oversized)
		next.Bytes += c.end - committed
		next.Size, next.ModMs = size, mod
		if reset {
			next.Resets++
		}
		if committed == 0 {
			next.Sidecar = sidecar
		}
		if reset {
			*s = orig
		}
		// A skipped line gives no event, but it may be a last line a map
		// read while it had no newline, since finished into one that does
		// not parse (`agentmap build` of the file skips it): the session
		// must change, or that map keeps what the line no longer says.
		ok := d.apply(s, next, state.Batch{Carry: c.carry, SetCarry: true, Reset: reset, ResetSession: resetSession, Encoded: c.encoded},
			c.events, reset || partialGrew || c.skipped > 0, mod, c.end)
		d.progress.done += c.end - committed
		committed, reset = c.end, false
		d.reportProgress()
		return ok
	}
	var st watchers.TailStats
	if spec != nil {
		for _, c := range spec.chunks {
			partialGrew = c.last && spec.stats.Partial > 0 && size != s.Size
			if !commit(c) || ctx.Err() != nil {
				return
			}
		}
		st = spec.stats
	} else {
		// The reader owns the buffer until it is done with it: a read
		// that started within this one would take none.
		r := newLineReader(f, id, size, cursorOf(s), p, d.opt.MaxLine, log, d.batchBuf)
		d.batchBuf = nil
		defer func() { d.batchBuf = r.spare() }()
		var stopped bool
		st, stopped, err = r.run(func(c chunk) bool { return commit(c) && ctx.Err() == nil })
		if stopped {
			return
		}
		if err != nil {
			delete(d.parsers, s.ID) // it read lines that will be read again
			if ce := (*cutError)(nil); errors.As(err, &ce) {
				logCut(log, ce)
			} else {
				log.Warn("cannot read log", "offset", st.End, "err", err)
			}
			return
		}
		// A last line without a newline that grew (finished, perhaps, by
		// a write that still ends without one) gives no line to commit,
		// but the map reads it at flush time: the session must change, or
		// a map written before stays without it. Recording the size makes
		// that once per growth, also across a restart.
		partialGrew = st.Partial > 0 && size != s.Size
		if needFinal(st, committed, reset, s.HeadLen, r.pending(), partialGrew) {
			c, err := r.cut(st.End, st.Oversized)
			if err != nil {
				logCut(log, err)
				delete(d.parsers, s.ID)
				return
			}
			commit(c)
		}
	}
	if st.Oversized > 0 {
		log.Warn("lines over the size cap skipped", "count", st.Oversized, "offset", st.End)
	}
	if d.opt.Once || d.catchUp.running {
		// History read to its end is mostly quiet: the committed
		// carry-state restores a parser if the log grows, and memory
		// does not grow with the number of logs caught up on.
		delete(d.parsers, s.ID)
	}
}

// visitedLog is a log of lines a visit opened to route it (adopt), kept
// open for the tailer with its identity: a catch-up routes and reads
// every log there is, and opened each twice.
type visitedLog struct {
	path    string
	f       *os.File
	id      watchers.FileID
	fi      os.FileInfo
	statErr error
}

// routeLine is firstLine for adopt: a log of lines is opened once for the
// visit. Its first line is the one a parse worker read, when the worker
// saw the file as it is now (the same identity, size and time).
func (d *Daemon) routeLine(path, form string) ([]byte, bool, error) {
	if form != watchers.FormLines {
		return firstLine(path, form)
	}
	d.dropVisited()
	f, err := watchers.OpenLog(path)
	if err != nil {
		return nil, false, err
	}
	v := visitedLog{path: path, f: f}
	v.id, v.fi, v.statErr = watchers.IdentifyOpen(f)
	d.visited = v
	if res := d.aheadNext; res != nil && res.path == path && v.statErr == nil && res.id == v.id &&
		res.size == v.fi.Size() && res.mod.Equal(v.fi.ModTime()) {
		return res.first, true, nil
	}
	return firstLineOf(f)
}

// openVisited opens a log for the tailer, and stats it: the file the visit
// opened to route it when there is one. The caller closes v.f.
func (d *Daemon) openVisited(path string) (visitedLog, error) {
	if v := d.visited; v.f != nil && v.path == path {
		d.visited = visitedLog{}
		return v, nil
	}
	f, err := watchers.OpenLog(path)
	if err != nil {
		return visitedLog{}, err
	}
	v := visitedLog{path: path, f: f}
	v.id, v.fi, v.statErr = watchers.IdentifyOpen(f)
	return v, nil
}

// dropVisited closes the log a visit opened and did not tail.
func (d *Daemon) dropVisited() {
	if d.visited.f != nil {
		d.visited.f.Close()
	}
	d.visited = visitedLog{}
}

// rewrittenInPlace reports whether the bytes before a source's cursor
// changed while its head, tail window and size did not: checked by the
// whole-prefix checksum when the file's time moved without the file
// growing, and once per file after a start (a rewrite while stopped).
// Growth alone is not checked: that would read every log again on every
// append. checked reports that the checksum was compared and matched.
func (d *Daemon) rewrittenInPlace(s *state.Source, f *os.File, size int64, mod time.Time) (rewritten, checked bool) {
	first := !d.summed[s.ID]
	d.summed[s.ID] = true
	if s.Sum == "" || s.Offset == 0 || ms(mod) == s.ModMs || !(first || size == s.Size) {
		return false, false
	}
	err := watchers.VerifySum(f, cursorOf(s))
	if err != nil && !errors.Is(err, watchers.ErrRewritten) {
		d.log.Warn("cannot check log", "component", "tail", "path", s.Path, "err", err)
	}
	return errors.Is(err, watchers.ErrRewritten), err == nil
}

// recordCheckedTime records the time of a log whose time moved while it
// stayed as it was read (touched, not written; its whole prefix just
// compared with the checksum): its next visit need not read it all again,
// and a later scan finds it quiet (quiet.go). Only a log read to its end
// is recorded so, its size the one recorded: the time then stands for
// exactly the bytes the cursor covers.
func (d *Daemon) recordCheckedTime(s *state.Source, mod time.Time) {
	if s.Offset != s.Size {
		return
	}
	d.commitGroup()
	old := s.ModMs
	s.ModMs = ms(mod)
	if err := d.db.PutSource(s); err != nil {
		s.ModMs = old
		d.log.Warn("cannot record a log's time", "component", "tail", "path", s.Path, "err", err)
	}
}

// rebase resets a source to the start of its file: its events are dropped
// at the next commit (Reset), its parser starts fresh and its routing is
// read again from the new first line. It reports false when there is
// nothing to read yet.
func (d *Daemon) rebase(s *state.Source, id watchers.FileID) bool {
	// Batches of this source still queued are committed with the cursor
	// and the session they were read for, before either changes here (a
	// batch is written with its source as the source is then).
	d.commitGroup()
	delete(d.parsers, s.ID)
	old := s.Session
	first, complete, err := firstLine(s.Path, s.Form)
	if err != nil || !complete {
		// Nothing to route yet: drop what the old content gave now.
		next := *s
		next.Offset, next.HeadLen, next.HeadHash, next.TailHash, next.Sum = 0, 0, "", "", ""
		next.Dev, next.Ino = id.Dev, id.Ino
		d.apply(s, next, state.Batch{SetCarry: true, Reset: true, ResetSession: old}, nil, true,
			ms(d.opt.Clock.Now()), 0)
		d.vacated[old] = true
		return false
	}
	s.Offset, s.HeadLen, s.HeadHash, s.TailHash, s.Sum = 0, 0, "", "", ""
	s.Dev, s.Ino = id.Dev, id.Ino
	d.index(s)
	if r, err := d.agents[s.Agent].Identify(s.Path, first); err == nil && r.Session != "" {
		r.Agent = s.Agent
		d.route(s, r)
		if old != s.Session {
			d.vacated[old] = true
			if sess := d.sessions[old]; sess != nil {
				d.commitGroup()
				sess.Gen++
				if sess.EndedMs == 0 {
					// Written again at once: a map left of a session
					// this file no longer feeds should not wait for the
					// idle time (nor for a crash to outlive it).
					sess.EndedMs = ms(d.opt.Clock.Now())
				}
				d.mark(old)
				if err := d.db.PutSessions(sess); err != nil {
					d.log.Error("cannot record a session change", "component", "tail", "session", old, "err", err)
				}
			}
		}
	}
	return true
}

// emptiedAndRefilled reports whether a source was reset to nothing (its
// log emptied, or replaced by a file without a whole first line: an empty
// cursor after bytes read) and its log has bytes again: it is routed again
// by its new first line, as `agentmap build` routes the file it finds, and
// not kept with the session the old content gave (a Codex rollout emptied
// and written with another thread's lines belongs to that thread). A
// source not committed yet has the same empty cursor but no bytes read;
// it was routed when it was found.
func emptiedAndRefilled(s *state.Source, size int64) bool {
	return s.Offset == 0 && s.HeadLen == 0 && s.Bytes > 0 && size > 0
}

// touch records in the session records what a batch changes: activity,
// generation, turn end, end flags. It returns the records to commit and a
// function that undoes the change in memory if the commit fails.
func (d *Daemon) touch(s *state.Source, batch []event.Event, reset bool, mod int64) ([]*state.Session, func()) {
	if s.Session == "" {
		return nil, func() {}
	}
	var out []*state.Session
	var saved []state.Session
	keep := func(sess *state.Session) {
		out = append(out, sess)
		saved = append(saved, *sess)
	}
	sess := d.session(s.Session, s.Agent)
	keep(sess)
	// A file time ahead of the clock (clock skew, a copy with future
	// times) counts as now: the session must still go quiet and be
	// written, not wait for that time.
	mod = min(mod, ms(d.opt.Clock.Now()))
	changed := len(batch) > 0 || reset
	if changed {
		sess.Gen++
		if sess.EndedMs != 0 && !s.Missing {
			sess.EndedMs = 0 // resumed
		}
	}
	if mod > sess.ActivityMs {
		sess.ActivityMs = mod
	}
	if len(batch) > 0 && s.Lane == "" {
		if k := lastKind(batch); k != "" {
			sess.TurnEnd = k == event.KindTurnEnd
		}
	}
	if s.ParentSession != "" && changed {
		parent := d.session(s.ParentSession, s.Agent)
		keep(parent)
		parent.Gen++
		if mod > parent.ActivityMs {
			parent.ActivityMs = mod
		}
	}
	return out, func() {
		for i, sess := range out {
			*sess = saved[i]
		}
	}
}

func (d *Daemon) reportProgress() {
	if d.catchUp.running && d.opt.Clock.Now().Sub(d.snap.at) >= time.Second {
		d.publishNow() // status answers while the first scan runs
	}
	if d.opt.Progress != nil {
		d.opt.Progress(d.progress.done, d.progress.total, d.sessionCount())
	}
}

// sidecarAppeared reports whether a Claude subagent log has its meta.json.
func sidecarAppeared(s *state.Source) bool {
	if s.Agent != "claude" || s.Lane == "" {
		return false
	}
	_, err := os.Stat(strings.TrimSuffix(s.Path, ".jsonl") + ".meta.json")
	return err == nil
}
