package validate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Canonical encodes a decoded JSON document the way Python's
// json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
// encodes the same document loaded with json.loads. It is written apart
// from the builder's encoder on purpose: the two check each other.
//
// doc holds what encoding/json decodes into an any, preferably with
// UseNumber so that integers and floats keep the form they had.
func Canonical(doc any) ([]byte, error) {
	var b bytes.Buffer
	if err := encode(&b, doc); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// ContentHash is the lowercase hex SHA-256 of the canonical JSON of a map
// without contentHash and without session.cliVersion. The map is not
// modified.
func ContentHash(top map[string]any) (string, error) {
	clone := make(map[string]any, len(top))
	for k, v := range top {
		clone[k] = v
	}
	delete(clone, "contentHash")
	if s, ok := top["session"].(map[string]any); ok {
		session := make(map[string]any, len(s))
		for k, v := range s {
			session[k] = v
		}
		delete(session, "cliVersion")
		clone["session"] = session
	}
	canon, err := Canonical(clone)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return hex.EncodeToString(sum[:]), nil
}

func encode(b *bytes.Buffer, v any) error {
	switch v := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(v))
	case string:
		quote(b, v)
	case json.Number:
		return writeNumber(b, string(v))
	case int:
		b.WriteString(strconv.Itoa(v))
	case int64:
		b.WriteString(strconv.FormatInt(v, 10))
	case float64:
		// Without UseNumber every number is a float64; integral values
		// were almost surely integers in the JSON.
		if v == math.Trunc(v) && math.Abs(v) < 1e16 {
			b.WriteString(strconv.FormatFloat(v, 'f', 0, 64))
			return nil
		}
		return pyFloat(b, v)
	case []any:
		b.WriteByte('[')
		for i, e := range v {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := encode(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys) // UTF-8 byte order is code point order
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			quote(b, k)
			b.WriteByte(':')
			if err := encode(b, v[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	default:
		return fmt.Errorf("canonical json: unsupported type %T", v)
	}
	return nil
}

// writeNumber writes a JSON number token as Python reads and writes it back: a
// token without '.', 'e' or 'E' is an int, anything else a float.
func writeNumber(b *bytes.Buffer, tok string) error {
	if !strings.ContainsAny(tok, ".eE") {
		n, ok := new(big.Int).SetString(tok, 10)
		if !ok {
			return fmt.Errorf("canonical json: bad integer token of %d bytes", len(tok))
		}
		b.WriteString(n.String())
		return nil
	}
	f, err := strconv.ParseFloat(tok, 64)
	if err != nil && !math.IsInf(f, 0) {
		return fmt.Errorf("canonical json: bad number token of %d bytes", len(tok))
	}
	return pyFloat(b, f)
}

// pyFloat writes Python's repr of a float: the shortest digits that read
// back to the same value, positional when the decimal exponent is in
// [-4, 16), scientific otherwise ("1e-05", "1e+16", "1.5e+20").
func pyFloat(b *bytes.Buffer, f float64) error {
	switch {
	case math.IsInf(f, 1):
		b.WriteString("Infinity")
		return nil
	case math.IsInf(f, -1):
		b.WriteString("-Infinity")
		return nil
	case math.IsNaN(f):
		b.WriteString("NaN")
		return nil
	}
	if f == 0 {
		if math.Signbit(f) {
			b.WriteString("-0.0")
		} else {
			b.WriteString("0.0")
		}
		return nil
	}
	e := strconv.FormatFloat(f, 'e', -1, 64) // -d.ddde±XX
	neg := e[0] == '-'
	if neg {
		e = e[1:]
	}
	mant, expStr, _ := strings.Cut(e, "e")
	digits := strings.Replace(mant, ".", "", 1)
	exp, err := strconv.Atoi(expStr)
	if err != nil {
		return fmt.Errorf("canonical json: float exponent: %w", err)
	}
	decpt := exp + 1 // digits d1d2… stand for 0.d1d2… × 10^decpt
	if neg {
		b.WriteByte('-')
	}
	switch {
	case decpt > -4 && decpt <= 16:
		switch {
		case decpt <= 0:
			b.WriteString("0.")
			b.WriteString(strings.Repeat("0", -decpt))
			b.WriteString(digits)
		case decpt >= len(digits):
			b.WriteString(digits)
			b.WriteString(strings.Repeat("0", decpt-len(digits)))
			b.WriteString(".0")
		default:
			b.WriteString(digits[:decpt])
			b.WriteByte('.')
			b.WriteString(digits[decpt:])
		}
	default:
		b.WriteString(digits[:1])
		if len(digits) > 1 {
			b.WriteByte('.')
			b.WriteString(digits[1:])
		}
		b.WriteByte('e')
		if exp < 0 {
			b.WriteByte('-')
			exp = -exp
		} else {
			b.WriteByte('+')
		}
		if exp < 10 {
			b.WriteByte('0')
		}
		b.WriteString(strconv.Itoa(exp))
	}
	return nil
}

// quote writes a string as Python's json.dumps with ensure_ascii=False:
// only '"', '\\' and control characters are escaped.
func quote(b *bytes.Buffer, s string) {
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			fmt.Fprintf(b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
}

// contentHash recomputes contentHash and compares it with the stored one.
func (c *checker) contentHash(top map[string]any) {
	raw, present := top["contentHash"]
	if !present {
		c.add("", RuleContentHash, "the map has no contentHash")
		return
	}
	stored, ok := str(raw)
	if !ok {
		return // the schema reports the type
	}
	got, err := ContentHash(top)
	if err != nil {
		c.add(ptr("contentHash"), RuleContentHash, "cannot be recomputed: %v", err)
		return
	}
	if got != stored {
		c.add(ptr("contentHash"), RuleContentHash, "does not match the content (recomputed %s)", got)
	}
}
