package mapstore

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// MapsOf finds a session's maps in whatever month they were filed, and
// only its own.
func TestMapsOf(t *testing.T) {
	s := New(t.TempDir())
	if got, err := s.MapsOf("codex", "a"); err != nil || len(got) != 0 {
		t.Fatalf("empty store: %v %v", got, err)
	}
	want := []string{
		RelPath("codex", "a[1]", time.Date(2025, 12, 31, 0, 0, 0, 0, time.UTC)),
		RelPath("codex", "a[1]", time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)),
	}
	others := []string{
		RelPath("codex", "b", time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)),
		RelPath("claude", "a[1]", time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)),
	}
	for _, rel := range append(slices.Clone(want), others...) {
		p := filepath.Join(s.Root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("m"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.MapsOf("codex", "a[1]")
	slices.Sort(got)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("maps of codex/a[1]: %v %v; want %v", got, err, want)
	}
}
