package daemon

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/agentmap/agentmap/state/mapstore"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/agents"
)

func codexRig(t *testing.T) (*rig, string) {
	r := newRig(t)
	r.root = watchers.Root{Agent: "codex", Layout: watchers.LayoutCodex, Dir: filepath.Join(r.home, ".codex")}
	dir := filepath.Join(r.root.Dir, "sessions", "2026", "05", "01")
	os.MkdirAll(dir, 0o700)
	return r, dir
}

func (r *rig) codexOnce() {
	r.t.Helper()
	o := r.opts(true)
	o.Agents = []agents.Agent{fakeAgentNamed("codex")}
	if err := New(o).Run(t0ctx()); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) codexMap(id string) string {
	b, _ := r.store.Read(mapstore.RelPath("codex", id, time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)))
	return string(b)
}

// A child rollout is a map of its own and a lane of its parent's map, and
// the parent is written again when the child grows.
func TestChildRolloutIsAlsoALane(t *testing.T) {
	r, dir := codexRig(t)
	child := `{"s":"c","k":"user","p":"p"}` + "\n"
	os.WriteFile(filepath.Join(dir, "rollout-1-p.jsonl"), []byte(line("p", "user")+line("p", "call")), 0o600)
	os.WriteFile(filepath.Join(dir, "rollout-2-c.jsonl"), []byte(child+line("c", "llm")), 0o600)
	r.codexOnce()
	if got, want := r.codexMap("c"), " session 1\n user 1\n llm 2\n"; got != want {
		t.Fatalf("child map:\n%s\nwant:\n%s", got, want)
	}
	want := " session 1\n user 1\n call 2\nsa-c user 1\nsa-c llm 2\n"
	if got := r.codexMap("p"); got != want {
		t.Fatalf("parent map:\n%s\nwant:\n%s", got, want)
	}
	f, _ := os.OpenFile(filepath.Join(dir, "rollout-2-c.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(line("c", "result"))
	f.Close()
	r.codexOnce()
	if got := r.codexMap("p"); got != want+"sa-c result 3\n" {
		t.Fatalf("parent map after the child grew:\n%s", got)
	}
}

// followCodex starts a following daemon over the Codex rig, and returns
// a wait for a condition and a stop that may be called more than once.
func (r *rig) followCodex() (wait func(what string, ok func() bool), stop func()) {
	t := r.t
	r.idle = 200 * time.Millisecond
	o := r.opts(false)
	o.Agents = []agents.Agent{fakeAgentNamed("codex")}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- New(o).Run(ctx) }()
	var once sync.Once
	stop = func() { once.Do(func() { cancel(); <-done }) }
	wait = func(what string, ok func() bool) {
		t.Helper()
		for deadline := time.Now().Add(20 * time.Second); !ok(); time.Sleep(20 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s", what)
			}
		}
	}
	return wait, stop
}

// privacy.exclude reads a compressed rollout's cwd as a plain one's: an
// excluded rollout is not mapped once compressed, nor is a copy found
// alone, and a pattern reloaded later covers a session read from its copy.
func TestExcludedCompressedRollout(t *testing.T) {
	r, dir := codexRig(t)
	run := func(exclude func(string) bool) {
		t.Helper()
		o := r.opts(true)
		o.Agents = []agents.Agent{fakeAgentNamed("codex")}
		o.Exclude = exclude
		if err := New(o).Run(t0ctx()); err != nil {
			t.Fatal(err)
		}
	}
	secret := func(dir string) bool { return strings.HasPrefix(dir, "/secret") }
	plain := filepath.Join(dir, "rollout-8-e.jsonl")
	content := []byte(cwdLine("e", "user", "/secret/x") + line("e", "llm"))
	os.WriteFile(plain, content, 0o600)
	writeCompressedCopy(t, filepath.Join(dir, "rollout-9-f.jsonl"), []byte(cwdLine("f", "user", "/secret/y")))
	kept := []byte(cwdLine("k", "user", "/w/app"))
	writeCompressedCopy(t, filepath.Join(dir, "rollout-10-k.jsonl"), kept)
	run(secret)
	writeCompressedCopy(t, plain, content)
	os.Remove(plain)
	run(secret)
	if r.codexMap("e") != "" || r.codexMap("f") != "" || r.codexMap("k") == "" {
		t.Fatalf("maps: e %q, f %q, k %q", r.codexMap("e"), r.codexMap("f"), r.codexMap("k"))
	}
	db := openState(t, r)
	srcs, sessions, _ := db.Load()
	db.Close()
	if len(srcs) != 1 || len(sessions) != 1 || sessions[0].NativeID != "k" {
		t.Fatalf("state: %d sources, sessions %+v", len(srcs), sessions)
	}
	// A pattern reloaded into a running daemon sees the kept copy's cwd.
	d := New(r.opts(false))
	d.opt.Exclude = func(dir string) bool { return dir == "/w/app" }
	if covered, _ := d.coveredLogs(srcs); len(covered) == 0 {
		t.Fatal("a session read from a compressed copy not covered by a pattern on its cwd")
	}
}

// writeCompressedCopy writes the zstd copy of a rollout beside it, as
// Codex does before it removes the plain file.
func writeCompressedCopy(t *testing.T, plain string, content []byte) {
	t.Helper()
	var zbuf bytes.Buffer
	enc, err := zstd.NewWriter(&zbuf)
	if err != nil {
		t.Fatal(err)
	}
	enc.Write(content)
	enc.Close()
	if err := os.WriteFile(plain+".zst", zbuf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
}

// A rollout compressed in place (.jsonl replaced by .jsonl.zst) keeps its
// events once, and a .zst beside its plain file is not read twice.
func TestCompressedRollout(t *testing.T) {
	r, dir := codexRig(t)
	plain := filepath.Join(dir, "rollout-3-z.jsonl")
	content := []byte(line("z", "user") + line("z", "llm") + line("z", "turn_end"))
	os.WriteFile(plain, content, 0o600)
	r.codexOnce()
	want := " session 1\n user 1\n llm 2\n turn_end 3\n"
	if got := r.codexMap("z"); got != want {
		t.Fatalf("plain:\n%s", got)
	}
	writeCompressedCopy(t, plain, content)
	r.codexOnce()
	if got := r.codexMap("z"); got != want {
		t.Fatalf("plain beside its .zst:\n%s", got)
	}
	os.Remove(plain)
	r.codexOnce()
	if got := r.codexMap("z"); got != want {
		t.Fatalf("after compression:\n%s", got)
	}
	db := openState(t, r)
	defer db.Close()
	srcs, _, _ := db.Load()
	if len(srcs) != 1 || srcs[0].Form != watchers.FormWhole {
		t.Fatalf("sources after compression: %+v", srcs)
	}
}

// The same while following: the .zst appears first (ignored beside its
// plain file), then the plain file goes.
func TestCompressedRolloutWhileFollowing(t *testing.T) {
	r, dir := codexRig(t)
	wait, stop := r.followCodex()
	defer stop()
	plain := filepath.Join(dir, "rollout-4-w.jsonl")
	content := []byte(line("w", "user") + line("w", "llm"))
	os.WriteFile(plain, content, 0o600)
	want := " session 1\n user 1\n llm 2\n"
	wait("the plain rollout's map", func() bool { return r.codexMap("w") == want })
	writeCompressedCopy(t, plain, content)
	time.Sleep(100 * time.Millisecond) // the .zst is seen (and set aside) first
	os.Remove(plain)
	// The session ends with its plain file; its map must not change.
	wait("the map after compression", func() bool {
		mt, err := os.Stat(filepath.Join(r.store.Root, mapstore.RelPath("codex", "w", time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC))))
		return err == nil && time.Since(mt.ModTime()) > 500*time.Millisecond
	})
	if got := r.codexMap("w"); got != want {
		t.Fatalf("map after compression:\n%s", got)
	}
	// The .zst took the plain file's place (it did not wait to change).
	stop()
	db := openState(t, r)
	defer db.Close()
	srcs, _, _ := db.Load()
	if len(srcs) != 1 || srcs[0].Path != plain+".zst" || srcs[0].Form != watchers.FormWhole || srcs[0].Missing {
		t.Fatalf("sources: %+v", srcs)
	}
}

// A rollout renamed onto another's plain name while that one's compressed
// copy waits beside it: the moved rollout is followed there, and the copy,
// set aside while the name is held, is its own rollout's once the name is
// free, whether the moved rollout is then deleted or moved on. (The moved
// rollout's record took the copy as the name's last holder; a copy set
// aside beside a name a moved log left was never read.)
func TestRolloutRenamedOntoOneWithACompressedCopy(t *testing.T) {
	for _, then := range []string{"deleted", "moved on"} {
		t.Run(then, func(t *testing.T) { renamedOntoCompressedRollout(t, then == "deleted") })
	}
}

func renamedOntoCompressedRollout(t *testing.T, deleteAfter bool) {
	r, dir := codexRig(t)
	wait, stop := r.followCodex()
	defer stop()
	x, y, z := filepath.Join(dir, "rollout-5-x.jsonl"), filepath.Join(dir, "rollout-6-y.jsonl"), filepath.Join(dir, "rollout-7-z.jsonl")
	os.WriteFile(x, []byte(line("x", "user")), 0o600)
	yContent := []byte(line("y", "user") + line("y", "llm"))
	os.WriteFile(y, yContent, 0o600)
	wantX, wantY := " session 1\n user 1\n", " session 1\n user 1\n llm 2\n"
	wait("both maps", func() bool { return r.codexMap("x") == wantX && r.codexMap("y") == wantY })
	// The copy holds a line more: its lines are seen in y's map.
	writeCompressedCopy(t, y, append(yContent, line("y", "turn_end")...))
	time.Sleep(100 * time.Millisecond) // the .zst is seen (and set aside) first
	// y's file is kept, so that no later file takes its identity.
	if err := os.Link(y, filepath.Join(r.home, "kept-y")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(x, y); err != nil {
		t.Fatal(err)
	}
	f, err := os.OpenFile(y, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(line("x", "llm"))
	f.Close()
	wantX = " session 1\n user 1\n llm 2\n"
	wait("x's line after the move", func() bool { return r.codexMap("x") == wantX })
	if r.codexMap("y") != wantY {
		t.Fatalf("y's map while its name is x's:\n%s", r.codexMap("y"))
	}
	xAt := "rollout-6-y.jsonl lines missing true"
	if deleteAfter {
		os.Remove(y)
	} else {
		if err := os.Rename(y, z); err != nil {
			t.Fatal(err)
		}
		xAt = "rollout-7-z.jsonl lines missing false"
	}
	wantY = " session 1\n user 1\n llm 2\n turn_end 3\n"
	wait("the copy's lines in y's map", func() bool { return r.codexMap("y") == wantY })
	if got := r.codexMap("x"); got != wantX {
		t.Fatalf("x's map:\n%s", got)
	}
	stop()
	db := openState(t, r)
	defer db.Close()
	srcs, _, _ := db.Load()
	var got []string
	for _, s := range srcs {
		rel, _ := filepath.Rel(dir, s.Path)
		got = append(got, fmt.Sprintf("%s %s %s missing %v", s.Session, rel, s.Form, s.Missing))
	}
	sort.Strings(got)
	want := []string{"codex/x " + xAt, "codex/y rollout-6-y.jsonl.zst whole missing false"}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("sources:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
