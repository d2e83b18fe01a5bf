package gemini_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers/agents"
	"github.com/agentmap/agentmap/watchers/gemini"
)

// TestRealClientChats reads the chats Gemini CLI 0.61.0 wrote in the
// end-to-end suite (two runs of one session: a prompt, then --resume with
// another) and checks the map against what the scripted server answered
// and against the client's own accounting: per message tokens.total and
// the stats it printed (-o json): 6 requests, 25148 tokens.
func TestRealClientChats(t *testing.T) {
	chats := realDir(t)
	var all []event.Event
	var own int64
	n := 0
	for _, f := range realFiles(t, chats) {
		evs, src := parse(t, f)
		if src.Session != "9a9684ed-772c-4682-baa6-4f2e22485ef6" {
			continue
		}
		if src.Lane != "" {
			t.Errorf("%s routed to %+v", filepath.Base(f), src)
		}
		all = append(all, evs...)
		own += ownTotal(t, f)
		n++
	}
	if n != 2 {
		t.Fatalf("%d chat files of the session, want 2", n)
	}
	m := build(t, agents.EnsureSession(gemini.Agent, "9a9684ed-772c-4682-baa6-4f2e22485ef6", all))
	tot := m.Totals
	if m.Session.AgentTool != "gemini-cli" || m.Session.ID != "local:gemini-cli:9a9684ed-772c-4682-baa6-4f2e22485ef6" {
		t.Errorf("session %+v", m.Session)
	}
	if tot.Tokens != 25148 || tot.Tokens != own {
		t.Errorf("tokens %d, the client counted %d (and printed 25148)", tot.Tokens, own)
	}
	if tot.Requests != 6 || tot.UserTurns != 2 || tot.Calls != 9 || tot.Retries != 1 {
		t.Errorf("requests %d, user turns %d, calls %d, retries %d; want 6, 2, 9, 1", tot.Requests, tot.UserTurns, tot.Calls, tot.Retries)
	}
	kinds := map[string]int{}
	var exits []int
	for _, e := range m.Events {
		switch e.Kind {
		case "read", "edit", "exec", "verify", "mcp":
			kinds[e.Kind]++
			if e.ExitCode != nil && *e.ExitCode != 0 {
				exits = append(exits, *e.ExitCode)
			}
		}
	}
	if got := fmt.Sprint(kinds); got != "map[edit:2 exec:2 mcp:2 read:1 verify:2]" {
		t.Errorf("calls by kind %s", got)
	}
	if got := fmt.Sprint(exits); got != "[1 2]" {
		t.Errorf("exit codes %s, want [1 2]", got)
	}
	var files2 []string
	for _, f := range m.Files {
		files2 = append(files2, f.Path+":"+f.Op)
	}
	if got := fmt.Sprint(files2); got != "[README.md: notes.txt:create src/app.js:modify]" {
		t.Errorf("files %s", got)
	}
	if tot.ErrorsBySource.MCP != 1 || tot.ErrorsByClass["exit_code"] != 2 {
		t.Errorf("errors by source %v, by class %v", tot.ErrorsBySource, tot.ErrorsByClass)
	}
	if len(m.Session.Models) != 1 || m.Session.Models[0] != "gemini-2.5-pro" || tot.CostUSD <= 0 {
		t.Errorf("models %v, cost %v", m.Session.Models, tot.CostUSD)
	}
}

// TestRealClientSubagent reads the session in which Gemini CLI 0.61.0
// ran its generalist subagent (invoke_agent): the subagent's chat under
// chats/<session id>/ is a lane of the session, typed by the agent's name,
// and the tokens of both equal the client's own stats (16488 over 4
// requests).
func TestRealClientSubagent(t *testing.T) {
	const id = "a7644798-0668-45ab-bcd6-957f01bff1c3"
	chats := realDir(t)
	main := filepath.Join(chats, "session-2026-12-01T11-47-a7644798.jsonl")
	files := append([]string{main}, gemini.SubagentFiles(main, id)...)
	if len(files) != 2 {
		t.Fatalf("files %v", files)
	}
	var all []event.Event
	var own int64
	for _, f := range files {
		evs, src := parse(t, f)
		if src.Session != id {
			t.Errorf("%s routed to %+v", filepath.Base(f), src)
		}
		all = append(all, evs...)
		own += ownTotal(t, f)
	}
	m := build(t, all)
	if m.Totals.Tokens != 16488 || own != 16488 || m.Totals.Requests != 4 || m.Totals.Subagents != 1 || m.Totals.UserTurns != 1 {
		t.Errorf("tokens %d (client %d), requests %d, subagents %d, user turns %d; want 16488, 4, 1, 1",
			m.Totals.Tokens, own, m.Totals.Requests, m.Totals.Subagents, m.Totals.UserTurns)
	}
	for _, a := range m.Agents {
		if a.Kind == "subagent" && (a.SubagentType != "generalist" || a.Requests != 2 || a.Calls != 3) {
			t.Errorf("lane %+v", a)
		}
		// The subagent answered in complete_task's result: it completed,
		// it did not stop short.
		if a.Kind == "subagent" && a.Outcome != "completed" {
			t.Errorf("the subagent that called complete_task: outcome %q, want completed", a.Outcome)
		}
	}
}

// ownTotal sums tokens.total of the last record of each message: the
// client's own count.
func ownTotal(t *testing.T, path string) int64 {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	last := map[string]int64{}
	for _, l := range lines(b) {
		var r struct {
			ID     string `json:"id"`
			Type   string `json:"type"`
			Tokens *struct {
				Total int64 `json:"total"`
			} `json:"tokens"`
		}
		if json.Unmarshal(l, &r) == nil && r.Type == "gemini" && r.Tokens != nil {
			last[r.ID] = r.Tokens.Total
		}
	}
	var sum int64
	for _, v := range last {
		sum += v
	}
	return sum
}

// TestRealClientSkill reads a later run of the suite (Gemini CLI 0.61.0
// again; its resume appended to the session's one file): the resumed run
// activates the suite's user skill, a skill event naming it, and the
// tokens equal the client's own stats of both runs (16904 + 12522).
func TestRealClientSkill(t *testing.T) {
	const id = "49488881-8460-4687-9678-4946e10e65ba"
	evs, src := parse(t, filepath.Join(realDir(t), "session-2026-12-01T16-54-49488881.jsonl"))
	if src.Session != id || src.Lane != "" {
		t.Fatalf("routed to %+v", src)
	}
	m := build(t, evs)
	if m.Totals.Tokens != 16904+12522 || m.Totals.Requests != 7 || m.Totals.UserTurns != 2 || m.Totals.Calls != 10 {
		t.Errorf("tokens %d, requests %d, user turns %d, calls %d; want 29426, 7, 2, 10",
			m.Totals.Tokens, m.Totals.Requests, m.Totals.UserTurns, m.Totals.Calls)
	}
	var skills []string
	for _, e := range m.Events {
		if e.Kind == "skill" {
			skills = append(skills, fmt.Sprintf("%s err=%v", e.Skill, e.Err))
		}
	}
	if fmt.Sprint(skills) != "[e2e-check err=false]" {
		t.Errorf("skills %v, want the suite's e2e-check, activated", skills)
	}
}
