package fakeanthropic

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func scripts() map[string][]Reply {
	return map[string][]Reply{
		"main": {
			{Blocks: []Block{{Thinking: "think"}, {Text: "hello"}, {Tool: "Read", Input: map[string]any{"file_path": "/x"}}},
				Usage: Usage{In: 1, CacheWrite: 2, CacheRead: 3, Out: 4}},
			{Blocks: []Block{{Text: "bye"}}, Usage: Usage{In: 5, Out: 6}, FailFirst: 529},
		},
		"sub-agent": {{Blocks: []Block{{Text: "sub"}}}},
	}
}

const tools = `"tools":[{"name":"Read"}]`

func TestRoute(t *testing.T) {
	s := New(scripts())
	for _, tc := range []struct {
		name, body string
		script     string
		step       int
		ok         bool
	}{
		{"marked prompt", `{"messages":[{"role":"user","content":"[[script:main]] go"}]}`, "main", 0, true},
		{"prompt in blocks", `{"messages":[{"role":"user","content":[{"type":"text","text":"<r/>"},{"type":"text","text":"[[script:sub-agent]]"}]}]}`, "sub-agent", 0, true},
		{"tool result", `{"messages":[{"role":"user","content":"[[script:main]]"},{"role":"assistant","content":[]},
			{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + ToolID("main", 0, 0) + `"}]}]}`, "main", 1, true},
		{"later prompt wins", `{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + ToolID("main", 0, 0) + `"}]},
			{"role":"assistant","content":[]},{"role":"user","content":"[[script:sub-agent]]"}]}`, "sub-agent", 0, true},
		{"foreign id", `{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_01abc"}]}]}`, "", 0, false},
		{"no marker", `{"messages":[{"role":"user","content":"title please"}]}`, "", 0, false},
		{"only the last prompt counts", `{"messages":[{"role":"user","content":"[[script:main]]"},{"role":"assistant","content":[]},
			{"role":"user","content":"summarise"}]}`, "", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var req request
			if err := json.Unmarshal([]byte(tc.body), &req); err != nil {
				t.Fatal(err)
			}
			script, step, ok := s.route(&req)
			if script != tc.script || step != tc.step || ok != tc.ok {
				t.Errorf("route = %q, %d, %v; want %q, %d, %v", script, step, ok, tc.script, tc.step, tc.ok)
			}
		})
	}
}

// TestStream checks the event sequence and that deltas reassemble.
func TestStream(t *testing.T) {
	s := New(scripts())
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/messages",
		strings.NewReader(`{"model":"m","stream":true,`+tools+`,"messages":[{"role":"user","content":"[[script:main]]"}]}`)))
	var types []string
	text, input := "", ""
	var stop string
	var out float64
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("bad event %s: %v", data, err)
		}
		types = append(types, ev["type"].(string))
		if d, ok := ev["delta"].(map[string]any); ok {
			switch d["type"] {
			case "text_delta":
				text += d["text"].(string)
			case "input_json_delta":
				input += d["partial_json"].(string)
			case nil:
				stop = d["stop_reason"].(string)
				out = ev["usage"].(map[string]any)["output_tokens"].(float64)
			}
		}
	}
	want := "message_start ping content_block_start content_block_delta content_block_delta content_block_delta content_block_stop " +
		"content_block_start content_block_delta content_block_delta content_block_stop " +
		"content_block_start content_block_delta content_block_delta content_block_stop message_delta message_stop"
	if got := strings.Join(types, " "); got != want {
		t.Errorf("events:\n%s\nwant\n%s", got, want)
	}
	if text != "hello" || input != `{"file_path":"/x"}` || stop != "tool_use" || out != 4 {
		t.Errorf("text %q input %q stop %q out %v", text, input, stop, out)
	}
	if got := s.Served(); len(got) != 1 || got[0].Usage.Total() != 10 || got[0].Tools[0] != "Read" {
		t.Errorf("served = %+v", got)
	}
}

// TestFailFirst answers a step's first attempt with the scripted status
// and the retry with the reply.
func TestFailFirst(t *testing.T) {
	s := New(scripts())
	body := `{"model":"m",` + tools + `,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + ToolID("main", 0, 0) + `"}]}]}`
	var codes []int
	for i := 0; i < 2; i++ {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/messages", strings.NewReader(body)))
		codes = append(codes, rec.Code)
	}
	if codes[0] != 529 || codes[1] != 200 || len(s.Served()) != 1 {
		t.Errorf("codes %v, served %d; want [529 200], 1", codes, len(s.Served()))
	}
}

// TestUnscripted: requests without tools (titles) or past a script's end
// get a short text and are not recorded as served.
func TestUnscripted(t *testing.T) {
	s := New(scripts())
	for _, body := range []string{
		`{"model":"m","messages":[{"role":"user","content":"[[script:main]]"}]}`,
		`{"model":"m",` + tools + `,"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + ToolID("main", 1, 0) + `"}]}]}`,
	} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/messages", strings.NewReader(body)))
		if rec.Code != 200 {
			t.Errorf("status %d", rec.Code)
		}
	}
	if s.Unscripted() != 2 || len(s.Served()) != 0 {
		t.Errorf("unscripted %d served %d; want 2, 0", s.Unscripted(), len(s.Served()))
	}
}

// TestCompactionRequest: a request that repeats a step's conversation with
// more text is a side request; an identical repeat is a retry.
func TestCompactionRequest(t *testing.T) {
	s := New(scripts())
	step1 := `{"role":"user","content":[{"type":"tool_result","tool_use_id":"` + ToolID("main", 0, 0) + `"}`
	for _, last := range []string{step1 + `]}`, step1 + `]}`, step1 + `,{"type":"text","text":"summarise"}]}`} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/messages",
			strings.NewReader(`{"model":"m",`+tools+`,"messages":[`+last+`]}`)))
	}
	// The first attempt fails (FailFirst), the retry and the identical
	// repeat are served, the compaction request is not.
	if len(s.Served()) != 1 || s.Unscripted() != 1 {
		t.Errorf("served %d unscripted %d; want 1, 1", len(s.Served()), s.Unscripted())
	}
}
