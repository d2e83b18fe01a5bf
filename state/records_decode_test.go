package state

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/agentmap/agentmap/internal/jsondec/jsondectest"
)

// sameRecord checks that decodeFast, where it accepts data into a zero
// T, gives what encoding/json gives, and reports whether it accepted.
func sameRecord[T any](t *testing.T, data []byte) bool {
	t.Helper()
	return jsondectest.Same(t, data, func(b []byte) (T, bool) {
		var v T
		return v, decodeFast(b, &v)
	})
}

// randomRecords are a source's and a session's records, their fields
// filled at random, as json.Marshal writes them.
func randomRecords(t testing.TB, rng *rand.Rand) (src, sess []byte) {
	var s Source
	var ss Session
	jsondectest.Fill(reflect.ValueOf(&s).Elem(), rng, 0)
	jsondectest.Fill(reflect.ValueOf(&ss).Elem(), rng, 0)
	a, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(ss)
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

// Source and session records as json.Marshal writes them, of every shape
// and with every field set, are read as encoding/json reads them.
func TestDecodeFastReadsRecords(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for range 3000 {
		src, sess := randomRecords(t, rng)
		if !sameRecord[Source](t, src) || !sameRecord[Session](t, sess) {
			t.Fatalf("decodeFast refuses json.Marshal's %s or %s", src, sess)
		}
	}
	var src Source
	var sess Session
	jsondectest.Full(reflect.ValueOf(&src).Elem())
	jsondectest.Full(reflect.ValueOf(&sess).Elem())
	srcJSON, _ := json.Marshal(src)
	sessJSON, _ := json.Marshal(sess)
	if !sameRecord[Source](t, srcJSON) || !sameRecord[Session](t, sessJSON) {
		t.Fatalf("a record with every field set is refused: %s %s", srcJSON, sessJSON)
	}
}

// What decodeFast leaves to encoding/json: a record it does not mirror,
// or one to merge into.
func TestDecodeFastRefuses(t *testing.T) {
	for _, data := range []string{
		`{"path":"a","path":"b"}`, `{"Path":"a"}`, `{"path":"a","x":1}`, `{"dev":-1}`, `{"dev":18446744073709551616}`,
		`{"dev":1.0}`, `{"dev":01}`, `{"offset":null}`, ` {"path":"a"}`, `{"path":"a"} `, `{"sidecar":"true"}`, `[]`, `null`,
	} {
		var s Source
		if decodeFast([]byte(data), &s) {
			t.Errorf("decodeFast accepts source %s", data)
		}
	}
	for _, data := range []string{
		`{"flush":{"summary":{"repos":[null]}}}`, `{"flush":{"summary":{"unpriced":["a","a"],"unpriced":[]}}}`,
		`{"flush":{"gen":-1}}`, `{"flush":{"summary":{"costUsd":"1"}}}`, `{"flush":{"summary":{}},"flush":null}`,
		`{"id":"x"} `, `{"id":"x"}x`, `{"flush":{"summary":null}}`,
	} {
		var s Session
		if decodeFast([]byte(data), &s) {
			t.Errorf("decodeFast accepts session %s", data)
		}
	}
	// A record that is not zero: encoding/json would keep what the JSON
	// does not name, and merge into its flush.
	s := Session{Agent: "claude-code"}
	if decodeFast([]byte(`{"id":"x"}`), &s) || s.NativeID != "" {
		t.Errorf("decodeFast decodes into a record that is not zero: %+v", s)
	}
	src := Source{Path: "a"}
	if decodeFast([]byte(`{"agent":"x"}`), &src) || src.Agent != "" {
		t.Errorf("decodeFast decodes into a record that is not zero: %+v", src)
	}
	// The fields JSON leaves alone may be set, and stay.
	src, s = Source{ID: 7}, Session{Key: "k"}
	if !decodeFast([]byte(`{"path":"p"}`), &src) || src != (Source{ID: 7, Path: "p"}) {
		t.Errorf("a source with its id: %+v", src)
	}
	if !decodeFast([]byte(`{"id":"x"}`), &s) || s != (Session{Key: "k", NativeID: "x"}) {
		t.Errorf("a session with its key: %+v", s)
	}
	for _, data := range []string{`{"flush":null}`, `{"flush":{"summary":{"repos":[],"unpriced":null}}}`, `{}`,
		`{"gen":18446744073709551615,"flush":{"gen":0}}`} {
		if !sameRecord[Session](t, []byte(data)) {
			t.Errorf("decodeFast refuses %s", data)
		}
	}
}

// Whatever decodeFast accepts, encoding/json decodes the same.
func FuzzDecodeFast(f *testing.F) {
	rng := rand.New(rand.NewPCG(11, 12))
	for range 10 {
		src, sess := randomRecords(f, rng)
		f.Add(src)
		f.Add(sess)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sameRecord[Source](t, data)
		sameRecord[Session](t, data)
	})
}
