package daemon

import (
	"runtime"
	"runtime/debug"
	"testing"
)

// gcPercent reads GOGC as the runtime holds it.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestPaceGCGivesHeadroomAndRestores(t *testing.T) {
	if gcPercent() != 100 {
		t.Skip("GOGC is set for this test binary")
	}
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	stop := paceGC(128 << 20)
	runtime.GC()
	runtime.GC() // a cycle's cleanup retunes for the heap it found live
	// A test binary's live heap is a few MB: 128 MB of headroom is many
	// times it (the floor of 16 MB makes it 800% at most).
	if p := gcPercent(); p <= 100 || p > 800 {
		t.Errorf("while pacing GOGC = %d, want in (100, 800]", p)
	}
	inner := paceGC(1 << 20)
	inner()
	inner() // a second stop is a no-op
	if p := gcPercent(); p <= 100 {
		t.Errorf("a nested pacing ended the outer one: GOGC = %d", p)
	}
	stop()
	// A live heap many times the headroom (the 16 MB floor against 1 MB)
	// grows by a quarter of itself between collections, not by all of it.
	small := paceGC(1 << 20)
	runtime.GC()
	runtime.GC()
	if p := gcPercent(); p != catchUpMinGOGC {
		t.Errorf("pacing a heap larger than its headroom: GOGC = %d, want %d", p, catchUpMinGOGC)
	}
	small()
	if p := gcPercent(); p != 100 {
		t.Errorf("after pacing GOGC = %d, want 100", p)
	}
	runtime.GC()
	runtime.GC()
	if p := gcPercent(); p != 100 {
		t.Errorf("a cleanup after the end retuned GOGC to %d", p)
	}
}

func TestPaceGCLeavesTheUsersSetting(t *testing.T) {
	t.Setenv("GOGC", "50")
	stop := paceGC(128 << 20)
	defer stop()
	runtime.GC()
	if p := gcPercent(); p != 100 {
		t.Errorf("GOGC in the environment, pacing changed the runtime's to %d", p)
	}
}

// A catch-up's headroom is a fifth of what it reads, within its bounds:
// small catch-ups do not grow the heap (and fault in its pages) for
// collections they would not have made.
func TestCatchUpHeadroomBySize(t *testing.T) {
	for _, c := range []struct {
		toRead int64
		want   uint64
	}{
		{0, catchUpMinHeadroom},
		{33 << 20, catchUpMinHeadroom},
		{320 << 20, 64 << 20},
		{640 << 20, catchUpHeadroom},
		{2 << 30, catchUpHeadroom},
		{-1, catchUpMinHeadroom},
	} {
		if got := catchUpHeadroomFor(c.toRead); got != c.want {
			t.Errorf("catchUpHeadroomFor(%d) = %d, want %d", c.toRead, got, c.want)
		}
	}
}

// A nested pacing keeps the outer headroom: a scan's piece is paced by
// what the whole walk has left, and the batch it ingests does not resize
// it (ingest does not even size its own while one is on).
func TestNestedPacingKeepsTheOuterHeadroom(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	if gcPacing() {
		t.Fatal("pacing on before any catch-up")
	}
	outer := paceGC(catchUpHeadroomFor(1 << 30))
	if !gcPacing() {
		t.Fatal("pacing off inside a catch-up")
	}
	inner := paceGC(catchUpHeadroomFor(0))
	gcPacer.mu.Lock()
	got := gcPacer.headroom
	gcPacer.mu.Unlock()
	if got != catchUpHeadroom {
		t.Errorf("headroom %d inside a nested pacing, want the outer %d", got, catchUpHeadroom)
	}
	inner()
	outer()
	if gcPacing() {
		t.Error("pacing still on after the outer stop")
	}
}
