package fakechat

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func post(t *testing.T, h http.Handler, body string) *httptest.ResponseRecorder {
	t.Helper()
	r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// A request finds its step by the last tool result's call id; a request
// without tools is a side request even when it quotes the marker; a
// streamed answer carries the call, the finish reason and the usage.
func TestRouting(t *testing.T) {
	s := New(map[string][]Reply{"demo": {
		{Items: []Item{{Text: "one"}, {Function: "read", Args: map[string]any{"filePath": "/x"}}}, Usage: Usage{Prompt: 100, Cached: 40, Completion: 5}},
		{Items: []Item{{Text: "two"}}, Usage: Usage{Prompt: 200, Completion: 7}},
	}})
	tools := `"tools":[{"type":"function","function":{"name":"read"}}]`
	w := post(t, s, `{"model":"m","stream":true,`+tools+`,"messages":[{"role":"user","content":[{"type":"text","text":"go [[script:demo]]"}]}]}`)
	var calls, finish, usage string
	sc := bufio.NewScanner(bytes.NewReader(w.Body.Bytes()))
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok || line == "[DONE]" {
			continue
		}
		var c struct {
			Choices []struct {
				Delta struct {
					ToolCalls []struct {
						ID string `json:"id"`
					} `json:"tool_calls"`
				} `json:"delta"`
				Finish *string `json:"finish_reason"`
			} `json:"choices"`
			Usage *struct {
				Prompt int64 `json:"prompt_tokens"`
			} `json:"usage"`
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatal(err)
		}
		for _, ch := range c.Choices {
			for _, tc := range ch.Delta.ToolCalls {
				calls += tc.ID
			}
			if ch.Finish != nil {
				finish = *ch.Finish
			}
		}
		if c.Usage != nil {
			usage = "seen"
		}
	}
	if calls != CallID("demo", 0, 0) || finish != "tool_calls" || usage == "" {
		t.Errorf("stream: calls %q, finish %q, usage %q", calls, finish, usage)
	}
	w = post(t, s, `{"model":"m",`+tools+`,"messages":[{"role":"user","content":"go [[script:demo]]"},
		{"role":"tool","tool_call_id":"`+CallID("demo", 0, 0)+`","content":"out"}]}`)
	if !strings.Contains(w.Body.String(), `"two"`) {
		t.Errorf("step 1 answered %s", w.Body.String())
	}
	post(t, s, `{"model":"m","messages":[{"role":"user","content":"title for: go [[script:demo]]"}]}`)
	if got := s.Served(); len(got) != 2 || got[1].Step != 1 || s.Unscripted() != 1 {
		t.Errorf("served %+v, %d unscripted", got, s.Unscripted())
	}
	if got := s.Served()[0].Usage.Total(); got != 105 {
		t.Errorf("total %d, want 105", got)
	}
}
