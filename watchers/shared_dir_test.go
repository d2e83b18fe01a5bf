package watchers

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Two roots of one layout: root B holds a link to a project of root A and
// is walked first, so the link is the name followed. The project moved
// away and back comes back under its own name in A, and B's link is walked
// again, from B's root.
func TestLinkedDirectoryBackUnderAnotherRoot(t *testing.T) {
	home := t.TempDir()
	a := Root{Agent: "claude", Layout: LayoutClaude, Dir: filepath.Join(home, "a")}
	b := Root{Agent: "claude", Layout: LayoutClaude, Dir: filepath.Join(home, "b")}
	project := filepath.Join(a.Dir, "projects", "-w")
	write(t, filepath.Join(project, "s1.jsonl"), "{}\n")
	write(t, filepath.Join(b.Dir, "projects", "-other", "x.jsonl"), "{}\n")
	symlink(t, project, filepath.Join(b.Dir, "projects", "-a"))
	log := filepath.Join(b.Dir, "projects", "-a", "s1.jsonl")
	moveAwayAndBack(t, []Root{b, a}, project, log)
}

// Without watches (none made, the cap reached, or adding them failed) a
// followed link is never watched, and rescans cover every directory: a
// walk that meets the directory's own name does not queue the link for a
// walk of its own each time.
func TestNoWalkAgainWithoutWatches(t *testing.T) {
	home := t.TempDir()
	claude := Root{Agent: "claude", Layout: LayoutClaude, Dir: filepath.Join(home, ".claude")}
	proj := filepath.Join(claude.Dir, "projects")
	write(t, filepath.Join(proj, "-w", "s1.jsonl"), "{}\n")
	symlink(t, filepath.Join(proj, "-w"), filepath.Join(proj, "-a"))
	w := NewWatcher([]Root{claude}, WatchOptions{MaxWatches: 1})
	w.fullScan() // no notifications: nothing watched
	w.walk(claude, proj, false)
	if len(w.rewalk) != 0 {
		t.Fatalf("queued with no watches: %v", w.rewalk)
	}
}

// One directory as the roots of two agents, in either order: a running
// watcher reads each agent's logs there, as the one-shot walks do.
func TestLiveWatcherOneDirectoryTwoAgents(t *testing.T) {
	for _, cursorFirst := range []bool{false, true} {
		t.Run(map[bool]string{false: "claude first", true: "cursor first"}[cursorFirst], func(t *testing.T) {
			dir := t.TempDir()
			claudeLog := filepath.Join(dir, "projects", "-w", "s.jsonl")
			cursorLog := filepath.Join(dir, "projects", "p", "agent-transcripts", "a", "t.jsonl")
			write(t, claudeLog, "{}\n")
			write(t, cursorLog, "{}\n")
			claude := Root{Agent: "claude", Layout: LayoutClaude, Dir: dir}
			cursor := Root{Agent: "cursor", Layout: LayoutCursor, Dir: dir}
			roots := []Root{claude, cursor}
			if cursorFirst {
				roots = []Root{cursor, claude}
			}
			r := startWatcher(t, roots, WatchOptions{Rescan: time.Hour})
			r.waitFor("both agents' logs", func(m map[string]FileStat) bool { return m[claudeLog].Size == 3 && m[cursorLog].Size == 3 })
			if a := r.seen[claudeLog].Agent; a != "claude" {
				t.Errorf("claude's log reported for %q", a)
			}
		})
	}
}

// One directory as the roots of claude and then cursor: cursor's walk of
// it works out its own forms, not claude's listing's, so a claude log that
// grew between the two roots' walks is not reported as cursor's.
func TestListingFormsPerLayout(t *testing.T) {
	dir := t.TempDir()
	claudeLog := filepath.Join(dir, "projects", "-w", "s.jsonl")
	write(t, claudeLog, "{}\n")
	claude := Root{Agent: "claude", Layout: LayoutClaude, Dir: dir}
	cursor := Root{Agent: "cursor", Layout: LayoutCursor, Dir: dir}
	w := NewWatcher([]Root{claude, cursor}, WatchOptions{})
	w.fullScan()
	w.pending = map[string]FileStat{}
	write(t, claudeLog, "{}\n") // grows while the rescan walks the next root
	w.walk(cursor, cursor.Dir, false)
	if f, ok := w.pending[claudeLog]; ok && f.Agent != "claude" {
		t.Errorf("claude's log reported as %s's (form %q)", f.Agent, f.Form)
	}
}

// One directory as claude's root and, through a link, cursor's: both walk
// projects/-w under one watch, whose events are named under both names,
// so claude's log growing is seen at once.
func TestLiveGrowthOneDirectoryTwoNames(t *testing.T) {
	home := t.TempDir()
	dir, link := filepath.Join(home, "x"), filepath.Join(home, "cursor")
	claudeLog := filepath.Join(dir, "projects", "-w", "s.jsonl")
	write(t, claudeLog, "{}\n")
	write(t, filepath.Join(dir, "projects", "p", "agent-transcripts", "a", "t.jsonl"), "{}\n")
	symlink(t, dir, link)
	roots := []Root{{Agent: "claude", Layout: LayoutClaude, Dir: dir}, {Agent: "cursor", Layout: LayoutCursor, Dir: link}}
	r := startWatcher(t, roots, WatchOptions{Rescan: time.Hour})
	r.waitFor("initial file", func(m map[string]FileStat) bool { return m[claudeLog].Size == 3 })
	write(t, claudeLog, "{}\n")
	r.waitFor("growth", func(m map[string]FileStat) bool { return m[claudeLog].Size == 6 })
}

// liveWatcher is a watcher over roots with notifications but no loop:
// tests drive its rescans and look at its watches.
func liveWatcher(t *testing.T, roots []Root) (*Watcher, *fsnotify.Watcher) {
	t.Helper()
	w := NewWatcher(roots, WatchOptions{})
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsw.Close() })
	w.fsw = fsw
	return w, fsw
}

// One directory, two names (claude's root, and cursor's through a link):
// one kernel watch per resolved directory, and the cap is charged once for
// it, not per name.
func TestWatchCostPerKernelWatch(t *testing.T) {
	home := t.TempDir()
	dir, link := filepath.Join(home, "x"), filepath.Join(home, "cursor")
	write(t, filepath.Join(dir, "projects", "-w", "s.jsonl"), "{}\n")
	write(t, filepath.Join(dir, "projects", "p", "agent-transcripts", "a", "t.jsonl"), "{}\n")
	symlink(t, dir, link)
	w, fsw := liveWatcher(t, []Root{{Agent: "claude", Layout: LayoutClaude, Dir: dir}, {Agent: "cursor", Layout: LayoutCursor, Dir: link}})
	w.fullScan()
	if len(w.watched) <= len(fsw.WatchList()) {
		t.Fatalf("%d names for %d kernel watches: the directory is not watched under two names", len(w.watched), len(fsw.WatchList()))
	}
	if w.used != len(fsw.WatchList()) {
		t.Errorf("cap charged %d for %d kernel watches", w.used, len(fsw.WatchList()))
	}
	// Unwatching the names one by one hands the watch and its cost on
	// until the last.
	for name := range w.watched {
		w.unwatch(name)
		if w.used != len(fsw.WatchList()) {
			t.Fatalf("after unwatching %s: cap charged %d for %d kernel watches", name, w.used, len(fsw.WatchList()))
		}
	}
	if w.used != 0 || len(w.byReal) != 0 || len(w.moreNames) != 0 {
		t.Errorf("left after every unwatch: used %d, byReal %v, moreNames %v", w.used, w.byReal, w.moreNames)
	}
}

// A name that pointed elsewhere while the directory was watched under
// another, then points back: its events are named under it again, and the
// kernel watch stays while a name needs it.
func TestNameThatPointsBack(t *testing.T) {
	home := t.TempDir()
	d, e := filepath.Join(home, "d"), filepath.Join(home, "e")
	os.MkdirAll(d, 0o755)
	os.MkdirAll(e, 0o755)
	a := filepath.Join(home, "a")
	symlink(t, d, a)
	w, fsw := liveWatcher(t, nil)
	w.watchAt(a, d)
	os.Remove(a)
	symlink(t, e, a) // re-pointed, not walked yet
	w.watchAt(d, d)  // d under its own name takes the watch over
	os.Remove(a)
	symlink(t, d, a) // points back
	w.watchAt(a, d)  // walked again
	if n := w.underRoot(filepath.Join(d, "s.jsonl")); len(n) != 2 {
		t.Errorf("events named under %v only; watched: %v", n, w.watched)
	}
	w.unwatch(d)
	if _, ok := w.watched[a]; !ok || len(fsw.WatchList()) != 1 {
		t.Errorf("after unwatching d: a watched %v, %d kernel watches", ok, len(fsw.WatchList()))
	}
}

// One directory as the roots of two agents under one name: each layout
// keeps its own listing, so a rescan that finds nothing changed reuses
// them as for one agent.
func TestListingsReusedForTwoLayouts(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "projects", "-w", "s.jsonl"), "{}\n")
	write(t, filepath.Join(dir, "projects", "p", "agent-transcripts", "a", "t.jsonl"), "{}\n")
	old := time.Now().Add(-time.Hour) // listed well after their last change
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if fi != nil && fi.IsDir() {
			os.Chtimes(p, old, old)
		}
		return nil
	})
	w, _ := liveWatcher(t, []Root{{Agent: "claude", Layout: LayoutClaude, Dir: dir}, {Agent: "cursor", Layout: LayoutCursor, Dir: dir}})
	w.fullScan()
	for _, layout := range []string{LayoutClaude, LayoutCursor} {
		key := listingKey{dir, layout}
		before := w.listings[key]
		replaced := 0
		for range 5 {
			w.fullScan()
			if w.listings[key] != before {
				replaced, before = replaced+1, w.listings[key]
			}
		}
		if replaced > 1 { // one may fall on the directory's turn
			t.Errorf("%s: the root's listing read afresh in %d of 5 rescans", layout, replaced)
		}
	}
}
