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
	roots := homeRoots(runtime.GOOS, home)
	defer func(n int) { holdEvents = n }(holdEvents)
	run := func(hold int) (map[string][]byte, string) {
		holdEvents = hold
		data := t.TempDir()
		d := New(Options{DataDir: data, Once: true, Roots: roots, Logger: slog.New(slog.DiscardHandler)})
		if err := d.Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if hold > 0 && d.held.events != 0 {
			t.Errorf("hold %d: %d events still held at the end", hold, d.held.events)
		}
		if hold == 50 && d.held.early < groupBatches/2 {
			t.Errorf("hold %d: only %d sessions written early", hold, d.held.early)
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
