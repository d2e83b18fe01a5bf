// Package jsonscan walks JSON objects and arrays without decoding them: it
// hands out the raw bytes of each member, so that a parser reads the few
// keys a map needs and steps over tool outputs, file contents and thinking
// without copying or unescaping them.
//
// Every value it steps over is validated with the grammar encoding/json
// accepts (RFC 8259; invalid UTF-8 inside strings is allowed, as
// encoding/json allows it), so that a line the walk accepts is a line
// json.Unmarshal would accept. The converse need not hold: the walk also
// refuses what it does not handle cheaply (keys with escapes or non-ASCII
// bytes, very deep nesting), and callers then fall back to encoding/json,
// which decides.
package jsonscan

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"reflect"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"
)

// maxDepth bounds the nesting the walk follows; deeper values are refused
// (encoding/json's own limit is 10000, so the fallback still decides).
const maxDepth = 1000

// Object calls fn for each member of the object raw (surrounding white
// space allowed), in order, with the key's bytes between its quotes and the
// member's raw value. It reports false when raw is not one valid object,
// when a key has an escape or a non-ASCII byte, or when fn returns false.
func Object(raw []byte, fn func(key, val []byte) bool) bool {
	return Valid(raw) && ObjectValid(raw, fn)
}

// ObjectValid is Object for a raw value already known to be valid JSON (a
// member handed out by a walk): it is not validated again, and strings are
// stepped over by looking for their closing quote only.
func ObjectValid(raw []byte, fn func(key, val []byte) bool) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	end, ok := members(raw, i, 0, true, func(key, b []byte, i, depth int, valid bool) (int, bool) {
		end, ok := value(b, i, depth, valid)
		return end, ok && fn(key, b[i:end])
	})
	return ok && skipSpace(raw, end) == len(raw)
}

// memberFunc consumes the value of the member key, which starts at b[i],
// and returns the index after it; depth and valid are passed on to value.
type memberFunc func(key, b []byte, i, depth int, valid bool) (int, bool)

// Array calls fn for each element of the array raw (surrounding white space
// allowed), in order. It reports false when raw is not one valid array or
// when fn returns false.
func Array(raw []byte, fn func(elem []byte) bool) bool {
	return Valid(raw) && ArrayValid(raw, fn)
}

// ArrayValid is Array for a raw value already known to be valid JSON (see
// ObjectValid).
func ArrayValid(raw []byte, fn func(elem []byte) bool) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '[' {
		return false
	}
	end, ok := elements(raw, i, 0, true, fn, nil)
	return ok && skipSpace(raw, end) == len(raw)
}

// Valid reports whether raw is one valid JSON value (surrounding white
// space allowed) that the walk handles; see the package comment.
func Valid(raw []byte) bool {
	i := skipSpace(raw, 0)
	end, ok := value(raw, i, 0, false)
	return ok && skipSpace(raw, end) == len(raw)
}

// members walks the object whose '{' is at b[i] and returns the index
// after its '}'. valid says b is known to be valid JSON. fn consumes each
// member's value; with none, values are stepped over.
func members(b []byte, i, depth int, valid bool, fn memberFunc) (int, bool) {
	if depth >= maxDepth {
		return 0, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return i + 1, true
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return 0, false
		}
		kstart := i + 1
		var kend int
		var ok bool
		if fn != nil {
			kend, ok = plainKey(b, kstart)
		} else {
			// A key inside a value stepped over is only validated.
			kend, ok = stringEnd(b, kstart, valid)
			kend--
		}
		if !ok {
			return 0, false
		}
		i = skipSpace(b, kend+1)
		if i >= len(b) || b[i] != ':' {
			return 0, false
		}
		i = skipSpace(b, i+1)
		if i >= len(b) {
			return 0, false
		}
		if fn == nil {
			i, ok = value(b, i, depth+1, valid)
		} else {
			i, ok = fn(b[kstart:kend], b, i, depth+1, valid)
		}
		if !ok {
			return 0, false
		}
		var done bool
		if i, done, ok = next(b, i, '}'); !ok || done {
			return i, ok
		}
	}
}

// elements walks the array whose '[' is at b[i] and returns the index
// after its ']'. Each element is read by into from its first byte, or
// stepped over by value when into is nil; fn, when given, is then handed
// the element's bytes.
func elements(b []byte, i, depth int, valid bool, fn func(elem []byte) bool, into elementFunc) (int, bool) {
	if depth >= maxDepth {
		return 0, false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == ']' {
		return i + 1, true
	}
	for {
		start := i
		var ok bool
		if into != nil {
			if i >= len(b) {
				return 0, false
			}
			i, ok = into(b, i, depth+1, valid)
		} else {
			i, ok = value(b, i, depth+1, valid)
		}
		if !ok {
			return 0, false
		}
		if fn != nil && !fn(b[start:i]) {
			return 0, false
		}
		var done bool
		if i, done, ok = next(b, i, ']'); !ok || done {
			return i, ok
		}
	}
}

// elementFunc consumes the element that starts at b[i] and returns the
// index after it; depth and valid are passed on to value.
type elementFunc func(b []byte, i, depth int, valid bool) (int, bool)

// next reads what follows a member or an element: a comma (i is then at
// the next one) or the closing bracket (done; i is after it).
func next(b []byte, i int, closing byte) (j int, done, ok bool) {
	i = skipSpace(b, i)
	switch {
	case i >= len(b):
		return 0, false, false
	case b[i] == ',':
		return skipSpace(b, i+1), false, true
	case b[i] == closing:
		return i + 1, true, true
	}
	return 0, false, false
}

// plainKey finds the closing quote of a key starting at b[i]; keys with an
// escape, a control or a non-ASCII byte are refused (encoding/json would
// unescape or case-fold them).
func plainKey(b []byte, i int) (int, bool) {
	for s := b[i:]; len(s) >= 8; s, i = s[8:], i+8 {
		// A key is short: its closing quote is most often in the first
		// word. The lowest byte flagged is the first one that is
		// special or not ASCII (a byte of 0x80 or above borrows from
		// none of the tests).
		v := binary.LittleEndian.Uint64(s)
		if m := special(v) | v&highs; m != 0 {
			i += bits.TrailingZeros64(m) >> 3
			return i, b[i] == '"'
		}
	}
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '"':
			return i, true
		case c == '\\' || c < 0x20 || c >= 0x80:
			return 0, false
		}
	}
	return 0, false
}

// value validates the value starting at b[i] (only steps over it when
// valid) and returns the index after it.
func value(b []byte, i, depth int, valid bool) (int, bool) {
	if i >= len(b) {
		return 0, false
	}
	switch c := b[i]; {
	case c == '"':
		return stringEnd(b, i+1, valid)
	case c == '{':
		return members(b, i, depth, valid, nil)
	case c == '[':
		return elements(b, i, depth, valid, nil, nil)
	case valid:
		end := scalarEnd(b, i)
		return end, end > i
	case c == '-' || c >= '0' && c <= '9':
		return number(b, i)
	case c == 't':
		return literal(b, i, "true")
	case c == 'f':
		return literal(b, i, "false")
	case c == 'n':
		return literal(b, i, "null")
	}
	return 0, false
}

func literal(b []byte, i int, lit string) (int, bool) {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return 0, false
	}
	return i + len(lit), true
}

// number validates -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? at b[i].
func number(b []byte, i int) (int, bool) {
	if b[i] == '-' {
		i++
	}
	switch {
	case i < len(b) && b[i] == '0':
		i++
	case i < len(b) && b[i] >= '1' && b[i] <= '9':
		i = digits(b, i+1)
	default:
		return 0, false
	}
	if i < len(b) && b[i] == '.' {
		j := digits(b, i+1)
		if j == i+1 {
			return 0, false
		}
		i = j
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		j := digits(b, i)
		if j == i {
			return 0, false
		}
		i = j
	}
	return i, true
}

func digits(b []byte, i int) int {
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		i++
	}
	return i
}

// stringEnd is str, or only the search for the closing quote when the
// string is known to be valid.
func stringEnd(b []byte, i int, valid bool) (int, bool) {
	if !valid {
		return str(b, i)
	}
	for {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return 0, false
		}
		q := i + j
		escapes := 0
		for k := q - 1; k >= i && b[k] == '\\'; k-- {
			escapes++
		}
		if escapes%2 == 0 {
			return q + 1, true
		}
		i = q + 1
	}
}

// scalarEnd steps over a number or literal known to be valid.
func scalarEnd(b []byte, i int) int {
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// str validates the rest of a string whose opening quote is before b[i]
// and returns the index after its closing quote. Sixteen bytes at a time
// are checked for a quote, a backslash or a control byte, so that long
// texts are stepped over at memory speed; an escape is checked where it
// stands and the scan goes on after it.
func str(b []byte, i int) (int, bool) {
	for {
		// An index loop keeps fewer values live than one that
		// re-slices b (the scan's cost is mostly this loop and its
		// stops). It leaves the last sixteen bytes to the loops
		// below, so that the byte after a backslash it stops at is
		// always there.
		for i < len(b)-16 {
			m0, m1 := special(binary.LittleEndian.Uint64(b[i:])), special(binary.LittleEndian.Uint64(b[i+8:]))
			if m0|m1 == 0 {
				i += 16
				continue
			}
			// The lowest flagged byte is the first special one (a
			// borrow only flags bytes above a true one): in the
			// second word only when the first has none (n0 is then
			// 8), found without a branch.
			n0 := bits.TrailingZeros64(m0) >> 3
			i += n0 + (bits.TrailingZeros64(m1)>>3)&-(n0>>3)
			// Tool outputs and code have a two-byte escape every
			// few dozen bytes: it is stepped over here, and the scan
			// goes on from the byte after it without leaving the
			// loop.
			if b[i] != '\\' || escapeLen[b[i+1]] != 2 {
				goto found
			}
			i += 2
		}
		for ; i < len(b)-7; i += 8 {
			if m := special(binary.LittleEndian.Uint64(b[i:])); m != 0 {
				i += bits.TrailingZeros64(m) >> 3
				goto found
			}
		}
		for i < len(b) && b[i] != '"' && b[i] != '\\' && b[i] >= 0x20 {
			i++
		}
		if i >= len(b) {
			return 0, false
		}
	found:
		switch c := b[i]; {
		case c == '"':
			return i + 1, true
		case c != '\\' || i+1 >= len(b):
			return 0, false // a control byte, or a backslash at the end
		}
		switch escapeLen[b[i+1]] {
		case 2:
			i += 2
		case 6:
			if len(b)-i < 6 || !isHex(b[i+2]) || !isHex(b[i+3]) || !isHex(b[i+4]) || !isHex(b[i+5]) {
				return 0, false
			}
			i += 6
		default:
			return 0, false
		}
	}
}

// escapeLen is the length of the escape a backslash starts, by the byte
// after it: 2 for a two-byte escape, 6 for \u (its four hex digits are
// checked apart), 0 for a byte that escapes nothing. One load tells the
// common escapes from the rest, where a switch would branch on each.
var escapeLen = [256]uint8{'"': 2, '\\': 2, '/': 2, 'b': 2, 'f': 2, 'n': 2, 'r': 2, 't': 2, 'u': 6}

// special flags (in their high bits) the bytes of v that are a quote, a
// backslash or a control byte; a flag above a true one may be false.
// Flipping bit 1 of every byte turns a quote (0x22) into 0x20 and keeps
// the control bytes below 0x20, so that one subtraction finds both: the
// bytes then below 0x21. The XORs keep the high bit of each byte as it
// is, so that bytes of 0x80 and above are masked out at the end.
func special(v uint64) uint64 {
	qc := v ^ (ones * 0x02)
	bs := v ^ (ones * '\\')
	return ((qc - ones*0x21) | (bs - ones)) &^ v & highs
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func skipSpace(b []byte, i int) int {
	// Compact JSON has no white space: one comparison tells.
	for i < len(b) && b[i] <= ' ' {
		switch b[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}

// Keys is the set of member names a Go struct declares, for a walk that
// fills the struct as encoding/json would: encoding/json also matches a
// name that differs only in case, which the walk leaves to it.
type Keys struct {
	names []string
	// slots is an open-addressed table of the names, hashed up to ASCII
	// case so that one probe sequence finds a name exactly or up to case
	// (a walk looks up every key of every line: a map lookup, and a
	// second one for case, cost more than the rest of the walk of a key).
	slots []keySlot
	max   int
}

type keySlot struct {
	name  string // "" for a free slot
	index int
}

// NewKeys returns the set of the given names; Index numbers them in order.
func NewKeys(names ...string) *Keys {
	size := 8
	for size < 4*len(names) {
		size *= 2
	}
	k := &Keys{names: names, slots: make([]keySlot, size)}
	for i, n := range names {
		k.max = max(k.max, len(n))
		if n == "" {
			continue // encoding/json matches no empty name
		}
		j := int(foldHash(n) & uint32(size-1))
		for k.slots[j].name != "" {
			j = (j + 1) & (size - 1)
		}
		k.slots[j] = keySlot{name: n, index: i}
	}
	return k
}

// Index returns the number of key among the names, or -1 when it is none
// of them. folds is true when key is none of them exactly but one of them
// up to case: encoding/json would fill that field, so the caller must
// leave the line to it.
func (k *Keys) Index(key []byte) (i int, folds bool) {
	if len(key) > k.max || len(key) == 0 {
		return -1, false
	}
	mask := len(k.slots) - 1
	for j := int(foldHash(key) & uint32(mask)); k.slots[j].name != ""; j = (j + 1) & mask {
		s := &k.slots[j]
		if len(s.name) != len(key) {
			continue
		}
		if s.name == string(key) {
			return s.index, false
		}
		folds = folds || equalFoldASCII(s.name, key)
	}
	return -1, folds
}

// foldHash mixes the length and three bytes (first, middle, last) of a
// non-empty name, with bit 0x20 set (ASCII letters lowered, without a
// branch; other bytes may then share a hash, and the probe compares the
// whole name anyway): names of one struct differ there.
func foldHash[S string | []byte](s S) uint32 {
	n := len(s)
	h := uint32(n)*0x9e3779b1 ^ uint32(s[0]|0x20)<<16 ^ uint32(s[n/2]|0x20)<<8 ^ uint32(s[n-1]|0x20)
	h *= 0x85ebca6b
	return h ^ h>>15
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		c += 'a' - 'A'
	}
	return c
}

func equalFoldASCII(name string, key []byte) bool {
	for i := 0; i < len(key); i++ {
		if lower(name[i]) != lower(key[i]) {
			return false
		}
	}
	return true
}

// Names returns the names, in order.
func (k *Keys) Names() []string { return append([]string(nil), k.names...) }

// Fields fills a struct of type T from an object's members, one setter per
// member name, as encoding/json would fill it, or reports false where it
// would not mirror encoding/json exactly (see Fill).
type Fields[T any] struct {
	keys   *Keys
	fields []Field[T]
}

// Field names a member and how its raw value is put into T; set reports
// false to give up on the whole walk.
type Field[T any] struct {
	Name string
	Set  func(t *T, val []byte) bool
	// into, instead of Set, walks an object member in place (Pointer),
	// so that its bytes are read once.
	into func(t *T, b []byte, i, depth int, valid bool) (int, bool)
}

// NewFields returns the filler of the given fields (at most 128), which
// must be all the names encoding/json would match in T.
func NewFields[T any](fields ...Field[T]) *Fields[T] {
	if len(fields) > 128 {
		panic("jsonscan: more than 128 fields")
	}
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name
	}
	return &Fields[T]{keys: NewKeys(names...), fields: fields}
}

// Embed turns the fields of an embedded struct E into fields of T, whose
// members encoding/json fills alike.
func Embed[T, E any](fields []Field[E], embedded func(*T) *E) []Field[T] {
	out := make([]Field[T], len(fields))
	for i, f := range fields {
		out[i].Name = f.Name
		if set := f.Set; set != nil {
			out[i].Set = func(t *T, v []byte) bool { return set(embedded(t), v) }
		}
		if into := f.into; into != nil {
			out[i].into = func(t *T, b []byte, i, depth int, valid bool) (int, bool) {
				return into(embedded(t), b, i, depth, valid)
			}
		}
	}
	return out
}

// Names returns the member names, in order.
func (f *Fields[T]) Names() []string { return f.keys.Names() }

// Fill walks the object raw into t. It reports false when raw is not a
// valid object, when a setter gave up, or when a member is one that
// encoding/json would treat otherwise than one set per name: a name given
// twice, or matched only up to case. Members of no field are validated
// and stepped over.
//
// The object is validated as it is walked, in one pass: a setter is
// handed a member only once that member is validated, and an object
// member read by Pointer is walked in place.
func (f *Fields[T]) Fill(t *T, raw []byte) bool { return f.fill(t, raw, false) }

// FillValid is Fill for a raw value already known to be valid JSON (see
// ObjectValid): setters get validated members, so a setter that walks
// its member uses FillValid or ArrayValid.
func (f *Fields[T]) FillValid(t *T, raw []byte) bool { return f.fill(t, raw, true) }

func (f *Fields[T]) fill(t *T, raw []byte, valid bool) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	end, ok := f.walk(t, raw, i, 0, valid)
	return ok && skipSpace(raw, end) == len(raw)
}

// walk fills t from the object whose '{' is at b[i].
func (f *Fields[T]) walk(t *T, b []byte, i, depth int, valid bool) (int, bool) {
	var seen [2]uint64
	return members(b, i, depth, valid, func(key, b []byte, i, depth int, valid bool) (int, bool) {
		n, folds := f.keys.Index(key)
		switch {
		case folds:
			return 0, false
		case n < 0:
			return value(b, i, depth, valid)
		}
		bit := uint64(1) << (n % 64)
		if seen[n/64]&bit != 0 {
			return 0, false
		}
		seen[n/64] |= bit
		field := &f.fields[n]
		if field.into != nil {
			return field.into(t, b, i, depth, valid)
		}
		end, ok := value(b, i, depth, valid)
		return end, ok && field.Set(t, b[i:end])
	})
}

// Elements is the field name whose array of objects (or nulls) f reads
// into the slice dst returns, walked in place as Pointer walks an object:
// the array is read once, validated as its blocks are filled. An empty
// array gives an empty, non-nil slice, an element of another type gives
// up, and a value that is not an array is handed to other, validated
// (null included), as a Set would get it.
func Elements[T, V any](name string, dst func(*T) *[]V, f *Fields[V], other func(t *T, val []byte) bool) Field[T] {
	return ElementsIn(name, dst, nil, f, other)
}

// ElementsIn is Elements with the elements appended to the slice buf
// returns (its length is ignored; nil for a new slice), so that a parser
// that reads line after line into the same buffer allocates none once it
// is large enough.
func ElementsIn[T, V any](name string, dst func(*T) *[]V, buf func(*T) []V, f *Fields[V], other func(t *T, val []byte) bool) Field[T] {
	return Field[T]{Name: name, into: func(t *T, b []byte, i, depth int, valid bool) (int, bool) {
		if b[i] != '[' {
			end, ok := value(b, i, depth, valid)
			return end, ok && other(t, b[i:end])
		}
		var zero V
		var s []V
		if buf != nil {
			s = buf(t)[:0]
		}
		if s == nil {
			s = []V{}
		}
		end, ok := elements(b, i, depth, valid, nil, func(b []byte, i, depth int, valid bool) (int, bool) {
			s = append(s, zero)
			switch b[i] {
			case 'n':
				return value(b, i, depth, valid)
			case '{':
				return f.walk(&s[len(s)-1], b, i, depth, valid)
			}
			return 0, false
		})
		*dst(t) = s
		return end, ok
	}}
}

// AppendObjects appends to dst the elements of the array raw, valid JSON
// (a member handed out by a walk), as encoding/json decodes an array into
// []T: each element an object f reads, or null (a zero T). It reports
// false on an element of another type, or when f gives up.
func AppendObjects[T any](dst []T, raw []byte, f *Fields[T]) ([]T, bool) {
	var zero T
	ok := ArrayValid(raw, func(elem []byte) bool {
		dst = append(dst, zero)
		switch elem[0] {
		case 'n':
			return true
		case '{':
			return f.FillValid(&dst[len(dst)-1], elem)
		}
		return false
	})
	return dst, ok
}

// MemberNames lists the member names encoding/json matches in a struct
// type, for a test that holds a Fields list to the struct it fills.
func MemberNames(typ reflect.Type) []string {
	var names []string
	for f := range typ.Fields() {
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case tag == "-" || !f.IsExported():
		case tag != "":
			names = append(names, tag)
		default:
			names = append(names, f.Name)
		}
	}
	return names
}

// String returns the string a JSON string literal decodes to, as
// encoding/json decodes it (invalid UTF-8 and lone surrogates become
// U+FFFD); ok is false when raw is not one valid string literal
// (surrounding white space allowed).
func String(raw []byte) (s string, ok bool) {
	b, plain, ok := unquote(raw)
	switch {
	case !ok:
		return "", false
	case plain:
		return string(b), true
	}
	// b is new and never written again: it becomes the string without a
	// second copy (what strings.Builder does).
	return unsafe.String(unsafe.SliceData(b), len(b)), true
}

// Unquote is String for a caller that reads the bytes: a slice of raw when
// the string has no escape and is valid UTF-8, else new bytes.
func Unquote(raw []byte) ([]byte, bool) {
	b, _, ok := unquote(raw)
	return b, ok
}

// unquote decodes a string literal; plain says b is a slice of raw.
func unquote(raw []byte) (b []byte, plain, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '"' {
		return nil, false, false
	}
	end, ok := str(raw, i+1)
	if !ok || skipSpace(raw, end) != len(raw) {
		return nil, false, false
	}
	body := raw[i+1 : end-1]
	if bytes.IndexByte(body, '\\') < 0 && utf8.Valid(body) {
		return body, true, true
	}
	return unescape(body, 0), false, true
}

// ValidString is String for raw known to be valid JSON: a member a walk
// handed out (setters get only those), or a json.RawMessage encoding/json
// filled. The literal is not validated again, and a plain one is found
// plain in one pass over its ASCII bytes. Anything but a string literal
// gives "", false; on invalid JSON it gives some string of raw's bytes,
// never a panic.
func ValidString(raw []byte) (string, bool) {
	for len(raw) > 0 && isSpace(raw[0]) {
		raw = raw[1:]
	}
	for len(raw) > 0 && isSpace(raw[len(raw)-1]) {
		raw = raw[:len(raw)-1]
	}
	body, ok := literalBody(raw)
	if !ok {
		return "", false
	}
	i := plainRun(body, 0)
	if i == len(body) || bytes.IndexByte(body[i:], '\\') < 0 && utf8.Valid(body[i:]) {
		return string(body), true
	}
	b := unescape(body, i)
	return unsafe.String(unsafe.SliceData(b), len(b)), true
}

// StringLen measures the string a JSON string literal decodes to, as
// encoding/json decodes it (invalid UTF-8 and lone surrogates become
// U+FFFD), without building it: long texts are counted in place, eight
// bytes at a time where they are plain ASCII. raw must be a string
// literal (surrounding white space allowed) that is valid JSON, such as
// a member handed out by a walk; ok is false when it is not a string
// literal or an escape in it is malformed.
func StringLen(raw []byte) (nbytes, nrunes int, ok bool) {
	i, j := skipSpace(raw, 0), len(raw)
	for j > i && isSpace(raw[j-1]) {
		j--
	}
	if j-i < 2 || raw[i] != '"' || raw[j-1] != '"' {
		return 0, 0, false
	}
	s := raw[i+1 : j-1]
	for i := 0; i < len(s); {
		if i+8 <= len(s) {
			v := binary.LittleEndian.Uint64(s[i:])
			bs := v ^ (ones * '\\')
			// Plain ASCII bytes before the first non-ASCII byte or
			// backslash count one byte and one rune each.
			n := 8
			if m := (v | (bs-ones)&^bs) & highs; m != 0 {
				n = bits.TrailingZeros64(m) >> 3
			}
			if n > 0 {
				nbytes += n
				nrunes += n
				i += n
				continue
			}
		}
		switch c := s[i]; {
		case c == '\\':
			if i+1 >= len(s) {
				return nbytes, nrunes, false
			}
			if s[i+1] != 'u' {
				switch s[i+1] {
				case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				default:
					return nbytes, nrunes, false
				}
				nbytes++
				nrunes++
				i += 2
				continue
			}
			r, n := escapedRune(s[i:])
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

// escapedRune decodes \uXXXX (and a following low surrogate) at the start
// of s, as unescape does; n is the number of bytes read, 0 if malformed.
func escapedRune(s []byte) (r rune, n int) {
	if len(s) < 6 || !isHex(s[2]) || !isHex(s[3]) || !isHex(s[4]) || !isHex(s[5]) {
		return 0, 0
	}
	hi := hex4(s[2:])
	if !utf16.IsSurrogate(hi) {
		return hi, 6
	}
	if len(s) >= 12 && s[6] == '\\' && s[7] == 'u' && isHex(s[8]) && isHex(s[9]) && isHex(s[10]) && isHex(s[11]) {
		if dec := utf16.DecodeRune(hi, hex4(s[8:])); dec != utf8.RuneError {
			return dec, 12
		}
	}
	return utf8.RuneError, 6
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// unescape decodes the body of a validated string literal the way
// encoding/json's unquote does, from s[i] on (s[:i] is plain ASCII).
func unescape(s []byte, i int) []byte {
	b := make([]byte, 0, len(s)+2*utf8.UTFMax)
	b, _ = appendDecoded(append(b, s[:i]...), s[i:], -1)
	return b
}

// hex4 reads the four hex digits of a validated \u escape.
func hex4(s []byte) rune {
	var r rune
	for _, c := range s[:4] {
		r <<= 4
		switch {
		case c <= '9':
			r |= rune(c - '0')
		case c >= 'a':
			r |= rune(c-'a') + 10
		default:
			r |= rune(c-'A') + 10
		}
	}
	return r
}

// Raw is the setter of a json.RawMessage field: the member's raw value,
// as a slice of the walked bytes (encoding/json would copy it).
func Raw[T any](dst func(*T) *json.RawMessage) func(*T, []byte) bool {
	return func(t *T, v []byte) bool { *dst(t) = v; return true }
}

// Text is the setter of a string field: a JSON string decoded; null, or a
// value of another type (a type error encoding/json reports and steps
// over), leaves it empty.
func Text[T any](dst func(*T) *string) func(*T, []byte) bool {
	return func(t *T, v []byte) bool { *dst(t), _ = ValidString(v); return true }
}

// Words is a vocabulary: strings a member usually holds (record and block
// types, tool names), which its String returns without allocating them
// again, line after line.
type Words map[string]string

// NewWords returns the vocabulary of the given words, which must be
// valid UTF-8 without quotes, backslashes or control bytes (the body of
// a string literal is then the word itself).
func NewWords(words ...string) Words {
	w := make(Words, len(words))
	for _, s := range words {
		if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return r == '"' || r == '\\' || r < 0x20 }) {
			panic("jsonscan: a word that is not a plain string literal's body: " + s)
		}
		w[s] = s
	}
	return w
}

// String is the package's String, with a word of w returned as the word.
func (w Words) String(raw []byte) (string, bool) {
	if s, ok := w.word(raw); ok {
		return s, true
	}
	return String(raw)
}

// word returns the word of w the literal raw spells, if it is one.
func (w Words) word(raw []byte) (string, bool) {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' {
		// An escape or invalid UTF-8 cannot spell a word: such a body
		// is no key of w.
		if s, ok := w[string(raw[1:n-1])]; ok {
			return s, true
		}
	}
	return "", false
}

// TextOf is Text with the words of w returned without allocating.
func TextOf[T any](w Words, dst func(*T) *string) func(*T, []byte) bool {
	return func(t *T, v []byte) bool {
		var ok bool
		if *dst(t), ok = w.word(v); !ok {
			*dst(t), _ = ValidString(v) // a setter's member is validated
		}
		return true
	}
}

// Decoded is the setter of a field of any other type, for small members:
// the value is decoded with encoding/json into the field dst returns a
// pointer to, as decoding the whole object would (a null makes a pointer
// nil). Any error gives up: a type error inside the member, which
// encoding/json notes and steps over, could also come from an
// UnmarshalJSON method, which stops the decoding of the whole object
// where it is.
func Decoded[T any](dst func(*T) any) func(*T, []byte) bool {
	return func(t *T, v []byte) bool { return json.Unmarshal(v, dst(t)) == nil }
}

// Pointer is the field name of type *V whose members f reads: null leaves
// it nil, an object is walked in place into a new V, and a value of
// another type gives up (encoding/json would keep an empty V).
func Pointer[T, V any](name string, dst func(*T) **V, f *Fields[V]) Field[T] {
	return pointer(name, dst, nil, f, isNull)
}

// PointerIn is Pointer with the V an object is walked into returned by
// buf (zeroed by it), instead of a new one (a new one when buf returns
// nil): a parser that reads line after line into the same buffers
// allocates none.
func PointerIn[T, V any](name string, dst func(*T) **V, buf func(*T) *V, f *Fields[V]) Field[T] {
	return pointer(name, dst, buf, f, isNull)
}

func isNull[T any](_ *T, val []byte) bool { return val[0] == 'n' }

// PointerOr is Pointer for a member that may also be of another type: a
// value that is not an object is handed to other, validated (null
// included), as a Set would get it.
func PointerOr[T, V any](name string, dst func(*T) **V, f *Fields[V], other func(t *T, val []byte) bool) Field[T] {
	return pointer(name, dst, nil, f, other)
}

func pointer[T, V any](name string, dst func(*T) **V, buf func(*T) *V, f *Fields[V], other func(t *T, val []byte) bool) Field[T] {
	return Field[T]{Name: name, into: func(t *T, b []byte, i, depth int, valid bool) (int, bool) {
		if b[i] == '{' {
			var p *V
			if buf != nil {
				p = buf(t)
			}
			if p == nil {
				p = new(V)
			}
			*dst(t) = p
			return f.walk(p, b, i, depth, valid)
		}
		end, ok := value(b, i, depth, valid)
		return end, ok && other(t, b[i:end])
	}}
}

// Leading returns the members of the object that raw begins, when raw is
// cut short (the first bytes of a line too long to read whole): raw up to
// the end of the last member followed by a comma or the closing brace,
// closed with '}', a valid object. A member cut short, or one whose end
// cannot be told (a number at the cut), is left out with all after it.
// ok is false when raw opens no object or holds no whole member.
func Leading(raw []byte) (obj []byte, ok bool) {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return nil, false
	}
	i = skipSpace(raw, i+1)
	last := -1 // the index of the comma or brace after the last whole member
	for i < len(raw) && raw[i] == '"' {
		j, ok := stringEnd(raw, i+1, false)
		if !ok {
			break
		}
		if j = skipSpace(raw, j); j >= len(raw) || raw[j] != ':' {
			break
		}
		if j, ok = value(raw, skipSpace(raw, j+1), 1, false); !ok {
			break
		}
		if j = skipSpace(raw, j); j >= len(raw) || raw[j] != ',' && raw[j] != '}' {
			break
		}
		last = j
		if raw[j] == '}' {
			break
		}
		i = skipSpace(raw, j+1)
	}
	if last < 0 {
		return nil, false
	}
	obj = make([]byte, last+1)
	copy(obj, raw[:last])
	obj[last] = '}'
	return obj, true
}
