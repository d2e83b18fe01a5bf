package codex

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
)

// The walks that replace encoding/json on the hot path are held to it:
// same result wherever the walk answers.

// commandByDecoding is how a shell call's command was read before the walk.
func commandByDecoding(raw json.RawMessage) (argv []string, cmd string) {
	if json.Unmarshal(raw, &argv) == nil && len(argv) > 0 {
		return argv, ""
	}
	_ = json.Unmarshal(raw, &cmd)
	return nil, cmd
}

func checkCommand(t *testing.T, raw []byte) {
	if !json.Valid(raw) {
		return
	}
	argv, cmd := commandOf(raw)
	wantArgv, wantCmd := commandByDecoding(raw)
	if len(argv) == 0 {
		argv = nil
	}
	if !reflect.DeepEqual(argv, wantArgv) || cmd != wantCmd {
		t.Errorf("command %q: walk %q %q, encoding/json %q %q", raw, argv, cmd, wantArgv, wantCmd)
	}
}

var commandCases = []string{
	`["bash","-lc","ls -la"]`, `["a",null,"b"]`, `["a",1,"b"]`, `[]`, `null`, `"git status"`, `"caf\u00e9"`,
	`{"a":1}`, `5`, `true`, `[["x"]]`, `["\ud83d"]`, `[null]`,
}

func TestCommandOfAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range commandCases {
		checkCommand(t, []byte(c))
	}
}

func FuzzCommandOf(f *testing.F) {
	for _, c := range commandCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkCommand(t, raw) })
}

// checkTop: the walk of a first line's members reads what the map
// encoding/json decodes holds, and refuses only what encoding/json
// refuses or what it does not mirror (keys with escapes or non-ASCII).
func checkTop(t *testing.T, line []byte) {
	walked, ok := walkTop(line)
	var m map[string]json.RawMessage
	err := json.Unmarshal(line, &m)
	switch {
	case ok && err != nil:
		t.Errorf("walk accepted %q, encoding/json: %v", line, err)
	case ok && fmt.Sprint(walked) != fmt.Sprint(topOf(m)):
		t.Errorf("line %q: walk %+v, encoding/json %+v", line, walked, topOf(m))
	}
}

var topCases = []string{
	`{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"x"}}`,
	`{"type":"session_meta","type":"event_msg","payload":{}}`, `{"type":"event_msg","type":5,"payload":{}}`,
	`{"id":"x","timestamp":"t","instructions":"…","git":{}}`, `{"id":"x","timestamp":"t","other":1}`,
	`{"session":{"id":"x"},"items":[]}`, `{"session":{}}`, `{"ty\u0070e":"session_meta","payload":{}}`,
	`{"type":null,"payload":null}`, `{}`, `{"a":1,}`, `[1]`,
}

func TestWalkTopAgreesWithEncodingJSON(t *testing.T) {
	for _, c := range topCases {
		checkTop(t, []byte(c))
	}
	for _, path := range fixturesAndCorpus(t) {
		if lines := readLines(t, path); len(lines) > 0 {
			checkTop(t, lines[0])
		}
	}
}

func FuzzWalkTop(f *testing.F) {
	for _, c := range topCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkTop(t, line) })
}
