package durable

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
)

// Pending is one file of a batch write.
type Pending struct {
	Target string
	Data   []byte
	// Replaces says the target is expected to exist (a map written
	// before): the cheapest way to write the file differs (see
	// tempfile_linux.go). A wrong guess costs a little, either way.
	Replaces bool
}

// WriteFiles writes several files durably and atomically, each as
// WriteFile would, but with the syncs shared: every temporary file is
// written first, their data is synced together (one filesystem sync where
// the OS has one, else one fsync per file), then each is renamed over its
// target and each directory involved is synced once. A catch-up writing
// thousands of maps then waits for a few syncs per batch, not two per map.
// The result holds one error per file (nil when it was written); a file
// that failed leaves its target unchanged.
//
// A batch is also where a map's other system calls are counted: each
// directory is checked (and made) once per batch, not once per file, and
// on Linux a temporary file is a bare descriptor, unnamed where the
// filesystem allows and linked in place of the rename (tempfile_linux.go),
// so that a new map costs its create, write, link and close, and a share
// of the syncs.
func WriteFiles(files []Pending, perm fs.FileMode) []error {
	errs := make([]error, len(files))
	tmps := make([]*tempFile, len(files))
	byDir := map[string]*batchDir{}
	var dirs []*batchDir // in order of first use
	for i, p := range files {
		dir := filepath.Dir(p.Target)
		d := byDir[dir]
		if d == nil {
			d = &batchDir{path: dir, err: MkdirAll(dir)}
			byDir[dir] = d
			dirs = append(dirs, d)
		}
		if d.err != nil {
			errs[i] = fmt.Errorf("write %s: %w", p.Target, d.err)
			continue
		}
		t, err := createTemp(dir, filepath.Base(p.Target), perm, p.Replaces)
		if err != nil {
			errs[i] = writeError(p.Target, err)
			continue
		}
		if err := t.write(p.Data); err != nil {
			t.discard()
			errs[i] = writeError(p.Target, err)
			continue
		}
		tmps[i] = t
		d.tmps = append(d.tmps, t)
	}
	synced := syncMany(dirs)
	for i, t := range tmps {
		if t == nil {
			continue
		}
		target := files[i].Target
		err := synced[t]
		if err == nil {
			err = t.place(target)
		} else {
			t.discard()
		}
		if err != nil {
			errs[i] = writeError(target, err)
			continue
		}
		d := byDir[filepath.Dir(target)]
		d.renamed = append(d.renamed, i)
	}
	for _, d := range dirs {
		if len(d.renamed) == 0 {
			continue
		}
		if err := syncDir(d.path); err != nil {
			for _, i := range d.renamed {
				errs[i] = err
			}
		}
	}
	return errs
}

// batchDir is one directory of a batch: whether it could be made, the
// temporary files written in it, and the files renamed into place there
// (by index; the directory is synced when there is one).
type batchDir struct {
	path    string
	err     error
	tmps    []*tempFile
	renamed []int
}

// writeError names the target of a failed write once: the temporary
// file's errors name it too when it is unnamed (O_TMPFILE), and "write P:
// write P: no space left on device" said the path twice.
func writeError(target string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Path == target {
		if pe.Op == "write" {
			return fmt.Errorf("write %s: %w", target, pe.Err)
		}
		return fmt.Errorf("write %s: %s: %w", target, pe.Op, pe.Err)
	}
	return fmt.Errorf("write %s: %w", target, err)
}

// fsyncEach is the portable syncMany: one fsync per file.
func fsyncEach(tmps []*tempFile, out map[*tempFile]error) {
	for _, t := range tmps {
		if err := t.sync(); err != nil {
			out[t] = err
		}
	}
}
