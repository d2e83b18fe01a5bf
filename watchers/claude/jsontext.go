package claude

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers/jsonscan"
)

// str decodes a raw JSON value (a member: valid JSON) that should be a
// string; anything else (absent, null, number, object) gives "".
func str(raw json.RawMessage) string {
	raw = trim(raw)
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return ""
	}
	s, _ := jsonscan.ValidString(raw)
	return s
}

// num decodes a raw JSON number, or a string holding one (logs drift between
// the two); anything else gives 0.
func num(raw json.RawMessage) float64 {
	raw = trim(raw)
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
	return string(trim(raw)) == "true"
}

// millis parses a line timestamp (ISO-8601, or a number of Unix ms) into
// Unix ms; 0 when absent or unreadable.
func millis(raw json.RawMessage) int64 {
	raw = trim(raw)
	if len(raw) == 0 || raw[0] != '"' {
		if f := num(raw); f > 0 {
			if f < 1e11 { // seconds
				f *= 1000
			}
			return int64(f)
		}
		return 0
	}
	if body := raw[1:max(len(raw)-1, 1)]; bytes.IndexByte(body, '\\') < 0 {
		if ms, ok := utcMillis(body); ok {
			return ms
		}
	}
	t, err := time.Parse(time.RFC3339Nano, str(raw))
	if err != nil {
		return 0
	}
	return t.UnixMilli()
}

// utcMillis reads the form Claude Code writes every line,
// 2006-01-02T15:04:05.000Z (one to nine digits of fraction, or none), in
// place, as time.Parse(time.RFC3339Nano) reads it; ok is false for any
// other form or a value out of range, which the caller leaves to
// time.Parse.
func utcMillis(b []byte) (ms int64, ok bool) {
	n := len(b)
	if n < 20 || n > 30 || b[4] != '-' || b[7] != '-' || b[10] != 'T' || b[13] != ':' || b[16] != ':' || b[n-1] != 'Z' {
		return 0, false
	}
	num := func(s []byte) int {
		v := 0
		for _, c := range s {
			if c < '0' || c > '9' {
				return -1
			}
			v = v*10 + int(c-'0')
		}
		return v
	}
	y, mo, d, h, mi, sec := num(b[0:4]), num(b[5:7]), num(b[8:10]), num(b[11:13]), num(b[14:16]), num(b[17:19])
	ns := 0
	if n > 20 {
		frac := b[20 : n-1]
		if b[19] != '.' || len(frac) == 0 || len(frac) > 9 {
			return 0, false
		}
		if ns = num(frac); ns < 0 {
			return 0, false
		}
		for range 9 - len(frac) {
			ns *= 10
		}
	}
	if y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || sec < 0 || sec > 59 {
		return 0, false
	}
	t := time.Date(y, time.Month(mo), d, h, mi, sec, ns, time.UTC)
	if t.Day() != d { // past the month's last day: time.Parse refuses it
		return 0, false
	}
	return t.UnixMilli(), true
}

// ident keeps a value only if it has the shape of an identifier (a tool,
// skill or subagent type name): short, one line, no spaces, nothing that
// does not show (a no-break or zero-width space parts the words of a
// sentence as well as a space does). Anything else could be text and is
// dropped.
func ident(s string) string {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 100 {
		return ""
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f || r == utf8.RuneError || r >= utf8.RuneSelf && event.Hidden(r) {
			return ""
		}
	}
	return s
}

// hasPrefix is strings.HasPrefix(str(raw), prefix) for an ASCII prefix,
// read in place when the literal has no escape (every line of a subagent
// file names its agent).
func hasPrefix(raw json.RawMessage, prefix string) bool {
	raw = trim(raw)
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return false
	}
	if body := raw[1 : len(raw)-1]; bytes.IndexByte(body, '\\') < 0 {
		// Invalid UTF-8, which decoding replaces, cannot spell an
		// ASCII prefix either way.
		return bytes.HasPrefix(body, []byte(prefix))
	}
	return strings.HasPrefix(str(raw), prefix)
}

// nonEmptyString is str(raw) != "" for raw valid JSON, without decoding
// it: only the empty literal decodes to an empty string.
func nonEmptyString(raw json.RawMessage) bool {
	raw = trim(raw)
	return len(raw) > 2 && raw[0] == '"'
}

func isString(raw json.RawMessage) bool {
	raw = trim(raw)
	return len(raw) > 0 && raw[0] == '"'
}

func isArray(raw json.RawMessage) bool {
	raw = trim(raw)
	return len(raw) > 0 && raw[0] == '['
}

func isObject(raw json.RawMessage) bool {
	raw = trim(raw)
	return len(raw) > 0 && raw[0] == '{'
}

// trim drops the white space JSON allows around a value. A member as a
// walk or encoding/json hands it out has none (it starts and ends with a
// JSON token), so this is cheaper than bytes.TrimSpace and the same.
func trim(raw []byte) []byte {
	for len(raw) > 0 && isJSONSpace(raw[0]) {
		raw = raw[1:]
	}
	for len(raw) > 0 && isJSONSpace(raw[len(raw)-1]) {
		raw = raw[:len(raw)-1]
	}
	return raw
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
