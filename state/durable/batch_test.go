package durable

import (
	"os"
	"path/filepath"
	"testing"
)

// A batch writes every file it can, private and whole, leaves no temporary
// file, and fails only the file whose directory cannot be made.
func TestWriteFilesBatch(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "blocked")
	if err := os.WriteFile(blocker, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	files := []Pending{
		{Target: filepath.Join(dir, "a", "one.json.gz"), Data: []byte("one")},
		{Target: filepath.Join(dir, "blocked", "two.json.gz"), Data: []byte("two")},
		{Target: filepath.Join(dir, "b", "three.json.gz"), Data: []byte("three")},
		{Target: filepath.Join(dir, "a", "four.json.gz"), Data: []byte("four")},
	}
	if err := os.WriteFile(files[0].Target, nil, 0o600); err == nil {
		t.Fatal("directory a exists before the batch")
	}
	errs := WriteFiles(files, 0o600)
	for i, f := range files {
		if i == 1 {
			if errs[i] == nil {
				t.Errorf("write below a file succeeded")
			}
			continue
		}
		if errs[i] != nil {
			t.Fatalf("%s: %v", f.Target, errs[i])
		}
		got, err := os.ReadFile(f.Target)
		if err != nil || string(got) != string(f.Data) {
			t.Errorf("%s: read %q, %v", f.Target, got, err)
		}
		if fi, _ := os.Stat(f.Target); fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v", f.Target, fi.Mode().Perm())
		}
	}
	for _, d := range []string{"a", "b"} {
		entries, _ := os.ReadDir(filepath.Join(dir, d))
		for _, e := range entries {
			if e.Name()[0] == '.' {
				t.Errorf("temporary file left in %s: %s", d, e.Name())
			}
		}
	}
}
