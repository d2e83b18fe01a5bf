package durable

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Pending is one file of a batch write.
type Pending struct {
	Target string
	Data   []byte
}

// WriteFiles writes several files durably and atomically, each as
// WriteFile would, but with the syncs shared: every temporary file is
// written first, their data is synced together (one filesystem sync where
// the OS has one, else one fsync per file), then each is renamed over its
// target and each directory involved is synced once. A catch-up writing
// thousands of maps then waits for a few syncs per batch, not two per map.
// The result holds one error per file (nil when it was written); a file
// that failed leaves its target unchanged.
func WriteFiles(files []Pending, perm fs.FileMode) []error {
	errs := make([]error, len(files))
	tmps := make([]*File, len(files))
	var open []*os.File
	for i, p := range files {
		f, err := Create(p.Target, perm)
		if err != nil {
			errs[i] = err
			continue
		}
		if _, err := f.Write(p.Data); err != nil {
			f.Abort()
			errs[i] = fmt.Errorf("write %s: %w", p.Target, err)
			continue
		}
		tmps[i] = f
		open = append(open, f.tmp)
	}
	synced := syncMany(open)
	dirs := map[string][]int{}
	for i, f := range tmps {
		if f == nil {
			continue
		}
		f.done = true
		name := f.tmp.Name()
		err := synced[f.tmp]
		if err == nil {
			err = f.tmp.Close()
		} else {
			f.tmp.Close()
		}
		if err == nil {
			err = os.Rename(name, f.target)
		}
		if err != nil {
			os.Remove(name)
			errs[i] = fmt.Errorf("write %s: %w", f.target, err)
			continue
		}
		dir := filepath.Dir(f.target)
		dirs[dir] = append(dirs[dir], i)
	}
	for dir, is := range dirs {
		if err := syncDir(dir); err != nil {
			for _, i := range is {
				errs[i] = err
			}
		}
	}
	return errs
}

// fsyncEach is the portable syncMany: one fsync per file.
func fsyncEach(fs []*os.File) map[*os.File]error {
	out := make(map[*os.File]error, len(fs))
	for _, f := range fs {
		if err := f.Sync(); err != nil {
			out[f] = err
		}
	}
	return out
}
