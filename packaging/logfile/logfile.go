// Package logfile is the service's own log on systems without a journal
// (macOS: launchd only redirects output to a file it never rotates): a
// file capped in size, rotated to numbered predecessors, the oldest
// dropped.
package logfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// Defaults of the service's log: 10 MB now and 3 older files at most.
const (
	DefaultMax  = 10 << 20
	DefaultKeep = 3
)

// Writer appends to a log file. A write that would take the file past max
// bytes first rotates it: path becomes path.1, path.1 becomes path.2, and
// so on up to path.<keep>, and the oldest is removed. A single write is
// never split, so a line stays whole in one file.
type Writer struct {
	mu   sync.Mutex
	path string
	max  int64
	keep int
	f    *os.File
	size int64
	// closed: Close was called. A file lost otherwise (a rotation whose
	// open failed on a full disk) is opened again at the next write.
	closed bool
	// lost counts the writes that failed (a full disk), lostErr the last
	// error: the next write that succeeds says so first, so that a gap in
	// the log is never silent.
	lost    int
	lostErr error
	// cut: the file ends inside a line (a write cut short by the full
	// disk), so that what is written next starts on a line of its own.
	cut bool
}

// Open opens (or creates, 0600, in a 0700 directory) the log at path.
func Open(path string, max int64, keep int) (*Writer, error) {
	if max <= 0 || keep < 0 {
		return nil, fmt.Errorf("log file %s: want a positive size cap and keep >= 0", path)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("log file: %w", err)
	}
	w := &Writer{path: path, max: max, keep: keep}
	if err := w.open(); err != nil {
		return nil, err
	}
	return w, nil
}

func (w *Writer) open() error {
	f, err := os.OpenFile(w.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("log file: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("log file: %w", err)
	}
	w.f, w.size = f, fi.Size()
	return nil
}

// Write appends p, rotating first when p would not fit. A write that
// fails is counted, and the first one to succeed after it is preceded by a
// line that says how many were lost and why.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, errors.New("log file: closed")
	}
	n, err := w.write(p)
	if err != nil {
		w.lost++
		w.lostErr = err
		if w.f != nil {
			// Opened again at the next write: a descriptor gone bad
			// (a file system remounted) must not lose the log for good.
			w.f.Close()
			w.f = nil
		}
	}
	return n, err
}

func (w *Writer) write(p []byte) (int, error) {
	if w.f == nil {
		if err := w.open(); err != nil {
			return 0, err
		}
	}
	if w.lost > 0 {
		note := fmt.Appendf(nil, "agentmap: %d log line(s) lost while the log file could not be written (%v)\n", w.lost, w.lostErr)
		if w.cut {
			note = append([]byte("\n"), note...)
		}
		if err := w.append(note); err != nil {
			return 0, err
		}
		w.lost, w.lostErr = 0, nil
	}
	if err := w.append(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// append writes b whole, rotating first when it would not fit.
func (w *Writer) append(b []byte) error {
	if w.size > 0 && w.size+int64(len(b)) > w.max {
		if err := w.rotate(); err != nil {
			return err
		}
	}
	n, err := w.f.Write(b)
	w.size += int64(n)
	if err != nil && n > 0 {
		w.cut = b[n-1] != '\n'
	} else if n > 0 {
		w.cut = false
	}
	return err
}

func (w *Writer) rotate() error {
	w.f.Close()
	w.f = nil
	if w.keep == 0 {
		if err := os.Remove(w.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("log file: %w", err)
		}
		return w.open()
	}
	os.Remove(numbered(w.path, w.keep))
	for i := w.keep - 1; i >= 1; i-- {
		if err := os.Rename(numbered(w.path, i), numbered(w.path, i+1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("log file: %w", err)
		}
	}
	if err := os.Rename(w.path, numbered(w.path, 1)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("log file: %w", err)
	}
	return w.open()
}

// Close closes the file.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if w.f == nil {
		return nil
	}
	err := w.f.Close()
	w.f = nil
	return err
}

func numbered(path string, i int) string { return path + "." + strconv.Itoa(i) }

// Files lists the log's files that exist, oldest first, the current one
// last: what to read to see the whole log.
func Files(path string, keep int) []string {
	var out []string
	for i := keep; i >= 1; i-- {
		if _, err := os.Stat(numbered(path, i)); err == nil {
			out = append(out, numbered(path, i))
		}
	}
	if _, err := os.Stat(path); err == nil {
		out = append(out, path)
	}
	return out
}
