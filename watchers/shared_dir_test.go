package watchers

import (
	"path/filepath"
	"testing"
	"time"
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
