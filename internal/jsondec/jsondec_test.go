package jsondec

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/internal/jsondec/jsondectest"
)

// Each value reader, on values alone, against encoding/json decoding the
// same text into a field of the same type: where the reader accepts, the
// two agree (bit for bit for floats, so that -0 is told from 0).
func TestValuesAsEncodingJSON(t *testing.T) {
	texts := []string{
		`0`, `-0`, `7`, `-7`, `01`, `1.5`, `1e3`, `1E+3`, `-1e-400`, `1e309`, `-`, `+1`, `.5`, `1.`, `9223372036854775807`,
		`9223372036854775808`, `-9223372036854775808`, `-9223372036854775809`, `18446744073709551615`,
		`18446744073709551616`, `123456789012345678901234`, `null`, `true`, `false`, `tru`, `"x"`, `""`, `"\u00e9\/\n"`,
		`"\ud83d\ude00"`, `"\ud83d"`, `"\ude00\ud83d"`, "\"a\x01\"", "\"\xff\"", "\"\\n\xff\"", `"\x"`, `"unclosed`, `"\u12"`,
	}
	for _, text := range texts {
		agree(t, "int64", text, (*Decoder).Int64)
		agree(t, "int", text, (*Decoder).Int)
		agree(t, "uint64", text, (*Decoder).Uint64)
		agree(t, "float64", text, (*Decoder).Float)
		agree(t, "bool", text, (*Decoder).Bool)
		agree(t, "string", text, (*Decoder).Str)
	}
	// What must be accepted, each by its reader.
	for _, c := range []struct {
		text string
		read func(*Decoder) bool
	}{
		{`-9223372036854775808`, func(d *Decoder) bool { var v int64; return d.Int64(&v) }},
		{`18446744073709551615`, func(d *Decoder) bool { var v uint64; return d.Uint64(&v) }},
		{`-0`, func(d *Decoder) bool { var v float64; return d.Float(&v) }},
		{`1E+3`, func(d *Decoder) bool { var v float64; return d.Float(&v) }},
		{`"\ud83d\ude00\/"`, func(d *Decoder) bool { var v string; return d.Str(&v) }},
	} {
		d := New([]byte(c.text))
		if !c.read(&d) || !d.Done() {
			t.Errorf("%s refused", c.text)
		}
	}
}

// agree checks that read, where it accepts all of text, reads what
// encoding/json reads into a T.
func agree[T comparable](t *testing.T, name, text string, read func(*Decoder, *T) bool) {
	t.Helper()
	d := New([]byte(text))
	var got, want T
	if !read(&d, &got) || !d.Done() {
		return
	}
	if err := json.Unmarshal([]byte(text), &want); err != nil {
		t.Errorf("%s %s: accepted, but encoding/json refuses it: %v", name, text, err)
		return
	}
	if f, isFloat := any(got).(float64); isFloat {
		if math.Float64bits(f) != math.Float64bits(any(want).(float64)) {
			t.Errorf("%s %s: %v, encoding/json %v", name, text, got, want)
		}
		return
	}
	if got != want {
		t.Errorf("%s %s: %v, encoding/json %v", name, text, got, want)
	}
}

// Object refuses a member given twice and a member its reader does not
// know, and reads the rest; Records and Strings tell null from [].
func TestObjectsAndArrays(t *testing.T) {
	type rec struct{ A, B string }
	member := func(d *Decoder, v *rec, k []byte) int {
		switch string(k) {
		case "a":
			return Field(0, d.Str(&v.A))
		case "b":
			return Field(1, d.Str(&v.B))
		}
		return -1
	}
	for text, want := range map[string]bool{
		`{"a":"x","b":"y"}`: true, `{"b":"y","a":"x"}`: true, `{}`: true, `{"a":"x","a":"y"}`: false, `{"c":"x"}`: false,
		`{"A":"x"}`: false, `{"a":"x",}`: false, `{"a":"x"`: false, `{"a" :"x"}`: false, `{"a":"x"} `: false,
	} {
		d := New([]byte(text))
		var v rec
		if got := Object(&d, &v, member) && d.Done(); got != want {
			t.Errorf("%s: %v, want %v", text, got, want)
		}
	}
	for text, want := range map[string][]rec{`null`: nil, `[]`: {}, `[{"a":"x"},{}]`: {{A: "x"}, {}}} {
		d := New([]byte(text))
		var v []rec
		if !Records(&d, &v, member) || !d.Done() || (v == nil) != (want == nil) || len(v) != len(want) {
			t.Errorf("%s: %#v, want %#v", text, v, want)
		}
	}
	var s []string
	if d := New([]byte(`[null]`)); Strings(&d, &s) {
		t.Errorf("[null] accepted as strings")
	}
	if d := New([]byte(`["a",""]`)); !Strings(&d, &s) || len(s) != 2 || s[0] != "a" {
		t.Errorf(`["a",""]: %#v`, s)
	}
}

// Skip accepts only what encoding/json takes as a value (compact JSON,
// nested at most maxSkip deep), and steps over the whole of it.
func TestSkipIsAValidValue(t *testing.T) {
	for _, v := range []string{
		`0`, `-0`, `-1.5e+7`, `1E-2`, `1e999`, `""`, `"a\"\\\/\b\f\n\r\t\u00e9"`, "\"\xff\"", `[]`, `{}`, `null`, `true`,
		`false`, `[1,"a",null,{"b":[{}]}]`, `{"a":{"b":[]},"":0}`, `{"a":1,"a":2}`,
	} {
		d := New([]byte(v))
		if !d.Skip() || !d.Done() || !json.Valid([]byte(v)) {
			t.Errorf("Skip of %s: stepped to %d of %d", v, d.i, len(v))
		}
	}
	for _, v := range []string{
		``, `01`, `1.`, `.5`, `-`, `+1`, `1e`, `"a`, "\"\x01\"", `"\x"`, `"\u12g4"`, `[1,]`, `[,1]`, `{"a"}`, `{"a":}`,
		`{a:1}`, `{"a":1,}`, `tru`, `nul`, `[1 ]`, `{ }`, strings.Repeat("[", maxSkip+1) + strings.Repeat("]", maxSkip+1),
	} {
		if d := New([]byte(v)); d.Skip() && d.Done() {
			t.Errorf("Skip accepts %q", v)
		}
	}
}

// ObjectOf steps over members its record does not have, and leaves to
// encoding/json one whose name is a field's up to case.
func TestObjectOfStepsOverUnknownMembers(t *testing.T) {
	type rec struct {
		A string `json:"a"`
		B int64  `json:"bee"`
	}
	member := func(d *Decoder, v *rec, k []byte) int {
		switch string(k) {
		case "a":
			return Field(0, d.Str(&v.A))
		case "bee":
			return Field(1, d.Int64(&v.B))
		}
		return Unknown
	}
	read := func(data []byte) (rec, bool) {
		var v rec
		d := New(data)
		return v, ObjectOf(&d, &v, member, []string{"a", "bee"}) && d.Done()
	}
	for _, data := range []string{`{}`, `{"a":"x","zz":[1,{"y":null}],"bee":3}`, `{"x":1,"x":2}`, `{"b":1,"be":2,"beee":3}`} {
		if !jsondectest.Same(t, []byte(data), read) {
			t.Errorf("ObjectOf refuses %s", data)
		}
	}
	for _, data := range []string{`{"A":"x"}`, `{"BEE":1}`, `{"bEe":1}`, `{"a":"x","a":"y"}`, `{"x":01}`, `{"x":1,}`, `{"\u00e9":1}`} {
		if _, ok := read([]byte(data)); ok {
			t.Errorf("ObjectOf accepts %s", data)
		}
	}
	// Object, without names, refuses every member its record lacks.
	d := New([]byte(`{"a":"x","zz":1}`))
	if Object(&d, new(rec), member) {
		t.Error("Object steps over an unknown member")
	}
}
