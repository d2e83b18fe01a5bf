package daemon

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentmap/agentmap/watchers"
)

// syncBuffer collects log output written by another goroutine or a
// daemon process while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String and Len read the output so far, as a daemon still writes it.
func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func (s *syncBuffer) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Len()
}

func (s *syncBuffer) count(sub string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Count(s.b.String(), sub)
}

// The idle and turn-end quiet times run on the daemon's clock: with a
// manual clock, nothing is written before its time, and everything after.
func TestIdleOnTheClock(t *testing.T) {
	r := newRig(t)
	r.idle = 15 * time.Minute
	clock := watchers.NewManualClock(time.Now().Truncate(time.Second))
	var logs syncBuffer
	o := r.opts(false)
	o.Clock, o.Debounce, o.Rescan = clock, 100*time.Millisecond, time.Hour
	o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- New(o).Run(ctx) }()
	defer func() { cancel(); <-done }()

	// appendNow writes lines stamped with the clock's time, the daemon's
	// measure of activity.
	appendNow := func(lines ...string) {
		r.append("i.jsonl", lines...)
		now := clock.Now()
		os.Chtimes(filepath.Join(r.proj, "i.jsonl"), now, now)
	}
	// commit waits for the n-th commit, moving the clock past the debounce
	// until the watcher's notification has been taken in.
	commit := func(n int) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for logs.count("msg=committed") < n {
			if time.Now().After(deadline) {
				t.Fatalf("no commit %d:\n%s", n, logs.b.String())
			}
			clock.Advance(50 * time.Millisecond)
			time.Sleep(5 * time.Millisecond)
		}
	}
	settle := func() { time.Sleep(100 * time.Millisecond) } // let the loop take a wake-up
	waitMap := func(want string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for r.mapOf("i") != want {
			if time.Now().After(deadline) {
				t.Fatalf("map:\n%s\nwant:\n%s", r.mapOf("i"), want)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}

	appendNow(line("i", "user"))
	commit(1)
	clock.Advance(14 * time.Minute)
	settle()
	if r.mapOf("i") != "" {
		t.Fatal("map written before the idle time")
	}
	clock.Advance(2 * time.Minute)
	waitMap(fakeMap(map[string][]string{"": {"user"}}))

	// After a turn end, a third of the idle time is enough.
	appendNow(line("i", "llm"), line("i", "turn_end"))
	commit(2)
	clock.Advance(4 * time.Minute)
	settle()
	if r.mapOf("i") != fakeMap(map[string][]string{"": {"user"}}) {
		t.Fatal("map rewritten before the turn-end quiet time")
	}
	clock.Advance(2 * time.Minute)
	waitMap(fakeMap(map[string][]string{"": {"user", "llm", "turn_end"}}))
}

// A map that cannot be written is tried again after 1 s, 2 s, 4 s… on the
// daemon's clock, and written once the store is writable again.
func TestBackoffOnTheClock(t *testing.T) {
	r := newRig(t)
	r.idle = time.Minute
	clock := watchers.NewManualClock(time.Now().Truncate(time.Second))
	var logs syncBuffer
	o := r.opts(false)
	o.Clock, o.Debounce, o.Rescan = clock, 100*time.Millisecond, time.Hour
	o.Logger = slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	os.MkdirAll(filepath.Join(r.data, "maps"), 0o700)
	blocker := filepath.Join(r.data, "maps", "claude")
	os.WriteFile(blocker, nil, 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- New(o).Run(ctx) }()
	defer func() { cancel(); <-done }()

	r.append("b.jsonl", line("b", "user"))
	now := clock.Now()
	os.Chtimes(filepath.Join(r.proj, "b.jsonl"), now, now)
	until := func(what string, ok func() bool, step time.Duration) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for !ok() {
			if time.Now().After(deadline) {
				t.Fatalf("no %s:\n%s", what, logs.b.String())
			}
			clock.Advance(step)
			time.Sleep(5 * time.Millisecond)
		}
	}
	failures := func() int { return logs.count("cannot write the map") }
	until("commit", func() bool { return logs.count("msg=committed") > 0 }, 50*time.Millisecond)
	clock.Advance(time.Minute)
	until("first failure", func() bool { return failures() == 1 }, 0)
	for i, wait := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second} {
		clock.Advance(wait - 100*time.Millisecond)
		time.Sleep(50 * time.Millisecond)
		if failures() != i+1 {
			t.Fatalf("attempt %d came before %v", i+2, wait)
		}
		clock.Advance(100 * time.Millisecond)
		until("a retry", func() bool { return failures() == i+2 }, 0)
	}
	os.Remove(blocker)
	until("the map", func() bool { return r.mapOf("b") != "" }, time.Second)
	if got, want := r.mapOf("b"), fakeMap(map[string][]string{"": {"user"}}); got != want {
		t.Fatalf("map:\n%s\nwant:\n%s", got, want)
	}
}
