package daemon

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Hold takes the data directory's lock for the caller, so that no daemon
// or scan starts on the directory until release is called: an error
// wrapping state.ErrLocked when one is running on it. Removing a directory
// from under a daemon only has it stop and, run by a supervisor, start
// again and make the directory anew; holding the lock through the removal
// keeps one starting meanwhile from having its files removed. A directory
// without the lock file has had no daemon: nothing is held, and the file
// is not made for the question.
func Hold(dir string) (release func(), err error) {
	if _, err := os.Stat(filepath.Join(dir, LockName)); errors.Is(err, fs.ErrNotExist) {
		return func() {}, nil
	}
	return lockDataDir(dir)
}
