package jsonscan

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"slices"
	"unicode/utf8"
)

// Reading a string member without materialising it: a parser that needs
// only the length of a tool output and the few facts at its start (an exit
// code, a wall time) measures the literal where it lies and decodes only
// its first bytes, into a buffer it reuses. Both decode as String does, so
// that what they give is byte for byte what String would have given.

// StringRunes returns the number of runes of the string that the JSON
// string literal raw decodes to (utf8.RuneCountInString of String's
// result), without building it: StringLen's second count.
func StringRunes(raw []byte) (n int, ok bool) {
	_, n, ok = StringLen(raw)
	return n, ok
}

// AppendString appends to dst the string that the JSON string literal raw
// decodes to, as String decodes it. With limit ≥ 0 it stops once it has
// appended at least limit bytes (the result then holds an exact prefix of
// the decoded string, never less than limit bytes); complete reports
// whether the whole string was appended. raw must be a valid literal as a
// walk hands it out; for anything else dst is returned with complete
// false. Bytes of dst's capacity past the result may be written to.
func AppendString(dst, raw []byte, limit int) (out []byte, complete bool) {
	body, ok := literalBody(raw)
	if !ok {
		return dst, false
	}
	return appendDecoded(dst, body, limit)
}

// appendDecoded appends the decoding of a validated literal's body (runs
// of plain bytes copied whole, escapes decoded), stopping once at least
// limit bytes were appended when limit ≥ 0; complete is false when it
// stopped early or met a malformed escape. String's unescape and
// AppendString share it.
func appendDecoded(dst, body []byte, limit int) (out []byte, complete bool) {
	start := len(dst)
	// Plain bytes and two-byte escapes decode to no more bytes than they
	// take: room for the body (or the limit) is made once, and copyPlain
	// fills it.
	room := len(body)
	if limit >= 0 {
		room = min(room, limit)
	}
	dst = slices.Grow(dst, room)
	for i := 0; i < len(body); {
		end := cap(dst)
		if limit >= 0 {
			end = min(end, start+limit)
		}
		if dst, i = copyPlain(dst, body, i, end); i >= len(body) {
			break
		}
		if limit >= 0 && len(dst)-start >= limit {
			return dst, false
		}
		j := plainRun(body, i)
		if limit >= 0 {
			j = min(j, i+limit-(len(dst)-start))
		}
		dst = append(dst, body[i:j]...)
		if i = j; i >= len(body) || body[i] < utf8.RuneSelf && body[i] != '\\' {
			continue
		}
		if c, ok := shortEscape(body, i); ok {
			dst = append(dst, c)
			i += 2
			continue
		}
		r, next, ok := unit(body, i)
		if !ok {
			return dst, false
		}
		dst = utf8.AppendRune(dst, r)
		i = next
	}
	return dst, true
}

// copyPlain appends the decoding of body from i on, as appendDecoded
// does, for as long as it is plain ASCII and two-byte escapes and dst
// has room for eight more bytes below end (≤ cap(dst)), and returns the
// index it stopped at. Eight bytes are copied at a time, special or not,
// and only those before the first special one are kept: a tool output's
// text, quoted again inside a JSON header, has an escape every few
// bytes, each of which would otherwise end a run and an append.
func copyPlain(dst, body []byte, i, end int) ([]byte, int) {
	n := len(dst)
	d := dst[:end]
	for i+8 <= len(body) && n+8 <= len(d) {
		v := binary.LittleEndian.Uint64(body[i:])
		binary.LittleEndian.PutUint64(d[n:], v)
		m := plainMask(v)
		if m == 0 {
			i, n = i+8, n+8
			continue
		}
		k := bits.TrailingZeros64(m) >> 3 // the first flagged byte is a true one
		i, n = i+k, n+k
		if body[i] != '\\' || i+1 >= len(body) || shortEscapes[body[i+1]] == 0 {
			break // a byte that is not ASCII, or \u: unit decodes it
		}
		d[n] = shortEscapes[body[i+1]]
		i, n = i+2, n+1
	}
	return dst[:n], i
}

// plainMask flags (in their high bits) the bytes of v that are a
// backslash or not ASCII; a flag above a true one may be false.
func plainMask(v uint64) uint64 {
	bs := v ^ (ones * '\\')
	return (v | (bs-ones)&^bs) & highs
}

// literalBody is the text between the quotes of a string literal.
func literalBody(raw []byte) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	return raw[1 : len(raw)-1], true
}

// plainRun returns the index of the first byte from s[i] on that is a
// backslash or not ASCII (len(s) when there is none): the bytes before it
// decode to themselves. Eight bytes are looked at a time.
func plainRun(s []byte, i int) int {
	for i+8 <= len(s) {
		if m := plainMask(binary.LittleEndian.Uint64(s[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8 // the first flagged byte is a true one
		}
		i += 8
	}
	for i < len(s) && s[i] < utf8.RuneSelf && s[i] != '\\' {
		i++
	}
	return i
}

// shortEscapes maps the byte after a backslash to the byte a two-byte
// escape stands for (0 for \u and for bytes that escape nothing).
var shortEscapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// shortEscape decodes the two-byte escape at s[i], if it is one: the
// common escapes (quotes, newlines) without unit's general decoding.
func shortEscape(s []byte, i int) (byte, bool) {
	if s[i] != '\\' || i+1 >= len(s) {
		return 0, false
	}
	c := shortEscapes[s[i+1]]
	return c, c != 0
}

// unit decodes what starts at s[i], an escape or a non-ASCII byte, as
// encoding/json decodes it: the rune it stands for (U+FFFD for invalid
// UTF-8 and for a lone surrogate) and the index after it. A valid UTF-8
// sequence gives its own rune, which encodes back to the same bytes.
func unit(s []byte, i int) (r rune, next int, ok bool) {
	if c := s[i]; c != '\\' {
		r, n := utf8.DecodeRune(s[i:])
		return r, i + n, true // an invalid byte is RuneError, n == 1
	}
	if i+1 >= len(s) {
		return 0, 0, false
	}
	switch e := s[i+1]; e {
	case 'b':
		return '\b', i + 2, true
	case 'f':
		return '\f', i + 2, true
	case 'n':
		return '\n', i + 2, true
	case 'r':
		return '\r', i + 2, true
	case 't':
		return '\t', i + 2, true
	case '"', '\\', '/':
		return rune(e), i + 2, true
	case 'u':
		r, n := escapedRune(s[i:]) // a low surrogate after a high one is read too
		if n == 0 {
			return 0, 0, false
		}
		return r, i + n, true
	}
	return 0, 0, false
}

// Len is the length of a string member that a walk measured while it
// validated it (see Measured): what StringLen gives of it, without a
// second pass over its bytes. The zero Len is a member not measured (not
// a string, or filled by encoding/json), which Of then measures.
type Len struct {
	nbytes, nrunes int
	measured       bool
}

// Of returns what StringLen gives of raw, the member l was measured from
// (0, 0 when it is not a string literal).
func (l Len) Of(raw []byte) (nbytes, nrunes int) {
	if l.measured {
		return l.nbytes, l.nrunes
	}
	nbytes, nrunes, _ = StringLen(raw)
	return nbytes, nrunes
}

// Measured is the field name of a member read raw (as Raw sets it into
// the field raw returns) that, when it is a string, is measured in the
// pass that validates it, into the field l returns: for large texts
// whose length is all a parser reads of them.
func Measured[T any](name string, raw func(*T) *json.RawMessage, l func(*T) *Len) Field[T] {
	return Field[T]{Name: name, into: func(t *T, b []byte, i, depth int, valid bool) (int, bool) {
		var end int
		var n Len
		var ok bool
		if b[i] == '"' {
			end, n, ok = measuredStr(b, i+1)
		} else {
			end, ok = value(b, i, depth, valid)
		}
		if ok {
			*raw(t), *l(t) = b[i:end], n
		}
		return end, ok
	}}
}

// measuredStr is str measuring the string as it validates it: it returns
// what StringLen gives of the literal that ends at the index returned. It
// stops at non-ASCII bytes too, to count them as StringLen does.
func measuredStr(b []byte, i int) (int, Len, bool) {
	var n Len
	for {
		// The bytes from start to the next stop count one byte and one
		// rune each, but for the two-byte escapes stepped over on the
		// way, which count one for their two. The loop is str's, stopping
		// at non-ASCII bytes too; it is written out in both, not shared,
		// as it is the walk's hottest code and a shared one would not be
		// inlined with its mask.
		start, escapes := i, 0
		for i < len(b)-16 {
			v0, v1 := binary.LittleEndian.Uint64(b[i:]), binary.LittleEndian.Uint64(b[i+8:])
			m0, m1 := special(v0)|v0&highs, special(v1)|v1&highs
			if m0|m1 == 0 {
				i += 16
				continue
			}
			n0 := bits.TrailingZeros64(m0) >> 3
			i += n0 + (bits.TrailingZeros64(m1)>>3)&-(n0>>3)
			if b[i] != '\\' || escapeLen[b[i+1]] != 2 {
				goto found
			}
			escapes++
			i += 2
		}
		for ; i < len(b)-7; i += 8 {
			v := binary.LittleEndian.Uint64(b[i:])
			if m := special(v) | v&highs; m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				goto found
			}
		}
		for i < len(b) && b[i] != '"' && b[i] != '\\' && b[i] >= 0x20 && b[i] < utf8.RuneSelf {
			i++
		}
		if i >= len(b) {
			return 0, Len{}, false
		}
	found:
		n.nbytes += i - start - escapes
		n.nrunes += i - start - escapes
		switch c := b[i]; {
		case c == '"':
			n.measured = true
			return i + 1, n, true
		case c == '\\':
			if i+1 >= len(b) {
				return 0, Len{}, false
			}
			switch escapeLen[b[i+1]] {
			case 2:
				n.nbytes++
				i += 2
			case 6:
				r, k := escapedRune(b[i:])
				if k == 0 {
					return 0, Len{}, false
				}
				n.nbytes += utf8.RuneLen(r)
				i += k
			default:
				return 0, Len{}, false
			}
			n.nrunes++
		case c < 0x20:
			return 0, Len{}, false
		default:
			r, k := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && k == 1 {
				n.nbytes += 3 // replaced by U+FFFD
			} else {
				n.nbytes += k
			}
			n.nrunes++
			i += k
		}
	}
}
