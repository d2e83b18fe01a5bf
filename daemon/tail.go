package daemon

import (
	"context"
	"errors"
	"io/fs"
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
		Offset: s.Offset, TailHash: s.TailHash}
}

func setCursor(s *state.Source, c watchers.Cursor) {
	s.Dev, s.Ino, s.HeadLen, s.HeadHash, s.Offset, s.TailHash = c.ID.Dev, c.ID.Ino, c.HeadLen, c.HeadHash, c.Offset, c.TailHash
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
// The checks and routing run here, in the loop; the reading and parsing
// run on a worker of the tail pool when ingest has one (tailpool.go), and
// the loop applies each batch in the file's order.
func (d *Daemon) tail(ctx context.Context, s *state.Source, fst watchers.FileStat) {
	d.waitTail(s.ID) // one reader per source at a time
	log := d.log.With("component", "tail", "agent", s.Agent, "path", s.Path, "session", s.Session)
	f, err := os.Open(s.Path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			log.Warn("cannot open log", "err", err)
		}
		return
	}
	closeFile := true
	defer func() {
		if closeFile {
			f.Close()
		}
	}()
	id, fi, err := watchers.IdentifyOpen(f)
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
	if !reset && s.Offset > 0 && !s.Sidecar && sidecarAppeared(s) {
		// The lane was read before its meta.json existed: read it again
		// so its type and launching call are the ones the file now has.
		log.Info("subagent sidecar appeared; reading the lane again", "offset", s.Offset)
		if !d.rebase(s, id) {
			return
		}
		reset = true
	}
	if s.Offset == size && !reset && s.HeadLen > 0 {
		return
	}
	p, err := d.parser(s)
	if err != nil {
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
	sidecar := sidecarAppeared(s) // before the parser reads it: a race errs towards a re-read
	agents.AttachFile(p, s.Path)
	j := &tailJob{s: s, p: p, f: f, id: id, size: size, cursor: cursorOf(s), log: log, maxLine: d.opt.MaxLine,
		reset: reset, resetSession: resetSession, orig: orig, sidecar: sidecar, mod: ms(fi.ModTime()),
		committed: s.Offset, mustCommit: reset || s.HeadLen == 0}
	closeFile = false // the reader closes it
	if d.tails != nil {
		d.tails.start(d, j)
		return
	}
	j.read(ctx, func(c *tailChunk) bool {
		if j.stopped || !d.applyChunk(c) {
			j.stopped = true
		}
		return !j.stopped
	})
	d.tailDone(j)
}

// applyChunk records one batch a reader produced: the source's cursor,
// counters and carry-state, its events, in the group to commit. It reports
// false when the reading must stop (a failed commit, a reader error, or a
// parser dropped meanwhile, whose lines will be read again).
func (d *Daemon) applyChunk(c *tailChunk) bool {
	j := c.job
	s := j.s
	if j.stopped || d.parsers[s.ID] != j.p {
		return false
	}
	if c.err != nil {
		j.log.Log(context.Background(), c.level, c.msg, "offset", c.end, "err", c.err)
		delete(d.parsers, s.ID) // it read lines that will be read again
		return false
	}
	if c.nothing {
		return true
	}
	next := *s
	setCursor(&next, c.cursor)
	next.Lines += c.lines
	next.Skipped += c.skipped
	next.Oversized += int64(c.oversized)
	next.Bytes += c.end - j.committed
	next.Size, next.ModMs = j.size, j.mod
	if j.reset {
		next.Resets++
	}
	if j.committed == 0 {
		next.Sidecar = j.sidecar
	}
	if j.reset {
		*s = j.orig
	}
	ok := d.apply(s, next, state.Batch{Carry: c.carry, SetCarry: true, Reset: j.reset, ResetSession: j.resetSession,
		Encoded: c.encoded}, c.events, j.reset, j.mod, c.end)
	d.progress.done += c.end - j.committed
	j.committed, j.reset = c.end, false
	d.reportProgress()
	return ok
}

// tailDone ends a read in the loop.
func (d *Daemon) tailDone(j *tailJob) {
	if d.opt.Once || d.catchUp.running {
		// History read to its end is mostly quiet: the committed
		// carry-state restores a parser if the log grows, and memory
		// does not grow with the number of logs caught up on.
		if d.parsers[j.s.ID] == j.p {
			delete(d.parsers, j.s.ID)
		}
	}
}

// rebase resets a source to the start of its file: its events are dropped
// at the next commit (Reset), its parser starts fresh and its routing is
// read again from the new first line. It reports false when there is
// nothing to read yet.
func (d *Daemon) rebase(s *state.Source, id watchers.FileID) bool {
	delete(d.parsers, s.ID)
	old := s.Session
	first, complete, err := firstLine(s.Path, s.Form)
	if err != nil || !complete {
		// Nothing to route yet: drop what the old content gave now.
		next := *s
		next.Offset, next.HeadLen, next.HeadHash, next.TailHash = 0, 0, "", ""
		next.Dev, next.Ino = id.Dev, id.Ino
		d.apply(s, next, state.Batch{SetCarry: true, Reset: true, ResetSession: old}, nil, true,
			ms(d.opt.Clock.Now()), 0)
		return false
	}
	s.Offset, s.HeadLen, s.HeadHash, s.TailHash = 0, 0, "", ""
	s.Dev, s.Ino = id.Dev, id.Ino
	d.index(s)
	if r, err := d.agents[s.Agent].Identify(s.Path, first); err == nil && r.Session != "" {
		r.Agent = s.Agent
		d.route(s, r)
		if old != s.Session {
			if sess := d.sessions[old]; sess != nil {
				d.commitGroup()
				sess.Gen++
				d.mark(old)
				if err := d.db.PutSessions(sess); err != nil {
					d.log.Error("cannot record a session change", "component", "tail", "session", old, "err", err)
				}
			}
		}
	}
	return true
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
		d.opt.Progress(d.progress.done, d.progress.total, len(d.sessions))
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
