package mapfile

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/internal/jsondec/jsondectest"
)

// sameAsUnmarshal checks that DecodeJSON, where it accepts data, gives
// what json.Unmarshal gives, and reports whether it accepted.
func sameAsUnmarshal(t testing.TB, data []byte) bool {
	t.Helper()
	return jsondectest.Same(t, data, DecodeJSON)
}

// randomMap is a map with every field filled at random, strings escaped
// in every way encoding/json has.
func randomMap(rng *rand.Rand) Map {
	var m Map
	jsondectest.Fill(reflect.ValueOf(&m).Elem(), rng, 0)
	return m
}

// Whatever json.Marshal writes of a Map, DecodeJSON reads, as
// json.Unmarshal does.
func TestDecodeJSONReadsWhatJSONWrites(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	for range 2000 {
		data, err := json.Marshal(randomMap(rng))
		if err != nil {
			t.Fatal(err)
		}
		if !sameAsUnmarshal(t, data) {
			t.Fatalf("DecodeJSON refuses json.Marshal's %s", data)
		}
	}
}

// Every field of every record is read: a map with all of its fields set
// decodes as json.Unmarshal decodes it (a field added to a record and not
// to DecodeJSON would be stepped over as unknown, and left zero).
func TestDecodeJSONReadsEveryField(t *testing.T) {
	var m Map
	jsondectest.Full(reflect.ValueOf(&m).Elem())
	data, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if !sameAsUnmarshal(t, data) {
		t.Fatalf("DecodeJSON refuses a map with every field set: %s", data)
	}
}

// Members a Map does not keep are stepped over as json.Unmarshal steps
// over them, whatever they hold; one whose name is a field's up to case
// is left to encoding/json, which fills that field.
func TestDecodeJSONStepsOverUnknownMembers(t *testing.T) {
	for _, data := range []string{
		`{"x":1}`, `{"x":-0.5e+7,"schema":"s"}`, `{"x":"a\"\\\/\b\f\n\r\tb\u00e9"}`, `{"x":[]}`, `{"x":{}}`,
		`{"x":[1,"a",null,true,false,{"y":[{}]}]}`, `{"x":{"a":{"b":{"c":[[[]]]}}}}`, `{"x":null,"y":true}`,
		`{"session":{"id":"a","zz":[1,2],"models":["m"]},"events":[{"kind":"llm","srcUuid":"u","t":3}]}`,
		`{"totals":{"artifacts":2,"errorsByClass":{"a":1,"a":2},"errorsBySource":null}}`, `{"x":1e999}`,
		`{"agents":[{"id":"main","parent":null,"launchSeq":null,"cost":1.5}],"files":[{"first":3,"id":0}]}`,
		"{\"x\":\"\xff\"}",
	} {
		if !sameAsUnmarshal(t, []byte(data)) {
			t.Errorf("DecodeJSON refuses %s", data)
		}
	}
	for _, data := range []string{
		`{"Schema":"agentplay/v1"}`, `{"session":{"ID":"a"}}`, `{"events":[{"Kind":"llm"}]}`, `{"x":1,"x":2,"SCHEMA":"s"}`,
		`{"x":01}`, `{"x":1.}`, `{"x":-}`, `{"x":"\x"}`, `{"x":"a` + "\x01" + `"}`, `{"x":[1,]}`, `{"x":{"a"}}`,
		`{"x":{"a":1,}}`, `{"x":tru}`, `{"x":nul}`, `{"x":[1 ,2]}`, `{"x":"\u12"}`, `{"x":` + strings.Repeat("[", 65) + strings.Repeat("]", 65) + `}`,
		`{"x":1`, `{"x"}`, `{"x":}`,
		// encoding/json folds names by Unicode too: a long s is an s, the
		// Kelvin sign a k (Key refuses every name that is not ASCII).
		"{\"\u017fchema\":\"x\"}", "{\"\\u017fchema\":\"x\"}", "{\"events\":[{\"\u212aind\":\"x\"}]}", "{\"\u00e9\":1}",
	} {
		if _, ok := DecodeJSON([]byte(data)); ok {
			t.Errorf("DecodeJSON accepts %s", data)
		}
	}
}

// What DecodeJSON leaves to encoding/json: anything it does not mirror
// member by member, and every error.
func TestDecodeJSONRefusesWhatItDoesNotMirror(t *testing.T) {
	for _, data := range []string{
		``, `null`, `[]`, ` {}`, `{} `, `{ }`, `{"schema" :"s"}`, `{"schema":"s","schema":"t"}`,
		`{"schema":1}`, `{"session":[]}`, `{"session":{"durationMs":1.5}}`, `{"session":{"durationMs":"1"}}`,
		`{"session":{"durationMs":9223372036854775808}}`, `{"session":{"truncated":1}}`, `{"session":{"models":[null]}}`,
		`{"events":[null]}`, `{"events":{}}`, `{"events":[{"cost":"1"}]}`, `{"events":[{"cost":1e400}]}`,
		`{"events":[{"exitCode":1.0}]}`, `{"events":[{"vcs":[]}]}`, `{"events":[{"targets":[{"file":"a"}]}]}`,
		`{"totals":{"errorsByClass":{"a":null}}}`, `{"totals":{"errorsByClass":[]}}`, `{"totals":{"errorsByClass":{"a":1.5}}}`,
		`{"session":{"id":"\ud800"}}`, "{\"session\":{\"id\":\"\xff\"}}", `{"k\u0065y":1}`, `{"schema":"s"}x`,
	} {
		if _, ok := DecodeJSON([]byte(data)); ok {
			t.Errorf("DecodeJSON accepts %s", data)
		}
	}
	// And what it reads of the rest, as json.Unmarshal does.
	for _, data := range []string{
		`{}`, `{"session":null,"totals":null,"events":null,"repos":[]}`, `{"session":{"id":null,"truncated":null,"models":[]}}`,
		`{"events":[{"outBytes":null,"dur":-0,"exitCode":-2,"vcs":null,"cost":-0,"t":-9223372036854775808}]}`,
		`{"events":[{"targets":[{"file":null},{"file":3,"scope":"\ud83d\ude00"}],"vcs":{"number":7}}]}`,
		`{"totals":{"errorsByClass":{},"costUsd":1.5e-7,"tokens":9223372036854775807}}`,
	} {
		if !sameAsUnmarshal(t, []byte(data)) {
			t.Errorf("DecodeJSON refuses %s", data)
		}
	}
}

// Whatever DecodeJSON accepts, json.Unmarshal decodes the same.
func FuzzDecodeJSON(f *testing.F) {
	rng := rand.New(rand.NewPCG(13, 14))
	for range 10 {
		data, _ := json.Marshal(randomMap(rng))
		f.Add(data)
	}
	f.Add([]byte("{\"\u017fession\":{\"id\":\"a\"},\"events\":[{\"\u212aind\":\"llm\"}]}"))
	f.Add([]byte(`{"schema":"agentplay/v1","x":[{"a":null}],"totals":{"errorsByClass":{"a":1,"a":2}},"events":[{"kind":"llm","zz":"\u00e9"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sameAsUnmarshal(t, data)
	})
}
