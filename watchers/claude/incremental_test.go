package claude

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
)

// restoredStream parses a file line by line, serialising the carry-state
// after every line and continuing with a parser restored from it, as the
// daemon does across restarts.
func restoredStream(t *testing.T, path string) []event.Event {
	t.Helper()
	src, err := Identify(path, firstLine(t, path))
	if err != nil {
		t.Fatal(err)
	}
	p := NewParser(src)
	if m, ok := ReadLaneMeta(path); ok {
		p.SetLaneMeta(m)
	}
	var out []event.Event
	n := 0
	eachLine(t, path, func(line []byte) {
		n++
		out, _ = p.Line(line, out)
		st, err := p.State()
		if err != nil {
			t.Fatalf("line %d: state: %v", n, err)
		}
		if p, err = Restore(src, st); err != nil {
			t.Fatalf("line %d: restore: %v", n, err)
		}
	})
	return out
}

func TestIncrementalEquivalence(t *testing.T) {
	files := fixtures(t)
	if !testing.Short() {
		if dir := corpusDirIfPresent(); dir != "" {
			more, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
			files = append(files, more...)
		}
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			whole, _ := parseFixture(t, path)
			pieces := restoredStream(t, path)
			if !reflect.DeepEqual(normalise(t, whole), normalise(t, pieces)) {
				t.Errorf("line-by-line with restores differs from one pass: %d vs %d events", len(pieces), len(whole))
			}
		})
	}
}

// normalise compares streams by their stored form (nil and empty slices
// are the same once stored).
func normalise(t *testing.T, events []event.Event) []byte {
	var buf bytes.Buffer
	for _, e := range events {
		buf.Write(mustJSON(t, e))
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

func TestRestoreRejectsBadState(t *testing.T) {
	src := sourceFor("0a1b2c3d-0000-4000-8000-000000000001")
	for _, st := range []string{`{`, `{"v":99}`, `[]`} {
		if _, err := Restore(src, []byte(st)); err == nil {
			t.Errorf("state %s restored without error", st)
		}
	}
	p, err := Restore(src, nil)
	if err != nil || p == nil {
		t.Fatalf("empty state: %v", err)
	}
	var v map[string]any
	st, _ := p.State()
	if err := json.Unmarshal(st, &v); err != nil {
		t.Fatalf("state is not JSON: %v", err)
	}
}
