package config

import (
	"strings"

	"github.com/BurntSushi/toml"
)

// keyLines maps each key a TOML document sets (as toml.Key.String() spells
// it) to the line that sets it. The TOML library knows these positions but
// does not export them, and every problem must name its line; a scanner that
// follows table headers, dotted and quoted keys, multi-line strings and
// multi-line arrays is enough for a config file. Keys set inside inline
// tables resolve to the line of the table (see line).
type keyLines map[string]int

func scanKeyLines(doc string) keyLines {
	kl := keyLines{}
	var table []string
	inString := "" // the closing delimiter of an open multi-line string
	depth := 0     // open brackets and braces of a value spanning lines
	for i, line := range strings.Split(doc, "\n") {
		n := i + 1
		rest := line
		if inString != "" {
			end := strings.Index(rest, inString)
			if end < 0 {
				continue
			}
			rest = rest[end+len(inString):]
			inString = ""
			inString, depth = scanValue(rest, depth)
			continue
		}
		if depth > 0 {
			inString, depth = scanValue(rest, depth)
			continue
		}
		t := strings.TrimSpace(rest)
		if t == "" || t[0] == '#' {
			continue
		}
		if t[0] == '[' {
			array := strings.HasPrefix(t, "[[")
			inner := strings.TrimPrefix(t, "[")
			if array {
				inner = strings.TrimPrefix(inner, "[")
			}
			key, after, ok := parseKey(inner)
			if ok && strings.HasPrefix(strings.TrimSpace(after), "]") {
				table = key
				setFirst(kl, table, n)
			}
			continue
		}
		key, after, ok := parseKey(t)
		after = strings.TrimSpace(after)
		if !ok || !strings.HasPrefix(after, "=") {
			continue
		}
		full := append(append([]string{}, table...), key...)
		setFirst(kl, full, n)
		inString, depth = scanValue(after[1:], 0)
	}
	return kl
}

func setFirst(kl keyLines, key []string, line int) {
	s := toml.Key(key).String()
	if _, ok := kl[s]; !ok {
		kl[s] = line
	}
}

// line returns the line of key, or of its closest parent that has one (a key
// inside an inline table, or a table implied by a dotted key); 0 if none.
func (kl keyLines) line(key string) int {
	parts, _, ok := parseKey(key)
	if !ok {
		return kl[key]
	}
	for k := len(parts); k > 0; k-- {
		if n, ok := kl[toml.Key(parts[:k]).String()]; ok {
			return n
		}
	}
	return 0
}

// parseKey reads a dotted key of bare and quoted parts from the start of s
// and returns it with the remainder.
func parseKey(s string) (key []string, rest string, ok bool) {
	for {
		s = strings.TrimLeft(s, " \t")
		if s == "" {
			return nil, "", false
		}
		var part string
		switch s[0] {
		case '"':
			end := 1
			var b strings.Builder
			for end < len(s) && s[end] != '"' {
				if s[end] == '\\' && end+1 < len(s) {
					switch s[end+1] {
					case '"', '\\':
						b.WriteByte(s[end+1])
						end += 2
						continue
					}
				}
				b.WriteByte(s[end])
				end++
			}
			if end >= len(s) {
				return nil, "", false
			}
			part, s = b.String(), s[end+1:]
		case '\'':
			end := strings.IndexByte(s[1:], '\'')
			if end < 0 {
				return nil, "", false
			}
			part, s = s[1:1+end], s[end+2:]
		default:
			end := 0
			for end < len(s) && isBare(s[end]) {
				end++
			}
			if end == 0 {
				return nil, "", false
			}
			part, s = s[:end], s[end:]
		}
		key = append(key, part)
		s = strings.TrimLeft(s, " \t")
		if !strings.HasPrefix(s, ".") {
			return key, s, true
		}
		s = s[1:]
	}
}

func isBare(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// scanValue follows the rest of a value on one line: it returns the closing
// delimiter of a multi-line string left open, and the bracket depth left
// open by a multi-line array or inline table.
func scanValue(s string, depth int) (openString string, newDepth int) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '#':
			return "", depth
		case '[', '{':
			depth++
		case ']', '}':
			if depth > 0 {
				depth--
			}
		case '"', '\'':
			delim := string(c)
			if strings.HasPrefix(s[i:], strings.Repeat(delim, 3)) {
				delim = strings.Repeat(delim, 3)
			}
			end := closing(s[i+len(delim):], delim)
			if end < 0 {
				if len(delim) == 3 {
					return delim, depth
				}
				return "", depth // an unterminated string: the parser reports it
			}
			i += len(delim) + end + len(delim) - 1
		}
	}
	return "", depth
}

// closing finds the closing delimiter of a string, skipping escapes in basic
// strings.
func closing(s, delim string) int {
	for i := 0; i < len(s); i++ {
		if delim[0] == '"' && s[i] == '\\' {
			i++
			continue
		}
		if strings.HasPrefix(s[i:], delim) {
			return i
		}
	}
	return -1
}
