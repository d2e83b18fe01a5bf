//go:build !linux

package durable

import (
	"errors"
	"io/fs"
	"os"
)

// tempFile is a batch's temporary file where the OS's own sync is what
// os.File knows (F_FULLFSYNC on macOS, FlushFileBuffers on Windows).
type tempFile struct {
	f    *os.File
	name string
}

// createTemp creates a new private file ".<base>.tmp-<random>" in dir
// and sets perm exactly.
func createTemp(dir, base string, perm fs.FileMode, _ bool) (*tempFile, error) {
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(perm); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &tempFile{f: f, name: f.Name()}, nil
}

func (t *tempFile) write(p []byte) error { _, err := t.f.Write(p); return err }
func (t *tempFile) sync() error          { return t.f.Sync() }

// place closes the synced file and renames it over target; after an
// error it is gone and target is unchanged.
func (t *tempFile) place(target string) error {
	err := t.f.Close()
	if err == nil {
		err = os.Rename(t.name, target)
	}
	if err != nil {
		os.Remove(t.name)
	}
	return err
}

// discard drops the file.
func (t *tempFile) discard() {
	t.f.Close()
	os.Remove(t.name)
}
