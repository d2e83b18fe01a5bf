package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/daemon"
)

func TestTimeLeft(t *testing.T) {
	for _, tc := range []struct {
		elapsed     time.Duration
		done, total int64
		want        string
	}{
		{4 * time.Second, 50, 100, ""},   // too soon
		{time.Minute, 1, 100, ""},        // too little read
		{10 * time.Second, 100, 100, ""}, // done
		{10 * time.Second, 0, 100, ""},   // nothing read yet
		{10 * time.Second, 25, 100, "about 30 s left"},
		{10 * time.Second, 80, 100, "about 5 s left"}, // 2.5 s, rounded up
		{10 * time.Second, 99, 100, "about 5 s left"},
		{30 * time.Second, 10, 100, "about 5 min left"}, // 270 s
		{10 * time.Minute, 10, 100, "about 1 h 30 min left"},
		// Rounded up, never to 60 of a unit.
		{58 * time.Second, 50, 100, "about 1 min left"},
		{59*time.Minute + 40*time.Second, 50, 100, "about 1 h left"},
		{119*time.Minute + 40*time.Second, 50, 100, "about 2 h left"},
		{61 * time.Minute, 50, 100, "about 1 h 1 min left"},
	} {
		if got := timeLeft(tc.elapsed, tc.done, tc.total); got != tc.want {
			t.Errorf("timeLeft(%v, %d, %d) = %q, want %q", tc.elapsed, tc.done, tc.total, got, tc.want)
		}
	}
}

// A catch-up under way says how long it will take at its rate so far,
// reckoned on the daemon's clock as it answered.
func TestStatusSaysTheCatchUpsTimeLeft(t *testing.T) {
	started := time.Date(2026, 5, 1, 9, 0, 0, 0, time.UTC)
	// The wall clock says the catch-up started an hour after the daemon
	// (it jumped): the rate is the daemon's own reckoning, on its
	// monotonic clock.
	st := daemon.Status{Started: started, Uptime: 40 * time.Second, DataDir: "/d",
		CatchUp: daemon.CatchUp{Running: true, Done: 250e6, Total: 1000e6, Started: started.Add(time.Hour), Elapsed: 20 * time.Second}}
	var b bytes.Buffer
	writeStatus(&b, "running", "running", true, st, false, time.Time{})
	if want := "catch-up:   25% (250.0 MB of 1000.0 MB of existing history read, about 1 min left)\n"; !strings.Contains(b.String(), want) {
		t.Errorf("status lacks %q:\n%s", want, b.String())
	}
	st.CatchUp.Elapsed = 2 * time.Second // two seconds in: no estimate yet
	b.Reset()
	writeStatus(&b, "running", "running", true, st, false, time.Time{})
	if !strings.Contains(b.String(), "catch-up:   25% (250.0 MB of 1000.0 MB of existing history read)\n") {
		t.Errorf("an estimate two seconds in:\n%s", b.String())
	}
}

// scan's progress lines say the time left once it can be told.
func TestProgressSaysTheTimeLeft(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b)
	p.update(0, 100e6, 0)
	p.started = time.Now().Add(-10 * time.Second)
	p.update(50e6, 100e6, 3)
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || lines[0] != "scan: 0% (0.0 kB of 100.0 MB, 0 sessions)" ||
		!strings.HasPrefix(lines[1], "scan: 50% (50.0 MB of 100.0 MB, 3 sessions, about 1") || !strings.HasSuffix(lines[1], " s left)") {
		t.Errorf("progress lines:\n%s", b.String())
	}
}

// What the first update counted already took no time seen by the
// progress: the rate is that of the reads after it.
func TestProgressRateAfterTheFirstUpdate(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b)
	p.update(30e6, 100e6, 1) // a whole database, counted at once
	p.started = time.Now().Add(-8 * time.Second)
	p.update(40e6, 100e6, 2) // 10 MB in 8 s: 48 s left, not 12
	if !strings.Contains(b.String(), "scan: 40% (40.0 MB of 100.0 MB, 2 sessions, about 50 s left)") {
		t.Errorf("progress lines:\n%s", b.String())
	}
}

// scan's writing of every map again says how far it has gone, a line
// every 10% off a terminal.
func TestProgressOfTheRewrite(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&b)
	p.rewriting(200)
	for _, left := range []int{200, 190, 150, 150, 79, 0} {
		p.rewriteLeft(left)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	want := []string{
		"scan: writing the maps again: 0% (0 of 200 sessions)",
		"scan: writing the maps again: 25% (50 of 200 sessions)",
		"scan: writing the maps again: 60% (121 of 200 sessions)",
		"scan: writing the maps again: 100% (200 of 200 sessions)",
	}
	if len(lines) != 1+len(want) || !strings.HasPrefix(lines[0], "scan: the maps were written by an earlier version") || strings.Join(lines[1:], "\n") != strings.Join(want, "\n") {
		t.Errorf("progress lines:\n%s", b.String())
	}
}
