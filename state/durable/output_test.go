package durable

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// symlink makes a link, or skips where the OS does not let the test make
// one (Windows without the privilege).
func symlink(t *testing.T, to, at string) {
	t.Helper()
	if err := os.Symlink(to, at); err != nil {
		t.Skipf("no symbolic link: %v", err)
	}
}

// noTemps fails when a temporary file is left in dir.
func noTemps(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left in %s: %s", dir, e.Name())
		}
	}
}

// isLink fails unless p is still a link to to.
func isLink(t *testing.T, p, to string) {
	t.Helper()
	fi, err := os.Lstat(p)
	if err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("%s is no longer a link (%v, %v)", p, fi.Mode(), err)
	}
	if got, _ := os.Readlink(p); got != to {
		t.Errorf("%s leads to %s, want %s", p, got, to)
	}
}

// A user's output that is a link (to a file, through a chain, to a file
// not made yet, relative or absolute) writes the file at the end of the
// links; every link stays as it was.
func TestWriteOutputFollowsLinks(t *testing.T) {
	dir := t.TempDir()
	elsewhere := t.TempDir()
	target := filepath.Join(elsewhere, "export.jsonl")
	if err := os.WriteFile(target, []byte("original"), 0o644); err != nil {
		t.Fatal(err)
	}
	abs := filepath.Join(dir, "abs")
	symlink(t, target, abs)
	if err := WriteOutput(abs, []byte("one"), 0o600); err != nil {
		t.Fatal(err)
	}
	isLink(t, abs, target)
	if got, _ := os.ReadFile(target); string(got) != "one" {
		t.Errorf("the link's file holds %q", got)
	}

	// A chain: rel -> abs -> target, rel relative to its directory.
	rel := filepath.Join(dir, "sub", "rel")
	os.Mkdir(filepath.Dir(rel), 0o700)
	symlink(t, filepath.Join("..", "abs"), rel)
	if err := WriteOutput(rel, []byte("two"), 0o600); err != nil {
		t.Fatal(err)
	}
	isLink(t, rel, filepath.Join("..", "abs"))
	isLink(t, abs, target)
	if got, _ := os.ReadFile(target); string(got) != "two" {
		t.Errorf("the chain's file holds %q", got)
	}

	// A link to a file that does not exist yet makes it, as `>` would.
	dangling := filepath.Join(dir, "dangling")
	symlink(t, "new.jsonl", dangling)
	f, err := CreateOutput(dangling, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("three"))
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	isLink(t, dangling, "new.jsonl")
	if got, _ := os.ReadFile(filepath.Join(dir, "new.jsonl")); string(got) != "three" {
		t.Errorf("the dangling link's file holds %q", got)
	}
	noTemps(t, dir)
	noTemps(t, elsewhere)

	// An aborted write leaves the link's file as it was.
	f, err = CreateOutput(abs, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	f.Write([]byte("half"))
	f.Abort()
	if got, _ := os.ReadFile(target); string(got) != "two" {
		t.Errorf("an aborted write changed the file to %q", got)
	}
	noTemps(t, elsewhere)
}

// A link's ".." is taken from where the link really is, as the kernel
// takes it: through a linked directory it leads out of the directory the
// link seems to be in.
func TestWriteOutputLinkDotDotIsPhysical(t *testing.T) {
	root := t.TempDir()
	deep := filepath.Join(root, "real", "deep")
	if err := os.MkdirAll(deep, 0o700); err != nil {
		t.Fatal(err)
	}
	symlink(t, deep, filepath.Join(root, "alias"))
	symlink(t, filepath.Join("..", "out.txt"), filepath.Join(deep, "link"))
	if err := WriteOutput(filepath.Join(root, "alias", "link"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(root, "real", "out.txt")); err != nil || string(got) != "x" {
		t.Errorf("real/out.txt: %q, %v", got, err)
	}
	if _, err := os.Lstat(filepath.Join(root, "out.txt")); err == nil {
		t.Error("the link's .. was taken by name")
	}
}

// A directory, or a link to one, is not an output; a loop of links is an
// error, not a hang.
func TestCreateOutputRefuses(t *testing.T) {
	dir := t.TempDir()
	sub := filepath.Join(dir, "sub")
	os.Mkdir(sub, 0o700)
	if _, err := CreateOutput(sub, 0o600); err == nil || !strings.Contains(err.Error(), "is a directory") {
		t.Errorf("a directory: %v", err)
	}
	toDir := filepath.Join(dir, "todir")
	symlink(t, "sub", toDir)
	if _, err := CreateOutput(toDir, 0o600); err == nil || !strings.Contains(err.Error(), "write "+toDir+": is a directory") {
		t.Errorf("a link to a directory: %v", err)
	}
	isLink(t, toDir, "sub")
	symlink(t, "loop2", filepath.Join(dir, "loop1"))
	symlink(t, "loop1", filepath.Join(dir, "loop2"))
	if _, err := CreateOutput(filepath.Join(dir, "loop1"), 0o600); err == nil || !strings.Contains(err.Error(), "symbolic links") {
		t.Errorf("a loop: %v", err)
	}
	// A link into a missing directory, or to a directory's name, is an
	// error, and the link stays.
	for _, to := range []string{filepath.Join("none", "out.jsonl"), "none" + string(filepath.Separator)} {
		link := filepath.Join(dir, "nowhere")
		os.Remove(link)
		symlink(t, to, link)
		if err := WriteOutput(link, []byte("x"), 0o600); err == nil {
			t.Errorf("a link to %s: written", to)
		}
		isLink(t, link, to)
		if _, err := os.Stat(filepath.Join(dir, "none")); err == nil {
			t.Errorf("a link to %s: its directory was made", to)
		}
	}
	noTemps(t, dir)
}

// Create, for agentmap's own files, replaces a link at the target with the
// file rather than write through it: a link in the data directory must not
// take a write elsewhere.
func TestCreateDoesNotFollowALink(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "outside")
	if err := os.WriteFile(outside, []byte("untouched"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "map.json.gz")
	symlink(t, outside, link)
	if err := WriteFile(link, []byte("map"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(outside); string(got) != "untouched" {
		t.Errorf("the write went through the link: %q", got)
	}
	if fi, err := os.Lstat(link); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("the link was not replaced by the file: %v", err)
	}
}
