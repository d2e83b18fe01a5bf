// Package durable is agentmap's one way of writing a file that must never
// be seen half-written and must survive a crash once written: a temporary
// file in the target's directory, written, synced, closed, renamed over the
// target, and the directory synced. Maps, exports, the service files and the
// config file all go through it. A file the user names as a command's
// output goes through CreateOutput, which writes where the name leads: the
// file at the end of a symbolic link, or a device or a FIFO written
// through.
package durable

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// File is a temporary file that replaces its target on Commit, or, from
// CreateOutput, a device or a FIFO written through (direct).
type File struct {
	target string
	named  string // the name the errors give, when not target (CreateOutput)
	tmp    *os.File
	direct bool
	done   bool
}

// Create starts a durable write of target with the given permissions.
// Missing parent directories are created 0700.
func Create(target string, perm fs.FileMode) (*File, error) {
	dir := filepath.Dir(target)
	if err := MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("write %s: %w", target, err)
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", target, err)
	}
	f := &File{target: target, tmp: tmp}
	if err := tmp.Chmod(perm); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		f.Abort()
		return nil, fmt.Errorf("write %s: %w", target, err)
	}
	return f, nil
}

// Write implements io.Writer. Its errors name the target, not the
// temporary file, which is gone by the time they are read.
func (f *File) Write(p []byte) (int, error) {
	n, err := f.tmp.Write(p)
	if pe, ok := err.(*fs.PathError); ok {
		err = &fs.PathError{Op: pe.Op, Path: f.name(), Err: pe.Err}
	}
	return n, err
}

// name is the target as the errors name it.
func (f *File) name() string {
	if f.named != "" {
		return f.named
	}
	return f.target
}

// Commit syncs the data, renames it over the target and syncs the
// directory. After an error the target is unchanged. A file written
// through (CreateOutput) is only closed.
func (f *File) Commit() error {
	if f.done {
		return fmt.Errorf("write %s: already committed or aborted", f.name())
	}
	f.done = true
	if f.direct {
		if err := f.tmp.Close(); err != nil {
			return fmt.Errorf("write %s: %w", f.name(), err)
		}
		return nil
	}
	name := f.tmp.Name()
	if err := f.tmp.Sync(); err != nil {
		f.tmp.Close()
		os.Remove(name)
		return fmt.Errorf("write %s: %w", f.name(), err)
	}
	if err := f.tmp.Close(); err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", f.name(), err)
	}
	if err := os.Rename(name, f.target); err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", f.name(), err)
	}
	return syncDir(filepath.Dir(f.target))
}

// Abort drops the temporary file; the target is unchanged. It is a no-op
// after Commit, so `defer f.Abort()` is safe. A file written through is
// closed, with what was written to it.
func (f *File) Abort() {
	if f.done {
		return
	}
	f.done = true
	f.tmp.Close()
	if !f.direct {
		os.Remove(f.tmp.Name())
	}
}

// WriteFile writes data to target durably and atomically.
func WriteFile(target string, data []byte, perm fs.FileMode) error {
	f, err := Create(target, perm)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", target, err)
	}
	return f.Commit()
}

// MkdirAll creates missing directories 0700 (os.MkdirAll would apply the
// umask to a wider mode; everything agentmap writes is private). Existing
// directories are left as they are.
func MkdirAll(dir string) error {
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory", dir)
		}
		return nil
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := MkdirAll(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return os.Chmod(dir, 0o700)
}
