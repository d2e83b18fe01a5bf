//go:build windows

package durable

// syncDir is a no-op: Windows cannot open a directory for fsync, and
// MoveFileEx (os.Rename) is already durable on NTFS.
func syncDir(string) error { return nil }
