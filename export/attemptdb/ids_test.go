package attemptdb

import "testing"

// The vectors of attemptdb-conformance-rules.md; 1-4 are the values of
// AttemptDB's own golden fixture.
func TestDeriveVectors(t *testing.T) {
	tests := []struct {
		name string
		got  string
		want string
	}{
		{"session claude_code", SessionID("claude_code", "sess-sub-1"), "951ad969-3305-500f-89b8-a3ee9996389d"},
		{"session from alias", SessionID("claude-code", "sess-sub-1"), "951ad969-3305-500f-89b8-a3ee9996389d"},
		{"project remote", Derive(prefixProject, "remote", "github.com/example/project"), "2c38b208-07f6-59a6-9871-ceaf11d5bf00"},
		{"agent top-level", MainAgentID("951ad969-3305-500f-89b8-a3ee9996389d"), "459d482c-79cf-529c-b264-d9b00a7ec87a"},
		{"agent subagent", SubagentID("951ad969-3305-500f-89b8-a3ee9996389d", "agent-7f3a"), "d2d59314-fa75-5040-bf9d-f33d64628f88"},
		{"session codex", SessionID("codex", "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"), "04682615-3085-55da-a772-62891276b0fc"},
		{"project root", RootProjectID("0190f3a2-7b4c-7d10-9e2f-3a4b5c6d7e8f", "/home/dev/example/project"), "f939d303-4905-5b45-ad1a-d57fbf8b4df7"},
		{"project root, unnormalised", RootProjectID("0190F3A2-7B4C-7D10-9E2F-3A4B5C6D7E8F", " /home//dev/example/project "), "f939d303-4905-5b45-ad1a-d57fbf8b4df7"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, tt.got, tt.want)
		}
	}
}

func TestNormalizeProvider(t *testing.T) {
	for in, want := range map[string]string{
		" Claude ": "claude_code", "claudecode": "claude_code", "claude-code": "claude_code",
		"codex_cli": "codex", "Codex-CLI": "codex", "gemini": "gemini_cli", "cursor": "cursor", "My-Agent": "my_agent",
	} {
		if got := NormalizeProvider(in); got != want {
			t.Errorf("NormalizeProvider(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLogicalRoot(t *testing.T) {
	for in, want := range map[string]string{
		"shop": "shop", " /a//b/ ": "/a/b/", `c:\Users\x\proj`: "C:/Users/x/proj",
		`\\server\share\p`: "//server/share/p", `\\?\d:\p`: "D:/p", `\\?\UNC\srv\s`: "//srv/s",
	} {
		if got := LogicalRoot(in); got != want {
			t.Errorf("LogicalRoot(%q) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[string]string{"shop": "shop", "/a/b/": "b", "/": "project", "C:/": "project"} {
		if got := rootName(in); got != want {
			t.Errorf("rootName(%q) = %q, want %q", in, got, want)
		}
	}
}
