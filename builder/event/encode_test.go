package event

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
)

// awkward are strings encoding/json escapes in every way it has.
var awkward = []string{
	"plain", "", `q"b\s`, "ctl\x00\x01\x1f\b\f\n\r\t", "<a href='x'>&amp;</a>", "caf\u00e9 \u4e2d \U0001f600",
	"line\u2028para\u2029", "bad\xff\xfeutf8\xc3", "\xed\xa0\x80", "tail\\",
}

// fill sets every field reachable from v: strings from awkward, numbers
// and bools from rng (zero now and then, so that omitempty is exercised
// both ways), pointers allocated or left nil, slices of 0 to 2 elements.
func fill(v reflect.Value, rng *rand.Rand, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(awkward[rng.IntN(len(awkward))])
	case reflect.Int, reflect.Int64:
		if rng.IntN(4) > 0 {
			v.SetInt(rng.Int64N(1<<40) - 1<<39)
		}
	case reflect.Bool:
		v.SetBool(rng.IntN(2) == 0)
	case reflect.Float64:
		switch rng.IntN(4) {
		case 1:
			v.SetFloat(rng.Float64() * 100)
		case 2:
			v.SetFloat(rng.Float64() * 1e-8)
		case 3:
			v.SetFloat(rng.Float64() * 1e22)
		}
	case reflect.Pointer:
		if depth < 4 && rng.IntN(5) > 0 {
			v.Set(reflect.New(v.Type().Elem()))
			fill(v.Elem(), rng, depth+1)
		}
	case reflect.Slice:
		switch n := rng.IntN(4); n {
		case 0: // nil
		default:
			s := reflect.MakeSlice(v.Type(), n-1, n-1) // empty, or 1 or 2 elements
			for i := range s.Len() {
				fill(s.Index(i), rng, depth+1)
			}
			v.Set(s)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			fill(v.Field(i), rng, depth)
		}
	default:
		panic("event: AppendJSON's test does not fill a " + v.Kind().String())
	}
}

func TestAppendJSONIsEncodingJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		evs := make([]Event, rng.IntN(4))
		for i := range evs {
			fill(reflect.ValueOf(&evs[i]).Elem(), rng, 0)
		}
		want, err := json.Marshal(evs)
		if err != nil {
			t.Fatal(err)
		}
		if got := AppendJSON(nil, evs); !bytes.Equal(got, want) {
			t.Fatalf("AppendJSON differs from encoding/json:\n got %s\nwant %s", got, want)
		}
	}
	if got := AppendJSON([]byte("x"), nil); string(got) != "xnull" {
		t.Errorf("nil events: %s", got)
	}
}

// Every field of every record is written: a record with all its fields
// set encodes as encoding/json encodes it (a field added to a record and
// not to AppendJSON is missing from its output).
func TestAppendJSONWritesEveryField(t *testing.T) {
	var full func(v reflect.Value)
	full = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.String:
			v.SetString("s")
		case reflect.Int, reflect.Int64:
			v.SetInt(7)
		case reflect.Bool:
			v.SetBool(true)
		case reflect.Float64:
			v.SetFloat(0.25)
		case reflect.Pointer:
			v.Set(reflect.New(v.Type().Elem()))
			full(v.Elem())
		case reflect.Slice:
			s := reflect.MakeSlice(v.Type(), 1, 1)
			full(s.Index(0))
			v.Set(s)
		case reflect.Struct:
			for i := range v.NumField() {
				full(v.Field(i))
			}
		}
	}
	var e Event
	full(reflect.ValueOf(&e).Elem())
	want, _ := json.Marshal([]Event{e})
	if got := AppendJSON(nil, []Event{e}); !bytes.Equal(got, want) {
		t.Fatalf("a record with every field set:\n got %s\nwant %s", got, want)
	}
}

func FuzzAppendJSONString(f *testing.F) {
	for _, s := range awkward {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		evs := []Event{{Kind: Kind(s), Agent: s, Call: &Call{Tool: s, Targets: []Target{{Path: s}}}}}
		want, _ := json.Marshal(evs)
		if got := AppendJSON(nil, evs); !bytes.Equal(got, want) {
			t.Fatalf("%q:\n got %s\nwant %s", s, got, want)
		}
	})
}

func BenchmarkAppendJSON(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	evs := make([]Event, 200)
	for i := range evs {
		fill(reflect.ValueOf(&evs[i]).Elem(), rng, 0)
	}
	b.Run("AppendJSON", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			buf = AppendJSON(buf[:0], evs)
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		for b.Loop() {
			if _, err := json.Marshal(evs); err != nil {
				b.Fatal(err)
			}
		}
	})
}
