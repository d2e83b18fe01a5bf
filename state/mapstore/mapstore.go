// Package mapstore keeps the session maps on disk: one gzipped map per
// session at <root>/<agent>/<yyyy>/<mm>/<native id>.json.gz, written
// atomically so that a reader never sees half a map.
package mapstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Store is a map directory.
type Store struct {
	Root string
}

// New returns the store rooted at dir (created on first write).
func New(dir string) *Store { return &Store{Root: dir} }

// RelPath is where a session's map lives, relative to the store root:
// agent/yyyy/mm/<id>.json.gz, yyyy/mm of the session start in UTC.
func RelPath(agent, nativeID string, start time.Time) string {
	start = start.UTC()
	return filepath.Join(safe(agent), fmt.Sprintf("%04d", start.Year()), fmt.Sprintf("%02d", int(start.Month())),
		safe(nativeID)+".json.gz")
}

// safe keeps an id usable as one path element on every OS.
func safe(id string) string {
	if id == "" || id == "." || id == ".." {
		return "session"
	}
	return strings.Map(func(r rune) rune {
		if r == '/' || r == '\\' || r == ':' || r < 32 {
			return '_'
		}
		return r
	}, id)
}

// Write stores data at rel (relative to the root): temporary file in the
// target directory, write, fsync, close, rename over the target, fsync the
// directory. Files are 0600 and directories 0700.
func (s *Store) Write(rel string, data []byte) error {
	target := filepath.Join(s.Root, rel)
	dir := filepath.Dir(target)
	if err := mkdirAll(dir); err != nil {
		return fmt.Errorf("write map %s: %w", rel, err)
	}
	return WriteFile(target, data)
}

// WriteFile writes one file durably and atomically (0600).
func WriteFile(target string, data []byte) error {
	dir := filepath.Dir(target)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(target)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", target, err)
	}
	name := tmp.Name()
	fail := func(err error) error {
		tmp.Close()
		os.Remove(name)
		return fmt.Errorf("write %s: %w", target, err)
	}
	if err := tmp.Chmod(0o600); err != nil && !errors.Is(err, errors.ErrUnsupported) {
		return fail(err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fail(err)
	}
	if err := tmp.Sync(); err != nil {
		return fail(err)
	}
	if err := tmp.Close(); err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", target, err)
	}
	if err := os.Rename(name, target); err != nil {
		os.Remove(name)
		return fmt.Errorf("write %s: %w", target, err)
	}
	return syncDir(dir)
}

// mkdirAll creates missing directories 0700 (MkdirAll would apply the
// umask to a wider mode; the store is private).
func mkdirAll(dir string) error {
	if fi, err := os.Stat(dir); err == nil {
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory", dir)
		}
		return nil
	}
	if parent := filepath.Dir(dir); parent != dir {
		if err := mkdirAll(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	return os.Chmod(dir, 0o700)
}

// Read returns the stored map at rel.
func (s *Store) Read(rel string) ([]byte, error) {
	return os.ReadFile(filepath.Join(s.Root, rel))
}

// Remove deletes the map at rel; a missing one is not an error.
func (s *Store) Remove(rel string) error {
	err := os.Remove(filepath.Join(s.Root, rel))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// List returns the relative paths of every map in the store, sorted.
func (s *Store) List() ([]string, error) {
	var out []string
	err := filepath.WalkDir(s.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() && strings.HasSuffix(d.Name(), ".json.gz") && !strings.HasPrefix(d.Name(), ".") {
			rel, _ := filepath.Rel(s.Root, p)
			out = append(out, rel)
		}
		return nil
	})
	return out, err
}
