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
