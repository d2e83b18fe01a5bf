// Package mapstore keeps the session maps on disk: one gzipped map per
// session at <root>/<agent>/<yyyy>/<mm>/<native id>.json.gz, written
// atomically so that a reader never sees half a map.
package mapstore

import (
	"errors"
	"fmt"
	"github.com/agentmap/agentmap/state/durable"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
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
		FileName(nativeID))
}

// FileName is the name of a session's map file: <native id>.json.gz, the
// id encoded as one path element by EncodeID. `agentmap build` names its
// files the same way.
func FileName(nativeID string) string { return EncodeID(nativeID) + ".json.gz" }

// EncodeID makes a session id one file name, reversibly (DecodeID), so
// that two ids never share a map file: a byte that cannot be in a name on
// some OS (/ \ : < > " | ? * and control bytes), a '%', and a leading
// '.' (a hidden file, or . and ..) are written %XX. The empty id is "%".
// An id of letters, digits, '-' and '_' (every real agent's) keeps its
// name, so stores written before the encoding keep their files; an id that
// is encoded now gets its new name at its next flush, which removes the
// old file.
func EncodeID(id string) string {
	if id == "" {
		return "%"
	}
	var b strings.Builder
	for i := 0; i < len(id); i++ {
		c := id[i]
		if c == '%' || c < 32 || c == 127 || strings.IndexByte(`/\:<>"|?*`, c) >= 0 || i == 0 && c == '.' {
			fmt.Fprintf(&b, "%%%02X", c)
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// DecodeID returns the id EncodeID encoded as name.
func DecodeID(name string) (string, error) {
	if name == "%" {
		return "", nil
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		if name[i] != '%' {
			b.WriteByte(name[i])
			continue
		}
		if i+3 > len(name) {
			return "", fmt.Errorf("map file name %q: %% not followed by two hex digits", name)
		}
		v, err := strconv.ParseUint(name[i+1:i+3], 16, 8)
		if err != nil {
			return "", fmt.Errorf("map file name %q: %% not followed by two hex digits", name)
		}
		b.WriteByte(byte(v))
		i += 2
	}
	return b.String(), nil
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
	if err := durable.MkdirAll(dir); err != nil {
		return fmt.Errorf("write map %s: %w", rel, err)
	}
	return WriteFile(target, data)
}

// Item is one map of a WriteMany.
type Item struct {
	Rel      string // relative to the root
	Data     []byte
	Replaces bool // a map is expected at Rel already (durable.Pending)
}

// WriteMany stores several maps as Write would each, sharing the syncs
// (durable.WriteFiles): one error per item, nil when it was written.
func (s *Store) WriteMany(items []Item) []error {
	errs := make([]error, len(items))
	var files []durable.Pending
	var at []int
	made := map[string]error{} // each directory is checked once a batch
	for i, it := range items {
		target := filepath.Join(s.Root, it.Rel)
		dir := filepath.Dir(target)
		err, seen := made[dir]
		if !seen {
			err = durable.MkdirAll(dir)
			made[dir] = err
		}
		if err != nil {
			errs[i] = fmt.Errorf("write map %s: %w", it.Rel, err)
			continue
		}
		files = append(files, durable.Pending{Target: target, Data: it.Data, Replaces: it.Replaces})
		at = append(at, i)
	}
	for j, err := range durable.WriteFiles(files, 0o600) {
		errs[at[j]] = err
	}
	return errs
}

// WriteFile writes one file durably and atomically (0600).
func WriteFile(target string, data []byte) error {
	return durable.WriteFile(target, data, 0o600)
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

// RemoveMany deletes the maps at rels for good (see durable.RemoveFiles):
// errs[i] is the error of rels[i].
func (s *Store) RemoveMany(rels []string) []error {
	paths := make([]string, len(rels))
	for i, rel := range rels {
		paths[i] = filepath.Join(s.Root, rel)
	}
	return durable.RemoveFiles(paths)
}

// MapsOf returns the relative paths of the maps in the store of one
// session, in whatever month they were filed: a look into each month's
// directory of the agent, not a walk of every map.
func (s *Store) MapsOf(agent, nativeID string) ([]string, error) {
	var out []string
	years, err := os.ReadDir(filepath.Join(s.Root, safe(agent)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	name := FileName(nativeID)
	for _, y := range years {
		if !y.IsDir() {
			continue
		}
		months, err := os.ReadDir(filepath.Join(s.Root, safe(agent), y.Name()))
		if err != nil {
			return nil, err
		}
		for _, m := range months {
			if !m.IsDir() {
				continue
			}
			rel := filepath.Join(safe(agent), y.Name(), m.Name(), name)
			if fi, err := os.Lstat(filepath.Join(s.Root, rel)); err == nil && fi.Mode().IsRegular() {
				out = append(out, rel)
			} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, err
			}
		}
	}
	return out, nil
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

// RemoveOrphans deletes the temporary files (".<name>.tmp-*") that writes
// interrupted by a crash left in the store, and returns how many. Only the
// daemon writes maps, and it calls this before it writes any.
func (s *Store) RemoveOrphans() (int, error) {
	n := 0
	err := filepath.WalkDir(s.Root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if name := d.Name(); d.Type().IsRegular() && strings.HasPrefix(name, ".") && strings.Contains(name, ".json.gz.tmp-") {
			if err := os.Remove(p); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	return n, err
}
