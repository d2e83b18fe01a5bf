package watchers

import "time"

// Clock is the seam for time in the watcher and the daemon: debounce,
// rescans, idle flushes and back-off all go through it, so tests can drive
// them without sleeping.
type Clock interface {
	Now() time.Time
	// After is time.After: a channel that receives once d has passed.
	After(d time.Duration) <-chan time.Time
}

// SystemClock is the real clock.
type SystemClock struct{}

// Now implements Clock.
func (SystemClock) Now() time.Time { return time.Now() }

// After implements Clock.
func (SystemClock) After(d time.Duration) <-chan time.Time { return time.After(d) }
