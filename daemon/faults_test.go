package daemon

import (
	"testing"
	"time"

	"github.com/agentmap/agentmap/watchers"
)

// A failure met while answering a command's request leaves a back-off
// that runs as it is: asking again while the disk is full must not put
// off the attempt that follows once it has room.
func TestRequestsDoNotDoubleTheBackoff(t *testing.T) {
	clock := watchers.NewManualClock(time.Now().Truncate(time.Second))
	d := New(Options{DataDir: t.TempDir(), Clock: clock})
	d.fail("claude/x")
	d.commitFailed([]uint64{1})
	clock.Advance(time.Second)
	d.fail("claude/x") // the schedule's own attempt: doubled
	d.commitFailed([]uint64{1})
	r, f := *d.retry["claude/x"], d.faults
	if r.delay != 2*time.Second || f.delay != 2*time.Second {
		t.Fatalf("back-off after two failures: map %v, commit %v; want 2s", r.delay, f.delay)
	}
	d.asked = true
	for range 5 {
		clock.Advance(3 * time.Second) // past the attempt due: a request may come first
		d.fail("claude/x")
		d.commitFailed([]uint64{1, 2})
	}
	if got := *d.retry["claude/x"]; got != r {
		t.Errorf("a request's failed write moved the map's retry: %+v, was %+v", got, r)
	}
	if d.faults.delay != f.delay || !d.faults.at.Equal(f.at) || !d.faults.waiting[2] {
		t.Errorf("a request's failed commit moved the retry: delay %v at %v, was %v at %v (waiting %v)",
			d.faults.delay, d.faults.at, f.delay, f.at, d.faults.waiting)
	}
	d.fail("claude/y") // a request's failure with no schedule yet starts one
	if r := d.retry["claude/y"]; r == nil || r.delay != time.Second {
		t.Errorf("a first failure: %+v, want a retry in 1s", r)
	}
}
