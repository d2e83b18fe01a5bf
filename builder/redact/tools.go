package redact

import "strings"

// Tool is the classification of a tool name.
type Tool struct {
	Kind    string // read, search, edit, exec, web, subagent, skill, mcp, tool
	Cat     string // file, shell, web, subagent, skill, mcp, tool
	Server  string // mcp only
	MCPTool string // mcp only
}

// toolKinds maps lower-cased tool names of Claude Code, Codex and Cursor to
// their map kind.
var toolKinds = map[string]string{}

func init() {
	add := func(kind, names string) {
		for _, n := range strings.Fields(names) {
			toolKinds[n] = kind
		}
	}
	add("read", `read view read_file read_file_v2 notebookread view_image readfile
		read_many_files open_file`)
	add("search", `grep glob ls grep_search codebase_search file_search list_dir
		list_directory glob_file_search find find_files search search_files
		ripgrep_search ripgrep_raw_search semantic_search semantic_search_full
		list_files`)
	add("edit", `edit write multiedit notebookedit apply_patch edit_file edit_file_v2
		write_file search_replace delete_file create_file str_replace
		str_replace_editor str_replace_based_edit_tool write_to_file replace
		multi_edit`)
	add("exec", `bash powershell shell shell_command exec_command local_shell
		local_shell_call run_terminal_cmd run_terminal_command run_terminal_command_v2
		container.exec terminal run_command execute_command write_stdin`)
	add("web", `webfetch websearch web_search web_fetch fetch web_search_call
		search_web`)
	add("subagent", `task agent spawn_agent task_v2 dispatch_agent subagent
		run_subagent launch_agent`)
	add("skill", `skill`)
}

var kindCats = map[string]string{
	"read": "file", "search": "file", "edit": "file", "exec": "shell",
	"web": "web", "subagent": "subagent", "skill": "skill", "mcp": "mcp", "tool": "tool",
}

// ClassifyTool maps a tool name of any agent to its map kind and category.
// Names compare case-insensitively. MCP names come back as kind mcp with
// server and tool split:
//   - mcp__<server>__<tool> (Claude Code, Codex): split on the first two "__";
//   - mcp_<server>_<tool>: split on the first "_" after the prefix (a server
//     name with "_" in it cannot be told apart here);
//   - <server>__<tool> (Codex 2025) and <server>.<tool>, when the name is not
//     a known built-in.
//
// Everything else is kind tool.
func ClassifyTool(name string) Tool {
	lower := strings.ToLower(strings.TrimSpace(name))
	if kind, ok := toolKinds[lower]; ok {
		return Tool{Kind: kind, Cat: kindCats[kind]}
	}
	if srv, tool, ok := splitMCP(name); ok {
		return Tool{Kind: "mcp", Cat: "mcp", Server: srv, MCPTool: tool}
	}
	return Tool{Kind: "tool", Cat: "tool"}
}

func splitMCP(name string) (server, tool string, ok bool) {
	name = strings.TrimSpace(name)
	lower := strings.ToLower(name)
	switch {
	case strings.HasPrefix(lower, "mcp__"):
		server, tool, ok = strings.Cut(name[5:], "__")
	case strings.HasPrefix(lower, "mcp_"):
		server, tool, ok = strings.Cut(name[4:], "_")
	case strings.Contains(name, "__"):
		server, tool, ok = strings.Cut(name, "__")
	case strings.Count(name, ".") == 1:
		server, tool, ok = strings.Cut(name, ".")
		ok = ok && isIdent(server) && isIdent(tool)
	}
	if !ok || server == "" || tool == "" {
		return "", "", false
	}
	return server, tool, true
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isASCIILetter(c) || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// SkillWrite returns the skill name when a path is a skill definition file,
// else "": <dir>/skills/<name>/SKILL.md with <dir> one of .claude, .codex,
// .cursor, .agents (project or home), in any slash style.
func SkillWrite(p string) string {
	p = strings.ReplaceAll(p, `\`, "/")
	segs := strings.Split(p, "/")
	n := len(segs)
	if n < 4 || !strings.EqualFold(segs[n-1], "SKILL.md") || segs[n-3] != "skills" {
		return ""
	}
	switch strings.ToLower(segs[n-4]) {
	case ".claude", ".codex", ".cursor", ".agents":
	default:
		return ""
	}
	if name := segs[n-2]; isPlainName(name) {
		return name
	}
	return ""
}
