//go:build !linux

package state

import bolt "go.etcd.io/bbolt"

// ReleaseMapped is a no-op where the mapping's resident pages are left to
// the OS (release_linux.go says what it does on Linux).
func (d *DB) ReleaseMapped() error { return nil }

func releaseMappedIn(*bolt.DB, *bolt.Tx) error { return nil }
