package watchers

// Ident returns s when it is an identifier (an id, a tool, model or agent
// name: letters, digits and _ - . : @ /, at most 128 bytes), else "". Agent
// parsers pass every name they keep through it, so that no text from a log
// can reach a map as a name.
func Ident(s string) string {
	if s == "" || len(s) > 128 {
		return ""
	}
	// Byte by byte: every byte of a non-ASCII rune is 0x80 or above,
	// which the table refuses as it refuses the rune.
	for i := 0; i < len(s); i++ {
		if !identBytes[s[i]] {
			return ""
		}
	}
	return s
}

// identBytes are the bytes an identifier may hold.
var identBytes = func() (t [256]bool) {
	for c := range 256 {
		t[c] = c == '_' || c == '-' || c == '.' || c == ':' || c == '@' || c == '/' ||
			c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
	}
	return t
}()

// LaneID is the lane id of a subagent whose own id is a uuid (a Codex
// child thread, a Gemini CLI subagent): "sa-" and its last 12 letters and
// digits, lower-cased. The tail is the random part of both v4 and v7 uuids
// (the head of a v7 uuid is a timestamp, which agents started together
// share).
func LaneID(id string) string {
	var b []byte
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= '0' && c <= '9', c >= 'a' && c <= 'z':
			b = append(b, c)
		case c >= 'A' && c <= 'Z':
			b = append(b, c+'a'-'A')
		}
	}
	if len(b) == 0 {
		return ""
	}
	if len(b) > 12 {
		b = b[len(b)-12:]
	}
	return "sa-" + string(b)
}
