//go:build unix

package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/agentmap/agentmap/state"
)

// LockName is the file a daemon or a scan holds locked while it uses a
// data directory.
const LockName = "agentmap.lock"

// lockDataDir takes the data directory for this process alone. The state
// database has a lock of its own, but that one goes with the file: with
// state.db removed under a running daemon, a second one would start and
// both would write maps and exports until the first noticed (see
// watchStateFile). This file is never removed, so its lock stays held for
// as long as the process runs. unlock releases it.
func lockDataDir(dir string) (unlock func(), err error) {
	path := filepath.Join(dir, LockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock the data directory: %w", err)
	}
	// Waited for as the state database's lock is (state.OpenTimeout): a
	// process that is just ending lets go of it a moment later.
	deadline := time.Now().Add(state.OpenTimeout)
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock the data directory: %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			f.Close()
			return nil, fmt.Errorf("%w (%s is locked)", state.ErrLocked, path)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Held reports whether a daemon or a scan holds dir's lock now: a look,
// without waiting. A command that finds no control socket answering asks
// it before it takes the data directory itself.
func Held(dir string) bool {
	f, err := os.Open(filepath.Join(dir, LockName))
	if err != nil {
		return false
	}
	defer f.Close()
	err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if err == nil {
		syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		return false
	}
	return errors.Is(err, syscall.EWOULDBLOCK)
}
