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
func createTemp(dir, base string, perm fs.FileMode) (*tempFile, error) {
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
func (t *tempFile) close() error         { return t.f.Close() }

func rename(from, to string) error { return os.Rename(from, to) }
