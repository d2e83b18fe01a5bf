package daemon

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Pacing the collector through a catch-up. A catch-up allocates several
// times the bytes it reads (lines, parsed values, events, maps) while
// keeping little of it: with GOGC's default, the heap may grow only by as
// much as is live, so a 40 MB live heap is collected every 40 MB
// allocated, and the collector took a fifth of a scan's CPU. While a
// catch-up runs, the heap is instead allowed a headroom above what is
// live (see below, or a quarter of the live heap when that is larger):
// collections are rarer on the small heaps of most catch-ups, and a large
// live heap is not let double as GOGC's default would (when the records
// of 100,000 sessions were some 200 MiB live: a peak of 377 MiB against
// 470, for the same CPU). Once the catch-up is
// done the default comes back, for the daemon's long idle life. A GOGC or
// GOMEMLIMIT set in the environment is the user's choice and is left
// alone.
//
// The headroom is sized by the catch-up (catchUpHeadroomFor): a fifth of
// the bytes it has to read, between 32 and 128 MiB. Headroom is not free:
// every page the heap grows into is a page fault the first time it is
// touched, and on a virtual machine a fault costs microseconds (some 6 µs
// a page on the reference machine: 128 MiB of headroom took 0.15–0.2 s of
// a 10x corpus scan's 1.8 s of CPU, more than the collections it saved).
// A catch-up of a few hundred megabytes collects a few more times with
// less, for less CPU and a smaller peak; one of gigabytes, whose
// collections the headroom saves by the dozen, gets all of it.
// The final flush of a one-shot catch-up keeps the fixed headroom: it only
// builds the sessions still held and those read back, and a headroom is
// grown into only as far as the work allocates.
//
// Opening the state database and loading its records is paced too, with
// less headroom (loadHeadroom): it allocates a record's worth of garbage
// for each record it reads while the records kept grow, and GOGC's
// default let a daemon's heap of 100,000 sessions' records double while
// it loaded them.
const (
	catchUpHeadroom    = 128 << 20
	catchUpMinHeadroom = 32 << 20
	loadHeadroom       = 32 << 20
	catchUpMinGOGC     = 25
)

// catchUpHeadroomFor is the headroom of a catch-up with toRead bytes of
// logs to read.
func catchUpHeadroomFor(toRead int64) uint64 {
	return uint64(min(max(toRead/5, catchUpMinHeadroom), catchUpHeadroom))
}

// gcPacing reports whether a pacing is on, so that a nested caller need
// not size a headroom that would not be used.
func gcPacing() bool {
	gcPacer.mu.Lock()
	defer gcPacer.mu.Unlock()
	return gcPacer.depth > 0
}

// paceGC gives the collector headroom bytes above the live heap until stop
// is called. Calls may nest (only the outermost paces).
func paceGC(headroom uint64) (stop func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	gcPacer.mu.Lock()
	defer gcPacer.mu.Unlock()
	gcPacer.depth++
	if gcPacer.depth == 1 {
		gcPacer.headroom = headroom
		gcPacer.base = debug.SetGCPercent(100)
		gcPacer.round++
		gcPacer.retune(gcPacer.round)
		armGCPacer(gcPacer.round)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			gcPacer.mu.Lock()
			defer gcPacer.mu.Unlock()
			gcPacer.depth--
			if gcPacer.depth == 0 {
				gcPacer.round++ // the armed sentinel of this round stops re-arming
				debug.SetGCPercent(gcPacer.base)
			}
		})
	}
}

type pacer struct {
	mu       sync.Mutex
	depth    int
	round    uint64 // which pacing the sentinel belongs to
	headroom uint64
	base     int // the GOGC to restore
}

var gcPacer pacer

// retune sets GOGC so that the next collection comes headroom bytes above
// the heap that was live after the last one. Called with mu held.
func (p *pacer) retune(round uint64) {
	if p.round != round || p.depth == 0 {
		return
	}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	// Before the first collection nothing is measured yet, and a small
	// heap would be given a hundredfold growth: the floor keeps the goal
	// near headroom.
	live := uint64(16 << 20)
	if s[0].Value.Kind() == metrics.KindUint64 {
		live = max(live, s[0].Value.Uint64())
	}
	percent := int(p.headroom * 100 / live)
	debug.SetGCPercent(max(percent, catchUpMinGOGC))
}

// armGCPacer leaves a sentinel for the collector: when a cycle finds it
// unreachable, its cleanup retunes GOGC for the new live heap and arms the
// next one, until the pacing round ends.
func armGCPacer(round uint64) {
	sentinel := new([16]byte)
	runtime.AddCleanup(sentinel, func(round uint64) {
		gcPacer.mu.Lock()
		defer gcPacer.mu.Unlock()
		if gcPacer.round != round || gcPacer.depth == 0 {
			return
		}
		gcPacer.retune(round)
		armGCPacer(round)
	}, round)
}
