package builder

import (
	"fmt"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
)

// TestUserWaitIsNoDelay: a tool that waits for the user takes the user's
// time; only other tools are slow.
func TestUserWaitIsNoDelay(t *testing.T) {
	ask := callEv(1, "q", "AskUserQuestion", "tool")
	ask.Call.AwaitsUser = true
	m := mustBuild(t, stream(sess("s"), ask, resultEv(400, "q", false),
		callEv(401, "w", "TaskOutput", "tool"), resultEv(500, "w", false)), Options{})
	d := find(m, "delay")
	if len(d) != 1 || d[0].Cause != "tool" || d[0].Ms != 99000 {
		t.Fatalf("delays %+v, want one for the slow tool only", d)
	}
}

func TestRetries(t *testing.T) {
	rd := func(sec float64, id, path string) event.Event {
		return callEv(sec, id, "Read", "read", file("k", path, "read", ""))
	}
	tests := []struct {
		name    string
		evs     []event.Event
		want    map[int][2]int // call index -> {retryOf call index, attempt}
		wantTot int
	}{
		{"repeat after a failure", stream(sess("s"),
			shellEv(1, "a", "go test", true), resultEv(2, "a", true),
			shellEv(3, "b", "go test", true), resultEv(4, "b", true),
			shellEv(5, "c", "go test", true), resultEv(6, "c", false)),
			map[int][2]int{1: {0, 2}, 2: {1, 3}}, 2},
		{"repeat after a success is no retry", stream(sess("s"),
			shellEv(1, "a", "go test", true), resultEv(2, "a", false),
			shellEv(3, "b", "go test", true), resultEv(4, "b", false)),
			nil, 0},
		{"different verb or first target is no retry", stream(sess("s"),
			shellEv(1, "a", "go test", true), resultEv(2, "a", true),
			shellEv(3, "b", "go vet", true), resultEv(4, "b", false),
			rd(5, "c", "a.go"), resultEv(6, "c", true),
			rd(7, "d", "b.go"), resultEv(8, "d", false)),
			nil, 0},
		{"within the last 8 calls", stream(sess("s"),
			rd(1, "a", "a.go"), resultEv(1, "a", true),
			shellEv(1, "x1", "ls", false), shellEv(1, "x2", "ls", false), shellEv(1, "x3", "ls", false),
			shellEv(1, "x4", "ls", false), shellEv(1, "x5", "ls", false), shellEv(1, "x6", "ls", false),
			shellEv(1, "x7", "ls", false),
			rd(2, "b", "a.go")),
			map[int][2]int{8: {0, 2}}, 1},
		{"beyond the last 8 calls", stream(sess("s"),
			rd(1, "a", "a.go"), resultEv(1, "a", true),
			shellEv(1, "x1", "ls", false), shellEv(1, "x2", "ls", false), shellEv(1, "x3", "ls", false),
			shellEv(1, "x4", "ls", false), shellEv(1, "x5", "ls", false), shellEv(1, "x6", "ls", false),
			shellEv(1, "x7", "ls", false), shellEv(1, "x8", "ls", false),
			rd(2, "b", "a.go")),
			nil, 0},
		{"parallel calls of one response are no retries, the next response's is", stream(sess("s"),
			llmEv(1, "m1", "claude-sonnet-4-5", 1, 1, 2, 0),
			shellEv(1, "a", "curl", false), llmEv(1, "m1", "claude-sonnet-4-5", 1, 1, 2, 0),
			shellEv(1, "b", "curl", false), resultEv(2, "a", true), resultEv(2, "b", true),
			llmEv(3, "m2", "claude-sonnet-4-5", 1, 1, 1, 0),
			shellEv(3, "c", "curl", false), resultEv(4, "c", false)),
			map[int][2]int{2: {1, 2}}, 1},
		{"a call of the same response as an unanswered one is no retry", stream(sess("s"),
			llmEv(1, "m1", "claude-sonnet-4-5", 1, 1, 2, 0),
			shellEv(1, "a", "curl", false), llmEv(1, "m1", "claude-sonnet-4-5", 1, 1, 2, 0),
			shellEv(1, "b", "curl", false), resultEv(2, "b", true),
			llmEv(3, "m2", "claude-sonnet-4-5", 1, 1, 1, 0),
			shellEv(3, "c", "curl", false), resultEv(4, "c", false)),
			map[int][2]int{2: {1, 2}}, 1},
		{"a failure reported before the next call of the same response is known", stream(sess("s"),
			llmEv(1, "m1", "claude-sonnet-4-5", 1, 1, 2, 0),
			shellEv(1, "a", "go test", true), resultEv(2, "a", true),
			llmEv(3, "m1", "claude-sonnet-4-5", 1, 1, 2, 0),
			shellEv(3, "b", "go test", true), resultEv(4, "b", false)),
			map[int][2]int{1: {0, 2}}, 1},
		{"other lane is no retry", stream(sess("s"),
			shellEv(1, "a", "go test", true), resultEv(2, "a", true),
			onLane("sa-1", shellEv(3, "b", "go test", true))),
			nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustBuild(t, tt.evs, Options{})
			var calls []Event
			for _, e := range m.Events {
				if isCallKind(e.Kind) {
					calls = append(calls, e)
				}
			}
			for i, c := range calls {
				w, ok := tt.want[i]
				switch {
				case !ok && (c.RetryOf != nil || c.Attempt != 0):
					t.Errorf("call %d marked as retry of %v attempt %d", i, *c.RetryOf, c.Attempt)
				case ok && (c.RetryOf == nil || *c.RetryOf != calls[w[0]].Seq || c.Attempt != w[1]):
					t.Errorf("call %d: retryOf %v attempt %d, want seq %d attempt %d", i, c.RetryOf, c.Attempt, calls[w[0]].Seq, w[1])
				}
			}
			if m.Totals.Retries != tt.wantTot {
				t.Errorf("retries = %d, want %d", m.Totals.Retries, tt.wantTot)
			}
		})
	}
}

func TestDelays(t *testing.T) {
	slowLLM := llmEv(100, "", "gpt-5", 1, 1, 1, 0)
	slowLLM.LLM.LatencyMs = 60_000
	fastLLM := llmEv(100, "", "gpt-5", 1, 1, 1, 0)
	fastLLM.LLM.LatencyMs = 59_999
	tests := []struct {
		name string
		evs  []event.Event
		want []string // cause:ms:ref-kind
	}{
		{"tool at 30 s", stream(sess("s"), shellEv(1, "a", "make", true), resultEv(31, "a", false)), []string{"tool:30000:verify"}},
		{"tool under 30 s", stream(sess("s"), shellEv(1, "a", "make", true), resultEv(30.999, "a", false)), nil},
		{"llm at 60 s", stream(sess("s"), slowLLM), []string{"llm:60000:llm"}},
		{"llm under 60 s", stream(sess("s"), fastLLM), nil},
		{"mcp counts as tool", stream(sess("s"), func() event.Event {
			e := callEv(1, "m", "mcp__db__query", "mcp")
			e.Call.Server, e.Call.MCPTool = "db", "query"
			return e
		}(), resultEv(45, "m", false)), []string{"tool:44000:mcp"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustBuild(t, tt.evs, Options{})
			var got []string
			for i, e := range m.Events {
				if e.Kind != "delay" {
					continue
				}
				ref := m.Events[*e.Ref]
				got = append(got, fmt.Sprintf("%s:%d:%s", e.Cause, e.Ms, ref.Kind))
				if *e.Ref != i-1 || e.T != ref.T {
					t.Errorf("delay %d not right after its cause (ref %d, t %d vs %d)", i, *e.Ref, e.T, ref.T)
				}
			}
			if !equalStrings(got, tt.want) {
				t.Errorf("delays %v, want %v", got, tt.want)
			}
			if m.Totals.Delays != len(tt.want) {
				t.Errorf("totals.delays %d", m.Totals.Delays)
			}
		})
	}
}

func TestStall(t *testing.T) {
	lat := func(e event.Event, ms int64) event.Event { e.LLM.LatencyMs = ms; return e }
	tests := []struct {
		name string
		evs  []event.Event
		want []string // ms@ref-kind
	}{
		{"idle between a result and the next request", stream(sess("s"),
			llmEv(0, "", "gpt-5", 1, 1, 1, 0), shellEv(0, "a", "ls", false), resultEv(1, "a", false),
			lat(llmEv(200, "", "gpt-5", 1, 1, 0, 1), 10_000)),
			// idle from the end of the call (1 s) to the request's start (190 s)
			[]string{"189000@exec"}},
		{"just under the threshold", stream(sess("s"),
			llmEv(0, "", "gpt-5", 1, 1, 1, 0), shellEv(0, "a", "ls", false), resultEv(1, "a", false),
			llmEv(120.999, "", "gpt-5", 1, 1, 0, 1)), nil},
		{"after a final response the agent waits on the user", stream(sess("s"),
			llmEv(0, "", "gpt-5", 1, 1, 0, 5), llmEv(500, "", "gpt-5", 1, 1, 0, 5)), nil},
		{"after a turn end", stream(sess("s"),
			llmEv(0, "", "gpt-5", 1, 1, 1, 0), shellEv(0, "a", "ls", false), resultEv(1, "a", false),
			turnEnd(2), llmEv(500, "", "gpt-5", 1, 1, 0, 5)), nil},
		{"across a user event", stream(sess("s"),
			llmEv(0, "", "gpt-5", 1, 1, 1, 0), shellEv(0, "a", "ls", false), resultEv(1, "a", false),
			userEv(500, 3)), nil},
		{"a long tool call is no stall", stream(sess("s"),
			llmEv(0, "", "gpt-5", 1, 1, 1, 0), shellEv(0, "a", "sleep", false), resultEv(300, "a", false),
			llmEv(301, "", "gpt-5", 1, 1, 0, 1)), nil},
		{"a model switch before a slow request is no activity", stream(sess("s"),
			llmEv(0, "", "gpt-5", 1, 1, 1, 0), shellEv(0, "a", "ls", false), resultEv(1, "a", false),
			lat(llmEv(200, "", "gpt-5-codex", 1, 1, 0, 1), 190_000)), nil},
		{"subagent lanes do not stall", stream(sess("s"),
			onLane("sa-1", llmEv(0, "", "gpt-5", 1, 1, 1, 0), shellEv(0, "a", "ls", false), resultEv(1, "a", false),
				llmEv(500, "", "gpt-5", 1, 1, 0, 1))), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustBuild(t, tt.evs, Options{})
			var got []string
			for _, e := range find(m, "delay") {
				if e.Cause == "stall" {
					got = append(got, fmt.Sprintf("%d@%s", e.Ms, m.Events[*e.Ref].Kind))
				}
			}
			if !equalStrings(got, tt.want) {
				t.Errorf("stalls %v, want %v", got, tt.want)
			}
		})
	}
}
