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

// TestHeldEventsMakeTheMapsOfReadBack catches up on the corpus and a few
// hundred small sessions with the maps built from the events read back
// from the state database (nothing held), from the events held since
// their commit, and with so little held that sessions are written early,
// between logs, one of them fed again afterwards by a subagent file met
// later in the scan: the maps and every record left must be the same.
func TestHeldEventsMakeTheMapsOfReadBack(t *testing.T) {
	corpus := corpusDir(t)
	home := t.TempDir()
	for _, f := range layout(t, corpus, home, 64<<20) {
		f.write(t, len(f.data))
	}
	// The older flat layout of a subagent file, routed by the session id
	// inside, in a project directory the scan reaches last.
	lane, err := os.ReadFile(filepath.Join(home, ".claude/projects/-w-app/ae4a77f8-aedd-4bc1-888f-c94edc91af04/subagents/agent-aac57f5.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	late := filepath.Join(home, ".claude/projects/-w-zz/agent-a0late0.jsonl")
	os.MkdirAll(filepath.Dir(late), 0o700)
	if err := os.WriteFile(late, lane, 0o600); err != nil {
		t.Fatal(err)
	}
	// Enough small sessions for the catch-up to commit in several groups,
	// which is when events start being held.
	basic, err := os.ReadFile("../testdata/claude/basic.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	for i := range groupBatches + 64 {
		id := fmt.Sprintf("0a1b2c3d-0000-4000-8000-%012d", 100000+i)
		copied := strings.ReplaceAll(string(basic), "0a1b2c3d-0000-4000-8000-000000000001", id)
		p := filepath.Join(home, ".claude/projects/-w-copies", id+".jsonl")
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, []byte(copied), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writeParentWithLateChild(t, home)
	roots := homeRoots(runtime.GOOS, home)
	defer func(n int) { holdEvents = n }(holdEvents)
	lateKeys := []string{"claude/ae4a77f8-aedd-4bc1-888f-c94edc91af04", "codex/0190aaaa-0000-7000-8000-00000000a001"}
	var counts []int
	run := func(hold int) (map[string][]byte, string) {
		holdEvents = hold
		data := t.TempDir()
		var sessions int
		d := New(Options{DataDir: data, Once: true, Roots: roots, Logger: slog.New(slog.DiscardHandler),
			Progress: func(_, _ int64, n int) { sessions = n }})
		if err := d.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		counts = append(counts, sessions)
		if hold > 0 && d.held.events != 0 {
			t.Errorf("hold %d: %d events still held at the end", hold, d.held.events)
		}
		if hold == 50 {
			if d.held.early < groupBatches/2 {
				t.Errorf("hold %d: only %d sessions written early", hold, d.held.early)
			}
			// Written early, most sessions leave memory; those a late
			// subagent file or child rollout joins are read back.
			if !keysHashAlike && (d.retired.len() < groupBatches/2 || len(d.sessions) > d.retired.len()) {
				t.Errorf("hold %d: %d sessions retired, %d kept in memory", hold, d.retired.len(), len(d.sessions))
			}
			for _, key := range lateKeys {
				if (!keysHashAlike && d.retired.has(key)) || d.sessions[key] == nil {
					t.Errorf("hold %d: %s, which a later log joins, was not read back", hold, key)
				}
			}
			if !keysHashAlike && d.restored < len(lateKeys) {
				t.Errorf("hold %d: %d sessions read back, want %d or more", hold, d.restored, len(lateKeys))
			}
		}
		return caughtUp(t, data)
	}
	mapsBack, stateBack := run(0)
	if len(mapsBack) < 40+groupBatches+64 {
		t.Fatalf("only %d maps from the corpus", len(mapsBack))
	}
	for _, hold := range []int{holdEvents, 50} {
		maps, st := run(hold)
		if d := diffMaps(maps, mapsBack); len(d) > 0 {
			t.Errorf("hold %d: maps differ from those built from the state database: %v", hold, d)
		}
		if st != stateBack {
			t.Errorf("hold %d: records differ:\nread back: %.2000s\nheld:      %.2000s", hold, stateBack, st)
		}
	}
	for _, n := range counts[1:] {
		if n != counts[0] {
			t.Errorf("sessions counted at the end: %v, not the same whatever is held", counts)
		}
	}
}

// writeParentWithLateChild writes into home a Codex parent rollout among
// many of one day, and its child rollout in the next day's directory: the
// parent is written early, and its child, met later, makes it a lane of
// the parent's map. (Enough rollouts for the catch-up to commit a group
// before the child is met: only committed events count towards what is
// held.)
func writeParentWithLateChild(t *testing.T, home string) {
	t.Helper()
	parent, err := os.ReadFile("../testdata/codex/rollout-2026-03-01T09-00-00-0190aaaa-0000-7000-8000-00000000a001.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	child, err := os.ReadFile("../testdata/codex/rollout-2026-03-01T09-00-26-0190aaab-0000-7000-8000-00000000b002.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	day := filepath.Join(home, ".codex/sessions/2026/03/01")
	os.MkdirAll(day, 0o700)
	os.WriteFile(filepath.Join(day, "rollout-2026-03-01T09-00-00-0190aaaa-0000-7000-8000-00000000a001.jsonl"), parent, 0o600)
	for i := range groupBatches + 40 {
		id := fmt.Sprintf("0190aaaa-0000-7000-8000-%012d", 900+i)
		copied := strings.ReplaceAll(string(parent), "0190aaaa-0000-7000-8000-00000000a001", id)
		os.WriteFile(filepath.Join(day, "rollout-2026-03-01T09-00-01-"+id+".jsonl"), []byte(copied), 0o600)
	}
	next := filepath.Join(home, ".codex/sessions/2026/03/02")
	os.MkdirAll(next, 0o700)
	os.WriteFile(filepath.Join(next, "rollout-2026-03-01T09-00-26-0190aaab-0000-7000-8000-00000000b002.jsonl"), child, 0o600)
}

// caughtUp returns the maps and the records a catch-up left in data.
func caughtUp(t *testing.T, data string) (map[string][]byte, string) {
	t.Helper()
	db, err := state.Open(filepath.Join(data, "state.db"), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	return readMaps(t, MapsDir(data)), dumpState(t, db)
}
