//go:build unix

package report

import (
	"syscall"
	"time"
)

// cpuTime is the CPU time this process has used (user and system): on a
// shared machine it says what a benchmark costs where wall time cannot.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
