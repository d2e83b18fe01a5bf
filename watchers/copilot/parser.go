package copilot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/toolkit"
)

// Agent is the watchers.Source agent name of Copilot CLI logs.
const Agent = "copilot"

// Tool is the session.agentTool of Copilot CLI maps.
const Tool = "copilot"

// stateVersion changes when the carry-state layout changes incompatibly.
const stateVersion = 1

// maxOpen bounds the open calls and launches remembered: a log that never
// completes its calls cannot grow the carry-state without bound.
const maxOpen = 512

// state is the carry-state: ids, counters and call classes; never text.
type state struct {
	V     int                 `json:"v"`
	N     int64               `json:"n,omitempty"` // records seen (for error messages)
	Sent  bool                `json:"sent,omitempty"`
	Calls map[string]callInfo `json:"calls,omitempty"` // open calls by toolCallId
	// Launch maps a task call to the lane of the subagent it started.
	Launch map[string]string `json:"launch,omitempty"`
	Lanes  map[string]bool   `json:"lanes,omitempty"` // lanes declared
	// Hooks are the hooks running, by hookInvocationId.
	Hooks map[string]hookInfo `json:"hooks,omitempty"`
	Paths json.RawMessage     `json:"paths,omitempty"`
}

// hookInfo is what a hook's end needs to know about its start.
type hookInfo struct {
	Hook string `json:"h"`           // hookType, with the tool it ran for: postToolUse:bash
	Ref  string `json:"r,omitempty"` // the call a postToolUse hook ran after
}

// callInfo is what a result, or a hook that runs after the call, needs to
// know about it.
type callInfo struct {
	Kind   string `json:"k"`
	PR     string `json:"pr,omitempty"`
	Commit bool   `json:"c,omitempty"`
	Lane   string `json:"l,omitempty"`
	Tool   string `json:"t,omitempty"`
	Seq    int64  `json:"n,omitempty"` // the record that started it
	// Failed marks a task call whose subagent failed before the call
	// completed: its result is then a failed subagent call.
	Failed bool `json:"f,omitempty"`
}

// openCall is the id of the call a postToolUse hook for tool in lane ran
// after: the latest started call of that tool still open (a hook runs
// between its call's start and completion records; calls made in
// parallel complete in any order).
func (p *Parser) openCall(lane, tool string) string {
	id, seq := "", int64(-1)
	for k, c := range p.st.Calls {
		if c.Lane == lane && c.Tool == tool && (c.Seq > seq || c.Seq == seq && k > id) {
			id, seq = k, c.Seq
		}
	}
	return id
}

// Parser is the incremental parser of a Copilot CLI events.jsonl. It
// implements watchers.Parser.
type Parser struct {
	src   watchers.Source
	st    state
	paths *redact.Paths
	out   []event.Event
}

// NewParser returns a parser for a file routed to src.
func NewParser(src watchers.Source) *Parser {
	return &Parser{src: src, st: state{V: stateVersion}, paths: redact.NewPaths()}
}

// Restore returns a parser with the carry-state from State.
func Restore(src watchers.Source, b []byte) (*Parser, error) {
	p := NewParser(src)
	if len(b) == 0 {
		return p, nil
	}
	if err := json.Unmarshal(b, &p.st); err != nil {
		return nil, errors.New("copilot: restore state: invalid state")
	}
	if p.st.V != stateVersion {
		return nil, fmt.Errorf("copilot: restore state: version %d, want %d", p.st.V, stateVersion)
	}
	if len(p.st.Paths) > 0 {
		paths, err := redact.RestorePaths(p.st.Paths)
		if err != nil {
			return nil, fmt.Errorf("copilot: restore paths: %w", err)
		}
		p.paths = paths
	}
	p.st.Paths = nil
	return p, nil
}

// State implements watchers.Parser.
func (p *Parser) State() ([]byte, error) {
	ps, err := p.paths.MarshalState()
	if err != nil {
		return nil, err
	}
	st := p.st
	st.Paths = ps
	return json.Marshal(st)
}

// record is one line: {type, data, id, timestamp, parentId, agentId?}.
type record struct {
	Type      string          `json:"type"`
	Data      json.RawMessage `json:"data"`
	Timestamp string          `json:"timestamp"`
	AgentID   string          `json:"agentId"`
}

// Line implements watchers.Parser.
func (p *Parser) Line(line []byte, out []event.Event) (evs []event.Event, err error) {
	p.st.N++
	var r record
	if err := watchers.DecodeLenient(line, &r); err != nil || r.Type == "" {
		return out, fmt.Errorf("copilot: record %d: not a Copilot CLI event", p.st.N)
	}
	defer func() {
		if recover() != nil {
			evs, err = out, fmt.Errorf("copilot: record %d: internal parser fault", p.st.N)
		}
	}()
	p.out = out
	t := parseTime(r.Timestamp)
	lane := ""
	if r.AgentID != "" {
		lane = watchers.LaneID(r.AgentID)
	}
	if err := p.record(&r, t, lane); err != nil {
		return out, fmt.Errorf("copilot: record %d (%s): %w", p.st.N, safeType(r.Type), err)
	}
	return p.out, nil
}

func (p *Parser) emit(lane string, e event.Event) {
	e.Agent = lane
	p.out = append(p.out, e)
}

func (p *Parser) flushRepos(lane string, t int64) {
	for _, r := range p.paths.NewRepos() {
		p.emit(lane, event.Event{Kind: event.KindRepo, T: t, Repo: &r})
	}
}

// session emits the session record once.
func (p *Parser) session(t int64, id, version string) {
	if p.st.Sent {
		return
	}
	p.st.Sent = true
	// As Identify keys the session: an id that is not an identifier
	// gives way to the one the log's place names.
	if id = safeID(id); id == "" {
		id = p.src.Session
	}
	p.emit("", event.Event{Kind: event.KindSession, T: t, Session: &event.Session{
		NativeID: id, AgentTool: Tool, AgentVersion: watchers.Ident(version)}})
}

// repoContext is what session.start and session.resume say of the
// working directory: its repository's root, and the repository's
// owner/name on its host when it has a remote there.
type repoContext struct {
	Cwd            string `json:"cwd"`
	GitRoot        string `json:"gitRoot"`
	Repository     string `json:"repository"`
	RepositoryHost string `json:"repositoryHost"`
	Branch         string `json:"branch"`
}

// setCWD sets the working directory with what the log says of its
// repository, which outlives the directory: a deleted worktree, a moved
// clone or a log from another machine keeps its root, name and remote,
// and a directory outside any repository is not taken for one.
func (p *Parser) setCWD(c *repoContext) {
	if c.GitRoot == "" {
		if c.Branch != "" || c.Repository != "" {
			// A repository without its root (a client that did not
			// write gitRoot): the working directory's, as the disk or
			// the directory's name says.
			p.paths.SetCWD(c.Cwd)
			return
		}
		p.paths.SetCWDNoRepo(c.Cwd)
		return
	}
	remote := ""
	if c.Repository != "" {
		// Copilot gives owner/name and the host apart; the resolver takes a
		// remote URL and keeps only its owner/name.
		host := c.RepositoryHost
		if host == "" || strings.ContainsAny(host, `/\`) {
			host = "github.com"
		}
		remote = "https://" + host + "/" + c.Repository
	}
	p.paths.DeclareRepo(c.GitRoot, remote)
	p.paths.SetCWD(c.Cwd)
}

func (p *Parser) record(r *record, t int64, lane string) error {
	switch r.Type {
	case "session.start", "session.resume":
		var d struct {
			SessionID      string      `json:"sessionId"`
			CopilotVersion string      `json:"copilotVersion"`
			SelectedModel  string      `json:"selectedModel"`
			Context        repoContext `json:"context"`
		}
		if err := watchers.DecodeLenient(r.Data, &d); err != nil {
			return errors.New("invalid data")
		}
		p.session(t, d.SessionID, d.CopilotVersion)
		if d.Context.Cwd != "" {
			p.setCWD(&d.Context)
			p.flushRepos("", t)
		}
		if m := watchers.Ident(d.SelectedModel); m != "" {
			p.emit("", event.Event{Kind: event.KindModel, T: t, Model: m})
		}
	case "session.model_change":
		var d struct {
			NewModel string `json:"newModel"`
		}
		_ = json.Unmarshal(r.Data, &d)
		if m := watchers.Ident(d.NewModel); m != "" {
			p.emit(lane, event.Event{Kind: event.KindModel, T: t, Model: m})
		}
	case "user.message":
		p.session(t, "", "")
		if lane != "" {
			return nil // a subagent's prompt is written by its parent
		}
		var d struct {
			Content     string `json:"content"`
			Source      string `json:"source"`
			Attachments []struct {
				Type     string `json:"type"`
				MimeType string `json:"mimeType"`
			} `json:"attachments"`
		}
		if err := watchers.DecodeLenient(r.Data, &d); err != nil {
			return errors.New("invalid data")
		}
		if strings.HasPrefix(d.Source, "agent-") {
			return nil
		}
		u := event.User{Chars: len([]rune(d.Content)), URLs: redact.CountURLs(d.Content)}
		for _, a := range d.Attachments {
			if a.Type == "image" || toolkit.ImageMIME(a.MimeType) {
				u.Images++
			}
		}
		p.emit("", event.Event{Kind: event.KindUser, T: t, User: &u})
	case "session.usage_record", "assistant.usage":
		var d struct {
			Usage *usage `json:"usage"`
		}
		_ = json.Unmarshal(r.Data, &d)
		u := d.Usage
		if u == nil {
			// The older form carries the numbers in data itself.
			u = &usage{}
			_ = json.Unmarshal(r.Data, u)
		}
		p.usage(lane, t, u)
	case "assistant.message":
		var d struct {
			MessageID       string            `json:"messageId"`
			APICallID       string            `json:"apiCallId"`
			Model           string            `json:"model"`
			Content         string            `json:"content"`
			ReasoningText   string            `json:"reasoningText"`
			ReasoningOpaque json.RawMessage   `json:"reasoningOpaque"`
			ToolRequests    []json.RawMessage `json:"toolRequests"`
		}
		if err := watchers.DecodeLenient(r.Data, &d); err != nil {
			return errors.New("invalid data")
		}
		id := firstOf(safeID(d.APICallID), safeID(d.MessageID))
		llm := &event.LLM{MsgID: id, LatencyMs: -1, TextChars: len([]rune(d.Content)), ToolCalls: len(d.ToolRequests),
			Thinking: d.ReasoningText != "" || len(d.ReasoningOpaque) > 0 && string(d.ReasoningOpaque) != "null"}
		p.emit(lane, event.Event{Kind: event.KindLLM, T: t, Model: watchers.Ident(d.Model), LLM: llm})
	case "tool.execution_start":
		var d startData
		if err := watchers.DecodeLenient(r.Data, &d); err != nil {
			return errors.New("invalid data")
		}
		p.toolStart(lane, t, &d)
	case "tool.execution_complete":
		var d completeData
		if err := watchers.DecodeLenient(r.Data, &d); err != nil {
			return errors.New("invalid data")
		}
		p.toolComplete(lane, t, &d)
	case "subagent.started":
		var d struct {
			ToolCallID string `json:"toolCallId"`
			AgentName  string `json:"agentName"`
			AgentType  string `json:"agentType"`
		}
		_ = json.Unmarshal(r.Data, &d)
		if lane == "" || p.st.Lanes[lane] {
			return nil
		}
		if p.st.Lanes == nil {
			p.st.Lanes = map[string]bool{}
		}
		p.st.Lanes[lane] = true
		call := safeID(d.ToolCallID)
		if call != "" {
			if p.st.Launch == nil {
				p.st.Launch = map[string]string{}
			}
			if len(p.st.Launch) >= maxOpen {
				p.st.Launch = map[string]string{}
			}
			p.st.Launch[call] = lane
		}
		p.emit(lane, event.Event{Kind: event.KindLane, T: t, Lane: &event.Lane{
			SubagentType: watchers.Ident(firstOf(d.AgentName, d.AgentType)), LaunchCallID: call}})
	case "subagent.failed":
		p.subagentFailed(r, t, lane)
	case "skill.invoked":
		var d struct {
			Name    string `json:"name"`
			Trigger string `json:"trigger"`
		}
		_ = json.Unmarshal(r.Data, &d)
		// A skill the model invokes goes through the skill tool, whose
		// call the map already has (its record says agent-invoked), and a
		// context-load one is part of an agent's setup: only a skill the
		// user typed has no call of its own. It gets no id, as nothing
		// completes it.
		if d.Trigger != "user-invoked" {
			return nil
		}
		p.session(t, "", "")
		p.emit(lane, event.Event{Kind: event.KindCall, T: t, Call: &event.Call{Tool: "skill", Kind: "skill", Cat: "skill",
			Skill: watchers.Ident(d.Name)}})
	case "hook.start":
		var d struct {
			ID    string `json:"hookInvocationId"`
			Type  string `json:"hookType"`
			Input struct {
				ToolName string `json:"toolName"`
			} `json:"input"`
		}
		_ = json.Unmarshal(r.Data, &d)
		id, typ := safeID(d.ID), watchers.Ident(d.Type)
		if id == "" || typ == "" {
			return nil
		}
		h := hookInfo{Hook: typ}
		if tool := watchers.Ident(d.Input.ToolName); tool != "" {
			h.Hook += ":" + tool
			if typ == "postToolUse" {
				h.Ref = p.openCall(lane, tool)
			}
		}
		if p.st.Hooks == nil || len(p.st.Hooks) >= maxOpen {
			p.st.Hooks = map[string]hookInfo{} // hooks that never ended: forget them
		}
		p.st.Hooks[id] = h
	case "hook.end":
		var d struct {
			ID      string `json:"hookInvocationId"`
			Type    string `json:"hookType"`
			Success *bool  `json:"success"`
		}
		_ = json.Unmarshal(r.Data, &d)
		id, typ := safeID(d.ID), watchers.Ident(d.Type)
		h, ok := p.st.Hooks[id]
		delete(p.st.Hooks, id)
		if d.Success == nil || *d.Success {
			return nil
		}
		if !ok {
			h = hookInfo{Hook: typ}
		}
		p.session(t, "", "")
		p.emit(lane, event.Event{Kind: event.KindError, T: t, Error: &event.Error{Source: "hook", Class: "hook_error",
			Hook: h.Hook, HookEvent: typ, RefCallID: h.Ref}})
	case "session.error":
		var d struct {
			ErrorType  string `json:"errorType"`
			Message    string `json:"message"`
			StatusCode int    `json:"statusCode"`
		}
		_ = json.Unmarshal(r.Data, &d)
		text := d.ErrorType + " " + d.Message
		if d.StatusCode != 0 {
			text = fmt.Sprint(d.StatusCode) + " " + text
		}
		p.emit(lane, event.Event{Kind: event.KindError, T: t, Error: &event.Error{Source: "llm", Class: redact.APIErrorClass(text)}})
	case "abort":
		p.emit(lane, event.Event{Kind: event.KindError, T: t, Error: &event.Error{Source: "orchestration", Class: "interrupted"}})
	case "session.compaction_complete":
		var d struct {
			Success *bool  `json:"success"`
			Trigger string `json:"trigger"`
			Pre     int64  `json:"preCompactionTokens"`
			Post    int64  `json:"postCompactionTokens"`
		}
		_ = json.Unmarshal(r.Data, &d)
		if d.Success != nil && !*d.Success {
			return nil // a compaction that failed compacted nothing
		}
		trigger := "auto" // threshold, context_limit_retry, memory_pressure, model_switch
		if d.Trigger == "manual" {
			trigger = "manual"
		}
		p.emit(lane, event.Event{Kind: event.KindCompaction, T: t, Compact: &event.Compaction{Trigger: trigger, PreTokens: d.Pre, PostTokens: d.Post}})
	case "session.truncation":
		// The client dropping old messages to fit the context window, with
		// no model summarising them: a compaction all the same, always
		// automatic, the tokens those messages held before and after.
		var d struct {
			Pre          int64 `json:"preTruncationTokensInMessages"`
			Post         int64 `json:"postTruncationTokensInMessages"`
			TokensGone   int64 `json:"tokensRemovedDuringTruncation"`
			MessagesGone int64 `json:"messagesRemovedDuringTruncation"`
		}
		_ = json.Unmarshal(r.Data, &d)
		if d.TokensGone <= 0 && d.MessagesGone <= 0 {
			return nil // a truncation that removed nothing compacted nothing
		}
		p.session(t, "", "")
		p.emit(lane, event.Event{Kind: event.KindCompaction, T: t, Compact: &event.Compaction{Trigger: "auto", PreTokens: d.Pre, PostTokens: d.Post}})
	case "session.shutdown":
		p.emit("", event.Event{Kind: event.KindTurnEnd, T: t})
	}
	return nil
}

// usage is a request's usage record. inputTokens counts the whole prompt,
// cached tokens included (the OpenAI convention Copilot reports in).
type usage struct {
	Model      string  `json:"model"`
	Input      int64   `json:"inputTokens"`
	Output     int64   `json:"outputTokens"`
	CacheRead  int64   `json:"cacheReadTokens"`
	CacheWrite int64   `json:"cacheWriteTokens"`
	Duration   float64 `json:"duration"`
	APICallID  string  `json:"apiCallId"`
	Finish     string  `json:"finishReason"`
}

func (p *Parser) usage(lane string, t int64, u *usage) {
	in := u.Input - u.CacheRead - u.CacheWrite
	if in < 0 {
		in = 0
	}
	lat := int64(-1)
	if u.Duration > 0 {
		lat = int64(u.Duration)
	}
	llm := &event.LLM{MsgID: safeID(u.APICallID), In: in, CR: u.CacheRead, CW: u.CacheWrite, Out: u.Output,
		LatencyMs: lat, Stop: watchers.Ident(u.Finish)}
	p.emit(lane, event.Event{Kind: event.KindLLM, T: t, Model: watchers.Ident(u.Model), LLM: llm})
}

// parseTime reads an RFC 3339 timestamp as Unix ms (0 when absent).
func parseTime(s string) int64 {
	if s == "" {
		return 0
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0
	}
	return t.UnixMilli()
}

// safeID keeps an id only when it is an identifier.
func safeID(s string) string { return watchers.Ident(s) }

// safeType names a record type in an error message only when it is one.
func safeType(s string) string {
	if watchers.Ident(s) == "" {
		return "?"
	}
	return s
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// LooksLike reports whether a first line is a Copilot CLI event:
// {"type":"session.…","data":{…}} with the fields Copilot writes.
func LooksLike(firstLine []byte) bool {
	line := bytes.TrimSpace(firstLine)
	if len(line) == 0 || line[0] != '{' {
		return false
	}
	var r struct {
		Type string `json:"type"`
		Data *struct {
			Producer       string `json:"producer"`
			CopilotVersion string `json:"copilotVersion"`
			SessionID      string `json:"sessionId"`
		} `json:"data"`
	}
	if json.Unmarshal(line, &r) != nil || r.Data == nil || !strings.HasPrefix(r.Type, "session.") {
		return false
	}
	return r.Data.Producer == "copilot-agent" || r.Data.CopilotVersion != ""
}

// ErrNoSession means neither the first line nor the path names a session.
var ErrNoSession = errors.New("copilot: no session id in first line or path")

// Identify routes an events.jsonl: the session is session.start's
// sessionId, else the name of its directory (session-state/<id>/) or, in
// the first layout, of the file (session-state/<id>.jsonl).
func Identify(path string, firstLine []byte) (watchers.Source, error) {
	src := watchers.Source{Agent: Agent}
	var r struct {
		Data struct {
			SessionID string `json:"sessionId"`
		} `json:"data"`
	}
	if json.Unmarshal(bytes.TrimSpace(firstLine), &r) == nil {
		src.Session = safeID(r.Data.SessionID)
	}
	if src.Session == "" {
		base := filepath.Base(path)
		if base == "events.jsonl" {
			base = filepath.Base(filepath.Dir(path))
		}
		src.Session = safeID(strings.TrimSuffix(base, ".jsonl"))
	}
	if src.Session == "" {
		return src, ErrNoSession
	}
	return src, nil
}
