// Package jsondec reads the compact JSON encoding/json writes, by hand:
// the records the state database stores (events, sources, sessions) are
// read back on every flush and every start, and encoding/json's
// reflection was a tenth and more of that work; decoding the maps a
// report or a usage table reads by the thousand was most of theirs. A
// Decoder accepts only what it mirrors exactly (no white space, names
// matched exactly and at most once, the values a field's type takes) and
// reports false on anything else, for the caller to hand the whole value
// to encoding/json, which then decides; so whatever a reader built on it
// accepts, it reads as encoding/json does. Readers of a record are
// written member by member as a Member function for Object (see
// builder/event, state and export/mapfile).
//
// The log parsers' walker (watchers/jsonscan) reads JSON other programs
// wrote: any spacing and order, every value validated, unknown members
// stepped over, and a setter handed each member's raw bytes. What this
// package reads is our own JSON, written by our encoders, where anything
// unexpected is a reason to let encoding/json decide rather than
// something to step over (but for the members of a map that a reader's
// view of it does not keep: ObjectOf); its readers set typed fields
// directly, with no raw member in between. The two share the rules of
// JSON strings and numbers, each written where its callers' layer can
// reach it (this package is below builder and state; jsonscan is the
// watchers').
package jsondec

import (
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Decoder reads compact JSON from b at i; bad is set by a separator that
// is neither , nor the closing bracket.
type Decoder struct {
	b   []byte
	i   int
	bad bool
}

// New returns a decoder of data.
func New(data []byte) Decoder { return Decoder{b: data} }

// Done reports whether all of data was read, with no bad separator.
func (d *Decoder) Done() bool { return !d.bad && d.i == len(d.b) }

// Byte consumes c if it is next.
func (d *Decoder) Byte(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// Literal consumes s if it is next (null, true, false).
func (d *Decoder) Literal(s string) bool {
	if len(d.b)-d.i >= len(s) && string(d.b[d.i:d.i+len(s)]) == s {
		d.i += len(s)
		return true
	}
	return false
}

// Open consumes an object's '{' and reports whether a member follows (or
// the '}' of an empty object, consumed); bad is set when there is no '{'.
func (d *Decoder) Open() bool {
	if !d.Byte('{') {
		d.bad = true
		return false
	}
	return !d.Byte('}')
}

// Next consumes what follows a member: a ',' before another (true) or
// the closing '}' (false); anything else sets bad.
func (d *Decoder) Next() bool {
	if d.Byte(',') {
		return true
	}
	if !d.Byte('}') {
		d.bad = true
	}
	return false
}

// Key reads a member's name and its ':'. The names of records are plain
// ASCII: a name with an escape or another byte is refused (encoding/json
// would match it to a field up to case, or not at all).
func (d *Decoder) Key() ([]byte, bool) {
	if !d.Byte('"') {
		return nil, false
	}
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		if c == '"' {
			k := d.b[start:d.i]
			d.i++
			return k, d.Byte(':')
		}
		if c == '\\' || c < 0x20 || c >= utf8.RuneSelf {
			return nil, false
		}
		d.i++
	}
	return nil, false
}

// Str reads a string into *s as encoding/json does, refusing invalid
// UTF-8 and lone surrogates (which encoding/json replaces).
func (d *Decoder) Str(s *string) bool {
	if !d.Byte('"') {
		return false
	}
	start := d.i
	ascii := true
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			raw := d.b[start:d.i]
			if !ascii && !utf8.Valid(raw) {
				return false
			}
			*s = string(raw)
			d.i++
			return true
		case c == '\\':
			return d.escaped(s, start)
		case c < 0x20:
			return false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		d.i++
	}
	return false
}

// escaped finishes a string that has an escape at d.i, begun at start.
func (d *Decoder) escaped(s *string, start int) bool {
	buf := append([]byte(nil), d.b[start:d.i]...)
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			if !utf8.Valid(buf) {
				return false
			}
			*s = string(buf)
			d.i++
			return true
		case c < 0x20:
			return false
		case c != '\\':
			buf = append(buf, c)
			d.i++
			continue
		}
		if d.i+1 >= len(d.b) {
			return false
		}
		switch e := d.b[d.i+1]; e {
		case '"', '\\', '/':
			buf = append(buf, e)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, ok := d.hex4(d.i + 2)
			if !ok {
				return false
			}
			d.i += 6
			if utf16.IsSurrogate(r) {
				// Only a pair: a lone half is U+FFFD to encoding/json.
				if !(d.i+1 < len(d.b) && d.b[d.i] == '\\' && d.b[d.i+1] == 'u') {
					return false
				}
				r2, ok := d.hex4(d.i + 2)
				if r = utf16.DecodeRune(r, r2); !ok || r == utf8.RuneError {
					return false
				}
				d.i += 6
			}
			buf = utf8.AppendRune(buf, r)
			continue
		default:
			return false
		}
		d.i += 2
	}
	return false
}

// hex4 reads the four hex digits of a \u escape at b[i:].
func (d *Decoder) hex4(i int) (rune, bool) {
	if len(d.b)-i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range d.b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}

// integer reads a JSON integer that fits in bits bits: what encoding/json
// puts in an int field. A fraction or an exponent is refused (an error
// to encoding/json).
func (d *Decoder) integer(bits int) (int64, bool) {
	neg := d.Byte('-')
	digits := d.i
	var u uint64 // of the first 19 digits (no overflow); more are refused below
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		if d.i-digits < 19 {
			u = u*10 + uint64(d.b[d.i]-'0')
		}
		d.i++
	}
	n := d.i - digits
	if n == 0 || n > 1 && d.b[digits] == '0' || n > 19 {
		return 0, false
	}
	if d.i < len(d.b) && (d.b[d.i] == '.' || d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		return 0, false
	}
	limit := uint64(1) << (bits - 1) // the magnitude of the smallest value
	if u > limit || !neg && u == limit {
		return 0, false
	}
	if neg {
		return -int64(u), true
	}
	return int64(u), true
}

// Int64 reads an integer into an int64 field.
func (d *Decoder) Int64(v *int64) bool {
	n, ok := d.integer(64)
	*v = n
	return ok
}

// Int reads an integer into an int field (of the platform's size).
func (d *Decoder) Int(v *int) bool {
	n, ok := d.integer(strconv.IntSize)
	*v = int(n)
	return ok
}

// Float reads a JSON number as encoding/json reads it into a float64.
func (d *Decoder) Float(v *float64) bool {
	start := d.i
	if !d.number() {
		return false
	}
	f, err := strconv.ParseFloat(string(d.b[start:d.i]), 64)
	*v = f
	return err == nil
}

// number consumes a JSON number (its grammar only).
func (d *Decoder) number() bool {
	d.Byte('-')
	switch {
	case d.Byte('0'):
	case d.i < len(d.b) && d.b[d.i] >= '1' && d.b[d.i] <= '9':
		d.digits()
	default:
		return false
	}
	if d.Byte('.') && !d.digits() {
		return false
	}
	if d.Byte('e') || d.Byte('E') {
		if !d.Byte('+') {
			d.Byte('-')
		}
		if !d.digits() {
			return false
		}
	}
	return true
}

// digits consumes a run of digits and reports whether there was one.
func (d *Decoder) digits() bool {
	start := d.i
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	return d.i > start
}

// Bool reads true or false into a bool field.
func (d *Decoder) Bool(v *bool) bool {
	switch {
	case d.Literal("true"):
		*v = true
	case d.Literal("false"):
		*v = false
	default:
		return false
	}
	return true
}

// Member reads the value of the member name of a record into v and
// returns the member's number in the record (below 64), or -1 for a name
// the record does not have or a value refused.
type Member[T any] func(d *Decoder, v *T, name []byte) int

// Field is a Member's result: n when its value was read, else -1.
func Field(n int, ok bool) int {
	if ok {
		return n
	}
	return -1
}

// Object reads an object into v, member by member. A member given twice
// is refused: encoding/json keeps the last of a repeated member (and
// merges objects), which nothing encoding/json writes asks for.
func Object[T any](d *Decoder, v *T, member Member[T]) bool {
	return object(d, v, member, nil, false)
}

// Unknown is what a Member returns for a name its record does not have,
// leaving the value unread: Object refuses the record, ObjectOf steps
// over the member.
const Unknown = -2

// ObjectOf is Object for JSON that may carry members the record does not
// keep (a format read by a Go view of part of it): each is stepped over
// (Skip), as encoding/json steps over it, unless its name is one of names
// (the record's own member names) up to case, which encoding/json would
// put in that field.
func ObjectOf[T any](d *Decoder, v *T, member Member[T], names []string) bool {
	return object(d, v, member, names, true)
}

func object[T any](d *Decoder, v *T, member Member[T], names []string, skipping bool) bool {
	var seen uint64
	for more := d.Open(); more; more = d.Next() {
		k, ok := d.Key()
		if !ok {
			return false
		}
		n := member(d, v, k)
		if n == Unknown && skipping {
			if foldsToOneOf(k, names) || !d.Skip() {
				return false
			}
			continue
		}
		if n < 0 || seen&(1<<n) != 0 {
			return false
		}
		seen |= 1 << n
	}
	return !d.bad
}

// foldsToOneOf reports whether the ASCII name k equals one of names up to
// ASCII case (Key refuses any other name).
func foldsToOneOf(k []byte, names []string) bool {
	for _, name := range names {
		if len(name) != len(k) {
			continue
		}
		same := true
		for i := range len(k) {
			if lower(k[i]) != lower(name[i]) {
				same = false
				break
			}
		}
		if same {
			return true
		}
	}
	return false
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// RecordOf is Record of ObjectOf.
func RecordOf[T any](d *Decoder, v **T, member Member[T], names []string) bool {
	if d.Literal("null") {
		*v = nil
		return true
	}
	*v = new(T)
	return ObjectOf(d, *v, member, names)
}

// RecordsOf is Records of ObjectOf.
func RecordsOf[T any](d *Decoder, v *[]T, member Member[T], names []string) bool {
	return RecordsOfCap(d, v, member, names, 0)
}

// RecordsOfCap is RecordsOf into a slice made for n records (an estimate:
// more are appended, fewer leave room unused).
func RecordsOfCap[T any](d *Decoder, v *[]T, member Member[T], names []string, n int) bool {
	return arrayCap(d, v, func(d *Decoder, t *T) bool { return ObjectOf(d, t, member, names) }, n)
}

// maxSkip bounds the nesting Skip steps into; deeper values are left to
// encoding/json (which has its own bound).
const maxSkip = 64

// Skip steps over one value, validated as encoding/json validates a
// member it does not decode: strings' escapes and control bytes, the
// grammar of numbers (not their range), nesting. Like the rest of the
// decoder it takes compact JSON only.
func (d *Decoder) Skip() bool { return d.skip(0) }

func (d *Decoder) skip(depth int) bool {
	if d.i >= len(d.b) {
		return false
	}
	switch c := d.b[d.i]; {
	case c == '"':
		return d.skipString()
	case c == '{', c == '[':
		if depth >= maxSkip {
			return false
		}
		d.i++
		closing := byte('}')
		if c == '[' {
			closing = ']'
		}
		if d.Byte(closing) {
			return true
		}
		for {
			if c == '{' && !(d.skipString() && d.Byte(':')) {
				return false
			}
			if !d.skip(depth + 1) {
				return false
			}
			if d.Byte(closing) {
				return true
			}
			if !d.Byte(',') {
				return false
			}
		}
	case c == 't':
		return d.Literal("true")
	case c == 'f':
		return d.Literal("false")
	case c == 'n':
		return d.Literal("null")
	}
	return d.number()
}

// skipString steps over a string whose opening quote is at d.i.
func (d *Decoder) skipString() bool {
	if !d.Byte('"') {
		return false
	}
	for d.i < len(d.b) {
		switch c := d.b[d.i]; {
		case c == '"':
			d.i++
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if d.i+1 >= len(d.b) {
				return false
			}
			switch d.b[d.i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				d.i += 2
			case 'u':
				if _, ok := d.hex4(d.i + 2); !ok {
					return false
				}
				d.i += 6
			default:
				return false
			}
		default:
			d.i++
		}
	}
	return false
}

// Record reads an object into a new *T; null sets it to nil, as
// encoding/json does.
func Record[T any](d *Decoder, v **T, member Member[T]) bool {
	if d.Literal("null") {
		*v = nil
		return true
	}
	*v = new(T)
	return Object(d, *v, member)
}

// Records reads an array of objects into a slice (null leaves it nil, []
// gives an empty one, as encoding/json does; a null element is refused).
func Records[T any](d *Decoder, v *[]T, member Member[T]) bool {
	return array(d, v, func(d *Decoder, t *T) bool { return Object(d, t, member) })
}

// Strings reads an array of strings as Records reads objects.
func Strings(d *Decoder, v *[]string) bool {
	return array(d, v, (*Decoder).Str)
}

func array[T any](d *Decoder, v *[]T, read func(*Decoder, *T) bool) bool {
	return arrayCap(d, v, read, 0)
}

// arrayCap is array into a slice of capacity n to begin with: a slice of
// thousands of large records grown by doubling is copied a dozen times.
func arrayCap[T any](d *Decoder, v *[]T, read func(*Decoder, *T) bool, n int) bool {
	if d.Literal("null") {
		*v = nil
		return true
	}
	if !d.Byte('[') {
		return false
	}
	s := make([]T, 0, n)
	if !d.Byte(']') {
		for {
			var zero T
			s = append(s, zero)
			if !read(d, &s[len(s)-1]) {
				return false
			}
			if d.Byte(']') {
				break
			}
			if !d.Byte(',') {
				return false
			}
		}
	}
	*v = s
	return true
}

// Uint64 reads a JSON integer into a uint64 field, as encoding/json does:
// no sign, no fraction, no exponent, at most 2^64-1.
func (d *Decoder) Uint64(v *uint64) bool {
	start := d.i
	d.digits()
	n := d.i - start
	if n == 0 || n > 1 && d.b[start] == '0' {
		return false
	}
	if d.i < len(d.b) && (d.b[d.i] == '.' || d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		return false
	}
	u, err := strconv.ParseUint(string(d.b[start:d.i]), 10, 64)
	*v = u
	return err == nil
}
