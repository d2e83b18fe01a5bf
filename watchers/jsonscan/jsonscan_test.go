package jsonscan

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// validCases are values encoding/json accepts; the walk must accept each.
var validCases = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e+10`, `-12.25E-3`, `true`, `false`, `null`,
	` {"a" : [1, {"b": null}, "c\"\\\/\b\f\n\r\t\u00e9\uD83D\uDE00"] } `,
	`{"long":"` + strings.Repeat("abcdefgh", 100) + `"}`,
	"\"\xff\xfe invalid UTF-8 is accepted\"",
	`{"k\u00e9y": {"caf` + "\xc3\xa9" + `": 1}}`, // escaped and non-ASCII keys inside a value
}

// invalidCases are refused by encoding/json; the walk must refuse each.
var invalidCases = []string{
	``, ` `, `{`, `}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `[1,]`, `[1 2]`, `{"a":1 "b":2}`,
	`01`, `1.`, `.5`, `1e`, `-`, `+1`, `tru`, `nul`, `True`, `"abc`, `"\x"`, `"\u12"`, `"\u12g4"`,
	"\"a\x01b\"", "\"tab\there\"", `{"a":1}}`, `{"a":1} 2`, `[`, `"` + strings.Repeat("a", 20) + "\x1f" + `"`,
	`{'a':1}`, `{"a":NaN}`,
}

func TestValidAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range validCases {
		if !json.Valid([]byte(c)) {
			t.Fatalf("test case %q is not valid JSON", c)
		}
		if !Valid([]byte(c)) {
			t.Errorf("Valid(%q) = false", c)
		}
	}
	for _, c := range invalidCases {
		if json.Valid([]byte(c)) {
			t.Fatalf("test case %q is valid JSON", c)
		}
		if Valid([]byte(c)) {
			t.Errorf("Valid(%q) = true", c)
		}
	}
}

func TestObjectHandsOutMembers(t *testing.T) {
	var got []string
	ok := Object([]byte(` {"a": [1, 2], "b":{"c":"d"} ,"e":"x\"y"} `), func(k, v []byte) bool {
		got = append(got, string(k)+"="+string(v))
		return true
	})
	want := `a=[1, 2] b={"c":"d"} e="x\"y"`
	if !ok || strings.Join(got, " ") != want {
		t.Fatalf("got %v %q, want %q", ok, got, want)
	}
	if Object([]byte(`{"a\u0062":1}`), func(k, v []byte) bool { return true }) {
		t.Error("a walked key with an escape was accepted")
	}
	if Object([]byte(`{"a":1,"b":2}`), func(k, v []byte) bool { return string(k) != "b" }) {
		t.Error("Object went on after fn returned false")
	}
	if Object([]byte(`[1]`), nil) || Array([]byte(`{}`), nil) {
		t.Error("a value of the other kind was accepted")
	}
	var elems []string
	if !Array([]byte(`[ 1 ,"a",{"b":[]}, null]`), func(e []byte) bool { elems = append(elems, string(e)); return true }) ||
		strings.Join(elems, "|") != `1|"a"|{"b":[]}|null` {
		t.Errorf("Array gave %q", elems)
	}
}

func TestDeepNestingIsRefused(t *testing.T) {
	deep := strings.Repeat("[", maxDepth+1) + strings.Repeat("]", maxDepth+1)
	if Valid([]byte(deep)) {
		t.Error("nesting past the limit was walked")
	}
	ok := strings.Repeat("[", maxDepth-1) + strings.Repeat("]", maxDepth-1)
	if !Valid([]byte(ok)) {
		t.Error("nesting within the limit was refused")
	}
}

func TestKeysIndex(t *testing.T) {
	k := NewKeys("type", "sessionId")
	for _, c := range []struct {
		key   string
		i     int
		folds bool
	}{{"type", 0, false}, {"sessionId", 1, false}, {"TYPE", -1, true}, {"sessionid", -1, true}, {"other", -1, false}, {strings.Repeat("x", 80), -1, false}} {
		if i, folds := k.Index([]byte(c.key)); i != c.i || folds != c.folds {
			t.Errorf("Index(%q) = %d, %v; want %d, %v", c.key, i, folds, c.i, c.folds)
		}
	}
}

// TestKeysIndexAgreesWithFolding holds the table to its definition over
// many names, some equal up to case, and keys that are, are not, or are
// up to case one of them.
func TestKeysIndexAgreesWithFolding(t *testing.T) {
	var names []string
	for i := range 60 {
		names = append(names, fmt.Sprintf("name%dField", i))
	}
	names = append(names, "isError", "iserror", "a", "A_b", "x-y")
	k := NewKeys(names...)
	keys := append([]string{"", "ISERROR", "IsError", "a_B", "X-Y", "b", "name1field", "NAME59FIELD", "name60Field"}, names...)
	for _, key := range keys {
		wantI, wantFolds := -1, false
		for i, n := range names {
			if n == key {
				wantI = i
			}
		}
		if wantI < 0 {
			for _, n := range names {
				wantFolds = wantFolds || strings.EqualFold(n, key)
			}
		}
		if i, folds := k.Index([]byte(key)); i != wantI || folds != wantFolds {
			t.Errorf("Index(%q) = %d, %v; want %d, %v", key, i, folds, wantI, wantFolds)
		}
	}
}

// FuzzValid holds the walk to encoding/json: whatever it accepts,
// encoding/json accepts.
func FuzzValid(f *testing.F) {
	for _, c := range append(validCases, invalidCases...) {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if Valid(b) && !json.Valid(b) {
			t.Fatalf("walk accepted invalid JSON %q", b)
		}
		var viaObject, viaValid []string
		collect := func(to *[]string) func(k, v []byte) bool {
			return func(k, v []byte) bool { *to = append(*to, string(k)+"="+string(v)); return Valid(v) }
		}
		ok := Object(b, collect(&viaObject))
		if ok && !json.Valid(b) {
			t.Fatalf("Object accepted invalid JSON %q", b)
		}
		// On arbitrary bytes the walk that trusts its input must not
		// fail in any other way than by giving up; on valid ones it
		// gives what the validating walk gives.
		okValid := ObjectValid(b, collect(&viaValid))
		ArrayValid(b, func(e []byte) bool { return len(e) > 0 })
		if ok && (!okValid || strings.Join(viaObject, "\x00") != strings.Join(viaValid, "\x00")) {
			t.Fatalf("ObjectValid differs from Object on %q: %q, %q", b, viaObject, viaValid)
		}
	})
}

func BenchmarkValid(b *testing.B) {
	doc := []byte(`{"type":"user","message":{"content":[{"type":"tool_result","content":"` +
		strings.Repeat(`line of output with \"quotes\" and text\n`, 2000) + `"}]}}`)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if !Valid(doc) {
			b.Fatal("invalid")
		}
	}
}

func BenchmarkValidEncodingJSON(b *testing.B) {
	doc := []byte(`{"type":"user","message":{"content":[{"type":"tool_result","content":"` +
		strings.Repeat(`line of output with \"quotes\" and text\n`, 2000) + `"}]}}`)
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		if !json.Valid(doc) {
			b.Fatal("invalid")
		}
	}
}

var stringCases = []string{
	`""`, `"plain"`, ` "spaced" `, "\t\"x\"\n", `"x" y`, `"caf` + "\xc3\xa9" + `"`, `"a\"b\\c\/d\b\f\n\r\t"`, `"\u00e9\u4e2d"`, `"\ud83d\ude00"`,
	`"\ud83d"`, `"\ude00x"`, `"\ud83d\ud83d\ude00"`, `"\ud83dx\u0041"`, "\"\xff\xfe\x80\"", "\"\xed\xa0\x80\"",
	`"\u0000"`, `"abc`, `"a"b"`, `"\x"`, "\"\x01\"", `5`, `"\ud83d\u00`,
}

func TestStringAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range stringCases {
		checkString(t, []byte(c))
	}
}

func checkString(t *testing.T, raw []byte) {
	var want string
	trimmed := bytes.TrimLeft(raw, " \t\r\n")
	wantOK := json.Unmarshal(raw, &want) == nil && len(trimmed) > 0 && trimmed[0] == '"'
	got, ok := String(raw)
	if ok != wantOK || got != want {
		t.Errorf("String(%q) = %q, %v; encoding/json gives %q, %v", raw, got, ok, want, wantOK)
	}
	if b, ok := Unquote(raw); ok != wantOK || string(b) != want {
		t.Errorf("Unquote(%q) = %q, %v; encoding/json gives %q, %v", raw, b, ok, want, wantOK)
	}
	if json.Valid(raw) {
		// ValidString, which trusts its input, gives the same on
		// every valid value (on other types "", false).
		if got, ok := ValidString(raw); ok != wantOK || got != want {
			t.Errorf("ValidString(%q) = %q, %v; encoding/json gives %q, %v", raw, got, ok, want, wantOK)
		}
	} else {
		ValidString(raw) // anything, but no panic
	}
}

func FuzzString(f *testing.F) {
	for _, c := range stringCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkString(t, raw)
		quoted := append(append([]byte{'"'}, raw...), '"')
		checkString(t, quoted)
	})
}

type testInner struct {
	A json.RawMessage `json:"a"`
}

type testOuter struct {
	P *testInner `json:"p"`
	S string     `json:"s"`
}

var innerFields = NewFields(Field[testInner]{Name: "a", Set: Raw(func(t *testInner) *json.RawMessage { return &t.A })})

var outerFields = NewFields(
	Pointer("p", func(t *testOuter) **testInner { return &t.P }, innerFields),
	Field[testOuter]{Name: "s", Set: Text(func(t *testOuter) *string { return &t.S })},
)

// TestFillValidatesAsItWalks: a line is validated in the same pass that
// fills the struct, members walked in place included.
func TestFillValidatesAsItWalks(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{`{"p":{"a":[1,"x"]},"s":"y\n","z":{"q":null}}`, true},
		{`{"p":null,"s":5}`, true},
		{`{"p":{"a":[1,"x"],"b":tru},"s":"y"}`, false},
		{`{"p":{"a":1},"s":"y","z":[1,]}`, false},
		{`{"p":{"a":1}} {}`, false},
		{`{"p":{"a":1}`, false},
		{`{"p":`, false},
		{`{"p":"str"}`, false}, // encoding/json would keep an empty inner
		{`{"p":{"a":1,"a":2}}`, false},
		{`{"p":{"A":1}}`, false},
	} {
		var got testOuter
		ok := outerFields.Fill(&got, []byte(c.in))
		if ok != c.ok {
			t.Errorf("Fill(%q) = %v, want %v", c.in, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		var want testOuter
		err := json.Unmarshal([]byte(c.in), &want)
		var te *json.UnmarshalTypeError
		if err != nil && !errors.As(err, &te) {
			t.Fatalf("test case %q: %v", c.in, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Fill(%q) = %+v, encoding/json gives %+v", c.in, got, want)
		}
	}
}

func TestStringLenAgreesWithEncodingJSON(t *testing.T) {
	long := strings.Repeat("plain ascii text, ", 40)
	raws := []string{`""`, `"\u00e9"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ude00\ud83d"`, `"\ud83d\u0041"`,
		"\"\xff\"", `"\/"`, `  "padded"  `, `"` + long + `\n` + long + `"`, "\"" + long + "\xe2\x98" + long + "\"",
		`"` + strings.Repeat(`\\`, 9) + `"`, `"` + long + `\u2028` + "日本語" + `"`}
	for _, s := range []string{"", "plain", "tab\tnew\nline \"quoted\" back\\slash", "snow ☃ man",
		"emoji 😀 pair", "ctrl \x01 char", "日本語テキスト", "mixed é and \u2028 separator", long + "é" + long} {
		raw, _ := json.Marshal(s)
		raws = append(raws, string(raw))
	}
	for _, raw := range raws {
		var s string
		if err := json.Unmarshal([]byte(raw), &s); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		n, r, ok := StringLen([]byte(raw))
		if !ok || n != len(s) || r != utf8.RuneCountInString(s) {
			t.Errorf("%.40s: got %d bytes %d runes ok=%v, want %d %d", raw, n, r, ok, len(s), utf8.RuneCountInString(s))
		}
	}
	for _, raw := range []string{``, `"`, `123`, `{"a":1}`, `"bad \u12"`, `"trailing \"`, `null`} {
		if _, _, ok := StringLen([]byte(raw)); ok {
			t.Errorf("%s: accepted as a string", raw)
		}
	}
}

// FuzzStringLen holds StringLen to encoding/json on any valid string.
func FuzzStringLen(f *testing.F) {
	f.Add([]byte(`"a\u00e9\ud83d\ude00\n` + "\xff" + `"`))
	f.Add([]byte(`"` + strings.Repeat("abcdefgh", 3) + `\"x"`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		var s string
		if json.Unmarshal(raw, &s) != nil || bytes.TrimSpace(raw)[0] != '"' {
			return
		}
		n, r, ok := StringLen(raw)
		if !ok || n != len(s) || r != utf8.RuneCountInString(s) {
			t.Fatalf("%q: got %d bytes %d runes ok=%v, want %d %d", raw, n, r, ok, len(s), utf8.RuneCountInString(s))
		}
	})
}

func TestAppendObjectsAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range []struct {
		in string
		ok bool
	}{
		{`[]`, true},
		{`[null, {"a": [1]}, {}, {"a": "x", "b": {"c": 2}}]`, true},
		{`[{"a": 1}, 2]`, false},
		{`[{"a": 1}, "x"]`, false},
		{`[{"a": 1, "a": 2}]`, false},
		{`[{"A": 1}]`, false},
	} {
		got, ok := AppendObjects([]testInner{{A: json.RawMessage(`0`)}}, []byte(c.in), innerFields)
		if ok != c.ok {
			t.Errorf("AppendObjects(%q) = %v, want %v", c.in, ok, c.ok)
			continue
		}
		if !ok {
			continue
		}
		var want []testInner
		if err := json.Unmarshal([]byte(c.in), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got[1:], want) && !(len(want) == 0 && len(got) == 1) {
			t.Errorf("AppendObjects(%q) = %+v, encoding/json gives %+v", c.in, got[1:], want)
		}
		if string(got[0].A) != "0" {
			t.Errorf("AppendObjects(%q) changed what dst held", c.in)
		}
	}
}

func TestMemberNames(t *testing.T) {
	type s struct {
		A     int `json:"a,omitempty"`
		B     int
		C     int `json:"-"`
		d     int
		Inner testInner `json:"inner"`
	}
	_ = s{}.d
	if got := strings.Join(MemberNames(reflect.TypeFor[s]()), " "); got != "a B inner" {
		t.Errorf("MemberNames = %q", got)
	}
}

func TestWordsAgreeWithString(t *testing.T) {
	w := NewWords("text", "tool_use", "é")
	for _, raw := range append([]string{`"text"`, `"te\u0078t"`, `"tool_use"`, `"other"`, `"\u00e9"`, `"é"`, "\"\xff\"", `5`, `null`, `"text`}, stringCases...) {
		got, ok := w.String([]byte(raw))
		want, wantOK := String([]byte(raw))
		if got != want || ok != wantOK {
			t.Errorf("Words.String(%s) = %q, %v; String gives %q, %v", raw, got, ok, want, wantOK)
		}
	}
	if testing.AllocsPerRun(10, func() { w.String([]byte(`"tool_use"`)) }) != 0 {
		t.Error("a word was allocated")
	}
}

// TestSpecialBytesAtEveryOffset puts each kind of byte that stops the
// eight-at-a-time loops (a quote, an escape, a control byte, non-ASCII,
// invalid UTF-8) at every offset of the first words of a string, alone
// and after another, and holds Valid, String and StringLen to
// encoding/json.
func TestSpecialBytesAtEveryOffset(t *testing.T) {
	specials := []string{`"`, `\"`, `\\`, `\n`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, "\x01", "\x1f", "é", "😀", "\xff", "\xe2\x98", " "}
	for _, a := range specials {
		for _, b := range append(specials, "") {
			for i := range 18 {
				for _, j := range []int{0, 1, 7, 8, 9} {
					body := strings.Repeat("a", i) + a + strings.Repeat("b", j) + b + strings.Repeat("c", 5)
					raw := []byte(`"` + body + `"`)
					checkString(t, raw)
					if Valid(raw) != json.Valid(raw) {
						t.Fatalf("Valid(%q) = %v", raw, Valid(raw))
					}
					var s string
					if json.Unmarshal(raw, &s) == nil {
						n, r, ok := StringLen(raw)
						if !ok || n != len(s) || r != utf8.RuneCountInString(s) {
							t.Fatalf("StringLen(%q) = %d, %d, %v; want %d, %d", raw, n, r, ok, len(s), utf8.RuneCountInString(s))
						}
					}
				}
			}
		}
	}
}

type testList struct {
	L     []testInner `json:"l"`
	Other string      `json:"-"`
}

var listFields = NewFields(Elements("l", func(t *testList) *[]testInner { return &t.L }, innerFields, func(t *testList, v []byte) bool {
	t.Other = string(v)
	return v[0] != '{'
}))

// TestElementsWalksInPlace: an array of objects is validated and read in
// the one pass, as encoding/json decodes it; other values go to other.
func TestElementsWalksInPlace(t *testing.T) {
	for _, c := range []struct {
		in, other string
		ok        bool
	}{
		{`{"l":[]}`, "", true},
		{`{"l":[null, {"a": [1]}, {}, {"a": "x", "b": {"c": 2}}]}`, "", true},
		{`{"l":"text"}`, `"text"`, true},
		{`{"l":null}`, `null`, true},
		{`{"l":5}`, `5`, true},
		{`{"l":{"a":1}}`, `{"a":1}`, false},
		{`{"l":[{"a": 1}, 2]}`, "", false},
		{`{"l":[{"a": 1, "a": 2}]}`, "", false},
		{`{"l":[{"A": 1}]}`, "", false},
		{`{"l":[{"a": tru}]}`, "", false},
		{`{"l":[{"b": "` + "\x01" + `"}]}`, "", false},
		{`{"l":[{"a": 1},]}`, "", false},
		{`{"l":[{"a": 1}`, "", false},
		{`{"l":[{"a": 1}] }`, "", true},
	} {
		var got testList
		ok := listFields.Fill(&got, []byte(c.in))
		if ok != c.ok || got.Other != c.other {
			t.Errorf("Fill(%q) = %v, other %q; want %v, %q", c.in, ok, got.Other, c.ok, c.other)
			continue
		}
		if !ok || c.other != "" {
			continue
		}
		var want testList
		if err := json.Unmarshal([]byte(c.in), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Fill(%q) = %+v, encoding/json gives %+v", c.in, got, want)
		}
	}
}

type testEither struct {
	P    *testInner
	Text string
}

var eitherFields = NewFields(PointerOr("p", func(t *testEither) **testInner { return &t.P }, innerFields, func(t *testEither, v []byte) bool {
	t.Text = string(v)
	return v[0] != '['
}))

func TestPointerOrHandsOverOtherTypes(t *testing.T) {
	for _, c := range []struct {
		in, text string
		inner    string
		ok       bool
	}{
		{`{"p":{"a":[1]}}`, "", "[1]", true},
		{`{"p":"x\n"}`, `"x\n"`, "", true},
		{`{"p":null}`, "null", "", true},
		{`{"p":[1]}`, "[1]", "", false},
		{`{"p":"x` + "\x01" + `"}`, "", "", false},
		{`{"p":{"a":1,"a":2}}`, "", "", false},
	} {
		var got testEither
		ok := eitherFields.Fill(&got, []byte(c.in))
		inner := ""
		if got.P != nil {
			inner = string(got.P.A)
		}
		if ok != c.ok || ok && (got.Text != c.text || inner != c.inner) {
			t.Errorf("Fill(%q) = %v, %q, %q; want %v, %q, %q", c.in, ok, got.Text, inner, c.ok, c.text, c.inner)
		}
	}
}

// TestElementsInReusesItsBuffer: elements read into a reused array hold
// what each walk read, nothing of an earlier one.
func TestElementsInReusesItsBuffer(t *testing.T) {
	buf := make([]testInner, 0, 4)
	f := NewFields(ElementsIn("l", func(t *testList) *[]testInner { return &t.L },
		func(*testList) []testInner { return buf }, innerFields, func(*testList, []byte) bool { return true }))
	for _, in := range []string{`{"l":[{"a":1},{"a":2},{"a":3}]}`, `{"l":[{},null]}`, `{"l":[{"a":4},{"a":5},{"a":6},{"a":7},{"a":8}]}`} {
		var got, want testList
		if !f.Fill(&got, []byte(in)) {
			t.Fatalf("Fill(%s) gave up", in)
		}
		if err := json.Unmarshal([]byte(in), &want); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.L, want.L) {
			t.Errorf("Fill(%s) = %+v, want %+v", in, got.L, want.L)
		}
		if len(got.L) <= cap(buf) && &got.L[0] != &buf[:1][0] {
			t.Errorf("Fill(%s) did not use the buffer", in)
		}
	}
}

// TestPlainKeyAtEveryOffset holds the word-at-a-time key scan to a scan
// byte by byte: the same end, or the same refusal, whatever special or
// non-ASCII byte ends the key and wherever it stands.
func TestPlainKeyAtEveryOffset(t *testing.T) {
	byteByByte := func(b []byte, i int) (int, bool) {
		for ; i < len(b); i++ {
			switch c := b[i]; {
			case c == '"':
				return i, true
			case c == '\\' || c < 0x20 || c >= 0x80:
				return 0, false
			}
		}
		return 0, false
	}
	ends := []string{`"`, `\"`, `\\`, `\n`, "\x01", "\x1f", "\x7f", "é", "\xff", " ", ""}
	for _, end := range ends {
		for _, after := range ends {
			for i := range 20 {
				for _, j := range []int{0, 1, 7, 8, 9, 15} {
					b := []byte(`"` + strings.Repeat("k", i) + end + strings.Repeat("x", j) + after + `":1}`)
					gotEnd, gotOK := plainKey(b, 1)
					wantEnd, wantOK := byteByByte(b, 1)
					if gotOK != wantOK || gotOK && gotEnd != wantEnd {
						t.Fatalf("plainKey(%q) = %d, %v; want %d, %v", b, gotEnd, gotOK, wantEnd, wantOK)
					}
				}
			}
		}
	}
}

// TestEscapesAtWordEdges puts the tails that stop the sixteen-byte loops
// after every length of plain bytes, with the input ending right there or
// going on: an escape across the boundary of a word or of a block, a
// backslash as the last byte of a word or of the input, a \u escape split
// across words, a multibyte rune split across words, and a control byte
// or a bad escape right after an escape (which the loops step over
// without leaving them). Valid, String, StringLen and measuredStr are
// held to encoding/json and to str.
func TestEscapesAtWordEdges(t *testing.T) {
	tails := []string{`\`, `\\`, `\"`, `\n"`, `\\"`, `\\\`, `\"\`, `\u`, `\u00`, `\u00e9"`, `\ud83d\ude00"`, `\ud83d\ude`,
		"\\n\x01\"", "\\t\x1f", `\n\x"`, `\n\u12"`, `\n\"\\\/\b\f\r\t"`, "é\"", "日\"", "😀\"", "\xe6\x97", "\xf0\x9f\x98",
		"\\n\xe6\x97\xa5\"", "\\\"\xff\"", `"`}
	for n := range 40 {
		for _, tail := range tails {
			for _, after := range []string{"", `"`, `,"k":"v"}`, strings.Repeat("x", 17) + `"`} {
				raw := []byte(`"` + strings.Repeat("a", n) + tail + after)
				if Valid(raw) != json.Valid(raw) {
					t.Fatalf("Valid(%q) = %v", raw, Valid(raw))
				}
				checkString(t, raw)
				checkMeasured(t, raw)
				var s string
				if json.Unmarshal(raw, &s) == nil {
					nb, nr, ok := StringLen(raw)
					if !ok || nb != len(s) || nr != utf8.RuneCountInString(s) {
						t.Fatalf("StringLen(%q) = %d, %d, %v; want %d, %d", raw, nb, nr, ok, len(s), utf8.RuneCountInString(s))
					}
				}
			}
		}
	}
}

// A line cut at a read bound keeps the members whole before the cut, and
// only those: what it gives is valid JSON and never says more than the
// whole line (a number at the cut may be longer in it).
func TestLeadingKeepsWholeMembers(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"type":"user","sessionId":"s1","message":{"content":"AAAA`, `{"type":"user","sessionId":"s1"}`},
		{`{"a":1,"b":[1,2],"c":{"d":"e"},"f":"g`, `{"a":1,"b":[1,2],"c":{"d":"e"}}`},
		{`{"a":1,"n":12`, `{"a":1}`},
		{`{"a" : "x" , "b":tr`, `{"a" : "x" }`},
		{`{"a":"x"}`, `{"a":"x"}`},
		{`{"k\"ey":"v",`, `{"k\"ey":"v"}`},
	}
	for _, c := range cases {
		got, ok := Leading([]byte(c.in))
		if !ok || string(got) != c.want || !json.Valid(got) {
			t.Errorf("Leading(%q) = %q, %v; want %q", c.in, got, ok, c.want)
		}
	}
	for _, in := range []string{``, `[1,2`, `{"a":"AAA`, `{"n":1`, `{`, `garbage`} {
		if got, ok := Leading([]byte(in)); ok {
			t.Errorf("Leading(%q) = %q, want none", in, got)
		}
	}
}
