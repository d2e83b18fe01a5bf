package sentience

import (
	"path/filepath"
	"testing"

	"github.com/agentmap/agentmap/export/mapfile"
)

// TestLLMCalledWithoutUsage: a request whose log recorded no usage has no
// usage in its llm_called (the schema's usage is optional), not one of 0
// tokens; a request that recorded some has its usage.
func TestLLMCalledWithoutUsage(t *testing.T) {
	for _, tc := range []struct {
		name  string
		usage bool
	}{{"cursor_transcript", false}, {"claude_session", true}} {
		d, err := mapfile.ReadFile(filepath.Join("..", "..", "testdata", "builder", tc.name+".map.json"))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, l := range Convert(d.Map, Options{}) {
			if l.Type != "llm_called" {
				continue
			}
			n++
			if _, ok := l.Data["usage"]; ok != tc.usage {
				t.Errorf("%s: an llm_called has usage %v, want %v: %v", tc.name, ok, tc.usage, l.Data["usage"])
			}
		}
		if n == 0 {
			t.Errorf("%s: no llm_called", tc.name)
		}
	}
}
