package copilot

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers/internal/agenttest"
)

// schemaHead starts a log as session.start does in Copilot CLI 1.0.102's
// event schema.
var schemaHead = []string{
	`{"type":"session.start","data":{"sessionId":"5d6e7f80-1a2b-4c3d-8e9f-a0b1c2d3e4f5","version":1,"producer":"copilot-agent","copilotVersion":"1.0.102","startTime":"2026-12-01T10:00:00.000Z","selectedModel":"claude-sonnet-4.5","context":{"cwd":"/w/app","gitRoot":"/w/app"}},"id":"e1","timestamp":"2026-12-01T10:00:00.000Z","parentId":null}`,
	`{"type":"user.message","data":{"content":"CANARY prompt","interactionId":"i1","turnId":"0"},"id":"e2","timestamp":"2026-12-01T10:00:01.000Z","parentId":"e1"}`,
}

// buildLines parses lines (restoring the carry-state after each) and
// builds their map, checking that no text of theirs reaches it.
func buildLines(t *testing.T, ls []string) *builder.Map {
	t.Helper()
	var bs [][]byte
	for _, l := range append(append([]string(nil), schemaHead...), ls...) {
		bs = append(bs, []byte(l))
	}
	evs, _ := parse(t, "session-state/5d6e7f80-1a2b-4c3d-8e9f-a0b1c2d3e4f5/events.jsonl", bs, true)
	if b, _ := json.Marshal(evs); agenttest.Holds(b, canary) {
		t.Errorf("events leak the canary: %s", b)
	}
	m, err := builder.Build(evs, builder.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestTruncation reads session.truncation (the client dropping old
// messages to fit the window; TruncationData in the schema) as an
// automatic compaction with the messages' tokens before and after, and a
// truncation that removed nothing as none.
func TestTruncation(t *testing.T) {
	m := buildLines(t, []string{
		`{"type":"session.truncation","data":{"messagesRemovedDuringTruncation":12,"performedBy":"BasicTruncator","postTruncationMessagesLength":30,"postTruncationTokensInMessages":61000,"preTruncationMessagesLength":42,"preTruncationTokensInMessages":98000,"tokenLimit":100000,"tokensRemovedDuringTruncation":37000},"id":"e3","timestamp":"2026-12-01T10:00:02.000Z","parentId":"e2"}`,
		`{"type":"session.truncation","data":{"messagesRemovedDuringTruncation":0,"performedBy":"BasicTruncator","postTruncationMessagesLength":30,"postTruncationTokensInMessages":61000,"preTruncationMessagesLength":30,"preTruncationTokensInMessages":61000,"tokenLimit":100000,"tokensRemovedDuringTruncation":0},"id":"e4","timestamp":"2026-12-01T10:00:03.000Z","parentId":"e3"}`,
	})
	var got []string
	for _, e := range m.Events {
		if e.Kind == "compaction" {
			got = append(got, fmt.Sprintf("%s %d→%d", e.Trigger, e.PreTokens, e.PostTokens))
		}
	}
	if m.Totals.Compactions != 1 || fmt.Sprint(got) != "[auto 98000→61000]" {
		t.Errorf("compactions %d %v, want one: [auto 98000→61000]", m.Totals.Compactions, got)
	}
}

// TestUserInvokedSkill: a skill the user typed (skill.invoked, trigger
// user-invoked) is a skill event, as the skill tool's call is; the skill
// tool's own skill.invoked (agent-invoked, as the real client writes it
// in the recorded hook session) and a context-load one add none.
func TestUserInvokedSkill(t *testing.T) {
	invoked := func(id, trigger string) string {
		return `{"type":"skill.invoked","data":{"name":"release-notes","path":"/home/u/.copilot/skills/release-notes/SKILL.md","content":"CANARY body","allowedTools":[],"source":"personal-copilot","description":"CANARY description","trigger":"` + trigger + `","model":"claude-sonnet-4.5","invokedAtTurn":3},"id":"` + id + `","timestamp":"2026-12-01T10:00:02.000Z","parentId":"e2"}`
	}
	m := buildLines(t, []string{
		invoked("e3", "user-invoked"),
		`{"type":"tool.execution_start","data":{"toolCallId":"t1","toolName":"skill","arguments":{"skill":"release-notes"}},"id":"e4","timestamp":"2026-12-01T10:00:04.000Z","parentId":"e3"}`,
		invoked("e5", "agent-invoked"),
		`{"type":"tool.execution_complete","data":{"toolCallId":"t1","success":true,"result":{"content":"CANARY"}},"id":"e6","timestamp":"2026-12-01T10:00:05.000Z","parentId":"e5"}`,
		invoked("e7", "context-load"),
	})
	var got []string
	for _, e := range m.Events {
		if e.Kind == "skill" {
			got = append(got, e.Skill)
		}
	}
	if fmt.Sprint(got) != "[release-notes release-notes]" {
		t.Errorf("skill events %v, want the typed one and the tool's: [release-notes release-notes]", got)
	}
}

// TestSubagentFailed: subagent.failed (SubagentFailedData: toolCallId of
// the task call, error text not read) fails the task call whose subagent
// it was, whether it comes before the call's result (the result said
// success) or after it (a background subagent's call returned at once).
func TestSubagentFailed(t *testing.T) {
	task := func(call, ts string) string {
		return `{"type":"tool.execution_start","data":{"toolCallId":"` + call + `","toolName":"task","arguments":{"agent_type":"explore","description":"CANARY","prompt":"CANARY"}},"id":"s` + call + `","timestamp":"2026-12-01T10:00:` + ts + `.000Z","parentId":"e2"}`
	}
	started := func(call, agent, ts, mode string) string {
		return `{"type":"subagent.started","data":{"toolCallId":"` + call + `","agentName":"explore","agentDisplayName":"CANARY","agentDescription":"CANARY","agentType":"explore","executionMode":"` + mode + `"},"agentId":"` + agent + `","id":"a` + call + `","timestamp":"2026-12-01T10:00:` + ts + `.100Z","parentId":"s` + call + `"}`
	}
	failed := func(call, agent, ts string) string {
		return `{"type":"subagent.failed","data":{"toolCallId":"` + call + `","agentName":"explore","agentDisplayName":"CANARY","error":"CANARY failure","model":"claude-haiku-4.5","durationMs":900,"totalTokens":1200,"totalToolCalls":1},"agentId":"` + agent + `","id":"f` + call + `","timestamp":"2026-12-01T10:00:` + ts + `.000Z","parentId":"a` + call + `"}`
	}
	complete := func(call, ts string) string {
		return `{"type":"tool.execution_complete","data":{"toolCallId":"` + call + `","success":true,"result":{"content":"CANARY"}},"id":"c` + call + `","timestamp":"2026-12-01T10:00:` + ts + `.000Z","parentId":"e2"}`
	}
	m := buildLines(t, []string{
		task("t1", "02"), started("t1", "11111111-2222-3333-4444-555555555555", "02", "sync"),
		failed("t1", "11111111-2222-3333-4444-555555555555", "03"), complete("t1", "04"),
		task("t2", "05"), started("t2", "66666666-7777-8888-9999-000000000000", "05", "background"),
		complete("t2", "06"), failed("t2", "66666666-7777-8888-9999-000000000000", "09"),
		task("t3", "10"), started("t3", "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee", "10", "sync"), complete("t3", "11"),
	})
	var got []string
	for _, e := range m.Events {
		if e.Kind == "subagent" {
			got = append(got, fmt.Sprintf("err=%v %s", e.Err, e.ErrClass))
		}
	}
	want := "[err=true subagent_failed err=true subagent_failed err=false ]"
	if fmt.Sprint(got) != want {
		t.Errorf("subagent events %v\nwant %s", got, want)
	}
}

// A tool call whose arguments are of another type than the schema's usual
// object (a freeform tool's text, a path given as a list) is a call all
// the same, with what its arguments could say left out.
func TestToolArgumentsOfAnotherType(t *testing.T) {
	m := buildLines(t, []string{
		`{"type":"tool.execution_start","data":{"toolCallId":"t1","toolName":"apply_patch","arguments":"*** Begin Patch CANARY"},"id":"e3","timestamp":"2026-12-01T10:00:02.000Z","parentId":"e2"}`,
		`{"type":"tool.execution_complete","data":{"toolCallId":"t1","success":true,"result":{"content":"CANARY"}},"id":"e4","timestamp":"2026-12-01T10:00:03.000Z","parentId":"e3"}`,
		`{"type":"tool.execution_start","data":{"toolCallId":"t2","toolName":"view","arguments":{"path":["CANARY"]}},"id":"e5","timestamp":"2026-12-01T10:00:04.000Z","parentId":"e4"}`,
		`{"type":"tool.execution_complete","data":{"toolCallId":"t2","success":false,"result":{"content":"CANARY"}},"id":"e6","timestamp":"2026-12-01T10:00:05.000Z","parentId":"e5"}`,
	})
	var got []string
	for _, e := range m.Events {
		if e.Kind != "session" && e.Kind != "user" && e.Kind != "llm" && e.Kind != "turn_end" {
			got = append(got, e.Kind+" "+e.Tool)
		}
	}
	if m.Totals.Calls != 2 {
		t.Errorf("%d calls, want 2: %v", m.Totals.Calls, got)
	}
}

// A session.start whose sessionId is not an identifier (words of text)
// names neither the map nor the session: the id is the one Identify keys
// the session by, the session's directory.
func TestSessionIDOfWords(t *testing.T) {
	head := strings.Replace(schemaHead[0], `"sessionId":"5d6e7f80-1a2b-4c3d-8e9f-a0b1c2d3e4f5"`, `"sessionId":"my CANARY words"`, 1)
	if head == schemaHead[0] {
		t.Fatal("the schema's head changed: this test names its session id")
	}
	path := "session-state/5d6e7f80-1a2b-4c3d-8e9f-a0b1c2d3e4f5/events.jsonl"
	src, err := Identify(path, []byte(head))
	if err != nil {
		t.Fatal(err)
	}
	evs, _ := parse(t, path, [][]byte{[]byte(head), []byte(schemaHead[1])}, false)
	for _, e := range evs {
		if e.Kind == event.KindSession && e.Session.NativeID != src.Session {
			t.Errorf("the session's id %q, its key's %q", e.Session.NativeID, src.Session)
		}
	}
	if src.Session != "5d6e7f80-1a2b-4c3d-8e9f-a0b1c2d3e4f5" {
		t.Errorf("keyed by %q", src.Session)
	}
}
