package daemon

import (
	"reflect"
	"testing"

	"github.com/agentmap/agentmap/state"
)

func TestSkippedSessions(t *testing.T) {
	srcs := []*state.Source{
		{Session: "claude/a", Agent: "claude", Skipped: 2},
		{Session: "claude/a", Agent: "claude", Oversized: 1}, // a subagent file of the same session
		{Session: "codex/b", Agent: "codex", Skipped: 5},
		{Session: "codex/c", Agent: "codex"},
	}
	want := []SkippedSession{{"codex/b", "codex", 5}, {"claude/a", "claude", 3}}
	if got := skippedSessions(srcs); !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v, want %+v", got, want)
	}
	many := make([]*state.Source, 30)
	for i := range many {
		many[i] = &state.Source{Session: string(rune('a' + i)), Skipped: int64(i + 1)}
	}
	if got := skippedSessions(many); len(got) != maxSkippedSessions || got[0].Lines != 30 {
		t.Errorf("bounded list: %+v", got)
	}
}
