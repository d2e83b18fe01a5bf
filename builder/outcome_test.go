package builder

import (
	"errors"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
)

func TestOutcomes(t *testing.T) {
	ok := func(id string) event.Event { return resultEv(2, id, false) }
	fail := func(id, class string) event.Event {
		e := resultEv(2, id, true)
		e.Result.ErrClass = class
		return e
	}
	edit := func(id string) event.Event {
		return callEv(1, id, "Edit", "edit", file("k", "a.go", "edit", "modify"))
	}
	text := llmEv(3, "", "gpt-5", 1, 1, 0, 10)
	early := llmEv(0.5, "", "gpt-5", 1, 1, 0, 10)
	prRes := ok("p")
	prRes.Result.PR = &event.PR{Action: "create", Provider: "github", Repo: "a/b", Number: 1, URL: "https://github.com/a/b/pull/1"}
	tests := []struct {
		name string
		evs  []event.Event
		want string
	}{
		{"pr_created beats everything", stream(sess("s"), shellEv(1, "p", "gh pr create", false), prRes,
			errorEv(3, "orchestration", "interrupted")), OutcomePRCreated},
		{"interrupted", stream(sess("s"), edit("e"), ok("e"), errorEv(3, "orchestration", "interrupted"), text), OutcomeInterrupted},
		{"interrupted tool call", stream(sess("s"), shellEv(1, "x", "ls", false), fail("x", "interrupted"), text), OutcomeInterrupted},
		{"blocked", stream(sess("s"), shellEv(1, "x", "rm", false), fail("x", "permission_denied"), text), OutcomeBlocked},
		{"interrupt older than 12 events is forgotten", stream(sess("s"),
			errorEv(0, "orchestration", "interrupted"),
			llmEv(1, "", "gpt-5", 1, 1, 0, 1), llmEv(1, "", "gpt-5", 1, 1, 0, 1), llmEv(1, "", "gpt-5", 1, 1, 0, 1),
			llmEv(1, "", "gpt-5", 1, 1, 0, 1), llmEv(1, "", "gpt-5", 1, 1, 0, 1), llmEv(1, "", "gpt-5", 1, 1, 0, 1),
			llmEv(1, "", "gpt-5", 1, 1, 0, 1), llmEv(1, "", "gpt-5", 1, 1, 0, 1), llmEv(1, "", "gpt-5", 1, 1, 0, 1),
			llmEv(1, "", "gpt-5", 1, 1, 0, 1), llmEv(1, "", "gpt-5", 1, 1, 0, 1), llmEv(1, "", "gpt-5", 1, 1, 0, 1)),
			OutcomeCompleted},
		{"verified", stream(sess("s"), edit("e"), ok("e"), shellEv(3, "v", "go test", true), ok("v")), OutcomeVerified},
		{"verified even with errors before it", stream(sess("s"), shellEv(1, "a", "ls", false), fail("a", "exit_code"),
			shellEv(1, "b", "cat", false), fail("b", "exit_code"), shellEv(3, "v", "go test", true), ok("v")), OutcomeVerified},
		{"edit after the verify", stream(sess("s"), shellEv(1, "v", "go test", true), ok("v"), edit("e"), ok("e"), text), OutcomeCompleted},
		{"failed last verify", stream(sess("s"), shellEv(1, "v", "go test", true), fail("v", "exit_code"), text), OutcomeCompleted},
		{"unresolved errors", stream(sess("s"), shellEv(1, "v", "go test", true), fail("v", "exit_code"),
			errorEv(2, "llm", "overloaded"), text), OutcomeUnresolvedErrors},
		{"incomplete: ends on an edit", stream(sess("s"), early, edit("e"), ok("e")), OutcomeIncomplete},
		{"incomplete: no text after the last exec", stream(sess("s"), early, shellEv(1, "x", "ls", false), ok("x"),
			llmEv(4, "", "gpt-5", 1, 1, 1, 0), callEv(5, "r", "Read", "read")), OutcomeIncomplete},
		{"completed", stream(sess("s"), edit("e"), ok("e"), text), OutcomeCompleted},
	}
	// A session with no event at all has no map, so no outcome.
	if _, err := Build(stream(sess("s")), Options{}); !errors.Is(err, ErrEmptySession) {
		t.Errorf("empty session: %v, want ErrEmptySession", err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustBuild(t, tt.evs, Options{})
			if m.Agents[0].Outcome != tt.want || m.Session.Outcome != tt.want {
				t.Errorf("outcome %s / %s, want %s", m.Agents[0].Outcome, m.Session.Outcome, tt.want)
			}
		})
	}
}

func TestOutcomePerLane(t *testing.T) {
	prRes := resultEv(4, "p", false)
	prRes.Result.PR = &event.PR{Action: "create", Provider: "github", Repo: "a/b", Number: 1, URL: "https://github.com/a/b/pull/1"}
	evs := stream(sess("s"), llmEv(1, "", "gpt-5", 1, 1, 0, 3),
		onLane("sa-1", shellEv(2, "p", "gh pr create", false), prRes),
		onLane("sa-2", callEv(2, "e", "Edit", "edit", file("k", "a", "edit", "modify"))))
	m := mustBuild(t, evs, Options{})
	got := map[string]string{}
	for _, a := range m.Agents {
		got[a.ID] = a.Outcome
	}
	if got["main"] != OutcomeCompleted || got["sa-1"] != OutcomePRCreated || got["sa-2"] != OutcomeIncomplete {
		t.Errorf("agent outcomes %v", got)
	}
	if m.Session.Outcome != OutcomePRCreated {
		t.Errorf("session outcome %s", m.Session.Outcome)
	}
}
