//go:build !windows

package watchers

import (
	"os"
	"syscall"
)

// StatID returns the identity from a stat result.
func StatID(fi os.FileInfo) FileID {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return FileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}
	}
	return FileID{}
}

func openID(_ *os.File, fi os.FileInfo) (FileID, error) { return StatID(fi), nil }

// OpenLog opens a log for reading, as os.Open does, without what os.Open
// spends on every file in case it can be polled (a regular file cannot):
// two fcntl calls, a failed epoll registration and two more fcntl calls to
// undo it. A catch-up opens every log there is, each more than once.
func OpenLog(path string) (*os.File, error) {
	for {
		fd, err := syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err == nil {
			return os.NewFile(uintptr(fd), path), nil
		}
		if err != syscall.EINTR {
			return nil, &os.PathError{Op: "open", Path: path, Err: err}
		}
	}
}
