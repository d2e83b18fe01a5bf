package daemon

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/internal/regular"
	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/agents"
)

// ingest applies one batch of file changes: new files are identified and
// routed, grown files tailed, vanished ones marked.
func (d *Daemon) ingest(ctx context.Context, u watchers.Update) {
	// Taken out by the callers that know a whole walk's set (the loop,
	// scanNow, the catch-up's walk); any left are recorded, never read.
	u.Files = d.noteUnlisted(u.Files, false)
	d.filesSeen += uint64(len(u.Files))
	for _, f := range u.Files {
		// A log of a session let go of (retireidle.go). A path a deleted
		// log's record holds may be a retired session's too: one let go
		// of on load (quiet.go) whose log is there, which the record of a
		// deleted log took the path from as it was taken up; the present
		// log's record takes it back (takesPathFrom).
		if s := d.byPath[f.Path]; s == nil || s.Missing {
			d.restorePath(f.Path)
		}
	}
	for _, f := range u.Files {
		if f.Gone {
			delete(d.sizes, f.Path)
			delete(d.excluded, f.Path) // a log kept out and deleted is kept out no more
			delete(d.ignored, f.Path)  // nor is one passed over (status counts those)
			delete(d.aliases, f.Path)
			delete(d.unrouted, f.Path)
		} else {
			d.sizes[f.Path] = f.Size
		}
	}
	// Arrivals first, so that a rename seen in one batch (old path gone,
	// new path there) follows the file instead of ending its session.
	defer d.commitGroup()
	ahead := d.startReadAhead(u.Files)
	defer ahead.close()
	if ahead != nil && !gcPacing() {
		// New logs to read: a catch-up, sized by all this batch has to
		// read (logs too large to read ahead and logs that grew too). A
		// scan's piece is paced already, by what the whole walk has left.
		var toRead int64
		for _, f := range u.Files {
			if !f.Gone {
				toRead += d.unread(f)
			}
		}
		defer paceGC(catchUpHeadroomFor(toRead))()
	}
	for i, f := range u.Files {
		if ctx.Err() != nil {
			return
		}
		if !f.Gone {
			d.aheadNext = ahead.take(i)
			d.visit(ctx, f)
			d.aheadNext = nil
			d.flushHeld(ctx)
			// Done with: its path leaves memory with its session's records
			// when the session is let go of (a catch-up's list is the
			// walk of every log). Gone entries stay for the loop below.
			u.Files[i] = watchers.FileStat{}
		}
	}
	d.commitGroup()
	for _, f := range u.Files {
		if f.Gone {
			d.gone(f.Path)
		}
	}
	if u.Full {
		d.sweep()
		d.retireIdle()
	}
}

// sweep is the look at every record a full rescan allows: dirty sessions
// are marked pending (a change made without marking is not lost), and the
// sources whose file the rescan did not see are gone. Its outcome depends
// only on the records and on the files present, so when neither changed
// since the last sweep (an idle rescan: no file reported, no record
// written or marked) and that sweep left no source in doubt, it is not
// repeated: at 50,000 sessions it is the bulk of an idle rescan's cost.
func (d *Daemon) sweep() {
	if d.swept == d.sweepInputs() && !d.sweptUnsure {
		return
	}
	d.markDirty()
	d.sweptUnsure = false
	// A file deleted while the daemon was down is never reported gone:
	// a full scan that did not see it is the proof.
	for _, s := range d.srcs {
		if _, there := d.sizes[s.Path]; !s.Missing && s.Form != formConversation && !there {
			d.gone(s.Path)
			if !s.Missing {
				d.sweptUnsure = true // still on disk, not reported: look again next time
			}
		}
	}
	d.swept = d.sweepInputs()
}

// sweepMark is what a sweep's outcome depends on (see statusMark).
type sweepMark struct {
	writes, marks, filesSeen uint64
	sources, sessions        int
}

func (d *Daemon) sweepInputs() sweepMark {
	m := d.statusInputs()
	return sweepMark{m.writes, m.marks, m.filesSeen, m.sources, m.sessions}
}

// formConversation marks a source that is one conversation of a SQLite
// database (path "<db>#<id>"), not a file.
const formConversation = "conversation"

// letGoUnfollowed looks, once the roots changed, at every log followed:
// one gone, or under no root its agent is followed in now, is let go of
// (gone), keeping what it gave.
func (d *Daemon) letGoUnfollowed() {
	for _, s := range d.srcs {
		if !s.Missing && s.Form != formConversation {
			d.gone(s.Path)
		}
	}
}

func (d *Daemon) gone(path string) {
	s := d.byPath[path]
	if s == nil || s.Missing {
		return
	}
	fi, err := os.Stat(path)
	switch {
	case err == nil && fi.Mode().IsRegular() && d.countsAsGone(s):
		// Still there, but under no root its agent is followed in now
		// (its roots changed: a copy of the logs followed elsewhere, the
		// old ones kept). It is let go of as a log that is gone, keeping
		// what it gave, so that a copy of it under the roots followed
		// counts once, as build of the files there counts it; met again
		// under a root, it is taken up where it was. An agent turned
		// off is not followed anywhere: its logs are left as they are.
		d.lose(s, "no longer under a followed root; keeping what was captured")
		return
	case err == nil && fi.Mode().IsRegular():
		return // back already (replaced under the same name)
	case err == nil:
		// A directory or a named pipe put in its place: no log is there,
		// as when it is deleted (a regular file put back is met anew).
		d.lose(s, "file gone: not a regular file now; keeping what was captured", "kind", regular.Kind(fi.Mode()))
		return
	case !watchers.Missing(err):
		// Not known to be gone (its directory cannot be listed or
		// searched): unreadable, tried again and counted, its record
		// and map kept as they are.
		d.cannotRead(watchers.FileStat{Path: s.Path, Agent: s.Agent, Form: s.Form}, err)
		return
	}
	if d.lose(s, "file gone; keeping what was captured") {
		d.takeCompressedCopy(s)
	}
}

// lose marks a source's file deleted, keeping what it gave, and ends its
// session (a SQLite database's conversations stay as they are). It
// reports whether the session was ended. attrs add to the line logged.
func (d *Daemon) lose(s *state.Source, why string, attrs ...any) bool {
	d.commitGroup()
	s.Missing = true
	if err := d.db.PutSource(s); err != nil {
		d.log.Error("cannot record a vanished file", "component", "daemon", "path", s.Path, "err", err)
	}
	d.log.Info(why, append([]any{"component", "daemon", "agent", s.Agent, "path", s.Path, "session", s.Session}, attrs...)...)
	if s.Form == watchers.FormSQLite {
		d.forgetDB(s.Path) // no longer tried again, nor counted unreadable
		return false
	}
	if sess := d.sessions[s.Session]; sess != nil && d.copyOfGone(s) {
		// Moved by a copy and a deletion: the map made while both were
		// there counts the lines twice, and nothing else would change it.
		sess.Gen++
		d.mark(s.Session)
		if err := d.db.PutSessions(sess); err != nil {
			d.log.Error("cannot record a session change", "component", "daemon", "session", s.Session, "err", err)
		}
	}
	d.end(s.Session)
	return true
}

// takeCompressedCopy follows the compressed copy of a deleted rollout
// waiting beside it, in its place.
func (d *Daemon) takeCompressedCopy(s *state.Source) {
	if s.Form == watchers.FormLines {
		d.takeCompressedCopyOf(s.Path, s.Agent)
	}
}

// takeCompressedCopyOf visits the compressed copy of the plain log path,
// gone, if one waits beside it.
func (d *Daemon) takeCompressedCopyOf(path, agent string) {
	zst := path + ".zst"
	if _, err := os.Stat(path); err == nil {
		return // the name holds a file again
	}
	if fi, err := os.Stat(zst); err == nil {
		delete(d.ignored, zst)
		d.visit(context.Background(), watchers.FileStat{Path: zst, Agent: agent, Form: watchers.FormWhole,
			Size: fi.Size(), ModTime: fi.ModTime(), ID: watchers.StatID(fi)})
	}
}

// end marks a session explicitly ended: it is flushed without waiting for
// the idle time.
func (d *Daemon) end(key string) {
	if sess := d.sessions[key]; sess != nil && sess.EndedMs == 0 {
		d.commitGroup()
		sess.EndedMs = ms(d.opt.Clock.Now())
		d.mark(key)
		if err := d.db.PutSessions(sess); err != nil {
			d.log.Error("cannot record a session end", "component", "daemon", "session", key, "err", err)
		}
	}
}

// visit handles one file that is there.
func (d *Daemon) visit(ctx context.Context, f watchers.FileStat) {
	defer d.dropVisited()
	if d.isExcluded(f) {
		// The same file, changed: it is judged again, as its first
		// records may name another directory now (emptied and written
		// again, rewritten in place).
		if excluded, wait := d.excludedLog(f, f.Form); excluded || wait {
			return
		}
		delete(d.excluded, f.Path)
	}
	if d.stillIgnored(f) {
		return
	}
	delete(d.ignored, f.Path)
	delete(d.aliases, f.Path)
	s := d.byPath[f.Path]
	if s == nil || s.Missing && s.Form != watchers.FormSQLite {
		var ok bool
		if s, ok = d.adopt(f); !ok {
			return
		}
	} else {
		if s.Missing {
			// A database deleted, then there again: followed under its
			// record, which must say so, or its next deletion would go
			// unseen (gone passes over a source already missing).
			d.commitGroup()
			s.Missing = false
			if err := d.db.PutSource(s); err != nil {
				d.log.Error("cannot record a database back on disk", "component", "daemon", "path", s.Path, "err", err)
			}
		}
		if m, moved := d.movedOnto(s, f); moved {
			if m == nil {
				return // kept out by privacy.exclude
			}
			s = m
		}
	}
	switch s.Form {
	case watchers.FormLines:
		d.tail(ctx, s, f)
	case watchers.FormWhole:
		d.readWhole(s, f)
	case watchers.FormSQLite:
		d.poll(ctx, s, f)
	}
}

// movedOnto finds the followed log renamed onto the name of another, s
// (`mv a.jsonl b.jsonl`, both followed), and follows it there: the file at
// s's name has a new identity, another log's whose old name no longer
// holds it, with that log's head. moved is false when the file is not such
// a log (a replacement: read again from its start under s's record). The
// rename deleted s's file: s is marked deleted, keeping what it gave.
// Taken for a replacement instead, the file would be read again from its
// start under s's record, and the moved log's events would count twice.
// The outcome is the one of a deletion of s's file seen before the move,
// privacy.exclude's look at a deleted log that comes back included (m is
// then nil when it keeps the file out).
func (d *Daemon) movedOnto(s *state.Source, f watchers.FileStat) (m *state.Source, moved bool) {
	if s.Form == watchers.FormSQLite || s.Form == formConversation || !f.ID.Known() {
		return nil, false
	}
	if id := (watchers.FileID{Dev: s.Dev, Ino: s.Ino}); !id.Known() || id == f.ID {
		return nil, false // the same file, or none to tell it by
	}
	d.restoreFile(f.ID) // a retired log under another name: moved looks for it
	m = d.moved(f)
	if m == nil || m == s {
		return nil, false // a new file under the name: a replacement
	}
	// A Codex rollout's compressed copy waiting beside the name stays set
	// aside while the moved log holds it; when the name is free again, the
	// copy is the record's whose session it routes to (compressedCopyOwner).
	d.lose(s, "file replaced by another followed log moved onto its name; keeping what was captured")
	d.displaced[f.Path] = true
	if m.Missing && d.keptOutOnReturn(m, f) {
		return nil, true
	}
	d.followMove(m, f)
	return m, true
}

// stillIgnored reports whether f is a file adopt passed over (see ignored)
// and unchanged since.
func (d *Daemon) stillIgnored(f watchers.FileStat) bool {
	old, ok := d.ignored[f.Path]
	if ok && d.aliases[f.Path] && d.otherName(f) == nil {
		// The followed name of this file is gone: it is followed here
		// now (adopt finds it moved), changed or not.
		delete(d.aliases, f.Path)
		return false
	}
	return ok && old.Size == f.Size && old.ModTime.Equal(f.ModTime) && old.ID == f.ID
}

// adopt finds the source a newly seen path belongs to: a known file that
// moved here (same identity and head), the plain rollout a .zst replaces,
// or a new source.
func (d *Daemon) adopt(f watchers.FileStat) (*state.Source, bool) {
	if f.Form == watchers.FormSQLite {
		return d.newSource(f, watchers.Source{Agent: f.Agent}), true
	}
	d.restoreFile(f.ID) // a retired log under another name: moved looks for it
	if s := d.moved(f); s != nil {
		if s.Missing && d.keptOutOnReturn(s, f) {
			return nil, false
		}
		d.followMove(s, f)
		return s, true
	}
	if other := d.otherName(f); other != nil {
		// The same file under a second name (a hard link, a link to it in
		// another project's directory): followed under the first, read
		// twice it would count every call twice.
		d.ignored[f.Path], d.aliases[f.Path] = f, true
		d.log.Debug("a second name of a followed log: not read again", "component", "daemon", "path", f.Path, "followed", other.Path)
		return nil, false
	}
	if old := d.byPath[f.Path]; old != nil && old.Missing {
		// Deleted, then a file under the same name again: the tailer sees
		// a new identity and reads it from the start in place of the old.
		if d.keptOutOnReturn(old, f) {
			return nil, false
		}
		old.Missing = false
		return old, true
	}
	if strings.HasSuffix(f.Path, ".zst") {
		plain := strings.TrimSuffix(f.Path, ".zst")
		if _, err := os.Stat(plain); err == nil {
			d.ignored[f.Path] = f // the plain file is read; the copy would double it
			return nil, false
		}
		// The plain rollout's session may have been let go of (its log
		// deleted): its record is the copy's owner, as for a session kept.
		if s := d.byPath[plain]; s == nil || s.Missing {
			d.restorePath(plain)
		}
		if s := d.byPath[plain]; s != nil || d.displaced[plain] {
			if owner := d.compressedCopyOwner(s, plain, f); owner != nil {
				d.toCompressedCopy(owner, f.Path)
				return owner, true
			}
		}
	}
	a, ok := d.agents[f.Agent]
	if !ok {
		return nil, false
	}
	first, complete, err := d.routeLine(f.Path, f.Form)
	if err == nil && !complete && d.opt.Once {
		// Nothing more will come: a lone unfinished line is used if it
		// parses, as `agentmap build` does.
		first, err = agents.FirstLine(f.Path)
		complete = err == nil
	}
	if err != nil && !errors.Is(err, agents.ErrEmpty) {
		d.cannotRead(f, err) // tried again on a schedule: a chmod is no change the watcher sees
		return nil, false
	}
	d.readable(f.Path)
	if !complete {
		return nil, false // nothing to route yet: wait for a first line
	}
	form := f.Form
	if excluded, wait := d.excludedLog(f, form); excluded || wait {
		if excluded {
			d.skipExcluded(f)
		}
		return nil, false
	}
	var route watchers.Source
	if a.Name == "codex" && !a.LooksLike(first) && agents.LooksLikeWholeJSON(first) {
		form = watchers.FormWhole
		route = watchers.Source{Agent: a.Name}
	} else {
		route, err = a.Identify(f.Path, first)
		if err != nil || route.Session == "" {
			level := slog.LevelWarn
			if _, seen := d.ignored[f.Path]; seen || d.unrouted[f.Path] {
				level = slog.LevelDebug // said once already
			}
			d.unrouted[f.Path] = true
			d.ignored[f.Path] = f
			d.log.Log(context.Background(), level, "log not recognised; skipped until it changes", "component", "daemon",
				"agent", f.Agent, "path", f.Path, "err", err)
			return nil, false
		}
		route.Agent = a.Name
	}
	s := d.newSource(f, route)
	s.Form = form
	return s, true
}

// keptOutOnReturn reports whether privacy.exclude keeps out the file f
// that a deleted log's record would take up again (back under its name or
// another): it is looked at as any log found is, since it may have been
// away while a pattern covering it was added. One covered takes its
// records with it (its session's, when it was the session's only log); one
// whose cwd is not known yet waits.
func (d *Daemon) keptOutOnReturn(old *state.Source, f watchers.FileStat) bool {
	excluded, wait := d.excludedLog(f, f.Form)
	if excluded {
		d.commitGroup()
		d.forgetLogNow(old) // counted there
		d.excluded[f.Path] = f.ID
	}
	return excluded || wait
}

// followMove moves the record of a known file to the name f it moved to.
func (d *Daemon) followMove(s *state.Source, f watchers.FileStat) {
	old := s.Path
	if d.byPath[old] == s { // a deleted log's name may be another log's since
		delete(d.byPath, old)
	}
	if d.displaced[old] {
		// The name a moved log took from another is free again: a
		// compressed copy set aside beside it is read now (its owner is
		// found by compressedCopyOwner), as when a plain log goes.
		defer d.takeCompressedCopyOf(old, s.Agent)
	}
	s.Path, s.Missing = f.Path, false
	d.byPath[f.Path] = s
	d.commitGroup()
	d.log.Info("file moved; following it", "component", "daemon", "agent", s.Agent, "path", f.Path,
		"session", s.Session)
	if s.Form == watchers.FormLines && d.routeChanged(s) {
		// Renamed to another session (a Claude transcript given another
		// uuid): the session follows the name, as build's does; the
		// tailer reads the file again under it. The new path is recorded
		// with that reset, in one transaction: after a crash before it,
		// the move is found again.
		d.reroute[s.ID] = true
	} else if err := d.db.PutSource(s); err != nil {
		d.log.Error("cannot record a moved file", "component", "daemon", "path", f.Path, "err", err)
	}
	if f.Archived {
		d.end(s.Session)
	}
}

// compressedCopyOwner returns the record whose rollout the compressed copy
// f (beside plain, now gone) holds. The record of the plain name, s (nil
// for none), is, unless a log moved onto the name took it from another
// (displaced): the copy is then routed by its first line, and is the
// record's of the plain name when that is of the copy's session, else the
// record of a log deleted from that name in the copy's session, else none
// (a log of its own). A copy that cannot be routed is s's. Routing costs a
// decompression, which the usual copy (a rollout compressed in place) is
// spared. The names displaced are known while the daemon runs.
func (d *Daemon) compressedCopyOwner(s *state.Source, plain string, f watchers.FileStat) *state.Source {
	a, ok := d.agents[f.Agent]
	if !d.displaced[plain] || !ok {
		return s
	}
	r, err := routeCompressed(a, f.Path)
	if err != nil || r.Session == "" {
		return s
	}
	delete(d.displaced, plain)
	key := sessionKey(f.Agent, r.Session)
	if s != nil && s.Session == key {
		return s
	}
	if d.sessions[key] == nil {
		d.restore(key) // let go of since
	}
	for _, c := range d.sessionSources(key) {
		if c.Missing && c.Path == plain && c.Form == watchers.FormLines {
			return c
		}
	}
	return nil
}

// routeCompressed routes a compressed copy by its first line, when that
// line is whole.
func routeCompressed(a agents.Agent, path string) (watchers.Source, error) {
	r, err := agents.Open(path)
	if err != nil {
		return watchers.Source{}, err
	}
	defer r.Close()
	first, ended, err := agents.ReadFirstLine(r)
	if err != nil || !ended {
		return watchers.Source{}, errors.New("no whole first line")
	}
	return a.Identify(path, first)
}

// toCompressedCopy points a rollout's record at the .zst copy that took
// its place: the copy holds the same lines, read whole in place of what
// the plain file gave.
func (d *Daemon) toCompressedCopy(s *state.Source, zst string) {
	if d.byPath[s.Path] == s {
		delete(d.byPath, s.Path)
	}
	s.Path, s.Form, s.Missing, s.Digest = zst, watchers.FormWhole, false, ""
	d.byPath[zst] = s
}

func (d *Daemon) newSource(f watchers.FileStat, route watchers.Source) *state.Source {
	s := &state.Source{ID: d.nextID, Path: f.Path, Agent: f.Agent, Form: f.Form, Parsed: d.parserVersion(f.Agent)}
	d.nextID++
	d.route(s, route)
	d.srcs[s.ID] = s
	d.byPath[s.Path] = s
	d.index(s)
	return s
}

// route points a source at its session (creating the session record).
func (d *Daemon) route(s *state.Source, r watchers.Source) {
	s.Session, s.Lane, s.ParentSession, s.ChildLane = "", r.Lane, "", r.ChildLane
	if r.Session != "" {
		s.Session = sessionKey(s.Agent, r.Session)
		sess := d.session(s.Session, s.Agent)
		if r.ParentSession != "" {
			s.ParentSession = sessionKey(s.Agent, r.ParentSession)
			sess.Parent, sess.ChildLane = s.ParentSession, r.ChildLane
			d.indexChild(sess)
			d.session(s.ParentSession, s.Agent)
		}
	}
	if d.live(s) {
		d.index(s)
	}
}

// routing is the watchers.Source a parser is made with.
func routing(s *state.Source) watchers.Source {
	r := watchers.Source{Agent: s.Agent, Session: nativeOf(s.Session), Lane: s.Lane, ChildLane: s.ChildLane}
	if s.ParentSession != "" {
		r.ParentSession = nativeOf(s.ParentSession)
	}
	return r
}

// routeChanged reports whether a source's file, read again from its
// current path and first line, routes to another session or lane.
func (d *Daemon) routeChanged(s *state.Source) bool {
	a, ok := d.agents[s.Agent]
	if !ok {
		return false
	}
	first, complete, err := firstLine(s.Path, s.Form)
	if err != nil || !complete {
		return false
	}
	r, err := a.Identify(s.Path, first)
	if err != nil || r.Session == "" {
		return false
	}
	r.Agent = s.Agent
	// As the source's keys hold them (sessionKey): an id that is not one
	// word is a digest there, and would always differ as read.
	r.Session = event.ID(r.Session)
	if r.ParentSession != "" {
		r.ParentSession = event.ID(r.ParentSession)
	}
	return r != routing(s)
}

// moved returns the missing source whose file now sits at f.Path: same
// identity when the OS gives one, same head, and at least as long.
func (d *Daemon) moved(f watchers.FileStat) *state.Source {
	var file *os.File
	heads := map[int]string{}
	defer func() {
		if file != nil {
			file.Close()
		}
	}()
	for _, s := range d.movedCandidates(f.ID) {
		if s.Agent != f.Agent || s.Form == formConversation || s.HeadLen == 0 {
			continue
		}
		id := watchers.FileID{Dev: s.Dev, Ino: s.Ino}
		// A present source is a candidate only with the same identity and
		// its old name no longer holding it (a rename not reported yet;
		// the name may hold another file since, `mv b 0; mv a b`).
		if !s.Missing {
			if !f.ID.Known() || id != f.ID {
				continue
			}
			if fi, err := os.Stat(s.Path); err == nil && watchers.StatID(fi) == id {
				continue // still under its name: this is a second link to it
			}
		}
		if f.ID.Known() && id.Known() && f.ID != id {
			continue
		}
		if !f.ID.Known() && f.Size < s.Offset {
			continue
		}
		if file == nil {
			var err error
			if file, err = watchers.OpenLog(f.Path); err != nil {
				return nil
			}
		}
		h, ok := heads[s.HeadLen]
		if !ok {
			b := make([]byte, s.HeadLen)
			if n, _ := file.ReadAt(b, 0); n == s.HeadLen {
				h = watchers.Fingerprint(b)
			}
			heads[s.HeadLen] = h
		}
		if h == s.HeadHash {
			return s
		}
	}
	return nil
}

// otherName returns the source followed under another name that is the
// file at f.Path itself (same device and inode, and its own name still
// holding it), nil when there is none or the OS gives no identity.
func (d *Daemon) otherName(f watchers.FileStat) *state.Source {
	if !f.ID.Known() {
		return nil
	}
	for _, s := range d.idx.byFileID[f.ID] {
		if s.Path == f.Path || s.Missing || !d.live(s) || s.Agent != f.Agent || (watchers.FileID{Dev: s.Dev, Ino: s.Ino}) != f.ID {
			continue
		}
		if fi, err := os.Stat(s.Path); err == nil && watchers.StatID(fi) == f.ID {
			return s
		}
	}
	return nil
}

// firstLine reads a file's first line, and whether it is complete (ends
// with a newline, or the file is written once).
func firstLine(path, form string) ([]byte, bool, error) {
	if form != watchers.FormLines {
		l, err := agents.FirstLine(path)
		return l, err == nil, err
	}
	f, err := watchers.OpenLog(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	return firstLineOf(f)
}

// firstLineOf is firstLine for an open log of lines, read from its start.
func firstLineOf(f *os.File) ([]byte, bool, error) {
	l, ended, err := agents.ReadFirstLine(io.NewSectionReader(f, 0, 1<<62))
	if !ended {
		return nil, false, nil // not a whole line yet, or not readable now
	}
	return l, err == nil, err
}

func isBlank(line []byte) bool { return len(bytes.TrimSpace(line)) == 0 }

// lastKind is the kind of the last main-lane event of a batch.
func lastKind(evs []event.Event) event.Kind {
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Agent == "" {
			return evs[i].Kind
		}
	}
	return ""
}
