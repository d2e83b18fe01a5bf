// Package scribble damages files for tests: it writes a fixed pattern of
// bytes over part of a file in place, as a failing disk or a stray writer
// would, without changing its size or its identity.
package scribble

import "os"

// Over writes n bytes of a fixed pattern at off in the file at path.
func Over(path string, off, n int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	noise := make([]byte, n)
	for i := range noise {
		noise[i] = byte(i*7 + 13)
	}
	if _, err := f.WriteAt(noise, off); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
