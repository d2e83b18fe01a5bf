package claude_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers/claude"
)

// A parent transcript whose agent_progress lines relay a subagent's lines,
// and the subagent's own file with the same responses (Claude Code 2.1.x
// writes both). The subagent's first line of each response (its thinking)
// is not relayed, as in the real logs. Every text is a canary.
const (
	relSession = "0a1b2c3d-0000-4000-8000-0000000000a1"
	relAgent   = "a0123456789abcdef"
	relLane    = "sa-" + relAgent
)

func relParent() []string {
	head := `"sessionId":"` + relSession + `","cwd":"/w/app","version":"2.1.71"`
	progress := func(ts, message string, extra string) string {
		return `{"type":"progress","parentUuid":"x","isSidechain":false,"data":{"type":"agent_progress","agentId":"` + relAgent +
			`","prompt":"CANARY_PROGRESS_PROMPT","message":` + message + extra + `},"toolUseID":"agent_msg_1","parentToolUseID":"toolu_A1",` +
			`"uuid":"p-` + ts + `","timestamp":"2026-05-02T08:00:` + ts + `.500Z",` + head + `}`
	}
	relayed := func(ts, id, req, content, usage string) string {
		return `{"type":"assistant","timestamp":"2026-05-02T08:00:` + ts + `.000Z","requestId":"` + req +
			`","uuid":"r-` + ts + `","message":{"model":"claude-haiku-4-5-20251001","id":"` + id +
			`","type":"message","role":"assistant","content":[` + content + `],"stop_reason":null,"usage":` + usage + `}}`
	}
	return []string{
		`{"type":"user","uuid":"u1","timestamp":"2026-05-02T08:00:00.000Z",` + head + `,"message":{"role":"user","content":"CANARY_USER_PROMPT"}}`,
		`{"type":"assistant","uuid":"a1","timestamp":"2026-05-02T08:00:01.000Z","requestId":"req_P1",` + head +
			`,"message":{"id":"msg_P1","model":"claude-opus-4-6","role":"assistant","stop_reason":"tool_use","content":[` +
			`{"type":"tool_use","id":"toolu_A1","name":"Agent","input":{"subagent_type":"Explore","description":"CANARY_DESC","prompt":"CANARY_TASK"}}],` +
			`"usage":{"input_tokens":10,"cache_creation_input_tokens":1000,"cache_read_input_tokens":0,"output_tokens":50}}}`,
		progress("02", `{"type":"user","timestamp":"2026-05-02T08:00:02.000Z","uuid":"r-u1","message":{"role":"user","content":[{"type":"text","text":"CANARY_TASK"}]}}`, ""),
		progress("04", relayed("04", "msg_S1", "req_S1", `{"type":"text","text":"CANARY_RELAYED_TEXT"}`,
			`{"input_tokens":3,"cache_creation_input_tokens":500,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":400,"ephemeral_1h_input_tokens":100},"output_tokens":1}`), ""),
		progress("05", relayed("05", "msg_S1", "req_S1", `{"type":"tool_use","id":"toolu_S1","name":"Read","input":{"file_path":"/w/app/CANARY_PATH.go"}}`,
			`{"input_tokens":3,"cache_creation_input_tokens":500,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":400,"ephemeral_1h_input_tokens":100},"output_tokens":40}`), ""),
		progress("06", `{"type":"user","timestamp":"2026-05-02T08:00:06.000Z","uuid":"r-u2","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_S1","content":"CANARY_FILE_CONTENT"}]},"toolUseResult":"CANARY_RESULT"}`, ""),
		progress("08", relayed("08", "msg_S2", "req_S2", `{"type":"text","text":"CANARY_FINAL_REPORT"}`,
			`{"input_tokens":2,"cache_creation_input_tokens":30,"cache_read_input_tokens":500,"output_tokens":60}`),
			`,"normalizedMessages":[{"type":"user","message":{"content":"CANARY_NORMALIZED"}}]`),
		`{"type":"user","uuid":"u2","timestamp":"2026-05-02T08:00:09.000Z",` + head +
			`,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_A1","content":[{"type":"text","text":"CANARY_AGENT_ANSWER"}]}]},` +
			`"toolUseResult":{"status":"completed","agentId":"` + relAgent + `","totalDurationMs":7000,"content":[{"type":"text","text":"CANARY_AGENT_ANSWER"}]}}`,
		`{"type":"assistant","uuid":"a2","timestamp":"2026-05-02T08:00:10.000Z","requestId":"req_P2",` + head +
			`,"message":{"id":"msg_P2","model":"claude-opus-4-6","role":"assistant","stop_reason":"end_turn","content":[{"type":"text","text":"CANARY_DONE"}],` +
			`"usage":{"input_tokens":20,"cache_creation_input_tokens":100,"cache_read_input_tokens":1000,"output_tokens":30}}}`,
	}
}

func relSubagent() []string {
	head := `"sessionId":"` + relSession + `","isSidechain":true,"agentId":"` + relAgent + `","cwd":"/w/app","version":"2.1.71"`
	line := func(ts, id, req, content, usage string) string {
		return `{"type":"assistant","uuid":"s-` + ts + `","timestamp":"2026-05-02T08:00:` + ts + `.000Z","requestId":"` + req + `",` + head +
			`,"message":{"id":"` + id + `","model":"claude-haiku-4-5-20251001","role":"assistant","stop_reason":null,"content":[` + content + `],"usage":` + usage + `}}`
	}
	s1 := func(out string) string {
		return `{"input_tokens":3,"cache_creation_input_tokens":500,"cache_read_input_tokens":0,"cache_creation":{"ephemeral_5m_input_tokens":400,"ephemeral_1h_input_tokens":100},"output_tokens":` + out + `}`
	}
	return []string{
		`{"type":"user","uuid":"s-01","timestamp":"2026-05-02T08:00:02.000Z",` + head + `,"message":{"role":"user","content":"CANARY_TASK"}}`,
		line("03", "msg_S1", "req_S1", `{"type":"thinking","thinking":"CANARY_THINKING","signature":"x"}`, s1("1")),
		line("04", "msg_S1", "req_S1", `{"type":"text","text":"CANARY_RELAYED_TEXT"}`, s1("1")),
		line("05", "msg_S1", "req_S1", `{"type":"tool_use","id":"toolu_S1","name":"Read","input":{"file_path":"/w/app/CANARY_PATH.go"}}`, s1("40")),
		`{"type":"user","uuid":"s-06","timestamp":"2026-05-02T08:00:06.000Z",` + head +
			`,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_S1","content":"CANARY_FILE_CONTENT"}]}}`,
		line("08", "msg_S2", "req_S2", `{"type":"text","text":"CANARY_FINAL_REPORT"}`,
			`{"input_tokens":2,"cache_creation_input_tokens":30,"cache_read_input_tokens":500,"output_tokens":60}`),
	}
}

// relParse parses lines as the daemon does across restarts: the parser's
// state is saved after every line and the next line read by a parser
// restored from it.
func relParse(t *testing.T, path string, lines []string) []event.Event {
	t.Helper()
	src, err := claude.Identify(path, []byte(lines[0]))
	if err != nil {
		t.Fatal(err)
	}
	p := claude.NewParser(src)
	var out []event.Event
	for i, l := range lines {
		if out, err = p.Line([]byte(l), out); err != nil {
			t.Fatalf("%s line %d: %v", filepath.Base(path), i+1, err)
		}
		st, err := p.State()
		if err != nil {
			t.Fatal(err)
		}
		if p, err = claude.Restore(src, st); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestRelayedSubagentRequests reads the subagent's requests from the
// parent's agent_progress lines: tokens, model, ids and times, in the
// subagent's lane, and nothing of any text.
func TestRelayedSubagentRequests(t *testing.T) {
	dir := t.TempDir()
	parentPath := filepath.Join(dir, relSession+".jsonl")
	evs := relParse(t, parentPath, relParent())
	var relayed []event.Event
	for i, e := range evs {
		if e.LLM == nil || !e.LLM.Relayed {
			continue
		}
		relayed = append(relayed, e)
		if l := evs[i-1]; l.Kind != event.KindLane || l.Agent != relLane || l.Lane.LaunchCallID != "toolu_A1" {
			t.Errorf("relayed request %d not after its lane's launch: %+v", len(relayed), l)
		}
	}
	if len(relayed) != 3 {
		t.Fatalf("%d relayed records, want one per relayed assistant line (3)", len(relayed))
	}
	first := relayed[0]
	if first.Agent != relLane || first.Model != "claude-haiku-4-5-20251001" || first.LLM.MsgID != "msg_S1/req_S1" ||
		first.LLM.In != 3 || first.LLM.CW != 500 || first.LLM.CW1h != 100 || first.LLM.Out != 1 || first.LLM.LatencyMs != 0 {
		t.Errorf("first relayed record %+v %+v", first, *first.LLM)
	}
	if want := int64(1777708804000); first.T != want { // the relayed line's own time
		t.Errorf("time %d, want %d", first.T, want)
	}
	if last := relayed[2]; last.LLM.MsgID != "msg_S2/req_S2" || last.LLM.CR != 500 || last.LLM.Out != 60 {
		t.Errorf("last relayed record %+v", *last.LLM)
	}
	b, _ := json.Marshal(evs)
	if strings.Contains(string(b), "CANARY") {
		t.Errorf("events hold text of the log:\n%s", b)
	}
	m, err := builder.Build(evs, builder.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sub := int64(3 + 500 + 40 + 2 + 30 + 500 + 60)
	if m.Totals.Requests != 4 || m.Totals.Subagents != 1 || m.Totals.Tokens != 1060+1150+sub {
		t.Errorf("%d requests, %d subagents, %d tokens; want 4, 1, %d", m.Totals.Requests, m.Totals.Subagents, m.Totals.Tokens, 1060+1150+sub)
	}
	if len(m.Agents) != 2 || m.Agents[1].ID != relLane || m.Agents[1].SubagentType != "Explore" || m.Agents[1].Tokens != sub {
		t.Errorf("agents %+v", m.Agents)
	}
	raw, err := m.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "CANARY") {
		t.Errorf("the map holds text of the log")
	}
}

// TestRelayedRequestsAndTheSubagentFile: with the subagent's own file, the
// relayed copies count for nothing, whichever file is read first and
// however far the subagent's file has been written: the map is the one of
// the two files without the copies, and each request counts once.
func TestRelayedRequestsAndTheSubagentFile(t *testing.T) {
	dir := t.TempDir()
	parentPath := filepath.Join(dir, relSession+".jsonl")
	subPath := filepath.Join(dir, relSession, "subagents", "agent-"+relAgent+".jsonl")
	if err := os.MkdirAll(filepath.Dir(subPath), 0o755); err != nil {
		t.Fatal(err)
	}
	parent := relParse(t, parentPath, relParent())
	var bare []event.Event // the parent's records without the copies
	for i, e := range parent {
		relay := e.LLM != nil && e.LLM.Relayed || e.Kind == event.KindLane && i+1 < len(parent) && parent[i+1].LLM != nil && parent[i+1].LLM.Relayed
		if !relay {
			bare = append(bare, e)
		}
	}
	lines := relSubagent()
	sub := relParse(t, subPath, lines)
	half := relParse(t, subPath, lines[:4]) // msg_S1 written, msg_S2 not yet
	build := func(parts ...[]event.Event) *builder.Map {
		t.Helper()
		var evs []event.Event
		for _, p := range parts {
			evs = append(evs, p...)
		}
		m, err := builder.Build(evs, builder.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	want := build(bare, sub)
	const tokens = 1060 + 1150 + 3 + 500 + 40 + 2 + 30 + 500 + 60
	if want.Totals.Tokens != tokens || want.Totals.Requests != 4 {
		t.Fatalf("the two files without the copies: %d tokens, %d requests; want %d and 4", want.Totals.Tokens, want.Totals.Requests, tokens)
	}
	for name, m := range map[string]*builder.Map{
		"parent, then subagent": build(parent, sub),
		"subagent, then parent": build(sub, parent),
	} {
		if m.ContentHash != want.ContentHash {
			t.Errorf("%s: the map differs from the one without the copies (%d tokens, %d requests)", name, m.Totals.Tokens, m.Totals.Requests)
		}
	}
	for name, m := range map[string]*builder.Map{
		"parent alone":                 build(parent),
		"parent and half the subagent": build(parent, half),
		"half the subagent and parent": build(half, parent),
	} {
		if m.Totals.Tokens != tokens || m.Totals.Requests != 4 || m.Totals.Subagents != 1 {
			t.Errorf("%s: %d tokens, %d requests, %d subagents; want %d, 4, 1", name, m.Totals.Tokens, m.Totals.Requests, m.Totals.Subagents, tokens)
		}
	}
}
