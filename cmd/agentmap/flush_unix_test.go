//go:build unix

package main

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/agentmap/agentmap/daemon"
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
