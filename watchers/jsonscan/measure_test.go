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

// The decoding copies eight bytes at a time up to an escape or a byte
// that is not ASCII: each such byte is tried at every offset in a word,
// before and after another, with any limit.
func TestAppendStringAtEveryOffset(t *testing.T) {
	atEveryOffset([]string{`\"`, `\\`, `\n`, `\/`, `\t`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, `\ude00\ud83d`,
		"é", "😀", "\xff", "\xe2\x98", "\xef\xbf\xbd", " "}, func(body string) {
		checkMeasure(t, []byte(`"`+body+`"`))
	})
}

// atEveryOffset calls check with string bodies holding each of specials
// at every offset of a 16-byte span, followed, near and far, by each of
// them or by plain bytes.
func atEveryOffset(specials []string, check func(body string)) {
	for _, a := range specials {
		for _, b := range append(specials, "") {
			for i := range 18 {
				for _, j := range []int{0, 1, 7, 8, 9} {
					check(strings.Repeat("a", i) + a + strings.Repeat("b", j) + b + strings.Repeat("c", 5))
				}
			}
		}
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

// checkMeasured holds measuredStr to str and StringLen on the literal
// that starts raw: the same end or refusal, and StringLen's counts.
func checkMeasured(t *testing.T, raw []byte) {
	t.Helper()
	if len(raw) == 0 || raw[0] != '"' {
		return
	}
	end, n, ok := measuredStr(raw, 1)
	wantEnd, wantOK := str(raw, 1)
	if ok != wantOK || ok && end != wantEnd {
		t.Fatalf("measuredStr(%q) ends at %d, %v; str at %d, %v", raw, end, ok, wantEnd, wantOK)
	}
	if !ok {
		return
	}
	nb, nr, _ := StringLen(raw[:end])
	if gb, gr := n.Of(nil); gb != nb || gr != nr {
		t.Fatalf("measuredStr(%q) = %d bytes %d runes; StringLen %d %d", raw, gb, gr, nb, nr)
	}
}

func TestMeasuredStrAtEveryOffset(t *testing.T) {
	atEveryOffset([]string{`"`, `\"`, `\\`, `\n`, `\/`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, `\ude00\ud83d`, `\u12`, `\x`,
		"\x01", "\x1f", "é", "😀", "\xff", "\xe2\x98", "\xef\xbf\xbd", " ", `\`}, func(body string) {
		checkMeasured(t, []byte(`"`+body+`"`))
		checkMeasured(t, []byte(`"`+body+`","next":1}`))
		checkMeasured(t, []byte(`"`+body))
	})
}

func FuzzMeasuredStr(f *testing.F) {
	f.Add([]byte(`"a\u00e9\ud83d\ude00\n` + "\xff" + `"`))
	f.Add([]byte(`"` + strings.Repeat("abcdefgh", 3) + `\"x",`))
	f.Fuzz(checkMeasured)
}

type measuredDoc struct {
	A, B json.RawMessage
	a, b Len
}

// TestMeasuredFillsAsRaw: a Measured member is set as Raw sets it, its
// string measured as StringLen measures it; other types are measured
// when asked.
func TestMeasuredFillsAsRaw(t *testing.T) {
	fields := NewFields(
		Measured("A", func(d *measuredDoc) *json.RawMessage { return &d.A }, func(d *measuredDoc) *Len { return &d.a }),
		Measured("B", func(d *measuredDoc) *json.RawMessage { return &d.B }, func(d *measuredDoc) *Len { return &d.b }),
	)
	for _, in := range []string{`{"A":"x\u00e9\n","B":[1,"y"]}`, `{"A":null,"B":"` + strings.Repeat("日本", 20) + `"}`, `{"B":{"A":"z"}}`} {
		var got, want measuredDoc
		if !fields.Fill(&got, []byte(in)) {
			t.Fatalf("%s: refused", in)
		}
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			got, want json.RawMessage
			n         Len
		}{{got.A, want.A, got.a}, {got.B, want.B, got.b}} {
			nb, nr, _ := StringLen(c.want)
			if string(c.got) != string(c.want) {
				t.Errorf("%s: raw %s, want %s", in, c.got, c.want)
			}
			if gb, gr := c.n.Of(c.got); gb != nb || gr != nr {
				t.Errorf("%s: %s measured %d %d, want %d %d", in, c.got, gb, gr, nb, nr)
			}
		}
	}
	if fields.Fill(&measuredDoc{}, []byte(`{"A":"bad `+"\x01"+`"}`)) {
		t.Error("an invalid string was accepted")
	}
}
