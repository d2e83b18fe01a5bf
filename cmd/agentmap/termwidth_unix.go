//go:build !windows

package main

import "golang.org/x/sys/unix"

// termWidth is the number of columns of the terminal on fd, 0 when not
// known.
func termWidth(fd uintptr) int {
	ws, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
