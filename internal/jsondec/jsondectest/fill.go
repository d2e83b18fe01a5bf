// Package jsondectest fills records at random for the tests that hold a
// hand-written JSON encoder or decoder to encoding/json.
package jsondectest

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"
)

// Awkward are strings encoding/json escapes in every way it has.
var Awkward = []string{
	"plain", "", `q"b\s`, "ctl\x00\x01\x1f\b\f\n\r\t", "<a href='x'>&amp;</a>", "caf\u00e9 \u4e2d \U0001f600",
	"line\u2028para\u2029", "bad\xff\xfeutf8\xc3", "\xed\xa0\x80", "tail\\",
}

// Fill sets every field reachable from v: strings from Awkward, numbers
// and bools from rng (zero now and then, so that omitempty is exercised
// both ways), pointers allocated or left nil, slices of 0 to 2 elements
// or nil.
func Fill(v reflect.Value, rng *rand.Rand, depth int) {
	switch v.Kind() {
	case reflect.String:
		v.SetString(Awkward[rng.IntN(len(Awkward))])
	case reflect.Int, reflect.Int64:
		if rng.IntN(4) > 0 {
			v.SetInt(rng.Int64N(1<<40) - 1<<39)
		}
	case reflect.Uint64:
		switch rng.IntN(4) {
		case 1:
			v.SetUint(rng.Uint64())
		case 2, 3:
			v.SetUint(rng.Uint64N(1 << 20))
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
			Fill(v.Elem(), rng, depth+1)
		}
	case reflect.Slice:
		switch n := rng.IntN(4); n {
		case 0: // nil
		default:
			s := reflect.MakeSlice(v.Type(), n-1, n-1) // empty, or 1 or 2 elements
			for i := range s.Len() {
				Fill(s.Index(i), rng, depth+1)
			}
			v.Set(s)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				Fill(v.Field(i), rng, depth)
			}
		}
	case reflect.Map: // string keys
		if n := rng.IntN(4); n > 0 {
			m := reflect.MakeMap(v.Type())
			for range n - 1 { // empty, or 1 or 2 entries
				k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
				Fill(k, rng, depth+1)
				Fill(e, rng, depth+1)
				m.SetMapIndex(k, e)
			}
			v.Set(m)
		}
	default:
		panic("jsondectest: no way to fill a " + v.Kind().String())
	}
}

// Full sets every field reachable from v to a value that is never
// omitted: a record whose encoding names every member.
func Full(v reflect.Value) {
	switch v.Kind() {
	case reflect.String:
		v.SetString("s")
	case reflect.Int, reflect.Int64:
		v.SetInt(-7)
	case reflect.Uint64:
		v.SetUint(1<<64 - 1)
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Float64:
		v.SetFloat(0.25)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		Full(v.Elem())
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 2, 2)
		Full(s.Index(0))
		Full(s.Index(1))
		v.Set(s)
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				Full(v.Field(i))
			}
		}
	case reflect.Map: // string keys
		m := reflect.MakeMap(v.Type())
		for _, key := range []string{"a", "b"} {
			e := reflect.New(v.Type().Elem()).Elem()
			Full(e)
			m.SetMapIndex(reflect.ValueOf(key).Convert(v.Type().Key()), e)
		}
		v.Set(m)
	}
}

// Same checks that decode, where it accepts data, gives what
// encoding/json gives decoding data into a zero T, and reports whether it
// accepted.
func Same[T any](t testing.TB, data []byte, decode func([]byte) (T, bool)) bool {
	t.Helper()
	got, ok := decode(data)
	if !ok {
		return false
	}
	var want T
	if err := json.Unmarshal(data, &want); err != nil {
		t.Fatalf("%s: accepted, but encoding/json refuses it: %v", data, err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: decoded otherwise than by encoding/json:\n got %#v\nwant %#v", data, got, want)
	}
	return true
}
