//go:build unix

// Package cputime reads the CPU time this process has used, for the
// benchmarks that report it: on a shared machine it says what a run costs
// where wall time cannot.
package cputime

import (
	"syscall"
	"time"
)

// Process is the user and system time this process has used so far.
func Process() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
