package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
)

// TestQuietSessionsAreLetGoOfOnLoad catches up on a home, changes it in
// the ways a day between two scans does, and scans again twice from two
// copies of the data directory: once letting go, as they are loaded, of
// the sessions with nothing new, once keeping every record. The maps and
// records left must be the same, the quiet sessions must have been let go
// of, and those a new log joins read back. A third scan, with nothing
// changed, lets go of all but the Codex parent and child and writes no map.
func TestQuietSessionsAreLetGoOfOnLoad(t *testing.T) {
	home, data := t.TempDir(), t.TempDir()
	read := func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	put := func(p string, b []byte) string {
		p = filepath.Join(home, p)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	basic := string(read("../testdata/claude/basic.jsonl"))
	copyID := func(i int) string { return fmt.Sprintf("0a1b2c3d-0000-4000-8000-%012d", 100+i) }
	copies := make([]string, 12)
	for i := range copies {
		copies[i] = put(".claude/projects/-w-a/"+copyID(i)+".jsonl",
			[]byte(strings.ReplaceAll(basic, "0a1b2c3d-0000-4000-8000-000000000001", copyID(i))))
	}
	// The main log the flat subagent log below names (its sessionId).
	const flatParent = "0a1b2c3d-0000-4000-8000-000000000003"
	put(".claude/projects/-w-a/"+flatParent+".jsonl",
		[]byte(strings.ReplaceAll(basic, "0a1b2c3d-0000-4000-8000-000000000001", flatParent)))
	// A session with a subagent lane read before its sidecar exists.
	const withLanes = "0a1b2c3d-0000-4000-8000-000000000002"
	lanes := "../testdata/claude/" + withLanes + "/subagents/"
	put(".claude/projects/-w-s/"+withLanes+".jsonl", read("../testdata/claude/subagents.jsonl"))
	put(".claude/projects/-w-s/"+withLanes+"/subagents/agent-a1b2c3d4e5f6a7b8c.jsonl", read(lanes+"agent-a1b2c3d4e5f6a7b8c.jsonl"))
	// A Codex rollout, whose child rollout appears in the next day's
	// directory before the second scan.
	put(".codex/sessions/2026/03/01/rollout-2026-03-01T09-00-00-0190aaaa-0000-7000-8000-00000000a001.jsonl",
		read("../testdata/codex/rollout-2026-03-01T09-00-00-0190aaaa-0000-7000-8000-00000000a001.jsonl"))
	roots := homeRoots(runtime.GOOS, home)
	var clock watchers.Clock = watchers.SystemClock{}
	scan := func(data string) (d *Daemon, sessions int) {
		d = New(Options{DataDir: data, Once: true, Roots: roots, Logger: slog.New(slog.DiscardHandler), Clock: clock,
			Progress: func(_, _ int64, n int) { sessions = n }})
		if err := d.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		return d, sessions
	}
	scan(data)

	// A day's changes. Appended to:
	f, err := os.OpenFile(copies[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(strings.SplitAfter(strings.ReplaceAll(basic, "0a1b2c3d-0000-4000-8000-000000000001", copyID(0)), "\n")[0])
	f.Close()
	// Deleted:
	os.Remove(copies[1])
	// Touched, not changed:
	later := time.Now().Add(time.Hour)
	os.Chtimes(copies[2], later, later)
	// Its map gone from the store:
	db, err := state.Open(StatePath(data), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	_, sessions, err := db.Load()
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sessions {
		if s.Key == "claude/"+copyID(3) && s.Flush != nil {
			os.Remove(filepath.Join(MapsDir(data), s.Flush.Path))
		}
	}
	// The sidecar of the lane read without it:
	put(".claude/projects/-w-s/"+withLanes+"/subagents/agent-a1b2c3d4e5f6a7b8c.meta.json", read(lanes+"agent-a1b2c3d4e5f6a7b8c.meta.json"))
	// A new log joining a quiet session (the older flat subagent layout),
	// and a child rollout joining a quiet Codex session:
	put(".claude/projects/-w-a/agent-abc1234.jsonl", read("../testdata/claude/agent-abc1234.jsonl"))
	put(".codex/sessions/2026/03/02/rollout-2026-03-01T09-00-26-0190aaab-0000-7000-8000-00000000b002.jsonl",
		read("../testdata/codex/rollout-2026-03-01T09-00-26-0190aaab-0000-7000-8000-00000000b002.jsonl"))
	// Rewritten in place, the same size, its time put back:
	fi, err := os.Stat(copies[4])
	if err != nil {
		t.Fatal(err)
	}
	b := read(copies[4])
	if i := strings.Index(string(b), `"model":"claude-`); i < 0 {
		t.Fatal("no model in the copied log")
	} else {
		b[i+len(`"model":"claude-`)] ^= 1 // another model name of the same length
	}
	if err := os.WriteFile(copies[4], b, 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(copies[4], fi.ModTime(), fi.ModTime())
	// Renamed into another project directory:
	os.MkdirAll(filepath.Join(home, ".claude/projects/-w-b"), 0o700)
	if err := os.Rename(copies[5], filepath.Join(home, ".claude/projects/-w-b", filepath.Base(copies[5]))); err != nil {
		t.Fatal(err)
	}
	// And the clock gone back a month: activity recorded ahead of it is
	// brought back to now, also in a session read back.
	clock = watchers.NewManualClock(time.Now().Add(-30 * 24 * time.Hour))

	keep := t.TempDir()
	copyTree(t, data, keep)
	defer func(v bool) { retireOnLoad = v }(retireOnLoad)
	retireOnLoad = false
	_, nKept := scan(keep)
	retireOnLoad = true
	d, n := scan(data)
	// Quiet: the 6 copies not changed, the flat log's main session and
	// the Codex rollout, read back when the logs that join them are met.
	if d.retiredOnLoad != 8 && !keysHashAlike {
		t.Errorf("%d sessions let go of on load, want 8", d.retiredOnLoad)
	}
	joined := []string{"claude/" + flatParent, "codex/0190aaaa-0000-7000-8000-00000000a001"}
	for _, key := range joined {
		if (!keysHashAlike && d.retired.has(key)) || d.sessions[key] == nil {
			t.Errorf("%s, which a new log joins, was not read back", key)
		}
	}
	if d.restored != len(joined) && !keysHashAlike && !pathsHashAlike {
		t.Errorf("%d sessions read back, want %d: those new logs join", d.restored, len(joined))
	}
	for _, key := range []string{"claude/" + copyID(0), "claude/" + copyID(3), "claude/" + copyID(4),
		"claude/" + copyID(5), "claude/" + withLanes} {
		if d.retired.has(key) && !keysHashAlike {
			t.Errorf("%s changed but was let go of on load", key)
		}
	}
	if n != nKept {
		t.Errorf("sessions counted at the end: %d letting quiet ones go, %d keeping all", n, nKept)
	}
	_, st := sameRecords(t, "a scan keeping every record", keep, data)

	// Nothing changed since: every session is quiet but the Codex pair
	// (a parent and its child) and the session whose log was deleted (a
	// missing log is not quiet). The log only touched is quiet too: the
	// scan before found it as it was read and recorded its new time.
	// No map is written again.
	before := readMaps(t, MapsDir(data))
	d, n2 := scan(data)
	if want := n - 3; d.retiredOnLoad != want && !keysHashAlike {
		t.Errorf("nothing changed: %d sessions let go of on load, want %d", d.retiredOnLoad, want)
	}
	if !d.retired.has("claude/"+copyID(2)) && !keysHashAlike && !pathsHashAlike {
		t.Error("the log only touched is still not quiet a scan later")
	}
	if n2 != n {
		t.Errorf("sessions counted: %d, then %d with nothing changed", n, n2)
	}
	if diff := diffMaps(readMaps(t, MapsDir(data)), before); len(diff) > 0 {
		t.Errorf("nothing changed, yet the maps did: %v", diff)
	}
	if _, st2 := caughtUp(t, data); st2 != st {
		t.Errorf("nothing changed, yet the records did")
	}
}

// The walk comes after the load: a quiet log changed in between (appended
// to, replaced by another file, moved into another project) has its
// session read back and is read as if it had changed before the scan.
func TestQuietLogsChangedAfterTheLoad(t *testing.T) {
	home, data := t.TempDir(), t.TempDir()
	basic, err := os.ReadFile("../testdata/claude/basic.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	copies, id := claudeCopies(t, home, 5)
	content := func(i int) string {
		return strings.ReplaceAll(string(basic), "0a1b2c3d-0000-4000-8000-000000000001", id(i))
	}
	scan := oneShot(t, home)
	scan(data)
	before := t.TempDir()
	copyTree(t, data, before)

	change := func() {
		f, err := os.OpenFile(copies[0], os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(strings.SplitAfter(content(0), "\n")[0])
		f.Close()
		// Replaced: another file, one line longer, under the same name.
		tmp := copies[1] + ".new"
		if err := os.WriteFile(tmp, []byte(content(1)+strings.SplitAfter(content(1), "\n")[0]), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, copies[1]); err != nil {
			t.Fatal(err)
		}
		if pathsHashAlike {
			return // see TestQuietLogsWhosePathsHashAlike
		}
		moved := filepath.Join(home, ".claude/projects/-w-b", filepath.Base(copies[2]))
		os.MkdirAll(filepath.Dir(moved), 0o700)
		if err := os.Rename(copies[2], moved); err != nil {
			t.Fatal(err)
		}
	}
	defer func() { afterLoad = nil }()
	afterLoad = change
	d := scan(data)
	afterLoad = nil
	if d.retiredOnLoad != len(copies) && !keysHashAlike {
		t.Errorf("%d sessions let go of on load, want all %d", d.retiredOnLoad, len(copies))
	}
	if d.restored != 3 && !keysHashAlike && !pathsHashAlike {
		t.Errorf("%d sessions read back, want the 3 whose log changed after the load", d.restored)
	}
	// The same changes made before a scan, from the data directory as it
	// was: the maps and records must be those.
	scan(before)
	sameRecords(t, "a scan of the changes made before it", before, data)
}

// sameRecords fails unless the data directory got holds the maps and
// records of want's, which a scan described by what left; it returns
// got's.
func sameRecords(t *testing.T, what, want, got string) (map[string][]byte, string) {
	t.Helper()
	maps, st := caughtUp(t, got)
	mapsWant, stWant := caughtUp(t, want)
	if diff := diffMaps(maps, mapsWant); len(diff) > 0 {
		t.Errorf("maps differ from those of %s: %v", what, diff)
	}
	if st != stWant {
		at := 0
		for at < min(len(st), len(stWant)) && st[at] == stWant[at] {
			at++
		}
		from := max(0, at-600)
		t.Errorf("records differ from those of %s, from byte %d:\nthere: %.1200s\nhere:  %.1200s", what, at, stWant[from:], st[from:])
	}
	return maps, st
}

// Of two records of one path, the newer (higher id) is the path's, in
// whatever order they are kept: the quiet logs of a session that stays are
// kept after the others.
func TestKeptSourcesNewerRecordOwnsThePath(t *testing.T) {
	d := New(Options{DataDir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	moved := &state.Source{ID: 9, Path: "/logs/a.jsonl", Session: "claude/b"}
	gone := &state.Source{ID: 3, Path: "/logs/a.jsonl", Session: "claude/a", Missing: true}
	d.keepSource(moved)
	d.keepSource(gone)
	if d.byPath["/logs/a.jsonl"] != moved || d.srcs[3] != gone || d.srcs[9] != moved {
		t.Errorf("the path's record is %d, want 9 (both kept: %v)", d.byPath["/logs/a.jsonl"].ID, len(d.srcs) == 2)
	}
}

// A quiet log deleted between the load and the walk is not met: its
// session is taken up once the walk is done, and the scan's sweep marks
// it missing, as a scan of the log deleted before it does.
func TestQuietLogDeletedAfterTheLoad(t *testing.T) {
	home, data := t.TempDir(), t.TempDir()
	roots, copies := writeQuietHome(t, home, 3)
	// One time for every scan: a session's end is stamped with the clock.
	clock := watchers.NewManualClock(time.Now())
	scan := func(data string) {
		d := New(Options{DataDir: data, Once: true, Roots: roots, Logger: slog.New(slog.DiscardHandler), Clock: clock})
		if err := d.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	scan(data)
	before := t.TempDir()
	copyTree(t, data, before)
	defer func() { afterLoad = nil }()
	afterLoad = func() {
		if err := os.Remove(copies[1]); err != nil {
			t.Fatal(err)
		}
	}
	scan(data)
	afterLoad = nil
	scan(before) // (the two data directories follow one home)
	sameRecords(t, "a scan of the log deleted before it", before, data)
	// The next scan finds nothing more to do.
	scan(data)
	sameRecords(t, "a scan after", before, data)
}

// The load counts each session's sources by its key's hash: two sessions
// whose keys share one stay in memory (their sources cannot be told
// apart), the others are let go of, and a session of more sources than
// the room reserve keeps at hand has every id placed. A scan keeping
// every record must end with the same maps and records.
func TestQuietLoadWithAPairOfKeysSharingAHash(t *testing.T) {
	home, data := t.TempDir(), t.TempDir()
	lane, err := os.ReadFile("../testdata/claude/0a1b2c3d-0000-4000-8000-000000000002/subagents/agent-a1b2c3d4e5f6a7b8c.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	_, id := claudeCopies(t, home, 4)
	dir := filepath.Join(home, ".claude/projects/-w-a")
	// The last session has 70 subagent logs.
	lanes := filepath.Join(dir, id(3), "subagents")
	if err := os.MkdirAll(lanes, 0o700); err != nil {
		t.Fatal(err)
	}
	sources := 1 + len(unplaced) + 6
	for i := range sources - 1 {
		agent := fmt.Sprintf("a%016x", i)
		b := strings.ReplaceAll(strings.ReplaceAll(string(lane), "0a1b2c3d-0000-4000-8000-000000000002", id(3)), "a1b2c3d4e5f6a7b8c", agent)
		if err := os.WriteFile(filepath.Join(lanes, "agent-"+agent+".jsonl"), []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	scan := oneShot(t, home)
	scan(data)
	keep := t.TempDir()
	copyTree(t, data, keep)
	defer func(v bool) { retireOnLoad = v }(retireOnLoad)
	retireOnLoad = false
	scan(keep)
	retireOnLoad = true

	defer func(h func(string) uint64) { retiredKeyHash = h }(retiredKeyHash)
	real := retiredKeyHash
	pair := map[string]bool{"claude/" + id(0): true, "claude/" + id(1): true}
	retiredKeyHash = func(key string) uint64 {
		if pair[key] {
			return 1
		}
		return real(key)
	}
	d := scan(data)
	for key := range pair {
		if d.retired.has(key) || d.sessions[key] == nil {
			t.Errorf("%s, whose key's hash another shares, was let go of on load", key)
		}
	}
	if d.retiredOnLoad != 2 {
		t.Errorf("%d sessions let go of on load, want 2", d.retiredOnLoad)
	}
	_, ids, ok := d.retired.lookup("claude/" + id(3))
	if !ok || len(ids) != sources {
		t.Fatalf("the session of %d logs: retired %v with %d ids", sources, ok, len(ids))
	}
	db, err := state.Open(StatePath(data), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	srcs, _, err := db.Load()
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	var want []uint64
	for _, s := range srcs {
		if s.Session == "claude/"+id(3) {
			want = append(want, s.ID)
		}
	}
	if !slices.Equal(ids, want) {
		t.Errorf("the retired session's ids are %v, want its sources' %v", ids, want)
	}
	sameRecords(t, "a scan keeping every record", keep, data)
}

// claudeCopies writes n copies of basic.jsonl into one project of home,
// each a session of its own, whose id id gives.
func claudeCopies(t *testing.T, home string, n int) (paths []string, id func(int) string) {
	t.Helper()
	basic, err := os.ReadFile("../testdata/claude/basic.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	id = func(i int) string { return fmt.Sprintf("0a1b2c3d-0000-4000-8000-%012d", 200+i) }
	dir := filepath.Join(home, ".claude/projects/-w-a")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		p := filepath.Join(dir, id(i)+".jsonl")
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(basic), "0a1b2c3d-0000-4000-8000-000000000001", id(i))), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	return paths, id
}

// oneShot returns a one-shot catch-up of home into a data directory.
func oneShot(t *testing.T, home string) func(data string) *Daemon {
	roots := homeRoots(runtime.GOOS, home)
	return func(data string) *Daemon {
		t.Helper()
		d := New(Options{DataDir: data, Once: true, Roots: roots, Logger: slog.New(slog.DiscardHandler)})
		if err := d.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		return d
	}
}
