package event

import (
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/agentmap/agentmap/internal/jsondec/jsondectest"
)

// sameAsEncodingJSON checks that DecodeJSON, where it accepts data, gives
// what encoding/json gives, and reports whether it accepted.
func sameAsEncodingJSON(t *testing.T, data []byte) bool {
	t.Helper()
	return jsondectest.Same(t, data, DecodeJSON)
}

// Whatever AppendJSON writes, DecodeJSON reads, as encoding/json does:
// records of every shape, with strings escaped in every way.
func TestDecodeJSONReadsAppendJSON(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 3000 {
		if data := AppendJSON(nil, randomBatch(rng, 0)); !sameAsEncodingJSON(t, data) {
			t.Fatalf("DecodeJSON refuses AppendJSON's %s", data)
		}
	}
	for _, data := range []string{"null", "[]"} {
		if !sameAsEncodingJSON(t, []byte(data)) {
			t.Errorf("DecodeJSON refuses %s", data)
		}
	}
}

// Every field of every record is read: a record with all of its fields
// set decodes (a field added to a record and not to DecodeJSON would be
// an unknown member, refused).
func TestDecodeJSONReadsEveryField(t *testing.T) {
	var e Event
	jsondectest.Full(reflect.ValueOf(&e).Elem())
	if data := AppendJSON(nil, []Event{e, e}); !sameAsEncodingJSON(t, data) {
		t.Fatalf("DecodeJSON refuses a record with every field set: %s", data)
	}
}

// What DecodeJSON leaves to encoding/json: anything AppendJSON never
// writes, where encoding/json would decode otherwise than member by
// member or report an error.
func TestDecodeJSONRefusesWhatItDoesNotMirror(t *testing.T) {
	for _, data := range []string{
		` []`, `[ ]`, `[{"k":"x"} ]`, `[{"k" :"x"}]`, `[{"K":"x"}]`, `[{"k":"x","k":"y"}]`, `[{"k":"x","zz":1}]`,
		`[null]`, `[{"k":"x","t":null}]`, `[{"k":"x","t":1.5}]`, `[{"k":"x","t":1e3}]`, `[{"k":"x","t":01}]`,
		`[{"k":"x","t":9223372036854775808}]`, `[{"k":"x","t":-9223372036854775809}]`, `[{"k":"x","t":"1"}]`,
		`[{"k":"\ud800"}]`, `[{"k":"\udc00\ud800"}]`, "[{\"k\":\"\xff\"}]", "[{\"k\":\"a\x01\"}]", `[{"k":"\x"}]`,
		`[{"k":"x","s":{"id":"a","id":"b"}}]`, `[{"k":"x","s":{"ID":"a"}}]`, `[{"k":"x","l":{"fast":1}}]`,
		`[{"k":"x","ct":{"proc":1,"models":[null]}}]`, `[{"k":"x","ct":{"proc":1,"usd":1.}}]`, `[{"k":"x","ct":{"usd":-}}]`,
		"[{\"k\":\"\\n\xff\"}]", "[{\"k\":\"\\n\x01\"}]", `[{"k":"x","ct":{"usd":1e309}}]`, `[{"k":"x","ct":{"usd":01}}]`,
		`[{"k":"x","t":18446744073709551617}]`, `[{"k":"x","t":100000000000000000000}]`, `[]x`, `null `, `[] `,
		`[{"k":"x"}]x`, `[{"k":"x"},]`, `[{"k":"x"}`, `{"k":"x"}`, `[{"k":"x",}]`, `[{,}]`, `[{"k\u0000":"x"}]`,
	} {
		if _, ok := DecodeJSON([]byte(data)); ok {
			t.Errorf("DecodeJSON accepts %s", data)
		}
	}
	// And what it reads of the rest, as encoding/json does.
	for _, data := range []string{
		`[{"t":-9223372036854775808,"k":"x"}]`, `[{"t":9223372036854775807}]`, `[{"k":"\ud83d\ude00 \u00e9 \/ \b\f\n\r\t"}]`,
		`[{"x":null,"c":null}]`, `[{"ct":{"models":null,"usd":1.5e-7}}]`, `[{"ct":{"models":[],"usd":-0}}]`, `[{"x":{"id":"","exit":null}}]`,
		`[{"x":{"id":"","exit":-2}}]`, `[{"k":"\u2028\u2029\ufffd"}]`, `[{}]`, `[{"t":-0}]`,
	} {
		if !sameAsEncodingJSON(t, []byte(data)) {
			t.Errorf("DecodeJSON refuses %s", data)
		}
	}
}

// Whatever DecodeJSON accepts, encoding/json decodes the same.
func FuzzDecodeJSON(f *testing.F) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 20 {
		f.Add(AppendJSON(nil, randomBatch(rng, 1)))
	}
	f.Add([]byte(`[{"k":"x","t":9223372036854775807,"x":{"id":"a","exit":-1}}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsEncodingJSON(t, data)
	})
}
