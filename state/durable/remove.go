package durable

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// RemoveFiles deletes files for good: each removed (a missing one is no
// error), then each directory they were in synced once, so that a crash
// after RemoveFiles returns cannot bring one back. What must be gone
// before a record of it is dropped (an excluded session's map) is removed
// so. errs[i] is the error of paths[i]; a directory that cannot be synced
// fails every file removed from it.
func RemoveFiles(paths []string) (errs []error) {
	errs = make([]error, len(paths))
	dirs := map[string][]int{}
	for i, p := range paths {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs[i] = err
			continue
		}
		dir := filepath.Dir(p)
		dirs[dir] = append(dirs[dir], i)
	}
	for dir, at := range dirs {
		if err := syncDir(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			for _, i := range at {
				errs[i] = err
			}
		}
	}
	return errs
}
