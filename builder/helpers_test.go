package builder

import (
	"encoding/json"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
)

// Event constructors for hand-written streams. Times are seconds after a
// fixed epoch so that tables read easily.

const epoch = int64(1_760_000_000_000)

func at(sec float64) int64 { return epoch + int64(sec*1000) }

func sess(id string) event.Event {
	return event.Event{Kind: event.KindSession, T: epoch,
		Session: &event.Session{NativeID: id, AgentTool: "claude-code", AgentVersion: "2.0.0"}}
}

func repoEv(sec float64, key, name, remote string) event.Event {
	return event.Event{Kind: event.KindRepo, T: at(sec), Repo: &event.Repo{Key: key, Name: name, Remote: remote}}
}

func userEv(sec float64, chars int) event.Event {
	return event.Event{Kind: event.KindUser, T: at(sec), User: &event.User{Chars: chars}}
}

func llmEv(sec float64, msgID, model string, in, out int64, tools, text int) event.Event {
	return event.Event{Kind: event.KindLLM, T: at(sec), Model: model,
		LLM: &event.LLM{MsgID: msgID, In: in, Out: out, ToolCalls: tools, TextChars: text, LatencyMs: -1}}
}

func callEv(sec float64, id, tool, kind string, targets ...event.Target) event.Event {
	return event.Event{Kind: event.KindCall, T: at(sec),
		Call: &event.Call{ID: id, Tool: tool, Kind: kind, Targets: targets}}
}

func shellEv(sec float64, id, verb string, verify bool) event.Event {
	kind := "exec"
	if verify {
		kind = "verify"
	}
	e := callEv(sec, id, "Bash", kind)
	e.Call.Verb = verb
	return e
}

func resultEv(sec float64, id string, failed bool) event.Event {
	r := &event.Result{CallID: id, Err: failed, OutBytes: 10}
	if failed {
		r.ErrClass = "exit_code"
	}
	return event.Event{Kind: event.KindResult, T: at(sec), Result: r}
}

func errorEv(sec float64, source, class string) event.Event {
	return event.Event{Kind: event.KindError, T: at(sec), Error: &event.Error{Source: source, Class: class}}
}

func turnEnd(sec float64) event.Event { return event.Event{Kind: event.KindTurnEnd, T: at(sec)} }

func file(repo, path, touch, op string) event.Target {
	return event.Target{Repo: repo, Path: path, Touch: touch, Op: op}
}

func onLane(lane string, evs ...event.Event) []event.Event {
	out := make([]event.Event, len(evs))
	for i, e := range evs {
		e.Agent = lane
		out[i] = e
	}
	return out
}

func stream(parts ...any) []event.Event {
	var out []event.Event
	for _, p := range parts {
		switch x := p.(type) {
		case event.Event:
			out = append(out, x)
		case []event.Event:
			out = append(out, x...)
		}
	}
	return out
}

func mustBuild(t testing.TB, evs []event.Event, opts Options) *Map {
	t.Helper()
	m, err := Build(evs, opts)
	if err != nil {
		t.Fatalf("Build: %v", err)
	}
	return m
}

// kinds lists the kinds of the map's events.
func kinds(m *Map) []string {
	out := make([]string, len(m.Events))
	for i, e := range m.Events {
		out[i] = e.Kind
	}
	return out
}

func find(m *Map, kind string) []Event {
	var out []Event
	for _, e := range m.Events {
		if e.Kind == kind {
			out = append(out, e)
		}
	}
	return out
}

func docOf(t testing.TB, m *Map) map[string]any {
	t.Helper()
	canon, err := m.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(canon, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}
