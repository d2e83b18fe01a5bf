package export

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/agentmap/agentmap/export/attemptdb"
	"github.com/agentmap/agentmap/state/mapstore"
)

// LoadOrCreateDeviceID returns the AttemptDB device id kept at path,
// creating it on first use: a random (version 4) UUID in a 0600 file. The
// id must never change, so a second process racing to create it ends up
// with the first one's id (hard link, never a replacing rename).
func LoadOrCreateDeviceID(path string) (string, error) {
	id, err := readDeviceID(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return id, err
	}
	var u [16]byte
	if _, err := rand.Read(u[:]); err != nil {
		return "", fmt.Errorf("create device id: %w", err)
	}
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	id = fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:])
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("create device id %s: %w", path, err)
	}
	tmp, err := os.CreateTemp(dir, ".device-id-*")
	if err != nil {
		return "", fmt.Errorf("create device id %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.WriteString(id + "\n")
	if werr == nil {
		werr = tmp.Sync()
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return "", fmt.Errorf("create device id %s: %w", path, werr)
	}
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return readDeviceID(path)
		}
		if err := os.Rename(tmp.Name(), path); err != nil {
			return "", fmt.Errorf("create device id %s: %w", path, err)
		}
	}
	return id, nil
}

func readDeviceID(path string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	id := strings.TrimSpace(string(b))
	if !attemptdb.IsUUID(id) {
		return "", fmt.Errorf("device id file %s does not hold a lowercase UUID", path)
	}
	return id, nil
}

// LoadNextSeq reads the next AttemptDB source_seq kept at path (1 when
// the file does not exist yet).
func LoadNextSeq(path string) (uint64, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 1, nil
	}
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("sequence file %s does not hold a positive integer", path)
	}
	return n, nil
}

// SaveNextSeq keeps the next source_seq at path, atomically.
func SaveNextSeq(path string, next uint64) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	return mapstore.WriteFile(path, []byte(strconv.FormatUint(next, 10)+"\n"))
}
