package claude

import (
	"strings"
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

// inFileLane reports whether event i of out belongs where the file's lane
// says: every event does, but a subagent's relayed request, which goes to
// the subagent's lane after the record naming that lane's launch.
func inFileLane(out []event.Event, i int, src watchers.Source) bool {
	e := &out[i]
	if e.Agent == src.Lane {
		return true
	}
	relayed := e.LLM != nil && e.LLM.Relayed ||
		e.Kind == event.KindLane && i+1 < len(out) && out[i+1].LLM != nil && out[i+1].LLM.Relayed && out[i+1].Agent == e.Agent
	return relayed && strings.HasPrefix(e.Agent, "sa-")
}
