package redact

import "testing"

func TestClassifyTool(t *testing.T) {
	tests := []struct {
		name string
		want Tool
	}{
		{"Read", Tool{Kind: "read", Cat: "file"}},
		{"view", Tool{Kind: "read", Cat: "file"}},
		{"read_file", Tool{Kind: "read", Cat: "file"}},
		{"read_file_v2", Tool{Kind: "read", Cat: "file"}},
		{"NotebookRead", Tool{Kind: "read", Cat: "file"}},
		{"view_image", Tool{Kind: "read", Cat: "file"}},
		{"Grep", Tool{Kind: "search", Cat: "file"}},
		{"Glob", Tool{Kind: "search", Cat: "file"}},
		{"LS", Tool{Kind: "search", Cat: "file"}},
		{"grep_search", Tool{Kind: "search", Cat: "file"}},
		{"codebase_search", Tool{Kind: "search", Cat: "file"}},
		{"file_search", Tool{Kind: "search", Cat: "file"}},
		{"list_dir", Tool{Kind: "search", Cat: "file"}},
		{"glob_file_search", Tool{Kind: "search", Cat: "file"}},
		{"ripgrep_raw_search", Tool{Kind: "search", Cat: "file"}},
		{"semantic_search_full", Tool{Kind: "search", Cat: "file"}},
		{"Edit", Tool{Kind: "edit", Cat: "file"}},
		{"Write", Tool{Kind: "edit", Cat: "file"}},
		{"MultiEdit", Tool{Kind: "edit", Cat: "file"}},
		{"NotebookEdit", Tool{Kind: "edit", Cat: "file"}},
		{"apply_patch", Tool{Kind: "edit", Cat: "file"}},
		{"edit_file", Tool{Kind: "edit", Cat: "file"}},
		{"edit_file_v2", Tool{Kind: "edit", Cat: "file"}},
		{"search_replace", Tool{Kind: "edit", Cat: "file"}},
		{"delete_file", Tool{Kind: "edit", Cat: "file"}},
		{"write", Tool{Kind: "edit", Cat: "file"}},
		{"Bash", Tool{Kind: "exec", Cat: "shell"}},
		{"PowerShell", Tool{Kind: "exec", Cat: "shell"}},
		{"shell", Tool{Kind: "exec", Cat: "shell"}},
		{"Shell", Tool{Kind: "exec", Cat: "shell"}},
		{"shell_command", Tool{Kind: "exec", Cat: "shell"}},
		{"exec_command", Tool{Kind: "exec", Cat: "shell"}},
		{"local_shell", Tool{Kind: "exec", Cat: "shell"}},
		{"container.exec", Tool{Kind: "exec", Cat: "shell"}},
		{"run_terminal_cmd", Tool{Kind: "exec", Cat: "shell"}},
		{"run_terminal_command_v2", Tool{Kind: "exec", Cat: "shell"}},
		{"write_stdin", Tool{Kind: "exec", Cat: "shell"}},
		{"WebFetch", Tool{Kind: "web", Cat: "web"}},
		{"WebSearch", Tool{Kind: "web", Cat: "web"}},
		{"web_search", Tool{Kind: "web", Cat: "web"}},
		{"web_fetch", Tool{Kind: "web", Cat: "web"}},
		{"fetch", Tool{Kind: "web", Cat: "web"}},
		{"Task", Tool{Kind: "subagent", Cat: "subagent"}},
		{"Agent", Tool{Kind: "subagent", Cat: "subagent"}},
		{"spawn_agent", Tool{Kind: "subagent", Cat: "subagent"}},
		{"task_v2", Tool{Kind: "subagent", Cat: "subagent"}},
		{"Skill", Tool{Kind: "skill", Cat: "skill"}},
		{"mcp__github__create_issue", Tool{Kind: "mcp", Cat: "mcp", Server: "github", MCPTool: "create_issue"}},
		{"mcp__plugin_x_y__do__it", Tool{Kind: "mcp", Cat: "mcp", Server: "plugin_x_y", MCPTool: "do__it"}},
		{"mcp__graph-memory__search_nodes", Tool{Kind: "mcp", Cat: "mcp", Server: "graph-memory", MCPTool: "search_nodes"}},
		{"mcp_linear_list_issues", Tool{Kind: "mcp", Cat: "mcp", Server: "linear", MCPTool: "list_issues"}},
		{"playwright__browser_click", Tool{Kind: "mcp", Cat: "mcp", Server: "playwright", MCPTool: "browser_click"}},
		{"sentry.get_issue", Tool{Kind: "mcp", Cat: "mcp", Server: "sentry", MCPTool: "get_issue"}},
		{"mcp__", Tool{Kind: "tool", Cat: "tool"}},
		{"mcp__server", Tool{Kind: "tool", Cat: "tool"}},
		{"TodoWrite", Tool{Kind: "tool", Cat: "tool"}},
		{"TaskCreate", Tool{Kind: "tool", Cat: "tool"}},
		{"ToolSearch", Tool{Kind: "tool", Cat: "tool"}},
		{"AskUserQuestion", Tool{Kind: "tool", Cat: "tool"}},
		{"update_plan", Tool{Kind: "tool", Cat: "tool"}},
		{"a.b.c", Tool{Kind: "tool", Cat: "tool"}},
		{"", Tool{Kind: "tool", Cat: "tool"}},
	}
	for _, tt := range tests {
		if got := ClassifyTool(tt.name); got != tt.want {
			t.Errorf("ClassifyTool(%q) = %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestSkillWrite(t *testing.T) {
	tests := map[string]string{
		".claude/skills/deploy/SKILL.md":              "deploy",
		"/home/u/.claude/skills/pdf-tools/SKILL.md":   "pdf-tools",
		`C:\Users\u\.claude\skills\notes\SKILL.md`:    "notes",
		"repo/.codex/skills/review/SKILL.md":          "review",
		".cursor/skills/x/skill.md":                   "x",
		".agents/skills/a_b/SKILL.md":                 "a_b",
		".claude/skills/deploy/README.md":             "",
		".claude/skills/SKILL.md":                     "",
		"skills/deploy/SKILL.md":                      "",
		".claude/agents/x/SKILL.md":                   "",
		".claude/skills/we ird/SKILL.md":              "",
		".claude/skills/deploy/nested/SKILL.md":       "",
		"/home/u/.claude/plugins/p/skills/s/SKILL.md": "",
		"": "",
		"/home/u/project/.claude/skills/lint-fix/SKILL.md": "lint-fix",
	}
	for in, want := range tests {
		if got := SkillWrite(in); got != want {
			t.Errorf("SkillWrite(%q) = %q, want %q", in, got, want)
		}
	}
}
