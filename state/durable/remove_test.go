package durable

import (
	"os"
	"path/filepath"
	"testing"
)

// RemoveFiles removes what it can, takes a missing file as removed, and
// names each file it could not remove.
func TestRemoveFiles(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json.gz"), filepath.Join(dir, "sub", "b.json.gz")
	full := filepath.Join(dir, "full") // a directory that is not empty cannot be removed, even by root
	for _, p := range []string{a, b, filepath.Join(full, "x")} {
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("m"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	errs := RemoveFiles([]string{a, filepath.Join(dir, "never.json.gz"), b, full})
	if errs[0] != nil || errs[1] != nil || errs[2] != nil || errs[3] == nil {
		t.Fatalf("errors %v", errs)
	}
	for _, p := range []string{a, b} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("%s still there: %v", p, err)
		}
	}
	if _, err := os.Stat(full); err != nil {
		t.Errorf("the directory that could not be removed: %v", err)
	}
}
