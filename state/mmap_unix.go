//go:build !windows

package state

import "math"

// mmapReserve is the size bbolt first maps the database with. bbolt maps
// the file and maps it again, bigger, each time it outgrows the mapping;
// every remap copies out every node the writing transaction touched, and a
// catch-up that writes a few hundred megabytes of records remaps a dozen
// times. Reserving 1 GiB of address space up front takes those remaps
// away. On Unix only the file's own pages are ever resident, whatever the
// mapping's length, and the file grows as before; a 32-bit process keeps
// bbolt's default, its address space being too small to spare.
func mmapReserve() int {
	if math.MaxInt > math.MaxInt32 {
		return 1 << 30
	}
	return 0
}
