package daemon

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/agents"
)

func cwdLine(session, kind, cwd string) string {
	return `{"s":"` + session + `","k":"` + kind + `","cwd":"` + cwd + `"}` + "\n"
}

// A session whose cwd privacy.exclude matches leaves nothing in the state
// or the store, its subagent logs included; its neighbours are mapped.
func TestExcludedSessionLeavesNoTrace(t *testing.T) {
	r := newRig(t)
	r.append("s1.jsonl", cwdLine("s1", "user", "/w/app"), line("s1", "llm"))
	r.append("s2.jsonl", `{"type":"summary"}`+"\n", cwdLine("s2", "user", "/secret/x"), line("s2", "llm"))
	r.append("s2/subagents/agent-y.jsonl", cwdLine("s2", "call", "/secret/x"))
	opt := r.opts(true)
	opt.Exclude = func(dir string) bool { return strings.HasPrefix(dir, "/secret") }
	if err := New(opt).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if r.mapOf("s1") == "" || r.mapOf("s2") != "" {
		t.Fatalf("maps: s1 %q, s2 %q", r.mapOf("s1"), r.mapOf("s2"))
	}
	db := openState(t, r)
	srcs, sessions, _ := db.Load()
	db.Close()
	if len(srcs) != 1 || len(sessions) != 1 || sessions[0].NativeID != "s1" {
		t.Fatalf("state: %d sources, sessions %+v", len(srcs), sessions)
	}
	raw, err := state.SearchableBytes(StatePath(r.data))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, []byte("s2")) || bytes.Contains(raw, []byte("secret")) {
		t.Fatal("the state file names the excluded session")
	}
}

// A pattern added while no daemon ran forgets, at the next start, what is
// kept of the sessions it covers (map, records), as a reload into a running
// daemon does; a start with the same patterns again reads no log for it.
func TestExcludeAddedBetweenRuns(t *testing.T) {
	r := newRig(t)
	r.append("s1.jsonl", cwdLine("s1", "user", "/w/app"), line("s1", "llm"))
	r.append("s2.jsonl", cwdLine("s2", "user", "/secret/x"), line("s2", "llm"))
	r.once()
	if r.mapOf("s1") == "" || r.mapOf("s2") == "" {
		t.Fatal("maps not written")
	}
	run := func(key string, exclude func(string) bool) {
		t.Helper()
		opt := r.opts(true)
		opt.Exclude, opt.ExcludeKey = exclude, key
		if err := New(opt).Run(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	secret := func(dir string) bool { return strings.HasPrefix(dir, "/secret") }
	run("k1", secret)
	if r.mapOf("s1") == "" || r.mapOf("s2") != "" {
		t.Fatalf("maps: s1 %q, s2 %q", r.mapOf("s1"), r.mapOf("s2"))
	}
	db := openState(t, r)
	srcs, sessions, _ := db.Load()
	key, _ := db.Setting(state.SettingExcludeKey)
	db.Close()
	if len(srcs) != 1 || len(sessions) != 1 || sessions[0].NativeID != "s1" || key == "" || key == "k1" {
		t.Fatalf("state: %d sources, sessions %+v, key %q", len(srcs), sessions, key)
	}
	// The same key: the patterns are not applied to what is kept again (a
	// pattern that would now cover s1 is not looked at).
	run("k1", func(dir string) bool { return secret(dir) || dir == "/w/app" })
	if r.mapOf("s1") == "" {
		t.Fatal("a start with the same patterns' key applied them again")
	}
	run("", nil) // no patterns: nothing to forget, the key goes
	db = openState(t, r)
	defer db.Close()
	if key, err := db.Setting(state.SettingExcludeKey); err != nil || key != "" {
		t.Fatalf("key after the patterns went: %q %v", key, err)
	}
}

// onceExcluding runs a one-shot catch-up whose privacy.exclude covers the
// working directories under prefix, with key as the patterns' key (and
// with the agents given, if any).
func (r *rig) onceExcluding(prefix, key string, with ...agents.Agent) {
	r.t.Helper()
	opt := r.opts(true)
	if len(with) > 0 {
		opt.Agents = with
	}
	opt.Exclude = func(dir string) bool { return strings.HasPrefix(dir, prefix) }
	opt.ExcludeKey = key
	if err := New(opt).Run(context.Background()); err != nil {
		r.t.Fatal(err)
	}
}

// Patterns that cover more sessions than one transaction forgets forget
// them all, batch after batch, and keep every other.
func TestExcludeForgetsInBatches(t *testing.T) {
	r := newRig(t)
	covered := 2*forgetBatch + 3
	for i := 0; i < covered+10; i++ {
		cwd := "/w/app"
		if i < covered {
			cwd = "/secret/x"
		}
		id := fmt.Sprintf("s%d", i)
		r.append(id+".jsonl", cwdLine(id, "user", cwd), line(id, "llm"))
	}
	r.once()
	r.onceExcluding("/secret", "k1")
	for i := 0; i < covered+10; i++ {
		if kept := r.mapOf(fmt.Sprintf("s%d", i)) != ""; kept != (i >= covered) {
			t.Errorf("s%d: map kept %v", i, kept)
		}
	}
	db := openState(t, r)
	defer db.Close()
	srcs, sessions, _ := db.Load()
	if len(srcs) != 10 || len(sessions) != 10 {
		t.Fatalf("state keeps %d sources, %d sessions; want 10 each", len(srcs), len(sessions))
	}
}

// An excluded session's map goes before its records do: when the state
// cannot forget it, its map is gone all the same, its records stay, and
// the patterns are applied again at the next start, which forgets it.
// (Forgotten first, a crash before the map was removed left a map no
// record named any more.)
func TestExcludedMapGoesBeforeItsRecords(t *testing.T) {
	r := secretRigForgetFailing(t)
	run := func() { r.onceExcluding("/secret", "k1") }
	sessionsKept := func() (n int, key string) {
		t.Helper()
		db := openState(t, r)
		defer db.Close()
		_, sessions, _ := db.Load()
		key, _ = db.Setting(state.SettingExcludeKey)
		return len(sessions), key
	}
	run()
	if r.mapOf("s1") == "" || r.mapOf("s2") != "" {
		t.Fatalf("maps after a failed forget: s1 %q, s2 %q", r.mapOf("s1"), r.mapOf("s2"))
	}
	if n, key := sessionsKept(); n != 2 || key != "" {
		t.Fatalf("after a failed forget: %d sessions kept, key %q; want both, no key", n, key)
	}
	forgetInState = (*state.DB).Forget
	run()
	if n, key := sessionsKept(); n != 1 || key == "" {
		t.Fatalf("after the next start: %d sessions kept, key %q; want 1 and the key", n, key)
	}
	if r.mapOf("s1") == "" || r.mapOf("s2") != "" {
		t.Fatalf("maps after the next start: s1 %q, s2 %q", r.mapOf("s1"), r.mapOf("s2"))
	}
}

// A log moved away while a pattern covering it was added is not taken up
// again by its record when it comes back, under its name or onto another
// followed log's: its session is forgotten then (the log it replaced keeps
// what it gave).
func TestExcludedLogBackAfterThePatternWasAdded(t *testing.T) {
	for _, back := range []string{"s2.jsonl", "s1.jsonl"} {
		t.Run(back, func(t *testing.T) {
			r := newRig(t)
			r.append("s1.jsonl", cwdLine("s1", "user", "/w/app"))
			r.append("s2.jsonl", cwdLine("s2", "user", "/secret/x"), line("s2", "llm"))
			r.once()
			away := filepath.Join(r.home, "s2-away.jsonl")
			if err := os.Rename(filepath.Join(r.proj, "s2.jsonl"), away); err != nil {
				t.Fatal(err)
			}
			opt := r.opts(true)
			opt.Exclude = func(dir string) bool { return strings.HasPrefix(dir, "/secret") }
			opt.ExcludeKey = "k1"
			if err := New(opt).Run(context.Background()); err != nil { // s2's log not found: marked deleted
				t.Fatal(err)
			}
			if back == "s1.jsonl" { // s1's file kept, so that no later file takes its identity
				if err := os.Link(filepath.Join(r.proj, "s1.jsonl"), filepath.Join(r.home, "kept-s1")); err != nil {
					t.Fatal(err)
				}
			}
			if err := os.Rename(away, filepath.Join(r.proj, back)); err != nil {
				t.Fatal(err)
			}
			r.append(back, line("s2", "result"))
			if err := New(opt).Run(context.Background()); err != nil {
				t.Fatal(err)
			}
			if r.mapOf("s2") != "" || r.mapOf("s1") == "" {
				t.Fatalf("maps: s1 %q, s2 %q", r.mapOf("s1"), r.mapOf("s2"))
			}
			db := openState(t, r)
			defer db.Close()
			if srcs, sessions, _ := db.Load(); len(srcs) != 1 || len(sessions) != 1 || sessions[0].NativeID != "s1" {
				t.Fatalf("state: %d sources, sessions %+v", len(srcs), sessions)
			}
		})
	}
}

// While following, a Claude log that names no cwd yet is not routed until
// one does.
func TestExcludeWaitsForACWD(t *testing.T) {
	r := newRig(t)
	d := New(r.opts(false))
	d.opt.Exclude = func(dir string) bool { return dir == "/secret" }
	p := filepath.Join(r.proj, "w.jsonl")
	r.append("w.jsonl", `{"type":"summary"}`+"\n")
	f := watchers.FileStat{Path: p, Agent: "claude", Form: watchers.FormLines}
	if ex, wait := d.excludedLog(f, watchers.FormLines); ex || !wait {
		t.Fatalf("no cwd yet: excluded %v wait %v", ex, wait)
	}
	r.append("w.jsonl", cwdLine("w", "user", "/secret"))
	if ex, wait := d.excludedLog(f, watchers.FormLines); !ex || wait {
		t.Fatalf("cwd known: excluded %v wait %v", ex, wait)
	}
	f.Agent = "cursor"
	os.WriteFile(p, []byte(`{"role":"user"}`+"\n"), 0o600)
	if ex, wait := d.excludedLog(f, watchers.FormLines); ex || wait {
		t.Fatalf("a log that never names its cwd: excluded %v wait %v", ex, wait)
	}
}

// The control API over the socket: status, list, flush; and a
// reconfiguration whose new mapper applies to the next map written.
func TestControlAndReconfigure(t *testing.T) {
	r := newRig(t)
	opt := r.opts(false)
	opt.Control = true
	d := New(opt)
	stop := runInBackground(t, d)
	defer func() {
		stop()
		if _, err := os.Stat(ControlPath(r.data)); !os.IsNotExist(err) {
			t.Errorf("socket left: %v", err)
		}
	}()
	var c *Client
	deadline := time.Now().Add(10 * time.Second)
	for {
		var err error
		if c, err = Connect(r.data); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no control socket: %v", err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if fi, err := os.Stat(ControlPath(r.data)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("socket mode: %v %v", fi, err)
	}
	r.append("s1.jsonl", line("s1", "user"))
	ctx2 := context.Background()
	waitStatus := func(ok func(Status) bool) Status {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			st, err := c.Status(ctx2)
			if err == nil && ok(st) {
				return st
			}
			if time.Now().After(deadline) {
				t.Fatalf("status: %+v %v", st, err)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	live := func(n int) func(Status) bool {
		return func(st Status) bool {
			for _, a := range st.Agents {
				if a.Agent == "claude" {
					return a.Files == 1 && a.Live == n
				}
			}
			return false
		}
	}
	st := waitStatus(live(1))
	if st.Uptime <= 0 || st.DataDir != r.data || st.CatchUp.Finished.IsZero() {
		t.Fatalf("status %+v", st)
	}
	caughtUp := st.CatchUp
	if _, err := c.Flush(ctx2, "nope", false); err == nil {
		t.Fatal("flush of an unknown session")
	}
	res, err := c.Flush(ctx2, "s", false)
	if err != nil || len(res.Flushed) != 1 || res.Flushed[0] != "claude/s1" {
		t.Fatalf("flush: %+v %v", res, err)
	}
	want := fakeMap(map[string][]string{"": {"user"}})
	if got := r.mapOf("s1"); got != want {
		t.Fatalf("map %q", got)
	}
	waitStatus(func(st Status) bool { return live(0)(st) && !st.LastFlush.IsZero() })

	// A new mapper (another path mode, say) applies to the next map.
	d.Reconfigure(Live{Idle: time.Hour, Roots: opt.Roots, Mapper: func(evs []event.Event) (Built, error) {
		b, err := fakeMapper(evs)
		b.Gzip = append([]byte("v2\n"), b.Gzip...)
		b.Summary = state.Summary{StartedAt: "2026-05-01T00:00:00Z", Calls: 3, Repos: []string{"app"}}
		return b, err
	}})
	if got := r.mapOf("s1"); got != want {
		t.Fatal("a reload rewrote a map")
	}
	// Named, a session's map is written with them though it is up to date;
	// --all leaves it, --all --rewrite writes it.
	if res, err := c.Flush(ctx2, "", true); err != nil || len(res.Flushed) != 0 || res.Current != 1 {
		t.Fatalf("flush --all of a session up to date: %+v %v", res, err)
	}
	if res, err := c.Flush(ctx2, "s1", false); err != nil || len(res.Flushed) != 1 {
		t.Fatalf("flush s1 up to date: %+v %v", res, err)
	}
	if got := r.mapOf("s1"); got != "v2\n"+want {
		t.Fatalf("flush s1 after a reload did not rewrite its map: %q", got)
	}
	if res, err := c.Rewrite(ctx2); err != nil || res.Rewritten != 1 || len(res.Failed) != 0 {
		t.Fatalf("flush --all --rewrite: %+v %v", res, err)
	}
	r.append("s1.jsonl", line("s1", "llm"))
	waitStatus(live(1))
	if res, err := c.Flush(ctx2, "", true); err != nil || len(res.Flushed) != 1 {
		t.Fatalf("flush --all: %+v %v", res, err)
	}
	if got, want := r.mapOf("s1"), "v2\n"+fakeMap(map[string][]string{"": {"user", "llm"}}); got != want {
		t.Fatalf("map after reconfiguration:\n%s\nwant:\n%s", got, want)
	}
	// The catch-up's figures are those of the catch-up, not of the reads since.
	if st := waitStatus(live(0)); st.CatchUp.Done != caughtUp.Done || st.CatchUp.Total != caughtUp.Total {
		t.Errorf("catch-up after more reads: %+v, when it finished %+v", st.CatchUp, caughtUp)
	}
	es, err := c.List(ctx2)
	if err != nil || len(es) != 1 || es[0].Key != "claude/s1" || es[0].Live || es[0].Calls != 3 || es[0].Repos[0] != "app" ||
		es[0].Start.Month() != 5 {
		t.Fatalf("list: %+v %v", es, err)
	}
}

// The last error logged is kept, with its component, for status.
func TestErrTrap(t *testing.T) {
	r := newRig(t)
	d := New(r.opts(true))
	d.log.With("component", "flush").Error("cannot write the map; will retry", "err", "disk full")
	d.log.Warn("not an error")
	e := d.lastErr.get()
	if e == nil || e.Component != "flush" || e.Message != "cannot write the map; will retry" || e.Cause != "disk full" {
		t.Fatalf("last error %+v", e)
	}
}

// A pattern added while running forgets the sessions it covers: their
// map, events, sources and record go; others stay.
func TestExcludeAddedLater(t *testing.T) {
	r := newRig(t)
	opt := r.opts(false)
	opt.Control = true
	d := New(opt)
	stop := follow(t, d)
	defer stop()
	r.append("s1.jsonl", cwdLine("s1", "user", "/w/app"))
	r.append("s2.jsonl", cwdLine("s2", "user", "/later/x"))
	r.append("s2/subagents/agent-z.jsonl", cwdLine("s2", "call", "/later/x"))
	var c *Client
	deadline := time.Now().Add(10 * time.Second)
	for {
		var err error
		if c, err = Connect(r.data); err == nil {
			// All three logs followed first (on a loaded machine the
			// subagent's may come in a later batch), then both flushed.
			st, err := c.Status(context.Background())
			if err == nil && len(st.Agents) == 1 && st.Agents[0].Files == 3 {
				if res, err := c.Flush(context.Background(), "", true); err == nil && len(res.Flushed) == 2 {
					break
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no flush of both sessions with their three logs: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r.mapOf("s2") == "" {
		t.Fatal("s2 not mapped before the pattern")
	}
	d.Reconfigure(Live{Idle: time.Hour, Roots: opt.Roots, Mapper: fakeMapper,
		Exclude: func(dir string) bool { return strings.HasPrefix(dir, "/later") }})
	for {
		st, err := c.Status(context.Background())
		if err == nil && st.Excluded == 2 { // s2's two logs
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status %+v %v", st, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if r.mapOf("s2") != "" || r.mapOf("s1") == "" {
		t.Fatalf("maps after the pattern: s1 %q s2 %q", r.mapOf("s1"), r.mapOf("s2"))
	}
	// Growing does not bring it back.
	r.append("s2.jsonl", line("s2", "llm"))
	time.Sleep(100 * time.Millisecond)
	stop()
	db := openState(t, r)
	srcs, sessions, _ := db.Load()
	db.Events("claude/s2", func(uint64, []event.Event) error { t.Error("events of s2 kept"); return nil })
	db.Close()
	if len(srcs) != 1 || len(sessions) != 1 || sessions[0].NativeID != "s1" {
		t.Fatalf("state after the pattern: %d sources, %+v", len(srcs), sessions)
	}
}

// New roots in a reloaded configuration are followed without restart.
func TestReconfigureRoots(t *testing.T) {
	r := newRig(t)
	opt := r.opts(false)
	opt.Control = true
	ctx, cancel := context.WithCancel(context.Background())
	d := New(opt)
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	defer func() { cancel(); <-done }()
	other := watchers.Root{Agent: "claude", Layout: watchers.LayoutClaude, Dir: filepath.Join(r.home, "other")}
	p := filepath.Join(other.Dir, "projects", "-w-x", "n1.jsonl")
	os.MkdirAll(filepath.Dir(p), 0o700)
	os.WriteFile(p, []byte(line("n1", "user")), 0o600)
	r.append("s1.jsonl", line("s1", "user"))
	files := func() int {
		c, err := Connect(r.data)
		if err != nil {
			return -1
		}
		st, err := c.Status(context.Background())
		if err != nil || len(st.Agents) == 0 {
			return -1
		}
		return st.Agents[0].Files
	}
	wait := func(n int) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for files() != n {
			if time.Now().After(deadline) {
				t.Fatalf("files followed %d, want %d", files(), n)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	wait(1)
	d.Reconfigure(Live{Idle: time.Hour, Mapper: fakeMapper, Roots: []watchers.Root{r.root, other}})
	wait(2)
}

// A daemon started on a store it wrote before says when its last map was
// written, before it writes one itself.
func TestLastFlushSurvivesARestart(t *testing.T) {
	r := newRig(t)
	r.append("s1.jsonl", line("s1", "user"))
	r.once()
	d := New(r.opts(false))
	defer runInBackground(t, d)()
	deadline := time.Now().Add(10 * time.Second)
	for d.Status().CatchUp.Finished.IsZero() {
		if time.Now().After(deadline) {
			t.Fatal("no catch-up")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st := d.Status(); st.LastFlush.IsZero() {
		t.Errorf("last flush unknown after a restart: %+v", st)
	}
}

// runInBackground runs d until the returned stop is called, which waits
// for it and reports its error.
func runInBackground(t *testing.T, d *Daemon) (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	return func() {
		t.Helper()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("run: %v", err)
		}
	}
}

// status counts the logs privacy.exclude keeps out now: a pattern taken
// out again lets its logs in, and the count goes back to 0 rather than
// staying at what was once kept out.
func TestExcludedCountFollowsThePatterns(t *testing.T) {
	r := newRig(t)
	opt := r.opts(false)
	opt.Control = true
	d := New(opt)
	stop := follow(t, d)
	defer stop()
	r.append("s1.jsonl", cwdLine("s1", "user", "/w/app"))
	r.append("s2.jsonl", cwdLine("s2", "user", "/later/x"))
	var c *Client
	waitFor := func(what string, ok func(Status) bool) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			var err error
			if c == nil {
				c, err = Connect(r.data)
			}
			if c != nil {
				var st Status
				if st, err = c.Status(context.Background()); err == nil && ok(st) {
					return
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s: %v", what, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitFor("both logs followed", func(st Status) bool { return len(st.Agents) == 1 && st.Agents[0].Files == 2 })
	d.Reconfigure(Live{Idle: time.Hour, Roots: opt.Roots, Mapper: fakeMapper, ExcludeKey: "later",
		Exclude: func(dir string) bool { return strings.HasPrefix(dir, "/later") }})
	waitFor("s2 kept out", func(st Status) bool { return st.Excluded == 1 && st.Agents[0].Files == 1 })
	// Its root no longer followed, it is kept out no more either.
	d.Reconfigure(Live{Idle: time.Hour, Roots: nil, Mapper: fakeMapper, ExcludeKey: "later",
		Exclude: func(dir string) bool { return strings.HasPrefix(dir, "/later") }})
	waitFor("no root", func(st Status) bool { return st.Excluded == 0 })
	d.Reconfigure(Live{Idle: time.Hour, Roots: opt.Roots, Mapper: fakeMapper})
	waitFor("s2 let in again", func(st Status) bool { return st.Excluded == 0 && st.Agents[0].Files == 2 })
}

// flush --all --rewrite writes every map again with the map options in
// effect, up to date or not, those of the sessions let go of too, one at a
// time, and the daemon answers meanwhile.
func TestRewriteEveryMap(t *testing.T) {
	r := newRig(t)
	opt := r.opts(false)
	opt.Control = true
	opt.RetireAfter = time.Nanosecond // every session written is let go of
	opt.ExcludeKey = "none"           // so that the reload below takes none up again
	d := New(opt)
	stop := follow(t, d)
	defer stop()
	const n = 30
	for i := range n {
		r.append(fmt.Sprintf("r%02d.jsonl", i), line(fmt.Sprintf("r%02d", i), "user"))
	}
	var c *Client
	deadline := time.Now().Add(20 * time.Second)
	var res FlushResult
	for {
		var err error
		if c == nil {
			c, err = Connect(r.data)
		}
		if c != nil {
			if res, err = c.Flush(context.Background(), "", true); err == nil && len(res.Flushed) == 0 && res.Current == n {
				break
			}
		}
		if time.Now().After(deadline) {
			var missing []int
			for i := range n {
				if r.mapOf(fmt.Sprintf("r%02d", i)) == "" {
					missing = append(missing, i)
				}
			}
			st := d.Status()
			t.Fatalf("the %d sessions were not all written: %+v %v; maps missing %v; status %+v", n, res, err, missing, st.Agents)
		}
		time.Sleep(20 * time.Millisecond)
	}
	v1 := r.mapOf("r07")
	d.Reconfigure(Live{Idle: r.idle, Roots: opt.Roots, ExcludeKey: "none", Mapper: func(evs []event.Event) (Built, error) {
		b, err := fakeMapper(evs)
		b.Gzip = append([]byte("v2\n"), b.Gzip...)
		return b, err
	}})
	res, err := c.Rewrite(context.Background())
	if err != nil || res.Rewritten != n || len(res.Failed) != 0 {
		t.Fatalf("rewrite: %+v %v", res, err)
	}
	for i := range n {
		if got := r.mapOf(fmt.Sprintf("r%02d", i)); !strings.HasPrefix(got, "v2\n") {
			t.Fatalf("r%02d not written again: %q", i, got)
		}
	}
	if got := r.mapOf("r07"); got != "v2\n"+v1 {
		t.Errorf("r07 written again as %q, want the v2 prefix on %q", got, v1)
	}
	if st, err := c.Status(context.Background()); err != nil || st.Agents[0].Live != 0 {
		t.Errorf("status after the rewrite: %+v %v", st, err)
	}
}
