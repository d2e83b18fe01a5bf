package watchers

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"
)

// sessionTree makes a Claude tree of 20 projects of 250 sessions, each
// with a subagent directory.
func sessionTree(b *testing.B) Root {
	root := Root{Agent: "claude", Layout: LayoutClaude, Dir: filepath.Join(b.TempDir(), ".claude")}
	for p := 0; p < 20; p++ {
		for s := 0; s < 250; s++ {
			dir := filepath.Join(root.Dir, "projects", fmt.Sprintf("-w-%d", p))
			sub := filepath.Join(dir, fmt.Sprintf("s%d", s), "subagents")
			if err := os.MkdirAll(sub, 0o700); err != nil {
				b.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("s%d.jsonl", s)), []byte("{}\n"), 0o600)
			os.WriteFile(filepath.Join(sub, "agent-a.jsonl"), []byte("{}\n"), 0o600)
		}
	}
	return root
}

// BenchmarkFullScan is one periodic rescan of a Claude tree of 20 projects
// of 250 sessions, each with a subagent directory: the idle daemon's
// recurring cost.
func BenchmarkFullScan(b *testing.B) {
	root := sessionTree(b)
	w := NewWatcher([]Root{root}, WatchOptions{})
	w.fullScan()
	for b.Loop() {
		w.fullScan()
	}
}

// BenchmarkIdleRescan is the periodic rescan of 50,000 idle Claude logs in
// 500 project directories, as the daemon runs it: with notifications
// (every directory watched) and without (a backend that failed, or a file
// system that sends none), where every log is stat'ed on every rescan.
//
//	go test ./watchers -run '^$' -bench IdleRescan
func BenchmarkIdleRescan(b *testing.B) {
	root := Root{Agent: "claude", Layout: LayoutClaude, Dir: filepath.Join(b.TempDir(), ".claude")}
	for p := 0; p < 500; p++ {
		dir := filepath.Join(root.Dir, "projects", fmt.Sprintf("-w-%d", p))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			b.Fatal(err)
		}
		for s := 0; s < 100; s++ {
			os.WriteFile(filepath.Join(dir, fmt.Sprintf("%08d-0000-4000-8000-000000000000.jsonl", p*100+s)), []byte("{}\n"), 0o600)
		}
	}
	old := time.Now().Add(-time.Minute)
	filepath.WalkDir(root.Dir, func(p string, d os.DirEntry, err error) error {
		if err == nil {
			os.Chtimes(p, old, old) // listings trusted only well after the last change
		}
		return nil
	})
	for _, notify := range []bool{true, false} {
		b.Run(fmt.Sprintf("notifications=%v", notify), func(b *testing.B) {
			w := NewWatcher([]Root{root}, WatchOptions{MaxWatches: 1000})
			if notify {
				fsw, err := fsnotify.NewWatcher()
				if err != nil {
					b.Skipf("no file notifications here: %v", err)
				}
				defer fsw.Close()
				w.fsw = fsw
			}
			w.fullScan()
			if len(w.known) != 50000 {
				b.Fatalf("%d logs found, want 50000", len(w.known))
			}
			for b.Loop() {
				w.fullScan()
			}
		})
	}
}

// BenchmarkScan is the one-shot walk a scan over a data directory with
// records starts with, over the same tree.
func BenchmarkScan(b *testing.B) {
	root := sessionTree(b)
	b.ReportAllocs()
	for b.Loop() {
		if got := Scan([]Root{root}); len(got) != 10000 {
			b.Fatalf("Scan found %d logs", len(got))
		}
	}
}
