package watchers

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkFullScan is one periodic rescan of a Claude tree of 20 projects
// of 250 sessions, each with a subagent directory: the idle daemon's
// recurring cost.
func BenchmarkFullScan(b *testing.B) {
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
	w := NewWatcher([]Root{root}, WatchOptions{})
	w.fullScan()
	for b.Loop() {
		w.fullScan()
	}
}
