package claude

import (
	"encoding/json"

	"github.com/agentmap/agentmap/watchers/jsonscan"
)

// The fast path of Line: the line is walked once, its members handed out
// as raw slices of the line, and only the keys the parser reads are looked
// at; tool outputs, file contents, thinking and progress payloads are
// validated and stepped over, never copied or unescaped. It fills the same
// structs encoding/json would, and gives up (the caller then decodes the
// line with encoding/json, which decides) on anything it does not mirror
// exactly: a key repeated or matched only up to case, a member of an
// unexpected JSON type, a key with escapes, invalid JSON.
//
// The raw slices alias the line: nothing keeps them past Line.

// scan fills env from line as decode followed by textContent would, or
// reports false.
func (env *envelope) scan(line []byte) bool { return envelopeFields.Fill(env, line) }

// words are the values of the type, subtype, block type, tool name and
// speed members that the parser compares against or keeps: read without
// being allocated again on every line.
var words = func() jsonscan.Words {
	w := []string{"cost-state", "fast", "standard",
		"end_turn", "tool_use", "stop_sequence", "max_tokens", "pause_turn", "refusal",
		"text", "thinking", "redacted_thinking", "tool_use", "server_tool_use", "tool_result", "image",
		"document", "web_search_tool_result", "web_fetch_tool_result", "code_execution_tool_result",
		"Read", "Write", "Edit", "MultiEdit", "NotebookRead", "NotebookEdit", "Bash", "BashOutput",
		"PowerShell", "Grep", "Glob", "LS", "Task", "Agent", "TaskOutput", "TaskStop", "KillShell",
		"KillBash", "TodoWrite", "TodoRead", "WebFetch", "WebSearch", "web_search", "web_fetch",
		"Skill", "SlashCommand", "AskUserQuestion", "ExitPlanMode", "EnterPlanMode", "ToolSearch"}
	for _, m := range []map[string]bool{parsedTypes, ignoredTypes, systemSubtypes, attachmentTypes, progressTypes} {
		for k := range m {
			w = append(w, k)
		}
	}
	return jsonscan.NewWords(w...)
}()

// word is str for a member that usually holds one of the words.
func word(raw json.RawMessage) string {
	s, _ := words.String(trim(raw))
	return s
}

type envField = jsonscan.Field[envelope]

var envelopeFields = jsonscan.NewFields(
	envField{Name: "type", Set: jsonscan.TextOf(words, func(e *envelope) *string { return &e.Type })},
	envField{Name: "subtype", Set: jsonscan.TextOf(words, func(e *envelope) *string { return &e.Subtype })},
	envField{Name: "uuid", Set: jsonscan.Raw(func(e *envelope) *json.RawMessage { return &e.UUID })},
	envField{Name: "sessionId", Set: jsonscan.Raw(func(e *envelope) *json.RawMessage { return &e.SessionID })},
	envField{Name: "requestId", Set: jsonscan.Raw(func(e *envelope) *json.RawMessage { return &e.RequestID })},
	envField{Name: "timestamp", Set: jsonscan.Raw(func(e *envelope) *json.RawMessage { return &e.Timestamp })},
	envField{Name: "cwd", Set: jsonscan.Raw(func(e *envelope) *json.RawMessage { return &e.CWD })},
	envField{Name: "gitBranch", Set: jsonscan.Raw(func(e *envelope) *json.RawMessage { return &e.GitBranch })},
	envField{Name: "version", Set: jsonscan.Raw(func(e *envelope) *json.RawMessage { return &e.Version })},
	envField{Name: "isSidechain", Set: jsonscan.Raw(func(e *envelope) *json.RawMessage { return &e.IsSidechain })},
	envField{Name: "agentId", Set: jsonscan.Raw(func(e *envelope) *json.RawMessage { return &e.AgentID })},
	envField{Name: "forkedFrom", Set: jsonscan.Raw(func(e *envelope) *json.RawMessage { return &e.ForkedFrom })},
	envField{Name: "isMeta", Set: jsonscan.Raw(func(e *envelope) *json.RawMessage { return &e.IsMeta })},
	envField{Name: "isCompactSummary", Set: jsonscan.Raw(func(e *envelope) *json.RawMessage { return &e.IsCompactSummary })},
	envField{Name: "isVisibleInTranscriptOnly", Set: jsonscan.Raw(func(e *envelope) *json.RawMessage { return &e.TranscriptOnly })},
	envField{Name: "origin", Set: jsonscan.Raw(func(e *envelope) *json.RawMessage { return &e.Origin })},
	envField{Name: "promptSource", Set: jsonscan.Raw(func(e *envelope) *json.RawMessage { return &e.PromptSource })},
	envField{Name: "isApiErrorMessage", Set: jsonscan.Raw(func(e *envelope) *json.RawMessage { return &e.IsAPIError })},
	envField{Name: "error", Set: jsonscan.Raw(func(e *envelope) *json.RawMessage { return &e.Error })},
	envField{Name: "apiErrorStatus", Set: jsonscan.Raw(func(e *envelope) *json.RawMessage { return &e.APIErrorStatus })},
	envField{Name: "compactMetadata", Set: jsonscan.Raw(func(e *envelope) *json.RawMessage { return &e.CompactMetadata })},
	envField{Name: "retryAttempt", Set: jsonscan.Raw(func(e *envelope) *json.RawMessage { return &e.RetryAttempt })},
	envField{Name: "cause", Set: jsonscan.Raw(func(e *envelope) *json.RawMessage { return &e.Cause })},
	envField{Name: "hookErrors", Set: jsonscan.Raw(func(e *envelope) *json.RawMessage { return &e.HookErrors })},
	envField{Name: "preventedContinuation", Set: jsonscan.Raw(func(e *envelope) *json.RawMessage { return &e.PreventedContinuation })},
	envField{Name: "hookLabel", Set: jsonscan.Raw(func(e *envelope) *json.RawMessage { return &e.HookLabel })},
	envField{Name: "toolUseID", Set: jsonscan.Raw(func(e *envelope) *json.RawMessage { return &e.ToolUseID })},
	envField{Name: "attachment", Set: jsonscan.Raw(func(e *envelope) *json.RawMessage { return &e.Attachment })},
	envField{Name: "parentToolUseID", Set: jsonscan.Raw(func(e *envelope) *json.RawMessage { return &e.ParentToolUseID })},
	// A progress line's data is walked in place: of a subagent's relayed
	// response only its ids, model and usage are read (progress.go).
	jsonscan.PointerIn("data", func(e *envelope) **progressData { return &e.Data }, func(e *envelope) *progressData {
		if e.bufs == nil {
			return nil
		}
		e.bufs.data = progressData{bufs: e.bufs}
		return &e.bufs.data
	}, progressFields),
	jsonscan.PointerIn("message", func(e *envelope) **message { return &e.Message }, func(e *envelope) *message {
		if e.bufs == nil {
			return nil
		}
		e.bufs.msg = message{bufs: e.bufs}
		return &e.bufs.msg
	}, messageFields),
	// The structured result is walked in place: an object's metadata keys
	// are read from its top level (a large result is stepped over in the
	// same pass), a string is kept raw, as UnmarshalJSON does.
	jsonscan.PointerOr("toolUseResult", func(e *envelope) **toolUseResult { return &e.ToolUseResult.obj }, turFields,
		func(e *envelope, v []byte) bool {
			if v[0] == '"' {
				e.ToolUseResult.text = v
			}
			return true
		}),
)

type msgField = jsonscan.Field[message]

// messageFields read a message; a string content goes into Text (what
// textContent gives), an array of blocks into Blocks.
var messageFields = jsonscan.NewFields(
	msgField{Name: "id", Set: jsonscan.Raw(func(m *message) *json.RawMessage { return &m.ID })},
	msgField{Name: "model", Set: jsonscan.Raw(func(m *message) *json.RawMessage { return &m.Model })},
	msgField{Name: "stop_reason", Set: jsonscan.Raw(func(m *message) *json.RawMessage { return &m.StopReason })},
	jsonscan.PointerIn("usage", func(m *message) **usage { return &m.Usage }, func(m *message) *usage {
		if m.bufs == nil {
			return nil
		}
		m.bufs.usage = usage{split: &m.bufs.split}
		return &m.bufs.usage
	}, usageFields),
	jsonscan.ElementsIn("content", func(m *message) *[]block { return &m.Blocks }, func(m *message) []block {
		if m.bufs == nil {
			return nil
		}
		return m.bufs.blocks
	}, blockFields, func(m *message, v []byte) bool {
		if v[0] == '"' {
			m.Text = v
		}
		return true // null, or another type: no blocks, no text
	}),
)

// scanBlocks reads an array of content blocks, valid JSON (a member of a
// walked line, or of a line encoding/json decoded), as decode would into
// []block (an empty array gives an empty, non-nil slice), or reports
// false.
func scanBlocks(raw []byte) ([]block, bool) {
	return jsonscan.AppendObjects([]block{}, raw, blockFields)
}

type blockField = jsonscan.Field[block]

type imageSource = struct {
	Data    json.RawMessage `json:"data"`
	dataLen jsonscan.Len
}

var blockFields = jsonscan.NewFields(
	blockField{Name: "type", Set: jsonscan.TextOf(words, func(b *block) *string { return &b.Type })},
	blockField{Name: "id", Set: jsonscan.Text(func(b *block) *string { return &b.ID })},
	blockField{Name: "name", Set: jsonscan.TextOf(words, func(b *block) *string { return &b.Name })},
	blockField{Name: "tool_use_id", Set: jsonscan.Text(func(b *block) *string { return &b.ToolUseID })},
	jsonscan.Measured("text", func(b *block) *json.RawMessage { return &b.Text }, func(b *block) *jsonscan.Len { return &b.textLen }),
	blockField{Name: "input", Set: jsonscan.Raw(func(b *block) *json.RawMessage { return &b.Input })},
	jsonscan.Measured("content", func(b *block) *json.RawMessage { return &b.Content }, func(b *block) *jsonscan.Len { return &b.contentLen }),
	blockField{Name: "is_error", Set: jsonscan.Raw(func(b *block) *json.RawMessage { return &b.IsError })},
	jsonscan.Pointer("source", func(b *block) **imageSource { return &b.Source }, sourceFields),
)

// sourceFields read an image's source: its data is measured, not decoded.
var sourceFields = jsonscan.NewFields(
	jsonscan.Measured("data", func(s *imageSource) *json.RawMessage { return &s.Data }, func(s *imageSource) *jsonscan.Len { return &s.dataLen }),
)

type turField = jsonscan.Field[toolUseResult]

var turFields = jsonscan.NewFields(
	turField{Name: "agentId", Set: jsonscan.Raw(func(t *toolUseResult) *json.RawMessage { return &t.AgentID })},
	turField{Name: "durationMs", Set: jsonscan.Raw(func(t *toolUseResult) *json.RawMessage { return &t.DurationMs })},
	turField{Name: "totalDurationMs", Set: jsonscan.Raw(func(t *toolUseResult) *json.RawMessage { return &t.TotalDurationMs })},
	turField{Name: "durationSeconds", Set: jsonscan.Raw(func(t *toolUseResult) *json.RawMessage { return &t.DurationSeconds })},
	turField{Name: "interrupted", Set: jsonscan.Raw(func(t *toolUseResult) *json.RawMessage { return &t.Interrupted })},
	turField{Name: "backgroundTaskId", Set: jsonscan.Raw(func(t *toolUseResult) *json.RawMessage { return &t.BackgroundTaskID })},
	turField{Name: "persistedOutputSize", Set: jsonscan.Raw(func(t *toolUseResult) *json.RawMessage { return &t.PersistedOutputSize })},
	turField{Name: "code", Set: jsonscan.Raw(func(t *toolUseResult) *json.RawMessage { return &t.Code })},
	turField{Name: "returnCodeInterpretation", Set: jsonscan.Raw(func(t *toolUseResult) *json.RawMessage { return &t.ReturnCode })},
	turField{Name: "gitOperation", Set: jsonscan.Decoded(func(t *toolUseResult) any { return &t.GitOperation })},
)

type inputField = jsonscan.Field[toolInput]

// toolInputFields read a tool input's few path and name keys; contents,
// old and new strings and prompts are stepped over.
var toolInputFields = jsonscan.NewFields(
	inputField{Name: "file_path", Set: jsonscan.Raw(func(in *toolInput) *json.RawMessage { return &in.FilePath })},
	inputField{Name: "notebook_path", Set: jsonscan.Raw(func(in *toolInput) *json.RawMessage { return &in.NotebookPath })},
	inputField{Name: "path", Set: jsonscan.Raw(func(in *toolInput) *json.RawMessage { return &in.Path })},
	inputField{Name: "pattern", Set: jsonscan.Raw(func(in *toolInput) *json.RawMessage { return &in.Pattern })},
	inputField{Name: "command", Set: jsonscan.Raw(func(in *toolInput) *json.RawMessage { return &in.Command })},
	inputField{Name: "url", Set: jsonscan.Raw(func(in *toolInput) *json.RawMessage { return &in.URL })},
	inputField{Name: "subagent_type", Set: jsonscan.Raw(func(in *toolInput) *json.RawMessage { return &in.SubagentType })},
	inputField{Name: "model", Set: jsonscan.Raw(func(in *toolInput) *json.RawMessage { return &in.Model })},
	inputField{Name: "skill", Set: jsonscan.Raw(func(in *toolInput) *json.RawMessage { return &in.Skill })},
)

type usageField = jsonscan.Field[usage]

type cacheSplit = struct {
	M5 json.RawMessage `json:"ephemeral_5m_input_tokens"`
	H1 json.RawMessage `json:"ephemeral_1h_input_tokens"`
}

var usageFields = jsonscan.NewFields(
	usageField{Name: "input_tokens", Set: jsonscan.Raw(func(u *usage) *json.RawMessage { return &u.Input })},
	usageField{Name: "cache_creation_input_tokens", Set: jsonscan.Raw(func(u *usage) *json.RawMessage { return &u.CacheCreation })},
	usageField{Name: "cache_read_input_tokens", Set: jsonscan.Raw(func(u *usage) *json.RawMessage { return &u.CacheRead })},
	usageField{Name: "output_tokens", Set: jsonscan.Raw(func(u *usage) *json.RawMessage { return &u.Output })},
	jsonscan.PointerIn("cache_creation", func(u *usage) **cacheSplit { return &u.Split }, func(u *usage) *cacheSplit {
		if u.split == nil {
			return nil
		}
		*u.split = cacheSplit{}
		return u.split
	}, splitFields),
	usageField{Name: "speed", Set: jsonscan.TextOf(words, func(u *usage) *string { return &u.Speed })},
)

var splitFields = jsonscan.NewFields(
	jsonscan.Field[cacheSplit]{Name: "ephemeral_5m_input_tokens", Set: jsonscan.Raw(func(s *cacheSplit) *json.RawMessage { return &s.M5 })},
	jsonscan.Field[cacheSplit]{Name: "ephemeral_1h_input_tokens", Set: jsonscan.Raw(func(s *cacheSplit) *json.RawMessage { return &s.H1 })},
)

// read fills v from raw, an object that is valid JSON (a member of a read
// line), as decode would: by a walk, or by encoding/json where the walk
// does not mirror it.
func read[T any](f *jsonscan.Fields[T], raw []byte, v *T) error {
	if f.FillValid(v, raw) {
		return nil
	}
	*v = *new(T)
	return decode(raw, v)
}

type attField = jsonscan.Field[attachment]

var attachmentFields = jsonscan.NewFields(
	attField{Name: "type", Set: jsonscan.TextOf(words, func(a *attachment) *string { return &a.Type })},
	attField{Name: "hookName", Set: jsonscan.Raw(func(a *attachment) *json.RawMessage { return &a.HookName })},
	attField{Name: "hookEvent", Set: jsonscan.Raw(func(a *attachment) *json.RawMessage { return &a.HookEvent })},
	attField{Name: "toolUseID", Set: jsonscan.Raw(func(a *attachment) *json.RawMessage { return &a.ToolUseID })},
	attField{Name: "exitCode", Set: jsonscan.Raw(func(a *attachment) *json.RawMessage { return &a.ExitCode })},
)

var originFields = jsonscan.NewFields(
	jsonscan.Field[origin]{Name: "kind", Set: jsonscan.Text(func(o *origin) *string { return &o.Kind })},
)
