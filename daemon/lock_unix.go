//go:build unix

package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
			// The holder's pid, for the message of the next process that
			// finds the directory locked (nothing else reads it; a disk
			// too full to take it leaves the message without it).
			if f.Truncate(0) == nil {
				f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
			}
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock the data directory: %s: %w", path, err)
		}
		if time.Now().After(deadline) {
			holder := holderOf(f)
			f.Close()
			return nil, fmt.Errorf("%w (%s is locked%s)", state.ErrLocked, path, holder)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// holderOf names the process the lock file says holds it (", by process
// N"), or nothing: a file written before the pid was kept, or naming a
// process that no longer runs (a holder that did not write it).
func holderOf(f *os.File) string {
	var b [32]byte
	n, _ := f.ReadAt(b[:], 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return ""
	}
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return ""
	}
	return ", by process " + strconv.Itoa(pid)
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
