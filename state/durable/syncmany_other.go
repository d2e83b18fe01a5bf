//go:build !linux

package durable

import "os"

// syncMany makes the data of several open files durable: one fsync each.
func syncMany(fs []*os.File) map[*os.File]error { return fsyncEach(fs) }
