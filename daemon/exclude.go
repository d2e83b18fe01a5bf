package daemon

import (
	"bufio"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"maps"
	"os"
	"slices"
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
// (Reconfigure) or between two runs (excludeChanged) forgets the sessions
// already kept that it covers: map, events, sources and record
// (purgeExcluded).
//
// A Claude log whose first records name no cwd yet (a summary line, a file
// snapshot) is left unrouted until one does, so no event of it is stored
// before the check. Logs that never name a cwd (Cursor transcripts and
// databases, the oldest Codex JSON) cannot be matched and are followed.

// sniffLines and sniffLineMax bound the read: the cwd comes with the first
// user or session record.
const (
	sniffLines   = 64
	sniffLineMax = 1 << 20
)

// sniffCWD returns the first cwd named in a log's first complete lines and
// whether the file holds fewer complete lines than were looked at (more may
// come).
func sniffCWD(path string) (cwd string, short bool) {
	f, err := agents.Open(path) // a Codex rollout's compressed copy is read through zstd
	if err != nil {
		return "", true
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	for n := 0; n < sniffLines; n++ {
		line, ok := readBounded(br)
		if !ok {
			return "", true
		}
		if line == nil {
			continue // over the bound: no record worth decoding
		}
		var rec struct {
			CWD     string `json:"cwd"`
			Payload struct {
				CWD string `json:"cwd"`
			} `json:"payload"`
		}
		if json.Unmarshal(line, &rec) != nil {
			continue
		}
		if rec.CWD != "" {
			return rec.CWD, false
		}
		if rec.Payload.CWD != "" {
			return rec.Payload.CWD, false
		}
	}
	return "", false
}

// readBounded reads one complete line; a line over sniffLineMax comes back
// nil (and ok). ok is false at the end of the complete lines.
func readBounded(br *bufio.Reader) (line []byte, ok bool) {
	var buf []byte
	over := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !over {
			if len(buf)+len(chunk) > sniffLineMax {
				over, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case err == nil:
			if over {
				return nil, true
			}
			return buf, true
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, false
		}
	}
}

// excludedLog decides, before a new log is routed, whether privacy.exclude
// keeps it out; wait is set when it cannot tell yet (route it later).
func (d *Daemon) excludedLog(f watchers.FileStat, form string) (excluded, wait bool) {
	compressed := isCompressedCopy(f.Path, f.Form)
	if d.opt.Exclude == nil || !compressed && (form != watchers.FormLines || f.Form != watchers.FormLines) {
		return false, false
	}
	cwd, short := sniffCWD(f.Path)
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
		d.excludedCount++
		d.log.Info("log kept out by privacy.exclude", "component", "daemon", "agent", f.Agent)
	}
	d.excluded[f.Path] = f.ID
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

// purgeExcluded applies privacy.exclude to what is already kept: a session
// whose log now matches is forgotten (forgetExcluded: its maps go, then
// its events, sources and record leave the state). It reports false when
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
	var covered []state.Forgotten
	forget := func() {
		if !d.forgetExcluded(stored, covered...) {
			ok = false
		}
		covered = covered[:0]
	}
	// Sessions covered before whose records are still there first: they
	// are out of memory already, and go whatever the patterns now say
	// (their logs, kept out until now, are met as new ones).
	for _, f := range d.unforgotten {
		if covered = append(covered, f); len(covered) == forgetBatch {
			forget()
		}
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
			excluded, sure := pending[key], true
			if !excluded && d.opt.Exclude != nil {
				excluded, sure = d.sessionExcluded(srcs)
			}
			if !sure {
				ok = false // looked at again: at the next start, or reload
			}
			if !excluded {
				continue
			}
			if covered = append(covered, state.Forgotten{Session: key, Sources: srcs}); len(covered) == forgetBatch {
				forget()
			}
		}
	}
	if len(covered) > 0 {
		forget()
	}
	return ok
}

// forgetBatch is how many sessions applying privacy.exclude forgets in one
// transaction: each transaction syncs the disk once (a millisecond or
// more), and a pattern added over a long history covers thousands of
// sessions; bounded, so that one transaction's pages stay few.
const forgetBatch = 256

// forgetExcluded forgets sessions privacy.exclude covers: their maps go
// (those stored lists by session, and the one each record names), then
// their events, sources and records leave the state in one transaction,
// and their logs on disk are kept out from now on. The maps go first, for
// good: a crash before the transaction leaves the sessions kept, and
// forgotten at the next start, where a crash between the transaction and
// the maps' removal left maps that no record named any more. A session
// whose map cannot be removed keeps its records until it can be, and one
// the state cannot forget keeps them too; either way it is let go of here
// (never read or mapped again by this daemon), is tried again whenever the
// patterns are applied (unforgotten), and false is returned.
func (d *Daemon) forgetExcluded(stored map[string][]string, sessions ...state.Forgotten) bool {
	ok := true
	var maps []string
	var of []int // the session of each map
	for i, f := range sessions {
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
		for i := range kept {
			kept[i] = true
		}
		ok = false
	}
	for j, err := range d.store.RemoveMany(maps) {
		if err != nil {
			d.log.Error("cannot remove the map of an excluded session; its records are kept until it can be", "component", "daemon", "err", err)
			kept[of[j]], ok = true, false
		}
	}
	gone := make([]state.Forgotten, 0, len(sessions))
	for i, f := range sessions {
		if !kept[i] {
			gone = append(gone, f)
		}
	}
	inState := len(gone) > 0
	if inState {
		if err := forgetInState(d.db, gone...); err != nil {
			d.log.Error("cannot forget excluded sessions; they are kept out until they can be", "component", "daemon", "sessions", len(gone), "err", err)
			inState, ok = false, false
		}
	}
	before := len(d.unforgotten)
	for i, f := range sessions {
		if inState && !kept[i] {
			delete(d.unforgotten, f.Session)
		} else {
			d.unforgotten[f.Session] = f
		}
		d.forgotten(f.Session, f.Sources, inState && !kept[i])
	}
	if len(d.unforgotten) != before || len(d.unforgotten) > 0 {
		d.recordUnforgotten()
	}
	if len(d.unforgotten) > 0 {
		d.unforgottenAt = d.opt.Clock.Now().Add(unforgottenRetry)
	}
	return ok
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
// forget (SettingExcludePending), so that the next start forgets them even
// when their logs are gone by then and could not tell it they are covered.
// When that cannot be written either (the disk that failed the forget), the
// next start judges them by their logs again.
func (d *Daemon) recordUnforgotten() {
	keys := slices.Sorted(maps.Keys(d.unforgotten))
	if err := d.db.PutSetting(state.SettingExcludePending, strings.Join(keys, "\n")); err != nil {
		d.log.Error("cannot record which excluded sessions are still to forget", "component", "daemon", "err", err)
	}
}

// pendingExcluded is the set of sessions an earlier run found covered and
// could not forget (recordUnforgotten).
func (d *Daemon) pendingExcluded() map[string]bool {
	v, err := d.db.Setting(state.SettingExcludePending)
	if err != nil || v == "" {
		return nil
	}
	out := map[string]bool{}
	for _, k := range strings.Split(v, "\n") {
		out[k] = true
	}
	return out
}

// forgetExcludedNow forgets one session found covered outside a purge (a
// log of it back where privacy.exclude keeps it out). When that cannot be
// done, the patterns' key kept in the state is cleared, so that the next
// start applies them again whatever this daemon does before it stops.
func (d *Daemon) forgetExcludedNow(f state.Forgotten) {
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
// the state has forgotten (inState) or will at the next attempt.
func (d *Daemon) forgotten(key string, srcs []*state.Source, inState bool) {
	agent := ""
	sess := d.sessions[key]
	for _, s := range srcs {
		delete(d.srcs, s.ID)
		if d.byPath[s.Path] == s { // a deleted log's name may be another log's since
			delete(d.byPath, s.Path)
		}
		delete(d.parsers, s.ID)
		if !s.Missing {
			d.excluded[s.Path] = watchers.FileID{Dev: s.Dev, Ino: s.Ino}
		}
	}
	if sess != nil && sess.Parent != "" {
		// A child rollout is a lane of its parent's map: the parent's
		// map is written again without it.
		parent := d.sessions[sess.Parent]
		if parent == nil {
			parent, _ = d.restore(sess.Parent)
		}
		if parent != nil {
			parent.Gen++
			d.mark(parent.Key)
		}
	}
	d.letGo(key, srcs)
	delete(d.sessions, key)
	delete(d.retry, key)
	if !inState {
		return
	}
	d.excludedCount++
	if sess != nil {
		agent = sess.Agent
	}
	d.log.Info("session forgotten: privacy.exclude now covers it", "component", "daemon", "agent", agent)
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

// sessionExcluded reports whether one of a session's logs still on disk
// names an excluded cwd first; sure is false when a log not known to be
// deleted could not be read (moved away or on a root not mounted while the
// daemon was stopped: it may come back, and its record would take it up
// without a look at its cwd).
func (d *Daemon) sessionExcluded(srcs []*state.Source) (excluded, sure bool) {
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
		if cwd, _ := sniffCWD(s.Path); cwd != "" && d.opt.Exclude(cwd) {
			return true, true
		}
	}
	return false, sure
}
