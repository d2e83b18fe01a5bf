package gemini

import (
	"encoding/json"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/watchers/toolkit"
)

// args holds the allow-listed keys of a tool call's arguments. Everything
// else (file contents, old and new strings, prompts, queries) is never
// decoded.
type args struct {
	FilePath     string `json:"file_path"`
	AbsolutePath string `json:"absolute_path"` // read_file before 0.2x
	Path         string `json:"path"`
	DirPath      string `json:"dir_path"`
	Command      string `json:"command"`
	Directory    string `json:"directory"` // run_shell_command before 0.2x
	AgentName    string `json:"agent_name"`
	Name         string `json:"name"`
	URL          string `json:"url"`
	Prompt       string `json:"prompt"` // web_fetch: read for its first URL's host
	Server       string `json:"serverName"`
}

// subagentTools are the built-in agents that older versions exposed as
// tools of their own, before invoke_agent took their name as an argument.
var subagentTools = map[string]bool{"codebase_investigator": true, "cli_help": true, "generalist": true}

// awaitsUser are the tools whose time is the user's.
var awaitsUser = map[string]bool{"ask_user": true, "exit_plan_mode": true}

// otherTools are built-ins of no file, shell or web kind.
var otherTools = map[string]bool{"write_todos": true, "save_memory": true, "enter_plan_mode": true,
	"update_topic": true, "complete_task": true, "get_internal_docs": true, "ask_user": true,
	"exit_plan_mode": true, "tracker_create_task": true, "tracker_update_task": true,
	"tracker_get_task": true, "tracker_list_tasks": true, "tracker_add_dependency": true,
	"tracker_visualize": true}

// toolCall emits one completed tool call and its result.
func (p *Parser) toolCall(tc *toolCall, id string, t int64) {
	var a args
	_ = json.Unmarshal(tc.Args, &a)
	name := ident(tc.Name)
	if name == "" {
		name = "unknown"
	}
	ev := event.Call{ID: id, Tool: name}
	var shell *toolkit.Shell
	switch {
	case name == "read_file":
		ev.Kind, ev.Cat = "read", "file"
		ev.Targets = p.targets(firstOf(a.FilePath, a.AbsolutePath, a.Path), "read", "")
	case name == "read_many_files":
		ev.Kind, ev.Cat = "read", "file"
	case name == "list_directory", name == "glob", name == "grep_search", name == "search_file_content":
		ev.Kind, ev.Cat = "search", "file"
		ev.Targets = p.targets(firstOf(a.DirPath, a.Path), "hit", "")
	case name == "write_file", name == "replace", name == "edit":
		ev.Kind, ev.Cat = "edit", "file"
		op := "modify"
		if newFile(tc.ResultDisplay) {
			op = "create"
		}
		target := firstOf(a.FilePath, a.AbsolutePath, a.Path)
		ev.Targets = p.targets(target, "edit", op)
		ev.SkillWrite = redact.SkillWrite(target)
	case name == "run_shell_command":
		sh := toolkit.ShellCall(name, a.Command)
		ev.Kind, ev.Cat, ev.Verb, ev.VCS = sh.Call.Kind, sh.Call.Cat, sh.Call.Verb, sh.Call.VCS
		shell = &sh
	case name == "google_web_search", name == "web_search":
		ev.Kind, ev.Cat, ev.Host = "web", "web", "search"
	case name == "web_fetch":
		ev.Kind, ev.Cat, ev.Host = "web", "web", fetchHost(firstOf(a.URL, a.Prompt))
	case name == "activate_skill":
		ev.Kind, ev.Cat, ev.Skill = "skill", "skill", ident(a.Name)
	case name == "invoke_agent":
		ev.Kind, ev.Cat, ev.SubagentType = "subagent", "subagent", ident(a.AgentName)
	case subagentTools[name]:
		ev.Kind, ev.Cat, ev.SubagentType = "subagent", "subagent", name
	case name == "read_mcp_resource", name == "list_mcp_resources":
		ev.Kind, ev.Cat, ev.Server, ev.MCPTool = "mcp", "mcp", ident(a.Server), name
	case otherTools[name]:
		ev.Kind, ev.Cat, ev.AwaitsUser = "tool", "tool", awaitsUser[name]
	default:
		// MCP tools are mcp_<server>_<tool> (the server name has no "_").
		c := redact.ClassifyTool(name)
		ev.Kind, ev.Cat, ev.Server, ev.MCPTool = c.Kind, c.Cat, c.Server, c.MCPTool
	}
	if ev.Kind == "" {
		ev.Kind, ev.Cat = "tool", "tool"
	}
	p.flushRepos(t)
	p.emit(event.Event{Kind: event.KindCall, T: t, Call: &ev})
	p.result(tc, &ev, shell, t)
}

func (p *Parser) targets(path, touch, op string) []event.Target {
	if path == "" {
		return nil
	}
	return []event.Target{p.paths.Target(path, touch, op)}
}

// newFile reads resultDisplay.isNewFile of an edit.
func newFile(raw json.RawMessage) bool {
	if len(raw) == 0 || raw[0] != '{' {
		return false
	}
	var d struct {
		IsNewFile bool `json:"isNewFile"`
	}
	_ = json.Unmarshal(raw, &d)
	return d.IsNewFile
}

var urlRE = regexp.MustCompile(`https?://[^\s"'<>]+`)

// fetchHost is the host of the first URL in a web_fetch argument (the
// prompt names the pages to fetch), or "" when it names none.
func fetchHost(s string) string {
	if u := urlRE.FindString(s); u != "" {
		return redact.Host(u)
	}
	return ""
}

// exitRE finds the shell tool's own exit status line ("Exit Code: 1"),
// which it writes after the output only when the status is not zero.
var exitRE = regexp.MustCompile(`(?m)^Exit Code: (-?\d+)\s*$`)

// result emits the result of a completed call: its status, size, error
// class and, for a shell command, the exit code and confirmed outputs.
func (p *Parser) result(tc *toolCall, call *event.Call, shell *toolkit.Shell, callT int64) {
	t, ok := parseTime(tc.Timestamp)
	if !ok || t < callT {
		t = callT
	}
	if t > p.st.T {
		p.st.T = t
	}
	p.st.In = max(p.st.In, t)
	out, failure := responseText(tc.Result)
	res := event.Result{CallID: call.ID, OutBytes: int64(len(out) + len(failure))}
	switch tc.Status {
	case "error":
		res.Err, res.ErrClass = true, redact.ErrorClass(failure+out)
	case "cancelled":
		res.Err, res.ErrClass = true, "interrupted"
	default:
		if failure != "" {
			res.Err, res.ErrClass = true, redact.ErrorClass(failure)
		}
	}
	if shell != nil {
		if m := exitRE.FindAllStringSubmatch(out, -1); len(m) > 0 {
			if code, err := strconv.Atoi(m[len(m)-1][1]); err == nil && code != 0 {
				res.ExitCode = &code
				res.Err, res.ErrClass = true, "exit_code"
			}
		}
		if !res.Err && tc.Status == "success" {
			zero := 0
			res.ExitCode = &zero
		}
		shell.Confirm(&res, out, p.paths.CWDRepo())
	}
	if call.Kind == "subagent" && tc.AgentID != "" {
		res.Child = LaneID(tc.AgentID)
	}
	p.emit(event.Event{Kind: event.KindResult, T: t, Result: &res})
}

// responseText returns the output and the error text of a call's
// functionResponse parts (response.output / response.error; anything else,
// such as an MCP tool's content, counts by its JSON length as output).
// The text is measured and searched, never kept.
func responseText(raw json.RawMessage) (out, failure string) {
	var parts []part
	if json.Unmarshal(raw, &parts) != nil {
		return "", ""
	}
	var ob, fb strings.Builder
	for _, pt := range parts {
		if pt.FunctionResponse == nil {
			if pt.Text != nil {
				ob.WriteString(*pt.Text)
			}
			continue
		}
		var r map[string]json.RawMessage
		if json.Unmarshal(pt.FunctionResponse.Response, &r) != nil {
			continue
		}
		for _, k := range sortedKeys(r) {
			v := r[k]
			var s string
			isStr := json.Unmarshal(v, &s) == nil
			switch {
			case k == "error" && isStr:
				fb.WriteString(s)
			case k == "error":
				fb.Write(v)
			case k == "output" && isStr:
				ob.WriteString(s)
			default:
				ob.Write(v)
			}
		}
	}
	return ob.String(), fb.String()
}

func sortedKeys(m map[string]json.RawMessage) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
