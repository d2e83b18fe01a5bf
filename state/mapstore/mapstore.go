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
	"strconv"
	"strings"
	"time"

	"github.com/agentmap/agentmap/state/datadir"
	"github.com/agentmap/agentmap/state/durable"
)

// Store is a map directory.
type Store struct {
	Root string
	// Within, when set, never makes the directory the root is in (a
	// daemon's data directory): a data directory removed under a running
	// daemon is not made again, without its marker, by the next map
	// write; the write fails, and the daemon's state check stops it.
	Within bool
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
	if err := s.dir(filepath.Dir(rel), true, map[string]error{}); err != nil {
		return fmt.Errorf("write map %s: %w", rel, err)
	}
	return WriteFile(filepath.Join(s.Root, rel), data)
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
	checked := map[string]error{} // each directory is checked once a batch
	for i, it := range items {
		if err := s.dir(filepath.Dir(it.Rel), true, checked); err != nil {
			errs[i] = fmt.Errorf("write map %s: %w", it.Rel, err)
			continue
		}
		files = append(files, durable.Pending{Target: filepath.Join(s.Root, it.Rel), Data: it.Data, Replaces: it.Replaces})
		at = append(at, i)
	}
	for j, err := range durable.WriteFiles(files, 0o600) {
		errs[at[j]] = err
	}
	return errs
}

// dir checks the store's directory rel (relative to the root, "." for the
// root) and each one above it up to the root, before a batch writes into
// it, lists it or removes from it: each must be a directory, not a symbolic
// link, the user's and not writable by others, as the data directory's
// entries must (datadir.Check). A link would take the write or the removal
// out of the data directory, to whatever it leads to. Since no one else
// can change a directory so checked, none can be swapped for a link
// between the check and its use, and paths can be used as they are (an
// openat walk would cost a descriptor per directory for nothing more).
// With create, missing directories are made 0700; without, a missing one
// is an error of fs.ErrNotExist. checked keeps what the batch found, so
// that a directory is looked at once a batch, not once a map.
func (s *Store) dir(rel string, create bool, checked map[string]error) error {
	if !filepath.IsLocal(rel) {
		return fmt.Errorf("%s is not a path inside the map store %s", rel, s.Root)
	}
	p := s.Root
	if err := s.checkDir(p, create, checked); err != nil {
		return err
	}
	if rel == "." {
		return nil
	}
	for name := range strings.SplitSeq(rel, string(filepath.Separator)) {
		p = filepath.Join(p, name)
		if err := s.checkDir(p, create, checked); err != nil {
			return err
		}
	}
	return nil
}

// checkDir checks one directory for dir, p being the root or below it.
func (s *Store) checkDir(p string, create bool, checked map[string]error) error {
	if err, ok := checked[p]; ok {
		return err
	}
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) && create {
		if parent := filepath.Dir(s.Root); p == s.Root && s.Within {
			if _, perr := os.Stat(parent); perr != nil {
				checked[p] = fmt.Errorf("the data directory %s is not there (removed?): no map is written until it is", parent)
				return checked[p]
			}
		}
		// What is above the root is the data directory, which may be a
		// link the user made (datadir.Check): MkdirAll may follow it.
		if err = durable.MkdirAll(p); err == nil {
			fi, err = os.Lstat(p)
		}
	}
	switch {
	case err != nil:
	case fi.Mode()&fs.ModeSymlink != 0:
		err = linkError(p)
	case !fi.IsDir():
		err = fmt.Errorf("%s is not a directory", p)
	default:
		err = datadir.CheckFile(p)
	}
	checked[p] = err
	return err
}

// WriteFile writes one file durably and atomically (0600).
func WriteFile(target string, data []byte) error {
	return durable.WriteFile(target, data, 0o600)
}

// Read returns the stored map at rel.
func (s *Store) Read(rel string) ([]byte, error) {
	return os.ReadFile(filepath.Join(s.Root, rel))
}

// Remove deletes the map at rel; a missing one is not an error. Its
// directories are checked as a write's are: a map behind a link is not
// the store's to remove.
func (s *Store) Remove(rel string) error {
	if err := s.dir(filepath.Dir(rel), false, map[string]error{}); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	err := os.Remove(filepath.Join(s.Root, rel))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

// RemoveMany deletes the maps at rels for good (see durable.RemoveFiles),
// their directories checked as Remove checks them: errs[i] is the error
// of rels[i].
func (s *Store) RemoveMany(rels []string) []error {
	errs := make([]error, len(rels))
	var paths []string
	var at []int
	checked := map[string]error{}
	for i, rel := range rels {
		if err := s.dir(filepath.Dir(rel), false, checked); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs[i] = err
			}
			continue
		}
		paths = append(paths, filepath.Join(s.Root, rel))
		at = append(at, i)
	}
	for j, err := range durable.RemoveFiles(paths) {
		errs[at[j]] = err
	}
	return errs
}

// MapsOf returns the relative paths of the maps in the store of one
// session, in whatever month they were filed: a look into each month's
// directory of the agent, not a walk of every map. A year or month that is
// a symbolic link is an error, not passed over: the session's maps are
// looked for to be removed, and one behind the link would stay unnamed.
func (s *Store) MapsOf(agent, nativeID string) ([]string, error) {
	var out []string
	if err := s.dir(safe(agent), false, map[string]error{}); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	years, err := os.ReadDir(filepath.Join(s.Root, safe(agent)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	name := FileName(nativeID)
	for _, y := range years {
		if err := notLink(filepath.Join(s.Root, safe(agent)), y); err != nil {
			return nil, err
		}
		if !y.IsDir() {
			continue
		}
		months, err := os.ReadDir(filepath.Join(s.Root, safe(agent), y.Name()))
		if err != nil {
			return nil, err
		}
		for _, m := range months {
			if err := notLink(filepath.Join(s.Root, safe(agent), y.Name()), m); err != nil {
				return nil, err
			}
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

// linkError says that p, a directory of the store, is a symbolic link,
// and what to do.
func linkError(p string) error {
	return fmt.Errorf("%s is a symbolic link; agentmap writes and removes maps only in directories of its own, never through a link: remove the link (and move the directory it leads to back in its place to keep the maps there)", p)
}

// notLink refuses an entry of a directory of the store that is a symbolic
// link, as dir does.
func notLink(parent string, e fs.DirEntry) error {
	if e.Type()&fs.ModeSymlink == 0 {
		return nil
	}
	return linkError(filepath.Join(parent, e.Name()))
}

// List returns the relative paths of every map in the store, sorted. It
// only reads, so it checks nothing (the operator commands read a store
// that datadir.Check finds fault with, and warn), but a symbolic link in
// the store is not followed: what it leads to is not listed.
func (s *Store) List() ([]string, error) {
	return s.ListNamed(nil)
}

// ListNamed is List narrowed to the maps whose file name keep accepts
// (nil: every one). Only their paths are made: a store of 100,000 maps
// is read without a path for each.
func (s *Store) ListNamed(keep func(name string) bool) ([]string, error) {
	// The root itself is not followed either when it is a link.
	if fi, err := os.Lstat(s.Root); err != nil || !fi.IsDir() {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, nil
	}
	var out []string
	err := s.listDir(".", keep, &out)
	if errors.Is(err, fs.ErrNotExist) {
		err = nil // the store, or a directory of it, removed meanwhile: listed as it is
	}
	return out, err
}

// listDir adds the maps of the directory rel and its subdirectories, in
// lexical order (as filepath.WalkDir would, following no link).
func (s *Store) listDir(rel string, keep func(string) bool, out *[]string) error {
	es, err := os.ReadDir(filepath.Join(s.Root, rel))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	for _, e := range es {
		name := e.Name()
		switch {
		case e.IsDir():
			if err := s.listDir(filepath.Join(rel, name), keep, out); err != nil {
				return err
			}
		case strings.HasSuffix(name, ".json.gz") && !strings.HasPrefix(name, ".") && (keep == nil || keep(name)):
			*out = append(*out, filepath.Join(rel, name))
		}
	}
	return nil
}

// RemoveOrphans deletes the temporary files (".<name>.tmp-*") that writes
// interrupted by a crash left in the store, and returns how many. Only the
// daemon writes maps, and it calls this before it writes any. The root is
// checked as a write checks it, and a symbolic link below it is neither
// followed (WalkDir does not) nor removed (only regular files are): a
// file of that name elsewhere is no write of the store's.
func (s *Store) RemoveOrphans() (int, error) {
	if err := s.dir(".", false, map[string]error{}); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return 0, nil
		}
		return 0, err
	}
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
