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
	watched map[string]int // directory → its cost against MaxWatches
	used    int
	perFile bool // kqueue: every entry of a watched directory costs a descriptor
	capped  bool
	failed  bool
	fsw     *fsnotify.Watcher
	pending map[string]FileStat
	full    bool
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
		known: map[string]FileStat{}, watched: map[string]int{}, pending: map[string]FileStat{},
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
			dirty[ev.Name] = true
			if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
				dirty[filepath.Dir(ev.Name)] = true
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

// walk scans dir (inside root r) recursively.
func (w *Watcher) walk(r Root, dir string, seen map[string]bool) {
	if _, err := os.Stat(r.Dir); err != nil {
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
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // vanished or unreadable: the next scan will tell
		}
		if d.IsDir() {
			if !r.Descend(p) {
				return filepath.SkipDir
			}
			w.watch(p)
			return nil
		}
		if form := r.Form(p); form != "" {
			if fs, ok := statFile(r, p, form); ok {
				if seen != nil {
					seen[p] = true
				}
				w.note(fs)
			}
		}
		return nil
	})
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
	if _, ok := w.watched[dir]; ok {
		return
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
	if err := w.fsw.Add(dir); err != nil {
		// Out of watches (inotify's max_user_watches, descriptors): say
		// it once; the rescans cover what is not watched.
		if !errors.Is(err, fs.ErrNotExist) && !w.failed {
			w.failed = true
			w.log.Warn("cannot watch directory; relying on rescans", "path", dir, "err", err)
		}
		return
	}
	w.watched[dir] = cost
	w.used += cost
}

func (w *Watcher) unwatch(dir string) {
	if cost, ok := w.watched[dir]; ok {
		w.used -= cost
		delete(w.watched, dir)
		if w.fsw != nil {
			w.fsw.Remove(dir)
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
