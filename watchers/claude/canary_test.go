package claude

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
)

const canary = "CANARY"

// TestCanaryNeverLeaks parses a transcript with a distinct canary in every
// text-bearing field and checks that no canary reaches an event, the
// carry-state or an error message, also when its lines are cut short.
func TestCanaryNeverLeaks(t *testing.T) {
	for _, path := range []string{
		filepath.Join(fixtureDir(), "canary.jsonl"),
		filepath.Join(fixtureDir(), "0a1b2c3d-0000-4000-8000-0000000000cc", "subagents", "agent-acanary1.jsonl"),
	} {
		t.Run(filepath.Base(path), func(t *testing.T) { canaryFile(t, path) })
	}
}

func canaryFile(t *testing.T, path string) {
	src, err := Identify(path, firstLine(t, path))
	if err != nil {
		t.Fatal(err)
	}
	p := NewParser(src)
	if m, ok := ReadLaneMeta(path); ok {
		p.SetLaneMeta(m)
	}
	var out []event.Event
	var lines [][]byte
	eachLine(t, path, func(line []byte) {
		lines = append(lines, bytes.Clone(line))
		var err error
		if out, err = p.Line(line, out); err != nil {
			t.Errorf("line %d: %v", len(lines), err)
		}
		st, err := p.State()
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(st, []byte(canary)) {
			t.Errorf("state after line %d holds a canary: %s", len(lines), st)
		}
	})
	if n := bytes.Count(bytes.Join(lines, nil), []byte(canary)); n < 10 {
		t.Fatalf("fixture holds only %d canaries", n)
	}
	// The fixtures must exercise what they claim to.
	kinds := map[event.Kind]int{}
	for _, e := range out {
		kinds[e.Kind]++
	}
	want := []event.Kind{event.KindUser, event.KindLLM, event.KindCall, event.KindResult, event.KindError, event.KindCompaction}
	if src.Lane != "" {
		want = []event.Kind{event.KindLane, event.KindLLM, event.KindCall, event.KindResult, event.KindError}
	}
	for _, k := range want {
		if kinds[k] == 0 {
			t.Errorf("no %s event from the canary fixture", k)
		}
	}
	if got := mustJSON(t, out); bytes.Contains(got, []byte(canary)) {
		t.Errorf("events hold a canary:\n%s", got)
	}

	// Broken lines: every cut of every line must fail or parse without
	// quoting anything in its error.
	for i, line := range lines {
		for cut := 1; cut < len(line); cut += 1 + len(line)/50 {
			q := NewParser(src)
			evs, err := q.Line(line[:cut], nil)
			if err != nil && strings.Contains(err.Error(), canary) {
				t.Errorf("line %d cut at %d: error quotes the input: %v", i+1, cut, err)
			}
			if b := mustJSON(t, evs); bytes.Contains(b, []byte(canary)) {
				t.Errorf("line %d cut at %d: events hold a canary: %s", i+1, cut, b)
			}
		}
	}
}

// TestErrorsDoNotQuote feeds lines that fail in each way the parser can
// fail and checks that the messages name the line, not its content.
func TestErrorsDoNotQuote(t *testing.T) {
	bad := []string{
		`CANARY not json`,
		`{"type":"user","message":CANARY}`,
		`{"type":"assistant","message":{"id":"x","model":5,"content":"CANARY"}}`,
		`{"type":"assistant","message":{"id":"x","content":[{"type":7,"text":"CANARY"}]}}`,
		`{"type":"assistant","message":{"id":"x","content":[{"type":"text","text":"CANARY"}],"usage":{"input_tokens":"CANARY"}}}`,
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":5,"content":"CANARY"}]}}`,
		`{"type":123456789012345678901234567890}`,
		`{"type":"user","message":{"content":[{"type":"text","text":"CANARY"}],"id":1e999}}`,
		`{"message":{"content":"CANARY"}}`,
		`["CANARY"]`,
	}
	for i, line := range bad {
		p := NewParser(sourceFor("0a1b2c3d-0000-4000-8000-0000000000ee"))
		p.st.Line = 41
		evs, err := p.Line([]byte(line), nil)
		if err == nil {
			if b := mustJSON(t, evs); bytes.Contains(b, []byte(canary)) {
				t.Errorf("case %d: events hold a canary: %s", i, b)
			}
			continue
		}
		if strings.Contains(err.Error(), canary) || strings.Contains(err.Error(), "1e999") {
			t.Errorf("case %d: error quotes the input: %v", i, err)
		}
		if !strings.Contains(err.Error(), "line 42") {
			t.Errorf("case %d: error does not name the line: %v", i, err)
		}
	}
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
