package cursor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/builder/event"
)

func TestIdentify(t *testing.T) {
	const p = "/home/u/.cursor/projects/home-u-code-app/agent-transcripts/"
	tests := []struct {
		path      string
		first     string
		session   string
		lane      string
		wantError bool
	}{
		{p + "0cc7e0c6-8068-4a1b-9d8e-0123456789ab/0cc7e0c6-8068-4a1b-9d8e-0123456789ab.jsonl", `{"role":"user","message":{"content":[]}}`, "0cc7e0c6-8068-4a1b-9d8e-0123456789ab", "", false},
		{p + "0cc7e0c6-8068-4a1b-9d8e-0123456789ab.jsonl", "", "0cc7e0c6-8068-4a1b-9d8e-0123456789ab", "", false},
		{p + "aaaa1111-2222-4333-8444-555566667777/subagents/5ab5ab00-1111-4000-8000-000000000001.jsonl", `{"role":"assistant","message":{"content":[]}}`, "aaaa1111-2222-4333-8444-555566667777", "sa-5ab5ab001111", false},
		{`C:\Users\u\.cursor\projects\c-Users-u-app\agent-transcripts\p1\subagents\s1.jsonl`, "", "p1", "sa-s1", false},
		{p + "legacy.txt", "", "", "", true},
		{p + ".jsonl", "", "", "", true},
		{p + "x.jsonl", `{"type":"user","message":{"role":"user"},"sessionId":"s","uuid":"u"}`, "", "", true},
		{p + "x.jsonl", `{"timestamp":"t","type":"session_meta","payload":{}}`, "", "", true},
	}
	for _, tt := range tests {
		src, err := Identify(tt.path, []byte(tt.first))
		if (err != nil) != tt.wantError {
			t.Errorf("%s: error %v", tt.path, err)
			continue
		}
		if err == nil && (src.Session != tt.session || src.Lane != tt.lane || src.Agent != "cursor") {
			t.Errorf("%s: %+v", tt.path, src)
		}
	}
}

func TestLooksLike(t *testing.T) {
	tests := map[string]bool{
		`{"role":"user","message":{"content":[{"type":"text","text":"x"}]}}`:                    true,
		`{"role":"assistant","message":{"content":[]}}`:                                         true,
		`{"type":"turn_ended","status":"success"}`:                                              true,
		`{"role":"system","message":{}}`:                                                        false,
		`{"role":"user"}`:                                                                       false,
		`{"type":"user","message":{"role":"user","content":"x"},"uuid":"u","sessionId":"s"}`:    false,
		`{"parentUuid":null,"role":"user","message":{}}`:                                        false,
		`{"timestamp":"2025-01-01T00:00:00Z","type":"response_item","payload":{"role":"user"}}`: false,
		`{"role":1,"message":{}}`:                                                               false,
		`not json`:                                                                              false,
		``:                                                                                      false,
		`[]`:                                                                                    false,
	}
	for line, want := range tests {
		if got := LooksLike([]byte(line)); got != want {
			t.Errorf("LooksLike(%s) = %v", line, got)
		}
	}
}

func TestPatchFiles(t *testing.T) {
	patch := "*** Begin Patch\n*** Add File: a/new.go\n+x\n*** Update File: b.go\r\n@@\n-y\n+z\n" +
		"*** Update File: old.go\n*** Move to: moved.go\n*** Delete File: gone.go\n*** End Patch"
	want := []patchFile{{"a/new.go", "create"}, {"b.go", "modify"}, {"old.go", "rename-from"},
		{"moved.go", "rename-to"}, {"gone.go", "delete"}}
	if got := patchFiles(patch); !reflect.DeepEqual(got, want) {
		t.Errorf("patchFiles = %+v", got)
	}
	if got := patchFiles("no headers\n+*** Add File: inside a hunk is still a header line? no: prefixed\n"); len(got) != 0 {
		t.Errorf("hunk text taken for a header: %+v", got)
	}
}

func TestPromptShape(t *testing.T) {
	tests := []struct {
		text        string
		chars, urls int
	}{
		{"hello", 5, 0},
		{"  hello  \n", 5, 0},
		{"<user_query>\nhi there\n</user_query>", 8, 0},
		{"<external_links>https://a.example https://b.example</external_links>\n<user_query>see https://c.example/x</user_query>", 23, -1},
		{"<user_query>a</user_query><user_query>bc</user_query>", 3, 0},
		{"<user_query>unterminated", 12, 0},
		{"<user_query>日本語</user_query>", 3, 0},
		{"<user_info>\nOS: linux https://x.example\n</user_info>\n<rules>r</rules>", 0, 0},
		{"<b>bold</b> and more", 20, 0},
		{"<not closed", 11, 0},
		{"<a href=x>link</a>", 18, 0},
	}
	for _, tt := range tests {
		c, u := promptShape(tt.text)
		if c != tt.chars || (tt.urls >= 0 && u != tt.urls) || u > 1 {
			t.Errorf("promptShape(%q) = %d, %d", tt.text, c, u)
		}
	}
}

func TestRootFor(t *testing.T) {
	tests := []struct{ path, project, want string }{
		{"/Users/a/code/agent-tail/src/x.ts", "Users-a-code-agent-tail", "/Users/a/code/agent-tail"},
		{"/Users/a/code/agent-tail", "Users-a-code-agent-tail", "/Users/a/code/agent-tail"},
		{"/Users/a/code/agent/tail/x", "Users-a-code-agent-tail", "/Users/a/code/agent/tail"},
		{"/Users/a/other/x", "Users-a-code-agent-tail", ""},
		{"src/x.ts", "Users-a-code-agent-tail", ""},
		{"/home/u/my.app/x.go", "home-u-my-app", "/home/u/my.app"},
		{`C:\Users\u\app\main.go`, "c-Users-u-app", "C:/Users/u/app"},
		{"/x", "", ""},
	}
	for _, tt := range tests {
		if got := rootFor(tt.path, tt.project); got != tt.want {
			t.Errorf("rootFor(%q, %q) = %q, want %q", tt.path, tt.project, got, tt.want)
		}
	}
}

func TestDecodeRoot(t *testing.T) {
	id := make([]byte, 32)
	id[0] = 0xab
	b := []byte{0x08, 0x96, 0x01} // field 1 varint: not a child
	b = append(b, 0x0a, 32)
	b = append(b, id...)
	b = append(b, 0x0a, 3, 1, 2, 3) // field 1, not 32 bytes: ignored
	b = append(b, 0x11, 1, 2, 3, 4, 5, 6, 7, 8)
	b = append(b, 0x4a, 4, '/', 'a', '/', 'b')
	r := decodeRoot(b)
	if len(r.children) != 1 || r.children[0][:2] != "ab" || r.workspace != "/a/b" {
		t.Errorf("decodeRoot = %+v", r)
	}
	for _, bad := range [][]byte{{0x0a, 0xff}, {0x0a, 50, 1}, {0xff}, {0x0f}, {0x11, 1}} {
		_ = decodeRoot(bad) // must not panic
	}
}

func TestDecodeInput(t *testing.T) {
	for _, raw := range []string{`{"path":"a"}`, `"{\"path\":\"a\"}"`, ` {"path":"a"} `} {
		if got := decodeInput([]byte(raw)).paths(); !reflect.DeepEqual(got, []string{"a"}) {
			t.Errorf("decodeInput(%s).paths() = %v", raw, got)
		}
	}
	for _, raw := range []string{``, `null`, `"x"`, `[1]`, `{`, `"{bad"`} {
		if in := decodeInput([]byte(raw)); len(in) != 0 {
			t.Errorf("decodeInput(%s) = %v", raw, in)
		}
	}
	in := decodeInput([]byte(`{"effectiveUri":"file:///c%3A/Users/u/a.go","paths":["x","",3],"path":7}`))
	if got := in.paths(); !reflect.DeepEqual(got, []string{"c:/Users/u/a.go"}) {
		t.Errorf("paths = %v", got)
	}
}

func TestFileTimes(t *testing.T) {
	p := filepath.Join(t.TempDir(), "t.jsonl")
	if err := os.WriteFile(p, []byte("{}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mt := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(p, mt, mt); err != nil {
		t.Fatal(err)
	}
	start, end, err := FileTimes(p)
	if err != nil {
		t.Fatal(err)
	}
	if end != mt.UnixMilli() || start < 0 || start > end {
		t.Errorf("FileTimes = %d, %d; want end %d and 0 <= start <= end", start, end, mt.UnixMilli())
	}
	t.Logf("birth %d", start)
	if _, _, err := FileTimes(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Error("no error for a missing file")
	}
}

// TestTranscriptLines pins single-line behaviours.
func TestTranscriptLines(t *testing.T) {
	tests := []struct {
		line  string
		kinds string
		err   bool
	}{
		{`{"role":"assistant","message":{"content":[]}}`, "", false},
		{`{"role":"assistant","message":{"content":null}}`, "", false},
		{`{"role":"assistant","message":{"content":[{"type":"text","text":"x"}]}}`, "llm", false},
		{`{"role":"assistant","message":{"content":[{"type":"text","text":5},{"type":"tool_use","name":"Shell","input":{"command":"ls"}}]}}`, "llm call", false},
		{`{"role":"user","message":{"content":[{"type":"tool_result","tool_use_id":"x","content":"out"}]}}`, "", false},
		{`{"role":"user","message":{"content":"   "}}`, "", false},
		{`{"role":"user","message":{"content":"hi"}} trailing`, "", true},
		{`{"role":"user","message":{"content":7}}`, "", true},
		{`{"role":"user","message":"x"}`, "", false},
		{`{"type":"turn_ended","status":"error"}`, "error turn_end", false},
		{`{"type":"turn_ended"}`, "turn_end", false},
		{`{"type":"something_new","role":"assistant"}`, "", false},
		{`{"role":"assistant","message":{"content":[{"type":"tool_use","name":"ApplyPatch","input":{"patch":"x"}}]}}`, "llm call", false},
	}
	for _, tt := range tests {
		p := NewParser(watchersSource("x.jsonl"))
		p.st.Started = true // no session header
		evs, err := p.Line([]byte(tt.line), nil)
		if (err != nil) != tt.err {
			t.Errorf("%s: error %v", tt.line, err)
		}
		var ks []string
		for _, e := range evs {
			ks = append(ks, string(e.Kind))
		}
		if got := strings.Join(ks, " "); got != tt.kinds {
			t.Errorf("%s: kinds %q, want %q", tt.line, got, tt.kinds)
		}
	}
}

// TestBubbleEdgeCases: repeated call ids, absurd token counts, bubbles of
// an unknown type, and a conversation with no time at all.
func TestBubbleEdgeCases(t *testing.T) {
	mk := func(raw string) *bubble {
		b, err := decodeBubble([]byte(raw))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cv := convo{id: "c", createdMs: 1700000000000, updatedMs: 1700000005000, bubbles: []*bubble{
		mk(`{"bubbleId":"u","type":1,"text":"hi"}`),
		mk(`{"bubbleId":"a","type":2,"tokenCount":{"inputTokens":-5,"outputTokens":1e30},"toolFormerData":{"name":"read_file","toolCallId":"same","status":"completed","rawArgs":"{\"target_file\":\"a.go\"}"}}`),
		mk(`{"bubbleId":"b","type":2,"toolFormerData":{"name":"read_file","toolCallId":"same","status":"completed"}}`),
		mk(`{"bubbleId":"x","type":7,"text":"?"}`),
	}}
	c := cv.build()
	checkConversation(t, c)
	var ids []string
	for _, e := range c.Events {
		if e.Kind == event.KindCall {
			ids = append(ids, e.Call.ID)
		}
		if e.Kind == event.KindLLM && (e.LLM.In != 0 || e.LLM.Out != 0) {
			t.Errorf("implausible tokens kept: %+v", e.LLM)
		}
		if e.T != 1700000000000 {
			t.Errorf("untimed bubble at %d, want the composer's creation", e.T)
		}
	}
	if strings.Join(ids, ",") != "same,bubble:b" {
		t.Errorf("call ids %v", ids)
	}
	if s := c.Events[0].Session; s.StartT != 1700000000000 || s.EndT != 1700000005000 {
		t.Errorf("session bounds %+v", s)
	}
	if (convo{id: "d", bubbles: []*bubble{mk(`{"type":7}`)}}).build().NativeID != "" {
		t.Error("a conversation without messages was kept")
	}
}

func TestSkillCall(t *testing.T) {
	p := NewParser(watchersSource("x.jsonl"))
	evs, err := p.Line([]byte(`{"role":"assistant","message":{"content":[{"type":"tool_use","name":"Skill","input":{"skill":"review-loop","args":"CANARY"}}]}}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := evs[len(evs)-1].Call
	if c == nil || c.Kind != "skill" || c.Skill != "review-loop" {
		t.Errorf("skill call %+v", c)
	}
}

// TestAutoModelIsNoModel: Cursor records its Auto setting as the model
// name "default"; it names no model, so no record carries it.
func TestAutoModelIsNoModel(t *testing.T) {
	tests := []struct{ bubble, composer, want string }{
		{`{"type":2,"modelInfo":{"modelName":"default"}}`, `{"composerId":"c1","modelConfig":{"modelName":"default"}}`, ""},
		{`{"type":2,"modelInfo":{"modelName":"Auto"}}`, `{"composerId":"c1","modelConfig":{"modelName":"auto"}}`, ""},
		{`{"type":2,"modelInfo":{"modelName":"claude-4.5-sonnet"}}`, `{"composerId":"c1","modelConfig":{"modelName":"claude-4.5-sonnet"}}`, "claude-4.5-sonnet"},
	}
	for _, tt := range tests {
		var b bubble
		var c composer
		if err := json.Unmarshal([]byte(tt.bubble), &b); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(tt.composer), &c); err != nil {
			t.Fatal(err)
		}
		if got := b.model(); got != tt.want {
			t.Errorf("bubble %s: model %q, want %q", tt.bubble, got, tt.want)
		}
		if got := composerConvo(&c, nil, "").model; got != tt.want {
			t.Errorf("composer %s: model %q, want %q", tt.composer, got, tt.want)
		}
	}
}
