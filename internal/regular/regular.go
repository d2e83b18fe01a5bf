// Package regular opens the files agentmap follows (logs, session stores,
// the config file) so that what is not a regular file is refused, never
// waited on: opening a named pipe for reading blocks until something opens
// it for writing, which may be never, and a daemon or scan blocked there
// holds its state database's lock and writes nothing. A directory or a
// device at a log's path is no log either.
package regular

import (
	"errors"
	"io"
	"io/fs"
)

// ErrNotRegular is what errors.Is finds in the error of Open for a path
// that holds something other than a regular file.
var ErrNotRegular = errors.New("not a regular file")

// NotRegularError says what kind of file a path held instead.
type NotRegularError struct {
	Kind string // see Kind
}

func (e *NotRegularError) Error() string { return "not a regular file (a " + e.Kind + ")" }

// Is makes errors.Is(err, ErrNotRegular) true.
func (e *NotRegularError) Is(target error) bool { return target == ErrNotRegular }

// KindOf is the kind of file err (from Open) found, or "" when err does
// not say the file was not a regular one.
func KindOf(err error) string {
	var nr *NotRegularError
	if errors.As(err, &nr) {
		return nr.Kind
	}
	return ""
}

// Kind names the kind of file a mode says, for a message: never the
// file's name or content.
func Kind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "regular file"
	case m.IsDir():
		return "directory"
	case m&fs.ModeNamedPipe != 0:
		return "named pipe"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m&fs.ModeSymlink != 0:
		return "symbolic link"
	}
	return "special file"
}

// ReadFile reads the whole file at path, as os.ReadFile does, when it is a
// regular file (see Open).
func ReadFile(path string) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}
