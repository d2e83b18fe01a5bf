package daemon

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/agents"
)

// How privacy.exclude is enforced. The parsers emit no working directory
// (it would be a path outside any repo), so the check happens before a new
// log is routed: the daemon reads the "cwd" field of its first records
// (Claude records carry it at top level, Codex session_meta and
// turn_context in their payload), decoding nothing else. A log whose cwd is
// excluded is never parsed: no source record, no events, no carry-state and
// no session record reach the state database; only the in-memory set of
// skipped paths remembers it, so that it is not sniffed again until its
// identity changes. Its Claude subagent logs and Codex child rollouts carry
// their own cwd and are caught the same way, and so are Codex rollouts'
// compressed copies, read through zstd. A pattern added while running
// (Reconfigure) or between two runs (excludeChanged) forgets the logs
// already kept that it covers, judged one by one as new logs are: their
// events and sources, the session's map written again without them, or
// the whole session (map, events, sources and record) when none of its
// logs is left (purgeExcluded).
//
// A Claude log whose first records name no cwd yet (a summary line, a file
// snapshot) is left unrouted until one does, so no event of it is stored
// before the check. Logs that never name a cwd (Cursor transcripts and
// databases, the oldest Codex JSON) cannot be matched and are followed.

// excludedLog decides, before a new log is routed, whether privacy.exclude
// keeps it out; wait is set when it cannot tell yet (route it later).
func (d *Daemon) excludedLog(f watchers.FileStat, form string) (excluded, wait bool) {
	compressed := isCompressedCopy(f.Path, f.Form)
	if d.opt.Exclude == nil || !compressed && (form != watchers.FormLines || f.Form != watchers.FormLines) {
		return false, false
	}
	cwd, short := agents.SniffCWD(f.Path)
	if cwd == "" {
		return false, short && f.Agent == "claude" && !d.opt.Once && !compressed
	}
	return d.opt.Exclude(cwd), false
}

// isCompressedCopy reports whether a log is a Codex rollout's compressed
// copy (read whole, its lines those of a rollout): privacy.exclude reads
// its cwd as a plain rollout's.
func isCompressedCopy(path, form string) bool {
	return form == watchers.FormWhole && strings.HasSuffix(path, ".zst")
}

// skipExcluded remembers a log kept out by privacy.exclude.
func (d *Daemon) skipExcluded(f watchers.FileStat) {
	if _, seen := d.excluded[f.Path]; !seen {
		d.log.Info("log kept out by privacy.exclude", "component", "daemon", "agent", f.Agent)
	}
	d.excluded[f.Path] = f.ID
}

// keptOutCount is what status counts as kept out: the logs privacy.exclude
// keeps out now, less those of sessions whose records could not be
// forgotten yet (they count once they are).
func (d *Daemon) keptOutCount() int {
	n := len(d.excluded)
	for _, f := range d.unforgotten {
		for _, s := range f.Sources {
			if _, out := d.excluded[s.Path]; out && !s.Missing {
				n--
			}
		}
	}
	return max(n, 0)
}

// isExcluded reports whether a path was kept out and is still the same file.
func (d *Daemon) isExcluded(f watchers.FileStat) bool {
	id, ok := d.excluded[f.Path]
	if !ok {
		return false
	}
	if id == f.ID {
		return true
	}
	delete(d.excluded, f.Path)
	return false
}

// purgeExcluded applies privacy.exclude to what is already kept, log by
// log as a running daemon keeps new logs out: a log whose first records
// now name a covered directory leaves the state with its events, and its
// session's map is written again without it; a session all of whose logs
// are covered is forgotten whole (forgetExcluded: its maps go, then its
// events, sources and record leave the state). It reports false when
// something is left to do at the next start or reload: a log that could
// not be read, a session whose records could not be read back, forgotten
// or whose map could not be removed.
func (d *Daemon) purgeExcluded() (ok bool) {
	if d.opt.Exclude == nil && len(d.unforgotten) == 0 && len(d.pendingExcluded()) == 0 {
		return true
	}
	d.excludeApplied++
	ok = true
	d.commitGroup()
	failed := d.restoreFailed
	d.restoreAll() // a retired session may match now
	if d.restoreFailed != failed {
		ok = false // its records could not be read back: not judged
	}
	// Every map in the store, by session: a covered session's maps go
	// whether or not its record names them (a map written just before a
	// crash, before its record was; maps found after a repair).
	stored, err := d.storedMaps()
	if err != nil {
		d.log.Error("cannot list the maps to remove those of excluded sessions", "component", "daemon", "err", err)
		ok = false
	}
	var all forgetting
	// What was found covered before and is still in the state first: it
	// is out of memory already, and goes whatever the patterns now say
	// (its logs, kept out until now, are met as new ones).
	for _, f := range d.unforgotten {
		all.add(f)
	}
	pending := d.pendingExcluded()
	if d.opt.Exclude != nil || len(pending) > 0 {
		bySession := map[string][]*state.Source{}
		for _, s := range d.srcs {
			if s.Session != "" {
				bySession[s.Session] = append(bySession[s.Session], s)
			}
		}
		for _, key := range d.sessionKeys() {
			srcs := bySession[key]
			var covered []*state.Source
			ids, listed := pending[key]
			whole := listed && len(ids) == 0
			switch {
			case whole:
				covered = srcs
			case listed:
				for _, s := range srcs {
					if slices.Contains(ids, s.ID) {
						covered = append(covered, s)
					}
				}
			}
			if d.opt.Exclude != nil && len(covered) < len(srcs) {
				// The logs not already to go are judged (one gone since
				// cannot be, and need not be when it is to go).
				rest := slices.DeleteFunc(slices.Clone(srcs), func(s *state.Source) bool { return slices.Contains(covered, s) })
				more, sure := d.coveredLogs(rest)
				if !sure {
					ok = false // looked at again: at the next start, or reload
				}
				covered = append(covered, more...)
			}
			if len(covered) > 0 && len(covered) < len(srcs) {
				for _, s := range deletedLogs(srcs) {
					if !slices.Contains(covered, s) {
						covered = append(covered, s)
					}
				}
			}
			switch {
			case len(covered) == 0 && !whole:
				continue
			case len(covered) == len(srcs):
				all.add(state.Forgotten{Session: key, Sources: srcs})
			default:
				all.add(state.Forgotten{Session: key, Sources: covered, OnlySources: true})
			}
		}
	}
	for batch := range slices.Chunk(all.list(), forgetBatch) {
		if !d.forgetExcluded(stored, batch...) {
			ok = false
		}
	}
	return ok
}

// forgetting gathers what a purge forgets, one entry a session: a session
// found covered whole takes in what was to leave of it before, and the
// covered sources of one that stays add up.
type forgetting struct {
	order []string
	by    map[string]state.Forgotten
}

func (g *forgetting) add(f state.Forgotten) {
	if g.by == nil {
		g.by = map[string]state.Forgotten{}
	}
	had, ok := g.by[f.Session]
	if !ok {
		g.order = append(g.order, f.Session)
		g.by[f.Session] = f
		return
	}
	srcs := slices.Clone(had.Sources)
	for _, s := range f.Sources {
		if !slices.ContainsFunc(srcs, func(h *state.Source) bool { return h.ID == s.ID }) {
			srcs = append(srcs, s)
		}
	}
	g.by[f.Session] = state.Forgotten{Session: f.Session, Sources: srcs, OnlySources: had.OnlySources && f.OnlySources}
}

func (g *forgetting) list() []state.Forgotten {
	out := make([]state.Forgotten, 0, len(g.order))
	for _, k := range g.order {
		out = append(out, g.by[k])
	}
	return out
}

// forgetBatch is how many sessions applying privacy.exclude forgets in one
// transaction: each transaction syncs the disk once (a millisecond or
// more), and a pattern added over a long history covers thousands of
// sessions; bounded, so that one transaction's pages stay few.
const forgetBatch = 256

// forgetExcluded forgets sessions privacy.exclude covers, or some of
// their logs (OnlySources): the maps of the sessions forgotten whole go
// (those stored lists by session, and the one each record names), then
// their events, sources and records leave the state in one transaction,
// and their logs on disk are kept out from now on; a session that keeps
// logs is written again in the same transaction, its Gen advanced, and so
// is the parent of a child rollout forgotten, so that their maps are
// written again without what left. The maps go first, for good: a crash
// before the transaction leaves the sessions kept, and forgotten at the
// next start, where a crash between the transaction and the maps' removal
// left maps that no record named any more. A session whose map cannot be
// removed keeps its records until it can be, and one the state cannot
// forget keeps them too; either way what was to leave is let go of here
// (never read or mapped again by this daemon), is tried again whenever the
// patterns are applied (unforgotten), and false is returned.
func (d *Daemon) forgetExcluded(stored map[string][]string, sessions ...state.Forgotten) bool {
	ok := true
	var maps []string
	var of []int // the session of each map
	for i, f := range sessions {
		if f.OnlySources {
			continue // its map is written again without them
		}
		rels := stored[f.Session]
		if sess := d.sessions[f.Session]; sess != nil && sess.Flush != nil && sess.Flush.Path != "" && !slices.Contains(rels, sess.Flush.Path) {
			rels = append(rels, sess.Flush.Path)
		}
		for _, rel := range rels {
			maps = append(maps, rel)
			of = append(of, i)
		}
	}
	kept := make([]bool, len(sessions)) // a map of it may still be there
	if stored == nil {
		// The store could not be listed: maps its record does not name
		// may be left, so its records stay to find them by next time.
		for i, f := range sessions {
			kept[i] = !f.OnlySources
		}
		ok = !slices.Contains(kept, true)
	}
	for j, err := range d.store.RemoveMany(maps) {
		if err != nil {
			d.log.Error("cannot remove the map of an excluded session; its records are kept until it can be", "component", "daemon", "err", err)
			kept[of[j]], ok = true, false
		}
	}
	gone := make([]state.Forgotten, 0, len(sessions))
	var rewritten []*state.Session // in memory; their copies in gone, when gone
	for i, f := range sessions {
		if f.OnlySources {
			// Its map goes if nothing of it is left to map (the logs
			// it keeps give no event), as a session's whose events
			// moved away does.
			d.vacated[f.Session] = true
		}
		rw := d.rewrittenWithout(f)
		for _, sess := range rw {
			if !slices.Contains(rewritten, sess) {
				rewritten = append(rewritten, sess)
			}
		}
		if kept[i] {
			continue
		}
		f.Rewrite = nil
		for _, sess := range rw {
			c := *sess
			c.Gen++
			f.Rewrite = append(f.Rewrite, &c)
		}
		gone = append(gone, f)
	}
	inState := len(gone) > 0
	if inState {
		if err := forgetInState(d.db, gone...); err != nil {
			d.log.Error("cannot forget excluded sessions; they are kept out until they can be", "component", "daemon", "sessions", len(gone), "err", err)
			inState, ok = false, false
		} else {
			d.notifySink() // what the team database has of them goes
		}
	}
	// In memory whether or not the state could forget them: what leaves
	// is let go of below, and the maps are written without it now.
	for _, sess := range rewritten {
		sess.Gen++
		d.mark(sess.Key)
	}
	before := len(d.unforgotten)
	for i, f := range sessions {
		done := inState && !kept[i]
		if done {
			delete(d.unforgotten, f.Session)
		} else {
			if had, ok := d.unforgotten[f.Session]; ok {
				var g forgetting
				g.add(had)
				g.add(f)
				f = g.by[f.Session]
			}
			d.unforgotten[f.Session] = f
		}
		if f.OnlySources {
			d.forgottenLogs(f.Session, f.Sources, done)
		} else {
			d.forgotten(f.Session, f.Sources, done)
		}
	}
	if len(d.unforgotten) != before || len(d.unforgotten) > 0 {
		d.recordUnforgotten()
	}
	if len(d.unforgotten) > 0 {
		d.unforgottenAt = d.opt.Clock.Now().Add(unforgottenRetry)
	}
	d.rewriteNow(rewritten)
	return ok
}

// rewriteNow writes at once the maps of sessions that lost logs or a
// child's lane to privacy.exclude, rather than when they are next due (a
// quarter of an hour later, or more): until then the map in the store, and
// what a sink or an export takes of it, still hold what left. A map that
// cannot be written now is removed instead, and written when its session's
// flush is tried again.
func (d *Daemon) rewriteNow(sessions []*state.Session) {
	var keys []string
	for _, sess := range sessions {
		if d.sessions[sess.Key] == sess { // not forgotten whole since
			keys = append(keys, sess.Key)
		}
	}
	if len(keys) == 0 {
		return
	}
	// None is let go of meanwhile: this may run between two files of
	// one update (a deleted log back where a pattern keeps it out), and
	// a session let go of there would have its next file read as new.
	held := d.holdRetire
	d.holdRetire = true
	d.flushMany(context.Background(), keys)
	d.recordFlushes()
	d.holdRetire = held
	var stale []string
	for _, key := range keys {
		// Not written (a failed write, a builder that gave up): its map
		// still holds what left.
		if sess := d.sessions[key]; sess != nil && sess.Dirty() {
			stale = append(stale, d.previousMaps(sess)...)
		}
	}
	for _, err := range d.store.RemoveMany(stale) {
		if err != nil {
			d.log.Error("cannot remove a map that still holds logs privacy.exclude covers", "component", "daemon", "err", err)
		}
	}
}

// rewrittenWithout returns the sessions whose maps change when f leaves
// the state: the session itself when it keeps logs, and the parent whose
// map holds its lane.
func (d *Daemon) rewrittenWithout(f state.Forgotten) []*state.Session {
	var out []*state.Session
	sess := d.sessions[f.Session]
	if sess == nil {
		sess, _ = d.restore(f.Session)
	}
	if sess == nil {
		return nil // let go of already: nothing of it is in memory
	}
	if f.OnlySources {
		out = append(out, sess)
	}
	if sess.Parent != "" {
		parent := d.sessions[sess.Parent]
		if parent == nil {
			parent, _ = d.restore(sess.Parent)
		}
		if parent != nil {
			out = append(out, parent)
		}
	}
	return out
}

// unforgottenRetry is how long a following daemon waits before it tries
// again to forget the sessions it could not (a variable for the tests).
var unforgottenRetry = time.Minute

// retryUnforgotten tries again, when due, to forget the sessions that
// privacy.exclude covers and that could not be forgotten: a daemon that
// follows need not wait for a reload or a restart. It forgets only them;
// the patterns' key is stored by the next full application (a reload, or
// the next start).
func (d *Daemon) retryUnforgotten() {
	if len(d.unforgotten) == 0 || d.opt.Clock.Now().Before(d.unforgottenAt) {
		return
	}
	stored, err := d.storedMaps()
	if err != nil {
		d.log.Error("cannot list the maps to remove those of excluded sessions", "component", "daemon", "err", err)
		stored = nil
	}
	d.commitGroup()
	d.forgetExcluded(stored, slices.Collect(maps.Values(d.unforgotten))...)
}

// recordUnforgotten keeps in the state the keys of the sessions still to
// forget (SettingExcludePending), each with the ids of its sources when
// only they are to leave, so that the next start forgets them even when
// their logs are gone by then and could not tell it they are covered.
// When that cannot be written either (the disk that failed the forget), the
// next start judges them by their logs again.
func (d *Daemon) recordUnforgotten() {
	lines := make([]string, 0, len(d.unforgotten))
	for _, key := range slices.Sorted(maps.Keys(d.unforgotten)) {
		f := d.unforgotten[key]
		if !f.OnlySources {
			lines = append(lines, key)
			continue
		}
		ids := make([]string, 0, len(f.Sources))
		for _, s := range f.Sources {
			ids = append(ids, strconv.FormatUint(s.ID, 10))
		}
		lines = append(lines, key+"\t"+strings.Join(ids, " "))
	}
	if err := d.db.PutSetting(state.SettingExcludePending, strings.Join(lines, "\n")); err != nil {
		d.log.Error("cannot record which excluded sessions are still to forget", "component", "daemon", "err", err)
	}
}

// pendingExcluded is what an earlier run found covered and could not
// forget (recordUnforgotten): by session key, the ids of the sources to
// forget, none for the whole session.
func (d *Daemon) pendingExcluded() map[string][]uint64 {
	v, err := d.db.Setting(state.SettingExcludePending)
	if err != nil || v == "" {
		return nil
	}
	out := map[string][]uint64{}
	for _, line := range strings.Split(v, "\n") {
		key, list, partial := strings.Cut(line, "\t")
		if !partial {
			out[key] = nil
			continue
		}
		var ids []uint64
		for _, f := range strings.Fields(list) {
			if id, err := strconv.ParseUint(f, 10, 64); err == nil {
				ids = append(ids, id)
			}
		}
		if len(ids) > 0 {
			out[key] = append(out[key], ids...)
		} else if _, had := out[key]; !had {
			out[key] = nil // unreadable: the whole session, to be safe
		}
	}
	return out
}

// forgetLogNow forgets a log found covered outside a purge (back where
// privacy.exclude keeps it out), with the session's deleted logs
// (deletedLogs): its session with them when they are all it has, else
// they alone, the session's map written again without them.
func (d *Daemon) forgetLogNow(s *state.Source) {
	srcs := d.sourcesOf(s.Session)
	if !slices.Contains(srcs, s) {
		srcs = append(srcs, s)
	}
	covered := []*state.Source{s}
	for _, o := range deletedLogs(srcs) {
		if o != s {
			covered = append(covered, o)
		}
	}
	if len(covered) < len(srcs) {
		d.forgetExcludedNow(state.Forgotten{Session: s.Session, Sources: covered, OnlySources: true})
		return
	}
	d.forgetExcludedNow(state.Forgotten{Session: s.Session, Sources: srcs})
}

// forgetExcludedNow forgets what privacy.exclude covers found outside a
// purge (a log back where privacy.exclude keeps it out). When that cannot be
// done, the patterns' key kept in the state is cleared, so that the next
// start applies them again whatever this daemon does before it stops.
func (d *Daemon) forgetExcludedNow(f state.Forgotten) {
	if had, ok := d.unforgotten[f.Session]; ok {
		// What could not be forgotten of it before goes too: forgotten
		// alone, f would take the session's entry with it.
		var g forgetting
		g.add(had)
		g.add(f)
		f = g.by[f.Session]
	}
	agent, native, _ := strings.Cut(f.Session, "/")
	var stored map[string][]string // nil: not listed
	if rels, err := d.store.MapsOf(agent, native); err != nil {
		d.log.Error("cannot list the maps of an excluded session", "component", "daemon", "err", err)
	} else {
		stored = map[string][]string{f.Session: rels}
	}
	if d.forgetExcluded(stored, f) {
		return
	}
	if err := d.db.PutSetting(state.SettingExcludeKey, ""); err != nil {
		d.log.Error("cannot record that privacy.exclude is to be applied again", "component", "daemon", "err", err)
	}
}

// forgetInState is state.DB.Forget; a variable so that a test can make it
// fail.
var forgetInState = (*state.DB).Forget

// forgotten lets go of what the daemon held of an excluded session, which
// the state has forgotten (inState) or will at the next attempt. (A
// parent whose map held its lane was marked by forgetExcluded.)
func (d *Daemon) forgotten(key string, srcs []*state.Source, inState bool) {
	agent := ""
	sess := d.sessions[key]
	d.keepOut(srcs)
	d.letGo(key, srcs)
	delete(d.sessions, key)
	delete(d.retry, key)
	if !inState {
		return
	}
	if sess != nil {
		agent = sess.Agent
	}
	d.log.Info("session forgotten: privacy.exclude now covers it", "component", "daemon", "agent", agent)
}

// forgottenLogs lets go of the logs of a session that privacy.exclude
// covers while the session keeps others: their records and held events
// go, and the files are kept out from now on. The session was marked by
// forgetExcluded, to be written again from the logs it keeps.
func (d *Daemon) forgottenLogs(key string, srcs []*state.Source, inState bool) {
	d.keepOut(srcs)
	if d.holding() {
		// Its held events are those of every source or none.
		d.letGo(key, d.sourcesOf(key))
	}
	d.letGo(key, srcs)
	if !inState {
		return
	}
	agent := ""
	if sess := d.sessions[key]; sess != nil {
		agent = sess.Agent
	}
	d.log.Info("logs of a session forgotten: privacy.exclude now covers them; its map is written again without them", "component", "daemon",
		"agent", agent, "logs", len(srcs))
}

// keepOut drops the records of logs privacy.exclude covers from memory and
// keeps their files out while they stay the same.
func (d *Daemon) keepOut(srcs []*state.Source) {
	for _, s := range srcs {
		delete(d.srcs, s.ID)
		if d.byPath[s.Path] == s { // a deleted log's name may be another log's since
			delete(d.byPath, s.Path)
			d.forgetDB(s.Path)
		}
		delete(d.parsers, s.ID)
		if !s.Missing {
			d.excluded[s.Path] = watchers.FileID{Dev: s.Dev, Ino: s.Ino}
		}
	}
}

// excludeChanged applies privacy.exclude patterns that differ from those
// the records were last made to agree with (ExcludeKey, kept in the state
// database) to what is kept, as a reload into a running daemon does: a
// pattern added while the daemon was stopped, then `run` or `scan`,
// forgets the sessions it covers too. Applying them reads the first lines
// of every kept log; unchanged patterns cost nothing at start. The key is
// recorded once every session was looked at and every covered one
// forgotten, so a failure, or a log that could not be read, is looked at
// again at the next start.
func (d *Daemon) excludeChanged() {
	stored, err := d.db.Setting(state.SettingExcludeKey)
	if err != nil {
		d.log.Error("cannot read which privacy.exclude the records agree with; applying it", "component", "daemon", "err", err)
	} else if stored == d.storedExcludeKey() && len(d.pendingExcluded()) == 0 {
		return
	}
	if d.opt.Exclude != nil {
		d.log.Info("privacy.exclude changed since the last run; applying it to the sessions kept", "component", "daemon",
			"sessions", d.sessionCount())
	}
	d.agreeWithExclude()
}

// agreeWithExclude forgets what privacy.exclude covers and records the
// patterns' key when that is done.
func (d *Daemon) agreeWithExclude() {
	if !d.purgeExcluded() {
		return
	}
	if len(d.pendingExcluded()) > 0 { // forgotten now, every one
		if err := d.db.PutSetting(state.SettingExcludePending, ""); err != nil {
			d.log.Error("cannot record that no excluded session is left to forget", "component", "daemon", "err", err)
			return
		}
	}
	if err := d.db.PutSetting(state.SettingExcludeKey, d.storedExcludeKey()); err != nil {
		d.log.Error("cannot record which privacy.exclude the records agree with", "component", "daemon", "err", err)
	}
}

// storedExcludeKey is what the state database keeps of ExcludeKey: hashed
// again with a random salt of this database, so that a guess at a pattern
// cannot be checked against the file ("" for no patterns, or when the salt
// cannot be had: the patterns are then applied at every start).
func (d *Daemon) storedExcludeKey() string {
	if d.opt.ExcludeKey == "" {
		return ""
	}
	salt, err := d.db.Setting(state.SettingSalt)
	if err == nil && salt == "" {
		var b [16]byte
		rand.Read(b[:])
		salt = hex.EncodeToString(b[:])
		err = d.db.PutSetting(state.SettingSalt, salt)
	}
	if err != nil {
		d.log.Error("cannot keep the salt of the privacy.exclude key", "component", "daemon", "err", err)
		return ""
	}
	sum := sha256.Sum256([]byte(salt + "\x00" + d.opt.ExcludeKey))
	return hex.EncodeToString(sum[:16])
}

// coveredLogs returns a session's logs still on disk whose first records
// name an excluded cwd; sure is false when a log not known to be deleted
// could not be read (moved away or on a root not mounted while the daemon
// was stopped: it may come back, and its record would take it up without
// a look at its cwd).
func (d *Daemon) coveredLogs(srcs []*state.Source) (covered []*state.Source, sure bool) {
	sure = true
	for _, s := range srcs {
		if s.Missing || s.Form != watchers.FormLines && !isCompressedCopy(s.Path, s.Form) {
			continue
		}
		fi, err := os.Stat(s.Path)
		if err != nil {
			sure = false
			continue
		}
		if id, now := (watchers.FileID{Dev: s.Dev, Ino: s.Ino}), watchers.StatID(fi); id.Known() && now.Known() && id != now {
			// Another file under its name since (a log moved onto it):
			// that file's cwd is not this session's. The walk finds
			// where this record's file went, or that it is gone.
			continue
		}
		if cwd, _ := agents.SniffCWD(s.Path); cwd != "" && d.opt.Exclude(cwd) {
			covered = append(covered, s)
		}
	}
	if len(covered) > 0 {
		covered = append(covered, deletedLogs(srcs)...)
	}
	return covered, sure
}

// deletedLogs returns the logs of a session known to be deleted. Their
// events stay, but their first records cannot be read any more: when
// another log of the session is covered, they go with it (a session's logs
// mostly name one directory, and what cannot be told is not kept).
func deletedLogs(srcs []*state.Source) []*state.Source {
	var out []*state.Source
	for _, s := range srcs {
		if s.Missing {
			out = append(out, s)
		}
	}
	return out
}
