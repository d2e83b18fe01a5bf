package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A log renamed while a scan runs is listed under both names, its first
// name gone by the time the second is visited: it is followed as one
// source (found by its identity), also when its session was written early
// and let go of in between.
func TestRetiredLogRenamedDuringTheScanIsFollowed(t *testing.T) {
	basic, err := os.ReadFile("../testdata/claude/basic.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	const native = "0a1b2c3d-0000-4000-8000-000000000000"
	run := func(hold int) (events, sources, restored int) {
		home := t.TempDir()
		write := func(dir, id string) string {
			p := filepath.Join(home, ".claude/projects", dir, id+".jsonl")
			os.MkdirAll(filepath.Dir(p), 0o700)
			if err := os.WriteFile(p, []byte(strings.ReplaceAll(string(basic), "0a1b2c3d-0000-4000-8000-000000000001", id)), 0o600); err != nil {
				t.Fatal(err)
			}
			return p
		}
		first := write("-w-a", native)
		for i := range groupBatches + 88 {
			write("-w-b", fmt.Sprintf("0a1b2c3d-0000-4000-8000-%012d", 100000+i))
		}
		// The new name, as a second link until the old one goes.
		second := filepath.Join(home, ".claude/projects/-w-z", native+".jsonl")
		os.MkdirAll(filepath.Dir(second), 0o700)
		if err := os.Link(first, second); err != nil {
			t.Skipf("no hard links here: %v", err)
		}
		holdEvents = hold
		removed := false
		d := New(Options{DataDir: t.TempDir(), Once: true, Roots: homeRoots(runtime.GOOS, home),
			Logger: slog.New(slog.DiscardHandler),
			Progress: func(_, _ int64, n int) { // called in the loop, between logs
				if n >= groupBatches+40 && !removed {
					removed = true
					os.Remove(first) // the rename completes
				}
			}})
		if err := d.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		s := d.sessions["claude/"+native]
		if s == nil || s.Flush == nil {
			t.Fatalf("hold %d: the renamed log's session has no flush", hold)
		}
		return s.Flush.Events, len(d.sourcesOf("claude/" + native)), d.restored
	}
	defer func(n int) { holdEvents = n }(holdEvents)
	e0, n0, _ := run(0)
	e1, n1, restored := run(50)
	if e0 != e1 || n0 != n1 || n0 != 1 {
		t.Errorf("a log renamed during the scan: %d events from %d sources keeping every session, %d from %d letting written ones go",
			e0, n0, e1, n1)
	}
	if restored == 0 && !keysHashAlike {
		t.Error("the renamed log's session was never let go of and read back: the test does not test it")
	}
}
