package mapstore

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestRelPath(t *testing.T) {
	for _, tc := range []struct {
		agent, id string
		start     time.Time
		want      string
	}{
		{"claude", "0a1b", time.Date(2026, 5, 1, 23, 0, 0, 0, time.UTC), "claude/2026/05/0a1b.json.gz"},
		{"codex", "x/../y", time.Date(2025, 12, 31, 0, 0, 0, 0, time.FixedZone("x", 3600)), "codex/2025/12/x%2F..%2Fy.json.gz"},
		{"cursor", "", time.Unix(0, 0), "cursor/1970/01/%.json.gz"},
	} {
		if got := RelPath(tc.agent, tc.id, tc.start); got != filepath.FromSlash(tc.want) {
			t.Errorf("RelPath(%q, %q) = %q, want %q", tc.agent, tc.id, got, tc.want)
		}
	}
}

func TestWriteIsAtomicAndPrivate(t *testing.T) {
	s := New(filepath.Join(t.TempDir(), "maps"))
	rel := RelPath("claude", "abc", time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
	if err := s.Write(rel, []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(rel, []byte("two")); err != nil {
		t.Fatal(err)
	}
	got, err := s.Read(rel)
	if err != nil || string(got) != "two" {
		t.Fatalf("read back %q, %v", got, err)
	}
	fi, _ := os.Stat(filepath.Join(s.Root, rel))
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("file mode %v, want 0600", fi.Mode().Perm())
	}
	for d := filepath.Dir(filepath.Join(s.Root, rel)); d != filepath.Dir(s.Root); d = filepath.Dir(d) {
		fi, _ := os.Stat(d)
		if fi.Mode().Perm() != 0o700 {
			t.Errorf("dir %s mode %v, want 0700", d, fi.Mode().Perm())
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(filepath.Join(s.Root, rel)))
	if len(entries) != 1 {
		t.Fatalf("temporary files left behind: %v", entries)
	}
	list, _ := s.List()
	if len(list) != 1 || list[0] != rel {
		t.Fatalf("List = %v", list)
	}
}

// An unwritable store fails without leaving anything, and a retry after the
// obstacle is gone succeeds. (A file standing where a directory must go
// blocks even root, for whom permission bits do not.)
func TestUnwritableThenRetry(t *testing.T) {
	root := filepath.Join(t.TempDir(), "maps")
	s := New(root)
	rel := RelPath("codex", "r1", time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC))
	os.MkdirAll(root, 0o700)
	blocker := filepath.Join(root, "codex")
	if err := os.WriteFile(blocker, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(rel, []byte("map")); err == nil {
		t.Fatal("write through a file succeeded")
	}
	os.Remove(blocker)
	if os.Geteuid() != 0 {
		os.MkdirAll(filepath.Dir(filepath.Join(root, rel)), 0o700)
		os.Chmod(filepath.Dir(filepath.Join(root, rel)), 0o500)
		if err := s.Write(rel, []byte("map")); err == nil {
			t.Fatal("write into a read-only directory succeeded")
		}
		os.Chmod(filepath.Dir(filepath.Join(root, rel)), 0o700)
	}
	if err := s.Write(rel, []byte("map")); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if got, _ := s.Read(rel); !bytes.Equal(got, []byte("map")) {
		t.Fatalf("retry wrote %q", got)
	}
}

// Session ids that differ give map files that differ, none hidden, each
// decoding back to its id.
func TestFileNamesAreReversible(t *testing.T) {
	ids := []string{"x/y", "x_y", "x:y", "x%2Fy", "..", ".", ".x", "", "%", "a\\b", "a\nb", "0a1b-c2d3", "x%"}
	seen := map[string]string{}
	for _, id := range ids {
		name := FileName(id)
		if other, ok := seen[name]; ok {
			t.Errorf("%q and %q share %s", id, other, name)
		}
		seen[name] = id
		if strings.HasPrefix(name, ".") || strings.ContainsAny(name, "/\\:") {
			t.Errorf("%q gives %q", id, name)
		}
		back, err := DecodeID(strings.TrimSuffix(name, ".json.gz"))
		if err != nil || back != id {
			t.Errorf("%q gives %q, decoded %q, %v", id, name, back, err)
		}
	}
	if FileName("0a1b-c2d3_e") != "0a1b-c2d3_e.json.gz" {
		t.Error("a plain id changed its name")
	}
	s := New(t.TempDir())
	for _, id := range ids {
		s.Write(RelPath("codex", id, time.Unix(0, 0)), []byte(id))
	}
	if list, _ := s.List(); len(list) != len(ids) {
		t.Errorf("listed %d maps of %d: %v", len(list), len(ids), list)
	}
	for _, bad := range []string{"%2", "%zz", "a%"} {
		if _, err := DecodeID(bad); err == nil {
			t.Errorf("DecodeID(%q) accepted", bad)
		}
	}
}

// A store Within its data directory does not make that directory again
// once it is gone (removed under a running daemon): the write fails and
// nothing is made; the maps directory itself is made when missing.
func TestStoreWithinDoesNotMakeItsDataDirectory(t *testing.T) {
	data := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	s := &Store{Root: filepath.Join(data, "maps"), Within: true}
	rel := RelPath("claude", "abc", time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
	if err := s.Write(rel, []byte("one")); err != nil {
		t.Fatalf("a write with the data directory there: %v", err)
	}
	if err := os.RemoveAll(data); err != nil {
		t.Fatal(err)
	}
	err := s.Write(rel, []byte("two"))
	if err == nil || !strings.Contains(err.Error(), "is not there") {
		t.Fatalf("a write with the data directory gone: %v", err)
	}
	if _, err := os.Stat(data); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the data directory was made again: %v", err)
	}
	// A store of its own (build -o DIR/) makes what it needs.
	if err := New(filepath.Join(data, "maps")).Write(rel, []byte("three")); err != nil {
		t.Fatalf("a store not Within: %v", err)
	}
}

// List reads the store as filepath.WalkDir would (every .json.gz file not
// hidden, in lexical order, no link followed, the root's included), and
// ListNamed keeps of it the names it is asked for.
func TestListIsTheWalkOfTheStore(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symbolic links")
	}
	dir := t.TempDir()
	root := filepath.Join(dir, "maps")
	for _, rel := range []string{
		"claude/2026/05/b.json.gz", "claude/2026/05/a.json.gz", "claude/2026/05/.a.json.gz.tmp-1", "claude/2026/05/.c.json.gz",
		"claude/2026/04/z.json.gz", "claude/2026/05/notes.txt", "codex/2026/05/a.json.gz", "codex/x.json.gz", "top.json.gz",
		"claude/2026/05/sub/deeper.json.gz", "elsewhere/e.json.gz",
	} {
		p := filepath.Join(root, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(dir, "outside"), 0o700)
	os.WriteFile(filepath.Join(dir, "outside", "o.json.gz"), []byte("x"), 0o600)
	os.Symlink(filepath.Join(dir, "outside"), filepath.Join(root, "linkdir"))
	os.Symlink(filepath.Join(dir, "outside", "o.json.gz"), filepath.Join(root, "codex", "l.json.gz"))
	walk := func(root string) []string {
		var out []string
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(d.Name(), ".json.gz") && !strings.HasPrefix(d.Name(), ".") {
				rel, _ := filepath.Rel(root, p)
				out = append(out, rel)
			}
			return nil
		})
		return out
	}
	got, err := New(root).List()
	if want := walk(root); err != nil || !slices.Equal(got, want) || len(want) != 9 {
		t.Errorf("List: %v %v, the walk: %v", got, err, want)
	}
	got, err = New(root).ListNamed(func(name string) bool { return strings.HasPrefix(name, "a") })
	if want := []string{filepath.FromSlash("claude/2026/05/a.json.gz"), filepath.FromSlash("codex/2026/05/a.json.gz")}; err != nil || !slices.Equal(got, want) {
		t.Errorf("ListNamed: %v %v, want %v", got, err, want)
	}
	// A root that is a link is not followed; one that is not there lists nothing.
	os.Symlink(root, filepath.Join(dir, "rootlink"))
	for _, r := range []string{filepath.Join(dir, "rootlink"), filepath.Join(dir, "none")} {
		if got, err := New(r).List(); err != nil || len(got) != 0 || len(walk(r)) != 0 {
			t.Errorf("%s: %v %v", r, got, err)
		}
	}
}
