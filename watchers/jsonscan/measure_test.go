package jsonscan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// checkMeasure: on a valid literal, StringLen is the length of what
// encoding/json decodes, and AppendString with any limit appends an exact
// prefix of it, at least limit bytes long unless complete.
func checkMeasure(t *testing.T, raw []byte) {
	var want string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &want) != nil || !bytes.Equal(bytes.TrimSpace(raw), raw) {
		return
	}
	if n, _, ok := StringLen(raw); !ok || n != len(want) {
		t.Errorf("StringLen(%q) = %d, %v; encoding/json decodes %d bytes", raw, n, ok, len(want))
	}
	if n, ok := StringRunes(raw); !ok || n != utf8.RuneCountInString(want) {
		t.Errorf("StringRunes(%q) = %d, %v; encoding/json decodes %d runes", raw, n, ok, utf8.RuneCountInString(want))
	}
	whole, complete := AppendString([]byte("pre"), raw, -1)
	if !complete || string(whole) != "pre"+want {
		t.Errorf("AppendString(%q) = %q, %v; want %q", raw, whole, complete, "pre"+want)
	}
	for limit := 0; limit <= len(want)+1; limit++ {
		got, complete := AppendString(nil, raw, limit)
		switch {
		case !strings.HasPrefix(want, string(got)):
			t.Errorf("AppendString(%q, %d) = %q: not a prefix of %q", raw, limit, got, want)
		case complete != (len(got) == len(want)):
			t.Errorf("AppendString(%q, %d) = %q, complete %v", raw, limit, got, complete)
		case !complete && len(got) < limit:
			t.Errorf("AppendString(%q, %d) = %q: shorter than the limit", raw, limit, got)
		}
	}
}

var measureCases = []string{
	`""`, `"plain"`, `"` + strings.Repeat("abcdefgh", 9) + `\n` + strings.Repeat("x", 17) + `"`,
	`"caf` + "\xc3\xa9" + `"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u4e2d"`, `"\ud83d\ude00"`,
	`"\ud83d"`, `"\ude00x"`, `"\ud83d\ud83d\ude00"`, `"\ud83dx\u0041"`, "\"\xff\xfe\x80\"", "\"\xed\xa0\x80\"",
	"\"12345678\xef\xbf\xbd\xf0\x9f\x98\x80\"", `"\u0000"`, `"Exit code: 0\nWall time: 1.5 seconds\nOutput:\n` + strings.Repeat("é", 40) + `"`,
}

func TestMeasureAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range measureCases {
		checkMeasure(t, []byte(c))
	}
}

func TestMeasureRefusesWhatIsNotALiteral(t *testing.T) {
	for _, c := range []string{``, `"`, `x`, `"abc`, `abc"`, `"\"`, `"\u12"`, `"\uzzzz"`, `"\q"`} {
		if _, _, ok := StringLen([]byte(c)); ok {
			t.Errorf("StringLen(%q) accepted it", c)
		}
		if _, ok := StringRunes([]byte(c)); ok {
			t.Errorf("StringRunes(%q) accepted it", c)
		}
		if _, complete := AppendString(nil, []byte(c), -1); complete {
			t.Errorf("AppendString(%q) accepted it", c)
		}
	}
}

func FuzzMeasure(f *testing.F) {
	for _, c := range measureCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkMeasure(t, raw)
		checkMeasure(t, append(append([]byte{'"'}, raw...), '"'))
		// Whatever the input, neither may fault.
		_, _, _ = StringLen(raw)
		_, _ = StringRunes(raw)
		_, _ = AppendString(nil, raw, 3)
	})
}
