package daemon

import (
	"hash/crc32"
	"log/slog"
	"path/filepath"
	"testing"
	"unsafe"

	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
)

// keysHashAlike is set while the retire tests run with a hash that makes
// most session keys collide: their counts of sessions let go of and read
// back then differ, their maps and records must not.
var keysHashAlike bool

// has reports whether a session with key's hash is retired (exact while
// no two keys share a hash).
func (r *retiredSet) has(key string) bool {
	_, _, ok := r.lookup(key)
	return ok
}

// With three hashes for every key, most sessions written early or quiet on
// load find their hash taken and stay in memory, and sessions met later
// look up a retired session that is another's: the catch-ups must end
// with the same maps and records as when every key hashes apart.
func TestRetiredSessionsWhoseKeysHashAlike(t *testing.T) {
	defer func(h func(string) uint64) { retiredKeyHash, keysHashAlike = h, false }(retiredKeyHash)
	retiredKeyHash = func(key string) uint64 { return uint64(crc32.ChecksumIEEE([]byte(key)) % 3) }
	keysHashAlike = true
	t.Run("written early", TestHeldEventsMakeTheMapsOfReadBack)
	t.Run("quiet on load", TestQuietSessionsAreLetGoOfOnLoad)
	t.Run("renamed", TestRetiredLogRenamedDuringTheScanIsFollowed)
}

// pathsHashAlike is set while the quiet-load tests run with a hash that
// makes most paths collide.
var pathsHashAlike bool

// With two hashes for every path, the walk after a quiet load finds most
// logs it meets sharing a hash with quiet logs of other paths: it reads
// their sessions back, and must still leave out only the logs found as
// they were and end with the same maps and records. The one thing a
// shared hash can do is leave out, once, a quiet log moved after the load
// to a path whose hash is its old one's (the same file, size and time):
// the next scan, which finds its old path gone, follows it. With 64-bit
// hashes that takes a collision between two given paths; two hashes for
// all make it likely, so these runs move no log after the load.
func TestQuietLogsWhosePathsHashAlike(t *testing.T) {
	defer func(h func(string) uint64) { quietPathHash, pathsHashAlike = h, false }(quietPathHash)
	quietPathHash = func(path string) uint64 { return uint64(crc32.ChecksumIEEE([]byte(path)) % 2) }
	pathsHashAlike = true
	t.Run("quiet on load", TestQuietSessionsAreLetGoOfOnLoad)
	t.Run("changed after the load", TestQuietLogsChangedAfterTheLoad)
	t.Run("deleted after the load", TestQuietLogDeletedAfterTheLoad)
}

func TestRetiredSetRefusesATakenHash(t *testing.T) {
	defer func(h func(string) uint64) { retiredKeyHash = h }(retiredKeyHash)
	retiredKeyHash = func(key string) uint64 { return uint64(len(key)) }
	var r retiredSet
	a, b := watchers.FileID{Dev: 1, Ino: 1}, watchers.FileID{Dev: 1, Ino: 2}
	if !r.add("claude/a", []uint64{1, 2}, []watchers.FileID{a}, true) {
		t.Fatal("first session refused")
	}
	if r.add("claude/b", []uint64{3}, []watchers.FileID{b}, true) {
		t.Error("a second session of the same hash was retired")
	}
	if r.len() != 1 || r.counted != 1 {
		t.Errorf("len %d, counted %d; want 1, 1", r.len(), r.counted)
	}
	if _, ids, ok := r.byFile(b); ok {
		t.Errorf("the refused session's log is known: %v", ids)
	}
	h, ids, ok := r.byFile(a)
	if !ok || len(ids) != 2 || ids[0] != 1 || ids[1] != 2 {
		t.Fatalf("by file: %v %v", ids, ok)
	}
	r.remove(h, []watchers.FileID{a}, nil)
	if r.len() != 0 || r.counted != 0 || len(r.files) != 0 {
		t.Errorf("after remove: len %d, counted %d, files %d", r.len(), r.counted, len(r.files))
	}
	if !r.add("claude/b", []uint64{3}, []watchers.FileID{b}, false) {
		t.Error("the hash, free again, was refused")
	}
}

// A retired session whose records cannot be read back is tried once: it
// goes on as a session never seen, counted as a failure (the scan ends
// with an error), and asking for it again reads nothing more.
func TestRetiredSessionNotReadBackIsTriedOnce(t *testing.T) {
	data := t.TempDir()
	db, err := state.Open(filepath.Join(data, "state.db"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	d := New(Options{DataDir: data, Once: true, Logger: slog.New(slog.DiscardHandler)})
	d.db = db
	lost, moved := watchers.FileID{Dev: 7, Ino: 1}, watchers.FileID{Dev: 7, Ino: 2}
	d.retired.add("claude/lost", []uint64{41}, []watchers.FileID{lost}, true) // no such records
	d.retired.add("claude/moved", []uint64{42}, []watchers.FileID{moved}, true)
	for range 2 {
		if s := d.session("claude/lost", "claude"); s == nil || s.Flush != nil {
			t.Fatalf("session: %+v", s)
		}
		d.restoreFile(moved)
	}
	if d.restoreFailed != 2 || d.restored != 0 {
		t.Errorf("%d failures, %d read back; want 2, 0", d.restoreFailed, d.restored)
	}
	if d.retired.len() != 0 || d.retired.counted != 0 {
		t.Errorf("still retired: %d (%d counted)", d.retired.len(), d.retired.counted)
	}
}

// A ref is kept for every retired session, in scan too: it stays 16 bytes,
// its map slot 24.
func TestRetiredRefStaysSmall(t *testing.T) {
	if n := unsafe.Sizeof(retiredRef{}); n > 16 {
		t.Errorf("retiredRef is %d bytes, want at most 16", n)
	}
}
