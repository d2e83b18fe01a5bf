package config

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/agentmap/agentmap/internal/regular"
	"github.com/agentmap/agentmap/state/datadir"
)

// HashKeySize is the size of a key created by LoadOrCreateHashKey.
const HashKeySize = 32

// minHashKeySize is the shortest key accepted from an existing file.
const minHashKeySize = 16

// LoadOrCreateHashKey returns the key of hashed path mode stored at path,
// creating it on first use: 32 random bytes in a file of mode 0600, in a
// directory created with mode 0700. A file holding hex digits is decoded, so
// a key can be written by hand. Two processes creating the key at once end
// up with the same key: the file appears complete or not at all.
func LoadOrCreateHashKey(path string) ([]byte, error) {
	key, err := readHashKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create hash key directory %s: %w", dir, err)
	}
	key = make([]byte, HashKeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, fmt.Errorf("create hash key: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".hash-key-*")
	if err != nil {
		return nil, fmt.Errorf("create hash key %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	if err := writeSynced(tmp, key); err != nil {
		return nil, fmt.Errorf("create hash key %s: %w", path, err)
	}
	// A hard link never replaces an existing file, unlike a rename: if
	// another process won the race, its key is the one to use.
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return readHashKey(path)
		}
		// Some file systems have no hard links; a rename is still atomic.
		if err := os.Rename(tmp.Name(), path); err != nil {
			return nil, fmt.Errorf("create hash key %s: %w", path, err)
		}
	}
	syncDir(dir)
	return key, nil
}

// LoadHashKey returns the key stored at path, which must exist: a key
// named to read maps hashed before (an export's) is never made up, as a
// new one would hash to paths nothing else can match.
func LoadHashKey(path string) ([]byte, error) {
	key, err := readHashKey(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("hash key %s: no such file", path)
	}
	return key, err
}

func writeSynced(f *os.File, data []byte) error {
	// CreateTemp makes the file 0600 already; Chmod makes sure of it.
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync() // not supported everywhere (Windows); best effort
		d.Close()
	}
}

func readHashKey(path string) ([]byte, error) {
	// A key someone else planted would make the hashed paths theirs.
	if err := datadir.CheckFile(path); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("hash key: %w", err)
	}
	// Opened as every file agentmap reads: a named pipe there (which the
	// check above lets pass, as the owner's and private) is refused, not
	// waited on for a writer that may never come.
	data, err := regular.ReadFile(path)
	if kind := regular.KindOf(err); kind != "" {
		return nil, fmt.Errorf("hash key %s is not a regular file (a %s)", path, kind)
	}
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		return nil, fmt.Errorf("read hash key %s: %w", path, err)
	}
	if t := strings.TrimSpace(string(data)); len(t) >= 2*minHashKeySize {
		if k, err := hex.DecodeString(t); err == nil {
			return k, nil
		}
	}
	if len(data) < minHashKeySize {
		return nil, fmt.Errorf("hash key %s is too short (%d bytes, need at least %d)", path, len(data), minHashKeySize)
	}
	return data, nil
}
