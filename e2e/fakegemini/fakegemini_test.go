package fakegemini

import (
	"bufio"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// post sends a streamGenerateContent request and returns the status and
// the decoded server-sent events.
func post(t *testing.T, url, body string) (int, []map[string]any) {
	t.Helper()
	resp, err := http.Post(url+"/v1beta/models/gemini-2.5-pro:streamGenerateContent?alt=sse", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var events []map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var ev map[string]any
			if err := json.Unmarshal([]byte(strings.TrimSpace(data)), &ev); err != nil {
				t.Fatalf("event %q: %v", data, err)
			}
			events = append(events, ev)
		}
	}
	return resp.StatusCode, events
}

const tools = `"tools":[{"functionDeclarations":[{"name":"run_shell_command"}]}]`

func TestScriptedTurns(t *testing.T) {
	s := New(map[string][]Reply{"demo": {
		{Parts: []Part{{Thought: "think"}, {Text: "plan"}, {Function: "run_shell_command", Args: map[string]any{"command": "ls"}}},
			Usage: Usage{Input: 100, Cached: 40, Output: 7, Thoughts: 3}, FailFirst: 500},
		{Parts: []Part{{Text: "done"}}, Usage: Usage{Input: 200, Output: 2}},
	}})
	srv := httptest.NewServer(s)
	defer srv.Close()
	first := `{"contents":[{"role":"user","parts":[{"text":"[[script:demo]] go"}]}],` + tools + `}`
	if code, _ := post(t, srv.URL, first); code != 500 {
		t.Fatalf("first attempt: %d, want 500", code)
	}
	code, evs := post(t, srv.URL, first)
	if code != 200 || len(evs) != 3 {
		t.Fatalf("retry: %d, %d events", code, len(evs))
	}
	last := evs[len(evs)-1]
	um := last["usageMetadata"].(map[string]any)
	if um["totalTokenCount"].(float64) != 110 || um["cachedContentTokenCount"].(float64) != 40 {
		t.Errorf("usage %v", um)
	}
	part := last["candidates"].([]any)[0].(map[string]any)["content"].(map[string]any)["parts"].([]any)[0].(map[string]any)
	fc := part["functionCall"].(map[string]any)
	if fc["id"] != CallID("demo", 0, 0) || fc["name"] != "run_shell_command" {
		t.Errorf("function call %v", fc)
	}
	// The client sends the response back under <tool>__<id>.
	next := `{"contents":[{"role":"user","parts":[{"text":"[[script:demo]] go"}]},{"role":"model","parts":[{"functionCall":{"name":"run_shell_command"}}]},` +
		`{"role":"user","parts":[{"functionResponse":{"id":"run_shell_command__` + CallID("demo", 0, 0) + `","name":"run_shell_command","response":{"output":"x"}}}]}],` + tools + `}`
	if _, evs := post(t, srv.URL, next); len(evs) != 1 || !strings.Contains(mustJSON(evs[0]), `"done"`) {
		t.Errorf("second step: %v", evs)
	}
	// A request without tools (the client's own side question) is not a step.
	if _, evs := post(t, srv.URL, `{"contents":[{"role":"user","parts":[{"text":"[[script:demo]] summarise"}]}]}`); len(evs) != 1 {
		t.Errorf("side request: %v", evs)
	}
	if got := s.Served(); len(got) != 2 || got[0].Step != 0 || got[1].Step != 1 || got[0].Model != "gemini-2.5-pro" {
		t.Errorf("served %+v", got)
	}
	if s.Unscripted() != 1 || len(s.Offered()) != 1 {
		t.Errorf("unscripted %d, offered %v", s.Unscripted(), s.Offered())
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
