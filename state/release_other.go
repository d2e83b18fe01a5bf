//go:build !linux

package state

// ReleaseMapped is a no-op where the mapping's resident pages are left to
// the OS (release_linux.go says what it does on Linux).
func (d *DB) ReleaseMapped() error { return nil }
