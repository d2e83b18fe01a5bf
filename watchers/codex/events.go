package codex

import (
	"encoding/json"
	"strings"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/watchers"
)

// eventMsg handles an event_msg payload. Most event messages mirror
// response items (agent_message, agent_reasoning, item_completed) or hold
// only UI state; they are known and ignored so that an unknown type stands
// out in tests.
func (p *Parser) eventMsg(pl *item, t int64) {
	switch pl.Type {
	case "user_message":
		if p.samePrompt("event") {
			return
		}
		p.userPrompt(t, stringOf(pl.Message), countArray(pl.Images)+countArray(pl.LocalImages))
		p.st.Prompt = "event"
	case "item_completed":
		p.itemCompleted(pl, t)
	case "token_count":
		p.tokenCount(pl, t)
	case "task_complete", "turn_complete":
		p.closeResponse()
		p.st.TurnResp, p.st.Review, p.st.Prompt = false, false, ""
		if len(pl.Error) > 0 && string(pl.Error) != "null" {
			var e struct {
				Message        string          `json:"message"`
				CodexErrorInfo json.RawMessage `json:"codex_error_info"`
			}
			_ = json.Unmarshal(pl.Error, &e)
			p.emit(event.Event{Kind: event.KindError, T: t, Error: &event.Error{Source: "llm", Class: apiErrorClass(e.CodexErrorInfo, e.Message)}})
		}
		p.emit(event.Event{Kind: event.KindTurnEnd, T: t})
	case "turn_aborted":
		p.closeResponse()
		p.st.TurnResp, p.st.Review, p.st.Prompt = false, false, ""
		if pl.Reason != "review_ended" {
			p.emit(event.Event{Kind: event.KindError, T: t, Error: &event.Error{Source: "orchestration", Class: "interrupted"}})
		}
		p.emit(event.Event{Kind: event.KindTurnEnd, T: t})
	case "error":
		msg := stringOf(pl.Message)
		p.emit(event.Event{Kind: event.KindError, T: t, Error: &event.Error{Source: "llm", Class: apiErrorClass(pl.CodexErrorInfo, msg)}})
	case "stream_error":
		msg := stringOf(pl.Message)
		p.emit(event.Event{Kind: event.KindError, T: t, Error: &event.Error{
			Source: "llm", Class: apiErrorClass(pl.CodexErrorInfo, msg), Retry: retryAttempt(msg),
		}})
	case "context_compacted":
		p.compaction("event", t)
	case "entered_review_mode":
		p.enterReview(pl, t)
	case "exited_review_mode":
		p.st.Review = false
	case "exec_command_end":
		p.execEnd(pl, t)
	case "patch_apply_end":
		p.patchEnd(pl, t)
	case "mcp_tool_call_end":
		p.mcpEnd(pl, t)
	case "collab_agent_spawn_end":
		p.spawnEnd(pl, t)
	case "dynamic_tool_call_response":
		p.dynamicEnd(pl, t)
	case "view_image_tool_call":
		p.viewImageEnd(pl, t)
	default:
		if !ignoredEvents[pl.Type] {
			p.unknownType("event_msg/" + pl.Type)
		}
	}
}

// ignoredEvents are event_msg types known to carry nothing a map needs that
// another record does not already give.
var ignoredEvents = map[string]bool{
	"agent_message": true, "agent_message_delta": true, "agent_reasoning": true,
	"agent_reasoning_delta": true, "agent_reasoning_raw_content": true,
	"agent_reasoning_raw_content_delta": true, "agent_reasoning_section_break": true,
	"task_started": true, "turn_started": true, "session_configured": true,
	"thread_rolled_back": true, "undo_started": true, "undo_completed": true,
	"thread_name_updated": true, "thread_goal_updated": true, "thread_settings_applied": true,
	"image_generation_end": true, "item_started": true,
	"sub_agent_activity": true, "guardian_assessment": true,
	"web_search_begin": true, "web_search_end": true,
	"exec_command_begin": true, "exec_command_output_delta": true,
	"patch_apply_begin": true, "mcp_tool_call_begin": true,
	"collab_agent_spawn_begin": true, "collab_agent_interaction_begin": true,
	"collab_agent_interaction_end": true, "collab_waiting_begin": true,
	"collab_waiting_end": true, "collab_close_begin": true, "collab_close_end": true,
	"collab_resume_begin": true, "collab_resume_end": true,
	"dynamic_tool_call_request": true, "plan_update": true, "turn_diff": true,
	"background_event": true, "warning": true, "shutdown_complete": true,
	"get_history_entry_response": true, "mcp_list_tools_response": true,
	"list_custom_prompts_response": true, "conversation_path": true,
	"model_reroute": true, "deprecation_notice": true, "raw_response_item": true,
	"mcp_startup_update": true, "mcp_startup_complete": true,
	"exec_approval_request": true, "apply_patch_approval_request": true,
	"request_user_input": true, "elicitation_request": true,
	"view_image_tool_call_begin": true, "rate_limits": true,
}

// enterReview handles /review: the user's request is one turn (its size is
// that of the user's own instructions for a custom review, else nothing
// typed); the prompts Codex then writes for the review are not turns.
func (p *Parser) enterReview(pl *item, t int64) {
	if p.st.Review {
		return
	}
	var target struct {
		Type         string `json:"type"`
		Instructions string `json:"instructions"`
	}
	_ = json.Unmarshal(pl.Target, &target)
	text := ""
	if target.Type == "custom" {
		text = target.Instructions
	}
	p.userPrompt(t, text, 0)
	p.st.Review = true
}

// compaction emits one KindCompaction per compaction. Codex records one as
// a `compacted` item followed closely by a context_compacted event (either
// may be missing, depending on the version and on remote compaction); the
// second of the pair is dropped.
func (p *Parser) compaction(kind string, t int64) {
	if p.st.Compact != "" && p.st.Compact != kind {
		p.st.Compact = ""
		return
	}
	p.closeResponse()
	trigger := "manual"
	if p.st.TurnResp {
		// The model was mid-turn: Codex compacted on its own.
		trigger = "auto"
	}
	p.st.Compact = kind
	p.emit(event.Event{Kind: event.KindCompaction, T: t, Compact: &event.Compaction{Trigger: trigger, PreTokens: p.st.LastCtx}})
}

// apiErrorClass maps an API error to an error-event class. Codex's own
// codex_error_info names the failure; the message is a fallback read by
// redact and never kept.
func apiErrorClass(info json.RawMessage, msg string) string {
	key := ""
	if len(info) > 0 {
		switch info[0] {
		case '"':
			_ = json.Unmarshal(info, &key)
		case '{':
			var m map[string]json.RawMessage
			if json.Unmarshal(info, &m) == nil {
				for k := range m {
					key = k
				}
			}
		}
	}
	switch key {
	case "usage_limit_exceeded", "usage_not_included":
		return "usage_limit"
	case "rate_limited", "too_many_requests":
		return "rate_limit"
	case "server_overloaded":
		return "overloaded"
	case "internal_server_error":
		return "server_error"
	case "unauthorized":
		return "auth"
	case "bad_request", "context_window_exceeded", "invalid_request":
		return "bad_request"
	case "http_connection_failed", "response_stream_connection_failed",
		"response_stream_disconnected", "response_too_many_failed_attempts":
		return "api_error"
	}
	if c := redact.APIErrorClass(msg); c != "" {
		return c
	}
	return "api_error"
}

// retryAttempt reads N from a stream_error's "… N/M" reconnect counter.
func retryAttempt(msg string) int {
	for i := 0; i < len(msg); i++ {
		if msg[i] != '/' {
			continue
		}
		j := i
		for j > 0 && msg[j-1] >= '0' && msg[j-1] <= '9' {
			j--
		}
		if j < i && i+1 < len(msg) && msg[i+1] >= '0' && msg[i+1] <= '9' {
			n := 0
			for _, c := range msg[j:i] {
				n = n*10 + int(c-'0')
				if n > 1000 {
					return 0
				}
			}
			return n
		}
	}
	return 0
}

func countArray(raw json.RawMessage) int {
	if len(raw) == 0 || raw[0] != '[' {
		return 0
	}
	var a []json.RawMessage
	if json.Unmarshal(raw, &a) != nil {
		return 0
	}
	return len(a)
}

// execEnd handles exec_command_end: enrichment of an open call, or the only
// record of a command (one the user ran from the TUI).
func (p *Parser) execEnd(pl *item, t int64) {
	id := pl.CallID
	out, _ := pl.aggregatedLen.Of(pl.Aggregated)
	facts := endFacts{Exit: pl.ExitCode, Dur: durationMs(pl.Duration), Out: int64(out),
		Tg: p.parsedTargets(pl.ParsedCmd, pl.CWD)}
	if facts.Exit != nil && *facts.Exit != 0 {
		facts.Err, facts.Class = true, failClass(stringOf(pl.Aggregated), facts.Exit)
	}
	if p.enrich(id, facts) || id == "" {
		return
	}
	var argv []string
	_ = json.Unmarshal(pl.Command, &argv)
	ev, c := p.shellArgv("shell", argv, "")
	p.emitCall(t, id, ev, c)
	res := event.Result{CallID: id, ExitCode: facts.Exit, DurMs: facts.Dur, OutBytes: facts.Out, Err: facts.Err, ErrClass: facts.Class,
		Targets: facts.Tg}
	p.confirm(&res, c, func() string { return stringOf(pl.Aggregated) })
	p.finish(id, t, res)
}

// parsedTargets turns Codex's reading of a shell command into targets: a
// file it read is a read, a directory it listed or searched a hit. Parts
// Codex could not classify name nothing.
func (p *Parser) parsedTargets(parts []parsedCmd, cwd string) []event.Target {
	var out []event.Target
	for _, pc := range parts {
		touch := ""
		switch pc.Type {
		case "read":
			touch = "read"
		case "list_files", "search":
			touch = "hit"
		}
		if touch == "" || pc.Path == "" {
			continue
		}
		out = append(out, p.target(pc.Path, cwd, touch, ""))
	}
	return out
}

// patchEnd handles patch_apply_end.
func (p *Parser) patchEnd(pl *item, t int64) {
	id := pl.CallID
	failed := pl.Success != nil && !*pl.Success
	facts := endFacts{Err: failed}
	if failed {
		facts.Class = "patch_failed"
	}
	if p.enrich(id, facts) || id == "" {
		return
	}
	ev := event.Call{Tool: "apply_patch", Kind: "edit", Cat: "file"}
	changes := pl.changesOf()
	for _, path := range sortedKeys(changes) {
		ch := changes[path]
		switch {
		case ch.MovePath != "":
			ev.Targets = append(ev.Targets, p.paths.Target(path, "edit", "rename-from"), p.paths.Target(ch.MovePath, "edit", "rename-to"))
		case ch.Type == "add":
			ev.Targets = append(ev.Targets, p.paths.Target(path, "edit", "create"))
		case ch.Type == "delete":
			ev.Targets = append(ev.Targets, p.paths.Target(path, "edit", "delete"))
		default:
			ev.Targets = append(ev.Targets, p.paths.Target(path, "edit", "modify"))
		}
	}
	ev.SkillWrite = skillOf(sortedKeys(changes))
	p.emitCall(t, id, ev, call{Tool: "apply_patch", Class: "patch"})
	p.finish(id, t, event.Result{CallID: id, Err: facts.Err, ErrClass: facts.Class})
}

// mcpEnd handles mcp_tool_call_end.
func (p *Parser) mcpEnd(pl *item, t int64) {
	id := pl.CallID
	facts := endFacts{Dur: durationMs(pl.Duration)}
	if r, ok := readMCPResult(pl.Result); ok && (len(r.Err) > 0 || (r.Ok != nil && r.Ok.IsError)) {
		facts.Err, facts.Class = true, "other"
	}
	if p.enrich(id, facts) || id == "" {
		return
	}
	ev := event.Call{Tool: "mcp", Kind: "mcp", Cat: "mcp"}
	if inv := pl.Invocation; inv != nil {
		ev.Server, ev.MCPTool = identifier(inv.Server), identifier(inv.Tool)
		ev.Tool = "mcp__" + ev.Server + "__" + ev.MCPTool
	}
	p.emitCall(t, id, ev, call{Tool: ev.Tool, Class: "mcp"})
	p.finish(id, t, event.Result{CallID: id, DurMs: facts.Dur, Err: facts.Err, ErrClass: facts.Class})
}

// mcpResult is what mcpEnd reads of a mcp_tool_call_end result.
type mcpResult struct {
	Ok  *mcpOk          `json:"Ok"`
	Err json.RawMessage `json:"Err"`
}

type mcpOk struct {
	IsError bool `json:"isError"`
}

// readMCPResult reads a result (valid JSON) by a walk, or where the walk
// does not mirror encoding/json, by encoding/json; ok is false when
// encoding/json fails on it.
func readMCPResult(raw json.RawMessage) (r mcpResult, ok bool) {
	if len(raw) == 0 {
		return r, false
	}
	if mcpResultFields.FillValid(&r, raw) {
		return r, true
	}
	r = mcpResult{}
	return r, json.Unmarshal(raw, &r) == nil
}

// spawnEnd handles collab_agent_spawn_end, which confirms the thread a
// spawn_agent call started: the lane is declared, and the call's result
// names it.
func (p *Parser) spawnEnd(pl *item, t int64) {
	lane := LaneID(pl.NewThreadID)
	if lane == "" {
		return
	}
	satype := identifier(pl.NewAgentRole)
	if c := p.st.Calls[pl.CallID]; c != nil && satype == "" {
		satype = c.SAType
	}
	p.declareLane(t, lane, pl.CallID, satype, pl.Model)
	if c := p.st.Calls[pl.CallID]; c != nil {
		c.Lane = lane
	}
}

// dynamicEnd handles dynamic_tool_call_response (client-defined tools).
func (p *Parser) dynamicEnd(pl *item, t int64) {
	id := pl.CallID
	if id == "" {
		id = pl.CallIDCamel
	}
	facts := endFacts{Dur: durationMs(pl.Duration)}
	if pl.Success != nil && !*pl.Success {
		facts.Err, facts.Class = true, "other"
	}
	if p.enrich(id, facts) || id == "" {
		return
	}
	name := identifier(pl.Tool)
	if ns := identifier(pl.Namespace); ns != "" && name != "" {
		name = ns + "." + name
	}
	if name == "" {
		name = "dynamic_tool"
	}
	p.emitCall(t, id, event.Call{Tool: name, Kind: "tool", Cat: "tool"}, call{Tool: name})
	p.finish(id, t, event.Result{CallID: id, DurMs: facts.Dur, Err: facts.Err, ErrClass: facts.Class})
}

// viewImageEnd handles view_image_tool_call, the only record of an image the
// user attached by path when no function call asked for it.
func (p *Parser) viewImageEnd(pl *item, t int64) {
	if pl.CallID == "" || p.st.Calls[pl.CallID] != nil || p.isDone(pl.CallID) || pl.Path == "" {
		return
	}
	ev := event.Call{Tool: "view_image", Kind: "read", Cat: "file", Targets: []event.Target{p.paths.Target(pl.Path, "read", "")}}
	p.emitCall(t, pl.CallID, ev, call{Tool: "view_image"})
}

// enrich stores an end event's facts on the open call it describes and
// reports whether the event is accounted for (open or already completed).
func (p *Parser) enrich(id string, f endFacts) bool {
	if id == "" {
		return false
	}
	if c := p.st.Calls[id]; c != nil {
		c.End = &f
		return true
	}
	return p.isDone(id)
}

// durationMs reads a Rust Duration {secs, nanos}.
func durationMs(raw json.RawMessage) int64 {
	if len(raw) == 0 || raw[0] != '{' {
		return 0
	}
	var d struct {
		Secs  int64 `json:"secs"`
		Nanos int64 `json:"nanos"`
	}
	if json.Unmarshal(raw, &d) != nil {
		return 0
	}
	return d.Secs*1000 + (d.Nanos+500_000)/1_000_000
}

// identifier keeps a name only if it looks like one (server, tool, role):
// no spaces, no markup, short.
func identifier(s string) string { return watchers.Ident(s) }

func hasPrefixAny(s string, pre ...string) bool {
	for _, p := range pre {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
