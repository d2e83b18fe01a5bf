package export_test

import (
	"testing"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/export/mapfile"
)

// Canaries sit in every event field the map must drop (record ids, call
// ids, the repo key, hook record uuids) and in a path through directories
// named home and Users, which only AttemptDB's value rule refuses. None may
// reach an export.
var (
	mapCanaries = []string{"CANARY_SESSIONKEY", "CANARY_MSGID", "CANARY_CALL", "CANARY_LAUNCH"}
	canaries    = append([]string{"CANARY_SRCUUID"}, mapCanaries...)
)

const t0 = int64(1767225600000) // 2026-01-01T00:00:00Z

func call(t int64, agent, id, tool, kind, cat string, f func(*event.Call)) event.Event {
	c := &event.Call{ID: "CANARY_CALL" + id, Tool: tool, Kind: kind, Cat: cat}
	if f != nil {
		f(c)
	}
	return event.Event{Kind: event.KindCall, T: t0 + t, Agent: agent, Call: c}
}

func result(t int64, agent, id string, f func(*event.Result)) event.Event {
	r := &event.Result{CallID: "CANARY_CALL" + id, OutBytes: 321, DurMs: 40}
	if f != nil {
		f(r)
	}
	return event.Event{Kind: event.KindResult, T: t0 + t, Agent: agent, Result: r}
}

func target(path, touch, op string) event.Target {
	return event.Target{Repo: "CANARY_SESSIONKEY", Path: path, Touch: touch, Op: op}
}

// fixtureEvents is a session using every kind of event a map can hold.
func fixtureEvents() []event.Event {
	exit1 := 1
	return []event.Event{
		{Kind: event.KindSession, T: t0, Session: &event.Session{NativeID: "fixture-1", AgentTool: "claude-code", Role: "root", AgentVersion: "2.1.0"}},
		{Kind: event.KindRepo, T: t0, Repo: &event.Repo{Key: "CANARY_SESSIONKEY", Name: "shop", Remote: "acme/shop"}},
		{Kind: event.KindModel, T: t0, Model: "claude-sonnet-4-5"},
		{Kind: event.KindUser, T: t0 + 10, User: &event.User{Chars: 120, Images: 1, URLs: 2}},
		{Kind: event.KindLLM, T: t0 + 1000, Model: "claude-sonnet-4-5", LLM: &event.LLM{MsgID: "CANARY_MSGID1", In: 10, CW: 2000, CR: 5000, Out: 300, LatencyMs: 990, Stop: "tool_use", Thinking: true, ToolCalls: 3, TextChars: 20}},
		call(1100, "", "r1", "Read", "read", "file", func(c *event.Call) {
			c.Targets = []event.Target{target("src/home/Users/app.ts", "read", ""), {Label: "~/Documents", Touch: "read"}}
		}),
		result(1200, "", "r1", nil),
		call(1300, "", "g1", "Grep", "search", "file", func(c *event.Call) {
			c.Targets = []event.Target{target("src/cart.ts", "hit", ""), target("src/pay.ts", "hit", "")}
		}),
		result(1350, "", "g1", nil),
		call(1400, "", "e1", "Write", "edit", "file", func(c *event.Call) {
			c.Targets = []event.Target{target("src/new.ts", "edit", "create")}
		}),
		result(1500, "", "e1", nil),
		call(1600, "", "x1", "Bash", "verify", "test", func(c *event.Call) { c.Verb = "go test" }),
		result(1700, "", "x1", func(r *event.Result) { r.Err, r.ErrClass, r.ExitCode = true, "exit_code", &exit1 }),
		{Kind: event.KindError, T: t0 + 1750, Error: &event.Error{Source: "hook", Class: "hook_error", Hook: "PostToolUse:Bash", HookEvent: "PostToolUse", SrcUUID: "CANARY_SRCUUID", RefCallID: "CANARY_CALLx1"}},
		call(1760, "", "x1b", "Bash", "verify", "test", func(c *event.Call) { c.Verb = "go test" }),
		result(1790, "", "x1b", nil),
		{Kind: event.KindLLM, T: t0 + 2000, Model: "claude-sonnet-4-5", LLM: &event.LLM{MsgID: "CANARY_MSGID2", In: 10, CR: 7000, Out: 100, LatencyMs: 300, Stop: "tool_use", ToolCalls: 4}},
		call(2100, "", "m1", "mcp__github__create_issue", "mcp", "mcp", func(c *event.Call) { c.Server, c.MCPTool = "github", "create_issue" }),
		result(2200, "", "m1", nil),
		call(2300, "", "w1", "WebFetch", "web", "web", func(c *event.Call) { c.Host = "go.dev" }),
		result(2400, "", "w1", nil),
		call(2500, "", "s1", "Skill", "skill", "skill", func(c *event.Call) { c.Skill = "release-notes" }),
		result(2550, "", "s1", nil),
		call(2600, "", "t1", "TodoWrite", "tool", "tool", nil),
		result(2650, "", "t1", nil),
		call(2700, "", "sa", "Task", "subagent", "subagent", func(c *event.Call) { c.SubagentType = "Explore" }),
		{Kind: event.KindLane, T: t0 + 2710, Agent: "sa-1", Model: "claude-haiku-4-5", Lane: &event.Lane{SubagentType: "Explore", LaunchCallID: "CANARY_CALLsa"}},
		{Kind: event.KindLLM, T: t0 + 2800, Agent: "sa-1", Model: "claude-haiku-4-5", LLM: &event.LLM{MsgID: "CANARY_MSGID3", In: 5, Out: 50, LatencyMs: 80, Stop: "tool_use", ToolCalls: 1}},
		call(2900, "sa-1", "l1", "Glob", "search", "file", func(c *event.Call) {
			c.Targets = []event.Target{target("docs/guide.md", "hit", "")}
		}),
		result(2950, "sa-1", "l1", nil),
		{Kind: event.KindLLM, T: t0 + 3000, Agent: "sa-1", Model: "claude-haiku-4-5", LLM: &event.LLM{MsgID: "CANARY_MSGID4", In: 5, Out: 60, LatencyMs: 70, Stop: "end_turn", TextChars: 200}},
		result(3100, "", "sa", func(r *event.Result) { r.Child = "sa-1" }),
		{Kind: event.KindCompaction, T: t0 + 3200, Compact: &event.Compaction{Trigger: "auto", PreTokens: 150000, PostTokens: 20000, Ms: 4000}},
		call(7300, "", "c1", "Bash", "exec", "vcs", func(c *event.Call) {
			c.Verb = "git commit"
			c.VCS = &event.VCS{Provider: "git", Action: "commit"}
		}),
		result(7400, "", "c1", func(r *event.Result) {
			r.Commit = &event.Commit{Repo: "CANARY_SESSIONKEY", SHA: "abc1234", Files: 2, Ins: 10, Del: 3}
		}),
		call(7500, "", "p1", "Bash", "exec", "vcs", func(c *event.Call) {
			c.Verb = "gh pr create"
			c.VCS = &event.VCS{Provider: "github", Action: "pr_create"}
		}),
		result(7600, "", "p1", func(r *event.Result) {
			r.PR = &event.PR{Action: "create", Provider: "github", Repo: "acme/shop", Number: 7, URL: "https://github.com/acme/shop/pull/7"}
		}),
		call(7700, "", "o1", "Bash", "exec", "fs", func(c *event.Call) {
			c.Verb = "rm"
			c.Targets = []event.Target{{Label: "/tmp (scratch)", Touch: "edit", Op: "delete"}}
		}),
		result(7800, "", "o1", nil),
		call(7810, "", "x2", "Bash", "verify", "test", func(c *event.Call) { c.Verb = "go test" }),
		result(7820, "", "x2", nil),
		call(7830, "", "p2", "Bash", "exec", "vcs", func(c *event.Call) {
			c.Verb = "gh pr merge"
			c.VCS = &event.VCS{Provider: "github", Action: "pr_merge", Repo: "acme/shop", Number: 7}
		}),
		result(7840, "", "p2", func(r *event.Result) {
			r.PR = &event.PR{Action: "merge", Provider: "github", Repo: "acme/shop", Number: 7, URL: "https://github.com/acme/shop/pull/7"}
		}),
		call(7850, "", "k1", "mcp__linear__create_issue", "mcp", "mcp", func(c *event.Call) { c.Server, c.MCPTool = "linear", "create_issue" }),
		result(7860, "", "k1", func(r *event.Result) { r.Ticket = &event.Ticket{Tracker: "linear", Action: "create", ID: "ENG-12"} }),
		call(7870, "", "a1", "Artifact", "tool", "tool", nil),
		result(7880, "", "a1", func(r *event.Result) {
			r.Artifact = &event.Artifact{URL: "https://claude.ai/public/artifacts/a1b2", Version: "2"}
		}),
		call(7890, "", "k2", "Write", "edit", "file", func(c *event.Call) {
			c.SkillWrite = "release-notes"
			c.Targets = []event.Target{{Label: "~/.claude/skills", Touch: "edit", Op: "create"}}
		}),
		result(7895, "", "k2", nil),
		{Kind: event.KindModel, T: t0 + 7900, Model: "claude-opus-4-1"},
		{Kind: event.KindLLM, T: t0 + 8000, Model: "claude-opus-4-1", LLM: &event.LLM{MsgID: "CANARY_MSGID5", In: 10, Out: 40, LatencyMs: 500, Stop: "end_turn", TextChars: 180}},
		{Kind: event.KindTurnEnd, T: t0 + 8001},
		{Kind: event.KindUser, T: t0 + 20000, User: &event.User{Chars: 12}},
		call(20100, "", "b1", "Bash", "exec", "build", func(c *event.Call) { c.Verb = "go build" }),
		result(51200, "", "b1", func(r *event.Result) { r.DurMs = 31100 }),
		{Kind: event.KindLLM, T: t0 + 52000, Model: "claude-opus-4-1", LLM: &event.LLM{MsgID: "CANARY_MSGID6", In: 10, Out: 20, LatencyMs: 900, Stop: "end_turn", TextChars: 30}},
		{Kind: event.KindError, T: t0 + 52500, Error: &event.Error{Source: "llm", Class: "rate_limit", Retry: 1}},
		{Kind: event.KindEnd, T: t0 + 53000},
	}
}

// fixtureDoc builds the fixture map in a path mode.
func fixtureDoc(t testing.TB, mode redact.Mode) *mapfile.Doc {
	t.Helper()
	m, err := builder.Build(fixtureEvents(), builder.Options{PathMode: mode, HashKey: []byte("fixture-key-fixture-key-32-bytes"), Producer: "agentmap test"})
	if err != nil {
		t.Fatal(err)
	}
	d, err := mapfile.FromMap(m)
	if err != nil {
		t.Fatal(err)
	}
	return d
}
