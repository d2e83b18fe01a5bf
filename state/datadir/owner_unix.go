//go:build !windows

package datadir

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

const windows = false

// owner checks that the user running agentmap owns the file.
func owner(path string, fi fs.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	if uid := os.Geteuid(); int(st.Uid) != uid {
		return fmt.Errorf("%s belongs to user %d, not to you (%d): agentmap uses only files of its own user", path, st.Uid, uid)
	}
	return nil
}
