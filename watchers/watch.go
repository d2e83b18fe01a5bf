package watchers

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/fsnotify/fsnotify"
)

// FileStat is what a scan learns of one log file: stat only, no reads.
type FileStat struct {
	Path  string
	Agent string
	Form  string
	// Archived is set for a file in an agent's archive (a finished session).
	Archived bool
	Size     int64
	ModTime  time.Time
	ID       FileID
	// WalSize and WalMod describe the -wal file beside a SQLite database:
	// writes land there first.
	WalSize int64
	WalMod  time.Time
	// Gone is set when the file is no longer there.
	Gone bool
}

func (a FileStat) same(b FileStat) bool {
	return a.Size == b.Size && a.ModTime.Equal(b.ModTime) && a.ID == b.ID &&
		a.WalSize == b.WalSize && a.WalMod.Equal(b.WalMod) && a.Gone == b.Gone
}

// Update is one batch of changes from the watcher. Full is set when the
// batch ends a complete rescan: every file present was stat'ed.
type Update struct {
	Files []FileStat
	Full  bool
}

// WatchOptions tune a Watcher. Zero values take the defaults.
type WatchOptions struct {
	Debounce time.Duration // quiet time gathering events before a scan (250 ms)
	Rescan   time.Duration // full stat rescan period, the source of truth (60 s)
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

	known   map[string]FileStat
	watched map[string]watch  // directory (as seen under its root) → its watch
	byReal  map[string]string // resolved directory watched → the directory under its root
	dirs    map[FileID]string // directory identity → the one name it is walked under
	used    int
	perFile bool // kqueue: every entry of a watched directory costs a descriptor
	capped  bool
	failed  bool
	fsw     *fsnotify.Watcher
	pending map[string]FileStat
	full    bool
	warned  map[string]bool // roots and loops said once already
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
		roots: roots, opt: opt, out: make(chan Update, 1), log: log.With("component", "watch"),
		known: map[string]FileStat{}, watched: map[string]watch{}, byReal: map[string]string{},
		dirs: map[FileID]string{}, warned: map[string]bool{}, pending: map[string]FileStat{},
		perFile: kqueue(runtime.GOOS),
	}
}

// Updates is where changes arrive.
func (w *Watcher) Updates() <-chan Update { return w.out }

// Run watches until ctx is done.
func (w *Watcher) Run(ctx context.Context) error {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		w.log.Warn("file notifications unavailable; relying on rescans", "err", err)
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
			name := w.underRoot(ev.Name)
			dirty[name] = true
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				dirty[filepath.Dir(name)] = true
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

func (w *Watcher) note(fs FileStat) {
	if old, ok := w.known[fs.Path]; ok && old.same(fs) {
		return
	}
	if fs.Gone {
		if _, ok := w.known[fs.Path]; !ok {
			return
		}
		delete(w.known, fs.Path)
	} else {
		w.known[fs.Path] = fs
	}
	w.pending[fs.Path] = fs
}

// fullScan walks every root, stat'ing each log, adding watches for new
// directories, and reporting files that disappeared.
func (w *Watcher) fullScan() {
	seen := map[string]bool{}
	w.dirs = map[FileID]string{} // every directory is claimed afresh, in walk order
	for _, r := range w.roots {
		w.walk(r, r.Dir, seen)
	}
	for p := range w.known {
		if !seen[p] {
			w.note(FileStat{Path: p, Agent: w.known[p].Agent, Form: w.known[p].Form, Gone: true})
		}
	}
	for d := range w.watched {
		if _, err := os.Stat(d); err != nil {
			w.unwatch(d)
		}
	}
	w.full = true
}

// walk scans dir (inside root r) recursively. Symbolic links to
// directories are followed (users keep ~/.claude or a project directory on
// another disk or in a dotfiles repository); a directory reached a second
// time, through a loop or under another name, is walked once only.
func (w *Watcher) walk(r Root, dir string, seen map[string]bool) {
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
	w.walkDir(r, dir, seen, map[FileID]bool{})
}

// walkDir walks one directory (dir is its name under the root; it may be
// a symbolic link). chain holds the identities of the directories above it
// in this walk: a link back to one of them is a loop and is not entered.
func (w *Watcher) walkDir(r Root, dir string, seen map[string]bool, chain map[FileID]bool) {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() || !r.Descend(dir) {
		return // vanished or unreadable: the next scan will tell
	}
	if id := StatID(fi); id.Known() {
		if chain[id] {
			w.once("loop:"+dir, "symbolic link loop; not followed", "agent", r.Agent, "path", dir)
			return
		}
		if other, ok := w.dirs[id]; ok && other != dir && sameDir(other, id) {
			// The same directory under two names (a link to a sibling, two
			// roots that are one): its logs are read under the first name
			// only, or every session would count twice.
			w.once("alias:"+dir, "directory already followed under another name; skipped", "agent", r.Agent,
				"path", dir, "followed", other)
			return
		}
		w.dirs[id] = dir
		chain[id] = true
		defer delete(chain, id)
	}
	w.watch(dir)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		p := filepath.Join(dir, e.Name())
		isDir := e.IsDir()
		if e.Type()&fs.ModeSymlink != 0 {
			ti, err := os.Stat(p)
			if err != nil {
				continue // a dangling link
			}
			isDir = ti.IsDir()
		}
		if isDir {
			w.walkDir(r, p, seen, chain)
			continue
		}
		if form := r.Form(p); form != "" {
			if fs, ok := statFile(r, p, form); ok {
				if seen != nil {
					seen[p] = true
				}
				w.note(fs)
			}
		}
	}
}

// sameDir reports whether dir is still the directory with identity id.
func sameDir(dir string, id FileID) bool {
	fi, err := os.Stat(dir)
	return err == nil && fi.IsDir() && StatID(fi) == id
}

// once logs a warning the first time key is seen.
func (w *Watcher) once(key, msg string, args ...any) {
	if !w.warned[key] {
		w.warned[key] = true
		w.log.Warn(msg, args...)
	}
}

// underRoot names an event's path as the walk knows it: a directory
// watched through a symbolic link reports under its resolved name.
func (w *Watcher) underRoot(name string) string {
	if d, ok := w.byReal[name]; ok {
		return d
	}
	if d, ok := w.byReal[filepath.Dir(name)]; ok {
		return filepath.Join(d, filepath.Base(name))
	}
	return name
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
			fs.WalSize, fs.WalMod = wi.Size(), wi.ModTime()
		} else if r.Layout == LayoutOpenCode && strings.HasSuffix(p, ".json") {
			fs.WalSize, fs.WalMod = openCodeMessages(p)
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
	for _, p := range list {
		for _, r := range w.roots {
			if isUnder(p, r.Dir) {
				// An event in an ancestor of a root that was missing: it
				// may have appeared (walk watches the nearest ancestor
				// again if not).
				if _, ok := w.watched[r.Dir]; !ok {
					w.walk(r, r.Dir, nil)
				}
				continue
			}
			if p != r.Dir && !isUnder(r.Dir, p) {
				continue
			}
			fi, err := os.Stat(p)
			switch {
			case err != nil:
				w.vanished(p)
			case fi.IsDir():
				if r.Descend(p) {
					w.walk(r, p, nil)
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

// vanished reports a path that is gone: a file, or a directory with every
// known file below it.
func (w *Watcher) vanished(p string) {
	if fs, ok := w.known[p]; ok {
		w.note(FileStat{Path: p, Agent: fs.Agent, Form: fs.Form, Gone: true})
		return
	}
	for k, fs := range w.known {
		if isUnder(p, k) {
			w.note(FileStat{Path: k, Agent: fs.Agent, Form: fs.Form, Gone: true})
		}
	}
	for d := range w.watched {
		if d == p || isUnder(p, d) {
			w.unwatch(d)
		}
	}
}

func isUnder(dir, p string) bool {
	return strings.HasPrefix(p, dir+string(filepath.Separator))
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

func (w *Watcher) watch(dir string) {
	if w.fsw == nil {
		return
	}
	// The watch goes on the resolved directory: a watch on a link's name
	// is not followed by every backend, and two names of one directory
	// must not share a watch.
	real := dir
	if r, err := filepath.EvalSymlinks(dir); err == nil {
		real = r
	}
	if old, ok := w.watched[dir]; ok {
		if old.real == real {
			return
		}
		w.unwatch(dir) // the link points elsewhere now
	}
	cost := 1
	if w.perFile {
		if entries, err := os.ReadDir(dir); err == nil {
			cost += len(entries)
		}
	}
	if w.used+cost > w.opt.MaxWatches {
		if !w.capped {
			w.capped = true
			w.log.Warn("directory watch cap reached; the rest is covered by rescans", "cap", w.opt.MaxWatches)
		}
		return
	}
	if err := w.fsw.Add(real); err != nil {
		// Out of watches (inotify's max_user_watches, descriptors): say
		// it once; the rescans cover what is not watched.
		if !errors.Is(err, fs.ErrNotExist) && !w.failed {
			w.failed = true
			w.log.Warn("cannot watch directory; relying on rescans", "path", dir, "err", err)
		}
		return
	}
	w.watched[dir] = watch{cost: cost, real: real}
	w.byReal[real] = dir
	w.used += cost
}

func (w *Watcher) unwatch(dir string) {
	if wt, ok := w.watched[dir]; ok {
		w.used -= wt.cost
		delete(w.watched, dir)
		if w.byReal[wt.real] == dir {
			delete(w.byReal, wt.real)
			if w.fsw != nil {
				w.fsw.Remove(wt.real)
			}
		}
	}
}

// Watches is the number of directories watched (for status and tests).
func (w *Watcher) Watches() int { return len(w.watched) }

// WatchCost is what the watches use of MaxWatches.
func (w *Watcher) WatchCost() int { return w.used }

// Scan walks the roots once and returns every log file present, for a
// one-shot catch-up.
func Scan(roots []Root) []FileStat {
	w := NewWatcher(roots, WatchOptions{})
	for _, r := range roots {
		w.walk(r, r.Dir, nil)
	}
	return w.collect().Files
}
