//go:build linux

package state

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/agentmap/agentmap/internal/fulldisk"
)

// fullDisk mounts a tmpfs of 1 MiB and fills it but for free bytes.
func fullDisk(t *testing.T, free int) (dir, filler string) {
	t.Helper()
	dir = fulldisk.Mount(t, "1m")
	filler = fulldisk.Fill(t, dir)
	fi, err := os.Stat(filler)
	if err != nil {
		t.Fatal(err)
	}
	// Room made again, as free as asked.
	if err := os.Truncate(filler, max(0, fi.Size()-int64(free))); err != nil {
		t.Fatal(err)
	}
	return dir, filler
}

// A first open that fails on a full disk (bbolt's first pages written in
// part, or not at all, or the first commit) removes the file it made: the
// next open starts clean, with nothing to report as damage.
func TestFailedFirstOpenRemovesItsFile(t *testing.T) {
	failed := 0
	for _, free := range []int{0, 4096, 8192, 12288, 16384, 20480} {
		dir, filler := fullDisk(t, free)
		path := filepath.Join(dir, "state.db")
		d, err := Open(path, nil)
		if err == nil {
			d.Close() // room enough: nothing to test at this size
			continue
		}
		failed++
		if !errors.Is(err, syscall.ENOSPC) {
			t.Errorf("%d bytes free: %v, want no space", free, err)
		}
		if fi, err := os.Lstat(path); err == nil {
			t.Errorf("%d bytes free: a failed first open left %s (%d bytes)", free, path, fi.Size())
		}
		os.Remove(filler)
		d, err = Open(path, nil)
		if err != nil {
			t.Fatalf("%d bytes free, then room: %v", free, err)
		}
		if rep := d.Repaired(); rep.Happened() || rep.Reason != "" {
			t.Errorf("%d bytes free, then room: a repair reported: %+v", free, rep)
		}
		d.Close()
		if m, _ := filepath.Glob(path + ".corrupt-*"); len(m) > 0 {
			t.Errorf("%d bytes free, then room: moved aside %v", free, m)
		}
	}
	if failed == 0 {
		t.Fatal("no open failed on the full disks: the test tests nothing")
	}
	// A file that was there is never removed, not even an empty one.
	dir, _ := fullDisk(t, 0)
	path := filepath.Join(dir, "state.db")
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if d, err := Open(path, nil); err == nil {
		d.Close()
		t.Fatal("an open on a full disk succeeded")
	}
	if _, err := os.Lstat(path); err != nil {
		t.Errorf("a failed open removed the file that was there: %v", err)
	}
}
