//go:build unix

package daemon

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/state"
)

// TestLockedSaysWhichProcess: a data directory found locked is said to be
// held by the process that holds it, which wrote its pid in the lock file;
// a pid of no running process is not named.
func TestLockedSaysWhichProcess(t *testing.T) {
	dir := t.TempDir()
	unlock, err := lockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = lockDataDir(dir)
	if !errors.Is(err, state.ErrLocked) || !strings.Contains(err.Error(), "by process "+strconv.Itoa(os.Getpid())+")") {
		t.Errorf("a second lock: %v, want ErrLocked naming process %d", err, os.Getpid())
	}
	unlock()
	// A holder that wrote no pid (an older agentmap) over one that did,
	// since gone: nothing is named.
	release, err := lockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := os.WriteFile(filepath.Join(dir, LockName), []byte("2147483646\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err = lockDataDir(dir); !errors.Is(err, state.ErrLocked) || strings.Contains(err.Error(), "process") {
		t.Errorf("a lock whose file names a process that does not run: %v", err)
	}
}
