package watchers

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// OpenLog opens what os.Open opens, and fails as it fails, with the same
// error text (the tailer logs it).
func TestOpenLogAsOsOpen(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "log.jsonl")
	if err := os.WriteFile(p, []byte("{\"a\":1}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := OpenLog(p)
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(f)
	if err != nil || string(b) != "{\"a\":1}\n" || f.Name() != p {
		t.Fatalf("read %q, %v, name %q", b, err, f.Name())
	}
	if _, err := f.ReadAt(make([]byte, 2), 6); err != nil {
		t.Fatalf("ReadAt: %v", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "gone.jsonl")
	_, want := os.Open(missing)
	_, got := OpenLog(missing)
	if got == nil || got.Error() != want.Error() || !errors.Is(got, fs.ErrNotExist) {
		t.Fatalf("missing file: %v, want %v", got, want)
	}
}
