package mapstore

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

var (
	may  = time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	june = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
)

// linkedStore is a store with one map written in May, whose directory at
// level (the agent's, the year's or the month's) is then moved out of the
// store and a symbolic link left in its place: as a user would put part
// of the store on another disk. It returns the store and the directory
// outside.
func linkedStore(t *testing.T, level int) (*Store, string) {
	t.Helper()
	base := t.TempDir()
	s := New(filepath.Join(base, "data", "maps"))
	if err := s.Write(RelPath("claude", "old", may), []byte("old map")); err != nil {
		t.Fatal(err)
	}
	inside := filepath.Join(append([]string{s.Root}, strings.Split(filepath.Dir(RelPath("claude", "old", may)), string(filepath.Separator))[:level+1]...)...)
	outside := filepath.Join(base, "outside")
	if err := os.Rename(inside, outside); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, inside); err != nil {
		t.Skipf("cannot make a symbolic link here: %v", err)
	}
	return s, outside
}

// tree returns every file under dir with its content, links as "-> target".
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			to, _ := os.Readlink(p)
			out[rel] = "-> " + to
		case d.Type().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[rel] = string(b)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func wantLinkError(t *testing.T, what string, err error) {
	t.Helper()
	if err == nil || !strings.Contains(err.Error(), "is a symbolic link") || !strings.Contains(err.Error(), "remove the link") {
		t.Errorf("%s: %v; want an error naming the link and saying to remove it", what, err)
	}
}

// A map is never written through a symbolic link in the store, whether
// the link is the agent's directory, a year's or a month's: the write
// fails naming the link, nothing is written where it leads, and the other
// maps of the batch are written.
func TestWriteThroughALinkIsRefused(t *testing.T) {
	for level, name := range []string{"agent", "year", "month"} {
		t.Run(name, func(t *testing.T) {
			s, outside := linkedStore(t, level)
			before := tree(t, outside)
			items := []Item{
				{Rel: RelPath("claude", "new", may), Data: []byte("new map")},
				{Rel: RelPath("claude", "old", may), Data: []byte("old map, again"), Replaces: true},
				{Rel: RelPath("codex", "other", june), Data: []byte("other map")},
			}
			errs := s.WriteMany(items)
			wantLinkError(t, "WriteMany of a new map", errs[0])
			wantLinkError(t, "WriteMany of a map that replaces", errs[1])
			if errs[2] != nil {
				t.Errorf("a map of the same batch outside the link: %v", errs[2])
			}
			wantLinkError(t, "Write", s.Write(RelPath("claude", "new2", may), []byte("new map")))
			if after := tree(t, outside); !maps.Equal(before, after) {
				t.Errorf("written through the link: %v, was %v", after, before)
			}
		})
	}
}

// A map behind a symbolic link in the store is not removed, one at a time
// or in a batch, and a session's maps are not looked for through one.
func TestRemoveThroughALinkIsRefused(t *testing.T) {
	for level, name := range []string{"agent", "year", "month"} {
		t.Run(name, func(t *testing.T) {
			s, outside := linkedStore(t, level)
			before := tree(t, outside)
			rel := RelPath("claude", "old", may)
			wantLinkError(t, "Remove", s.Remove(rel))
			errs := s.RemoveMany([]string{rel, RelPath("claude", "gone", june)})
			wantLinkError(t, "RemoveMany", errs[0])
			if level == 2 && errs[1] != nil {
				t.Errorf("RemoveMany of a missing map in a month of no link: %v", errs[1])
			}
			_, err := s.MapsOf("claude", "old")
			wantLinkError(t, "MapsOf", err)
			if after := tree(t, outside); !maps.Equal(before, after) {
				t.Errorf("removed through the link: %v, was %v", after, before)
			}
		})
	}
}

// The sweep of interrupted writes removes the store's own temporary files
// and nothing through a symbolic link: not in a directory a link leads to,
// not what a link named like a temporary file leads to.
func TestSweepRemovesNothingThroughALink(t *testing.T) {
	for level, name := range []string{"agent", "year", "month"} {
		t.Run(name, func(t *testing.T) {
			s, outside := linkedStore(t, level)
			if err := os.WriteFile(filepath.Join(outside, ".x.json.gz.tmp-123"), []byte("not the store's"), 0o600); err != nil {
				t.Fatal(err)
			}
			elsewhere := filepath.Join(filepath.Dir(outside), "elsewhere")
			if err := os.WriteFile(elsewhere, []byte("not the store's either"), 0o600); err != nil {
				t.Fatal(err)
			}
			month := filepath.Dir(filepath.Join(s.Root, RelPath("codex", "x", june)))
			if err := os.MkdirAll(month, 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(elsewhere, filepath.Join(month, ".y.json.gz.tmp-456")); err != nil {
				t.Fatal(err)
			}
			orphan := filepath.Join(month, ".z.json.gz.tmp-789")
			if err := os.WriteFile(orphan, []byte("interrupted"), 0o600); err != nil {
				t.Fatal(err)
			}
			before := tree(t, filepath.Dir(outside))
			n, err := s.RemoveOrphans()
			if err != nil || n != 1 {
				t.Fatalf("RemoveOrphans = %d, %v; want the one orphan of the store", n, err)
			}
			if _, err := os.Lstat(orphan); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("the store's orphan is still there: %v", err)
			}
			after := tree(t, filepath.Dir(outside))
			for p, content := range before {
				if strings.HasPrefix(p, "data") {
					continue
				}
				if after[p] != content {
					t.Errorf("%s changed: %q, was %q", p, after[p], content)
				}
			}
		})
	}
}

// The store's root may not be a symbolic link either (the data directory
// above it may: the user's link to another disk).
func TestRootLinkIsRefusedDataDirLinkIsNot(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	if err := os.MkdirAll(filepath.Join(real, "maps"), 0o700); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(base, "data")
	if err := os.Symlink(real, data); err != nil {
		t.Skipf("cannot make a symbolic link here: %v", err)
	}
	s := New(filepath.Join(data, "maps"))
	rel := RelPath("claude", "a", may)
	if err := s.Write(rel, []byte("m")); err != nil {
		t.Fatalf("write under a linked data directory: %v", err)
	}
	if list, err := s.List(); err != nil || len(list) != 1 {
		t.Fatalf("List = %v, %v", list, err)
	}

	other := filepath.Join(base, "other")
	if err := os.Mkdir(other, 0o700); err != nil {
		t.Fatal(err)
	}
	linked := New(filepath.Join(base, "linkedmaps"))
	if err := os.Symlink(other, linked.Root); err != nil {
		t.Fatal(err)
	}
	wantLinkError(t, "Write", linked.Write(rel, []byte("m")))
	_, err := linked.RemoveOrphans()
	wantLinkError(t, "RemoveOrphans", err)
	if entries, _ := os.ReadDir(other); len(entries) != 0 {
		t.Errorf("written through the linked root: %v", entries)
	}
}

// A directory of the store that others may write to is refused as the
// data directory's entries are: whoever can write in it could put a link
// there between the check and the write.
func TestDirectoryWritableByOthersIsRefused(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no permission bits")
	}
	s := New(t.TempDir())
	rel := RelPath("claude", "a", may)
	if err := s.Write(rel, []byte("m")); err != nil {
		t.Fatal(err)
	}
	year := filepath.Dir(filepath.Dir(filepath.Join(s.Root, rel)))
	if err := os.Chmod(year, 0o777); err != nil {
		t.Fatal(err)
	}
	err := s.Write(RelPath("claude", "b", may), []byte("m"))
	if err == nil || !strings.Contains(err.Error(), year) || !strings.Contains(err.Error(), "chmod go-w") {
		t.Fatalf("write under a directory others may write to: %v", err)
	}
	os.Chmod(year, 0o700)
	if err := s.Write(RelPath("claude", "b", may), []byte("m")); err != nil {
		t.Fatalf("after chmod: %v", err)
	}
}

// A path that leaves the store is refused whatever it names.
func TestPathOutsideTheStoreIsRefused(t *testing.T) {
	base := t.TempDir()
	s := New(filepath.Join(base, "maps"))
	victim := filepath.Join(base, "victim.json.gz")
	if err := os.WriteFile(victim, []byte("v"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := s.Remove(filepath.Join("..", "victim.json.gz")); err == nil {
		t.Error("Remove of ../victim.json.gz accepted")
	}
	if errs := s.WriteMany([]Item{{Rel: filepath.Join("..", "x", "y.json.gz"), Data: []byte("m")}}); errs[0] == nil {
		t.Error("WriteMany of ../x/y.json.gz accepted")
	}
	if _, err := os.Stat(victim); err != nil {
		t.Errorf("removed outside the store: %v", err)
	}
	if _, err := os.Lstat(filepath.Join(base, "x")); err == nil {
		t.Error("wrote outside the store")
	}
}
