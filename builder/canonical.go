package builder

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/agentmap/agentmap/internal/swar"
)

// CanonicalJSON encodes v the way Python's
// json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
// does, so that independent producers hash the same bytes.
//
// Numbers follow the JSON value they stand for: a json.Number keeps Python's
// reading of its token (no '.', 'e' or 'E' is an int, anything else a float
// written as Python's repr), and a float64 with an integral value below 1e16
// is written as an integer because that is what it was in the JSON it was
// decoded from (encoding/json turns every number into float64). Values of
// other types (structs, typed slices and maps) go through encoding/json first.
func CanonicalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := writeCanonical(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func writeCanonical(buf *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		if x {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case string:
		writeString(buf, x)
	case int:
		buf.WriteString(strconv.FormatInt(int64(x), 10))
	case int64:
		buf.WriteString(strconv.FormatInt(x, 10))
	case int32:
		buf.WriteString(strconv.FormatInt(int64(x), 10))
	case uint64:
		buf.WriteString(strconv.FormatUint(x, 10))
	case uint32:
		buf.WriteString(strconv.FormatUint(uint64(x), 10))
	case float64:
		return writeFloatValue(buf, x)
	case float32:
		return writeFloatValue(buf, float64(x))
	case json.Number:
		return writeNumber(buf, x)
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := writeCanonical(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case []string:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, e)
		}
		buf.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		// Byte order of valid UTF-8 is code point order, which is what
		// Python's sort_keys uses.
		sort.Strings(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			writeString(buf, k)
			buf.WriteByte(':')
			if err := writeCanonical(buf, x[k]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	default:
		generic, err := toGeneric(v)
		if err != nil {
			return err
		}
		return writeCanonical(buf, generic)
	}
	return nil
}

// toGeneric turns any encodable value into maps, slices and json.Numbers.
func toGeneric(v any) (any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("canonical json: %w", err)
	}
	return out, nil
}

// writeFloatValue writes a float64 decoded from JSON: see appendFloatValue.
func writeFloatValue(buf *bytes.Buffer, f float64) error {
	b, err := appendFloatValue(buf.AvailableBuffer(), f)
	buf.Write(b)
	return err
}

// appendFloatValue appends a float64 decoded from JSON: integral values were
// integers in the JSON text (our producer never writes "2.0").
func appendFloatValue(dst []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return dst, fmt.Errorf("canonical json: non-finite number")
	}
	if f == math.Trunc(f) && math.Abs(f) < 1e16 {
		return strconv.AppendInt(dst, int64(f), 10), nil
	}
	return appendPythonFloat(dst, f), nil
}

func writeNumber(buf *bytes.Buffer, n json.Number) error {
	s := string(n)
	if strings.ContainsAny(s, ".eE") {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(f, 0) {
			return fmt.Errorf("canonical json: bad number")
		}
		buf.WriteString(pythonFloat(f))
		return nil
	}
	var i big.Int
	if _, ok := i.SetString(s, 10); !ok {
		return fmt.Errorf("canonical json: bad number")
	}
	buf.WriteString(i.String())
	return nil
}

// pythonFloat formats f as Python's repr: see appendPythonFloat.
func pythonFloat(f float64) string { return string(appendPythonFloat(nil, f)) }

// appendPythonFloat appends f as Python's repr: the shortest digits that
// round-trip, positional notation for decimal exponents -5 < x < 16 (always
// with a fractional part), scientific otherwise with a signed exponent of at
// least two digits ("1e-05", "1.5e+16"). Costs are floats on every request,
// so it allocates nothing beyond dst.
func appendPythonFloat(dst []byte, f float64) []byte {
	if f == 0 {
		if math.Signbit(f) {
			return append(dst, "-0.0"...)
		}
		return append(dst, "0.0"...)
	}
	var tmp [32]byte
	s := strconv.AppendFloat(tmp[:0], f, 'e', -1, 64) // -d.ddde±XX
	if s[0] == '-' {
		dst = append(dst, '-')
		s = s[1:]
	}
	epos := bytes.IndexByte(s, 'e')
	mant, expStr := s[:epos], s[epos+1:]
	exp := 0
	for _, c := range expStr[1:] {
		exp = exp*10 + int(c-'0')
	}
	if expStr[0] == '-' {
		exp = -exp
	}
	// The digits without the point: the first, then those after '.'.
	var digitBuf [24]byte
	digits := append(digitBuf[:0], mant[0])
	if len(mant) > 2 {
		digits = append(digits, mant[2:]...)
	}
	if exp < -4 || exp >= 16 {
		dst = append(dst, digits[0])
		if len(digits) > 1 {
			dst = append(dst, '.')
			dst = append(dst, digits[1:]...)
		}
		dst = append(dst, 'e')
		if exp < 0 {
			dst = append(dst, '-')
			exp = -exp
		} else {
			dst = append(dst, '+')
		}
		if exp < 10 {
			dst = append(dst, '0')
		}
		return strconv.AppendInt(dst, int64(exp), 10)
	}
	if exp < 0 {
		dst = append(dst, "0."...)
		for range -exp - 1 {
			dst = append(dst, '0')
		}
		return append(dst, digits...)
	}
	intLen := exp + 1
	if len(digits) <= intLen {
		dst = append(dst, digits...)
		for range intLen - len(digits) {
			dst = append(dst, '0')
		}
		return append(dst, ".0"...)
	}
	dst = append(dst, digits[:intLen]...)
	dst = append(dst, '.')
	return append(dst, digits[intLen:]...)
}

const hexDigits = "0123456789abcdef"

// writeString escapes like Python's json with ensure_ascii=False: see
// appendString.
func writeString(buf *bytes.Buffer, s string) {
	buf.Write(appendString(buf.AvailableBuffer(), s))
}

// appendString appends s as a JSON string, escaped like Python's json with
// ensure_ascii=False: quote, backslash and C0 controls only (\u2028 and DEL
// stay raw). Invalid UTF-8 becomes U+FFFD, as Python could not hold it in a
// str.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := plainRun(s); i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"':
				dst = append(dst, `\"`...)
			case '\\':
				dst = append(dst, `\\`...)
			case '\n':
				dst = append(dst, `\n`...)
			case '\r':
				dst = append(dst, `\r`...)
			case '\t':
				dst = append(dst, `\t`...)
			case '\b':
				dst = append(dst, `\b`...)
			case '\f':
				dst = append(dst, `\f`...)
			default:
				dst = append(dst, `\u00`...)
				dst = append(dst, hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\uFFFD"...)
			i++
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// plainRun returns the length of a prefix of s that appendString copies as
// it is, eight bytes at a time (swar.Run).
func plainRun(s string) int { return swar.Run(s, plainWord) }

// plainWord reports whether appendString copies each of the eight bytes
// of w as it is.
func plainWord(w uint64) bool {
	return swar.Below(w, 0x20)|w&swar.Highs|swar.Zero(w^'"'*swar.Ones)|swar.Zero(w^'\\'*swar.Ones) == 0
}
