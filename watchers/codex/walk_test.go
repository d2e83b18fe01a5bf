package codex

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/agentmap/agentmap/internal/cite"
	"github.com/agentmap/agentmap/watchers/jsonscan"
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
func checkTop(t *testing.T, in cite.Line) {
	line := in.B
	walked, ok := walkTop(line)
	var m map[string]json.RawMessage
	err := json.Unmarshal(line, &m)
	switch {
	case ok && err != nil:
		t.Errorf("walk accepted %s, encoding/json: %v", in, err)
	case ok && fmt.Sprint(walked) != fmt.Sprint(topOf(m)):
		t.Errorf("first line %s: the walk and encoding/json %s", in, in.Diff(walked, topOf(m)))
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
		checkTop(t, cite.Own([]byte(c)))
	}
	for _, path := range fixturesAndCorpus(t) {
		if lines := citedLines(t, path); len(lines) > 0 {
			checkTop(t, lines[0])
		}
	}
}

func FuzzWalkTop(f *testing.F) {
	for _, c := range topCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkTop(t, cite.Own(line)) })
}

// checkWalk: where a walk fills v from raw, encoding/json accepts raw
// (with at most a type error where typeErrors) and fills the same.
func checkWalk[T any](t *testing.T, raw []byte, walk func(*T, []byte) bool, typeErrors bool) {
	t.Helper()
	if !json.Valid(raw) {
		return
	}
	var walked, decoded T
	if !walk(&walked, raw) {
		return
	}
	if err := json.Unmarshal(raw, &decoded); err != nil && !(typeErrors && isTypeError(err)) {
		t.Errorf("walk accepted %q, encoding/json: %v", raw, err)
	}
	if !reflect.DeepEqual(walked, decoded) {
		t.Errorf("%q: walk %+v, encoding/json %+v", raw, walked, decoded)
	}
}

var turnItemCases = []string{
	`{"type":"UserMessage","id":"u1","content":[{"type":"text","text":"hi"}]}`,
	`{"type":"McpToolCall","id":"c1","server":"gh","tool":"pr","status":"failed","duration":{"secs":1,"nanos":2},"result":{"isError":true}}`,
	`{"type":"CollabAgentToolCall","id":"c2","receiver_thread_ids":["019a5baa-0000-7000-8000-00000000c003"],"model":"gpt-5"}`,
	`{"type":"CommandExecution","id":"c3","parsed_cmd":[{"type":"read","path":"a.go","cmd":"cat a.go"}],"cwd":"file:///tmp"}`,
	`{"type":"AgentMessage","id":"m","text":"long text stepped over"}`, `{"type":5}`, `{"Type":"UserMessage"}`,
	`{"type":"x","type":"y"}`, `{"receiver_thread_ids":[1]}`, `{"parsed_cmd":{}}`, `[]`, `null`,
	`{"parsed_cmd":null}`, `{"parsed_cmd":[]}`, `{"parsed_cmd":[null,{"type":"search","path":null,"query":"q"}]}`,
	`{"parsed_cmd":[{"type":"read","path":5}]}`, `{"parsed_cmd":[5]}`, `{"parsed_cmd":"cat"}`,
	`{"parsed_cmd":[{"type":"read","Path":"a"}]}`, `{"parsed_cmd":[{"type":"read","path":"a","path":"b"}]}`,
}

var mcpResultCases = []string{
	`{"Ok":{"content":[{"type":"text","text":"x"}],"isError":false}}`, `{"Ok":{"isError":true}}`,
	`{"Err":"boom"}`, `{"Err":null}`, `{"Ok":null}`, `{"Ok":{"isError":"yes"}}`, `{"ok":{"isError":true}}`,
	`{"Ok":[]}`, `"text"`, `[1]`, `{"Ok":{"isError":null}}`,
}

var lineMemberCases = []string{
	`{"type":"turn_context","payload":{"cwd":"/x","model":"m","collaboration_mode":{"mode":"plan","settings":{"model":"gpt-5","developer_instructions":"…"}}}}`,
	`{"type":"turn_context","payload":{"collaboration_mode":{"settings":null}}}`,
	`{"type":"turn_context","payload":{"collaboration_mode":{"settings":{"model":5}}}}`,
	`{"type":"turn_context","payload":{"collaboration_mode":"plan"}}`,
	`{"type":"event_msg","payload":{"type":"task_started","turn_attribution":{"turn_id":"019a"}}}`,
	`{"type":"event_msg","payload":{"type":"exec_command_end","exit_code":-1}}`,
	`{"type":"event_msg","payload":{"type":"exec_command_end","exit_code":1.5}}`,
	`{"type":"event_msg","payload":{"type":"exec_command_end","exit_code":null}}`,
	`{"type":"event_msg","payload":{"type":"exec_command_end","exit_code":99999999999999999999}}`,
	`{"type":"event_msg","payload":{"type":"exec_command_end","parsed_cmd":[{"type":"list_files","cmd":"ls","path":"src"},null]}}`,
	`{"type":"event_msg","payload":{"type":"exec_command_end","parsed_cmd":[{"type":1}]}}`,
	`{"type":"event_msg","payload":{"type":"exec_command_end","parsed_cmd":null}}`,
	`{"type":"event_msg","payload":{"type":"patch_apply_end","changes":{"a":{"type":"add","unified_diff":"+x"},"b":{"move_path":"c"}}}}`,
	`{"type":"event_msg","payload":{"type":"patch_apply_end","changes":{"a":5,"b":{"type":"delete"}}}}`,
	`{"type":"event_msg","payload":{"type":"patch_apply_end","changes":null}}`,
	`{"type":"event_msg","payload":{"type":"patch_apply_end","changes":[1]}}`,
}

func TestWalksAgreeWithEncodingJSON(t *testing.T) {
	for _, c := range turnItemCases {
		checkWalk(t, []byte(c), turnItemFields.FillValid, true)
	}
	for _, c := range mcpResultCases {
		checkWalk(t, []byte(c), mcpResultFields.FillValid, false)
	}
	for _, c := range lineMemberCases {
		checkWalk(t, []byte(c), walkLine, true)
	}
}

// walkLine is scanLine with what the walk keeps that encoding/json does
// not fill made as encoding/json fills it: lengths measured, changes left
// raw.
func walkLine(l *rawLine, line []byte) bool {
	if !scanLine(l, line) {
		return false
	}
	for _, it := range []*item{&l.item, l.Payload, l.Session} {
		if it != nil {
			it.outputLen, it.aggregatedLen = jsonscan.Len{}, jsonscan.Len{}
			it.Changes, it.changes = it.changesOf(), nil
		}
	}
	return true
}

func FuzzWalks(f *testing.F) {
	for _, cases := range [][]string{turnItemCases, mcpResultCases, lineMemberCases} {
		for _, c := range cases {
			f.Add([]byte(c))
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		checkWalk(t, raw, turnItemFields.FillValid, true)
		checkWalk(t, raw, mcpResultFields.FillValid, false)
		checkWalk(t, raw, walkLine, true)
	})
}

// checkTextRunes: a message's text (raw, of the line in) is counted as
// contentText's is.
func checkTextRunes(t *testing.T, in cite.Line, raw []byte) {
	t.Helper()
	if !json.Valid(raw) {
		return
	}
	text, _ := contentText(raw)
	if got, want := textRunes(raw), utf8.RuneCountInString(text); got != want {
		t.Errorf("content %s of %s: %d runes counted, contentText has %d", in.Part(raw), in, got, want)
	}
}

var contentCases = []string{
	`"plain"`, `"caf\u00e9 \ud83d\ude00"`, `[{"type":"output_text","text":"a"},{"type":"output_text","text":"bé"}]`,
	`[{"type":"output_text","text":""},{"type":"input_image","text":"x"},{"text":"y"},null,{"type":"t","text":5}]`,
	`[{"type":"output_text","text":null}]`, `[1]`, `[{"Text":"folded"}]`, `[{"text":"a","text":"b"}]`, `{"type":"output_text","text":"one"}`,
	`[]`, `null`, `5`, "\"\xff\xfe\"", `[{"type":"output_text","text":"\u0000\n"}]`,
}

func TestTextRunesAgreeWithContentText(t *testing.T) {
	for _, c := range contentCases {
		checkTextRunes(t, cite.Own([]byte(c)), []byte(c))
	}
	for _, path := range fixturesAndCorpus(t) {
		if strings.HasSuffix(path, ".json") {
			continue
		}
		for _, line := range citedLines(t, path) {
			var l rawLine
			if scanLine(&l, line.B) && l.Payload != nil {
				checkTextRunes(t, line, l.Payload.Content)
			}
		}
	}
}

func FuzzTextRunes(f *testing.F) {
	for _, c := range contentCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, raw []byte) { checkTextRunes(t, cite.Own(raw), raw) })
}
