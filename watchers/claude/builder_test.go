package claude_test

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
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
	m := buildFixture(t, "basic.jsonl")
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

// TestBuilderCostState builds the cost-state fixture: the 1-hour cache
// writes are priced at 2x input, the fast request at Opus 4.6's fast
// multiplier, the WebFetch summary Claude Code billed on haiku without a
// transcript line becomes a side request, and the map's tokens equal
// Claude Code's own total.
func TestBuilderCostState(t *testing.T) {
	m := buildFixture(t, "coststate.jsonl")
	var costs []float64
	for _, e := range m.Events {
		if e.Kind == "llm" {
			costs = append(costs, e.Cost)
		}
	}
	want := []float64{
		(5*5 + 10000*6.25 + 20000*10 + 200*25) / 1e6,    // 1-hour writes at $10
		6 * (8*5 + 500*6.25 + 30000*0.5 + 100*25) / 1e6, // fast: 6x
		(2400*1 + 180*5) / 1e6,                          // the haiku side request
	}
	if len(costs) != len(want) {
		t.Fatalf("costs %v, want %v", costs, want)
	}
	for i := range want {
		if d := costs[i] - want[i]; d > 1e-6 || d < -1e-6 {
			t.Errorf("request %d costs %v, want %v", i, costs[i], want[i])
		}
	}
	if m.Totals.Tokens != 13+300+30000+30500+2400+180 || m.Totals.Requests != 3 {
		t.Errorf("tokens %d, requests %d", m.Totals.Tokens, m.Totals.Requests)
	}
	if len(m.Session.Models) != 2 {
		t.Errorf("models %v", m.Session.Models)
	}
}

// buildFixture parses a testdata/claude transcript line by line and builds
// its map.
func buildFixture(t *testing.T, name string) *builder.Map {
	t.Helper()
	path := filepath.Join("..", "..", "testdata", "claude", name)
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
	return m
}

// TestBuilderQuietCommit: a quiet git commit is confirmed by the next
// git log that prints its sha, and the commit event follows the commit's
// own call; a quiet commit that nothing confirms is no commit.
func TestBuilderQuietCommit(t *testing.T) {
	m := buildFixture(t, "quietcommit.jsonl")
	var kinds []string
	for _, e := range m.Events {
		if e.Kind != "llm" && e.Kind != "user" {
			kinds = append(kinds, e.Kind+":"+e.Verb+e.SHA)
		}
	}
	want := []string{"exec:git add", "commit:9f3c2ab1", "exec:ls", "exec:git log", "exec:git commit", "exec:git status"}
	if strings.Join(kinds, " ") != strings.Join(want, " ") || m.Totals.Commits != 1 {
		t.Errorf("events %v (commits %d), want %v", kinds, m.Totals.Commits, want)
	}
}
