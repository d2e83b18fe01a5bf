package main

import "golang.org/x/sys/windows"

// termWidth is the number of columns of the console on fd, 0 when not
// known.
func termWidth(fd uintptr) int {
	var info windows.ConsoleScreenBufferInfo
	if err := windows.GetConsoleScreenBufferInfo(windows.Handle(fd), &info); err != nil {
		return 0
	}
	return int(info.Window.Right-info.Window.Left) + 1
}
