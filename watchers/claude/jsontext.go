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

// stringLen measures a raw JSON string literal as encoding/json would decode
// it (invalid UTF-8 and lone surrogates become U+FFFD) without building the
// string, so that long texts are counted without being materialised. ok is
// false when raw is not a string literal.
func stringLen(raw []byte) (nbytes, nrunes int, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return 0, 0, false
	}
	s := raw[1 : len(raw)-1]
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\\':
			if i+1 >= len(s) {
				return nbytes, nrunes, false
			}
			if s[i+1] != 'u' {
				nbytes++
				nrunes++
				i += 2
				continue
			}
			r, n := unicodeEscape(s[i:])
			if n == 0 {
				return nbytes, nrunes, false
			}
			nbytes += utf8.RuneLen(r)
			nrunes++
			i += n
		case c < utf8.RuneSelf:
			nbytes++
			nrunes++
			i++
		default:
			r, n := utf8.DecodeRune(s[i:])
			if r == utf8.RuneError && n == 1 {
				nbytes += 3 // replaced by U+FFFD
			} else {
				nbytes += n
			}
			nrunes++
			i += n
		}
	}
	return nbytes, nrunes, true
}

// unicodeEscape decodes \uXXXX (and a following low surrogate) at the start
// of s; n is the number of bytes consumed, 0 if malformed.
func unicodeEscape(s []byte) (r rune, n int) {
	hi, ok := hex4(s)
	if !ok {
		return 0, 0
	}
	if hi < 0xD800 || hi > 0xDFFF {
		return hi, 6
	}
	if hi <= 0xDBFF && len(s) >= 12 && s[6] == '\\' && s[7] == 'u' {
		if lo, ok := hex4(s[6:]); ok && lo >= 0xDC00 && lo <= 0xDFFF {
			return (hi-0xD800)<<10 + (lo - 0xDC00) + 0x10000, 12
		}
	}
	return utf8.RuneError, 6
}

func hex4(s []byte) (rune, bool) {
	if len(s) < 6 {
		return 0, false
	}
	var r rune
	for _, c := range s[2:6] {
		r <<= 4
		switch {
		case c >= '0' && c <= '9':
			r |= rune(c - '0')
		case c >= 'a' && c <= 'f':
			r |= rune(c-'a') + 10
		case c >= 'A' && c <= 'F':
			r |= rune(c-'A') + 10
		default:
			return 0, false
		}
	}
	return r, true
}

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
