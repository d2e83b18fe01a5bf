package state

import (
	bolt "go.etcd.io/bbolt"
	"golang.org/x/sys/unix"
)

// ReleaseMapped drops the database's pages from this process's mapping of
// the file (madvise MADV_DONTNEED on the shared, read-only mapping bbolt
// reads through). They stay in the page cache and are faulted back in,
// without I/O, when read again; nothing in the file changes. Without it,
// every page a long catch-up ever touched (the records, the events read
// back at each flush) stays counted in the process's resident memory, which
// then grows with the number of sessions though the heap does not.
//
// It runs inside a read transaction, which holds bbolt's lock against a
// remap: the mapping it names is the one in use until it returns.
func (d *DB) ReleaseMapped() error {
	return d.view(func(tx *bolt.Tx) error { return releaseMappedIn(d.db, tx) })
}

// releaseMappedIn is ReleaseMapped inside a transaction the caller holds.
func releaseMappedIn(db *bolt.DB, tx *bolt.Tx) error {
	size := uintptr(tx.Size())
	if size == 0 {
		return nil
	}
	_, _, errno := unix.Syscall(unix.SYS_MADVISE, db.Info().Data, size, unix.MADV_DONTNEED)
	if errno != 0 {
		return errno
	}
	return nil
}
