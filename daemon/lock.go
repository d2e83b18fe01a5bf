package daemon

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// InUse reports whether a process (a daemon, a scan) is using the data
// directory, by taking its lock for as long as the question and no
// longer: nil when none is, an error wrapping state.ErrLocked when one
// is. Removing a directory from under a daemon only has it stop and, run
// by a supervisor, start again and make the directory anew. A directory
// without the lock file has had no daemon, and the file is not made for
// the question.
func InUse(dir string) error {
	if _, err := os.Stat(filepath.Join(dir, LockName)); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	unlock, err := lockDataDir(dir)
	if err != nil {
		return err
	}
	unlock()
	return nil
}
