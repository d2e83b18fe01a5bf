package cursor

import (
	"encoding/json"
	"unicode/utf8"

	"github.com/agentmap/agentmap/watchers/jsonscan"
)

// The fast path of Line: a transcript line is walked once with jsonscan,
// its members handed out as raw slices of the line; texts are measured in
// place, and of a tool input only the kept keys are looked at. It fills
// what decodeMessage would fill, and gives up (Line then decodes the line
// with encoding/json, which decides and names the error) on anything it
// does not mirror exactly: a member of an unexpected JSON type (a type
// error, which decodeMessage reads), a key repeated or matched only up to
// case, a key with escapes, invalid JSON. Nothing keeps the raw slices
// past Line.

// scannedLine is line as the walk fills it.
type scannedLine struct {
	Role    string
	Type    string
	Status  string
	Message *scannedMessage
	// Content is a top-level content member, which decodeMessage reads
	// when message.content is a string: the walk takes the line only
	// when that read cannot fail (a string or null).
	Content json.RawMessage
}

type scannedMessage struct {
	Content json.RawMessage
}

type lineField = jsonscan.Field[scannedLine]

var lineFields = jsonscan.NewFields(
	lineField{Name: "role", Set: text(func(l *scannedLine) *string { return &l.Role })},
	lineField{Name: "type", Set: text(func(l *scannedLine) *string { return &l.Type })},
	lineField{Name: "status", Set: text(func(l *scannedLine) *string { return &l.Status })},
	jsonscan.Pointer("message", func(l *scannedLine) **scannedMessage { return &l.Message }, messageFields),
	lineField{Name: "content", Set: func(l *scannedLine, v []byte) bool {
		l.Content = v
		return v[0] == '"' || v[0] == 'n'
	}},
)

var messageFields = jsonscan.NewFields(
	jsonscan.Field[scannedMessage]{Name: "content", Set: jsonscan.Raw(func(m *scannedMessage) *json.RawMessage { return &m.Content })},
)

type blockField = jsonscan.Field[block]

// blockFields are the members of block; the text is kept raw (rawText),
// to be measured without being decoded.
var blockFields = jsonscan.NewFields(
	blockField{Name: "type", Set: text(func(b *block) *string { return &b.Type })},
	blockField{Name: "text", Set: func(b *block, v []byte) bool {
		if v[0] == 'n' {
			return true
		}
		b.rawText = v
		return v[0] == '"'
	}},
	blockField{Name: "id", Set: text(func(b *block) *string { return &b.ID })},
	blockField{Name: "name", Set: text(func(b *block) *string { return &b.Name })},
	blockField{Name: "input", Set: jsonscan.Raw(func(b *block) *json.RawMessage { return &b.Input })},
	blockField{Name: "toolCallId", Set: text(func(b *block) *string { return &b.ToolCallID })},
	blockField{Name: "toolName", Set: text(func(b *block) *string { return &b.ToolName })},
	blockField{Name: "args", Set: jsonscan.Raw(func(b *block) *json.RawMessage { return &b.Args })},
	blockField{Name: "tool_use_id", Set: text(func(b *block) *string { return &b.ToolUseID })},
	blockField{Name: "result", Set: jsonscan.Raw(func(b *block) *json.RawMessage { return &b.Result })},
	blockField{Name: "content", Set: jsonscan.Raw(func(b *block) *json.RawMessage { return &b.Content })},
	blockField{Name: "isError", Set: boolean(func(b *block) *bool { return &b.IsError })},
	blockField{Name: "is_error", Set: boolean(func(b *block) *bool { return &b.IsErrorSnake })},
)

// text is the setter of a string field that encoding/json would fill
// without a type error: a string, or null leaving it empty. Another type
// gives up. The names Line compares against are not allocated again.
func text[T any](dst func(*T) *string) func(*T, []byte) bool {
	return func(t *T, v []byte) bool {
		switch v[0] {
		case 'n':
			return true
		case '"':
			if s, ok := known(v); ok {
				*dst(t) = s
				return true
			}
			s, ok := jsonscan.String(v)
			*dst(t) = s
			return ok
		}
		return false
	}
}

// known returns the constant for a raw string that is one of the roles,
// line and block types Line compares against.
func known(v []byte) (string, bool) {
	switch string(v) {
	case `"user"`:
		return "user", true
	case `"assistant"`:
		return "assistant", true
	case `"text"`:
		return "text", true
	case `"tool_use"`:
		return "tool_use", true
	case `"turn_ended"`:
		return "turn_ended", true
	case `"thinking"`:
		return "thinking", true
	}
	return "", false
}

// boolean is the setter of a bool field: true, false, or null leaving it
// false; another type gives up.
func boolean[T any](dst func(*T) *bool) func(*T, []byte) bool {
	return func(t *T, v []byte) bool {
		switch v[0] {
		case 't':
			*dst(t) = true
		case 'f', 'n':
		default:
			return false
		}
		return true
	}
}

// scanLine fills l and the line's content blocks (appended to blocks[:0])
// as decodeMessage would with path message.content, or reports false.
func scanLine(raw []byte, l *scannedLine, blocks []block) ([]block, bool) {
	blocks = blocks[:0]
	if !lineFields.Fill(l, raw) {
		return blocks, false
	}
	if l.Message == nil {
		return blocks, true
	}
	content := l.Message.Content
	if len(content) == 0 {
		return blocks, true
	}
	switch content[0] {
	case 'n':
		return blocks, true
	case '"':
		// decodeMessage reads a string content as one text block.
		return append(blocks, block{Type: "text", rawText: content}), true
	case '[':
	default:
		return blocks, false
	}
	return jsonscan.AppendObjects(blocks, content, blockFields)
}

// runes is the number of runes of the block's text.
func (b *block) runes() int {
	if b.rawText == nil {
		return utf8.RuneCountInString(b.Text)
	}
	_, n, _ := jsonscan.StringLen(b.rawText)
	return n
}

// text is the block's text, decoded.
func (b *block) text() string {
	if b.rawText == nil {
		return b.Text
	}
	s, _ := jsonscan.String(b.rawText)
	return s
}

// keptInput is decodeInput(raw).reduce() for raw valid JSON (a member of a
// walked line), with nil where decodeInput gives nil, read without
// decoding the members that are not kept; ok is false when the walk does
// not mirror decodeInput exactly (the caller then uses decodeInput). A
// string holding JSON is decoded once: txt is that string when it holds
// no object (an apply_patch text), for the caller.
func keptInput(raw []byte) (in input, txt string, isText, ok bool) {
	raw = trimSpace(raw)
	if len(raw) == 0 {
		return nil, "", false, true
	}
	valid := true
	if raw[0] == '"' {
		b, ok := jsonscan.Unquote(raw)
		if !ok {
			return nil, "", false, false
		}
		if t := trimSpace(b); len(t) == 0 || t[0] != '{' {
			// Not an object: decodeInput gives nil (a JSON null
			// included), and the caller reads the text.
			return nil, string(b), true, true
		}
		raw, valid = b, false
	}
	if raw[0] != '{' {
		return nil, "", false, false
	}
	in = make(input, 4)
	keep := func(key, val []byte) bool {
		if k, ok := keptKeys[string(key)]; ok {
			// The last of a repeated key wins, as in a decoded map.
			in[k] = val
		}
		return true
	}
	if valid {
		ok = jsonscan.ObjectValid(raw, keep)
	} else {
		ok = jsonscan.Object(raw, keep)
	}
	return in, "", false, ok
}
