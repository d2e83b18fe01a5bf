//go:build !windows

package main

import "golang.org/x/sys/unix"

// freeDisk is the space available to this user on dir's file system.
func freeDisk(dir string) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return uint64(st.Bavail) * uint64(st.Bsize), nil
}
