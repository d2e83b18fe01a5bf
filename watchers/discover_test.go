package watchers

import (
	"path/filepath"
	"reflect"
	"testing"
)

func TestDefaultRoots(t *testing.T) {
	env := func(goos string, vars map[string]string) Env {
		return Env{GOOS: goos, Home: "/h", Getenv: func(k string) string { return vars[k] }}
	}
	dirs := func(rs []Root) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Layout+"="+filepath.ToSlash(r.Dir))
		}
		return out
	}
	for _, tc := range []struct {
		name string
		env  Env
		want []string
	}{
		{"linux", env("linux", nil), []string{
			"claude=/h/.claude", "claude=/h/.config/claude", "codex=/h/.codex", "cursor=/h/.cursor",
			"cursor-app=/h/.config/Cursor/User", "opencode=/h/.local/share/opencode", "copilot=/h/.copilot", "gemini=/h/.gemini"}},
		{"linux env", env("linux", map[string]string{
			"CLAUDE_CONFIG_DIR": "/a, /b", "CODEX_HOME": "/c", "XDG_CONFIG_HOME": "/x",
			"XDG_DATA_HOME": "/d", "COPILOT_HOME": "/p", "GEMINI_CLI_HOME": "/g"}), []string{
			"claude=/a", "claude=/b", "claude=/h/.claude", "claude=/x/claude", "codex=/c", "codex=/h/.codex",
			"cursor=/h/.cursor", "cursor-app=/x/Cursor/User", "opencode=/d/opencode", "copilot=/p", "copilot=/h/.copilot", "gemini=/g/.gemini", "gemini=/h/.gemini"}},
		{"darwin", env("darwin", nil), []string{
			"claude=/h/.claude", "claude=/h/.config/claude", "codex=/h/.codex", "cursor=/h/.cursor",
			"cursor-app=/h/Library/Application Support/Cursor/User", "opencode=/h/.local/share/opencode", "copilot=/h/.copilot", "gemini=/h/.gemini"}},
		{"windows", env("windows", map[string]string{"APPDATA": "/h/AppData/Roaming"}), []string{
			"claude=/h/.claude", "claude=/h/.config/claude", "codex=/h/.codex", "cursor=/h/.cursor",
			"cursor-app=/h/AppData/Roaming/Cursor/User", "opencode=/h/.local/share/opencode", "copilot=/h/.copilot", "gemini=/h/.gemini"}},
	} {
		if got := dirs(DefaultRoots(tc.env)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %q\nwant %q", tc.name, got, tc.want)
		}
	}
	over := OverrideRoots(DefaultRoots(env("linux", nil)), map[string][]string{"codex": {"/t/codex"}})
	if got := dirs(over); !reflect.DeepEqual(got, []string{
		"claude=/h/.claude", "claude=/h/.config/claude", "cursor=/h/.cursor", "cursor-app=/h/.config/Cursor/User",
		"opencode=/h/.local/share/opencode", "copilot=/h/.copilot", "gemini=/h/.gemini", "codex=/t/codex"}) {
		t.Errorf("override: %q", got)
	}
}

func TestLayouts(t *testing.T) {
	claude := Root{Agent: "claude", Layout: LayoutClaude, Dir: "/r"}
	codex := Root{Agent: "codex", Layout: LayoutCodex, Dir: "/r"}
	cursor := Root{Agent: "cursor", Layout: LayoutCursor, Dir: "/r"}
	app := Root{Agent: "cursor", Layout: LayoutCursorApp, Dir: "/r"}
	oc := Root{Agent: "opencode", Layout: LayoutOpenCode, Dir: "/r"}
	cp := Root{Agent: "copilot", Layout: LayoutCopilot, Dir: "/r"}
	gemini := Root{Agent: "gemini", Layout: LayoutGemini, Dir: "/r"}
	for _, tc := range []struct {
		root Root
		path string
		form string
	}{
		{claude, "/r/projects/-w-app/0a1b.jsonl", FormLines},
		{oc, "/r/opencode.db", FormSQLite},
		{oc, "/r/opencode-beta.db", FormSQLite},
		{oc, "/r/opencode.db-wal", ""},
		{oc, "/r/log/opencode.db", ""},
		{oc, "/r/storage/session/proj1/ses_1.json", FormSQLite},
		{oc, "/r/storage/message/ses_1/msg_1.json", ""},
		{oc, "/r/storage/part/msg_1/prt_1.json", ""},
		{cp, "/r/session-state/0a1b/events.jsonl", FormLines},
		{cp, "/r/session-state/0a1b.jsonl", FormLines},
		{cp, "/r/session-state/0a1b/workspace.yaml", ""},
		{cp, "/r/logs/process-1.log", ""},
		{gemini, "/r/tmp/w-app/chats/session-2026-01-02T10-00-0a1b2c3d.jsonl", FormLines},
		{gemini, "/r/tmp/w-app/chats/session-2026-01-02T10-00-0a1b2c3d.json", FormWhole},
		{gemini, "/r/tmp/w-app/chats/0a1b2c3d-1111-4111-8111-111111111111/9f8e7d6c-2222-4222-8222-222222222222.jsonl", FormLines},
		{gemini, "/r/tmp/w-app/chats/session-2026-01-02T10-00-0a1b2c3d.jsonl.tmp-123", ""},
		{gemini, "/r/tmp/w-app/logs.json", ""},
		{gemini, "/r/tmp/w-app/chats/notes.jsonl", ""},
		{gemini, "/r/history/w-app/chats/session-x.jsonl", ""},
		{claude, "/r/projects/-w-app/agent-1234.jsonl", FormLines},
		{claude, "/r/projects/-w-app/0a1b/subagents/agent-ab.jsonl", FormLines},
		{claude, "/r/projects/-w-app/0a1b/subagents/deeper/agent-cd.jsonl", FormLines},
		{claude, "/r/projects/-w-app/0a1b/subagents/agent-ab.meta.json", ""},
		{claude, "/r/projects/-w-app/0a1b/tool-results/x.jsonl", ""},
		{claude, "/r/history.jsonl", ""},
		{claude, "/other/projects/a/b.jsonl", ""},
		{codex, "/r/sessions/2026/05/01/rollout-2026-05-01T10-00-00-abc.jsonl", FormLines},
		{codex, "/r/sessions/2026/05/01/rollout-2026-05-01T10-00-00-abc.jsonl.zst", FormWhole},
		{codex, "/r/sessions/rollout-2025-08-23-abc.json", FormWhole},
		{codex, "/r/archived_sessions/rollout-x.jsonl", FormLines},
		{codex, "/r/history.jsonl", ""},
		{cursor, "/r/projects/Users-a-x/agent-transcripts/u1/u1.jsonl", FormLines},
		{cursor, "/r/projects/Users-a-x/agent-transcripts/u1/subagents/u2.jsonl", FormLines},
		{cursor, "/r/projects/Users-a-x/agent-transcripts/old.txt", ""},
		{cursor, "/r/chats/abc/def/store.db", FormSQLite},
		{cursor, "/r/chats/abc/store.db", ""},
		{app, "/r/globalStorage/state.vscdb", FormSQLite},
		{app, "/r/workspaceStorage/1234/state.vscdb", FormSQLite},
		{app, "/r/workspaceStorage/1234/state.vscdb-wal", ""},
	} {
		if got := tc.root.Form(filepath.FromSlash(tc.path)); got != tc.form {
			t.Errorf("%s %s: form %q, want %q", tc.root.Layout, tc.path, got, tc.form)
		}
	}
	for _, tc := range []struct {
		root Root
		dir  string
		want bool
	}{
		{claude, "/r", true}, {claude, "/r/projects/x/s/tool-results", false}, {claude, "/r/todos", false},
		{claude, "/r/projects/x/s/subagents/a", true},
		{codex, "/r/sessions/2026/05", true}, {codex, "/r/log", false},
		{cursor, "/r/projects/x/agent-transcripts/u/subagents", true}, {cursor, "/r/extensions", false},
		{app, "/r/workspaceStorage/abc", true}, {app, "/r/workspaceStorage/abc/images", false},
		{gemini, "/r/tmp/w-app/chats/0a1b", true}, {gemini, "/r/tmp/w-app/tool-outputs", false},
		{gemini, "/r/tmp/w-app/chats/0a1b/deeper", false}, {gemini, "/r/extensions", false},
	} {
		if got := tc.root.Descend(filepath.FromSlash(tc.dir)); got != tc.want {
			t.Errorf("%s descend %s = %v", tc.root.Layout, tc.dir, got)
		}
	}
	if !codex.Archived(filepath.FromSlash("/r/archived_sessions/rollout-x.jsonl")) || codex.Archived(filepath.FromSlash("/r/sessions/rollout-x.jsonl")) {
		t.Error("Archived")
	}
}
