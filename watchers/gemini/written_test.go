package gemini_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers/agents"
	"github.com/agentmap/agentmap/watchers/gemini"
)

// The chats below are written by the project from the client's format
// (chatRecordingService and its subagent and legacy forms, 0.61.0 source),
// for what the end-to-end suite does not make the real client write: a
// subagent's conversation and the whole-document .json of older clients.

const (
	parentID = "7a1c0b9e-3333-4333-8333-333333333333"
	agentID  = "0badc0de-1111-4111-8111-111111111111"
)

func jsonl(recs ...any) string {
	var b strings.Builder
	for _, r := range recs {
		j, _ := json.Marshal(r)
		b.Write(j)
		b.WriteByte('\n')
	}
	return b.String()
}

func tok(in, cached, out int) map[string]any {
	return map[string]any{"input": in, "output": out, "cached": cached, "thoughts": 0, "tool": 0, "total": in + out}
}

// writtenFiles writes a main chat that launches a subagent, the
// subagent's own chat, and returns both paths.
func writtenFiles(t testing.TB) []string {
	t.Helper()
	chats := filepath.Join(t.TempDir(), ".gemini", "tmp", "w", "chats")
	sub := filepath.Join(chats, parentID)
	os.MkdirAll(sub, 0o700)
	main := filepath.Join(chats, "session-2026-01-03T09-00-7a1c0b9e.jsonl")
	os.WriteFile(main, []byte(jsonl(
		map[string]any{"sessionId": parentID, "projectHash": "cd34", "startTime": "2026-01-03T09:00:00.000Z", "kind": "main"},
		map[string]any{"id": "u1", "timestamp": "2026-01-03T09:00:01.000Z", "type": "user", "content": []any{map[string]any{"text": "look around"}}},
		map[string]any{"id": "g1", "timestamp": "2026-01-03T09:00:02.000Z", "type": "gemini", "content": "", "model": "gemini-2.5-pro", "tokens": tok(1000, 0, 20)},
		map[string]any{"id": "g1", "timestamp": "2026-01-03T09:00:02.000Z", "type": "gemini", "content": "", "model": "gemini-2.5-pro", "tokens": tok(1000, 0, 20),
			"toolCalls": []any{map[string]any{"id": "invoke_agent__c1", "name": "invoke_agent", "args": map[string]any{"agent_name": "codebase_investigator"},
				"result": []any{map[string]any{"functionResponse": map[string]any{"id": "invoke_agent__c1", "name": "invoke_agent", "response": map[string]any{"output": "found it"}}}},
				"status": "success", "timestamp": "2026-01-03T09:00:09.000Z", "agentId": agentID}}},
		map[string]any{"id": "g2", "timestamp": "2026-01-03T09:00:10.000Z", "type": "gemini", "content": "done", "model": "gemini-2.5-pro", "tokens": tok(1500, 1000, 5)},
	)), 0o600)
	subPath := filepath.Join(sub, agentID+".jsonl")
	os.WriteFile(subPath, []byte(jsonl(
		map[string]any{"sessionId": agentID, "projectHash": "cd34", "startTime": "2026-01-03T09:00:03.000Z", "kind": "subagent", "directories": []string{"/w"}},
		map[string]any{"id": "s1", "timestamp": "2026-01-03T09:00:03.000Z", "type": "user", "content": []any{map[string]any{"text": "task from the parent"}}},
		map[string]any{"id": "s2", "timestamp": "2026-01-03T09:00:05.000Z", "type": "gemini", "content": "", "model": "gemini-2.5-flash", "tokens": tok(800, 200, 30),
			"toolCalls": []any{map[string]any{"id": "glob__c1", "name": "glob", "args": map[string]any{"pattern": "**/*.go", "dir_path": "/w/src"},
				"result": []any{map[string]any{"functionResponse": map[string]any{"id": "glob__c1", "name": "glob", "response": map[string]any{"output": "a.go"}}}},
				"status": "success", "timestamp": "2026-01-03T09:00:06.000Z"}}},
		map[string]any{"id": "s3", "timestamp": "2026-01-03T09:00:08.000Z", "type": "gemini", "content": "", "model": "gemini-2.5-flash", "tokens": tok(900, 800, 10),
			"toolCalls": []any{map[string]any{"id": "complete_task__c2", "name": "complete_task", "args": map[string]any{"result": "found it"}, "status": "success",
				"timestamp": "2026-01-03T09:00:08.500Z"}}},
	)), 0o600)
	return []string{main, subPath}
}

// TestSubagentLane checks that a subagent's chat is a lane of its parent,
// launched by the invoke_agent call whose result names it.
func TestSubagentLane(t *testing.T) {
	files := writtenFiles(t)
	var all []event.Event
	for _, f := range files {
		evs, src := parse(t, f)
		if src.Session != parentID {
			t.Errorf("%s routed to %+v", filepath.Base(f), src)
		}
		all = append(all, evs...)
	}
	if got := gemini.SubagentFiles(files[0], parentID); len(got) != 1 || got[0] != files[1] {
		t.Errorf("SubagentFiles = %v", got)
	}
	m := build(t, all)
	if m.Totals.Subagents != 1 || m.Totals.Requests != 4 || m.Totals.UserTurns != 1 {
		t.Fatalf("totals %+v", m.Totals)
	}
	var lane string
	for _, a := range m.Agents {
		if a.Kind == "subagent" {
			lane = a.ID
			if a.SubagentType != "codebase_investigator" || a.Requests != 2 || a.LaunchSeq == nil || m.Events[*a.LaunchSeq].Kind != "subagent" {
				t.Errorf("lane %+v", a)
			}
		}
	}
	if lane != gemini.LaneID(agentID) {
		t.Errorf("lane %q, want %q", lane, gemini.LaneID(agentID))
	}
}

// TestWholeDocument reads the .json form older clients rewrote whole at
// every change, through the same path as `agentmap build` and the daemon.
func TestWholeDocument(t *testing.T) {
	chats := filepath.Join(t.TempDir(), ".gemini", "tmp", "w", "chats")
	os.MkdirAll(chats, 0o700)
	path := filepath.Join(chats, "session-2025-08-01T10-00-5e55a0e0.json")
	doc := map[string]any{"sessionId": "5e55a0e0-2222-4222-8222-222222222222", "projectHash": "ef56", "startTime": "2025-08-01T10:00:00.000Z",
		"lastUpdated": "2025-08-01T10:05:00.000Z", "messages": []any{
			map[string]any{"id": "u1", "timestamp": "2025-08-01T10:00:01.000Z", "type": "user", "content": "fix the build"},
			map[string]any{"id": "g1", "timestamp": "2025-08-01T10:00:04.000Z", "type": "gemini", "content": "running it", "model": "gemini-2.5-pro",
				"tokens": tok(2000, 500, 40), "toolCalls": []any{map[string]any{"id": "run_shell_command-1", "name": "run_shell_command",
					"args": map[string]any{"command": "go build ./..."}, "status": "success", "timestamp": "2025-08-01T10:00:06.000Z",
					"result": []any{map[string]any{"functionResponse": map[string]any{"id": "run_shell_command-1", "name": "run_shell_command",
						"response": map[string]any{"output": "Command: go build ./...\nStdout: (empty)\nExit Code: 1"}}}}}}},
		}}
	b, _ := json.MarshalIndent(doc, "", "  ")
	os.WriteFile(path, b, 0o600)
	if !gemini.IsWholeChat(path) {
		t.Fatal("not recognised as a whole chat")
	}
	evs, src, err := agents.ParseWhole(path)
	if err != nil {
		t.Fatal(err)
	}
	if src.Agent != gemini.Agent || src.Session != "5e55a0e0-2222-4222-8222-222222222222" {
		t.Fatalf("routed to %+v", src)
	}
	m := build(t, evs)
	if m.Totals.Requests != 1 || m.Totals.Tokens != 2040 || m.Totals.Calls != 1 || m.Totals.ErrorsByClass["exit_code"] != 1 {
		t.Errorf("totals %+v", m.Totals)
	}
}

// TestWholeDocumentSuperseded checks that a .json chat a current client
// converted on resume (writing <name>.jsonl beside it with every message
// again) is not read as well.
func TestWholeDocumentSuperseded(t *testing.T) {
	chats := filepath.Join(t.TempDir(), ".gemini", "tmp", "w", "chats")
	os.MkdirAll(chats, 0o700)
	path := filepath.Join(chats, "session-2025-08-01T10-00-5e55a0e0.json")
	os.WriteFile(path, []byte(`{"sessionId":"5e55a0e0-2222-4222-8222-222222222222","projectHash":"ef56","messages":[]}`), 0o600)
	if _, err := gemini.Identify(path, []byte("{")); err != nil {
		t.Fatalf("alone: %v", err)
	}
	os.WriteFile(path+"l", []byte(`{"sessionId":"5e55a0e0-2222-4222-8222-222222222222","projectHash":"ef56"}`+"\n"), 0o600)
	if _, err := gemini.Identify(path, []byte("{")); err != gemini.ErrSuperseded {
		t.Fatalf("with its .jsonl: %v", err)
	}
	if _, _, err := agents.ParseWhole(path); err != gemini.ErrSuperseded {
		t.Fatalf("ParseWhole with its .jsonl: %v", err)
	}
}
