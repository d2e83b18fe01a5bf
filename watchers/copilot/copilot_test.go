package copilot

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/internal/agenttest"
)

// recorded are the events.jsonl files the real Copilot CLI 1.0.102 wrote
// against the project's scripted model server (BYOK, offline).
func recorded(t testing.TB) []string {
	t.Helper()
	logs, _ := filepath.Glob(filepath.Join("testdata", "*", "*", "events.jsonl"))
	if len(logs) == 0 {
		t.Fatal("no recorded Copilot CLI logs in testdata")
	}
	return logs
}

func lines(t testing.TB, path string) [][]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	return out
}

// parse runs a parser over lines, saving and restoring its carry-state
// after every line when restore is set.
func parse(t testing.TB, path string, ls [][]byte, restore bool) ([]event.Event, watchers.Source) {
	t.Helper()
	src, err := Identify(path, ls[0])
	if err != nil {
		t.Fatal(err)
	}
	p := NewParser(src)
	var evs []event.Event
	for i, l := range ls {
		evs, err = p.Line(l, evs)
		if err != nil {
			t.Fatalf("%s line %d: %v", path, i+1, err)
		}
		if restore {
			st, err := p.State()
			if err != nil {
				t.Fatal(err)
			}
			if p, err = Restore(src, st); err != nil {
				t.Fatal(err)
			}
		}
	}
	return evs, src
}

// clientTokens is Copilot's own accounting of a session (ClientTokens).
func clientTokens(t testing.TB, ls [][]byte) int64 {
	t.Helper()
	total, _ := ClientTokens(ls) // 0 without a session.shutdown, as the map's totals must then be
	return total
}

// TestRecordedLogs reads the logs Copilot CLI wrote: the session is the
// directory's, every tool call is paired with its result, subagents are
// lanes launched by their task call, token totals equal Copilot's own
// accounting, and a parser restored after every line gives the same
// events.
func TestRecordedLogs(t *testing.T) {
	for _, path := range recorded(t) {
		ls := lines(t, path)
		if !LooksLike(ls[0]) {
			t.Fatalf("%s: first line not recognised", path)
		}
		evs, src := parse(t, path, ls, false)
		if want := filepath.Base(filepath.Dir(path)); src.Session != want {
			t.Errorf("%s: session %q, want %q", path, src.Session, want)
		}
		again, _ := parse(t, path, ls, true)
		a, _ := json.Marshal(evs)
		b, _ := json.Marshal(again)
		if !bytes.Equal(a, b) {
			t.Errorf("%s: a parser restored after every line gives other events", path)
		}
		var calls, results, lanes int
		launched := map[string]bool{}
		for _, e := range evs {
			switch e.Kind {
			case event.KindCall:
				calls++
				if e.Call.Kind == "subagent" {
					launched[e.Call.ID] = true
				}
			case event.KindResult:
				results++
			case event.KindLane:
				lanes++
				if !launched[e.Lane.LaunchCallID] {
					t.Errorf("%s: lane %s launched by an unknown call", path, e.Agent)
				}
			}
		}
		if calls == 0 || calls != results {
			t.Errorf("%s: %d calls, %d results", path, calls, results)
		}
		m, err := builder.Build(evs, builder.Options{})
		if err != nil {
			t.Fatalf("%s: build: %v", path, err)
		}
		if got, want := m.Totals.Tokens, clientTokens(t, ls); got != want {
			t.Errorf("%s: map tokens %d, Copilot counts %d", path, got, want)
		}
		if m.Totals.Subagents != lanes {
			t.Errorf("%s: %d subagent lanes in the map, %d declared", path, m.Totals.Subagents, lanes)
		}
	}
}

// TestToolKinds checks the kinds, exit codes and lanes of the suite's
// recorded session.
func TestToolKinds(t *testing.T) {
	path := filepath.Join("testdata", "1.0.102", "2bfc00c1-a71e-4603-89e1-5ea6aba82599", "events.jsonl")
	evs, _ := parse(t, path, lines(t, path), false)
	kinds, exits := agenttest.CallKinds(evs)
	want := map[string]int{"view:read": 2, "bash:verify": 2, "bash:exec": 2, "create:edit": 1, "edit:edit": 1, "task:subagent": 1}
	if !maps.Equal(kinds, want) {
		t.Errorf("calls by tool and kind %v, want %v", kinds, want)
	}
	if fmt.Sprint(exits) != "[1 2]" {
		t.Errorf("failed commands' exit codes %v, want the failing npm test (1) and ls (2)", exits)
	}
}

const canary = "CANARY"

// keep are the keys whose values a map may show or the parser needs as
// they are: record types and ids, enums, models, tool, agent and MCP
// names, paths and the repository. Every other string gets the canary.
var keep = map[string]bool{
	"type": true, "id": true, "parentId": true, "agentId": true, "timestamp": true, "toolCallId": true,
	"apiCallId": true, "sessionId": true, "messageId": true, "interactionId": true, "turnId": true,
	"parentToolCallId": true, "agent_id": true, "source": true, "mimeType": true,
	"model": true, "selectedModel": true, "newModel": true, "copilotVersion": true, "producer": true,
	"toolName": true, "mcpServerName": true, "mcpToolName": true, "agentName": true, "agentType": true,
	"agent_type": true, "skill": true, "path": true, "paths": true, "cwd": true, "gitRoot": true,
	"repository": true, "code": true, "errorType": true, "finishReason": true, "trigger": true,
}

// TestLeak puts a canary into every string of every recorded log (the
// real client's and the one written from its schema) but for the keys
// in keep, and checks that none reaches the events, the carry-state
// after any line, or an error.
func TestLeak(t *testing.T) {
	paths := append(recorded(t), filepath.Join("testdata", "schema", "events.jsonl"))
	kinds := map[event.Kind]int{}
	urls := 0
	for _, path := range paths {
		var ls [][]byte
		for _, l := range lines(t, path) {
			ls = append(ls, agenttest.SpoilJSON(l, keep, canary))
		}
		// A failure with a canary in its message, and broken lines.
		ls = append(ls, []byte(`{"type":"tool.execution_complete","data":{"toolCallId":"zz","success":false,"error":{"message":"CANARY failed","code":"failure"}}}`),
			[]byte(`{"type":"session.error","data":{"errorType":"CANARY","message":"CANARY rate limit"}}`),
			[]byte(`{"type":"CANARY","data":"CANARY"`), []byte(`CANARY`))
		src, err := Identify(path, ls[0])
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		p := NewParser(src)
		var evs []event.Event
		for i, l := range ls {
			var err error
			evs, err = p.Line(l, evs)
			if err != nil && agenttest.Holds([]byte(err.Error()), canary) {
				t.Errorf("%s line %d: error leaks: %v", path, i+1, err)
			}
			st, _ := p.State()
			if agenttest.Holds(st, canary) {
				t.Errorf("%s line %d: carry-state leaks", path, i+1)
			}
		}
		b, _ := json.Marshal(evs)
		if agenttest.Holds(b, canary) {
			t.Errorf("%s: events leak the canary: %s", path, b)
		}
		for _, e := range evs {
			kinds[e.Kind]++
			if e.Kind == event.KindUser {
				urls += e.User.URLs
			}
		}
		m, err := builder.Build(evs, builder.Options{})
		if err != nil {
			t.Fatalf("%s: build: %v", path, err)
		}
		if m.Totals.Calls == 0 || m.Totals.Requests == 0 {
			t.Errorf("%s: %d calls, %d requests: the spoiled log was not read", path, m.Totals.Calls, m.Totals.Requests)
		}
	}
	for _, k := range []event.Kind{event.KindUser, event.KindLLM, event.KindCall, event.KindResult, event.KindError,
		event.KindLane, event.KindCompaction} {
		if kinds[k] == 0 {
			t.Errorf("no %s event: the leak test exercises too little", k)
		}
	}
	if urls == 0 {
		t.Error("the prompts' URLs were not counted")
	}
}

// FuzzParse feeds arbitrary bytes as lines, with the carry-state saved and
// restored midway. No input may fault the parser.
func FuzzParse(f *testing.F) {
	for _, path := range recorded(f) {
		ls := lines(f, path)
		for _, l := range ls[:min(len(ls), 40)] {
			f.Add(l)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		ls := bytes.Split(data, []byte("\n"))
		p := NewParser(watchers.Source{Agent: Agent, Session: "s"})
		var evs []event.Event
		for i, l := range ls {
			var err error
			evs, err = p.Line(l, evs)
			if err != nil && strings.Contains(err.Error(), "internal parser fault") {
				t.Fatalf("line %d: parser fault", i)
			}
			if i == len(ls)/2 {
				st, err := p.State()
				if err != nil {
					t.Fatal(err)
				}
				if p, err = Restore(p.src, st); err != nil {
					t.Fatal(err)
				}
			}
		}
		_ = LooksLike(data)
		_, _ = Identify("session-state/x/events.jsonl", data)
		// A log without session.start gets its record from the daemon and
		// from build (agents.EnsureSession).
		evs = append([]event.Event{{Kind: event.KindSession, Session: &event.Session{NativeID: "s", AgentTool: Tool}}}, evs...)
		if _, err := builder.Build(evs, builder.Options{}); err != nil && !errors.Is(err, builder.ErrEmptySession) {
			t.Fatalf("build: %v", err)
		}
	})
}

// TestSchemaRecords reads a log the project wrote from Copilot CLI's own
// schema of its events (session-events.schema.json of 1.0.102: the
// assistant.usage form, an MCP call, a denied call, an API error, a
// compaction that worked and one that failed, an abort), since the suite
// cannot make the client write them.
func TestSchemaRecords(t *testing.T) {
	path := filepath.Join("testdata", "schema", "events.jsonl")
	ls := lines(t, path)
	evs, _ := parse(t, path, ls, true)
	m, err := builder.Build(evs, builder.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Totals.Tokens != clientTokens(t, ls) {
		t.Errorf("tokens %d, Copilot counts %d", m.Totals.Tokens, clientTokens(t, ls))
	}
	if m.Totals.Compactions != 1 || m.Totals.PromptImages != 1 || m.Totals.PromptURLs != 1 {
		t.Errorf("compactions %d, images %d, urls %d; want 1, 1, 1", m.Totals.Compactions, m.Totals.PromptImages, m.Totals.PromptURLs)
	}
	var got []string
	for _, e := range m.Events {
		switch e.Kind {
		case "mcp":
			got = append(got, e.Kind+":"+e.Server+"/"+e.Tool+":"+e.ErrClass)
		case "error":
			got = append(got, e.Kind+":"+e.ErrClass)
		case "llm":
			got = append(got, fmt.Sprintf("llm:%d/%d/%d/%d:%v", e.In, e.CW, e.CR, e.Out, e.Thinking))
		}
	}
	want := []string{"llm:1000/1000/3000/120:true", "mcp:github-mcp-server/get_issue:permission_denied", "error:rate_limit", "error:interrupted"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("events %v, want %v", got, want)
	}
}

// TestHookFailure reads the session in which the real client ran a
// user-level postToolUse hook that failed (exit 1, its stderr in the
// record) after each successful call of the resumed run: git status, the
// MCP lookup, which ran in parallel with a failing MCP call (Copilot runs
// no postToolUse hook after a failed call), and the skill. Three hook
// errors, named by the hook and the tool, each pointing at its call, also
// across a restore after every line; the MCP calls are the suite's
// server's, the skill its user skill.
func TestHookFailure(t *testing.T) {
	path := filepath.Join("testdata", "1.0.102", "ac72bbbe-dbb8-4f20-b40c-ab9b87607e5f", "events.jsonl")
	evs, _ := parse(t, path, lines(t, path), true)
	m, err := builder.Build(evs, builder.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if m.Totals.ErrorsBySource.Hook != 3 || m.Totals.ErrorsByClass["hook_error"] != 3 || m.Totals.ErrorsBySource.MCP != 1 {
		t.Errorf("errors by source %+v, by class %v; want three hook_error and one failed MCP call", m.Totals.ErrorsBySource, m.Totals.ErrorsByClass)
	}
	var got []string
	for _, e := range m.Events {
		switch {
		case e.Kind == "mcp":
			got = append(got, fmt.Sprintf("mcp %s/%s err=%v", e.Server, e.Tool, e.Err))
		case e.Kind == "skill":
			got = append(got, fmt.Sprintf("skill %s err=%v", e.Skill, e.Err))
		case e.Kind == "error" && e.Ref != nil:
			call := m.Events[*e.Ref]
			got = append(got, fmt.Sprintf("%s %s after %s %s/%s", e.ErrClass, e.Hook, call.Kind, call.Verb, call.Tool))
		case e.Kind == "error":
			got = append(got, "error without ref: "+e.Hook)
		}
	}
	want := "[hook_error postToolUse:bash after exec git status/bash mcp e2e/lookup err=false mcp e2e/broken err=true hook_error postToolUse:e2e-lookup after mcp /lookup skill e2e-check err=false hook_error postToolUse:skill after skill /]"
	if fmt.Sprint(got) != want {
		t.Errorf("got  %v\nwant %s", got, want)
	}
}
