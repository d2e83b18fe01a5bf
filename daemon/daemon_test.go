package daemon

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/state/mapstore"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/agents"
)

type rig struct {
	t     *testing.T
	home  string
	data  string
	root  watchers.Root
	proj  string
	idle  time.Duration
	store *mapstore.Store
	// maxLine, when set, is the line cap instead of the rig's 200 bytes.
	maxLine int
}

func newRig(t *testing.T) *rig {
	home := t.TempDir()
	r := &rig{t: t, home: home, data: filepath.Join(home, "data"),
		root: watchers.Root{Agent: "claude", Layout: watchers.LayoutClaude, Dir: filepath.Join(home, ".claude")},
		idle: time.Hour}
	r.proj = filepath.Join(r.root.Dir, "projects", "-w-app")
	r.store = mapstore.New(MapsDir(r.data))
	return r
}

func (r *rig) opts(once bool) Options {
	return Options{DataDir: r.data, Idle: r.idle, Once: once, Roots: []watchers.Root{r.root},
		Agents: []agents.Agent{fakeAgent}, Mapper: fakeMapper, MaxLine: cmp.Or(r.maxLine, 200),
		Debounce: 5 * time.Millisecond, Rescan: time.Hour,
		Logger: slog.New(slog.NewTextHandler(testWriter{r.t}, &slog.HandlerOptions{Level: slog.LevelDebug}))}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Helper()
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// follow runs d until the returned stop (which may be called more than
// once) cancels it, and reports the error it ended with.
func follow(t *testing.T, d *Daemon) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	stopped := false
	return func() {
		if !stopped {
			stopped = true
			cancel()
			if err := <-done; err != nil {
				t.Errorf("run: %v", err)
			}
		}
	}
}

func (r *rig) once() {
	r.t.Helper()
	if err := New(r.opts(true)).Run(context.Background()); err != nil {
		r.t.Fatalf("run --once: %v", err)
	}
}

func (r *rig) append(rel string, lines ...string) {
	r.t.Helper()
	p := filepath.Join(r.proj, rel)
	os.MkdirAll(filepath.Dir(p), 0o700)
	f, err := os.OpenFile(p, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		r.t.Fatal(err)
	}
	for _, l := range lines {
		f.WriteString(l)
	}
	f.Close()
}

func line(session, kind string) string { return fmt.Sprintf(`{"s":%q,"k":%q}`+"\n", session, kind) }

func (r *rig) mapOf(id string) string {
	r.t.Helper()
	b, err := r.store.Read(mapstore.RelPath("claude", id, time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)))
	if err != nil {
		return ""
	}
	return string(b)
}

func TestOnceThenResume(t *testing.T) {
	r := newRig(t)
	r.append("s1.jsonl", line("s1", "user"), line("s1", "llm"))
	r.append("s1/subagents/agent-x.jsonl", line("s1", "call"))
	r.append("s2.jsonl", line("s2", "user"), `{"s":"s2","k":"turn_`) // torn last line
	r.once()
	if got, want := r.mapOf("s1"), fakeMap(map[string][]string{"": {"user", "llm"}, "sa-x": {"call"}}); got != want {
		t.Fatalf("s1 map:\n%s\nwant:\n%s", got, want)
	}
	if got, want := r.mapOf("s2"), fakeMap(map[string][]string{"": {"user"}}); got != want {
		t.Fatalf("s2 map with a torn line:\n%s\nwant:\n%s", got, want)
	}
	// The writer finishes the line and goes on; the next run reads only
	// what is new (the fake parser's numbering proves nothing is re-read).
	r.append("s2.jsonl", `end"}`+"\n", line("s2", "user"))
	r.append("s1.jsonl", line("s1", "result"))
	r.once()
	if got, want := r.mapOf("s2"), fakeMap(map[string][]string{"": {"user", "turn_end", "user"}}); got != want {
		t.Fatalf("s2 after resume:\n%s\nwant:\n%s", got, want)
	}
	if got, want := r.mapOf("s1"), fakeMap(map[string][]string{"": {"user", "llm", "result"}, "sa-x": {"call"}}); got != want {
		t.Fatalf("s1 after resume:\n%s\nwant:\n%s", got, want)
	}
}

// A final line without newline that does not parse is left out, and a
// complete but unusable line is counted, not fatal.
func TestGarbageAndOversizedLines(t *testing.T) {
	r := newRig(t)
	r.append("s1.jsonl", line("s1", "user"), "not json\n", "\x00\xff\n", `{"s":"s1","k":"x`+strings.Repeat("y", 500)+`"}`+"\n",
		line("s1", "llm"), `{"broken`)
	r.once()
	if got, want := r.mapOf("s1"), fakeMap(map[string][]string{"": {"user", "llm"}}); got != want {
		t.Fatalf("map:\n%s\nwant:\n%s", got, want)
	}
	db := openState(t, r)
	srcs, _, _ := db.Load()
	db.Close()
	if len(srcs) != 1 || srcs[0].Skipped != 2 || srcs[0].Oversized != 1 || srcs[0].Lines != 4 {
		t.Fatalf("counters: %+v", srcs[0])
	}
}

func openState(t *testing.T, r *rig) *state.DB {
	t.Helper()
	db, err := state.Open(StatePath(r.data), nil)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func TestTruncatedReplacedAndMovedWhileStopped(t *testing.T) {
	r := newRig(t)
	r.append("a.jsonl", line("a", "user"), line("a", "llm"), line("a", "call"))
	r.append("b.jsonl", line("b", "user"), line("b", "llm"))
	r.append("c.jsonl", line("c", "user"))
	r.once()

	// a: truncated and regrown with other content → rebuilt from zero.
	os.WriteFile(filepath.Join(r.proj, "a.jsonl"), []byte(line("a", "llm")+line("a", "llm")+line("a", "llm")+line("a", "result")), 0o600)
	// b: replaced under the same name (new inode) with a longer file.
	tmp := filepath.Join(r.home, "b.tmp")
	os.WriteFile(tmp, []byte(line("b", "error")+line("b", "user")+line("b", "user")), 0o600)
	os.Rename(tmp, filepath.Join(r.proj, "b.jsonl"))
	// c: moved to another project dir and grown → followed, not re-read.
	other := filepath.Join(r.root.Dir, "projects", "-w-other")
	os.MkdirAll(other, 0o700)
	os.Rename(filepath.Join(r.proj, "c.jsonl"), filepath.Join(other, "c.jsonl"))
	f, _ := os.OpenFile(filepath.Join(other, "c.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(line("c", "llm"))
	f.Close()
	r.once()

	for id, want := range map[string]string{
		"a": fakeMap(map[string][]string{"": {"llm", "llm", "llm", "result"}}),
		"b": fakeMap(map[string][]string{"": {"error", "user", "user"}}),
		"c": fakeMap(map[string][]string{"": {"user", "llm"}}),
	} {
		if got := r.mapOf(id); got != want {
			t.Errorf("%s:\n%s\nwant:\n%s", id, got, want)
		}
	}
	db := openState(t, r)
	defer db.Close()
	srcs, _, _ := db.Load()
	if len(srcs) != 3 {
		t.Fatalf("%d sources after replace and move, want 3", len(srcs))
	}
}

// A deleted file keeps its captured events; the session counts as ended.
func TestDeletedFileKeepsItsMap(t *testing.T) {
	r := newRig(t)
	r.append("d.jsonl", line("d", "user"), line("d", "llm"))
	r.once()
	os.Remove(filepath.Join(r.proj, "d.jsonl"))
	r.once()
	if got, want := r.mapOf("d"), fakeMap(map[string][]string{"": {"user", "llm"}}); got != want {
		t.Fatalf("map after deletion:\n%s\nwant:\n%s", got, want)
	}
	db := openState(t, r)
	defer db.Close()
	srcs, sess, _ := db.Load()
	if !srcs[0].Missing || sess[0].EndedMs == 0 {
		t.Fatalf("deleted file not recorded: %+v %+v", srcs[0], sess[0])
	}
}

// The long-running loop: a session is written after its idle time, written
// again when it grows, written at once when its file is deleted; a store
// that cannot be written is retried until it can.
func TestFollow(t *testing.T) {
	r := newRig(t)
	r.idle = 300 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- New(r.opts(false)).Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}()
	waitMap := func(id, want string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for r.mapOf(id) != want {
			if time.Now().After(deadline) {
				t.Fatalf("map %s is\n%s\nwant\n%s", id, r.mapOf(id), want)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// The root does not exist when the daemon starts.
	r.append("f.jsonl", line("f", "user"))
	waitMap("f", fakeMap(map[string][]string{"": {"user"}}))
	r.append("f.jsonl", line("f", "llm"), line("f", "turn_end"))
	waitMap("f", fakeMap(map[string][]string{"": {"user", "llm", "turn_end"}}))

	// The store becomes unwritable: a file sits where the agent dir goes.
	os.RemoveAll(filepath.Join(r.data, "maps", "claude"))
	os.WriteFile(filepath.Join(r.data, "maps", "claude"), []byte("x"), 0o600)
	r.append("g.jsonl", line("g", "user"))
	time.Sleep(r.idle * 3)
	if r.mapOf("g") != "" {
		t.Fatal("map written through a file")
	}
	os.Remove(filepath.Join(r.data, "maps", "claude"))
	waitMap("g", fakeMap(map[string][]string{"": {"user"}}))

	// Deleting a file ends its session: written at once, however long
	// the idle time.
	r.append("g.jsonl", line("g", "llm"))
	os.Remove(filepath.Join(r.proj, "g.jsonl"))
	r.append("h.jsonl", line("h", "user"))
	waitMap("h", fakeMap(map[string][]string{"": {"user"}}))
}

func TestDueAt(t *testing.T) {
	base := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	idle, quiet := 15*time.Minute, 5*time.Minute
	for _, tc := range []struct {
		name  string
		s     state.Session
		retry *backoff
		want  time.Time
		ok    bool
	}{
		{"clean", state.Session{Gen: 2, Flush: &state.Flush{Gen: 2}, ActivityMs: base.UnixMilli()}, nil, time.Time{}, false},
		{"idle", state.Session{Gen: 1, ActivityMs: base.UnixMilli()}, nil, base.Add(idle), true},
		{"turn end", state.Session{Gen: 1, ActivityMs: base.UnixMilli(), TurnEnd: true}, nil, base.Add(quiet), true},
		{"ended", state.Session{Gen: 3, Flush: &state.Flush{Gen: 2}, ActivityMs: base.UnixMilli(), EndedMs: base.Add(time.Second).UnixMilli()}, nil, base.Add(time.Second), true},
		{"retry later", state.Session{Gen: 1, ActivityMs: base.UnixMilli()}, &backoff{at: base.Add(time.Hour)}, base.Add(time.Hour), true},
		{"retry earlier", state.Session{Gen: 1, ActivityMs: base.UnixMilli()}, &backoff{at: base.Add(time.Second)}, base.Add(idle), true},
	} {
		got, ok := dueAt(&tc.s, idle, quiet, tc.retry)
		if ok != tc.ok || !got.Equal(tc.want) {
			t.Errorf("%s: %v %v, want %v %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}

func TestBackoffDoublesToCap(t *testing.T) {
	d := New(Options{DataDir: t.TempDir()})
	var delays []time.Duration
	for i := 0; i < 12; i++ {
		d.fail("k")
		delays = append(delays, d.retry["k"].delay)
	}
	if delays[0] != time.Second || delays[1] != 2*time.Second || delays[11] != maxBackoff {
		t.Fatalf("delays %v", delays)
	}
}

func TestDefaultDataDir(t *testing.T) {
	for _, tc := range []struct {
		env  watchers.Env
		want string
	}{
		{watchers.Env{GOOS: "linux", Home: "/h"}, "/h/.local/share/agentmap"},
		{watchers.Env{GOOS: "linux", Home: "/h", Getenv: func(k string) string {
			return map[string]string{"XDG_DATA_HOME": "/x"}[k]
		}}, "/x/agentmap"},
		{watchers.Env{GOOS: "darwin", Home: "/h"}, "/h/Library/Application Support/agentmap"},
		{watchers.Env{GOOS: "windows", Home: "/h", Getenv: func(k string) string {
			return map[string]string{"LOCALAPPDATA": "/l"}[k]
		}}, "/l/agentmap"},
	} {
		if got := filepath.ToSlash(DefaultDataDir(tc.env)); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.env.GOOS, got, tc.want)
		}
	}
}

func t0ctx() context.Context { return context.Background() }

// A log deleted and then created again under the same name is read from
// the start in place of the old one, not beside it.
func TestRecreatedUnderTheSameName(t *testing.T) {
	r := newRig(t)
	r.append("e.jsonl", line("e", "user"), line("e", "llm"))
	r.once()
	os.Remove(filepath.Join(r.proj, "e.jsonl"))
	r.once()
	r.append("e.jsonl", line("e", "error"))
	r.once()
	if got, want := r.mapOf("e"), fakeMap(map[string][]string{"": {"error"}}); got != want {
		t.Fatalf("map:\n%s\nwant:\n%s", got, want)
	}
}

// With nothing more to come, a log holding one unfinished line is still
// read, as `agentmap build` reads it.
func TestOnceReadsALoneUnfinishedLine(t *testing.T) {
	r := newRig(t)
	r.append("u.jsonl", `{"s":"u","k":"user"}`)
	r.once()
	if got, want := r.mapOf("u"), fakeMap(map[string][]string{"": {"user"}}); got != want {
		t.Fatalf("map:\n%s\nwant:\n%s", got, want)
	}
}

// A parser that panics on a line costs that line, not the daemon.
func TestParserPanicIsALineError(t *testing.T) {
	r := newRig(t)
	a := fakeAgentNamed("claude")
	a.New = func(s watchers.Source) watchers.Parser { return &panicky{fakeParser{src: s}} }
	r.append("p.jsonl", line("p", "user"), line("p", "panic"), line("p", "llm"))
	o := r.opts(true)
	o.Agents = []agents.Agent{a}
	if err := New(o).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got, want := r.mapOf("p"), fakeMap(map[string][]string{"": {"user", "llm"}}); got != want {
		t.Fatalf("map:\n%s\nwant:\n%s", got, want)
	}
}

type panicky struct{ fakeParser }

func (p *panicky) Line(line []byte, out []event.Event) ([]event.Event, error) {
	if strings.Contains(string(line), `"panic"`) {
		var m map[string]int
		m["boom"]++ // a nil map write
	}
	return p.fakeParser.Line(line, out)
}

// A map deleted by hand, cut short, emptied or written over with other
// bytes (of another size) is written again by the next scan.
func TestDeletedOrDamagedMapWrittenAgain(t *testing.T) {
	r := newRig(t)
	r.append("d.jsonl", line("d", "user"), line("d", "llm"))
	r.once()
	want := r.mapOf("d")
	if want == "" {
		t.Fatal("no map")
	}
	path := filepath.Join(r.store.Root, mapstore.RelPath("claude", "d", time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)))
	for name, damage := range map[string]func() error{
		"deleted":      func() error { return os.Remove(path) },
		"cut short":    func() error { return os.Truncate(path, 10) },
		"emptied":      func() error { return os.Truncate(path, 0) },
		"written over": func() error { return os.WriteFile(path, []byte("garbage, and not a gzip stream either"), 0o600) },
	} {
		if err := damage(); err != nil {
			t.Fatal(err)
		}
		r.once()
		if got := r.mapOf("d"); got != want {
			t.Fatalf("map %s, after a scan:\n%s\nwant:\n%s", name, got, want)
		}
	}
}

// A last line without a newline that is finished after its session's map
// was written (the writer's next write completes it, still without a
// newline) changes the map: no complete line came, but the line now
// parses, and `agentmap build` of the finished log counts it.
func TestUnfinishedLastLineCompletedLater(t *testing.T) {
	r := newRig(t)
	r.append("c.jsonl", line("c", "user"), `{"s":"c",`)
	r.once()
	if got, want := r.mapOf("c"), fakeMap(map[string][]string{"": {"user"}}); got != want {
		t.Fatalf("map before the line is finished:\n%s\nwant:\n%s", got, want)
	}
	r.append("c.jsonl", `"k":"llm"}`)
	r.once()
	if got, want := r.mapOf("c"), fakeMap(map[string][]string{"": {"user", "llm"}}); got != want {
		t.Fatalf("map after the line is finished:\n%s\nwant:\n%s", got, want)
	}
	// Nothing changed since: the next run leaves the map as it is.
	r.once()
	if got, want := r.mapOf("c"), fakeMap(map[string][]string{"": {"user", "llm"}}); got != want {
		t.Fatalf("map after a run with no change:\n%s\nwant:\n%s", got, want)
	}
}

// A last line without a newline that parses, and that the map read, then
// finished by more bytes into a line that no longer parses (a resumed
// writer appending to a log whose last line had no newline): `agentmap
// build` of the finished log skips the line, and so must the map, at once
// and after a scan of a daemon started again.
func TestUnfinishedLastLineFinishedIntoNoLine(t *testing.T) {
	r := newRig(t)
	r.append("c.jsonl", line("c", "user"), `{"s":"c","k":"llm"}`)
	r.once()
	if got, want := r.mapOf("c"), fakeMap(map[string][]string{"": {"user", "llm"}}); got != want {
		t.Fatalf("map with the unfinished line:\n%s\nwant:\n%s", got, want)
	}
	r.append("c.jsonl", `{"s":"c","k":"llm"}`+"\n")
	r.once()
	want := fakeMap(map[string][]string{"": {"user"}})
	if got := r.mapOf("c"); got != want {
		t.Fatalf("map after the line was finished into one that does not parse:\n%s\nwant:\n%s", got, want)
	}
	r.once()
	if got := r.mapOf("c"); got != want {
		t.Fatalf("map after a run with no change:\n%s\nwant:\n%s", got, want)
	}
}

// A log moved by a copy and a deletion (`mv` across file systems, a home
// copied to a new place) is a new file with the old one's head: its lines
// count once, as `agentmap build` of the logs there counts them, whether
// the deletion is seen before the copy or after it, and when the copy
// then grows. A copy shorter than what the gone log gave leaves that in
// the map.
func TestLogMovedByACopyCountsOnce(t *testing.T) {
	for _, deleteFirst := range []bool{true, false} {
		t.Run(fmt.Sprintf("deletion seen first: %v", deleteFirst), func(t *testing.T) {
			r := newRig(t)
			r.append("m.jsonl", line("m", "user"), line("m", "llm"))
			r.once()
			want := fakeMap(map[string][]string{"": {"user", "llm"}})
			if got := r.mapOf("m"); got != want {
				t.Fatalf("map before the move:\n%s\nwant:\n%s", got, want)
			}
			old := filepath.Join(r.proj, "m.jsonl")
			b, err := os.ReadFile(old)
			if err != nil {
				t.Fatal(err)
			}
			other := filepath.Join(filepath.Dir(r.proj), "-w-other")
			if err := os.MkdirAll(other, 0o700); err != nil {
				t.Fatal(err)
			}
			moved := filepath.Join(other, "m.jsonl")
			if deleteFirst {
				os.Remove(old)
				r.once()
			}
			if err := os.WriteFile(moved, b, 0o600); err != nil { // a new file: a new inode
				t.Fatal(err)
			}
			if !deleteFirst {
				r.once()
				os.Remove(old)
			}
			r.once()
			if got := r.mapOf("m"); got != want {
				t.Fatalf("map after the move:\n%s\nwant:\n%s", got, want)
			}
			f, err := os.OpenFile(moved, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(line("m", "user"))
			f.Close()
			r.once()
			if got, want := r.mapOf("m"), fakeMap(map[string][]string{"": {"user", "llm", "user"}}); got != want {
				t.Fatalf("map after the moved log grew:\n%s\nwant:\n%s", got, want)
			}
		})
	}
	t.Run("a shorter copy", func(t *testing.T) {
		r := newRig(t)
		r.maxLine = 4096
		// A first line past the head's KiB, as a real log's is: the copy of
		// it alone has the same head as the log.
		first := fmt.Sprintf(`{"s":"m","k":"user","pad":%q}`+"\n", strings.Repeat("x", 1100))
		r.append("m.jsonl", first, line("m", "llm"))
		r.once()
		other := filepath.Join(filepath.Dir(r.proj), "-w-other")
		os.MkdirAll(other, 0o700)
		if err := os.WriteFile(filepath.Join(other, "m.jsonl"), []byte(first), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Remove(filepath.Join(r.proj, "m.jsonl"))
		r.once()
		if got, want := r.mapOf("m"), fakeMap(map[string][]string{"": {"user", "llm"}}); got != want {
			t.Fatalf("map after a shorter copy replaced the log:\n%s\nwant what was captured:\n%s", got, want)
		}
	})
}

// followingLogsOf starts a following daemon over a log "<id>.jsonl" of
// one user line for each session id, once their maps are written.
func followingLogsOf(t *testing.T, retireAfter time.Duration, ids ...string) (*rig, *following) {
	t.Helper()
	r, opt := quickRig(t, retireAfter)
	for _, id := range ids {
		r.append(id+".jsonl", line(id, "user"))
	}
	f := startFollowing(t, r, opt)
	for _, id := range ids {
		f.waitMap(id, fakeMap(map[string][]string{"": {"user"}}))
	}
	return r, f
}

// A deleted log's file that comes back under a new name is followed there
// by the deleted log's record, which leaves the name it had to the log
// moved onto it since: that log stays followed by its own record, its
// next line read once, not its whole file again under a new record.
func TestDeletedLogBackUnderANewNameLeavesItsOldNameToTheLogThere(t *testing.T) {
	r, f := followingLogsOf(t, -1, "a", "c")
	defer f.stop()
	f.moveOntoDeletedLog("a.jsonl", "a", "c.jsonl", "c") // a's file kept in the home
	if err := os.Link(filepath.Join(r.home, "kept-a.jsonl"), filepath.Join(r.proj, "e.jsonl")); err != nil {
		t.Fatal(err)
	}
	f.followedAt("a", "e.jsonl")
	r.append("a.jsonl", line("c", "llm"))
	f.waitMap("c", fakeMap(map[string][]string{"": {"user", "llm"}}))
	r.append("e.jsonl", line("a", "llm"))
	f.waitMap("a", fakeMap(map[string][]string{"": {"user", "llm"}}))
}

// A followed log renamed onto another followed log's name (`mv a.jsonl
// b.jsonl`) is followed there, and the log it replaced keeps what it gave:
// the same maps and records as when the deletion of b.jsonl is seen
// before the move, and when both sessions were let go of before it. Taken
// for a new file under b's name, a's lines would be read again and count
// twice in its map.
func TestLogRenamedOntoAnotherFollowedLogIsFollowedThere(t *testing.T) {
	deletedFirst := renamedOntoFollowedLog(t, -1, true)
	for _, retireAfter := range []time.Duration{-1, time.Nanosecond} {
		if got := renamedOntoFollowedLog(t, retireAfter, false); got != deletedFirst {
			t.Errorf("renamed (sessions let go of after %v), the maps and records are\n%s\nwhere they are, with the deletion seen first,\n%s",
				retireAfter, got, deletedFirst)
		}
	}
}

// A log emptied and then written with another session's lines belongs to
// that session, as `agentmap build` routes the file by its first line: in
// a daemon that runs throughout, and in one restarted while the log was
// empty, which finds the emptied log's record as it was left (not taken
// for damage). A first line written in pieces is routed once, when whole.
func TestEmptiedLogWrittenWithAnotherSessionsLines(t *testing.T) {
	for _, restart := range []bool{false, true} {
		t.Run(fmt.Sprintf("restart=%v", restart), func(t *testing.T) {
			r, f := followingLogsOf(t, -1, "a")
			defer f.stop()
			if err := os.Truncate(filepath.Join(r.proj, "a.jsonl"), 0); err != nil {
				t.Fatal(err)
			}
			f.waitMap("a", "") // no log gives it anything: its map goes
			if restart {
				f.restart()
				if st, err := f.client().Status(context.Background()); err != nil || st.State != nil {
					t.Fatalf("the emptied log's record taken for damage: %+v %v", st.State, err)
				}
			}
			first := line("b", "user")
			for _, piece := range []string{first[:5], first[5:12], first[12:]} {
				r.append("a.jsonl", piece)
				time.Sleep(50 * time.Millisecond) // each piece seen apart
			}
			f.waitMap("b", fakeMap(map[string][]string{"": {"user"}}))
			r.append("a.jsonl", line("b", "llm"))
			f.waitMap("b", fakeMap(map[string][]string{"": {"user", "llm"}}))
			if got := r.mapOf("a"); got != "" {
				t.Errorf("a's map is back:\n%s", got)
			}
			f.stop()
			db := openState(t, r)
			defer db.Close()
			srcs, sessions, err := db.Load()
			if err != nil {
				t.Fatal(err)
			}
			// a's changes: its line read, the reset to nothing, the log
			// gone to b. A reset committed for each piece of b's first
			// line would count more.
			for _, s := range sessions {
				if s.Key == "claude/a" && s.Gen != 3 {
					t.Errorf("session a changed %d times, want 3", s.Gen)
				}
			}
			if len(srcs) != 1 || srcs[0].Session != "claude/b" || srcs[0].Resets != 1 {
				for _, s := range srcs {
					t.Logf("%+v", *s)
				}
				t.Fatalf("want the log's one record, in session b, reset once")
			}
		})
	}
}

// A log rewritten into lines that give no events keeps no events, and the
// next start does not take its record for damage (its batches counted from
// 0 again at the reset).
func TestLogRewrittenIntoNoEventsIsNoDamageAfterARestart(t *testing.T) {
	r, f := followingLogsOf(t, -1, "a")
	defer f.stop()
	if err := os.WriteFile(filepath.Join(r.proj, "a.jsonl"), []byte("not a line\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for until := time.Now().Add(15 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		st, err := f.client().Status(context.Background())
		if err == nil && len(st.Agents) == 1 && st.Agents[0].Skipped == 1 && st.Agents[0].Live == 0 {
			break
		}
		if time.Now().After(until) {
			t.Fatalf("the rewritten log not read: %+v %v", st, err)
		}
	}
	f.restart()
	if st, err := f.client().Status(context.Background()); err != nil || st.State != nil {
		t.Fatalf("the rewritten log's record taken for damage: %+v %v", st.State, err)
	}
}

// Two renames in a row, `mv b.jsonl N; mv a.jsonl b.jsonl`: each log is
// followed to its new name, whichever name the watcher reports first, and
// neither is read twice. b's old name holds another file by the time its
// move is seen.
func TestRenameChainFollowsEachLog(t *testing.T) {
	for _, n := range []string{"0.jsonl", "z.jsonl"} { // before and after b.jsonl
		t.Run(n, func(t *testing.T) {
			r, f := followingLogsOf(t, -1, "a", "b")
			defer f.stop()
			p := func(name string) string { return filepath.Join(r.proj, name) }
			if err := os.Rename(p("b.jsonl"), p(n)); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(p("a.jsonl"), p("b.jsonl")); err != nil {
				t.Fatal(err)
			}
			f.followedAt("b", n)
			f.followedAt("a", "b.jsonl")
			r.append(n, line("b", "llm"))
			r.append("b.jsonl", line("a", "llm"))
			f.waitMap("a", fakeMap(map[string][]string{"": {"user", "llm"}}))
			f.waitMap("b", fakeMap(map[string][]string{"": {"user", "llm"}}))
		})
	}
}

func renamedOntoFollowedLog(t *testing.T, retireAfter time.Duration, deleteFirst bool) string {
	r, f := followingLogsOf(t, retireAfter, "a", "b")
	defer f.stop()
	f.waitRetired(2)
	if deleteFirst {
		f.moveOntoDeletedLog("b.jsonl", "b", "a.jsonl", "a")
	} else {
		b := filepath.Join(r.proj, "b.jsonl")
		if err := os.Link(b, filepath.Join(r.home, "kept-b.jsonl")); err != nil { // no later file takes its identity
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(r.proj, "a.jsonl"), b); err != nil {
			t.Fatal(err)
		}
		f.followedAt("a", "b.jsonl")
		f.goneFrom("b", "b.jsonl")
	}
	r.append("b.jsonl", line("a", "llm"))
	f.waitMap("a", fakeMap(map[string][]string{"": {"user", "llm"}}))
	f.waitMap("b", fakeMap(map[string][]string{"": {"user"}}))
	f.status("after the move")
	f.stop()
	return f.summary("a", "b")
}

// After a restart, a log moved onto the name of its own session's deleted
// log still answers for that name: the record of the log there beats the
// newer record of the one deleted from it, which would read the moved
// log again from its start in its place. The daemon restarted ends as one
// that ran throughout.
func TestMovedOntoItsSessionsDeletedLogAcrossARestart(t *testing.T) {
	throughout, restarted := movedOntoDeletedLog(t, false), movedOntoDeletedLog(t, true)
	if restarted != throughout {
		t.Errorf("restarted, the map and records are\n%s\nwhere a daemon that ran throughout has\n%s", restarted, throughout)
	}
}

func movedOntoDeletedLog(t *testing.T, restart bool) string {
	r, opt := quickRig(t, -1)
	r.append("s/subagents/agent-x.jsonl", line("s", "call"))
	f := startFollowing(t, r, opt)
	f.waitMap("s", fakeMap(map[string][]string{"sa-x": {"call"}}))
	r.append("s.jsonl", line("s", "user")) // the main log's record is the newer
	f.waitMap("s", fakeMap(map[string][]string{"": {"user"}, "sa-x": {"call"}}))
	f.moveOntoDeletedLog("s.jsonl", "s", "s/subagents/agent-x.jsonl", "s")
	moved := r.mapOf("s")
	for until := time.Now().Add(15 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if st, err := f.client().Status(context.Background()); err == nil && len(st.Agents) == 1 && st.Agents[0].Live == 0 {
			moved = r.mapOf("s")
			break
		} else if time.Now().After(until) {
			t.Fatalf("the move not written: %+v %v", st, err)
		}
	}
	if restart {
		f.stop()
		f = startFollowing(t, r, opt)
	}
	defer f.stop()
	r.append("s.jsonl", line("s", "llm"))
	// Until the map holds the line: a map merely other than the one seen
	// after the move may be that move's last write, and a daemon stopped
	// then has not read the line.
	for until := time.Now().Add(15 * time.Second); r.mapOf("s") == moved || !strings.Contains(r.mapOf("s"), " llm "); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(until) {
			t.Fatal("the line appended after the move not written")
		}
	}
	f.status("after the line")
	f.stop()
	return f.summary("s")
}

// A reloaded privacy.exclude forgets an excluded session's records, the
// record of a log deleted from a name another session's log holds since
// among them, without taking that name from the other log: its next line
// is read once, not its whole log again under a new record.
func TestExcludedSessionLeavesItsDeletedLogsNameToTheLogThere(t *testing.T) {
	r, opt := quickRig(t, -1)
	r.append("a/subagents/agent-x.jsonl", cwdLine("a", "call", "/later/x"))
	r.append("a.jsonl", cwdLine("a", "user", "/later/x"))
	r.append("b.jsonl", cwdLine("b", "user", "/w/app"))
	f := startFollowing(t, r, opt)
	defer f.stop()
	f.waitMap("a", fakeMap(map[string][]string{"": {"user"}, "sa-x": {"call"}}))
	f.waitMap("b", fakeMap(map[string][]string{"": {"user"}}))
	f.moveOntoDeletedLog("a.jsonl", "a", "b.jsonl", "b")
	f.d.Reconfigure(Live{Idle: r.idle, Roots: opt.Roots, Mapper: fakeMapper,
		Exclude: func(dir string) bool { return strings.HasPrefix(dir, "/later") }})
	for until := time.Now().Add(15 * time.Second); r.mapOf("a") != ""; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(until) {
			t.Fatal("the excluded session's map is still there")
		}
	}
	r.append("a.jsonl", cwdLine("b", "llm", "/w/app"))
	f.waitMap("b", fakeMap(map[string][]string{"": {"user", "llm"}}))
}

// Two logs read whole of one session are copies only for an older Codex
// rollout (its session's only file): a Gemini CLI process writes a chat
// file of its own under one session id for each conversation it starts,
// and one of them gone leaves the other's events in the map.
func TestWholeLogsAreCopiesOnlyForCodex(t *testing.T) {
	stored := map[uint64][]event.Event{1: make([]event.Event, 5), 2: make([]event.Event, 3)}
	for agent, want := range map[string]bool{"codex": true, "gemini": false} {
		gone := &state.Source{ID: 1, Agent: agent, Session: agent + "/s", Form: watchers.FormWhole, Missing: true}
		there := &state.Source{ID: 2, Agent: agent, Session: agent + "/s", Form: watchers.FormWhole}
		got := supersededCopies([]*state.Source{gone, there}, stored, missing)
		if dropped := got[1] || got[2]; dropped != want {
			t.Errorf("%s: %v dropped, want a copy: %v", agent, got, want)
		}
	}
}

// A log copied twice (A to B to C, A and B gone) while C is not yet read
// as far as they were: one of the gone ones counts, not both.
func TestTwoGoneCopiesCountOnce(t *testing.T) {
	stored := map[uint64][]event.Event{}
	src := func(id uint64, offset int64, missing bool) *state.Source {
		return &state.Source{ID: id, Agent: "claude", Session: "claude/s", Form: watchers.FormLines,
			HeadLen: 1024, HeadHash: "h", Offset: offset, Missing: missing}
	}
	a, b, c := src(1, 500, true), src(2, 500, true), src(3, 100, false)
	got := supersededCopies([]*state.Source{a, b, c}, stored, missing)
	if got[a.ID] || !got[b.ID] || !got[c.ID] {
		t.Errorf("dropped %v: want the second gone copy and the shorter present one, keeping the first gone one", got)
	}
	c.Offset = 500
	if got := supersededCopies([]*state.Source{a, b, c}, stored, missing); !got[a.ID] || !got[b.ID] || got[c.ID] {
		t.Errorf("dropped %v: want both gone copies once the present one is read as far", got)
	}
}

// A log that ends in a line still being written and longer than the cap
// is behind by that line, and status says why: it is skipped once it
// ends. Within the cap, such a line is read (into the map) and not
// behind; grown since the last read, nothing is known of it yet.
func TestLongUnfinishedLineIsTold(t *testing.T) {
	p := filepath.Join(t.TempDir(), "l.jsonl")
	if err := os.WriteFile(p, []byte("{\"a\":1}\n"+strings.Repeat("x", 300)), 0o600); err != nil {
		t.Fatal(err)
	}
	s := &state.Source{ID: 1, Path: p, Offset: 8, Size: 308}
	long := unfinishedTails{}
	if b := long.behind(nil, s, 308, 100); b != 300 {
		t.Errorf("past the cap: %d bytes behind, want 300", b)
	}
	if l := long.longLines(100); l == nil || *l != (LongLines{Logs: 1, Bytes: 300, Cap: 100}) {
		t.Errorf("past the cap: %+v", l)
	}
	within := unfinishedTails{}
	if b := within.behind(nil, s, 308, 1000); b != 0 || within.longLines(1000) != nil {
		t.Errorf("within the cap: %d behind, %+v", b, within.longLines(1000))
	}
	grown := unfinishedTails{}
	if b := grown.behind(nil, s, 400, 100); b != 392 || grown.longLines(100) != nil {
		t.Errorf("grown since: %d behind, %+v", b, grown.longLines(100))
	}
	// Read part way (a catch-up commits the file's whole size with each
	// chunk, the cursor at the chunk's end): lines are left, no long one.
	mid := filepath.Join(t.TempDir(), "m.jsonl")
	if err := os.WriteFile(mid, []byte(strings.Repeat("{\"a\":1}\n", 100)), 0o600); err != nil {
		t.Fatal(err)
	}
	partWay := unfinishedTails{}
	ms := &state.Source{ID: 2, Path: mid, Offset: 80, Size: 800}
	if b := partWay.behind(nil, ms, 800, 100); b != 720 || partWay.longLines(100) != nil {
		t.Errorf("read part way: %d behind, %+v", b, partWay.longLines(100))
	}
}

// missing is the daemon's countsAsGone for sources all under a followed root.
func missing(s *state.Source) bool { return s.Missing }
