package watchers

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

func TestOverrideRoots(t *testing.T) {
	dirs := func(rs []Root) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Agent+":"+r.Layout+"="+filepath.ToSlash(r.Dir))
		}
		return out
	}
	roots := []Root{
		{Agent: "claude", Layout: LayoutClaude, Dir: "/h/.claude"}, {Agent: "codex", Layout: LayoutCodex, Dir: "/h/.codex"},
		{Agent: "cursor", Layout: LayoutCursor, Dir: "/h/.cursor"}, {Agent: "cursor", Layout: LayoutCursorApp, Dir: "/h/.config/Cursor/User"},
		{Agent: "gemini", Layout: LayoutGemini, Dir: "/h/.gemini"},
	}
	if got := dirs(OverrideRoots(roots, nil)); !reflect.DeepEqual(got, dirs(roots)) {
		t.Errorf("no override: %q", got)
	}
	over := OverrideRoots(roots, map[string][]string{"codex": {"/t/codex/"}, "cursor-app": {"/t/a", "/t/b"}})
	if got := dirs(over); !reflect.DeepEqual(got, []string{
		"claude:claude=/h/.claude", "cursor:cursor=/h/.cursor", "gemini:gemini=/h/.gemini",
		"codex:codex=/t/codex", "cursor:cursor-app=/t/a", "cursor:cursor-app=/t/b"}) {
		t.Errorf("override: %q", got)
	}
	// A directory given twice, once with a trailing slash, is one root;
	// the same directory as two agents' roots stays two.
	twice := OverrideRoots(roots, map[string][]string{"codex": {"/t/codex", "/t/x", "/t/codex/"}, "gemini": {"/t/codex"}})
	if got := dirs(twice); !reflect.DeepEqual(got, []string{
		"claude:claude=/h/.claude", "cursor:cursor=/h/.cursor", "cursor:cursor-app=/h/.config/Cursor/User",
		"codex:codex=/t/codex", "codex:codex=/t/x", "gemini:gemini=/t/codex"}) {
		t.Errorf("override with a directory twice: %q", got)
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

// Meets says of a path what a walk finds there: every log the walk meets,
// in its form, and none of the files it passes over.
func TestMeetsAgreesWithTheWalk(t *testing.T) {
	home := t.TempDir()
	claude := Root{Agent: "claude", Layout: LayoutClaude, Dir: filepath.Join(home, ".claude")}
	codex := Root{Agent: "codex", Layout: LayoutCodex, Dir: filepath.Join(home, ".codex")}
	files := []string{
		".claude/projects/-w/s.jsonl",
		".claude/projects/-w/s.jsonl.1",
		".claude/projects/-w/s/subagents/agent-a.jsonl",
		".claude/projects/-w/s/tool-results/x.jsonl",
		".claude/projects/-w/tool-results/y.jsonl",
		".claude/projects/-w/memory/m.jsonl",
		".claude/projects/-w/notes.txt",
		".claude/todos/t.jsonl",
		".codex/sessions/2026/01/02/rollout-a.jsonl",
		".codex/archived_sessions/rollout-b.jsonl",
		".codex/log/codex-tui.log",
	}
	for _, f := range files {
		p := filepath.Join(home, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("{}\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	walked := map[string]string{}
	for _, f := range Scan([]Root{claude, codex}) {
		walked[f.Path] = f.Form
	}
	if len(walked) < 4 {
		t.Fatalf("the walk met only %v", walked)
	}
	for _, f := range files {
		p := filepath.Join(home, f)
		form, ok := claude.Meets(p)
		if !ok {
			form, ok = codex.Meets(p)
		}
		if want, met := walked[p]; ok != met || form != want {
			t.Errorf("Meets(%s) = %q, %v; the walk: %q, %v", f, form, ok, want, met)
		}
	}
	if _, ok := claude.Meets(claude.Dir); ok {
		t.Error("the root itself is not a log")
	}
}
