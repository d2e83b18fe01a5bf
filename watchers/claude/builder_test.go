package claude_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers/claude"
)

// TestBuilderCountsSplitResponsesOnce runs the basic fixture through the
// map builder: the three lines of msg_1 (output 3, then 120, then 120) are
// one request with the largest snapshot, and the session totals count
// every response once.
func TestBuilderCountsSplitResponsesOnce(t *testing.T) {
	path := filepath.Join("..", "..", "testdata", "claude", "basic.jsonl")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	var p *claude.Parser
	var events []event.Event
	for sc.Scan() {
		if p == nil {
			src, err := claude.Identify(path, sc.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			p = claude.NewParser(src)
		}
		events, _ = p.Line(sc.Bytes(), events)
	}
	m, err := builder.Build(events, builder.Options{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := m.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Totals struct {
			Requests     int   `json:"requests"`
			Tokens       int64 `json:"tokens"`
			OutputTokens int64 `json:"outputTokens"`
			UserTurns    int   `json:"userTurns"`
		} `json:"totals"`
		Events []struct {
			Kind      string `json:"kind"`
			Out       int64  `json:"out"`
			ToolCalls int    `json:"toolCalls"`
			Thinking  bool   `json:"thinking"`
			Latency   int64  `json:"latency"`
		} `json:"events"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var llm []int
	for i, e := range doc.Events {
		if e.Kind == "llm" {
			llm = append(llm, i)
		}
	}
	// msg_1..msg_6; the synthetic lines are not requests.
	if len(llm) != 6 || doc.Totals.Requests != 6 {
		t.Fatalf("%d llm events, %d requests; want 6", len(llm), doc.Totals.Requests)
	}
	first := doc.Events[llm[0]]
	if first.Out != 120 || first.ToolCalls != 1 || !first.Thinking || first.Latency != 2500 {
		t.Errorf("msg_1 request: %+v", first)
	}
	// The largest snapshot of each response, msg_1 to msg_6.
	if want := int64(1326 + 1351 + 1441 + 1542 + 1692 + 1707); doc.Totals.Tokens != want {
		t.Errorf("tokens %d, want %d (each response once)", doc.Totals.Tokens, want)
	}
	if doc.Totals.UserTurns != 3 {
		t.Errorf("user turns %d, want 3 (prompt, /commit, prompt with image)", doc.Totals.UserTurns)
	}
}
