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
// 470, for the same CPU). A GOGC or GOMEMLIMIT set in the environment
// is the user's choice and is left alone.
//
// The headroom is sized by the catch-up (catchUpHeadroomFor): a fifth of
// the bytes it has to read (in a scan, those of the piece of the walk at
// hand: walkchunks.go), between 32 and 128 MiB. Headroom is not free:
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
// A daemon's long life after its first catch-up is paced too (settleGC
// and releaseMemory, once the first catch-up is read and the maps then
// due are written): GOGC's default lets the heap grow by all that is live
// before a collection, and the daemon's live heap is the records of every
// log it follows (some 160-190 MB at 100,000 logs), so that it sat at
// about twice that, 364-377 MiB of RSS, while idle. (Writing the
// catch-up's maps settled too lowered its peak from 371-378 MiB to
// 301-311, but took 93 collections instead of 77, 3-4 s more of the
// collector's CPU: a catch-up is paid once, in time, and the peak is
// brief.) Settled, the heap may
// grow by steadyHeadroom or half of what is live, whichever is more, but
// never by more than GOGC's default would let it (a small heap keeps the
// default); and what the catch-up grew into is given back once. An idle
// daemon allocates little (some 3 MB a rescan of 100,000 logs), so that
// even with a rescan every 5 seconds it fills half of 160 MB no sooner
// than the runtime forces a collection anyway (every two minutes); a
// quarter cost a collection a minute there (0.2 s of CPU). A catch-up
// later in its life (new roots, a burst of new logs) is paced as one, and
// the settled pacing comes back after it.
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
	steadyHeadroom     = 32 << 20
	settledMinGOGC     = 50
	defaultGOGC        = 100
)

// catchUpHeadroomFor is the headroom of a catch-up with toRead bytes of
// logs to read.
func catchUpHeadroomFor(toRead int64) uint64 {
	return uint64(min(max(toRead/5, catchUpMinHeadroom), catchUpHeadroom))
}

// gcPacing reports whether a catch-up's pacing is on (a settled daemon's
// is not one), so that a nested caller need not size a headroom that
// would not be used.
func gcPacing() bool {
	gcPacer.mu.Lock()
	defer gcPacer.mu.Unlock()
	return gcPacer.depth > 0
}

// usersGC reports whether the environment sets the collector's pacing.
func usersGC() bool { return os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" }

// paceGC gives the collector headroom bytes above the live heap until stop
// is called. Calls may nest (only the outermost paces).
func paceGC(headroom uint64) (stop func()) {
	if usersGC() {
		return func() {}
	}
	gcPacer.mu.Lock()
	defer gcPacer.mu.Unlock()
	gcPacer.depth++
	if gcPacer.depth == 1 {
		gcPacer.headroom = headroom
		gcPacer.restart()
	}
	return gcPacer.once(func(p *pacer) {
		p.depth--
		if p.depth == 0 {
			p.restart() // settled, or the default back
		}
	})
}

// settleGC paces the collector for a daemon's life after its first
// catch-up, until unsettle is called.
func settleGC() (unsettle func()) {
	if usersGC() {
		return func() {}
	}
	gcPacer.mu.Lock()
	defer gcPacer.mu.Unlock()
	gcPacer.settled++
	if gcPacer.settled == 1 && gcPacer.depth == 0 {
		gcPacer.restart()
	}
	return gcPacer.once(func(p *pacer) {
		p.settled--
		if p.settled == 0 && p.depth == 0 {
			p.restart()
		}
	})
}

// releaseMemory gives back to the system the memory a catch-up grew into:
// a collection, then the free pages returned. (The collection's cleanup
// retunes a settled pacing for what it found live, in its own time.) A
// variable, so that a test can see when it is called.
var releaseMemory = func() {
	if !usersGC() {
		debug.FreeOSMemory()
	}
}

type pacer struct {
	mu       sync.Mutex
	depth    int    // catch-ups pacing (nested)
	settled  int    // daemons settled after their first catch-up
	round    uint64 // which pacing the sentinel belongs to
	headroom uint64 // a catch-up's
}

// once returns a stop that runs end, with mu held, the first time it is
// called.
func (p *pacer) once(end func(*pacer)) (stop func()) {
	var once sync.Once
	return func() {
		once.Do(func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			end(p)
		})
	}
}

// restart begins a new round for the pacing now in force: the sentinel of
// the last round stops re-arming, and with no pacing the default GOGC
// comes back (paceGC and settleGC change nothing when the environment
// sets GOGC or GOMEMLIMIT). Called with mu held.
func (p *pacer) restart() {
	p.round++
	if p.depth == 0 && p.settled == 0 {
		debug.SetGCPercent(defaultGOGC)
		return
	}
	p.retune(p.round)
	armGCPacer(p.round)
}

var gcPacer pacer

// retune sets GOGC so that the next collection comes the catch-up's
// headroom above the heap that was live after the last one, or, settled,
// as settledGOGC has it. Called with mu held.
func (p *pacer) retune(round uint64) {
	if p.round != round || p.depth == 0 && p.settled == 0 {
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
	if p.depth == 0 { // settled
		debug.SetGCPercent(settledGOGC(live))
		return
	}
	percent := int(p.headroom * 100 / live)
	debug.SetGCPercent(max(percent, catchUpMinGOGC))
}

// settledGOGC is the GOGC of a settled daemon whose live heap is live
// bytes: steadyHeadroom or half of it above it, at most the default.
func settledGOGC(live uint64) int {
	return min(max(int(steadyHeadroom*100/max(live, 1)), settledMinGOGC), defaultGOGC)
}

// armGCPacer leaves a sentinel for the collector: when a cycle finds it
// unreachable, its cleanup retunes GOGC for the new live heap and arms the
// next one, until the pacing round ends.
func armGCPacer(round uint64) {
	sentinel := new([16]byte)
	runtime.AddCleanup(sentinel, func(round uint64) {
		gcPacer.mu.Lock()
		defer gcPacer.mu.Unlock()
		if gcPacer.round != round || gcPacer.depth == 0 && gcPacer.settled == 0 {
			return
		}
		gcPacer.retune(round)
		armGCPacer(round)
	}, round)
}
