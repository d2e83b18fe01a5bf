//go:build unix

package durable

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// inheritedFD is the descriptor that a name of this process's own open
// files stands for: /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N.
// Opened by name, such a file is opened anew (a regular file behind
// `>> log` would be written from its start, or replaced); written through
// the descriptor, it is written as the process's stdout is, at the offset
// and with the flags (O_APPEND) the shell gave it.
func inheritedFD(name string) (int, bool) {
	switch name {
	case "/dev/stdout":
		return 1, true
	case "/dev/stderr":
		return 2, true
	}
	for _, dir := range []string{"/dev/fd/", "/proc/self/fd/", "/proc/" + strconv.Itoa(os.Getpid()) + "/fd/"} {
		if rest, ok := strings.CutPrefix(name, dir); ok {
			if n, err := strconv.Atoi(rest); err == nil && n >= 0 {
				return n, true
			}
		}
	}
	return 0, false
}

// writeInherited writes through a copy of descriptor fd, closed on
// Commit or Abort; fd itself stays open.
func writeInherited(target string, fd int) (*File, error) {
	dup, err := syscall.Dup(fd)
	if err != nil {
		return nil, fmt.Errorf("write %s: %w", target, err)
	}
	syscall.CloseOnExec(dup)
	return &File{target: target, tmp: os.NewFile(uintptr(dup), target), direct: true}, nil
}
