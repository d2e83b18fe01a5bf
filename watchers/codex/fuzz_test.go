package codex

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
)

// FuzzParse feeds arbitrary bytes as rollout lines, with the carry-state
// saved and restored midway, and as a single-JSON document. No input may
// fault the parser, and the state must always restore.
func FuzzParse(f *testing.F) {
	for _, p := range fixtures(f) {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		for _, l := range bytes.Split(b, []byte("\n")) {
			f.Add(l)
		}
	}
	if b, err := os.ReadFile(filepath.Join(fixtureDir(f), "leak.jsonl")); err == nil {
		f.Add(b)
	}
	f.Add([]byte(`{"type":"response_item","payload":{"type":"function_call_output","call_id":"c","output":"Exit code: \nWall time: NaN seconds\nOutput:"}}`))
	f.Add([]byte(`{"session":{"id":"x"},"items":[{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"shell","arguments":{}}}]},{"role":"tool","tool_call_id":"c","content":[]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		lines := bytes.Split(data, []byte("\n"))
		p := NewParser(sourceOf("0190dddd-0000-7000-8000-000000000001"))
		var evs []event.Event
		for i, l := range lines {
			var err error
			evs, err = p.Line(l, evs)
			if errors.Is(err, errInternal) {
				t.Fatalf("line %d: parser fault", i)
			}
			if i == len(lines)/2 {
				st, err := p.State()
				if err != nil {
					t.Fatalf("state: %v", err)
				}
				if p, err = Restore(p.src, st); err != nil {
					t.Fatalf("restore: %v", err)
				}
			}
		}
		if _, err := p.State(); err != nil {
			t.Fatalf("state: %v", err)
		}
		_, _, _ = ParseWhole(bytes.NewReader(data))
		_ = LooksLike(data)
		_, _ = Identify("rollout-x.jsonl", data)
		for _, ev := range evs {
			if ev.Kind == "" {
				t.Fatal("event without kind")
			}
		}
	})
}

// FuzzRestore restores arbitrary carry-states: a bad one is refused, and
// any accepted one must take further lines without a fault.
func FuzzRestore(f *testing.F) {
	lines := readLines(f, fixtures(f)[0])
	p := NewParser(sourceOf("0190dddd-0000-7000-8000-000000000002"))
	for i, l := range lines {
		p.Line(l, nil)
		if i%7 == 0 {
			st, _ := p.State()
			f.Add(st)
		}
	}
	f.Add([]byte(`{"v":1,"calls":{"a":null,"b":{"t":1}},"resp":{"id":"x"},"tok":[{}]}`))
	f.Fuzz(func(t *testing.T, state []byte) {
		q, err := Restore(sourceOf("0190dddd-0000-7000-8000-000000000002"), state)
		if err != nil {
			return
		}
		for i, l := range lines {
			if _, err := q.Line(l, nil); errors.Is(err, errInternal) {
				t.Fatalf("line %d after restore: parser fault", i)
			}
		}
	})
}
