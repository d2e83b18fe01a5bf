package codex

import (
	"encoding/json"
	"strconv"

	"github.com/agentmap/agentmap/watchers/jsonscan"
)

// The fast path of Line: the line is walked once and its members handed
// out as raw slices of the line; outputs, message contents, arguments and
// other large values the parser only measures or decodes later are
// validated and stepped over, never copied. It fills rawLine exactly as
// encoding/json would, and gives up (Line then decodes the line with
// encoding/json, which decides) on anything it does not mirror: a key
// repeated or matched only up to case, a key with escapes, a payload of
// another JSON type than an object, invalid JSON. Typed members that are
// not plain strings (token counts, exit codes, parsed commands) are small
// and decoded one by one with encoding/json, which is what decoding the
// whole line does to them.
//
// The raw slices alias the line: nothing keeps them past Line.

// scanLine fills l from line, or reports false.
func scanLine(l *rawLine, line []byte) bool { return lineFields.Fill(l, line) }

var itemFieldList = []jsonscan.Field[item]{
	{Name: "timestamp", Set: jsonscan.Raw(func(it *item) *json.RawMessage { return &it.Timestamp })},
	{Name: "type", Set: word(func(it *item) *string { return &it.Type })},
	{Name: "id", Set: jsonscan.Text(func(it *item) *string { return &it.ID })},

	{Name: "session_id", Set: jsonscan.Text(func(it *item) *string { return &it.SessionID })},
	{Name: "cwd", Set: jsonscan.Text(func(it *item) *string { return &it.CWD })},
	{Name: "cli_version", Set: jsonscan.Text(func(it *item) *string { return &it.CLIVersion })},
	{Name: "source", Set: jsonscan.Raw(func(it *item) *json.RawMessage { return &it.Source })},
	{Name: "forked_from_id", Set: jsonscan.Text(func(it *item) *string { return &it.ForkedFromID })},
	{Name: "parent_thread_id", Set: jsonscan.Text(func(it *item) *string { return &it.ParentThread })},
	{Name: "model", Set: jsonscan.Text(func(it *item) *string { return &it.Model })},
	{Name: "git", Set: jsonscan.Decoded(func(it *item) any { return &it.Git })},
	jsonscan.Pointer("collaboration_mode", func(it *item) **collabMode { return &it.CollaborationMode }, collabFields),

	{Name: "role", Set: word(func(it *item) *string { return &it.Role })},
	{Name: "content", Set: jsonscan.Raw(func(it *item) *json.RawMessage { return &it.Content })},
	{Name: "name", Set: word(func(it *item) *string { return &it.Name })},
	{Name: "namespace", Set: jsonscan.Text(func(it *item) *string { return &it.Namespace })},
	{Name: "arguments", Set: jsonscan.Raw(func(it *item) *json.RawMessage { return &it.Arguments })},
	{Name: "input", Set: jsonscan.Text(func(it *item) *string { return &it.Input })},
	{Name: "call_id", Set: jsonscan.Text(func(it *item) *string { return &it.CallID })},
	jsonscan.Measured("output", func(it *item) *json.RawMessage { return &it.Output }, func(it *item) *jsonscan.Len { return &it.outputLen }),
	{Name: "status", Set: jsonscan.Raw(func(it *item) *json.RawMessage { return &it.Status })},
	{Name: "action", Set: jsonscan.Raw(func(it *item) *json.RawMessage { return &it.Action })},
	{Name: "tools", Set: jsonscan.Raw(func(it *item) *json.RawMessage { return &it.Tools })},

	{Name: "reasoning", Set: jsonscan.Raw(func(it *item) *json.RawMessage { return &it.Reasoning })},
	{Name: "tool_calls", Set: jsonscan.Decoded(func(it *item) any { return &it.ToolCalls })},
	{Name: "tool_call_id", Set: jsonscan.Text(func(it *item) *string { return &it.ToolCallID })},

	{Name: "message", Set: jsonscan.Raw(func(it *item) *json.RawMessage { return &it.Message })},
	{Name: "images", Set: jsonscan.Raw(func(it *item) *json.RawMessage { return &it.Images })},
	{Name: "local_images", Set: jsonscan.Raw(func(it *item) *json.RawMessage { return &it.LocalImages })},
	{Name: "info", Set: info},
	{Name: "reason", Set: jsonscan.Text(func(it *item) *string { return &it.Reason })},
	{Name: "codex_error_info", Set: jsonscan.Raw(func(it *item) *json.RawMessage { return &it.CodexErrorInfo })},
	{Name: "error", Set: jsonscan.Raw(func(it *item) *json.RawMessage { return &it.Error })},
	{Name: "exit_code", Set: integer(func(it *item) **int { return &it.ExitCode })},
	{Name: "duration", Set: jsonscan.Raw(func(it *item) *json.RawMessage { return &it.Duration })},
	{Name: "command", Set: jsonscan.Raw(func(it *item) *json.RawMessage { return &it.Command })},
	jsonscan.Elements("parsed_cmd", func(it *item) *[]parsedCmd { return &it.ParsedCmd }, parsedCmdFields, nullOnly[item]),
	jsonscan.Measured("aggregated_output", func(it *item) *json.RawMessage { return &it.Aggregated }, func(it *item) *jsonscan.Len { return &it.aggregatedLen }),
	{Name: "success", Set: jsonscan.Decoded(func(it *item) any { return &it.Success })},
	{Name: "changes", Set: jsonscan.Raw(func(it *item) *json.RawMessage { return &it.changes })},
	{Name: "invocation", Set: jsonscan.Decoded(func(it *item) any { return &it.Invocation })},
	{Name: "result", Set: jsonscan.Raw(func(it *item) *json.RawMessage { return &it.Result })},
	{Name: "new_thread_id", Set: jsonscan.Text(func(it *item) *string { return &it.NewThreadID })},
	{Name: "new_agent_role", Set: jsonscan.Text(func(it *item) *string { return &it.NewAgentRole })},
	{Name: "path", Set: jsonscan.Text(func(it *item) *string { return &it.Path })},
	{Name: "tool", Set: jsonscan.Text(func(it *item) *string { return &it.Tool })},
	{Name: "callId", Set: jsonscan.Text(func(it *item) *string { return &it.CallIDCamel })},
	{Name: "target", Set: jsonscan.Raw(func(it *item) *json.RawMessage { return &it.Target })},
	{Name: "item", Set: jsonscan.Raw(func(it *item) *json.RawMessage { return &it.Item })},

	{Name: "turn_id", Set: jsonscan.Text(func(it *item) *string { return &it.TurnID })},
	jsonscan.Pointer("turn_attribution", func(it *item) **turnAttribution { return &it.TurnAttribution }, attributionFields),
}

var itemFields = jsonscan.NewFields(itemFieldList...)

// turn_context lines come once per turn, with the collaboration mode's
// instructions beside its model.
var collabFields = jsonscan.NewFields(
	jsonscan.Pointer("settings", func(m *collabMode) **collabSettings { return &m.Settings }, jsonscan.NewFields(
		jsonscan.Field[collabSettings]{Name: "model", Set: jsonscan.Text(func(s *collabSettings) *string { return &s.Model })},
	)),
)

var attributionFields = jsonscan.NewFields(
	jsonscan.Field[turnAttribution]{Name: "turn_id", Set: jsonscan.Text(func(a *turnAttribution) *string { return &a.TurnID })},
)

// turnItemFields read an item_completed thread item: 0.17x writes one
// for every item, agent messages and reasoning included, whose texts are
// stepped over.
var turnItemFields = jsonscan.NewFields(
	jsonscan.Field[turnItem]{Name: "type", Set: word(func(it *turnItem) *string { return &it.Type })},
	jsonscan.Field[turnItem]{Name: "id", Set: jsonscan.Text(func(it *turnItem) *string { return &it.ID })},
	jsonscan.Field[turnItem]{Name: "content", Set: jsonscan.Raw(func(it *turnItem) *json.RawMessage { return &it.Content })},
	jsonscan.Field[turnItem]{Name: "status", Set: jsonscan.Text(func(it *turnItem) *string { return &it.Status })},
	jsonscan.Field[turnItem]{Name: "server", Set: jsonscan.Text(func(it *turnItem) *string { return &it.Server })},
	jsonscan.Field[turnItem]{Name: "tool", Set: jsonscan.Text(func(it *turnItem) *string { return &it.Tool })},
	jsonscan.Field[turnItem]{Name: "duration", Set: jsonscan.Raw(func(it *turnItem) *json.RawMessage { return &it.Duration })},
	jsonscan.Field[turnItem]{Name: "result", Set: jsonscan.Raw(func(it *turnItem) *json.RawMessage { return &it.Result })},
	jsonscan.Field[turnItem]{Name: "receiver_thread_ids", Set: jsonscan.Decoded(func(it *turnItem) any { return &it.Receivers })},
	jsonscan.Field[turnItem]{Name: "model", Set: jsonscan.Text(func(it *turnItem) *string { return &it.Model })},
	jsonscan.Elements("parsed_cmd", func(it *turnItem) *[]parsedCmd { return &it.ParsedCmd }, parsedCmdFields, nullOnly[turnItem]),
	jsonscan.Field[turnItem]{Name: "cwd", Set: jsonscan.Text(func(it *turnItem) *string { return &it.CWD })},
)

// parsedCmdFields read a part of parsed_cmd for its kind and path; the
// command text, file name and query beside them are stepped over.
var parsedCmdFields = jsonscan.NewFields(
	jsonscan.Field[parsedCmd]{Name: "type", Set: jsonscan.Text(func(c *parsedCmd) *string { return &c.Type })},
	jsonscan.Field[parsedCmd]{Name: "path", Set: jsonscan.Text(func(c *parsedCmd) *string { return &c.Path })},
)

// nullOnly is the setter of a member whose only value besides the type
// the walk reads is null, which leaves it as it is; another type (a type
// error for encoding/json) gives up.
func nullOnly[T any](_ *T, v []byte) bool { return v[0] == 'n' }

// mcpResultFields read a mcp_tool_call_end result (the tool's whole
// answer) for its error flags only.
var mcpResultFields = jsonscan.NewFields(
	jsonscan.Pointer("Ok", func(r *mcpResult) **mcpOk { return &r.Ok }, jsonscan.NewFields(
		jsonscan.Field[mcpOk]{Name: "isError", Set: boolean(func(o *mcpOk) *bool { return &o.IsError })},
	)),
	jsonscan.Field[mcpResult]{Name: "Err", Set: jsonscan.Raw(func(r *mcpResult) *json.RawMessage { return &r.Err })},
)

// integer sets an *int field as encoding/json does: null leaves it nil,
// an integer is kept, and anything else (a fraction, an exponent, a
// string: type errors) gives up.
func integer[T any](dst func(*T) **int) func(*T, []byte) bool {
	return func(t *T, v []byte) bool {
		if v[0] == 'n' {
			return true
		}
		n, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return false
		}
		i := int(n)
		*dst(t) = &i
		return true
	}
}

// number sets a *float64 field as encoding/json does: null leaves it
// nil, anything but a number in range gives up.
func number[T any](dst func(*T) **float64) func(*T, []byte) bool {
	return func(t *T, v []byte) bool {
		if v[0] == 'n' {
			return true
		}
		f, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return false
		}
		*dst(t) = &f
		return true
	}
}

// boolean sets a bool field: null leaves it, anything but true or false
// gives up.
func boolean[T any](dst func(*T) *bool) func(*T, []byte) bool {
	return func(t *T, v []byte) bool {
		switch v[0] {
		case 'n':
		case 't':
			*dst(t) = true
		case 'f':
			*dst(t) = false
		default:
			return false
		}
		return true
	}
}

// stringOf decodes a member that is a string, as encoding/json decodes it
// into a string: anything else (null, another type, nothing) is empty.
func stringOf(raw json.RawMessage) string {
	if len(raw) == 0 || raw[0] != '"' {
		return ""
	}
	s, _ := jsonscan.ValidString(raw)
	return s
}

// lineFields are the members of a line: those of its embedded item, and
// the wrapper's and the single-JSON form's own.
var lineFields = jsonscan.NewFields(append(jsonscan.Embed(itemFieldList, func(l *rawLine) *item { return &l.item }),
	jsonscan.PointerIn("payload", func(l *rawLine) **item { return &l.Payload },
		payloadItem, itemFields),
	jsonscan.Field[rawLine]{Name: "record_type", Set: jsonscan.Text(func(l *rawLine) *string { return &l.RecordType })},
	jsonscan.Pointer("session", func(l *rawLine) **item { return &l.Session }, itemFields),
	jsonscan.Field[rawLine]{Name: "items", Set: jsonscan.Decoded(func(l *rawLine) any { return &l.Items })},
)...)

// word is jsonscan.Text for a field whose values are mostly a few known
// words (record types, roles): a known word is not allocated per line. A
// literal with an escape is never one of them, and is decoded.
func word[T any](dst func(*T) *string) func(*T, []byte) bool {
	text := jsonscan.Text(dst)
	return func(t *T, v []byte) bool {
		if len(v) >= 2 && v[0] == '"' {
			if w, ok := words[string(v[1:len(v)-1])]; ok {
				*dst(t) = w
				return true
			}
		}
		return text(t, v)
	}
}

// words are the types and roles of the records of a rollout, and the
// names of Codex's own tools.
var words = func() map[string]string {
	m := map[string]string{}
	for _, set := range []map[string]bool{rolloutTypes, ignoredTop, ignoredEvents} {
		for w := range set {
			m[w] = w
		}
	}
	for _, w := range []string{
		"message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
		"custom_tool_call_output", "ghost_snapshot", "user_message", "token_count", "item_completed",
		"task_complete", "exec_command_end", "patch_apply_end", "mcp_tool_call_end", "turn_aborted",
		"user", "assistant", "developer", "system", "input_text", "output_text",
		// tool names
		"shell", "exec_command", "shell_command", "write_stdin", "apply_patch", "update_plan",
		"view_image", "spawn_agent", "wait_agent", "send_input", "close_agent",
	} {
		m[w] = w
	}
	return m
}()

// payloadItem is the item the walk fills for a line's payload: the
// parser's spare one, else a new one.
func payloadItem(l *rawLine) *item {
	if l.spare == nil {
		return new(item)
	}
	l.spare.payload = item{spare: l.spare}
	return &l.spare.payload
}

// token_count lines come once per response: their counts are walked
// rather than decoded.

var infoFields = jsonscan.NewFields(
	jsonscan.PointerIn("total_token_usage", func(i *tokenInfo) **tokenUsage { return &i.Total },
		spareUsage(func(sp *spares) *tokenUsage { return &sp.total }), usageFields),
	jsonscan.PointerIn("last_token_usage", func(i *tokenInfo) **tokenUsage { return &i.Last },
		spareUsage(func(sp *spares) *tokenUsage { return &sp.last }), usageFields),
	jsonscan.Field[tokenInfo]{Name: "model_context_window", Set: count(func(i *tokenInfo) *int64 { return &i.Window })},
)

// usageFields read a usage as tokenUsage.UnmarshalJSON does; Fill's
// caller clamps the counts (see tokenUsage.clamp).
var usageFields = jsonscan.NewFields(
	jsonscan.Field[tokenUsage]{Name: "input_tokens", Set: count(func(u *tokenUsage) *int64 { return &u.Input })},
	jsonscan.Field[tokenUsage]{Name: "cached_input_tokens", Set: count(func(u *tokenUsage) *int64 { return &u.Cached })},
	jsonscan.Field[tokenUsage]{Name: "cache_write_input_tokens", Set: count(func(u *tokenUsage) *int64 { return &u.CacheWrite })},
	jsonscan.Field[tokenUsage]{Name: "output_tokens", Set: count(func(u *tokenUsage) *int64 { return &u.Output })},
)

// spareUsage is the usage the walk fills: the parser's spare one (of
// spares, zeroed), else a new one.
func spareUsage(of func(*spares) *tokenUsage) func(*tokenInfo) *tokenUsage {
	return func(i *tokenInfo) *tokenUsage {
		if i.spare == nil {
			return new(tokenUsage)
		}
		u := of(i.spare)
		*u = tokenUsage{}
		return u
	}
}

// count sets an int64 field from an integer literal; null leaves it, and
// anything else (a fraction, an exponent, a string) gives up, as it fails
// or stops encoding/json.
func count[T any](dst func(*T) *int64) func(*T, []byte) bool {
	return func(t *T, v []byte) bool {
		if v[0] == 'n' {
			return true
		}
		n, err := strconv.ParseInt(string(v), 10, 64)
		*dst(t) = n
		return err == nil
	}
}

// info walks payload.info: null leaves it nil, an object is walked and
// its usages clamped as tokenUsage.UnmarshalJSON clamps them.
func info(it *item, v []byte) bool {
	switch v[0] {
	case 'n':
		return true
	case '{':
		if sp := it.spare; sp != nil {
			sp.info = tokenInfo{spare: sp}
			it.Info = &sp.info
		} else {
			it.Info = &tokenInfo{}
		}
		if !infoFields.FillValid(it.Info, v) {
			return false
		}
		for _, u := range []*tokenUsage{it.Info.Total, it.Info.Last} {
			if u != nil {
				u.clamp()
			}
		}
		return true
	}
	return false
}

type argField = jsonscan.Field[args]

// argFields read a tool call's whitelisted argument keys; script bodies,
// stdin and prompts are stepped over.
var argFields = jsonscan.NewFields(
	argField{Name: "command", Set: jsonscan.Raw(func(a *args) *json.RawMessage { return &a.Command })},
	argField{Name: "cmd", Set: jsonscan.Text(func(a *args) *string { return &a.Cmd })},
	argField{Name: "workdir", Set: jsonscan.Text(func(a *args) *string { return &a.Workdir })},
	argField{Name: "session_id", Set: jsonscan.Raw(func(a *args) *json.RawMessage { return &a.SessionID })},
	argField{Name: "path", Set: jsonscan.Text(func(a *args) *string { return &a.Path })},
	argField{Name: "file_path", Set: jsonscan.Text(func(a *args) *string { return &a.FilePath })},
	argField{Name: "dir_path", Set: jsonscan.Text(func(a *args) *string { return &a.DirPath })},
	argField{Name: "input", Set: jsonscan.Text(func(a *args) *string { return &a.Input })},
	argField{Name: "patch", Set: jsonscan.Text(func(a *args) *string { return &a.Patch })},
	argField{Name: "agent_type", Set: jsonscan.Text(func(a *args) *string { return &a.AgentType })},
	argField{Name: "agent_role", Set: jsonscan.Text(func(a *args) *string { return &a.AgentRole })},
	argField{Name: "model", Set: jsonscan.Text(func(a *args) *string { return &a.Model })},
	argField{Name: "server", Set: jsonscan.Text(func(a *args) *string { return &a.Server })},
	argField{Name: "url", Set: jsonscan.Text(func(a *args) *string { return &a.URL })},
)
