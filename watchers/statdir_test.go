//go:build unix

package watchers

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// A file stat'ed by name in its opened directory is what statFile makes
// of its path: a log, a link to one, and what is no log or is gone.
func TestDirStatterIsStatFile(t *testing.T) {
	dir := t.TempDir()
	root := Root{Agent: "claude", Layout: LayoutClaude, Dir: dir}
	os.WriteFile(filepath.Join(dir, "a.jsonl"), []byte("{}\n{}\n"), 0o600)
	os.Symlink("a.jsonl", filepath.Join(dir, "link.jsonl"))
	os.Symlink("gone.jsonl", filepath.Join(dir, "dangling.jsonl"))
	os.Mkdir(filepath.Join(dir, "sub.jsonl"), 0o700)
	fifo := syscall.Mkfifo(filepath.Join(dir, "fifo.jsonl"), 0o600) == nil
	ds := openDirStatter(dir)
	defer ds.close()
	if ds.fd < 0 {
		t.Fatal("the directory did not open")
	}
	names := []string{"a.jsonl", "link.jsonl", "dangling.jsonl", "sub.jsonl", "missing.jsonl"}
	if fifo {
		names = append(names, "fifo.jsonl")
	}
	for _, name := range names {
		p := filepath.Join(dir, name)
		want, wantOK := statFile(root, p, FormLines)
		got, gotOK := ds.stat(root, p, name, FormLines)
		if gotOK != wantOK || !got.same(want) || got.Path != want.Path || got.Agent != want.Agent ||
			got.Form != want.Form || got.Archived != want.Archived {
			t.Errorf("%s: by name %+v %v, by path %+v %v", name, got, gotOK, want, wantOK)
		}
	}
	// A directory that does not open: its files are stat'ed by path.
	gone := openDirStatter(filepath.Join(dir, "missing"))
	defer gone.close()
	if fs, ok := gone.stat(root, filepath.Join(dir, "a.jsonl"), "a.jsonl", FormLines); gone.fd >= 0 || !ok || fs.Size != 6 {
		t.Errorf("through a directory that did not open: %+v %v", fs, ok)
	}
}
