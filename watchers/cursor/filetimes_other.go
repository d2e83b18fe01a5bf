//go:build !linux && !darwin

package cursor

import "os"

// birthMs is 0 where no birth time is read: the session then starts at
// the file's modification time (see the builder's StartT/EndT rule).
func birthMs(string, os.FileInfo) int64 { return 0 }
