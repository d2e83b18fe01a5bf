package attemptdb_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/export/attemptdb"
	"github.com/agentmap/agentmap/export/mapfile"
)

// pairedEvent is the part of an event the pairing tests read.
type pairedEvent struct {
	EventID   string `json:"event_id"`
	SourceSeq uint64 `json:"source_seq"`
	Kind      string `json:"kind"`
	SessionID string `json:"session_id"`
	SpanID    string `json:"span_id"`
	Tool      *struct {
		CallID string `json:"call_id"`
	} `json:"tool"`
	Outcome *struct {
		Status string `json:"status"`
		Class  string `json:"class"`
	} `json:"outcome"`
}

// callPairs checks what docs/exports.md promises of a stream: every tool
// call has exactly one tool_call_started and, after it, exactly one
// tool_call_finished or tool_call_failed of the same span, event ids are
// unique and source_seq increases. It returns the end event of each call by
// session and call id.
func callPairs(t *testing.T, stream []byte) map[[2]string]pairedEvent {
	t.Helper()
	starts := map[[2]string]pairedEvent{}
	ends := map[[2]string]pairedEvent{}
	ids := map[string]bool{}
	var seq uint64
	for i, line := range bytes.Split(bytes.TrimSpace(stream), []byte("\n")) {
		var ev pairedEvent
		if err := json.Unmarshal(line, &ev); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if ids[ev.EventID] {
			t.Errorf("line %d: event id %s repeated", i+1, ev.EventID)
		}
		ids[ev.EventID] = true
		if ev.SourceSeq <= seq {
			t.Errorf("line %d: source_seq %d after %d", i+1, ev.SourceSeq, seq)
		}
		seq = ev.SourceSeq
		if !strings.HasPrefix(ev.Kind, "tool_call_") {
			continue
		}
		if ev.Tool == nil || ev.Tool.CallID == "" {
			t.Errorf("line %d: %s without tool.call_id", i+1, ev.Kind)
			continue
		}
		key := [2]string{ev.SessionID, ev.Tool.CallID}
		if ev.Kind == "tool_call_started" {
			if _, dup := starts[key]; dup {
				t.Errorf("line %d: call %v started twice", i+1, key)
			}
			starts[key] = ev
			continue
		}
		start, ok := starts[key]
		switch {
		case !ok:
			t.Errorf("line %d: %s of call %v without an earlier tool_call_started", i+1, ev.Kind, key)
		case start.SpanID != ev.SpanID:
			t.Errorf("line %d: call %v ends in span %s, started in %s", i+1, key, ev.SpanID, start.SpanID)
		}
		if _, dup := ends[key]; dup {
			t.Errorf("line %d: call %v ended twice", i+1, key)
		}
		ends[key] = ev
	}
	for key := range starts {
		if _, ok := ends[key]; !ok {
			t.Errorf("call %v started and never finished or failed", key)
		}
	}
	return ends
}

// TestDeniedSubagentCallIsPaired: a subagent call that launched a lane
// and was then denied has its tool_call_started as well as its
// tool_call_failed (it used to have the lane's subagent_started in its
// place), and so does one that succeeded, one that resumes a lane already
// open, and the other calls beside them.
func TestDeniedSubagentCallIsPaired(t *testing.T) {
	dur := int64(40)
	launch := 2
	m := &mapfile.Map{
		Schema: "agentplay/v1", ContentHash: "sha256:00",
		Session: mapfile.Session{ID: "local:claude-code:denied-subagent", AgentTool: "claude-code",
			StartedAt: "2026-02-09T10:00:00Z", DurationMs: 9000, PathMode: "relative", Outcome: "blocked"},
		Agents: []mapfile.Agent{
			{ID: "main", Kind: "main", End: 9000},
			{ID: "sa-1", Parent: "main", Kind: "subagent", SubagentType: "Explore", LaunchSeq: &launch, Start: 1100, End: 2000, Outcome: "completed"},
			{ID: "sa-2", Parent: "main", Kind: "subagent", SubagentType: "Plan", Start: 3100, End: 4000, Outcome: "completed"},
		},
		Events: []mapfile.Event{
			{Seq: 1, T: 0, Kind: "user", Task: 1},
			{Seq: 2, T: 1000, Kind: "subagent", Tool: "Task", Cat: "subagent", SubagentType: "Explore", Child: "sa-1",
				Err: true, ErrClass: "permission_denied", Task: 1},
			{Seq: 3, T: 1200, Kind: "llm", Agent: "sa-1", Task: 1},
			{Seq: 4, T: 3000, Kind: "subagent", Tool: "Task", Cat: "subagent", SubagentType: "Plan", Child: "sa-2", Task: 1},
			{Seq: 5, T: 3200, Kind: "read", Tool: "Read", Agent: "sa-2", Dur: &dur, Task: 1},
			{Seq: 6, T: 5000, Kind: "subagent", Tool: "Task", Cat: "subagent", SubagentType: "Plan", Child: "sa-2", Task: 1},
			{Seq: 7, T: 6000, Kind: "mcp", Tool: "query", Server: "db", Err: true, ErrClass: "permission_denied", Task: 1},
			{Seq: 8, T: 7000, Kind: "exec", Tool: "Bash", Verb: "make", Err: true, ErrClass: "permission_denied", Task: 1},
			{Seq: 9, T: 8000, Kind: "exec", Tool: "Bash", Verb: "go", Task: 1},
		},
	}
	var out bytes.Buffer
	w, err := attemptdb.NewWriter(&out, attemptdb.Options{DeviceID: "0190f3a2-7b4c-7d10-9e2f-3a4b5c6d7e8f", FirstSeq: 7, AdapterVersion: "agentmap test"})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(m); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	ends := callPairs(t, out.Bytes())
	sid := attemptdb.SessionID("claude_code", "denied-subagent")
	for _, call := range []string{"2", "4", "5", "6", "7", "8", "9"} {
		if _, ok := ends[[2]string{sid, call}]; !ok {
			t.Errorf("call %s has no end", call)
		}
	}
	if len(ends) != 7 {
		t.Errorf("%d calls paired, want 7", len(ends))
	}
	if e := ends[[2]string{sid, "2"}]; e.Kind != "tool_call_failed" || e.Outcome == nil || e.Outcome.Status != "denied" || e.Outcome.Class != "permission_denied" {
		t.Errorf("denied subagent call ends as %+v, want tool_call_failed, denied, permission_denied", e)
	}
	if e := ends[[2]string{sid, "4"}]; e.Kind != "tool_call_finished" {
		t.Errorf("subagent call that succeeded ends as %s", e.Kind)
	}
	if n := strings.Count(out.String(), `"kind":"subagent_started"`); n != 2 {
		t.Errorf("%d subagent_started, want one per lane (2)", n)
	}
	rep, err := attemptdb.Check(bytes.NewReader(out.Bytes()))
	if err != nil || !rep.Compatible() {
		t.Fatalf("conformance: %v\n%v", err, rep)
	}
	for _, n := range rep.Sections["causality"].Notes {
		t.Errorf("the checker notes: line %d: %s", n.Line, n.Message)
	}
}
