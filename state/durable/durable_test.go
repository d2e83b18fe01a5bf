package durable

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestWriteFileReplacesAtomically(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "a", "b", "map.json.gz")
	if err := WriteFile(target, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(target, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(target)
	if err != nil || string(got) != "two" {
		t.Fatalf("content %q, %v", got, err)
	}
	entries, _ := os.ReadDir(filepath.Dir(target))
	if len(entries) != 1 {
		t.Fatalf("leftover temporary files: %v", entries)
	}
	if runtime.GOOS == "windows" {
		return
	}
	fi, _ := os.Stat(target)
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", fi.Mode().Perm())
	}
	for _, d := range []string{filepath.Join(dir, "a"), filepath.Join(dir, "a", "b")} {
		di, _ := os.Stat(d)
		if di.Mode().Perm() != 0o700 {
			t.Errorf("dir %s mode %v, want 0700", d, di.Mode().Perm())
		}
	}
}

func TestAbortLeavesTargetUnchanged(t *testing.T) {
	target := filepath.Join(t.TempDir(), "export.jsonl")
	if err := WriteFile(target, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := Create(target, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write([]byte("half of a new")); err != nil {
		t.Fatal(err)
	}
	f.Abort()
	if got, _ := os.ReadFile(target); string(got) != "old" {
		t.Fatalf("target changed to %q", got)
	}
	if err := f.Commit(); err == nil {
		t.Fatal("commit after abort succeeded")
	}
	entries, _ := os.ReadDir(filepath.Dir(target))
	if len(entries) != 1 {
		t.Fatalf("leftover temporary files: %v", entries)
	}
}

func TestCreateFailsWhenParentIsAFile(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "file")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(filepath.Join(blocker, "x"), []byte("x"), 0o600); err == nil {
		t.Fatal("write under a regular file succeeded")
	}
}
