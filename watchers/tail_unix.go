//go:build !windows

package watchers

import (
	"os"
	"syscall"

	"github.com/agentmap/agentmap/internal/regular"
)

// StatID returns the identity from a stat result.
func StatID(fi os.FileInfo) FileID {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return FileID{Dev: uint64(st.Dev), Ino: uint64(st.Ino)}
	}
	return FileID{}
}

func openID(_ *os.File, fi os.FileInfo) (FileID, error) { return StatID(fi), nil }

// OpenLog opens a log for reading. A path that holds no regular file (a
// named pipe, a directory, a device) is refused at once, never waited on:
// the error wraps regular.ErrNotRegular, and Missing takes it for a log
// gone. See regular.Open, also for why it costs less than os.Open.
func OpenLog(path string) (*os.File, error) { return regular.Open(path) }

// HardLinks is how many names the file of fi has (1 where the OS does not
// say).
func HardLinks(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
