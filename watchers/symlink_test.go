package watchers

import (
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

func symlink(t *testing.T, target, link string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(link), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symbolic links unavailable: %v", err)
	}
}

// A root that is a symbolic link, a linked projects directory and a linked
// project directory are all followed, by the one-shot scan and by the
// watcher's events (the watches sit on the resolved directories).
func TestSymlinkedRootsAndDirectories(t *testing.T) {
	home := t.TempDir()
	disk := t.TempDir() // "another disk"
	// ~/.claude -> disk/claude; disk/claude/projects -> disk/projects;
	// disk/projects/-w-b -> disk/elsewhere/b.
	symlink(t, filepath.Join(disk, "claude"), filepath.Join(home, ".claude"))
	symlink(t, filepath.Join(disk, "projects"), filepath.Join(disk, "claude", "projects"))
	os.MkdirAll(filepath.Join(disk, "projects", "-w-a"), 0o700)
	os.MkdirAll(filepath.Join(disk, "elsewhere", "b"), 0o700)
	os.MkdirAll(filepath.Join(disk, "codex-2026"), 0o700)
	symlink(t, filepath.Join(disk, "elsewhere", "b"), filepath.Join(disk, "projects", "-w-b"))
	// Codex: sessions/2026 is a link.
	symlink(t, filepath.Join(disk, "codex-2026"), filepath.Join(home, ".codex", "sessions", "2026"))

	claude := Root{Agent: "claude", Layout: LayoutClaude, Dir: filepath.Join(home, ".claude")}
	codex := Root{Agent: "codex", Layout: LayoutCodex, Dir: filepath.Join(home, ".codex")}
	a := filepath.Join(claude.Dir, "projects", "-w-a", "a.jsonl")
	b := filepath.Join(claude.Dir, "projects", "-w-b", "b.jsonl")
	sub := filepath.Join(claude.Dir, "projects", "-w-b", "b", "subagents", "agent-x.jsonl")
	roll := filepath.Join(codex.Dir, "sessions", "2026", "01", "02", "rollout-z.jsonl")
	write(t, a, "{}\n")
	write(t, b, "{}\n")
	write(t, roll, "{}\n")

	got := map[string]bool{}
	for _, f := range Scan([]Root{claude, codex}) {
		got[f.Path] = true
	}
	if len(got) != 3 || !got[a] || !got[b] || !got[roll] {
		t.Fatalf("scan through links found %v", got)
	}

	r := startWatcher(t, []Root{claude, codex}, WatchOptions{})
	r.waitFor("files under links", func(m map[string]FileStat) bool {
		return m[a].Size == 3 && m[b].Size == 3 && m[roll].Size == 3
	})
	write(t, a, "{}\n")
	write(t, b, "{}\n")
	write(t, roll, "{}\n")
	r.waitFor("growth seen by events through links", func(m map[string]FileStat) bool {
		return m[a].Size == 6 && m[b].Size == 6 && m[roll].Size == 6
	})
	// A new directory inside a linked one, a new linked project.
	write(t, sub, "{}\n")
	os.MkdirAll(filepath.Join(disk, "elsewhere", "c"), 0o700)
	c := filepath.Join(claude.Dir, "projects", "-w-c", "c.jsonl")
	write(t, filepath.Join(disk, "elsewhere", "c", "c.jsonl"), "{}\n")
	symlink(t, filepath.Join(disk, "elsewhere", "c"), filepath.Join(disk, "projects", "-w-c"))
	r.waitFor("new directories through links", func(m map[string]FileStat) bool {
		return m[sub].Size == 3 && m[c].Size == 3
	})
	for p := range r.seen {
		if !isUnder(claude.Dir, p) && !isUnder(codex.Dir, p) {
			t.Errorf("a file reported under its resolved name: %s", p)
		}
	}
}

// Links that loop, and two names of one directory, neither hang the walk
// nor report a log twice.
func TestSymlinkLoopsAndAliases(t *testing.T) {
	home := t.TempDir()
	claude := Root{Agent: "claude", Layout: LayoutClaude, Dir: filepath.Join(home, ".claude")}
	proj := filepath.Join(claude.Dir, "projects", "-w")
	s := filepath.Join(proj, "s.jsonl")
	write(t, s, "{}\n")
	write(t, filepath.Join(proj, "s", "subagents", "agent-a.jsonl"), "{}\n")
	// Loops: a session dir pointing at its project, subagents/ pointing up
	// at the session dir, and a project pointing at projects/.
	symlink(t, proj, filepath.Join(proj, "s2"))
	symlink(t, filepath.Join(proj, "s"), filepath.Join(proj, "s", "subagents", "deeper"))
	symlink(t, filepath.Join(claude.Dir, "projects"), filepath.Join(claude.Dir, "projects", "-loop"))
	// An alias: another project name for the same directory, and a second
	// root that is the first one under another name.
	symlink(t, proj, filepath.Join(claude.Dir, "projects", "-w-alias"))
	symlink(t, claude.Dir, filepath.Join(home, "claude-again"))
	again := Root{Agent: "claude", Layout: LayoutClaude, Dir: filepath.Join(home, "claude-again")}

	files := Scan([]Root{claude, again})
	if len(files) != 2 {
		var names []string
		for _, f := range files {
			names = append(names, f.Path)
		}
		t.Fatalf("scan over loops and aliases found %d files, want 2: %v", len(files), names)
	}
	if files[0].Path != s {
		t.Fatalf("the first name is not the one followed: %s", files[0].Path)
	}
	// In path order "-w-alias/…" comes first; the name followed is still
	// the one a watcher follows.
	var walked []string
	WalkInPathOrder([]Root{claude, again}, nil, func(FileStat) bool { return true }, func(f FileStat) bool {
		walked = append(walked, f.Path)
		return true
	})
	if len(walked) != 2 || walked[0] != s || walked[1] != files[1].Path {
		t.Fatalf("a walk in path order over loops and aliases met %v, want %s, %s", walked, s, files[1].Path)
	}
	r := startWatcher(t, []Root{claude, again}, WatchOptions{})
	r.waitFor("both files", func(m map[string]FileStat) bool { return len(m) == 2 })
	write(t, s, "{}\n")
	r.waitFor("growth", func(m map[string]FileStat) bool { return m[s].Size == 6 })
	if len(r.seen) != 2 {
		t.Fatalf("watcher reported %d files, want 2: %v", len(r.seen), r.seen)
	}
}

// A root that is a link to nowhere is not silent: it is said once, and
// picked up when its target appears.
func TestDanglingRootLink(t *testing.T) {
	home := t.TempDir()
	target := filepath.Join(t.TempDir(), "claude")
	symlink(t, target, filepath.Join(home, ".claude"))
	claude := Root{Agent: "claude", Layout: LayoutClaude, Dir: filepath.Join(home, ".claude")}
	w := NewWatcher([]Root{claude}, WatchOptions{})
	w.fullScan()
	if !w.warned[claude.Dir] {
		t.Fatal("a dangling root link was not reported")
	}
	p := filepath.Join(target, "projects", "-w", "s.jsonl")
	write(t, p, "{}\n")
	w.fullScan()
	if u := w.collect(); len(u.Files) != 1 || u.Files[0].Path != filepath.Join(claude.Dir, "projects", "-w", "s.jsonl") {
		t.Fatalf("after the target appeared: %+v", u.Files)
	}
}

func TestRotation(t *testing.T) {
	for _, tc := range []struct {
		path, base string
		n          int
	}{
		{"/h/.claude/projects/-w/a.jsonl", "/h/.claude/projects/-w/a.jsonl", 0},
		{"/h/.claude/projects/-w/a.jsonl.1", "/h/.claude/projects/-w/a.jsonl", 1},
		{"/h/.claude/projects/-w/a.jsonl.12", "/h/.claude/projects/-w/a.jsonl", 12},
		{"/h/a.jsonl.0", "/h/a.jsonl.0", 0},
		{"/h/a.jsonl.1234", "/h/a.jsonl.1234", 0},
		{"/h/a.jsonl.", "/h/a.jsonl.", 0},
		{"/h/.claude.1/x", "/h/.claude.1/x", 0},
	} {
		if base, n := Rotation(tc.path); base != tc.base || n != tc.n {
			t.Errorf("Rotation(%s) = %s, %d; want %s, %d", tc.path, base, n, tc.base, tc.n)
		}
	}
	claude := Root{Agent: "claude", Layout: LayoutClaude, Dir: "/h/.claude"}
	codex := Root{Agent: "codex", Layout: LayoutCodex, Dir: "/h/.codex"}
	for path, want := range map[string]string{
		"/h/.claude/projects/-w/a.jsonl.1":                       FormLines,
		"/h/.claude/projects/-w/a/subagents/agent-x.jsonl.2":     FormLines,
		"/h/.claude/projects/-w/a.txt.1":                         "",
		"/h/.codex/sessions/2026/01/02/rollout-x.jsonl.1":        FormLines,
		"/h/.codex/sessions/2026/01/02/rollout-x.jsonl.zst.1":    "",
		"/h/.codex/sessions/2026/01/02/rollout-x.jsonl.backup.1": "",
	} {
		r := claude
		if strings.HasPrefix(path, codex.Dir) {
			r = codex
		}
		if got := r.Form(path); got != want {
			t.Errorf("Form(%s) = %q, want %q", path, got, want)
		}
	}
	names := []string{"a.jsonl", "b.jsonl.1", "a.jsonl.1", "a.jsonl.2", "b.jsonl"}
	sort.Slice(names, func(i, j int) bool { return RotationOrder(names[i], names[j]) < 0 })
	if got := strings.Join(names, " "); got != "a.jsonl.2 a.jsonl.1 a.jsonl b.jsonl.1 b.jsonl" {
		t.Errorf("rotation order: %s", got)
	}
}

// One directory given as the root of two agents is walked for each: a
// directory is left out as met already only when a root of the same layout
// met it.
func TestOneDirectoryTwoAgentsRoots(t *testing.T) {
	dir := t.TempDir()
	claudeLog := filepath.Join(dir, "projects", "-w", "s.jsonl")
	codexLog := filepath.Join(dir, "sessions", "2026", "01", "01", "rollout-2026-01-01T00-00-00-x.jsonl")
	write(t, claudeLog, "{}\n")
	write(t, codexLog, "{}\n")
	roots := []Root{{Agent: "claude", Layout: LayoutClaude, Dir: dir}, {Agent: "codex", Layout: LayoutCodex, Dir: dir}}
	var scanned []string
	for _, f := range Scan(roots) {
		scanned = append(scanned, f.Agent+":"+f.Path)
	}
	want := []string{"claude:" + claudeLog, "codex:" + codexLog}
	if !slices.Equal(scanned, want) {
		t.Errorf("Scan = %q, want %q", scanned, want)
	}
	var walked []string
	WalkInPathOrder(roots, nil, func(FileStat) bool { return true }, func(f FileStat) bool {
		walked = append(walked, f.Agent+":"+f.Path)
		return true
	})
	if !slices.Equal(walked, want) {
		t.Errorf("WalkInPathOrder = %q, want %q", walked, want)
	}
}

// A link made between the two walks of WalkInPathOrder, to a directory the
// walk reads under its own name, does not hand its logs over twice; one
// made to a directory followed through a link that went away takes over.
func TestLinkMadeBetweenTheWalks(t *testing.T) {
	home := t.TempDir()
	root := Root{Agent: "claude", Layout: LayoutClaude, Dir: filepath.Join(home, ".claude")}
	proj := filepath.Join(root.Dir, "projects")
	write(t, filepath.Join(proj, "-w", "s.jsonl"), "{}\n")
	elsewhere := filepath.Join(home, "elsewhere")
	write(t, filepath.Join(elsewhere, "t.jsonl"), "{}\n")
	symlink(t, elsewhere, filepath.Join(proj, "-x"))
	made := false
	var walked []string
	WalkInPathOrder([]Root{root}, nil, func(f FileStat) bool {
		if !made && strings.Contains(f.Path, "-x") { // "-x" entered: the first walk follows it
			made = true
			symlink(t, filepath.Join(proj, "-w"), filepath.Join(proj, "-a")) // sorts first in path order
			os.Remove(filepath.Join(proj, "-x"))
			symlink(t, elsewhere, filepath.Join(proj, "-y"))
		}
		return true
	}, func(f FileStat) bool {
		walked = append(walked, strings.TrimPrefix(f.Path, proj+string(filepath.Separator)))
		return true
	})
	want := []string{filepath.FromSlash("-w/s.jsonl"), filepath.FromSlash("-y/t.jsonl")}
	if !slices.Equal(walked, want) {
		t.Errorf("walked %q, want %q", walked, want)
	}
}

// allWalks lists, agent and path, the logs Walk, Scan and WalkInPathOrder
// hand over, each sorted.
func allWalks(roots []Root) (walk, scan, ordered []string) {
	Walk(roots, func(f FileStat) bool { walk = append(walk, f.Agent+":"+f.Path); return true })
	for _, f := range Scan(roots) {
		scan = append(scan, f.Agent+":"+f.Path)
	}
	WalkInPathOrder(roots, nil, func(FileStat) bool { return true }, func(f FileStat) bool {
		ordered = append(ordered, f.Agent+":"+f.Path)
		return true
	})
	slices.Sort(walk)
	slices.Sort(scan)
	slices.Sort(ordered)
	return walk, scan, ordered
}

// One directory as the roots of two agents, reached through a link inside
// it (projects kept on another disk) or given to one agent through a link:
// every walk reads it for both.
func TestOneDirectoryTwoAgentsThroughLinks(t *testing.T) {
	t.Run("linked inside", func(t *testing.T) {
		home := t.TempDir()
		dir, disk := filepath.Join(home, "x"), filepath.Join(home, "disk")
		write(t, filepath.Join(disk, "-w", "s.jsonl"), "{}\n")
		write(t, filepath.Join(disk, "p", "agent-transcripts", "a", "t.jsonl"), "{}\n")
		write(t, filepath.Join(dir, "keep"), "")
		symlink(t, disk, filepath.Join(dir, "projects"))
		roots := []Root{{Agent: "claude", Layout: LayoutClaude, Dir: dir}, {Agent: "cursor", Layout: LayoutCursor, Dir: dir}}
		want := []string{"claude:" + filepath.Join(dir, "projects", "-w", "s.jsonl"),
			"cursor:" + filepath.Join(dir, "projects", "p", "agent-transcripts", "a", "t.jsonl")}
		checkAllWalks(t, roots, want)
	})
	t.Run("root through a link", func(t *testing.T) {
		home := t.TempDir()
		dir, link := filepath.Join(home, "x"), filepath.Join(home, "codex")
		write(t, filepath.Join(dir, "projects", "-w", "s.jsonl"), "{}\n")
		write(t, filepath.Join(dir, "sessions", "2026", "01", "01", "rollout-2026-01-01T00-00-00-x.jsonl"), "{}\n")
		symlink(t, dir, link)
		roots := []Root{{Agent: "claude", Layout: LayoutClaude, Dir: dir}, {Agent: "codex", Layout: LayoutCodex, Dir: link}}
		want := []string{"claude:" + filepath.Join(dir, "projects", "-w", "s.jsonl"),
			"codex:" + filepath.Join(link, "sessions", "2026", "01", "01", "rollout-2026-01-01T00-00-00-x.jsonl")}
		checkAllWalks(t, roots, want)
	})
	t.Run("same layout between", func(t *testing.T) {
		// A, B, A': the third root (A's layout and directory, another
		// agent's name) is not read again because B, whose layout shares
		// "projects", came between.
		dir := t.TempDir()
		log := filepath.Join(dir, "projects", "-w", "s.jsonl")
		write(t, log, "{}\n")
		cursorLog := filepath.Join(dir, "projects", "p", "agent-transcripts", "a", "t.jsonl")
		write(t, cursorLog, "{}\n")
		roots := []Root{{Agent: "claude", Layout: LayoutClaude, Dir: dir}, {Agent: "cursor", Layout: LayoutCursor, Dir: dir},
			{Agent: "claude-copy", Layout: LayoutClaude, Dir: dir}}
		checkAllWalks(t, roots, []string{"claude:" + log, "cursor:" + cursorLog})
	})
}

func checkAllWalks(t *testing.T, roots []Root, want []string) {
	t.Helper()
	walk, scan, ordered := allWalks(roots)
	for _, c := range []struct {
		name string
		got  []string
	}{{"Walk", walk}, {"Scan", scan}, {"WalkInPathOrder", ordered}} {
		if !slices.Equal(c.got, want) {
			t.Errorf("%s = %q, want %q", c.name, c.got, want)
		}
	}
}

// A directory moved out of the tree and back between two rescans is
// followed again at once: a running watcher claims directories afresh on
// every walk a notification starts, and when the directory is followed
// through a link (whose name sorts first), the link's name is walked again
// as its directory comes back.
func TestDirectoryMovedAwayAndBack(t *testing.T) {
	for _, linked := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "through a link"}[linked], func(t *testing.T) {
			home := t.TempDir()
			claude := Root{Agent: "claude", Layout: LayoutClaude, Dir: filepath.Join(home, ".claude")}
			proj := filepath.Join(claude.Dir, "projects")
			project := filepath.Join(proj, "-w")
			write(t, filepath.Join(project, "s1.jsonl"), "{}\n")
			log := filepath.Join(project, "s1.jsonl")
			if linked {
				symlink(t, project, filepath.Join(proj, "-a"))
				log = filepath.Join(proj, "-a", "s1.jsonl")
			}
			r := moveAwayAndBack(t, []Root{claude}, project, log)
			write(t, filepath.Join(project, "s1.jsonl"), "{}\n")
			r.waitFor("growth after the move back", func(m map[string]FileStat) bool { return m[log].Size == 6 })
			if f, ok := r.seen[filepath.Join(project, "s1.jsonl")]; linked && ok && !f.Gone {
				t.Error("the log was reported under its second name too")
			}
		})
	}
}

// moveAwayAndBack starts a watcher over roots (rescans an hour apart, so
// that notifications alone must do the job), moves project out of the tree
// and back, and waits for log, the one log in it as the watcher names it,
// to be reported gone and then there again.
func moveAwayAndBack(t *testing.T, roots []Root, project, log string) *watchRig {
	t.Helper()
	r := startWatcher(t, roots, WatchOptions{Rescan: time.Hour})
	r.waitFor("initial file", func(m map[string]FileStat) bool { return m[log].Size == 3 })
	away := filepath.Join(t.TempDir(), "away")
	if err := os.Rename(project, away); err != nil {
		t.Fatal(err)
	}
	r.waitFor("moved out", func(m map[string]FileStat) bool { return m[log].Gone })
	if err := os.Rename(away, project); err != nil {
		t.Fatal(err)
	}
	r.waitFor("moved back", func(m map[string]FileStat) bool { return m[log].Size == 3 && !m[log].Gone })
	return r
}

// A log name that is a link looping back to itself is not read (nothing
// can be), and is said once, as a looping directory is; a link to a log
// deleted stays quiet.
func TestLoopingLogLinkIsSaid(t *testing.T) {
	home := t.TempDir()
	claude := Root{Agent: "claude", Layout: LayoutClaude, Dir: filepath.Join(home, ".claude")}
	proj := filepath.Join(claude.Dir, "projects", "-w")
	write(t, filepath.Join(proj, "s.jsonl"), "{}\n")
	a, b := filepath.Join(proj, "a.jsonl"), filepath.Join(proj, "b.jsonl")
	symlink(t, b, a)
	symlink(t, a, b)
	gone := filepath.Join(proj, "gone.jsonl")
	symlink(t, filepath.Join(proj, "deleted.jsonl"), gone)
	w := NewWatcher([]Root{claude}, WatchOptions{})
	w.fullScan()
	if u := w.collect(); len(u.Files) != 1 {
		t.Fatalf("files %+v, want s.jsonl alone", u.Files)
	}
	if !w.warned["loop:"+a] || !w.warned["loop:"+b] {
		t.Errorf("looping log links not said: %v", w.warned)
	}
	if w.warned["loop:"+gone] {
		t.Error("a link to a deleted log said as a loop")
	}
}
