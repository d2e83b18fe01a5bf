package daemon

import (
	"context"
	"encoding/json"
	"log/slog"
	"runtime"
	"slices"
	"sort"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
)

// TestReadAheadCommitsWhatTheLoopCommits catches up on the corpus with
// the parse workers and without them: the maps, the sources' cursors and
// counts, and every session's events must be the same, batch for batch.
func TestReadAheadCommitsWhatTheLoopCommits(t *testing.T) {
	roots := corpusRoots(t)
	run := func(workers int) (map[string][]byte, string) {
		data := t.TempDir()
		d := New(Options{DataDir: data, Once: true, Roots: roots, ParseWorkers: workers,
			Logger: slog.New(slog.DiscardHandler)})
		if err := d.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if workers > 1 && d.readAhead < 20 || workers == 1 && d.readAhead > 0 {
			t.Fatalf("%d workers: %d logs read ahead", workers, d.readAhead)
		}
		t.Logf("%d workers: %d logs read ahead", workers, d.readAhead)
		return caughtUp(t, data)
	}
	mapsLoop, stateLoop := run(1)
	mapsAhead, stateAhead := run(4)
	sameCatchUp(t, "with parse workers", mapsLoop, stateLoop, mapsAhead, stateAhead)
}

// corpusRoots lays the corpus out in a home as the agents keep it.
func corpusRoots(t *testing.T) []watchers.Root {
	corpus := corpusDir(t)
	home := t.TempDir()
	for _, f := range layout(t, corpus, home, 64<<20) {
		f.write(t, len(f.data))
	}
	return homeRoots(runtime.GOOS, home)
}

// sameCatchUp fails unless a catch-up made the maps and records another did.
func sameCatchUp(t *testing.T, how string, maps map[string][]byte, state string, maps2 map[string][]byte, state2 string) {
	t.Helper()
	if len(maps) < 40 {
		t.Fatalf("only %d maps from the corpus", len(maps))
	}
	if d := diffMaps(maps2, maps); len(d) > 0 {
		t.Errorf("maps differ %s: %v", how, d)
	}
	if state2 != state {
		t.Errorf("state differs %s:\nbefore: %.2000s\nafter:  %.2000s", how, state, state2)
	}
}

// dumpState renders the records a catch-up leaves, without the times a
// run takes from the clock.
func dumpState(t *testing.T, db *state.DB) string {
	t.Helper()
	srcs, sessions, err := db.Load()
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(srcs, func(i, j int) bool { return srcs[i].Path < srcs[j].Path })
	sort.Slice(sessions, func(i, j int) bool { return sessions[i].Key < sessions[j].Key })
	type srcView struct {
		S     state.Source
		Carry []byte
	}
	var out []any
	for _, s := range srcs {
		c := *s
		c.ID = 0 // numbered in visit order in both runs, but not compared
		carry, err := db.Carry(s.ID)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, srcView{c, carry})
	}
	for _, s := range sessions {
		c := *s
		if c.Flush != nil {
			f := *c.Flush
			f.AtMs = 0
			c.Flush = &f
		}
		var events [][]event.Event
		if err := db.Events(s.Key, func(_ uint64, evs []event.Event) error {
			events = append(events, evs)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		out = append(out, c, events)
	}
	b, err := json.Marshal(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(srcs) == 0 {
		t.Fatal("no sources recorded")
	}
	return string(b)
}

// TestWalkInPiecesCommitsWhatOneWalkCommits catches up on the corpus with
// the walk ingested whole, in pieces of three logs and log by log: the
// maps and the records must be the same (a piece ends where the pieces'
// commits fall; a session's logs may straddle two pieces, its subagents'
// logs come in a later one).
func TestWalkInPiecesCommitsWhatOneWalkCommits(t *testing.T) {
	roots := corpusRoots(t)
	run := func(chunk int, roots []watchers.Root) (map[string][]byte, string) {
		defer func(was int) { walkChunk = was }(walkChunk)
		walkChunk = chunk
		data := t.TempDir()
		d := New(Options{DataDir: data, Once: true, Roots: roots, Logger: slog.New(slog.DiscardHandler)})
		if err := d.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		return caughtUp(t, data)
	}
	mapsWhole, stateWhole := run(1<<20, roots)
	mapsPieces, statePieces := run(3, roots)
	sameCatchUp(t, "with the walk in pieces", mapsWhole, stateWhole, mapsPieces, statePieces)
	// Every root given twice: each log is still read once, as one log.
	mapsTwice, stateTwice := run(3, append(slices.Clone(roots), roots...))
	sameCatchUp(t, "with every root given twice", mapsWhole, stateWhole, mapsTwice, stateTwice)
	mapsPieces, statePieces = run(1, roots)
	sameCatchUp(t, "with the walk ingested log by log", mapsWhole, stateWhole, mapsPieces, statePieces)
}
