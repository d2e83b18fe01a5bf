package daemon

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/state"
)

// writeBasicCopies writes n copies of the basic Claude Code log, each a
// session of its own, with the first lines of each (all when lines is 0),
// and returns their paths and keys in order.
func writeBasicCopies(t *testing.T, home string, n, lines int) (paths, keys []string) {
	t.Helper()
	basic, err := os.ReadFile("../testdata/claude/basic.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		id := fmt.Sprintf("0a1b2c3d-0000-4000-8000-%012d", 200000+i)
		copied := strings.ReplaceAll(string(basic), "0a1b2c3d-0000-4000-8000-000000000001", id)
		if lines > 0 {
			copied = strings.Join(strings.SplitAfter(copied, "\n")[:lines], "")
		}
		p := filepath.Join(home, ".claude/projects/-w-flush", id+".jsonl")
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(copied), 0o600); err != nil {
			t.Fatal(err)
		}
		paths, keys = append(paths, p), append(keys, "claude/"+id)
	}
	return paths, keys
}

// scanWith catches up once, as opt says, into data, gathering flush chunks
// ahead or not, and returns the daemon that did.
func scanWith(t *testing.T, opt Options, data string, ahead bool) *Daemon {
	t.Helper()
	defer func(a bool) { flushAhead = a }(flushAhead)
	flushAhead = ahead
	opt.DataDir = data
	d := New(opt)
	if err := d.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	return d
}

// TestFlushAheadWritesWhatOneChunkAtATimeWrites catches up on the corpus,
// a Codex parent with its late child, and hundreds of small sessions,
// with the maps written at the end from the events read back (many chunks
// of a flush) and written early between logs: a flush that gathers the
// next chunk while it writes the last must leave the same maps and
// records as one that takes its chunks one by one.
func TestFlushAheadWritesWhatOneChunkAtATimeWrites(t *testing.T) {
	corpus := corpusDir(t)
	home := t.TempDir()
	for _, f := range layout(t, corpus, home, 64<<20) {
		f.write(t, len(f.data))
	}
	writeBasicCopies(t, home, 3*flushChunk+40, 0)
	writeParentWithLateChild(t, home)
	opt := Options{Once: true, Roots: homeRoots(runtime.GOOS, home), Logger: slog.New(slog.DiscardHandler)}
	defer func(n int) { holdEvents = n }(holdEvents)
	for _, hold := range []int{0, 50} {
		holdEvents = hold
		one := t.TempDir()
		scanWith(t, opt, one, false)
		ahead := t.TempDir()
		d := scanWith(t, opt, ahead, true)
		if hold == 0 && d.gatheredAhead < 3 {
			t.Errorf("hold %d: %d chunks gathered ahead, want 3 or more", hold, d.gatheredAhead)
		}
		mapsOne, stateOne := caughtUp(t, one)
		mapsAhead, stateAhead := caughtUp(t, ahead)
		if len(mapsOne) < 3*flushChunk {
			t.Fatalf("hold %d: only %d maps", hold, len(mapsOne))
		}
		if diff := diffMaps(mapsAhead, mapsOne); len(diff) > 0 {
			t.Errorf("hold %d: maps differ when chunks are gathered ahead: %v", hold, diff)
		}
		if stateAhead != stateOne {
			t.Errorf("hold %d: records differ:\none by one: %.2000s\nahead:      %.2000s", hold, stateOne, stateAhead)
		}
	}
}

// TestFlushAheadStopsAtDamagedEvents makes the stored events of a session
// that a flush reaches in a chunk gathered ahead unreadable (as damaged)
// until its sources are repaired: the chunk stops there, the session's
// repair (its sources dropped and its log read again) waits for the chunk
// in flight, and the maps are those of a flush that takes its chunks one
// by one under the same fault.
func TestFlushAheadStopsAtDamagedEvents(t *testing.T) {
	home := t.TempDir()
	n := 3 * flushChunk
	_, keys := writeBasicCopies(t, home, n, 20)
	opt := Options{Once: true, Roots: homeRoots(runtime.GOOS, home), Logger: slog.New(slog.DiscardHandler)}
	first := t.TempDir()
	scanWith(t, opt, first, true)
	// Every log gets the rest of its lines: every session is flushed
	// again, from the events stored before and those read now. The
	// damaged session is the last of the second chunk's.
	writeBasicCopies(t, home, n, 0)
	damaged := keys[2*flushChunk-1]
	defer func() { eventsReadFault = nil }()
	scanDamaged := func(ahead bool) (*Daemon, string) {
		var damagedSrcs map[uint64]bool
		reads := 0
		eventsReadFault = func(key string, srcs []*state.Source) error {
			if key != damaged {
				return nil
			}
			if damagedSrcs == nil {
				damagedSrcs = map[uint64]bool{}
				for _, s := range srcs {
					damagedSrcs[s.ID] = true
				}
			}
			for _, s := range srcs {
				if damagedSrcs[s.ID] {
					reads++
					return &state.DamagedError{Session: key}
				}
			}
			return nil
		}
		data := t.TempDir()
		copyTree(t, first, data)
		d := scanWith(t, opt, data, ahead)
		if reads == 0 {
			t.Fatalf("ahead %v: the damaged session's events were never read", ahead)
		}
		return d, data
	}
	_, one := scanDamaged(false)
	d, ahead := scanDamaged(true)
	if d.stoppedAhead == 0 {
		t.Errorf("no chunk gathered ahead stopped at the damaged session (%d gathered ahead)", d.gatheredAhead)
	}
	if d.repair == nil || d.repair.Records == 0 {
		t.Errorf("the damaged events were not repaired: %+v", d.repair)
	}
	mapsOne, stateOne := caughtUp(t, one)
	mapsAhead, stateAhead := caughtUp(t, ahead)
	if len(mapsOne) != n {
		t.Fatalf("%d maps, want %d", len(mapsOne), n)
	}
	if diff := diffMaps(mapsAhead, mapsOne); len(diff) > 0 {
		t.Errorf("maps differ when chunks are gathered ahead over damaged events: %v", diff)
	}
	if stateAhead != stateOne {
		t.Errorf("records differ:\none by one: %.2000s\nahead:      %.2000s", stateOne, stateAhead)
	}
}
