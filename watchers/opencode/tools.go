package opencode

import (
	"encoding/json"
	"strings"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/toolkit"
)

// str returns a string argument of a tool input, "" when absent or not a
// string.
func str(in map[string]json.RawMessage, key string) string {
	var s string
	if raw, ok := in[key]; ok {
		_ = json.Unmarshal(raw, &s)
	}
	return s
}

// builtin maps OpenCode's own tools to their map kind.
var builtin = map[string]string{
	"read": "read", "write": "edit", "edit": "edit", "multiedit": "edit", "patch": "edit", "apply_patch": "edit",
	"glob": "search", "grep": "search", "list": "search", "codesearch": "web",
	"bash": "exec", "webfetch": "web", "websearch": "web", "task": "subagent", "skill": "skill",
	"todowrite": "tool", "todoread": "tool", "question": "tool", "lsp": "tool", "batch": "tool",
	"plan_enter": "tool", "plan_exit": "tool", "invalid": "tool",
}

// tool emits one tool part as a call and, once it finished, its result.
// It returns the time the tool ended (or started, while it runs).
func (c *conv) tool(respT int64, p partInfo) int64 {
	name := watchers.Ident(p.Tool)
	if name == "" {
		name = "unknown"
	}
	in := p.State.Input
	start := max(p.State.Time.Start, respT)
	call := event.Call{ID: p.CallID, Tool: name}
	var sh *toolkit.Shell
	target := func(path, touch, op string) {
		if path != "" {
			call.Targets = append(call.Targets, c.paths.Target(path, touch, op))
		}
	}
	switch builtin[name] {
	case "read":
		call.Kind, call.Cat = "read", "file"
		target(str(in, "filePath"), "read", "")
	case "edit":
		call.Kind, call.Cat = "edit", "file"
		op := "modify"
		if name == "write" && p.State.Metadata.Exists != nil && !*p.State.Metadata.Exists {
			op = "create"
		}
		if path := str(in, "filePath"); path != "" {
			target(path, "edit", op)
			call.SkillWrite = redact.SkillWrite(path)
		} else if patch := str(in, "patchText"); patch != "" {
			for _, f := range patchFiles(patch) {
				target(f.path, "edit", f.op)
			}
		}
	case "search":
		call.Kind, call.Cat = "search", "file"
		target(str(in, "path"), "hit", "")
	case "exec":
		s := toolkit.ShellCall(name, str(in, "command"))
		sh = &s
		call = s.Call
		call.ID = p.CallID
		if wd := str(in, "workdir"); wd != "" {
			c.paths.SetCWD(wd)
		}
	case "web":
		call.Kind, call.Cat, call.Host = "web", "web", "search"
		if h := redact.Host(str(in, "url")); h != "" && name == "webfetch" {
			call.Host = h
		}
	case "subagent":
		call.Kind, call.Cat = "subagent", "subagent"
		call.SubagentType = watchers.Ident(str(in, "subagent_type"))
		if child := p.State.Metadata.SessionID; child != "" {
			c.launches[child] = launch{call: p.CallID, subagentType: call.SubagentType}
		}
	case "skill":
		call.Kind, call.Cat, call.Skill = "skill", "skill", watchers.Ident(str(in, "name"))
	case "tool":
		call.Kind, call.Cat = "tool", "tool"
		call.AwaitsUser = name == "question" || name == "plan_exit"
	default:
		// An MCP tool: OpenCode names it <server>_<tool>.
		if srv, tool, ok := strings.Cut(name, "_"); ok && srv != "" && tool != "" {
			call.Kind, call.Cat, call.Server, call.MCPTool = "mcp", "mcp", srv, tool
		} else {
			call.Kind, call.Cat = "tool", "tool"
		}
	}
	c.flushRepos(start)
	c.emit(event.Event{Kind: event.KindCall, T: start, Call: &call})
	status := p.State.Status
	if status != "completed" && status != "error" {
		return start
	}
	end := max(p.State.Time.End, start)
	res := event.Result{CallID: p.CallID, OutBytes: int64(len(p.State.Output))}
	if p.State.Time.End > 0 && p.State.Time.Start > 0 {
		res.DurMs = p.State.Time.End - p.State.Time.Start
	}
	if status == "error" {
		res.Err, res.ErrClass = true, redact.ErrorClass(p.State.Error)
		if call.Kind == "subagent" && res.ErrClass == "other" {
			res.ErrClass = "subagent_failed"
		}
		res.OutBytes = int64(len(p.State.Error))
	}
	if x := p.State.Metadata.Exit; x != nil && sh != nil {
		code := *x
		res.ExitCode = &code
		if code != 0 {
			res.Err, res.ErrClass = true, "exit_code"
		}
	}
	if sh != nil {
		sh.Confirm(&res, p.State.Output, c.paths.CWDRepo())
	}
	if child := p.State.Metadata.SessionID; child != "" && call.Kind == "subagent" {
		res.Child = watchers.LaneID(child)
	}
	c.emit(event.Event{Kind: event.KindResult, T: end, Result: &res})
	return end
}

// patchFile is one file header of an apply_patch input.
type patchFile struct{ path, op string }

// patchFiles reads the file headers of an apply_patch input ("*** Add
// File: p", "*** Update File: p", "*** Delete File: p", "*** Move to: p"),
// nothing else.
func patchFiles(patch string) []patchFile {
	var out []patchFile
	for _, line := range strings.Split(patch, "\n") {
		// A header starts its line; a hunk's lines start with a space, a
		// + or a -, and a context line that reads like a header is the
		// file's content, not a path.
		line = strings.TrimRight(line, "\r ")
		for prefix, op := range map[string]string{"*** Add File: ": "create", "*** Update File: ": "modify",
			"*** Delete File: ": "delete", "*** Move to: ": "rename-to"} {
			if rest, ok := strings.CutPrefix(line, prefix); ok && rest != "" {
				out = append(out, patchFile{strings.TrimSpace(rest), op})
			}
		}
	}
	return out
}
