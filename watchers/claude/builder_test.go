package claude_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
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

// A cost-state total names a model as Claude Code asked for it: a
// 1M-context Opus as claude-opus-4-6[1m], a Bedrock one with its
// provider's prefix and version tail, a Vertex one with its @date, where
// the assistant lines say claude-opus-4-6. The total is still the same
// model's: the session's tokens and cost are those of the plain fixture,
// not twice its requests, and it has no second Opus model.
func TestBuilderCostStateModelSpellings(t *testing.T) {
	plain := buildFixture(t, "coststate.jsonl")
	raw, err := os.ReadFile(filepath.Join("..", "..", "testdata", "claude", "coststate.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"claude-opus-4-6[1m]", "us.anthropic.claude-opus-4-6-v1:0",
		"anthropic.claude-opus-4-6-v2:0", "global.anthropic.claude-opus-4-6-v1", "claude-opus-4-6@20260101", "Claude-Opus-4-6"} {
		spelled := bytes.Replace(raw, []byte(`"modelUsage":{"claude-opus-4-6":`), []byte(`"modelUsage":{"`+name+`":`), 1)
		if bytes.Equal(spelled, raw) {
			t.Fatal("the fixture's cost-state line has no claude-opus-4-6 total")
		}
		path := filepath.Join(t.TempDir(), "0a1b2c3d-0000-4000-8000-0000000000dd.jsonl")
		if err := os.WriteFile(path, spelled, 0o600); err != nil {
			t.Fatal(err)
		}
		m := buildFile(t, path)
		if m.Totals.Tokens != plain.Totals.Tokens || m.Totals.Requests != plain.Totals.Requests || m.Totals.CostUSD != plain.Totals.CostUSD {
			t.Errorf("%s: tokens %d, requests %d, cost %v; want %d, %d, %v", name, m.Totals.Tokens, m.Totals.Requests, m.Totals.CostUSD,
				plain.Totals.Tokens, plain.Totals.Requests, plain.Totals.CostUSD)
		}
		if !slices.Equal(m.Session.Models, plain.Session.Models) {
			t.Errorf("%s: models %v, want %v", name, m.Session.Models, plain.Session.Models)
		}
	}
	// A total of a model no request names keeps the client's name: the
	// side request of the haiku summary.
	if !slices.Contains(plain.Session.Models, "claude-haiku-4-5-20251001") {
		t.Errorf("models %v", plain.Session.Models)
	}
}

// buildFixture parses a testdata/claude transcript line by line and builds
// its map.
func buildFixture(t *testing.T, name string) *builder.Map {
	t.Helper()
	return buildFile(t, filepath.Join("..", "..", "testdata", "claude", name))
}

// buildFile parses a Claude Code transcript line by line and builds its
// map.
func buildFile(t *testing.T, path string) *builder.Map {
	t.Helper()
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
	want := []string{"exec:git add", "commit:9f3c2ab1", "exec:git log", "exec:ls", "exec:git commit", "exec:git status"}
	if strings.Join(kinds, " ") != strings.Join(want, " ") || m.Totals.Commits != 1 {
		t.Errorf("events %v (commits %d), want %v", kinds, m.Totals.Commits, want)
	}
}
