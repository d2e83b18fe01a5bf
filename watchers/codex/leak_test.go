package codex

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
)

const canary = "CANARY"

// TestLeak parses fixtures with a canary in every text field Codex writes
// (prompts, replies, reasoning and its encrypted form, instructions,
// arguments and commands, patch bodies, outputs, end-event stdout, review
// findings, compacted history) and checks that no canary reaches the
// events, the carry-state after any line, or an error message.
func TestLeak(t *testing.T) {
	dir := fixtureDir(t)
	lines := readLines(t, filepath.Join(dir, "leak.jsonl"))
	src, err := Identify("leak.jsonl", lines[0])
	if err != nil {
		t.Fatal(err)
	}
	p := NewParser(src)
	var evs []event.Event
	for i, l := range lines {
		var err error
		evs, err = p.Line(l, evs)
		if err != nil && strings.Contains(err.Error(), canary) {
			t.Errorf("line %d: error message leaks: %v", i+1, err)
		}
		st, err := p.State()
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Contains(st, []byte(canary)) {
			t.Errorf("line %d: carry-state leaks: %s", i+1, st)
		}
	}
	assertNoCanary(t, evs)
	if len(p.unknown) > 0 {
		t.Errorf("unknown record types: %v", p.unknown)
	}
	// The fixture must exercise the parser, or the test proves nothing.
	kinds := map[event.Kind]int{}
	for _, ev := range evs {
		kinds[ev.Kind]++
	}
	for _, k := range []event.Kind{event.KindUser, event.KindLLM, event.KindCall, event.KindResult, event.KindError, event.KindCompaction, event.KindLane} {
		if kinds[k] == 0 {
			t.Errorf("no %s event from the leak fixture", k)
		}
	}

	f, err := os.Open(filepath.Join(dir, "leak-single.json"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	whole, _, err := ParseWhole(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(whole) < 5 {
		t.Errorf("single-JSON leak fixture yields %d events", len(whole))
	}
	assertNoCanary(t, whole)
}

// TestLeakErrors feeds broken lines full of canaries: the errors must name
// the problem and the record, never the content.
func TestLeakErrors(t *testing.T) {
	bad := []string{
		`{"timestamp":"CANARY","type":"response_item","payload":{"type":"message","content":"CANARY-unterminated`,
		`CANARY-not-json`,
		`["CANARY-array"]`,
		`{"type":"event_msg","payload":{"type":"user_message","message":CANARY}}`,
		`{"note":"CANARY-unknown-shape"}`,
	}
	p := NewParser(sourceOf("0191bbbb-0000-7000-8000-0000000c0009"))
	for i, l := range bad {
		evs, err := p.Line([]byte(l), nil)
		if err == nil {
			t.Errorf("line %d: no error", i)
			continue
		}
		if strings.Contains(err.Error(), canary) {
			t.Errorf("line %d: error leaks: %v", i, err)
		}
		if len(evs) != 0 {
			t.Errorf("line %d: events from a bad line", i)
		}
	}
	_, _, err := ParseWhole(strings.NewReader(`{"session":{"id":"x"},"items":[{"role":"user","content":"CANARY`))
	if err == nil || strings.Contains(err.Error(), canary) {
		t.Errorf("single-JSON error: %v", err)
	}
}

func assertNoCanary(t *testing.T, evs []event.Event) {
	t.Helper()
	b, err := json.Marshal(evs)
	if err != nil {
		t.Fatal(err)
	}
	if i := bytes.Index(b, []byte(canary)); i >= 0 {
		lo := max(0, i-120)
		t.Errorf("events leak text: …%s…", b[lo:min(len(b), i+60)])
	}
}

// textKeys name the fields of Codex records that hold text (prompts,
// replies, reasoning, arguments, outputs, instructions, diffs).
var textKeys = map[string]bool{
	"message": true, "text": true, "arguments": true, "input": true, "output": true,
	"content": true, "instructions": true, "aggregated_output": true, "stdout": true,
	"stderr": true, "formatted_output": true, "unified_diff": true, "last_agent_message": true,
	"encrypted_content": true, "cmd": true, "query": true, "prompt": true, "revised_prompt": true,
	"user_instructions": true, "developer_instructions": true, "body": true, "title": true,
	"snippet": true, "chars": true, "explanation": true, "step": true, "justification": true,
	"reasoning": true, "description": true, "overall_explanation": true,
}

// collectText gathers the text values (16 bytes or more) under textKeys,
// and the other string values (ids, paths, names) into other.
func collectText(v any, key string, text, other map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			collectText(e, k, text, other)
		}
	case []any:
		for _, e := range x {
			collectText(e, key, text, other)
		}
	case string:
		switch {
		case !textKeys[key]:
			other[x] = true
		case len(x) >= 16:
			text[x] = true
		}
		// arguments and outputs are JSON inside a string
		if strings.HasPrefix(x, "{") || strings.HasPrefix(x, "[") {
			var inner any
			if json.Unmarshal([]byte(x), &inner) == nil {
				collectText(inner, key, text, other)
			}
		}
	}
}

// TestCorpusLeak uses the corpus's own text as canaries: no prompt, reply,
// argument or output of a real rollout may appear in its events or in the
// carry-state.
func TestCorpusLeak(t *testing.T) {
	for _, path := range corpusFiles(t) {
		if strings.HasSuffix(path, ".json") {
			continue
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			lines := readLines(t, path)
			texts, other := map[string]bool{}, map[string]bool{}
			for _, l := range lines {
				var v any
				if json.Unmarshal(l, &v) == nil {
					collectText(v, "", texts, other)
				}
			}
			// A value that is also an id or a path somewhere (fixtures
			// reuse one placeholder everywhere) is not evidence of a leak.
			for s := range other {
				delete(texts, s)
			}
			src, _ := Identify(path, lines[0])
			evs, _, p := parseLines(t, src, lines)
			b, _ := json.Marshal(evs)
			st, _ := p.State()
			kept := map[string]bool{}
			for _, doc := range [][]byte{b, st} {
				var v any
				if err := json.Unmarshal(doc, &v); err != nil {
					t.Fatal(err)
				}
				collectText(v, "", kept, kept)
			}
			n := 0
			for s := range texts {
				if kept[s] {
					if n++; n <= 3 {
						t.Errorf("text of %d bytes reaches the events or state", len(s))
					}
				}
			}
			if len(texts) == 0 {
				t.Skip("no text")
			}
		})
	}
}
