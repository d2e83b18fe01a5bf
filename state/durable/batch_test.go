package durable

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
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

// A batch replaces existing files, refuses to replace a directory (which
// stays as it was), and gives every file its exact mode whatever the
// umask; the syncs are shared however many directories the batch spans.
func TestWriteFilesReplacesAndKeepsModes(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, "old.json.gz")
	if err := WriteFile(old, []byte("before"), 0o600); err != nil {
		t.Fatal(err)
	}
	asDir := filepath.Join(dir, "taken.json.gz")
	if err := os.MkdirAll(filepath.Join(asDir, "inside"), 0o700); err != nil {
		t.Fatal(err)
	}
	old2 := filepath.Join(dir, "old2.json.gz")
	if err := WriteFile(old2, []byte("before"), 0o600); err != nil {
		t.Fatal(err)
	}
	restore := setUmask(0o277) // no owner write by default
	// Replaces is a guess, right or wrong: the outcome is the same.
	files := []Pending{
		{Target: old, Data: []byte("after")},
		{Target: asDir, Data: []byte("not here")},
		{Target: filepath.Join(dir, "x", "new.json.gz"), Data: []byte("new")},
		{Target: old2, Data: []byte("after2"), Replaces: true},
		{Target: filepath.Join(dir, "x", "new2.json.gz"), Data: []byte("new2"), Replaces: true},
		{Target: asDir, Data: []byte("not here"), Replaces: true},
	}
	errs := WriteFiles(files, 0o600)
	restore()
	if errs[0] != nil || errs[2] != nil || errs[3] != nil || errs[4] != nil {
		t.Fatalf("errors %v", errs)
	}
	if errs[1] == nil || errs[5] == nil {
		t.Error("a directory was replaced by a file")
	}
	if fi, err := os.Stat(filepath.Join(asDir, "inside")); err != nil || !fi.IsDir() {
		t.Errorf("the directory target changed: %v", err)
	}
	for _, f := range []Pending{files[0], files[2], files[3], files[4]} {
		got, err := os.ReadFile(f.Target)
		if err != nil || string(got) != string(f.Data) {
			t.Errorf("%s: read %q, %v", f.Target, got, err)
		}
		if fi, _ := os.Stat(f.Target); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: mode %v under a narrow umask", f.Target, fi.Mode().Perm())
		}
	}
	for _, d := range []string{dir, filepath.Join(dir, "x")} {
		entries, _ := os.ReadDir(d)
		for _, e := range entries {
			if strings.HasPrefix(e.Name(), ".") {
				t.Errorf("temporary file left in %s: %s", d, e.Name())
			}
		}
	}
}

// A failed write names its target once, whatever names the temporary file.
func TestWriteErrorNamesTheTargetOnce(t *testing.T) {
	errNoSpace, errIO, errDenied := errors.New("no space left on device"), errors.New("input/output error"), errors.New("permission denied")
	const target = "/d/maps/x.json.gz"
	for _, c := range []struct {
		err  error
		want string
	}{
		{&fs.PathError{Op: "write", Path: target, Err: errNoSpace}, "write " + target + ": no space left on device"},
		{&fs.PathError{Op: "sync", Path: target, Err: errIO}, "write " + target + ": sync: input/output error"},
		{&fs.PathError{Op: "open", Path: "/d/maps", Err: errDenied}, "write " + target + ": open /d/maps: permission denied"},
	} {
		err := writeError(target, c.err)
		if err.Error() != c.want || !errors.Is(err, c.err.(*fs.PathError).Err) {
			t.Errorf("%v: %q, want %q", c.err, err, c.want)
		}
	}
}
