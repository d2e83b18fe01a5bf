//go:build !linux

package watchers

import (
	"errors"
	"syscall"
)

// watchLimit explains a failure to watch as the limit it hit: kqueue
// spends a file descriptor per watched file and directory. "" when err is
// no such limit.
func watchLimit(err error) string {
	if errors.Is(err, syscall.EMFILE) || errors.Is(err, syscall.ENFILE) {
		return "the open file limit is reached (ulimit -n)"
	}
	return ""
}
