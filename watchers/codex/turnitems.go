package codex

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/agentmap/agentmap/builder/event"
)

// itemCompleted handles event_msg item_completed, the thread items of
// 0.14x and later. Most repeat a response item (AgentMessage, Reasoning,
// FileChange, …) and are skipped; four carry what 0.17x writes nowhere
// else: a prompt (UserMessage, no user_message any more), an MCP call's
// failure (McpToolCall, no mcp_tool_call_end any more), the threads a
// spawn reached (CollabAgentToolCall, no collab_agent_spawn_end), and
// what a unified-exec command read (CommandExecution's parsed_cmd, no
// exec_command_end any more).
func (p *Parser) itemCompleted(pl *item, t int64) {
	if len(pl.Item) == 0 || pl.Item[0] != '{' {
		return
	}
	var it turnItem
	if !turnItemFields.FillValid(&it, pl.Item) {
		it = turnItem{}
		if err := json.Unmarshal(pl.Item, &it); err != nil && !isTypeError(err) {
			return
		}
	}
	switch it.Type {
	case "UserMessage":
		p.userMessageItem(&it, t)
	case "McpToolCall":
		p.mcpItem(&it, t)
	case "CollabAgentToolCall":
		p.collabItem(&it, t)
	case "CommandExecution":
		p.commandItem(&it)
	}
}

// commandItem reads a CommandExecution item's parsed_cmd: the files the
// command read and the directories it listed or searched become the
// targets of its result, as exec_command_end's did. The item is written
// before the command's output, which emits the result; an item of a call
// already finished (a process that outlived its first output) or never
// shown adds nothing. Its exit code and duration are the output's too and
// are not read; neither are the command, its output or the file names.
func (p *Parser) commandItem(it *turnItem) {
	c := p.st.Calls[safeID(it.ID)]
	if c == nil {
		return
	}
	tg := p.parsedTargets(it.ParsedCmd, localPath(it.CWD))
	if len(tg) == 0 {
		return
	}
	if c.End == nil {
		c.End = &endFacts{}
	}
	c.End.Tg = tg
}

// localPath turns a file:// URI (0.17x writes the cwd so) into a path;
// anything else passes unchanged.
func localPath(s string) string {
	if !strings.HasPrefix(s, "file://") {
		return s
	}
	u, err := url.Parse(s)
	if err != nil || u.Path == "" {
		return ""
	}
	p := u.Path
	if len(p) > 3 && p[0] == '/' && p[2] == ':' {
		p = p[1:] // file:///C:/Users/…
	}
	return p
}

// samePrompt reports whether a prompt record of this kind is the second
// record of a prompt already counted: builds that write both the
// user_message and the UserMessage item write them one after the other,
// before the model answers. The pair is forgotten once matched.
func (p *Parser) samePrompt(kind string) bool {
	if p.st.Prompt != "" && p.st.Prompt != kind {
		p.st.Prompt = ""
		return true
	}
	return false
}

// userMessageItem counts a UserMessage item as a prompt (the 0.17x
// source). Its text is measured only; injected context is not a prompt.
func (p *Parser) userMessageItem(it *turnItem, t int64) {
	if p.samePrompt("item") {
		return
	}
	text, images := contentText(it.Content)
	if isSynthetic(text) {
		return
	}
	p.userPrompt(t, text, images)
	p.st.Prompt = "item"
}

// mcpItem reads an McpToolCall item: its status and isError flag are the
// only record of a failed call in 0.17x, whose output is the tool's text
// with no success flag. It enriches the open call (the output follows);
// alone, it is the call.
func (p *Parser) mcpItem(it *turnItem, t int64) {
	id := safeID(it.ID)
	facts := endFacts{Dur: durationMs(it.Duration)}
	var r struct {
		IsError *bool `json:"isError"`
	}
	if len(it.Result) > 0 && it.Result[0] == '{' {
		_ = json.Unmarshal(it.Result, &r)
	}
	if it.Status == "failed" || (r.IsError != nil && *r.IsError) {
		facts.Err, facts.Class = true, "other"
	}
	if p.enrich(id, facts) || id == "" {
		return
	}
	ev := event.Call{Tool: "mcp", Kind: "mcp", Cat: "mcp", Server: identifier(it.Server), MCPTool: identifier(it.Tool)}
	if ev.Server != "" {
		ev.Tool = "mcp__" + ev.Server + "__" + ev.MCPTool
	}
	p.emitCall(t, id, ev, call{Tool: ev.Tool, Class: "mcp"})
	p.finish(id, t, event.Result{CallID: id, DurMs: facts.Dur, Err: facts.Err, ErrClass: facts.Class})
}

// collabItem reads a CollabAgentToolCall item: for a spawn_agent call still
// open, the thread it started is the child lane, as collab_agent_spawn_end
// gave it before 0.17x.
func (p *Parser) collabItem(it *turnItem, t int64) {
	id := safeID(it.ID)
	c := p.st.Calls[id]
	if c == nil || c.Class != "spawn" || len(it.Receivers) != 1 {
		return
	}
	child := it.Receivers[0]
	if !uuidAny.MatchString(child) {
		return
	}
	lane := LaneID(child)
	p.declareLane(t, lane, id, c.SAType, it.Model)
	c.Lane = lane
}
