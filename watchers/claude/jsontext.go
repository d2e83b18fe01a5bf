package claude

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmap/agentmap/watchers/jsonscan"
)

// str decodes a raw JSON value that should be a string; anything else
// (absent, null, number, object) gives "".
func str(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return ""
	}
	s, _ := jsonscan.String(raw)
	return s
}

// num decodes a raw JSON number, or a string holding one (logs drift between
// the two); anything else gives 0.
func num(raw json.RawMessage) float64 {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0
	}
	if raw[0] == '"' {
		raw = raw[1 : len(raw)-1]
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return 0
	}
	return f
}

func integer(raw json.RawMessage) int64 {
	f := num(raw)
	if f < 0 || f > 1<<53 {
		return 0
	}
	return int64(f)
}

func boolean(raw json.RawMessage) bool {
	return string(bytes.TrimSpace(raw)) == "true"
}

// millis parses a line timestamp (ISO-8601, or a number of Unix ms) into
// Unix ms; 0 when absent or unreadable.
func millis(raw json.RawMessage) int64 {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '"' {
		if f := num(raw); f > 0 {
			if f < 1e11 { // seconds
				f *= 1000
			}
			return int64(f)
		}
		return 0
	}
	t, err := time.Parse(time.RFC3339Nano, str(raw))
	if err != nil {
		return 0
	}
	return t.UnixMilli()
}

// ident keeps a value only if it has the shape of an identifier (a tool,
// skill or subagent type name): short, one line, no spaces. Anything else
// could be text and is dropped.
func ident(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 100 {
		return ""
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f || r == utf8.RuneError {
			return ""
		}
	}
	return s
}

// nonEmptyString is str(raw) != "" for raw valid JSON, without decoding
// it: only the empty literal decodes to an empty string.
func nonEmptyString(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 2 && raw[0] == '"'
}

func isString(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '"'
}

func isArray(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '['
}

func isObject(raw json.RawMessage) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) > 0 && raw[0] == '{'
}
