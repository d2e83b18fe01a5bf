package watchers

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/agentmap/agentmap/internal/regular"
	"github.com/fsnotify/fsnotify"
)

// FileStat is what a scan learns of one log file: stat only, no reads.
type FileStat struct {
	Path  string
	Agent string
	Form  string
	// Archived is set for a file in an agent's archive (a finished session).
	Archived bool
	// Gone is set when the file is no longer there.
	Gone bool
	// Unlisted is set on a directory under a root that the walk could not
	// list (its permissions, an I/O error): Path is the directory, Agent
	// its root's, and the logs under it are neither found nor gone until
	// it can be listed again. A daemon must say so, not take the logs it
	// knew there for deleted or leave a scan's maps silently short.
	Unlisted bool
	// Denied is set with Unlisted when the listing was refused for its
	// permissions, so that the daemon can say why without a second try.
	Denied  bool
	Size    int64
	ModTime time.Time
	ID      FileID
	// Wal describes the -wal file beside a SQLite database (writes land
	// there first; for OpenCode's JSON store, its message files); nil for
	// a log. A pointer, so that the slot of every other file does not
	// carry it: a catch-up's walk holds one slot a log (112 bytes, where
	// the WAL's size and time inline made 144).
	Wal *WalStat
}

// WalStat is the size and time of what a database writes beside it.
type WalStat struct {
	Size    int64
	ModTime time.Time
}

// WalOf returns the WAL's size and time, zero without one.
func (f FileStat) WalOf() (int64, time.Time) {
	if f.Wal == nil {
		return 0, time.Time{}
	}
	return f.Wal.Size, f.Wal.ModTime
}

func (a FileStat) same(b FileStat) bool {
	aws, awm := a.WalOf()
	bws, bwm := b.WalOf()
	return a.Size == b.Size && a.ModTime.Equal(b.ModTime) && a.ID == b.ID &&
		aws == bws && awm.Equal(bwm) && a.Gone == b.Gone
}

// Update is one batch of changes from the watcher. Full is set when the
// batch ends a rescan: every file present was seen (listed), so a known
// file missing from it is gone. Not every file was stat'ed: in a directory
// with a live watch the logs are stat'ed in turns (see statEvery).
type Update struct {
	Files []FileStat
	Full  bool
}

// WatchOptions tune a Watcher. Zero values take the defaults.
type WatchOptions struct {
	Debounce time.Duration // quiet time gathering events before a scan (250 ms)
	Rescan   time.Duration // rescan period, the safety net under notifications (60 s)
	// MaxWatches caps the watch cost: one per directory, plus one per
	// entry where the backend opens a descriptor for every file of a
	// watched directory (kqueue: macOS, BSD) (4096).
	MaxWatches int
	Clock      Clock
	Logger     *slog.Logger
}

// Watcher finds log files under the roots and reports changes: fsnotify on
// directories is the hint, a periodic stat rescan the truth (and the
// fallback when events overflow or a watch fails). One goroutine (Run) owns
// all of its state; results leave over a channel of capacity one, changes
// coalescing while the consumer is busy.
type Watcher struct {
	roots []Root
	opt   WatchOptions
	out   chan Update
	log   *slog.Logger

	known   map[string]*knownFile
	kinds   []fileKind        // the agents and forms of known files (knownFile.kind)
	watched map[string]watch  // directory (as seen under its root) → its watch
	byReal  map[string]string // resolved directory watched → the directory under its root
	// moreNames are the other names a resolved directory is watched under
	// (one directory given as the roots of two agents, under two names):
	// its events are named under each.
	moreNames map[string][]string
	dirs      map[dirKey]string // resolved directory, layout → the one name it is walked under
	used      int
	perFile   bool // kqueue: every entry of a watched directory costs a descriptor
	capped    bool // this walk met the watch cap
	failed    bool // this walk failed to watch a directory
	// missed counts the directories this walk could not watch, missedWhy
	// (of rank missedRank) says the main reason; problem is Problem's
	// answer, notifyErr why no notifier could be made at all.
	missed     int
	missedWhy  string
	missedRank int
	logged     string // the reason the log last gave, "" when none
	problem    atomic.Pointer[string]
	notifyErr  error
	fsw        *fsnotify.Watcher
	pending    map[string]FileStat
	full       bool
	warned     map[string]bool // roots and loops said once already
	// listings are the directories' entries as the rescans last read
	// them, for each layout that walks them (a form is a layout's: one
	// directory given as the roots of two agents has a listing for each);
	// sweeps counts the rescans; complete makes the next one stat every
	// log (notifications were lost).
	listings map[listingKey]*listing
	sweeps   int
	complete bool
	stamped  int // known records stamped by the current rescan (stamp)
	// emit, in a one-shot walk (Scan, Walk), is handed the logs met; it
	// returns false to end the walk. Such a walk is never compared with a
	// later one, so it keeps no record of them (known, pending) and no
	// listing, which took some 500 bytes a log beside the walk itself.
	emit    func(FileStat) bool
	stopped bool // emit ended the walk
	// pathOrder makes a one-shot walk meet the logs in path order (see
	// WalkInPathOrder); followAs are then the directories its first walk
	// met more than once or entered through a link (metAgain), with the
	// one name each is walked under.
	pathOrder bool
	metAgain  map[dirKey]struct{}
	followAs  map[dirKey]*followedDir
	// rewalk are the names followed of directories that came back under
	// another name while not watched (see claim), walked after the
	// events' paths.
	rewalk []rootDir
}

// dirKey is a directory as a walk claims it: resolved, and for the
// layout of the root it is reached from (one directory given as the roots
// of two agents is read by both).
type dirKey struct {
	real, layout string
}

// rootDir is a directory under one of the roots.
type rootDir struct {
	r   Root
	dir string
}

// followedDir is a directory the first walk of WalkInPathOrder met under
// more than one name (or twice under one), or entered through a link: the
// name it is walked under and whether the second walk has walked it.
type followedDir struct {
	name   string
	walked bool
}

// watch is one directory watch: its cost against MaxWatches and the
// resolved directory it is placed on (a symlinked directory is watched
// where it points; events are named back under the root).
type watch struct {
	cost int
	real string
}

// NewWatcher returns a watcher over roots.
func NewWatcher(roots []Root, opt WatchOptions) *Watcher {
	if opt.Debounce <= 0 {
		opt.Debounce = 250 * time.Millisecond
	}
	if opt.Rescan <= 0 {
		opt.Rescan = time.Minute
	}
	if opt.MaxWatches <= 0 {
		opt.MaxWatches = 4096
	}
	if opt.Clock == nil {
		opt.Clock = SystemClock{}
	}
	log := opt.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Watcher{
		roots: UniqueRoots(roots), opt: opt, out: make(chan Update, 1), log: log.With("component", "watch"),
		known: map[string]*knownFile{}, watched: map[string]watch{}, byReal: map[string]string{},
		dirs: map[dirKey]string{}, warned: map[string]bool{}, pending: map[string]FileStat{},
		listings: map[listingKey]*listing{},
		perFile:  kqueue(runtime.GOOS),
	}
}

// Updates is where changes arrive.
func (w *Watcher) Updates() <-chan Update { return w.out }

// Problem says why file notifications do not cover every directory
// followed (a limit reached), "" while they do: a new log there is found
// by the next rescan instead of at once. Every rescan tries the
// directories not watched again, and the problem clears once all are
// watched. Safe from any goroutine.
func (w *Watcher) Problem() string {
	if p := w.problem.Load(); p != nil {
		return *p
	}
	return ""
}

// unwatched notes a directory this walk could not watch and why (err nil:
// agentmap's own cap). A limit named outranks the cap, which outranks a
// failure of another kind, so that the problem names what to raise.
func (w *Watcher) unwatched(err error) {
	w.missed++
	why, rank := "", 0
	switch limit := watchLimit(err); {
	case err == nil:
		why, rank = fmt.Sprintf("agentmap's cap on directory watches (%d) is reached", w.opt.MaxWatches), 2
	case limit != "":
		why, rank = limit, 3
	default:
		why, rank = "a directory could not be watched ("+err.Error()+")", 1
	}
	if rank > w.missedRank {
		w.missedWhy, w.missedRank = why, rank
	}
	if w.Problem() == "" {
		w.tellProblem(false) // at once, not at the end of the walk
	}
}

// tellProblem publishes (and logs when it changes) what the directories
// not watched come to; with none, that notifications cover every
// directory again. Before the walk is done (done false) their number is
// not known yet, and is not said.
func (w *Watcher) tellProblem(done bool) {
	p := ""
	if w.missed > 0 {
		unwatched := "some directories"
		if done {
			unwatched = plural(w.missed, "directory", "directories")
		}
		p = fmt.Sprintf("%s: %s not watched; new logs there are found by the rescans", w.missedWhy, unwatched)
		if w.fsw == nil {
			p = w.missedWhy + ": no directory is watched until the daemon starts again; new logs are found by the rescans"
		}
	}
	// Logged once a walk is done, when its reason is not the one logged
	// last (the count a walk half done has is no count to give).
	switch {
	case done && p != "" && w.missedWhy != w.logged:
		w.logged = w.missedWhy
		w.log.Warn("file notifications limited; relying on rescans", "why", w.missedWhy, "unwatched", w.missed)
	case done && p == "" && w.logged != "":
		w.logged = ""
		w.log.Info("file notifications cover every directory followed again")
	}
	w.problem.Store(&p)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// Run watches until ctx is done.
func (w *Watcher) Run(ctx context.Context) error {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		// Not even one notifier (the instance limit): the rescans do all.
		w.notifyErr = err
	} else {
		w.fsw = fsw
		defer fsw.Close()
	}
	var events chan fsnotify.Event
	var errs chan error
	if w.fsw != nil {
		events, errs = w.fsw.Events, w.fsw.Errors
	}
	w.fullScan()
	nextRescan := w.opt.Clock.Now().Add(w.opt.Rescan)
	dirty := map[string]bool{}
	var debounceAt time.Time
	for {
		var send chan Update
		var upd Update
		if len(w.pending) > 0 || w.full {
			send, upd = w.out, w.collect()
		}
		now := w.opt.Clock.Now()
		wake := nextRescan
		if !debounceAt.IsZero() && debounceAt.Before(wake) {
			wake = debounceAt
		}
		select {
		case <-ctx.Done():
			return nil
		case send <- upd:
			w.pending, w.full = map[string]FileStat{}, false
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			for _, name := range w.underRoot(ev.Name) {
				dirty[name] = true
				if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
					dirty[filepath.Dir(name)] = true
				}
			}
			if debounceAt.IsZero() {
				// The clock read before select may be long past.
				debounceAt = w.opt.Clock.Now().Add(w.opt.Debounce)
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			// Overflow or a failed watch: the scan takes over at once.
			w.log.Warn("file notifications lost; rescanning", "err", err)
			nextRescan = w.opt.Clock.Now()
			w.complete = true
		case <-w.opt.Clock.After(wake.Sub(now)):
			now = w.opt.Clock.Now()
			if !debounceAt.IsZero() && !now.Before(debounceAt) {
				w.scanPaths(dirty)
				dirty, debounceAt = map[string]bool{}, time.Time{}
			}
			if !now.Before(nextRescan) {
				w.fullScan()
				nextRescan = now.Add(w.opt.Rescan)
			}
		}
	}
}

// collect turns the pending changes into an update, in path order.
func (w *Watcher) collect() Update {
	u := Update{Full: w.full, Files: make([]FileStat, 0, len(w.pending))}
	for _, fs := range w.pending {
		u.Files = append(u.Files, fs)
	}
	sort.Slice(u.Files, func(i, j int) bool { return u.Files[i].Path < u.Files[j].Path })
	return u
}

// knownFile is a log the watcher knows, stamped with the last rescan that
// saw it (so a rescan finds the vanished ones without a set of its own).
// A record stays the same while its file is known (a change is written
// into it), so a directory's listing can point at its files' records and
// a rescan stamps them without a look-up by path; dropped marks a record
// no longer known, which such a pointer must not stamp.
//
// A following daemon keeps one for every log under its roots, for as long
// as it runs, so it holds only what a rescan compares (72 bytes, an
// 80-byte allocation, where the whole FileStat took 128): the time as Unix
// seconds and nanoseconds, and the agent and form, which every file of a
// root shares, as an index into the watcher's kinds.
type knownFile struct {
	path    string
	size    int64
	modSec  int64 // modification time: Unix seconds and nanoseconds
	id      FileID
	wal     *WalStat
	seenIn  int
	modNsec int32
	kind    uint16 // index in Watcher.kinds
	dropped bool
}

// fileKind is the agent and form of known files: a few per root.
type fileKind struct{ agent, form string }

// kindOf returns the index of an agent and form in w.kinds, adding it.
// There are at most a few forms for each root, far fewer than a uint16
// counts.
func (w *Watcher) kindOf(agent, form string) uint16 {
	for i, k := range w.kinds {
		if k.agent == agent && k.form == form {
			return uint16(i)
		}
	}
	w.kinds = append(w.kinds, fileKind{agent, form})
	return uint16(len(w.kinds) - 1)
}

// set records fs in k.
func (w *Watcher) set(k *knownFile, fs FileStat) {
	k.path, k.size, k.id, k.wal = fs.Path, fs.Size, fs.ID, fs.Wal
	k.modSec, k.modNsec = fs.ModTime.Unix(), int32(fs.ModTime.Nanosecond())
	k.kind = w.kindOf(fs.Agent, fs.Form)
}

// same reports whether fs is the file k records, unchanged.
func (k *knownFile) same(fs FileStat) bool {
	var kws int64
	var kwm time.Time
	if k.wal != nil {
		kws, kwm = k.wal.Size, k.wal.ModTime
	}
	ws, wm := fs.WalOf()
	return !fs.Gone && k.size == fs.Size && k.modSec == fs.ModTime.Unix() &&
		k.modNsec == int32(fs.ModTime.Nanosecond()) && k.id == fs.ID &&
		kws == ws && kwm.Equal(wm)
}

// gone is the FileStat that reports k's file gone.
func (w *Watcher) gone(k *knownFile) FileStat {
	kind := w.kinds[k.kind]
	return FileStat{Path: k.path, Agent: kind.agent, Form: kind.form, Gone: true}
}

// stamp marks k seen by the current rescan, counting the records stamped
// so that a rescan that stamped every one knows nothing vanished without
// looking at each.
func (w *Watcher) stamp(k *knownFile) {
	if k.seenIn != w.sweeps {
		k.seenIn = w.sweeps
		w.stamped++
	}
}

func (w *Watcher) note(fs FileStat) {
	if w.emit != nil {
		w.stopped = w.stopped || !w.emit(fs)
		return
	}
	if fs.Unlisted {
		w.pending[fs.Path] = fs // a directory, never a known log
		return
	}
	old := w.known[fs.Path]
	if old != nil && old.same(fs) {
		w.stamp(old)
		return
	}
	switch {
	case fs.Gone:
		if old == nil {
			return
		}
		if old.seenIn == w.sweeps {
			w.stamped--
		}
		old.dropped = true
		delete(w.known, fs.Path)
	case old != nil:
		w.set(old, fs)
		w.stamp(old)
	default:
		k := &knownFile{}
		w.set(k, fs)
		w.known[fs.Path] = k
		w.stamp(k)
	}
	w.pending[fs.Path] = fs
}

// fullScan walks every root: it lists the directories that changed (and
// each on its turn), stats the logs that notifications may have missed,
// adds watches for new directories, and reports files that disappeared.
func (w *Watcher) fullScan() {
	w.sweeps++
	w.stamped = 0
	// What this walk cannot watch is counted afresh: a limit raised, or
	// watches freed, since the last one are used now.
	w.missed, w.missedWhy, w.missedRank, w.capped, w.failed = 0, "", 0, false, false
	if w.notifyErr != nil && w.emit == nil {
		w.unwatched(w.notifyErr)
	}
	clear(w.dirs) // every directory is claimed afresh, in walk order
	for _, r := range w.roots {
		w.walk(r, r.Dir, true)
	}
	w.rewalk = nil // this walk met every name followed
	w.complete = false
	for d, c := range w.listings {
		if c.swept != w.sweeps {
			delete(w.listings, d) // gone, or no longer reached
		}
	}
	if w.stamped != len(w.known) {
		// Some known log was not seen: find which (every record stamped
		// means none vanished, the common case, with no walk of them).
		for _, k := range w.known {
			if k.seenIn != w.sweeps {
				w.note(w.gone(k))
			}
		}
	}
	for d := range w.watched {
		if w.listedThisSweep(d) {
			continue // stat'ed by this walk
		}
		if _, err := os.Stat(d); err != nil {
			w.unwatch(d)
		}
	}
	w.full = true
	if w.emit == nil {
		w.tellProblem(true)
	}
}

// walk scans dir (inside root r) recursively. Symbolic links to
// directories are followed (users keep ~/.claude or a project directory on
// another disk or in a dotfiles repository); a directory reached a second
// time, through a loop or under another name, is walked once only (names
// are compared resolved, so a bind mount is not seen as a second name).
func (w *Watcher) walk(r Root, dir string, sweep bool) {
	if _, err := os.Stat(r.Dir); err != nil {
		if li, lerr := os.Lstat(r.Dir); lerr == nil && li.Mode()&fs.ModeSymlink != 0 && !w.warned[r.Dir] {
			// Not silent: a root that is a link to nowhere shows no files.
			w.warned[r.Dir] = true
			target, _ := os.Readlink(r.Dir)
			w.log.Warn("log directory is a symbolic link to a missing directory; watching for it", "agent", r.Agent,
				"path", r.Dir, "target", target, "err", err)
		}
		// Not there yet: watch the nearest existing ancestor so that its
		// creation is noticed before the next rescan.
		for a := filepath.Dir(r.Dir); a != filepath.Dir(a); a = filepath.Dir(a) {
			if _, err := os.Stat(a); err == nil {
				w.watch(a)
				break
			}
		}
		return
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		real = dir
	}
	w.walkDir(r, dir, real, sweep, false, nil)
}

// walkDir walks one directory: dir is its name under the root (it may be
// a symbolic link), real the directory it resolves to, kept along the walk
// so that only links cost a resolution. chain holds the resolved
// directories above it in this walk: a link to one of them (or to a
// directory above them) is a loop and is not entered.
func (w *Watcher) walkDir(r Root, dir, real string, sweep, viaLink bool, chain []string) {
	if !r.Descend(dir) {
		return
	}
	for _, c := range chain {
		if c == real || isUnder(real, c) {
			w.once("loop:"+dir, "symbolic link loop; not followed", "agent", r.Agent, "path", dir)
			return
		}
	}
	if !w.claim(r, dir, real, viaLink) {
		return
	}
	statAll := !sweep || w.mustStat(dir)
	// The watch goes on before the listing: a file made between the two
	// is then in one or the other. Listed first, it was in neither until
	// the next rescan (a minute by default).
	w.watchAt(dir, real)
	entries, ok, err := w.list(r, dir, sweep && !statAll)
	if !ok {
		if err != nil {
			w.note(FileStat{Path: dir, Agent: r.Agent, Unlisted: true, Denied: errors.Is(err, fs.ErrPermission)})
		}
		return // vanished, or unreadable (noted): the next scan will tell
	}
	if w.dirs != nil {
		w.dirs[dirKey{real, r.Layout}] = dir
		if viaLink && w.metAgain != nil {
			w.metAgain[dirKey{real, r.Layout}] = struct{}{} // see claim: the second walk must know it
		}
	}
	if sweep && !statAll {
		// The watch must be live for the files' stats to be skipped.
		_, watched := w.watched[dir]
		statAll = !watched
	}
	chain = append(chain, real)
	var ds *dirStatter // opened at the first log stat'ed
	var links []linkTarget
	if w.pathOrder {
		entries, links = inPathOrder(entries)
	}
	for i := range entries {
		if w.stopped {
			return
		}
		e := &entries[i]
		p := e.path
		isDir := e.dir
		if e.link {
			var t linkTarget
			if links != nil {
				t = links[i] // stat'ed to sort the entries
			} else {
				t = statLink(p)
			}
			if t.dangling {
				if t.loop && r.Form(p) != "" {
					// A link to nowhere is a log deleted; one that
					// loops is a mistake the user would not see.
					w.once("loop:"+p, "symbolic link loop; this log is not read", "agent", r.Agent, "path", p)
				}
				continue
			}
			isDir = t.dir
		}
		if isDir {
			pReal := filepath.Join(real, e.name)
			if e.link {
				var err error
				if pReal, err = filepath.EvalSymlinks(p); err != nil {
					continue
				}
			}
			w.walkDir(r, p, pReal, sweep, e.link, chain)
			continue
		}
		form := e.form
		if e.link {
			form = r.Form(p)
		}
		if form == "" || e.irregular {
			continue
		}
		if !statAll && form != FormSQLite && r.Layout != LayoutOpenCode {
			// Its directory's watch reports every write (a database's
			// -wal and OpenCode's message files are elsewhere, so those
			// are always stat'ed); the stat comes round on this
			// directory's turn.
			k := e.known
			if k == nil || k.dropped || k.path != p {
				k = w.known[p]
				e.known = k
			}
			if k != nil {
				w.stamp(k)
				continue
			}
		}
		var fs FileStat
		var ok bool
		if e.link || form == FormSQLite {
			fs, ok = statFile(r, p, form) // a database's -wal is stat'ed too
		} else {
			if ds == nil {
				ds = openDirStatter(dir)
				defer ds.close()
			}
			fs, ok = ds.stat(r, p, e.name, form)
		}
		if ok {
			w.note(fs)
			if !e.link {
				e.known = w.known[p]
			}
		}
	}
}

// statEvery is how many rescans apart the logs of a watched directory are
// stat'ed: each rescan takes the directories whose turn it is, so every
// log is looked at within statEvery rescans (10 minutes by default) even
// if a notification was lost without the backend saying so.
const statEvery = 10

// listingSlack is how long after a directory's modification time a
// listing must have been taken to be trusted while that time stays the
// same: file systems whose clock ticks coarsely (1–2 s) could give a later
// change the same time.
const listingSlack = 2 * time.Second

// dirEntry is what a rescan keeps of one entry of a directory.
type dirEntry struct {
	name, path string // path: under the root, kept so a rescan builds none
	dir, link  bool
	// irregular marks what is neither a regular file, a directory nor a
	// link (a named pipe, a device) under a log's name: never stat'ed nor
	// read, and a known log's record there is not stamped, so a rescan
	// reports the log gone.
	irregular bool
	form      string // its form under the root, for a file that is not a link
	// known is the log's record as a rescan last found it, so the next
	// one stamps it without a look-up (checked: it may have been dropped).
	known *knownFile
}

// listingKey is a directory, and the layout of the root it is listed for.
type listingKey struct {
	dir, layout string
}

// listing is a directory's entries as last read, with the identity and
// modification time the directory had then.
type listing struct {
	id      FileID
	mod     time.Time
	at      time.Time
	entries []dirEntry
	swept   int // the rescan that last reached it
}

// listedThisSweep reports whether this rescan listed dir, for any root
// that holds it: usually one, so that this look at every watched
// directory costs one look-up each, as with one listing per directory.
func (w *Watcher) listedThisSweep(dir string) bool {
	for _, r := range w.roots {
		if dir != r.Dir && !isUnder(r.Dir, dir) {
			continue
		}
		if c := w.listings[listingKey{dir, r.Layout}]; c != nil && c.swept == w.sweeps {
			return true
		}
	}
	return false
}

// mustStat reports whether this rescan stats every log in dir: always
// without notifications, after some were lost, and on dir's turn.
func (w *Watcher) mustStat(dir string) bool {
	if w.fsw == nil || w.complete {
		return true
	}
	h := fnv.New32a()
	h.Write([]byte(dir))
	return (uint32(w.sweeps)+h.Sum32())%statEvery == 0
}

// list returns dir's entries. A rescan (reuse) takes them from the last
// listing when the directory has the same identity and modification time
// and the listing was taken well after that time: entries are added,
// removed and renamed only by changing the directory. Otherwise, and on
// the directory's turn, it is read again.
func (w *Watcher) list(r Root, dir string, reuse bool) ([]dirEntry, bool, error) {
	key := listingKey{dir, r.Layout}
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		delete(w.listings, key)
		return nil, false, notGone(err)
	}
	id := StatID(fi)
	last := w.listings[key]
	if c := last; reuse && c != nil && c.id == id && c.mod.Equal(fi.ModTime()) &&
		fi.ModTime().Before(c.at.Add(-listingSlack)) {
		c.swept = w.sweeps
		return c.entries, true, nil
	}
	at := time.Now()
	raw, err := os.ReadDir(dir)
	if err != nil {
		delete(w.listings, key)
		return nil, false, notGone(err)
	}
	if c := last; c != nil && sameEntries(raw, c.entries) {
		// Read again on its turn and found as it was (the common case
		// of that safety net): the listing stands, with nothing rebuilt.
		c.id, c.mod, c.at, c.swept = id, fi.ModTime(), at, w.sweeps
		return c.entries, true, nil
	}
	// The entries a name keeps from the last listing: its path and form
	// depend on the name alone (the form is worked out once per file).
	var before map[string]*dirEntry
	if c := last; c != nil {
		before = make(map[string]*dirEntry, len(c.entries))
		for i := range c.entries {
			before[c.entries[i].name] = &c.entries[i]
		}
	}
	entries := make([]dirEntry, 0, len(raw))
	for _, e := range raw {
		de := dirEntry{name: e.Name(), dir: e.IsDir(), link: e.Type()&fs.ModeSymlink != 0, irregular: irregular(e)}
		old := before[de.name]
		if old != nil && old.dir == de.dir && old.link == de.link && old.irregular == de.irregular {
			de.name, de.path, de.form, de.known = old.name, old.path, old.form, old.known
			if de.form == "" && de.irregular {
				continue
			}
			entries = append(entries, de)
			continue
		}
		de.path = filepath.Join(dir, de.name)
		if strings.HasSuffix(de.path, de.name) {
			// The name kept is the end of the path, so that a listing
			// holds one string a file, not the one the read made too.
			de.name = de.path[len(de.path)-len(de.name):]
		}
		if !de.dir && !de.link {
			de.form = r.Form(de.path)
			if de.form == "" && de.irregular {
				continue // a socket, a device: never a log
			}
		}
		entries = append(entries, de)
	}
	if w.emit == nil {
		w.listings[key] = &listing{id: id, mod: fi.ModTime(), at: at, entries: entries, swept: w.sweeps}
	}
	return entries, true, nil
}

// irregular reports whether a directory entry is neither a regular file,
// a directory nor a link.
func irregular(e fs.DirEntry) bool {
	return !e.Type().IsRegular() && !e.IsDir() && e.Type()&fs.ModeSymlink == 0
}

// notGone is err unless it says the directory is not there (a directory
// removed during the walk is no fault) or is nil: what list reports of a
// directory it could not read.
func notGone(err error) error {
	if err == nil || Missing(err) {
		return nil
	}
	return err
}

// Missing reports whether err says a file or directory is not there: not
// found, or a directory on its path replaced by a file (ENOTDIR), which is
// as gone, or (from OpenLog) a log's path holding no regular file now: a
// named pipe or a directory put in its place is no log. A permission error says nothing either way: the walk reports
// such a directory (FileStat.Unlisted) and the daemon keeps trying a log
// it cannot stat.
func Missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) || errors.Is(err, regular.ErrNotRegular)
}

// sameEntries reports whether a directory read now (raw, in name order)
// holds exactly the entries of a listing (kept in the same order), each of
// the same kind. A listing leaves out only what is never a log (a socket,
// a device): a directory holding one is rebuilt every time, as before.
func sameEntries(raw []fs.DirEntry, entries []dirEntry) bool {
	if len(raw) != len(entries) {
		return false
	}
	for i, e := range raw {
		de := &entries[i]
		if de.name != e.Name() || de.dir != e.IsDir() || de.link != (e.Type()&fs.ModeSymlink != 0) ||
			de.irregular != irregular(e) {
			return false
		}
	}
	return true
}

// claim reports whether a walk enters dir, which resolves to real
// (entered through a link when viaLink). Directories are claimed per
// layout: one directory given as the roots of two agents is read by both.
// For one layout, a directory met again under another name (a link to a
// sibling, two roots that are one) is read under the first name a walk
// meets only, or every session in it would count twice. A one-shot walk
// also does not enter again a directory it met under the same name (a
// root inside another): a live watcher walks it again, harmlessly (its
// records are by path), and must, for it walks changed directories between
// rescans, when the name a directory had is not the last word on it.
func (w *Watcher) claim(r Root, dir, real string, viaLink bool) bool {
	if w.pathOrder {
		return w.claimInPathOrder(r, dir, real, viaLink)
	}
	k := dirKey{real, r.Layout}
	other, ok := w.dirs[k]
	if !ok {
		return true
	}
	if other == dir {
		if w.emit == nil {
			return true
		}
	} else if !resolvesTo(other, real) {
		return true // the first name leads elsewhere now: this one takes over
	}
	if w.metAgain != nil {
		w.metAgain[k] = struct{}{}
	}
	if other != dir {
		w.once("alias:"+dir, "directory already followed under another name; skipped", "agent", r.Agent,
			"path", dir, "followed", other)
		if _, watched := w.watched[other]; !watched && w.emit == nil && w.fsw != nil && !w.capped && !w.failed {
			// It came back under its own name (moved away and back) while
			// the name followed, a link, did not change: nothing would
			// walk that name before the next rescan. (Past the watch cap
			// the rescans cover it, as every directory not watched.)
			w.rewalk = append(w.rewalk, rootDir{r, other})
		}
	}
	return false
}

// claimInPathOrder is claim in the second walk of WalkInPathOrder, which
// meets the directories in another order and keeps to the names the first
// settled, knowing only the directories the first met more than once or
// through a link (followAs). A directory entered through a link the first
// walk did not enter is new since (a link made while the scan runs): it
// may name a directory walked under another name, so it is left to the
// next catch-up, which follows it as a watcher would.
func (w *Watcher) claimInPathOrder(r Root, dir, real string, viaLink bool) bool {
	f := w.followAs[dirKey{real, r.Layout}]
	if f == nil {
		return !viaLink
	}
	if f.walked {
		return false
	}
	if f.name != dir {
		if resolvesTo(f.name, real) {
			return false
		}
		f.name = dir // the name followed went away since the first walk: this one takes over
	}
	f.walked = true
	return true
}

// resolvesTo reports whether dir still resolves to the directory real.
func resolvesTo(dir, real string) bool {
	r, err := filepath.EvalSymlinks(dir)
	return err == nil && r == real
}

// once logs a warning the first time key is seen.
func (w *Watcher) once(key, msg string, args ...any) {
	if !w.warned[key] {
		w.warned[key] = true
		w.log.Warn(msg, args...)
	}
}

// underRoot names an event's path as the walk knows it: a directory
// watched through a symbolic link reports under its resolved name, and
// one watched under two names (for two agents) under both.
func (w *Watcher) underRoot(name string) []string {
	if d, ok := w.byReal[name]; ok {
		return append([]string{d}, w.moreNames[name]...)
	}
	dir := filepath.Dir(name)
	if d, ok := w.byReal[dir]; ok {
		base := filepath.Base(name)
		out := []string{filepath.Join(d, base)}
		for _, m := range w.moreNames[dir] {
			out = append(out, filepath.Join(m, base))
		}
		return out
	}
	return []string{name}
}

func statFile(r Root, p, form string) (FileStat, bool) {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return FileStat{}, false
	}
	fs := FileStat{Path: p, Agent: r.Agent, Form: form, Archived: r.Archived(p),
		Size: fi.Size(), ModTime: fi.ModTime(), ID: StatID(fi)}
	if form == FormSQLite {
		if wi, err := os.Stat(p + "-wal"); err == nil {
			fs.Wal = &WalStat{wi.Size(), wi.ModTime()}
		} else if r.Layout == LayoutOpenCode && strings.HasSuffix(p, ".json") {
			size, mod := openCodeMessages(p)
			fs.Wal = &WalStat{size, mod}
		}
	}
	return fs, true
}

// openCodeMessages stands in for the -wal of a session file of OpenCode's
// JSON storage (storage/session/<project>/<id>.json): OpenCode writes a
// session's messages to storage/message/<id>/ without touching the session
// file, so their total size and latest modification time say when it grew.
func openCodeMessages(sessionFile string) (int64, time.Time) {
	storage := filepath.Dir(filepath.Dir(filepath.Dir(sessionFile)))
	id := strings.TrimSuffix(filepath.Base(sessionFile), ".json")
	entries, err := os.ReadDir(filepath.Join(storage, "message", id))
	var size int64
	var latest time.Time
	if err != nil {
		return 0, latest
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil {
			size += fi.Size()
			if fi.ModTime().After(latest) {
				latest = fi.ModTime()
			}
		}
	}
	return size, latest
}

// scanPaths looks at the paths events named: a file is stat'ed, a new
// directory walked, a vanished one's files reported gone.
func (w *Watcher) scanPaths(paths map[string]bool) {
	list := make([]string, 0, len(paths))
	for p := range paths {
		list = append(list, p)
	}
	sort.Strings(list)
	defer w.walkAgainFollowedNames()
	for _, p := range list {
		for _, r := range w.roots {
			if isUnder(p, r.Dir) {
				// An event in an ancestor of a root that was missing: it
				// may have appeared (walk watches the nearest ancestor
				// again if not).
				if _, ok := w.watched[r.Dir]; !ok {
					w.walk(r, r.Dir, false)
				}
				continue
			}
			if p != r.Dir && !isUnder(r.Dir, p) {
				continue
			}
			fi, err := os.Stat(p)
			if err == nil && !fi.Mode().IsRegular() {
				w.notLogNow(p)
			}
			switch {
			case err != nil:
				w.vanished(p)
			case fi.IsDir():
				if r.Descend(p) {
					w.walk(r, p, false)
				}
			default:
				if form := r.Form(p); form != "" {
					if fs, ok := statFile(r, p, form); ok {
						w.note(fs)
					}
				} else if strings.HasSuffix(p, "-wal") {
					db := strings.TrimSuffix(p, "-wal")
					if form := r.Form(db); form == FormSQLite {
						if fs, ok := statFile(r, db, form); ok {
							w.note(fs)
						}
					}
				}
			}
		}
	}
}

// walkAgainFollowedNames walks the names claim found to walk again, each
// once (a walk may find more).
func (w *Watcher) walkAgainFollowedNames() {
	done := map[rootDir]bool{}
	for len(w.rewalk) > 0 {
		d := w.rewalk[0]
		w.rewalk = w.rewalk[1:]
		if done[d] {
			continue
		}
		done[d] = true
		// The name followed may be under another root of the layout
		// than the name met (roots are walked in order: the first that
		// holds it).
		for _, r := range w.roots {
			if r.Layout == d.r.Layout && r.Descend(d.dir) {
				w.walk(r, d.dir, false)
				break
			}
		}
	}
	w.rewalk = nil
}

// vanished reports a path that is gone: a file, or a directory with every
// known file below it.
func (w *Watcher) vanished(p string) {
	if k, ok := w.known[p]; ok {
		w.note(w.gone(k))
		return
	}
	for path, k := range w.known {
		if isUnder(p, path) {
			w.note(w.gone(k))
		}
	}
	for d := range w.watched {
		if d == p || isUnder(p, d) {
			w.unwatch(d)
		}
	}
}

// notLogNow reports the known log at p gone when p holds something else
// now (a directory, a named pipe): no log is there, as when it is deleted,
// and a regular file put back is a log met anew.
func (w *Watcher) notLogNow(p string) {
	if k, ok := w.known[p]; ok {
		w.note(w.gone(k))
	}
}

// isUnder reports whether p lies below dir. It builds no string: a
// rescan asks it for every watched directory and every root.
func isUnder(dir, p string) bool {
	return len(p) > len(dir) && p[len(dir)] == filepath.Separator && p[:len(dir)] == dir
}

// kqueue reports whether fsnotify's backend on goos opens a descriptor for
// every file of a watched directory.
func kqueue(goos string) bool {
	switch goos {
	case "darwin", "ios", "freebsd", "openbsd", "netbsd", "dragonfly":
		return true
	}
	return false
}

// watch watches a directory outside a walk (the ancestor of a missing
// root).
func (w *Watcher) watch(dir string) {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		real = dir
	}
	w.watchAt(dir, real)
}

// watchAt watches dir, which resolves to real. The watch goes on the
// resolved directory: a watch on a link's name is not followed by every
// backend, and two names of one directory must not share a watch.
func (w *Watcher) watchAt(dir, real string) {
	if w.fsw == nil {
		return
	}
	if old, ok := w.watched[dir]; ok {
		if old.real == real {
			return
		}
		w.unwatch(dir) // the link points elsewhere now
	}
	if first, ok := w.byReal[real]; ok && first != dir {
		if resolvesTo(first, real) {
			// One kernel watch, two names (one directory for two agents):
			// its events are named under both, and this name costs
			// nothing more.
			w.watched[dir] = watch{real: real}
			if !slices.Contains(w.moreNames[real], dir) {
				if w.moreNames == nil {
					w.moreNames = map[string][]string{}
				}
				w.moreNames[real] = append(w.moreNames[real], dir)
			}
			return
		}
		if wt, ok := w.watched[first]; ok && wt.real == real {
			// The first name leads elsewhere now: this one takes its
			// watch over, and the first is watched afresh when walked.
			delete(w.watched, first)
			w.watched[dir] = wt
			w.byReal[real] = dir
			return
		}
	}
	cost := 1
	if w.perFile {
		if entries, err := os.ReadDir(dir); err == nil {
			cost += len(entries)
		}
	}
	if w.used+cost > w.opt.MaxWatches {
		w.capped = true
		w.unwatched(nil)
		return
	}
	if err := w.fsw.Add(real); err != nil {
		// Out of watches (inotify's max_user_watches, descriptors): the
		// walk counts it and names the limit (inotify's ENOSPC reads as a
		// full disk); the rescans cover what is not watched.
		if !errors.Is(err, fs.ErrNotExist) {
			w.failed = true
			w.unwatched(err)
		}
		return
	}
	w.watched[dir] = watch{cost: cost, real: real}
	w.byReal[real] = dir
	w.used += cost
}

func (w *Watcher) unwatch(dir string) {
	wt, ok := w.watched[dir]
	if !ok {
		return
	}
	delete(w.watched, dir)
	more := w.moreNames[wt.real]
	switch {
	case w.byReal[wt.real] == dir && len(more) > 0:
		// Still watched under its other name, which takes the kernel
		// watch over with its cost.
		next := more[0]
		nw := w.watched[next]
		nw.cost += wt.cost
		w.watched[next] = nw
		w.byReal[wt.real] = next
		w.setMoreNames(wt.real, more[1:])
	case w.byReal[wt.real] == dir:
		w.used -= wt.cost
		delete(w.byReal, wt.real)
		if w.fsw != nil {
			w.fsw.Remove(wt.real)
		}
	default:
		w.used -= wt.cost // nothing, for a second name
		w.setMoreNames(wt.real, slices.DeleteFunc(slices.Clone(more), func(m string) bool { return m == dir }))
	}
}

func (w *Watcher) setMoreNames(real string, names []string) {
	if len(names) == 0 {
		delete(w.moreNames, real)
		return
	}
	w.moreNames[real] = names
}

// Watches is the number of directories watched (for status and tests).
func (w *Watcher) Watches() int { return len(w.watched) }

// WatchCost is what the watches use of MaxWatches.
func (w *Watcher) WatchCost() int { return w.used }

// Scan walks the roots once and returns every log file present, in path
// order (a catch-up looks its logs up by path in it), for a
// one-shot catch-up.
func Scan(roots []Root) []FileStat {
	var found []FileStat
	Walk(roots, func(f FileStat) bool {
		found = append(found, f)
		return true
	})
	// A log met twice (a directory reached again under the same name, from
	// a second root) is one log: its last stat stands, as for a watcher.
	slices.SortStableFunc(found, func(a, b FileStat) int { return strings.Compare(a.Path, b.Path) })
	out := found[:0]
	for i, f := range found {
		if i+1 < len(found) && found[i+1].Path == f.Path {
			continue
		}
		out = append(out, f)
	}
	clear(found[len(out):]) // the paths of the duplicates left behind
	return out
}

// Walk walks the roots once, as Scan does, and hands fn every log file
// present in the order the walk meets them (a watcher's rescan's: roots in
// their order, each directory's entries by name), keeping none. fn returns
// false to end the walk.
func Walk(roots []Root, fn func(FileStat) bool) {
	w := NewWatcher(roots, WatchOptions{})
	w.emit = fn
	w.walkRoots()
}

func (w *Watcher) walkRoots() {
	for _, r := range w.roots {
		if w.stopped {
			return
		}
		w.walk(r, r.Dir, false)
	}
}

// WalkInPathOrder walks the roots for a catch-up that reads the logs as
// they are met, so that a walk of 100,000 logs is never held whole. A first
// walk, in a watcher's order, hands first every log (to size the
// catch-up) and settles under which name a directory reached under two is
// followed (the first in that order, as for a watcher); a second hands fn
// every log in path order, root after root ("a.jsonl" and "a-b.jsonl"
// before "a/…": a session's log before its subagents'). Either returning
// false ends the walk.
//
// The second walk keeps only the directories the first met more than once
// or through a link, not one name for each directory (some 300 bytes each: 30 MB for 100,000
// sessions with subagents).
//
// log, when not nil, is told what a walk skips that the user should know
// of (a symbolic link loop), once.
func WalkInPathOrder(roots []Root, log *slog.Logger, first, fn func(FileStat) bool) {
	w := NewWatcher(roots, WatchOptions{Logger: log})
	w.emit, w.metAgain = first, map[dirKey]struct{}{}
	w.walkRoots()
	if w.stopped {
		return
	}
	w.followAs = make(map[dirKey]*followedDir, len(w.metAgain))
	for k := range w.metAgain {
		w.followAs[k] = &followedDir{name: w.dirs[k]}
	}
	w.dirs, w.metAgain = nil, nil
	w.emit, w.pathOrder = fn, true
	w.walkRoots()
}

// linkTarget is what a link in a directory leads to.
type linkTarget struct {
	dir, dangling bool
	loop          bool // dangling because it leads back to itself
}

func statLink(path string) linkTarget {
	ti, err := os.Stat(path)
	if err != nil {
		return linkTarget{dangling: true, loop: errors.Is(err, syscall.ELOOP)}
	}
	return linkTarget{dir: ti.IsDir()}
}

// inPathOrder sorts a directory's entries (read in order of their names)
// so that a walk meets the logs under them in order of their paths: a
// directory sorts as its name and a slash, so "a.jsonl" and "a-b.jsonl"
// come before "a/…", and "a0.jsonl" after. A link counts as the kind of
// entry it points to; what each link leads to is returned beside the
// sorted entries (nil when there is no link), so that the walk does not
// stat it again.
func inPathOrder(entries []dirEntry) ([]dirEntry, []linkTarget) {
	isDir := make([]bool, len(entries))
	var links []linkTarget
	var any bool
	for i, e := range entries {
		isDir[i] = e.dir
		if e.link {
			if links == nil {
				links = make([]linkTarget, len(entries))
			}
			links[i] = statLink(e.path)
			isDir[i] = links[i].dir
		}
		any = any || isDir[i]
	}
	if !any {
		return entries, links // files only: their names' order is their paths'
	}
	order := make([]int, len(entries))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		return compareAsPaths(entries[a].name, isDir[a], entries[b].name, isDir[b])
	})
	out := make([]dirEntry, len(entries))
	var outLinks []linkTarget
	if links != nil {
		outLinks = make([]linkTarget, len(entries))
	}
	for i, j := range order {
		out[i] = entries[j]
		if links != nil {
			outLinks[i] = links[j]
		}
	}
	return out, outLinks
}

// compareAsPaths compares two names of one directory as the paths under
// them compare: a directory's name is followed by the separator.
func compareAsPaths(a string, aDir bool, b string, bDir bool) int {
	n := min(len(a), len(b))
	if c := strings.Compare(a[:n], b[:n]); c != 0 {
		return c
	}
	next := func(s string, dir bool) int {
		switch {
		case len(s) > n:
			return int(s[n])
		case dir:
			return filepath.Separator
		}
		return -1
	}
	return cmp.Compare(next(a, aDir), next(b, bDir))
}
