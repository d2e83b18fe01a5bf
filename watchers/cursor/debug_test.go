package cursor

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestDebugDump(t *testing.T) {
	f := os.Getenv("CURSOR_DEBUG")
	if f == "" {
		t.Skip()
	}
	data, _ := os.ReadFile(f)
	src, err := Identify(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := NewParser(src)
	p.SetFile(filepath.Join("/home/x/.cursor/projects", os.Getenv("CURSOR_SLUG"), "agent-transcripts", "a.jsonl"), 1, 2)
	ev, errs, _ := parseAll(t, src, data)
	_ = p
	for _, e := range ev {
		b, _ := json.Marshal(e)
		fmt.Println(string(b))
	}
	fmt.Println("errs", errs)
}

func debugText(s string) string {
	if os.Getenv("CURSOR_DEBUG_TEXT") != "" {
		return ": " + s
	}
	return ""
}
