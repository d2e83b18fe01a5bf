package state

import "os"

// dropLock releases the lock bbolt took on a file it then lost in a panic:
// on Windows the lock goes with the handle.
func dropLock(f *os.File) { f.Close() }
