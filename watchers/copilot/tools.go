package copilot

import (
	"encoding/json"
	"strings"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/toolkit"
)

// startData is tool.execution_start. Only allow-listed argument keys are
// decoded (paths, the command to classify, a URL's host, names).
type startData struct {
	ToolCallID    string `json:"toolCallId"`
	ToolName      string `json:"toolName"`
	MCPServerName string `json:"mcpServerName"`
	MCPToolName   string `json:"mcpToolName"`
	Arguments     struct {
		Path      string          `json:"path"`
		Paths     json.RawMessage `json:"paths"`
		Command   string          `json:"command"`
		URL       string          `json:"url"`
		AgentType string          `json:"agent_type"`
		Model     string          `json:"model"`
		Skill     string          `json:"skill"`
	} `json:"arguments"`
}

// completeData is tool.execution_complete.
type completeData struct {
	ToolCallID string `json:"toolCallId"`
	Success    bool   `json:"success"`
	Result     *struct {
		Content string `json:"content"`
	} `json:"result"`
	Error *struct {
		Message string `json:"message"`
		Code    string `json:"code"`
	} `json:"error"`
	ShellExecution *struct {
		ExitCode *int `json:"exitCode"`
	} `json:"shellExecution"`
	ToolTelemetry struct {
		RestrictedProperties struct {
			AgentID string `json:"agent_id"`
		} `json:"restrictedProperties"`
	} `json:"toolTelemetry"`
}

// kinds maps Copilot CLI's own tools to their map kind.
var kinds = map[string]string{
	"view": "read", "read": "read",
	"create": "edit", "edit": "edit", "str_replace_editor": "edit", "apply_patch": "edit", "write": "edit",
	"grep": "search", "glob": "search", "rg": "search", "lsp": "search",
	"bash": "exec", "powershell": "exec", "shell": "exec",
	"read_bash": "tool", "write_bash": "tool", "stop_bash": "tool", "list_bash": "tool",
	"read_powershell": "tool", "write_powershell": "tool", "stop_powershell": "tool", "list_powershell": "tool",
	"web_fetch": "web", "fetch": "web", "web_search": "web",
	"task": "subagent", "skill": "skill",
}

// awaitsUser are the tools that wait for the user.
var awaitsUser = map[string]bool{"ask_user": true, "exit_plan_mode": true}

func (p *Parser) toolStart(lane string, t int64, d *startData) {
	p.session(t, "", "")
	name := watchers.Ident(d.ToolName)
	if name == "" {
		name = "unknown"
	}
	id := safeID(d.ToolCallID)
	a := d.Arguments
	call := event.Call{ID: id, Tool: name}
	info := callInfo{}
	target := func(path, touch, op string) {
		if path != "" {
			call.Targets = append(call.Targets, p.paths.Target(path, touch, op))
		}
	}
	switch kinds[name] {
	case "read":
		call.Kind, call.Cat = "read", "file"
		target(a.Path, "read", "")
	case "edit":
		call.Kind, call.Cat = "edit", "file"
		op := "modify"
		if name == "create" {
			op = "create"
		}
		target(a.Path, "edit", op)
		call.SkillWrite = redact.SkillWrite(a.Path)
	case "search":
		call.Kind, call.Cat = "search", "file"
		target(firstPath(a.Path, a.Paths), "hit", "")
	case "exec":
		sh := toolkit.ShellCall(name, a.Command)
		call = sh.Call
		call.ID = id
		info.PR, info.Commit = sh.PR, sh.Commit
	case "web":
		call.Kind, call.Cat, call.Host = "web", "web", "search"
		if h := redact.Host(a.URL); h != "" && name != "web_search" {
			call.Host = h
		}
	case "subagent":
		call.Kind, call.Cat = "subagent", "subagent"
		call.SubagentType = watchers.Ident(a.AgentType)
		call.SubagentModel = watchers.Ident(a.Model)
	case "skill":
		call.Kind, call.Cat, call.Skill = "skill", "skill", watchers.Ident(a.Skill)
	case "tool":
		call.Kind, call.Cat = "tool", "tool"
	default:
		srv, tool := watchers.Ident(d.MCPServerName), watchers.Ident(d.MCPToolName)
		if srv == "" {
			// An MCP tool named <server>/<tool> or <server>-<tool> by
			// the client when the record does not split it.
			if s, tl, ok := strings.Cut(name, "/"); ok {
				srv, tool = s, tl
			}
		}
		if srv != "" && tool != "" {
			call.Kind, call.Cat, call.Server, call.MCPTool = "mcp", "mcp", srv, tool
		} else {
			call.Kind, call.Cat = "tool", "tool"
			call.AwaitsUser = awaitsUser[name]
		}
	}
	info.Kind = call.Kind
	p.flushRepos(lane, t)
	p.emit(lane, event.Event{Kind: event.KindCall, T: t, Call: &call})
	if id == "" {
		return
	}
	info.Lane, info.Tool, info.Seq = lane, name, p.st.N
	if p.st.Calls == nil {
		p.st.Calls = map[string]callInfo{}
	}
	if len(p.st.Calls) >= maxOpen {
		p.st.Calls = map[string]callInfo{} // calls that never completed: forget them
	}
	p.st.Calls[id] = info
}

func (p *Parser) toolComplete(lane string, t int64, d *completeData) {
	id := safeID(d.ToolCallID)
	if id == "" {
		return
	}
	info := p.st.Calls[id]
	delete(p.st.Calls, id)
	res := event.Result{CallID: id}
	output := ""
	if d.Result != nil {
		output = d.Result.Content
	}
	res.OutBytes = int64(len(output))
	if !d.Success {
		res.Err = true
		msg := ""
		if d.Error != nil {
			msg = d.Error.Message
			res.OutBytes = int64(len(msg))
			switch d.Error.Code {
			case "denied", "rejected", "permission_denied":
				res.ErrClass = "permission_denied"
			}
		}
		if res.ErrClass == "" {
			res.ErrClass = redact.ErrorClass(msg)
		}
		if info.Kind == "subagent" && res.ErrClass == "other" {
			res.ErrClass = "subagent_failed"
		}
	}
	if info.Failed && (!res.Err || res.ErrClass == "other") {
		// The task call may return before its subagent fails (a
		// background subagent, or a call whose result is the subagent's
		// partial answer): the lane's failure is the call's.
		res.Err, res.ErrClass = true, "subagent_failed"
	}
	if se := d.ShellExecution; se != nil && se.ExitCode != nil {
		code := *se.ExitCode
		res.ExitCode = &code
		if code != 0 {
			res.Err, res.ErrClass = true, "exit_code"
		}
	}
	if info.PR != "" || info.Commit {
		toolkit.Shell{PR: info.PR, Commit: info.Commit}.Confirm(&res, output, p.paths.CWDRepo())
	}
	if l := p.st.Launch[id]; l != "" {
		res.Child = l
		delete(p.st.Launch, id)
	} else if a := d.ToolTelemetry.RestrictedProperties.AgentID; a != "" && info.Kind == "subagent" {
		res.Child = watchers.LaneID(a)
	}
	p.emit(lane, event.Event{Kind: event.KindResult, T: t, Result: &res})
}

// firstPath is a search's path: path, or the first of paths (a string or
// a list).
func firstPath(path string, paths json.RawMessage) string {
	if path != "" || len(paths) == 0 {
		return path
	}
	var s string
	if json.Unmarshal(paths, &s) == nil {
		return s
	}
	var list []string
	if json.Unmarshal(paths, &list) == nil && len(list) > 0 {
		return list[0]
	}
	return ""
}

// subagentFailed reads subagent.failed: the subagent a task call launched
// (data.toolCallId) failed. Its error is text and is not read. A call
// still open fails when it completes; one that already completed (a
// background subagent's call returns at once, and a sync one's result may
// come first) gets a later, failed result, which the builder takes over
// the earlier one.
func (p *Parser) subagentFailed(r *record, t int64, lane string) {
	var d struct {
		ToolCallID string `json:"toolCallId"`
	}
	_ = json.Unmarshal(r.Data, &d)
	id := safeID(d.ToolCallID)
	if id == "" {
		return
	}
	if info, ok := p.st.Calls[id]; ok {
		info.Failed = true
		p.st.Calls[id] = info
		return
	}
	child := lane
	if l := p.st.Launch[id]; l != "" {
		child = l
		delete(p.st.Launch, id)
	}
	// A subagent is one level deep in the map (a lane has no lanes of its
	// own), so the call is the main agent's.
	p.emit("", event.Event{Kind: event.KindResult, T: t, Result: &event.Result{CallID: id, Err: true,
		ErrClass: "subagent_failed", Child: child}})
}
