package codex

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/agentmap/agentmap/watchers/jsonscan"
)

// rawLine is one rollout line in any of the line-based forms. The wrapper
// form ({timestamp, type, payload}) fills the embedded item's Timestamp and
// Type plus Payload; the legacy bare form puts the item's own fields at the
// top level (so they land in the embedded item) and its header line carries
// only id, timestamp and instructions.
//
// Only fields the parser may use are declared: text fields that are merely
// measured (message content, outputs, patch input) are decoded into Go values
// for the time of one line and never stored. Fields whose JSON type differs
// between record kinds are json.RawMessage and decoded where they are used.
type rawLine struct {
	item
	Payload    *item  `json:"payload"`
	RecordType string `json:"record_type"`
	// Session and Items are the single-JSON form written on one line.
	Session *item             `json:"session"`
	Items   []json.RawMessage `json:"items"`

	// spare, when set, holds what the walk fills for the payload: the
	// parser keeps it from line to line (encoding/json ignores it).
	spare *spares
}

// spares are the records a line's payload is walked into, kept by the
// parser so that a line allocates none of them; nothing in them outlives
// the line.
type spares struct {
	payload     item
	info        tokenInfo
	total, last tokenUsage
}

// item is the union of the payload shapes the parser reads: session_meta,
// turn_context, response_item payloads, event_msg payloads, compacted, and
// the chat-completions items of the oldest single-JSON form.
type item struct {
	Timestamp json.RawMessage `json:"timestamp"`
	Type      string          `json:"type"`
	ID        string          `json:"id"`

	// session_meta
	SessionID    string          `json:"session_id"`
	CWD          string          `json:"cwd"`
	CLIVersion   string          `json:"cli_version"`
	Source       json.RawMessage `json:"source"`
	ForkedFromID string          `json:"forked_from_id"`
	ParentThread string          `json:"parent_thread_id"`
	Model        string          `json:"model"`
	Git          *struct {
		// RepositoryURL is the origin remote; only its owner/name is kept.
		RepositoryURL string `json:"repository_url"`
	} `json:"git"`

	// turn_context
	CollaborationMode *collabMode `json:"collaboration_mode"`

	// response items
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Name      string          `json:"name"`
	Namespace string          `json:"namespace"`
	Arguments json.RawMessage `json:"arguments"`
	Input     string          `json:"input"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`
	// outputLen is Output's length when the walk measured it.
	outputLen jsonscan.Len
	Status    json.RawMessage `json:"status"`
	Action    json.RawMessage `json:"action"`
	Tools     json.RawMessage `json:"tools"`

	// chat-completions items (single-JSON form)
	Reasoning  json.RawMessage `json:"reasoning"`
	ToolCalls  []chatToolCall  `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`

	// event_msg payloads
	Message        json.RawMessage `json:"message"`
	Images         json.RawMessage `json:"images"`
	LocalImages    json.RawMessage `json:"local_images"`
	Info           *tokenInfo      `json:"info"`
	Reason         string          `json:"reason"`
	CodexErrorInfo json.RawMessage `json:"codex_error_info"`
	Error          json.RawMessage `json:"error"`
	ExitCode       *int            `json:"exit_code"`
	Duration       json.RawMessage `json:"duration"`
	Command        json.RawMessage `json:"command"`
	ParsedCmd      []parsedCmd     `json:"parsed_cmd"`
	// Aggregated is a command's whole output (exec_command_end): read
	// raw and measured, decoded only when a failure or a confirmation
	// needs its text.
	Aggregated    json.RawMessage `json:"aggregated_output"`
	aggregatedLen jsonscan.Len
	Success       *bool `json:"success"`
	// Changes are a patch's files (patch_apply_end) as encoding/json
	// fills them; the walk leaves them raw in changes (see changesOf).
	Changes    map[string]patchChange `json:"changes"`
	changes    json.RawMessage
	Invocation *struct {
		Server string `json:"server"`
		Tool   string `json:"tool"`
	} `json:"invocation"`
	Result       json.RawMessage `json:"result"`
	NewThreadID  string          `json:"new_thread_id"`
	NewAgentRole string          `json:"new_agent_role"`
	Path         string          `json:"path"`
	Tool         string          `json:"tool"`
	CallIDCamel  string          `json:"callId"`
	Target       json.RawMessage `json:"target"` // entered_review_mode
	// Item is the thread item of item_started / item_completed, decoded
	// only for the kinds the parser reads (see turnItem).
	Item json.RawMessage `json:"item"`

	// TurnID is the turn of a turn_context or task_started (older builds);
	// TurnAttribution holds it in task_started since 0.17x.
	TurnID          string           `json:"turn_id"`
	TurnAttribution *turnAttribution `json:"turn_attribution"`

	spare *spares // see rawLine
}

// patchChange is one file of a patch_apply_end; its diff is not decoded.
type patchChange struct {
	Type     string `json:"type"`
	MovePath string `json:"move_path"`
}

// changesOf returns a patch_apply_end's changes. The walk keeps them raw:
// they hold the whole diff of every file, and are read only for a patch
// no call announced, rarely; they are decoded then, as encoding/json
// decodes them in the line (a type error in them leaves what it leaves
// there).
func (it *item) changesOf() map[string]patchChange {
	if it.changes == nil {
		return it.Changes
	}
	var m map[string]patchChange
	_ = json.Unmarshal(it.changes, &m)
	return m
}

type collabMode struct {
	Settings *collabSettings `json:"settings"`
}

type collabSettings struct {
	Model string `json:"model"`
}

type turnAttribution struct {
	TurnID string `json:"turn_id"`
}

// turnItem is the part of an item_completed thread item the parser reads:
// a prompt (UserMessage: content texts are measured, never kept), an MCP
// call's outcome (McpToolCall), or the threads a collaboration call
// reached (CollabAgentToolCall). Arguments, results' content, prompts and
// agent messages are never decoded.
type turnItem struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Content   json.RawMessage `json:"content"`
	Status    string          `json:"status"`
	Server    string          `json:"server"`
	Tool      string          `json:"tool"`
	Duration  json.RawMessage `json:"duration"`
	Result    json.RawMessage `json:"result"`
	Receivers []string        `json:"receiver_thread_ids"`
	Model     string          `json:"model"`
	// CommandExecution: Codex's reading of the command and the directory
	// it ran in (a file:// URI in 0.17x).
	ParsedCmd []parsedCmd `json:"parsed_cmd"`
	CWD       string      `json:"cwd"`
}

type chatToolCall struct {
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	} `json:"function"`
}

// parsedCmd is one part of parsed_cmd (exec_command_end, or the
// CommandExecution item of 0.17x), Codex's own reading
// of a shell command. Only the kind and the path are decoded: the command
// text, file name and search query are not.
type parsedCmd struct {
	Type string `json:"type"` // read, list_files, search, unknown
	Path string `json:"path"`
}

type tokenInfo struct {
	Total  *tokenUsage `json:"total_token_usage"`
	Last   *tokenUsage `json:"last_token_usage"`
	Window int64       `json:"model_context_window"`

	spare *spares // see rawLine
}

type tokenUsage struct {
	Input  int64 `json:"input_tokens"`
	Cached int64 `json:"cached_input_tokens"`
	// CacheWrite (2026) is the part of Input written to the prompt cache.
	CacheWrite int64 `json:"cache_write_input_tokens"`
	Output     int64 `json:"output_tokens"`
}

// contentPart is one element of a message's content array.
type contentPart struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// sourceInfo is session_meta.source when it is an object.
type sourceInfo struct {
	Subagent json.RawMessage `json:"subagent"`
}

type subagentInfo struct {
	ThreadSpawn *struct {
		ParentThreadID string `json:"parent_thread_id"`
	} `json:"thread_spawn"`
}

// normaliseIDs makes the call ids of an item safe to keep: ids pair calls
// with results and are kept as they are, unless they are not id-shaped,
// in which case a hash of them stands in (pairing still works).
func (it *item) normaliseIDs() {
	it.CallID = safeID(it.CallID)
	it.CallIDCamel = safeID(it.CallIDCamel)
	it.ToolCallID = safeID(it.ToolCallID)
	for i := range it.ToolCalls {
		it.ToolCalls[i].ID = safeID(it.ToolCalls[i].ID)
	}
}

func safeID(s string) string {
	if s == "" || identifier(s) == s {
		return s
	}
	h := sha256.Sum256([]byte(s))
	return "h" + hex.EncodeToString(h[:8])
}
