package codex

import (
	"encoding/json"
	"testing"
)

func TestTokenCountsClamped(t *testing.T) {
	var u tokenUsage
	if err := json.Unmarshal([]byte(`{"input_tokens":-6,"cached_input_tokens":9223372036854775807,"output_tokens":12}`), &u); err != nil {
		t.Fatal(err)
	}
	if u.Input != 0 || u.Cached != maxTokenCount || u.Output != 12 {
		t.Fatalf("clamped usage %+v", u)
	}
}
