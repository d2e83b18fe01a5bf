package cursor

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestNamesAreIdentifiers: the tool's name, the subagent type and the
// skill a Cursor transcript gives are the model's words; a sentence there
// (spaces, a line break, a zero-width space between its words) is text and
// reaches no event, as with every other agent.
func TestNamesAreIdentifiers(t *testing.T) {
	long := strings.Repeat("CANARY the full pasted prompt with password=hunter2 ", 100) + "\nline2\ttab"
	zw := "CANARY\u200bthe\u200bsecret\u200bmerger"
	lines := []string{
		`{"role":"user","message":{"content":[{"type":"text","text":"<user_query>hi</user_query>"}]}}`,
	}
	for _, s := range []string{long, zw} {
		q, _ := json.Marshal(s)
		lines = append(lines,
			`{"role":"assistant","message":{"content":[{"type":"tool_use","name":"Subagent","input":{"subagent_type":`+string(q)+`}}]}}`,
			`{"role":"assistant","message":{"content":[{"type":"tool_use","name":"Task","input":{"subagentType":`+string(q)+`}}]}}`,
			`{"role":"assistant","message":{"content":[{"type":"tool_use","name":"Skill","input":{"skill":`+string(q)+`}}]}}`,
			`{"role":"assistant","message":{"content":[{"type":"tool_use","name":`+string(q)+`,"input":{}}]}}`,
		)
	}
	lines = append(lines, `{"role":"assistant","message":{"content":[{"type":"tool_use","name":"mcp__CANARY server sentence here__tool","input":{}}]}}`)
	path := "/home/dev/.cursor/projects/home-dev-x/agent-transcripts/22222222-aaaa-4bbb-8ccc-dddddddddddd.jsonl"
	events, errs, _ := parseAll(t, watchersSource(path), []byte(strings.Join(lines, "\n")+"\n"))
	if errs != 0 {
		t.Fatalf("%d lines failed", errs)
	}
	calls := 0
	for _, e := range events {
		if e.Call != nil {
			calls++
		}
	}
	if calls != 9 {
		t.Errorf("%d calls, want 9 (one a tool_use line)", calls)
	}
	b, _ := json.Marshal(events)
	if strings.Contains(string(b), "CANARY") {
		t.Errorf("events hold a sentence from a name:\n%s", b)
	}
}
