package gemini_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/watchers/agents"
	"github.com/agentmap/agentmap/watchers/gemini"
	"github.com/agentmap/agentmap/watchers/internal/agenttest"
)

const leakCanary = "qxleak"

func containsFold(b []byte, s string) bool { return bytes.Contains(bytes.ToLower(b), []byte(s)) }

// canaryChat is a chat written by the project from the client's format
// (chatRecordingService of 0.61.0), with the canary in every field that
// carries text: prompts, display content, replies, thoughts, tool
// arguments, results, result displays, descriptions, summaries, errors,
// metadata updates and a rewritten history.
func canaryChat() string {
	c := leakCanary
	recs := []any{
		map[string]any{"sessionId": "5e55a0e0-0000-4000-8000-00000000aaaa", "projectHash": "ab12", "startTime": "2026-01-02T10:00:00.000Z",
			"lastUpdated": "2026-01-02T10:00:00.000Z", "kind": "main", "summary": c + " summary", "directories": []string{"/tmp/" + c + "-dir"}},
		map[string]any{"$set": map[string]any{"messages": []any{map[string]any{"id": "ctx", "timestamp": "2026-01-02T10:00:00.000Z", "type": "user",
			"content": []any{map[string]any{"text": "<session_context>" + c + " context"}}}}}},
		map[string]any{"id": "u1", "timestamp": "2026-01-02T10:00:01.000Z", "type": "user",
			"content":        []any{map[string]any{"text": c + " prompt https://" + c + ".example/x"}, map[string]any{"inlineData": map[string]any{"mimeType": "image/png", "data": c}}},
			"displayContent": []any{map[string]any{"text": c + " display"}}},
		map[string]any{"id": "g1", "timestamp": "2026-01-02T10:00:02.000Z", "type": "gemini", "content": c + " reply", "model": "gemini-2.5-flash",
			"thoughts": []any{map[string]any{"subject": c + " subject", "description": c + " thought", "timestamp": "2026-01-02T10:00:02.000Z"}},
			"tokens":   map[string]any{"input": 100, "output": 10, "cached": 40, "thoughts": 5, "tool": 2, "total": 117}},
		map[string]any{"id": "g1", "timestamp": "2026-01-02T10:00:02.000Z", "type": "gemini", "content": c + " reply", "model": "gemini-2.5-flash",
			"tokens": map[string]any{"input": 100, "output": 10, "cached": 40, "thoughts": 5, "tool": 2, "total": 117},
			"toolCalls": []any{
				map[string]any{"id": "run_shell_command__" + c, "name": "run_shell_command", "args": map[string]any{"command": "cat /tmp/" + c + ".txt && git commit -m " + c, "description": c},
					"result": []any{map[string]any{"functionResponse": map[string]any{"id": "x", "name": "run_shell_command", "response": map[string]any{"output": "Output: " + c + "\nExit Code: 3"}}}},
					"status": "success", "timestamp": "2026-01-02T10:00:03.000Z", "resultDisplay": c + " display", "description": c + " description", "displayName": c},
				map[string]any{"id": "c2", "name": "write_file", "args": map[string]any{"file_path": "/tmp/" + c + "/notes.txt", "content": c + " content"},
					"result": []any{map[string]any{"functionResponse": map[string]any{"id": "c2", "name": "write_file", "response": map[string]any{"error": c + " permission denied"}}}},
					"status": "error", "timestamp": "2026-01-02T10:00:03.000Z", "resultDisplay": map[string]any{"fileDiff": c, "fileName": c, "originalContent": c, "newContent": c, "isNewFile": true}},
				map[string]any{"id": "c3", "name": "web_fetch", "args": map[string]any{"prompt": "summarise https://docs.example.org/" + c + " for " + c},
					"result": []any{map[string]any{"functionResponse": map[string]any{"id": "c3", "name": "web_fetch", "response": map[string]any{"output": c}}}},
					"status": "success", "timestamp": "2026-01-02T10:00:03.000Z"},
				map[string]any{"id": "c4", "name": "mcp_srv_" + "lookup", "args": map[string]any{"key": c},
					"result": []any{map[string]any{"functionResponse": map[string]any{"id": "c4", "name": "mcp_srv_lookup", "response": map[string]any{"content": []any{map[string]any{"type": "text", "text": c}}}}}},
					"status": "cancelled", "timestamp": "2026-01-02T10:00:03.000Z"},
				map[string]any{"id": "c5", "name": "invoke_agent", "args": map[string]any{"agent_name": "codebase_investigator", "objective": c},
					"result": []any{map[string]any{"functionResponse": map[string]any{"id": "c5", "name": "invoke_agent", "response": map[string]any{"output": c}}}},
					"status": "success", "timestamp": "2026-01-02T10:00:04.000Z", "agentId": "0badc0de-1111-4111-8111-111111111111"},
				map[string]any{"id": "c6", "name": c + " odd tool name", "args": map[string]any{"x": c}, "status": "success"},
			}},
		map[string]any{"id": "u2", "timestamp": "2026-01-02T10:00:05.000Z", "type": "user",
			"content": []any{map[string]any{"functionResponse": map[string]any{"id": "x", "name": "run_shell_command", "response": map[string]any{"output": c}}}}},
		map[string]any{"id": "e1", "timestamp": "2026-01-02T10:00:06.000Z", "type": "error", "content": c + " quota exceeded 429"},
		map[string]any{"id": "i1", "timestamp": "2026-01-02T10:00:06.000Z", "type": "info", "content": c + " info"},
		map[string]any{"$set": map[string]any{"summary": c, "memoryScratchpad": c, "lastUpdated": "2026-01-02T10:00:07.000Z"}},
		map[string]any{"$rewindTo": c},
		map[string]any{"id": c + " id with spaces", "timestamp": "2026-01-02T10:00:08.000Z", "type": "gemini", "content": c, "model": c + " model"},
	}
	var b strings.Builder
	for _, r := range recs {
		j, _ := json.Marshal(r)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

// TestCanaryLeaksNothing checks that no text of a chat reaches the events,
// the carry-state or the map, in every path mode.
func TestCanaryLeaksNothing(t *testing.T) {
	dir := filepath.Join(t.TempDir(), ".gemini", "tmp", "p", "chats")
	os.MkdirAll(dir, 0o700)
	path := filepath.Join(dir, "session-2026-01-02T10-00-5e55a0e0.jsonl")
	if err := os.WriteFile(path, []byte(canaryChat()), 0o600); err != nil {
		t.Fatal(err)
	}
	evs, _ := parse(t, path)
	j, _ := json.Marshal(evs)
	if containsFold(j, leakCanary) {
		t.Fatalf("events hold text: %s", j)
	}
	for _, mode := range []redact.Mode{redact.ModeRelative, redact.ModeDirsOnly, redact.ModeHashed} {
		m, err := builder.Build(evs, builder.Options{PathMode: mode, HashKey: []byte("k")})
		if err != nil {
			t.Fatal(err)
		}
		b, _ := m.Canonical()
		if containsFold(b, leakCanary) {
			t.Errorf("%s map holds text: %s", mode, b)
		}
	}
	// The calls came through with their kinds and results.
	m := build(t, evs)
	kinds := map[string]int{}
	for _, e := range m.Events {
		kinds[e.Kind]++
	}
	if kinds["exec"]+kinds["verify"] != 1 || kinds["edit"] != 1 || kinds["web"] != 1 || kinds["mcp"] != 1 || kinds["subagent"] != 1 || kinds["tool"] != 1 || kinds["error"] != 1 {
		t.Errorf("kinds %v", kinds)
	}
	if m.Totals.Tokens != 117 || m.Totals.UserTurns != 1 || m.Totals.PromptImages != 1 || m.Totals.PromptURLs != 1 {
		t.Errorf("totals %+v", m.Totals)
	}
}

// realKeep are the keys of a chat record whose values a map may show or
// the parser needs as they are: ids, times, types, statuses, models, tool
// and agent names, and paths. Every other string gets the canary.
var realKeep = map[string]bool{
	"sessionId": true, "projectHash": true, "startTime": true, "lastUpdated": true, "kind": true,
	"directories": true, "id": true, "timestamp": true, "type": true, "status": true, "model": true,
	"name": true, "agent_name": true, "agentId": true, "mimeType": true,
	"file_path": true, "absolute_path": true, "path": true, "dir_path": true,
}

// TestRealChatsSpoiledLeakNothing puts the canary into every string of
// the chats the real client wrote (see realKeep for the few kept) and
// checks that none of it reaches the events, the carry-state after any
// line, an error, or the map in any path mode, and that the chats were
// still read whole.
func TestRealChatsSpoiledLeakNothing(t *testing.T) {
	chats := realDir(t)
	a := agent(t)
	kinds := map[string]int{}
	for _, f := range realFiles(t, chats) {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var spoiled []byte
		for _, l := range lines(b) {
			spoiled = append(append(spoiled, agenttest.SpoilJSON(l, realKeep, leakCanary)...), '\n')
		}
		if err := os.WriteFile(f, spoiled, 0o600); err != nil {
			t.Fatal(err)
		}
		first, _ := agents.FirstLine(f)
		src, err := a.Identify(f, first)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(f), err)
		}
		p := a.New(src)
		agents.AttachFile(p, f)
		var evs []event.Event
		for i, l := range lines(spoiled) {
			evs, err = p.Line(l, evs)
			if err != nil && containsFold([]byte(err.Error()), leakCanary) {
				t.Errorf("%s line %d: error leaks: %v", filepath.Base(f), i+1, err)
			}
			if st, _ := p.State(); containsFold(st, leakCanary) {
				t.Errorf("%s line %d: carry-state leaks: %s", filepath.Base(f), i+1, st)
			}
		}
		if j, _ := json.Marshal(evs); containsFold(j, leakCanary) {
			t.Errorf("%s: events leak: %s", filepath.Base(f), j)
		}
		evs = agents.EnsureSession(gemini.Agent, src.Session, evs)
		for _, mode := range []redact.Mode{redact.ModeRelative, redact.ModeDirsOnly, redact.ModeHashed} {
			m, err := builder.Build(evs, builder.Options{PathMode: mode, HashKey: []byte("k")})
			if errors.Is(err, builder.ErrEmptySession) {
				break // the second file of a resume holds only metadata
			}
			if err != nil {
				t.Fatal(err)
			}
			if c, _ := m.Canonical(); containsFold(c, leakCanary) {
				t.Errorf("%s: %s map leaks: %s", filepath.Base(f), mode, c)
			}
			if mode == redact.ModeRelative {
				for _, e := range m.Events {
					kinds[e.Kind]++
				}
			}
		}
	}
	// The spoiled chats still gave what the real ones give.
	for _, k := range []string{"user", "llm", "read", "edit", "exec", "verify", "mcp", "subagent", "tool"} {
		if kinds[k] == 0 {
			t.Errorf("no %s event from the spoiled chats (%v): the test exercises too little", k, kinds)
		}
	}
}
