package cputime

import (
	"runtime"
	"testing"
	"time"
)

// Work done shows in the time read, and the time read never goes back.
func TestProcessCountsWork(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("not measured on Windows")
	}
	before := Process()
	x := 0
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		x++
	}
	after := Process()
	if after <= before || after-before < 10*time.Millisecond {
		t.Fatalf("50 ms of work read as %v (from %v to %v; %d loops)", after-before, before, after, x)
	}
}
