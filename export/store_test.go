package export_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/agentmap/agentmap/export"
)

func TestStoreFiles(t *testing.T) {
	root := t.TempDir()
	for _, rel := range []string{
		"claude/2026/01/a.json.gz", "claude/2026/03/b.json.gz", "codex/2026/03/c.json.gz",
		"codex/2026/03/.d.json.gz.tmp-1", "codex/2026/03/notes.txt", "cursor/0001/01/e.json.gz",
	} {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o700)
		os.WriteFile(p, []byte("x"), 0o600)
	}
	since := time.Date(2026, 2, 15, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		agent string
		since time.Time
		want  []string
	}{
		{"", time.Time{}, []string{"claude/2026/01/a.json.gz", "claude/2026/03/b.json.gz", "codex/2026/03/c.json.gz", "cursor/0001/01/e.json.gz"}},
		{"", since, []string{"claude/2026/03/b.json.gz", "codex/2026/03/c.json.gz", "cursor/0001/01/e.json.gz"}},
		{"claude-code", since, []string{"claude/2026/03/b.json.gz"}},
		{"codex", time.Time{}, []string{"codex/2026/03/c.json.gz"}},
	}
	for _, tt := range tests {
		got, err := StoreFiles(root, tt.agent, tt.since)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(tt.want) {
			t.Errorf("%q %v: got %v", tt.agent, tt.since, got)
			continue
		}
		for i := range got {
			if rel, _ := filepath.Rel(root, got[i]); rel != filepath.FromSlash(tt.want[i]) {
				t.Errorf("%q %v: got %v, want %v", tt.agent, tt.since, got, tt.want)
				break
			}
		}
	}
	if _, err := StoreFiles(filepath.Join(root, "missing"), "", time.Time{}); err == nil {
		t.Error("a missing store is not reported")
	}
}
