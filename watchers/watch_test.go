package watchers

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/fsnotify/fsnotify"
)

type watchRig struct {
	t    *testing.T
	w    *Watcher
	seen map[string]FileStat
}

func startWatcher(t *testing.T, roots []Root, opt WatchOptions) *watchRig {
	t.Helper()
	if opt.Debounce == 0 {
		opt.Debounce = 10 * time.Millisecond
	}
	if opt.Rescan == 0 {
		opt.Rescan = time.Hour // events alone must do the job
	}
	w := NewWatcher(roots, opt)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { w.Run(ctx); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return &watchRig{t: t, w: w, seen: map[string]FileStat{}}
}

// waitFor consumes updates until pred holds over the latest state of each
// path (or fails after a generous bound: this is not a timing assertion).
func (r *watchRig) waitFor(what string, pred func(map[string]FileStat) bool) {
	r.t.Helper()
	deadline := time.After(20 * time.Second)
	for !pred(r.seen) {
		select {
		case u := <-r.w.Updates():
			for _, f := range u.Files {
				r.seen[f.Path] = f
			}
		case <-deadline:
			r.t.Fatalf("timed out waiting for %s; saw %v", what, r.seen)
		}
	}
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(content)
	f.Close()
}

func TestWatcherFollowsTree(t *testing.T) {
	home := t.TempDir()
	claude := Root{Agent: "claude", Layout: LayoutClaude, Dir: filepath.Join(home, ".claude")}
	codex := Root{Agent: "codex", Layout: LayoutCodex, Dir: filepath.Join(home, ".codex")}
	main := filepath.Join(claude.Dir, "projects", "-w", "s1.jsonl")
	write(t, main, "{}\n")
	r := startWatcher(t, []Root{claude, codex}, WatchOptions{})
	r.waitFor("initial file", func(m map[string]FileStat) bool { return m[main].Size == 3 })

	write(t, main, "{}\n")
	r.waitFor("growth", func(m map[string]FileStat) bool { return m[main].Size == 6 })

	sub := filepath.Join(claude.Dir, "projects", "-w", "s1", "subagents", "agent-a.jsonl")
	write(t, sub, "{}\n")
	r.waitFor("file in new subdirectories", func(m map[string]FileStat) bool { return m[sub].Size == 3 })

	// A root created after start is picked up without a rescan.
	roll := filepath.Join(codex.Dir, "sessions", "2026", "05", "01", "rollout-x.jsonl")
	write(t, roll, "{}\n")
	r.waitFor("root created after start", func(m map[string]FileStat) bool { return m[roll].Size == 3 })

	archived := filepath.Join(codex.Dir, "archived_sessions", "rollout-x.jsonl")
	os.MkdirAll(filepath.Dir(archived), 0o700)
	if err := os.Rename(roll, archived); err != nil {
		t.Fatal(err)
	}
	r.waitFor("rename into the archive", func(m map[string]FileStat) bool {
		return m[roll].Gone && m[archived].Size == 3 && m[archived].Archived
	})

	os.Remove(main)
	r.waitFor("deletion", func(m map[string]FileStat) bool { return m[main].Gone })
}

// With no watches at all, the rescan still finds everything.
func TestWatcherRescanIsTheTruth(t *testing.T) {
	home := t.TempDir()
	codex := Root{Agent: "codex", Layout: LayoutCodex, Dir: filepath.Join(home, ".codex")}
	r := startWatcher(t, []Root{codex}, WatchOptions{MaxWatches: 1, Rescan: 30 * time.Millisecond})
	roll := filepath.Join(codex.Dir, "sessions", "2026", "01", "02", "rollout-y.jsonl")
	write(t, roll, "{}\n")
	r.waitFor("file beyond the watch cap", func(m map[string]FileStat) bool { return m[roll].Size == 3 })
	if n := r.w.Watches(); n > 1 {
		t.Fatalf("%d watches over a cap of 1", n)
	}
	// What is not watched is said, for status and doctor.
	if p := r.w.Problem(); !strings.Contains(p, "cap on directory watches (1)") {
		t.Errorf("Problem() = %q, want the cap named", p)
	}
}

// The directories a walk could not watch are tried again by every
// rescan: once they fit (here, fewer directories under the cap; for real,
// a limit raised or watches freed), they are watched and the problem goes.
func TestWatcherProblemClearsOnceEveryDirectoryIsWatched(t *testing.T) {
	home := t.TempDir()
	codex := Root{Agent: "codex", Layout: LayoutCodex, Dir: filepath.Join(home, ".codex")}
	days := filepath.Join(codex.Dir, "sessions", "2026", "01")
	for _, d := range []string{"01", "02", "03", "04", "05", "06"} {
		write(t, filepath.Join(days, d, "rollout-"+d+".jsonl"), "{}\n")
	}
	r := startWatcher(t, []Root{codex}, WatchOptions{MaxWatches: 5, Rescan: 30 * time.Millisecond})
	deadline := time.Now().Add(20 * time.Second)
	// Once the walk is done, the problem names the cap and how many
	// directories it left out (the 10 of the tree less the 5 watched).
	for !strings.Contains(r.w.Problem(), "cap on directory watches (5) is reached: 5 directories not watched") {
		if time.Now().After(deadline) {
			t.Fatalf("Problem() = %q with 10 directories under a cap of 5", r.w.Problem())
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, d := range []string{"02", "03", "04", "05", "06"} {
		os.RemoveAll(filepath.Join(days, d))
	}
	for r.w.Problem() != "" {
		if time.Now().After(deadline) {
			t.Fatalf("Problem() = %q with 4 directories under a cap of 5", r.w.Problem())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// A watcher within its limits has no problem to tell.
func TestWatcherWithinItsLimitsHasNoProblem(t *testing.T) {
	home := t.TempDir()
	codex := Root{Agent: "codex", Layout: LayoutCodex, Dir: filepath.Join(home, ".codex")}
	r := startWatcher(t, []Root{codex}, WatchOptions{})
	roll := filepath.Join(codex.Dir, "sessions", "2026", "01", "02", "rollout-y.jsonl")
	write(t, roll, "{}\n")
	r.waitFor("the new log", func(m map[string]FileStat) bool { return m[roll].Size == 3 })
	if p := r.w.Problem(); p != "" {
		t.Errorf("Problem() = %q", p)
	}
}

func TestScan(t *testing.T) {
	home := t.TempDir()
	cur := Root{Agent: "cursor", Layout: LayoutCursor, Dir: filepath.Join(home, ".cursor")}
	a := filepath.Join(cur.Dir, "projects", "p", "agent-transcripts", "u", "u.jsonl")
	db := filepath.Join(cur.Dir, "chats", "h", "c", "store.db")
	write(t, a, "{}\n")
	write(t, db, "x")
	write(t, db+"-wal", "walwal")
	write(t, filepath.Join(cur.Dir, "projects", "p", "agent-transcripts", "old.txt"), "x")
	got := Scan([]Root{cur, {Agent: "claude", Layout: LayoutClaude, Dir: filepath.Join(home, "missing")}})
	if len(got) != 2 || got[0].Path != db || got[0].Form != FormSQLite || got[0].Wal == nil || got[0].Wal.Size != 6 || got[1].Path != a {
		t.Fatalf("Scan = %+v", got)
	}
	if !slices.IsSortedFunc(got, func(a, b FileStat) int { return strings.Compare(a.Path, b.Path) }) {
		t.Errorf("Scan is not in path order: %+v", got)
	}
}

// Scan keeps nothing of what it met for a later walk, and a log met twice
// (a root given twice) is still one log.
func TestScanOneShot(t *testing.T) {
	home := t.TempDir()
	root := Root{Agent: "claude", Layout: LayoutClaude, Dir: filepath.Join(home, ".claude")}
	a := filepath.Join(root.Dir, "projects", "-w", "a.jsonl")
	b := filepath.Join(root.Dir, "projects", "-w", "a", "subagents", "agent-b.jsonl")
	write(t, a, "{}\n")
	write(t, b, "{}\n{}\n")
	got := Scan([]Root{root, root})
	if len(got) != 2 || got[0].Path != a || got[1].Path != b || got[1].Size != 6 {
		t.Fatalf("Scan of a root given twice = %+v", got)
	}
	w := NewWatcher([]Root{root}, WatchOptions{})
	var found []FileStat
	w.emit = func(f FileStat) bool { found = append(found, f); return true }
	w.walk(root, root.Dir, false)
	if len(found) != 2 || len(w.known) != 0 || len(w.pending) != 0 || len(w.listings) != 0 {
		t.Errorf("a one-shot walk found %d logs and kept %d records, %d changes, %d listings",
			len(found), len(w.known), len(w.pending), len(w.listings))
	}
}

// A walk that hands the logs over as it meets them does so in path order,
// which is not the order of the names ("-w-x" sorts before "-w/…"), and
// sizes them first.
func TestWalkInPathOrder(t *testing.T) {
	home := t.TempDir()
	root := Root{Agent: "claude", Layout: LayoutClaude, Dir: filepath.Join(home, ".claude")}
	proj := filepath.Join(root.Dir, "projects")
	for _, p := range []string{"-w/s.jsonl", "-w/s/subagents/agent-a.jsonl", "-w/s-2.jsonl", "-w-x/t.jsonl", "-w0/u.jsonl"} {
		write(t, filepath.Join(proj, p), "{}\n")
	}
	var got []string
	logs, bytes := 0, int64(0)
	WalkInPathOrder([]Root{root}, nil, func(f FileStat) bool { logs, bytes = logs+1, bytes+f.Size; return true }, func(f FileStat) bool {
		if logs == 0 {
			t.Error("logs handed over before the walk was sized")
		}
		got = append(got, strings.TrimPrefix(f.Path, proj+string(filepath.Separator)))
		return true
	})
	want := []string{"-w-x/t.jsonl", "-w/s-2.jsonl", "-w/s.jsonl", "-w/s/subagents/agent-a.jsonl", "-w0/u.jsonl"}
	for i := range want {
		want[i] = filepath.FromSlash(want[i])
	}
	if !slices.Equal(got, want) {
		t.Errorf("walked %q, want %q", got, want)
	}
	if logs != 5 || bytes != 15 {
		t.Errorf("sized %d logs, %d bytes; want 5, 15", logs, bytes)
	}
	var scanned []string
	for _, f := range Scan([]Root{root}) {
		scanned = append(scanned, strings.TrimPrefix(f.Path, proj+string(filepath.Separator)))
	}
	if !slices.Equal(scanned, want) {
		t.Errorf("Scan = %q, want %q", scanned, want)
	}
	var first []string
	all := func(FileStat) bool { return true }
	WalkInPathOrder([]Root{root}, nil, all, func(f FileStat) bool {
		first = append(first, f.Path)
		return len(first) < 2
	})
	if len(first) != 2 {
		t.Errorf("a walk told to stop after 2 logs handed over %d", len(first))
	}
	sized, handed := 0, 0
	WalkInPathOrder([]Root{root}, nil, func(FileStat) bool { sized++; return sized < 2 }, func(FileStat) bool { handed++; return true })
	if sized != 2 || handed != 0 {
		t.Errorf("a walk told to stop while sized after 2 logs sized %d and handed over %d", sized, handed)
	}

	// A root given twice (a directory listed twice), or twice under two
	// spellings, is walked once: every log is met once, in both walks.
	inner := Root{Agent: "claude", Layout: LayoutClaude, Dir: root.Dir + string(filepath.Separator) + "."}
	for _, roots := range [][]Root{{root, root}, {root, inner}} {
		var twice []string
		sized = 0
		WalkInPathOrder(roots, nil, func(FileStat) bool { sized++; return true }, func(f FileStat) bool {
			twice = append(twice, strings.TrimPrefix(f.Path, proj+string(filepath.Separator)))
			return true
		})
		if !slices.Equal(twice, want) || sized != len(want) {
			t.Errorf("roots %v: sized %d logs and walked %q, want %d and %q", roots, sized, twice, len(want), want)
		}
		scanned = scanned[:0]
		Walk(roots, func(FileStat) bool { scanned = append(scanned, ""); return true })
		if len(scanned) != len(want) {
			t.Errorf("roots %v: Walk met %d logs, want %d", roots, len(scanned), len(want))
		}
	}
}

// The scan logic without the event loop: what a full scan and a scan of
// named paths report, step by step.
func TestScanDiffs(t *testing.T) {
	home := t.TempDir()
	root := Root{Agent: "claude", Layout: LayoutClaude, Dir: filepath.Join(home, ".claude")}
	w := NewWatcher([]Root{root}, WatchOptions{})
	take := func() map[string]FileStat {
		u := w.collect()
		w.pending, w.full = map[string]FileStat{}, false
		m := map[string]FileStat{}
		for _, f := range u.Files {
			m[f.Path] = f
		}
		return m
	}
	a := filepath.Join(root.Dir, "projects", "-w", "a.jsonl")
	b := filepath.Join(root.Dir, "projects", "-w", "s", "subagents", "agent-b.jsonl")
	write(t, a, "{}\n")
	w.fullScan()
	if got := take(); len(got) != 1 || got[a].Size != 3 {
		t.Fatalf("first scan: %v", got)
	}
	w.fullScan()
	if got := take(); len(got) != 0 {
		t.Fatalf("a scan with no change reports %v", got)
	}
	write(t, a, "{}\n")
	write(t, b, "{}\n")
	w.scanPaths(map[string]bool{a: true, filepath.Join(root.Dir, "projects", "-w", "s"): true})
	if got := take(); len(got) != 2 || got[a].Size != 6 || got[b].Size != 3 {
		t.Fatalf("scan of named paths: %v", got)
	}
	os.RemoveAll(filepath.Join(root.Dir, "projects", "-w", "s"))
	w.scanPaths(map[string]bool{filepath.Join(root.Dir, "projects", "-w", "s"): true})
	if got := take(); len(got) != 1 || !got[b].Gone {
		t.Fatalf("a removed directory: %v", got)
	}
	os.Remove(a)
	w.fullScan()
	if got := take(); len(got) != 1 || !got[a].Gone {
		t.Fatalf("a file removed between scans: %v", got)
	}
}

// Where every entry of a watched directory costs a descriptor (kqueue),
// the cap counts entries, not directories.
func TestWatchCostPerEntry(t *testing.T) {
	home := t.TempDir()
	root := Root{Agent: "claude", Layout: LayoutClaude, Dir: filepath.Join(home, ".claude")}
	for i := 0; i < 10; i++ {
		write(t, filepath.Join(root.Dir, "projects", "-big", fmt.Sprintf("s%d.jsonl", i)), "{}\n")
	}
	write(t, filepath.Join(root.Dir, "projects", "-small", "s.jsonl"), "{}\n")
	w := NewWatcher([]Root{root}, WatchOptions{MaxWatches: 8})
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		t.Skip(err)
	}
	defer fsw.Close()
	w.fsw, w.perFile = fsw, true
	w.fullScan()
	if w.WatchCost() > 8 {
		t.Fatalf("watch cost %d over a cap of 8", w.WatchCost())
	}
	if _, ok := w.watched[filepath.Join(root.Dir, "projects", "-big")]; ok {
		t.Fatal("a directory of 10 entries watched under a cap of 8")
	}
	if len(w.collect().Files) != 11 {
		t.Fatal("files beyond the cap not found by the scan")
	}
	if !kqueue("darwin") || kqueue("linux") || kqueue("windows") {
		t.Fatal("kqueue platforms")
	}
}

// TestRescanTrustsWatchesInTurns: where a directory's watch is live, a
// rescan reuses its listing and stats its logs only on its turn, so a
// write whose notification was lost is still found within statEvery
// rescans; a new file is found at once (its directory changed), and after
// lost notifications the next rescan stats everything.
func TestRescanTrustsWatchesInTurns(t *testing.T) {
	root := Root{Agent: "claude", Layout: LayoutClaude, Dir: filepath.Join(t.TempDir(), ".claude")}
	var dirs []string
	for p := range 4 {
		d := filepath.Join(root.Dir, "projects", fmt.Sprintf("-w-%d", p))
		os.MkdirAll(d, 0o700)
		for s := range 3 {
			os.WriteFile(filepath.Join(d, fmt.Sprintf("%08d-0000-4000-8000-000000000000.jsonl", p*10+s)), []byte("{}\n"), 0o600)
		}
		dirs = append(dirs, d)
	}
	old := time.Now().Add(-time.Minute)
	filepath.WalkDir(root.Dir, func(p string, d os.DirEntry, err error) error {
		os.Chtimes(p, old, old)
		return nil
	})
	w := NewWatcher([]Root{root}, WatchOptions{})
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		t.Skipf("no file notifications here: %v", err)
	}
	defer fsw.Close()
	w.fsw = fsw // its events are never read: every notification is lost
	w.fullScan()
	if len(w.known) != 12 {
		t.Fatalf("%d logs known, want 12", len(w.known))
	}
	drain := func() []FileStat {
		u := w.collect()
		w.pending = map[string]FileStat{}
		return u.Files
	}
	drain()

	// An append (the directory's time does not change).
	grown := filepath.Join(dirs[2], "00000021-0000-4000-8000-000000000000.jsonl")
	os.WriteFile(grown, []byte("{}\n{}\n"), 0o600)
	os.Chtimes(grown, old.Add(time.Second), old.Add(time.Second))
	found := 0
	for i := 1; i <= statEvery; i++ {
		w.fullScan()
		for _, f := range drain() {
			if f.Path == grown && f.Size == 6 {
				found = i
			}
		}
		if found > 0 {
			break
		}
	}
	if found == 0 {
		t.Fatalf("an append was not found in %d rescans", statEvery)
	}
	t.Logf("append found by rescan %d of at most %d", found, statEvery)

	// A new file is found by the next rescan, whoever's turn it is.
	added := filepath.Join(dirs[0], "00000009-0000-4000-8000-000000000000.jsonl")
	os.WriteFile(added, []byte("{}\n"), 0o600)
	w.fullScan()
	if got := drain(); len(got) != 1 || got[0].Path != added {
		t.Fatalf("after adding a file, the rescan reported %+v", got)
	}
	// A removed one too.
	os.Remove(added)
	w.fullScan()
	if got := drain(); len(got) != 1 || got[0].Path != added || !got[0].Gone {
		t.Fatalf("after removing a file, the rescan reported %+v", got)
	}

	// Lost notifications: the next rescan stats every log.
	var changed []string
	for i, d := range dirs {
		p := filepath.Join(d, fmt.Sprintf("%08d-0000-4000-8000-000000000000.jsonl", i*10))
		os.WriteFile(p, []byte("{}\n{}\n{}\n"), 0o600)
		os.Chtimes(p, old.Add(2*time.Second), old.Add(2*time.Second))
		changed = append(changed, p)
	}
	w.complete = true
	w.fullScan()
	var got []string
	for _, f := range drain() {
		got = append(got, f.Path)
	}
	if !slices.Equal(got, changed) {
		t.Fatalf("the rescan after lost notifications reported %v, want %v", got, changed)
	}
}

// A catch-up's walk holds a FileStat for every log: a field added inline
// costs its bytes a log, at 100,000 logs and more.
func TestFileStatSlotStaysSmall(t *testing.T) {
	if n := unsafe.Sizeof(FileStat{}); n > 112 && unsafe.Sizeof(uintptr(0)) == 8 {
		t.Errorf("FileStat is %d bytes, want at most 112", n)
	}
}

// A following daemon keeps a knownFile for every log it follows; it stays
// within its 80-byte size class on 64-bit machines.
func TestKnownFileStaysSmall(t *testing.T) {
	if n := unsafe.Sizeof(knownFile{}); n > 80 && unsafe.Sizeof(uintptr(0)) == 8 {
		t.Errorf("knownFile is %d bytes, want at most 80", n)
	}
}

// The compact record of a known file tells every change a FileStat
// comparison told: size, identity, time to the nanosecond (also far
// outside the range of Unix nanoseconds), a -wal's size and time, and a
// file gone; and it reports a gone file under its agent and form.
func TestKnownFileSeesEveryChange(t *testing.T) {
	w := NewWatcher(nil, WatchOptions{})
	base := FileStat{Path: "/h/a.jsonl", Agent: "claude", Form: "log", Archived: true, Size: 10,
		ModTime: time.Date(2026, 5, 1, 0, 0, 0, 500, time.UTC), ID: FileID{Dev: 1, Ino: 2}}
	k := &knownFile{}
	w.set(k, base)
	if !k.same(base) {
		t.Fatal("a file not seen as itself")
	}
	changed := map[string]func(FileStat) FileStat{
		"size":       func(f FileStat) FileStat { f.Size++; return f },
		"inode":      func(f FileStat) FileStat { f.ID.Ino++; return f },
		"nanosecond": func(f FileStat) FileStat { f.ModTime = f.ModTime.Add(time.Nanosecond); return f },
		"far future": func(f FileStat) FileStat { f.ModTime = f.ModTime.AddDate(600, 0, 0); return f },
		"wal":        func(f FileStat) FileStat { f.Wal = &WalStat{Size: 1}; return f },
		"gone":       func(f FileStat) FileStat { f.Gone = true; return f },
	}
	for name, change := range changed {
		if k.same(change(base)) {
			t.Errorf("%s changed, not seen", name)
		}
	}
	far := base
	far.ModTime = time.Date(2400, 1, 1, 0, 0, 0, 7, time.UTC)
	farther := far
	farther.ModTime = farther.ModTime.Add(1 << 62).Add(1 << 62).Add(1 << 62).Add(1 << 62) // 2^64 ns on: the same Unix nanoseconds, wrapped
	w.set(k, far)
	if !k.same(far) || k.same(farther) {
		t.Errorf("times past the range of Unix nanoseconds compared wrong")
	}
	walled := base
	walled.Wal = &WalStat{Size: 5, ModTime: base.ModTime}
	w.set(k, walled)
	same := walled
	same.Wal = &WalStat{Size: 5, ModTime: base.ModTime}
	if !k.same(same) {
		t.Error("the same -wal seen as a change")
	}
	walTime := walled
	walTime.Wal = &WalStat{Size: 5, ModTime: base.ModTime.Add(time.Second)}
	walGone := walled
	walGone.Wal = nil
	if k.same(walTime) || k.same(walGone) {
		t.Error("a -wal's new time, or a -wal gone, not seen")
	}
	w.set(&knownFile{}, FileStat{Path: "/h/b.vscdb", Agent: "cursor", Form: FormSQLite})
	if g := w.gone(k); g != (FileStat{Path: "/h/a.jsonl", Agent: "claude", Form: "log", Gone: true}) {
		t.Errorf("gone file reported as %+v", g)
	}
	if len(w.kinds) != 2 {
		t.Errorf("%d kinds for two agents' forms, want 2", len(w.kinds))
	}
}

func TestIsUnder(t *testing.T) {
	sep := string(filepath.Separator)
	for _, c := range []struct {
		dir, p string
		want   bool
	}{
		{"a", "a" + sep + "b", true},
		{"a", "a" + sep + "b" + sep + "c", true},
		{"a", "a", false},
		{"a", "ab", false},
		{"a", "a-b" + sep + "c", false},
		{"a" + sep + "b", "a", false},
		{"", sep + "x", true},
	} {
		if got := isUnder(c.dir, c.p); got != c.want {
			t.Errorf("isUnder(%q, %q) = %v, want %v", c.dir, c.p, got, c.want)
		}
	}
}

// On its turn a directory is read again even though its identity and time
// say it has not changed: a listing found as it was is kept as it is, and
// one that changed behind an unchanged time (a name added and the time set
// back) is rebuilt, so the new log is found on that turn.
func TestTurnReadsAListingAgain(t *testing.T) {
	root := Root{Agent: "claude", Layout: LayoutClaude, Dir: filepath.Join(t.TempDir(), ".claude")}
	dir := filepath.Join(root.Dir, "projects", "-w-0")
	os.MkdirAll(dir, 0o700)
	for s := range 3 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("%08d-0000-4000-8000-000000000000.jsonl", s)), []byte("{}\n"), 0o600)
	}
	old := time.Now().Add(-time.Minute)
	setBack := func() {
		filepath.WalkDir(root.Dir, func(p string, d os.DirEntry, err error) error {
			os.Chtimes(p, old, old)
			return nil
		})
	}
	setBack()
	w := NewWatcher([]Root{root}, WatchOptions{})
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		t.Skipf("no file notifications here: %v", err)
	}
	defer fsw.Close()
	w.fsw = fsw // its events are never read
	w.fullScan()
	w.collect()
	w.pending = map[string]FileStat{}
	key := listingKey{dir, root.Layout}
	first := w.listings[key]
	if first == nil || len(first.entries) != 3 {
		t.Fatalf("listing after the first scan: %+v", first)
	}
	// Rescans until the directory's turn: the listing read again is the
	// same, and kept as it is.
	turn := func() {
		for range statEvery {
			w.fullScan()
			if w.mustStat(dir) {
				return
			}
		}
	}
	turn()
	if c := w.listings[key]; c != first || &c.entries[0] != &first.entries[0] {
		t.Fatal("a listing found as it was on its turn was rebuilt")
	}
	added := filepath.Join(dir, "00000007-0000-4000-8000-000000000000.jsonl")
	os.WriteFile(added, []byte("{}\n"), 0o600)
	setBack()
	for range statEvery + 1 {
		w.fullScan()
		if _, ok := w.known[added]; ok {
			return
		}
	}
	t.Fatalf("a log added behind an unchanged directory time was not found in %d rescans", statEvery+1)
}
