//go:build unix

package state

import (
	"os"
	"syscall"
)

// dropLock releases the lock bbolt took on a file it then lost in a panic.
// Closing the file is not enough: the memory map bbolt made of it keeps
// the file open, and with it the lock.
func dropLock(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	f.Close()
}
