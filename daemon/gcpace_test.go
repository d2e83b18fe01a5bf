package daemon

import (
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
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

// A settled daemon's heap grows by 32 MiB or half of what is live
// between collections, never by more than GOGC's default would let it.
func TestSettledGOGC(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, defaultGOGC},
		{16 << 20, defaultGOGC},
		{32 << 20, defaultGOGC},
		{48 << 20, 66},
		{64 << 20, settledMinGOGC},
		{190 << 20, settledMinGOGC}, // the records of 100,000 logs
		{2 << 30, settledMinGOGC},
	} {
		if got := settledGOGC(c.live); got != c.want {
			t.Errorf("settledGOGC(%d MiB) = %d, want %d", c.live>>20, got, c.want)
		}
	}
}

// Settled, a large live heap is paced by the settled GOGC; a catch-up
// paces as one and the settled pacing comes back after it; unsettled, the
// default is back.
func TestSettledPacingAroundACatchUp(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT is set for this test binary")
	}
	if p := gcPercent(); p != defaultGOGC {
		t.Fatalf("GOGC = %d before settling, want the default: an earlier test left a pacing on", p)
	}
	unsettle := settleGC()
	defer unsettle()
	// Settled on a small heap: the default.
	waitGCPercent(t, "settled on a small heap", defaultGOGC)
	// Then 160 MiB live, as a daemon following some 90,000 logs holds
	// (without pointers, so that marking it costs nothing): the next
	// cycles' cleanups retune for it.
	live := make([]byte, 160<<20)
	waitGCPercent(t, "settled with 160 MiB live", settledMinGOGC)
	stop := paceGC(catchUpHeadroom)
	// 128 MiB above some 160 MiB live (and the test binary's own heap).
	if p := gcPercent(); p <= settledMinGOGC || p > catchUpHeadroom*100/(160<<20) {
		t.Errorf("a catch-up while settled: GOGC = %d, want its headroom's, about 80", p)
	}
	stop()
	waitGCPercent(t, "settled again after a catch-up", settledMinGOGC)
	unsettle()
	unsettle() // a second call is a no-op
	if p := gcPercent(); p != defaultGOGC {
		t.Errorf("unsettled: GOGC = %d, want %d", p, defaultGOGC)
	}
	runtime.GC()
	runtime.GC()
	time.Sleep(10 * time.Millisecond) // a stale cleanup would have run
	if p := gcPercent(); p != defaultGOGC {
		t.Errorf("a cleanup after unsettling retuned GOGC to %d", p)
	}
	runtime.KeepAlive(live)
}

// waitGCPercent collects until GOGC is want (a cycle's cleanup retunes it,
// in its own time after the cycle) or fails after a while.
func waitGCPercent(t *testing.T, what string, want int) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		runtime.GC()
		p := gcPercent()
		if p == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: GOGC = %d, want %d", what, p, want)
		}
		time.Sleep(time.Millisecond)
	}
}

// The follow loop settles and gives the memory back once, after its first
// catch-up is read and the maps then due are written, and unsettles when
// it stops.
func TestFollowSettlesAfterItsCatchUp(t *testing.T) {
	t.Setenv("GOGC", "")
	t.Setenv("GOMEMLIMIT", "")
	settled := func() int {
		gcPacer.mu.Lock()
		defer gcPacer.mu.Unlock()
		return gcPacer.settled
	}
	if n := settled(); n != 0 {
		t.Fatalf("settled (%d) before any daemon ran", n)
	}
	r := newRig(t)
	r.idle = time.Minute
	r.append("f.jsonl", line("f", "user"))
	// Long quiet: due at once, so the catch-up writes its map.
	old := time.Now().Add(-time.Hour)
	if err := os.Chtimes(filepath.Join(r.proj, "f.jsonl"), old, old); err != nil {
		t.Fatal(err)
	}
	type release struct {
		mapWritten bool
		settled    int
	}
	releases := make(chan release, 4)
	orig := releaseMemory
	releaseMemory = func() {
		releases <- release{r.mapOf("f") != "", settled()}
		orig()
	}
	defer func() { releaseMemory = orig }()
	stop := follow(t, New(r.opts(false)))
	defer stop()
	select {
	case rel := <-releases:
		if !rel.mapWritten {
			t.Error("memory given back before the catch-up's map was written")
		}
		if rel.settled != 1 {
			t.Errorf("settled %d when the memory was given back, want 1", rel.settled)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("no memory given back after the catch-up")
	}
	r.append("f.jsonl", line("f", "llm")) // more work after: no second release
	time.Sleep(200 * time.Millisecond)
	stop()
	if n := len(releases); n != 0 {
		t.Errorf("memory given back %d more times", n)
	}
	if n := settled(); n != 0 {
		t.Errorf("stopped daemon still settled (%d)", n)
	}
}
