package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/watchers"
)

// TestLogsCopiedToANewRootCountOnce: the logs copied to another directory,
// the old ones kept, and the roots changed to the copy: each session counts
// its lines once, as build of the files followed counts them, not once per
// copy: the old log is let go of, the agent being followed elsewhere now,
// and the copy goes on from it.
func TestLogsCopiedToANewRootCountOnce(t *testing.T) {
	r := newRig(t)
	r.append("s1.jsonl", line("s1", "user"), line("s1", "llm"), line("s1", "call"))
	r.once()
	want := r.mapOf("s1")
	if want == "" {
		t.Fatal("no map of s1")
	}
	moved := watchers.Root{Agent: "claude", Layout: watchers.LayoutClaude, Dir: filepath.Join(r.home, "claude-copy")}
	src := filepath.Join(r.proj, "s1.jsonl")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(moved.Dir, "projects", "-w-app", "s1.jsonl")
	os.MkdirAll(filepath.Dir(dst), 0o700)
	if err := os.WriteFile(dst, b, 0o600); err != nil {
		t.Fatal(err)
	}
	r.root = moved
	r.once()
	if got := r.mapOf("s1"); got != want {
		t.Fatalf("s1 once its logs are followed in a copy, the old ones kept:\n%s\nwant:\n%s", got, want)
	}
	// The copy grows: what it adds counts, the lines before still once.
	f, _ := os.OpenFile(dst, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(line("s1", "result"))
	f.Close()
	r.once()
	if got := r.mapOf("s1"); !strings.Contains(got, "result") || strings.Count(got, "call") != strings.Count(want, "call") {
		t.Fatalf("s1 after the copy grew:\n%s", got)
	}
}
