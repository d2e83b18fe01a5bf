package gemini_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
)

// A field of an unexpected type (a number for a tool call's id, a string
// for a token count) is a field the log did not give: the message keeps
// its usage and its other tool calls.
func TestFieldOfAnotherTypeLosesNoMessage(t *testing.T) {
	src := filepath.Join("testdata", "real", "tmp", "gemini-demo", "chats", "session-2026-12-01T11-10-9a9684ed.jsonl")
	raw, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	const usage = `"tokens":{"input":4000,"output":70,"cached":2500,"thoughts":0,"tool":0,"total":4070}`
	if !strings.Contains(string(raw), usage) {
		t.Fatal("the recorded chat changed: this test names a message of it")
	}
	spoilt := strings.Replace(string(raw), usage, strings.Replace(usage, `"tool":0`, `"tool":"none"`, 1), 1)
	spoilt = strings.Replace(spoilt, `"toolCalls":[{"id":"read_file__call_gmain_0_0"`,
		`"toolCalls":[{"id":7,"name":"read_file","args":{"file_path":"b.md"},"status":"success"},{"id":"read_file__call_gmain_0_0"`, 1)
	dir := filepath.Join(t.TempDir(), "tmp", "gemini-demo", "chats")
	os.MkdirAll(dir, 0o700)
	path := filepath.Join(dir, filepath.Base(src))
	if err := os.WriteFile(path, []byte(spoilt), 0o600); err != nil {
		t.Fatal(err)
	}
	count := func(evs []event.Event) (calls int, tokens int64) {
		for _, e := range evs {
			switch e.Kind {
			case event.KindCall:
				calls++
			case event.KindLLM:
				tokens += e.LLM.Usage()
			}
		}
		return calls, tokens
	}
	wantCalls, wantTokens := count(mustParse(t, src))
	calls, tokens := count(mustParse(t, path))
	// The call whose id is a number has no id: it is not one the map
	// can pair with its result, and is left out; the others are kept.
	if tokens != wantTokens || calls != wantCalls {
		t.Errorf("with a field of another type: %d calls, %d tokens; the chat as recorded: %d calls, %d tokens",
			calls, tokens, wantCalls, wantTokens)
	}
}

func mustParse(t *testing.T, path string) []event.Event {
	t.Helper()
	evs, _ := parse(t, path)
	return evs
}
