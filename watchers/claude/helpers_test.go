package claude

import (
	"testing"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers"
)

func sourceFor(session string) watchers.Source {
	return watchers.Source{Agent: Agent, Session: session}
}

// parseLines runs one parser over the lines of a main session, in order.
func parseLines(t testing.TB, lines []string) []event.Event {
	t.Helper()
	p := NewParser(sourceFor("0a1b2c3d-0000-4000-8000-000000000001"))
	var out []event.Event
	for i, l := range lines {
		var err error
		if out, err = p.Line([]byte(l), out); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
	}
	return out
}
