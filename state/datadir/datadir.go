// Package datadir keeps agentmap to its own directory: it marks the data
// directory agentmap made (so that `uninstall --purge` removes only that),
// refuses places that can never be one (/, the home directory, a parent of
// the config), and checks, before anything in it is used, that the
// directory and the files in it are the user's alone: owned by the user,
// not writable by others, not symbolic links planted to lead elsewhere.
package datadir

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// Marker is the file agentmap writes in a data directory it made.
const Marker = ".agentmap-data-dir"

const markerText = "This directory holds agentmap's state and maps; `agentmap uninstall --purge` removes it.\n"

// Own names the entries agentmap keeps in a data directory. A directory
// holding nothing else was made by agentmap even without a marker (one
// made before markers existed), and is marked when first used.
// logs is there because the service's log file (logs/agentmap.log) is
// opened before the daemon claims the directory.
var Own = []string{Marker, "state.db", "maps", "hash.key", "exports", "logs", "agentmap.sock", "agentmap.lock", "device-id", "attemptdb-next-seq"}

// private are the entries no one else may even read.
var private = map[string]bool{"state.db": true, "hash.key": true}

func own(name string) bool {
	for _, o := range Own {
		if name == o {
			return true
		}
	}
	// Damaged databases moved aside (by the name state.moveAside gives
	// them: a copy the user made beside them, state.db.corrupt-mine, is
	// theirs), temporary files of a write or of a scan's spilled sessions,
	// and launchd's output files of the service.
	return name == launchdLabel+".out.log" || name == launchdLabel+".err.log" ||
		movedAside.MatchString(name) || strings.HasPrefix(name, ".hash-key-") ||
		strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-") ||
		strings.HasPrefix(name, ".retired-") && strings.HasSuffix(name, ".tmp")
}

// movedAside matches the names of damaged databases moved aside:
// state.db.corrupt-<UTC time>, and -2, -3… after it when that is taken.
var movedAside = regexp.MustCompile(`^state\.db\.corrupt-[0-9]{8}T[0-9]{6}Z(-[0-9]+)?$`)

// launchdLabel is the macOS service's label (packaging.LaunchdLabel),
// which names its output files in the data directory.
const launchdLabel = "com.github.agentmap.agentmap"

// Unsafe says why dir can never be a data directory ("" when it can): the
// root of a file system, the home directory or one of its parents, or the
// directory of the config file or one of its parents (purging it would take
// the config). Paths are compared cleaned and absolute.
func Unsafe(dir, home, configFile string) string {
	dir = clean(dir)
	switch {
	case dir == "":
		return "it is empty"
	case filepath.Dir(dir) == dir:
		return "it is the root of a file system"
	case home != "" && within(clean(home), dir):
		return "it is the home directory or holds it"
	case configFile != "" && within(filepath.Dir(clean(configFile)), dir):
		return "it holds the config file"
	}
	return ""
}

func clean(p string) string {
	if p == "" {
		return ""
	}
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return filepath.Clean(p)
}

// within reports whether path is dir or lies under it.
func within(path, dir string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && (rel == "." || !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && rel != "..")
}

// Claim creates dir (0700) with its marker, or marks an existing one that
// is empty or holds only agentmap's own entries, as agentmap made them (one
// made before markers existed). A directory holding anything else is used
// but not marked: purge will not remove it.
func Claim(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("create data directory %s: %w", dir, err)
	}
	marker := filepath.Join(dir, Marker)
	if _, err := os.Lstat(marker); err == nil {
		return nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("read data directory %s: %w", dir, err)
	}
	for _, e := range entries {
		if !own(e.Name()) {
			return nil
		}
	}
	if len(entries) > 0 && !madeByAgentmap(dir) {
		return nil
	}
	f, err := os.OpenFile(marker, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("mark data directory %s: %w", dir, err)
	}
	_, err = f.WriteString(markerText)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		// A marker left empty (a full disk) would stand for good: the
		// next start, finding none, writes it whole.
		os.Remove(marker)
		return fmt.Errorf("mark data directory %s: %w", dir, err)
	}
	return nil
}

// madeByAgentmap reports whether the unmarked directory dir, whose entries
// all have agentmap's names, is one agentmap made: names alone are not
// enough (a directory of one's own holding maps/ of photos, another
// program's state.db), and purge would remove what they hold. A state
// database must be a bbolt file (or empty: a first open cut short), the
// maps directory hold map files only, the logs directory agentmap's log
// files only, and an exports directory comes only with a state database.
func madeByAgentmap(dir string) bool {
	state := filepath.Join(dir, "state.db")
	fi, err := os.Lstat(state)
	hasState := err == nil
	if hasState && (!fi.Mode().IsRegular() || fi.Size() > 0 && !boltFile(state)) {
		return false
	}
	for _, sub := range []struct {
		name string
		ok   func(string) bool
	}{
		{"maps", mapFile},
		{"logs", func(name string) bool { return strings.HasPrefix(name, "agentmap.log") }},
	} {
		p := filepath.Join(dir, sub.name)
		if fi, err := os.Lstat(p); err == nil && !fi.IsDir() {
			return false
		}
		if only(p, sub.ok, func(string) {}) != nil {
			return false
		}
	}
	if hasState {
		return true
	}
	// Without a state database, only what agentmap writes before the
	// daemon claims the directory (the service's log files, a lock, the
	// hashed path mode's key: 32 bytes, as agentmap makes it) or what
	// purge would take only of agentmap's anyway (map files, checked
	// above). A device-id, an exports directory or another hash.key alone
	// may be anyone's.
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		switch name := e.Name(); {
		case name == "logs", name == "maps", name == "agentmap.lock", name == Marker,
			name == launchdLabel+".out.log", name == launchdLabel+".err.log":
		case name == "hash.key":
			if fi, err := e.Info(); err != nil || !fi.Mode().IsRegular() || fi.Size() != 32 {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// boltFile reports whether the file at p starts as a bbolt file: its meta
// page, a 16-byte page header then the magic number, in the machine's byte
// order (little-endian on every machine agentmap is built for).
func boltFile(p string) bool {
	f, err := os.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [20]byte
	_, err = io.ReadFull(f, head[:])
	return err == nil && binary.LittleEndian.Uint32(head[16:]) == boltMagic
}

// boltMagic is the magic number of a bbolt file's meta pages.
const boltMagic = 0xED0CDAED

// mapFile reports whether name is one agentmap writes in its maps
// directory: a map, or the temporary file of a map being written.
func mapFile(name string) bool {
	return strings.HasSuffix(name, ".json.gz") && !strings.HasPrefix(name, ".") ||
		strings.HasPrefix(name, ".") && strings.Contains(name, ".json.gz.tmp-")
}

// errForeign is only's error for a directory holding anything agentmap
// does not write there.
var errForeign = errors.New("not agentmap's")

// only walks the directory dir (no link followed), calling other with the
// path of each entry that is neither a directory nor a regular file whose
// name ok accepts, and returns errForeign when there was one (nil when dir
// is not there).
func only(dir string, ok func(name string) bool, other func(string)) error {
	var foreign bool
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if !d.IsDir() && !(d.Type().IsRegular() && ok(d.Name())) {
			foreign = true
			other(p)
		}
		return nil
	})
	if err == nil && foreign {
		err = errForeign
	}
	return err
}

// Purgeable says whether agentmap's entries in dir may be removed: it
// must be a safe place and carry agentmap's marker. The config file does
// not make it unsafe: purge removes only agentmap's own entries (Contents),
// and a config file among them stays.
func Purgeable(dir, home, configFile string) error {
	if why := Unsafe(dir, home, ""); why != "" {
		return fmt.Errorf("will not remove %s: %s", dir, why)
	}
	fi, err := os.Lstat(filepath.Join(dir, Marker))
	if err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("will not remove %s: agentmap did not make it (no %s in it); remove what you want by hand", dir, Marker)
	}
	return nil
}

// Contents sorts the entries of the data directory dir into those purge
// removes (agentmap's own, the marker last) and those it leaves (anything
// else: files the user put there, and an entry holding keep, the config
// file). A directory's name ends in a slash. dir may be a symbolic link:
// the entries are those of the directory it leads to.
func Contents(dir, keep string) (owned, kept []string, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, err
	}
	keep = clean(keep)
	real := clean(dir)
	marker := false
	for _, e := range entries {
		name := e.Name()
		shown := name
		if e.IsDir() {
			shown += "/"
		}
		switch {
		case !own(name) || keep != "" && within(keep, filepath.Join(real, name)):
			kept = append(kept, shown)
		case name == Marker:
			marker = true
		default:
			owned = append(owned, shown)
		}
	}
	if marker {
		// Last, so that a purge stopped halfway can be run again.
		owned = append(owned, Marker)
	}
	return owned, kept, nil
}

// Purge removes agentmap's own entries from the data directory dir (see
// Contents), then the directory itself if nothing else is left in it.
// When dir is a symbolic link, the directory it leads to is purged; the
// link, which the user made, is removed only when that directory is gone
// (it would lead nowhere). It returns what it removed and what it kept.
// The caller checks Purgeable first.
func Purge(dir, keep string) (r Result, err error) {
	r.Dir = dir
	if li, err := os.Lstat(dir); err == nil && li.Mode()&fs.ModeSymlink != 0 {
		if r.Target, err = filepath.EvalSymlinks(dir); err != nil {
			return r, fmt.Errorf("follow %s: %w", dir, err)
		}
	}
	r.Owned, r.Kept, err = Contents(dir, keep)
	if err != nil {
		return r, err
	}
	real := dir
	if r.Target != "" {
		real = r.Target
	}
	for _, name := range r.Owned {
		p := filepath.Join(real, strings.TrimSuffix(name, "/"))
		if keepOthers, ok := ownFiles[name]; ok {
			// agentmap's files only: one the user put among them stays,
			// with the directories that lead to it.
			kept, err := removeOwn(p, keepOthers)
			for _, k := range kept {
				rel, _ := filepath.Rel(real, k)
				r.Kept = append(r.Kept, filepath.ToSlash(rel))
			}
			if err != nil {
				return r, err
			}
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			return r, fmt.Errorf("remove %s: %w", filepath.Join(real, name), err)
		}
	}
	if len(r.Kept) > 0 {
		return r, nil
	}
	// Remove, not RemoveAll: anything that appeared meanwhile stays.
	if err := os.Remove(real); err != nil {
		if _, serr := os.Stat(real); serr == nil {
			return r, nil // something appeared meanwhile: it stays
		}
		return r, fmt.Errorf("remove %s: %w", real, err)
	}
	r.DirGone = true
	if r.Target != "" {
		if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return r, fmt.Errorf("remove the link %s: %w", dir, err)
		}
		r.LinkGone = true
	}
	return r, nil
}

// ownFiles are the directories of the data directory purge empties of
// agentmap's files only, by the names it gives them.
var ownFiles = map[string]func(name string) bool{
	"maps/": mapFile,
	"logs/": func(name string) bool { return strings.HasPrefix(name, "agentmap.log") },
}

// removeOwn removes the files of dir whose names own accepts and the
// directories left empty, dir too when nothing else is in it; it returns
// the entries it left (anything else, and what could not be read).
func removeOwn(dir string, own func(string) bool) (kept []string, err error) {
	var dirs []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return fmt.Errorf("remove agentmap's files in %s: %w", dir, err)
		case d.IsDir():
			dirs = append(dirs, p)
		case d.Type().IsRegular() && own(d.Name()):
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("remove %s: %w", p, err)
			}
		default:
			kept = append(kept, p)
		}
		return nil
	})
	// Deepest first; Remove, not RemoveAll: one that is not empty stays.
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Remove(dirs[i])
	}
	return kept, err
}

// Result is what Purge did.
type Result struct {
	Dir      string   // the data directory as named
	Target   string   // where Dir leads, when it is a symbolic link
	Owned    []string // the entries removed
	Kept     []string // the entries left: not agentmap's
	DirGone  bool     // the directory (Target for a link) was removed
	LinkGone bool     // the link Dir was removed, leading nowhere once Target was
}

// Check verifies the data directory and every entry agentmap uses in it
// before any is used: each must belong to the user, be writable by no one
// else, and not be a symbolic link (state.db and hash.key not even readable
// by others). The error names the path and says what to do.
func Check(dir string) error {
	if err := checkDir(dir); err != nil {
		return err
	}
	var probs []error
	for _, name := range Own {
		path := filepath.Join(dir, name)
		fi, err := os.Lstat(path)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			probs = append(probs, err)
			continue
		}
		if err := checkEntry(path, fi, private[name]); err != nil {
			probs = append(probs, err)
		}
	}
	return errors.Join(probs...)
}

// CheckFile verifies one file agentmap reads that may live elsewhere (a
// hash key named by the config): not a symbolic link, the user's, private.
func CheckFile(path string) error {
	fi, err := os.Lstat(path)
	if err != nil {
		return err
	}
	return checkEntry(path, fi, true)
}

func checkDir(dir string) error {
	// The directory itself may be a symbolic link the user made (to put
	// the data on another disk): the link and what it leads to must both
	// be the user's.
	li, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("data directory %s: %w", dir, err)
	}
	if li.Mode()&fs.ModeSymlink != 0 {
		if err := owner(dir, li); err != nil {
			return err
		}
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return fmt.Errorf("data directory %s: %w", dir, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("data directory %s is not a directory", dir)
	}
	if err := owner(dir, fi); err != nil {
		return err
	}
	if fi.Mode().Perm()&0o022 != 0 && !windows {
		return fmt.Errorf("data directory %s is writable by %s (mode %04o): run chmod go-w %s", dir, writers(fi.Mode().Perm()), fi.Mode().Perm(), dir)
	}
	return nil
}

func checkEntry(path string, fi fs.FileInfo, private bool) error {
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link; agentmap uses only its own files: remove it", path)
	}
	if err := owner(path, fi); err != nil {
		return err
	}
	if windows {
		return nil
	}
	perm := fi.Mode().Perm()
	if perm&0o022 != 0 {
		return fmt.Errorf("%s is writable by %s (mode %04o): run chmod go-w %s", path, writers(perm), perm, path)
	}
	if private && fi.Mode().IsRegular() && perm&0o077 != 0 {
		return fmt.Errorf("%s is readable by others (mode %04o): run chmod 600 %s", path, perm, path)
	}
	return nil
}

// writers names who besides the owner may write, for a mode that lets
// someone: "its group", "others" or both.
func writers(perm fs.FileMode) string {
	switch {
	case perm&0o020 != 0 && perm&0o002 != 0:
		return "its group and others"
	case perm&0o020 != 0:
		return "its group"
	}
	return "others"
}
