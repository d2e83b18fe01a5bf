package fakeopenai

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
			{Items: []Item{{Reasoning: "r"}, {Text: "hi"}, {Function: "exec_command", Args: map[string]any{"cmd": "ls"}},
				{Custom: "apply_patch", Input: "*** Begin Patch"}},
				Usage: Usage{Input: 100, Cached: 60, Output: 7, Reasoning: 2}},
			{Items: []Item{{Text: "bye"}}},
		},
	}
}

func userMsg(text string) string {
	return `{"type":"message","role":"user","content":[{"type":"input_text","text":"` + text + `"}]}`
}

func TestRoute(t *testing.T) {
	s := New(scripts())
	for _, tc := range []struct {
		name, input string
		script      string
		step        int
		ok          bool
	}{
		{"marked prompt", userMsg("<environment_context/>") + "," + userMsg("[[script:main]] go"), "main", 0, true},
		{"function output", userMsg("[[script:main]]") + `,{"type":"function_call_output","call_id":"` + CallID("main", 0, 0) + `"}`, "main", 1, true},
		{"custom output", userMsg("[[script:main]]") + `,{"type":"custom_tool_call_output","call_id":"` + CallID("main", 0, 1) + `"},` + userMsg("<context/>"), "main", 1, true},
		{"no marker", userMsg("hello"), "", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var req request
			if err := json.Unmarshal([]byte(`{"input":[`+tc.input+`]}`), &req); err != nil {
				t.Fatal(err)
			}
			script, step, ok := s.route(&req)
			if script != tc.script || step != tc.step || ok != tc.ok {
				t.Errorf("route = %q, %d, %v; want %q, %d, %v", script, step, ok, tc.script, tc.step, tc.ok)
			}
		})
	}
}

func TestStream(t *testing.T) {
	s := New(scripts())
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/responses",
		strings.NewReader(`{"model":"m","stream":true,"input":[`+userMsg("[[script:main]]")+`]}`)))
	var done []string
	var usage map[string]any
	sc := bufio.NewScanner(rec.Body)
	for sc.Scan() {
		data, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var ev struct {
			Type     string         `json:"type"`
			Item     map[string]any `json:"item"`
			Response map[string]any `json:"response"`
		}
		if err := json.Unmarshal([]byte(data), &ev); err != nil {
			t.Fatalf("bad event %s: %v", data, err)
		}
		switch ev.Type {
		case "response.output_item.done":
			done = append(done, ev.Item["type"].(string)+":"+str(ev.Item["call_id"]))
		case "response.completed":
			usage = ev.Response["usage"].(map[string]any)
		}
	}
	want := "reasoning: message: function_call:" + CallID("main", 0, 0) + " custom_tool_call:" + CallID("main", 0, 1)
	if got := strings.Join(done, " "); got != want {
		t.Errorf("items %s, want %s", got, want)
	}
	if usage["input_tokens"] != 100.0 || usage["total_tokens"] != 107.0 ||
		usage["input_tokens_details"].(map[string]any)["cached_tokens"] != 60.0 {
		t.Errorf("usage %v", usage)
	}
	if got := s.Served(); len(got) != 1 || got[0].Usage.Total() != 107 || strings.Join(got[0].Tools, ",") != "exec_command,apply_patch" {
		t.Errorf("served %+v", got)
	}
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func TestFailFirst(t *testing.T) {
	sc := scripts()
	sc["main"][0].FailFirst = 500
	s := New(sc)
	var codes []int
	for i := 0; i < 2; i++ {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/v1/responses",
			strings.NewReader(`{"model":"m","stream":true,"input":[`+userMsg("[[script:main]]")+`]}`)))
		codes = append(codes, rec.Code)
	}
	if codes[0] != 500 || codes[1] != 200 || len(s.Served()) != 1 {
		t.Errorf("codes %v, served %d; want [500 200], 1", codes, len(s.Served()))
	}
}
