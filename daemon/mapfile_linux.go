package daemon

import (
	"os"

	"golang.org/x/sys/unix"
)

// mapFile maps n bytes of f from off, read-only; data starts at off, and
// mapping is the whole mapping, from the page off is in.
func mapFile(f *os.File, off, n int64) (data, mapping []byte, err error) {
	page := int64(os.Getpagesize())
	start := off &^ (page - 1)
	mapping, err = unix.Mmap(int(f.Fd()), start, int(off+n-start), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, nil, err
	}
	return mapping[off-start:], mapping, nil
}

// unmapFile undoes mapFile.
func unmapFile(mapping []byte) { _ = unix.Munmap(mapping) }

// releaseFile lets go of the pages of a mapping this process made
// resident: they stay in the page cache, and are faulted back in, without
// I/O, when read again.
func releaseFile(mapping []byte) { _ = unix.Madvise(mapping, unix.MADV_DONTNEED) }
