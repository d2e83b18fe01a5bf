package gemini

import (
	"encoding/json"
	"time"
	"unicode/utf8"

	"github.com/agentmap/agentmap/watchers/toolkit"
)

// record is one line of a JSONL chat file, or the document of a whole
// .json file: session metadata, a message, a metadata update ($set) or a
// rewind ($rewindTo). Only the keys agentmap uses are decoded; text-bearing
// ones (content, thoughts, args, result) are kept raw, measured and
// dropped.
type record struct {
	SessionID   string   `json:"sessionId"`
	ProjectHash string   `json:"projectHash"`
	Kind        string   `json:"kind"`
	StartTime   string   `json:"startTime"`
	Directories []string `json:"directories"`

	ID        string          `json:"id"`
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Content   json.RawMessage `json:"content"`
	Thoughts  json.RawMessage `json:"thoughts"`
	Tokens    *tokens         `json:"tokens"`
	Model     string          `json:"model"`
	ToolCalls []toolCall      `json:"toolCalls"`

	// Messages is the message list of a whole document, or of a $set
	// that replaces the history.
	Messages []json.RawMessage `json:"messages"`

	Set      *record `json:"$set"`
	RewindTo *string `json:"$rewindTo"`
}

// tokens is the usage of one model response as the client records it:
// input is promptTokenCount (cached tokens included), output the
// candidates, thoughts the reasoning, tool the tool-use prompt, total the
// client's own sum.
type tokens struct {
	Input    int64 `json:"input"`
	Output   int64 `json:"output"`
	Cached   int64 `json:"cached"`
	Thoughts int64 `json:"thoughts"`
	Tool     int64 `json:"tool"`
	Total    int64 `json:"total"`
}

// split returns the counts in the map's terms, none counted twice: fresh
// input (prompt less cache reads, plus the tool-use prompt), cache reads,
// and output with the reasoning.
func (t *tokens) split() (in, cr, out int64) {
	cr = max(0, t.Cached)
	in = max(0, t.Input-cr) + max(0, t.Tool)
	out = max(0, t.Output) + max(0, t.Thoughts)
	return in, cr, out
}

// toolCall is one entry of a gemini message's toolCalls.
type toolCall struct {
	ID            string          `json:"id"`
	Name          string          `json:"name"`
	Args          json.RawMessage `json:"args"`
	Result        json.RawMessage `json:"result"`
	Status        string          `json:"status"`
	Timestamp     string          `json:"timestamp"`
	AgentID       string          `json:"agentId"`
	ResultDisplay json.RawMessage `json:"resultDisplay"`
}

// part is one part of a message's content (Gemini API Part), with only
// what is measured.
type part struct {
	Text       *string `json:"text"`
	Thought    bool    `json:"thought"`
	InlineData *struct {
		MimeType string `json:"mimeType"`
	} `json:"inlineData"`
	FileData *struct {
		MimeType string `json:"mimeType"`
	} `json:"fileData"`
	FunctionResponse *functionResponse `json:"functionResponse"`
	FunctionCall     json.RawMessage   `json:"functionCall"`
}

type functionResponse struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

// shape is what a message's content amounts to: characters of text,
// images, and whether it is a tool response turn rather than a prompt.
type shape struct {
	Chars     int
	Images    int
	Responses int
	text      string // the text itself: read for URL counting, never kept
}

// measure reads a content value: a string or a list of parts.
func measure(raw json.RawMessage) shape {
	var sh shape
	if len(raw) == 0 {
		return sh
	}
	switch raw[0] {
	case '"':
		var s string
		if json.Unmarshal(raw, &s) == nil {
			sh.Chars, sh.text = utf8.RuneCountInString(s), s
		}
	case '[':
		var parts []part
		_ = json.Unmarshal(raw, &parts)
		for _, p := range parts {
			switch {
			case p.FunctionResponse != nil:
				sh.Responses++
			case p.Text != nil && !p.Thought:
				sh.Chars += utf8.RuneCountInString(*p.Text)
				sh.text += *p.Text
			case p.InlineData != nil && toolkit.ImageMIME(p.InlineData.MimeType),
				p.FileData != nil && toolkit.ImageMIME(p.FileData.MimeType):
				sh.Images++
			}
		}
	case '{':
		var p part
		if json.Unmarshal(raw, &p) == nil && p.Text != nil {
			sh.Chars, sh.text = utf8.RuneCountInString(*p.Text), *p.Text
		}
	}
	return sh
}

// hasItems reports whether a raw JSON array has at least one element.
func hasItems(raw json.RawMessage) bool {
	var items []json.RawMessage
	return json.Unmarshal(raw, &items) == nil && len(items) > 0
}

// parseTime reads the client's ISO-8601 timestamps into Unix ms.
func parseTime(s string) (int64, bool) {
	if s == "" {
		return 0, false
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0, false
	}
	return t.UnixMilli(), true
}
