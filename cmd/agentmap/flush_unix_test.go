//go:build unix

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/state"
)

// A data directory held by agentmap with no control socket answering (a
// scan, or a daemon that could not serve its socket) is not taken for one
// nobody runs on: flush says what runs there and what to do, instead of
// "no daemon is running" followed by "already running".
func TestFlushOfADataDirectoryHeldWithoutASocket(t *testing.T) {
	home := purgeHome(t)
	data := filepath.Join(home, "data")
	f := heldDataDir(t, data)
	if !daemon.Held(data) {
		t.Fatal("Held: false with the lock held")
	}
	for _, args := range [][]string{{"flush", "--all"}, {"flush", "abc"}, {"flush", "--all", "--rewrite"}} {
		code, stdout, stderr := run(t, append(args, "--data-dir", data)...)
		if code != exitFailure || stdout != "" || !strings.Contains(stderr, "agentmap is running on "+data+" without a control socket that answers") ||
			strings.Contains(stderr, "no daemon is running") {
			t.Errorf("%q: exit %d, stdout %q, stderr %q", args, code, stdout, stderr)
		}
	}
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	if daemon.Held(data) {
		t.Fatal("Held: true with the lock let go of")
	}
}

// status and a second scan say what flush says of a data directory held
// without a socket answering, and status reads what it can: the state is
// locked by the process that holds it, so the last flush is unknown, not
// "never", and the newest map in the store is told.
func TestStatusAndScanOfADataDirectoryHeldWithoutASocket(t *testing.T) {
	home := purgeHome(t)
	data := filepath.Join(home, "data")
	heldDataDir(t, data)
	db, err := state.Open(daemon.StatePath(data), nil) // locked, as a scan holds it
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const held = "without a control socket that answers (a scan, a daemon still starting, or one that could not serve it: see its log)"
	code, stdout, stderr := run(t, "status", "--no-service", "--data-dir", data)
	if code != exitOK || !strings.Contains(stdout, "daemon:     running "+held+"; reading the map store only") ||
		!strings.Contains(stdout, "last flush: unknown while a scan or a daemon without a socket holds the state\n") {
		t.Errorf("status with no map: exit %d\n%s%s", code, stdout, stderr)
	}
	written := time.Date(2026, 5, 1, 12, 0, 0, 0, time.Local)
	m := filepath.Join(daemon.MapsDir(data), "claude", "2026", "05", "abc.json.gz")
	os.MkdirAll(filepath.Dir(m), 0o700)
	if err := os.WriteFile(m, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	os.Chtimes(m, written, written)
	code, stdout, stderr = run(t, "status", "--no-service", "--data-dir", data)
	if want := "; the newest map in the store was written at " + formatTime(written); code != exitOK || !strings.Contains(stdout, want) {
		t.Errorf("status with a map: exit %d, want %q\n%s%s", code, want, stdout, stderr)
	}
	code, stdout, stderr = run(t, "scan", "--data-dir", data)
	if want := "agentmap scan: agentmap is running on " + data + " " + held + "; wait for the scan to end or the daemon to start, or restart the service (agentmap restart), and scan again"; code != exitFailure || !strings.Contains(stderr, want) {
		t.Errorf("a second scan: exit %d, want %q\n%s%s", code, want, stdout, stderr)
	}
}
