//go:build !windows

package daemon

import (
	"os"
	"runtime"
	"syscall"
)

// maxRSSKB is the peak resident memory of a finished child, in KiB.
func maxRSSKB(ps *os.ProcessState) (int64, bool) {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, false
	}
	if runtime.GOOS == "darwin" {
		return int64(ru.Maxrss) / 1024, true // bytes there
	}
	return int64(ru.Maxrss), true
}
