package daemon

import (
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/agents"
)

// readWhole re-reads a file that is written once (a .zst rollout, a
// single-document JSON rollout) whenever it changes, replacing what it gave
// before in one transaction.
func (d *Daemon) readWhole(s *state.Source, fst watchers.FileStat) {
	log := d.log.With("component", "tail", "agent", s.Agent, "path", s.Path, "session", s.Session)
	digest := wholeDigest(fst)
	if s.Digest == digest && parsedCurrent(s, d.agents) {
		return
	}
	f, err := watchers.OpenLog(s.Path)
	if err != nil {
		d.cannotRead(fst, err)
		return
	}
	defer f.Close()
	d.readable(s.Path)
	id, fi, err := watchers.IdentifyOpen(f)
	if err != nil {
		return
	}
	var events []event.Event
	next := *s
	oldSession := s.Session
	first, _ := agents.FirstLine(s.Path)
	if strings.HasSuffix(s.Path, ".json") || agents.LooksLikeWholeJSON(first) {
		evs, route, err := agents.ParseWhole(s.Path)
		var openErr *fs.PathError
		if errors.As(err, &openErr) {
			d.cannotRead(fst, err) // tried again on a schedule
			return
		}
		if err != nil {
			log.Warn("log not readable as a whole; skipped until it changes", "err", err)
			// Read by this build's parser, which cannot read it either:
			// not tried again at every start (it keeps what it gave).
			next.Digest, next.Parsed = digest, d.parserVersion(s.Agent)
			*s = next
			d.commitGroup()
			d.db.PutSource(s)
			return
		}
		route.Agent = s.Agent
		d.route(&next, route)
		events = evs
	} else {
		a, ok := d.agents[s.Agent]
		if !ok {
			return
		}
		evs, st, err := agents.ParseFile(s.Path, a, routing(s), d.opt.MaxLine)
		if err != nil {
			log.Warn("cannot read log", "err", err)
			return
		}
		events = evs
		next.Lines, next.Skipped, next.Oversized, next.Bytes = int64(st.Lines), int64(st.Skipped), int64(st.Oversized), st.Bytes
	}
	c, err := watchers.Advance(f, id, fi.Size(), watchers.Cursor{}, 0)
	if err != nil {
		return
	}
	setCursor(&next, c)
	next.Offset, next.Digest, next.Size, next.ModMs = fi.Size(), digest, fi.Size(), ms(fst.ModTime)
	delete(d.parsers, s.ID)
	d.apply(s, next, state.Batch{SetCarry: true, Reset: true, ResetSession: oldSession}, events, true,
		ms(fst.ModTime), next.Offset)
	d.progress.done += fi.Size()
	d.reportProgress()
}

// wholeDigest is what a whole-form log is read again on a change of: its
// size, time and identity.
func wholeDigest(fst watchers.FileStat) string {
	return fmt.Sprintf("%d/%d/%d/%d", fst.Size, ms(fst.ModTime), fst.ID.Dev, fst.ID.Ino)
}
