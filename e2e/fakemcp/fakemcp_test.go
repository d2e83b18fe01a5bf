package fakemcp

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestServe(t *testing.T) {
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"lookup","arguments":{"key":"k"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"broken"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"nope"}}`,
		`not json`,
	}, "\n")
	var out bytes.Buffer
	if err := Serve(strings.NewReader(in), &out, "e2e", []Tool{{Name: "lookup", Output: "v"}, {Name: "broken", Output: "x", Fail: true}}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 5 {
		t.Fatalf("%d answers, want 5:\n%s", len(lines), out.String())
	}
	var got []string
	for _, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		switch r := m["result"].(type) {
		case map[string]any:
			switch {
			case r["protocolVersion"] != nil:
				got = append(got, "init")
			case r["tools"] != nil:
				got = append(got, "list")
			default:
				got = append(got, "call:"+r["content"].([]any)[0].(map[string]any)["text"].(string)+":"+map[bool]string{true: "err", false: "ok"}[r["isError"].(bool)])
			}
		default:
			got = append(got, "error")
		}
	}
	if s := strings.Join(got, " "); s != "init list call:v:ok call:x:err error" {
		t.Errorf("answers: %s", s)
	}
}
