//go:build unix

package builder

import "syscall"

// processCPU is the CPU time the process has used so far, in ns (user and
// system, every thread: the collector's work included).
func processCPU() (int64, bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, false
	}
	return ru.Utime.Nano() + ru.Stime.Nano(), true
}
