package builder

import (
	"testing"
	"time"

	"github.com/agentmap/agentmap/builder/event"
)

// A time out of bounds (a log's seconds since some start, a year 9999) is
// the time of the line before it, or of the first in bounds after it: the
// session neither starts in 1970 nor lasts for centuries.
func TestTimesOutOfBounds(t *testing.T) {
	t0 := time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC).UnixMilli()
	year9999 := time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).UnixMilli()
	evs := []event.Event{
		{Kind: event.KindSession, T: 12345000, Session: &event.Session{NativeID: "s1", AgentTool: "claude-code", Role: "root", EndT: year9999}},
		{Kind: event.KindUser, T: t0, User: &event.User{Chars: 5}},
		{Kind: event.KindLLM, T: t0 + 1000, Model: "claude-sonnet-4-5", LLM: &event.LLM{In: 5, Out: 7, Stop: "end_turn"}},
		{Kind: event.KindUser, T: year9999, User: &event.User{Chars: 5}},
		{Kind: event.KindUser, T: 12345000, User: &event.User{Chars: 5}},
		{Kind: event.KindLLM, T: t0 + 5000, Model: "claude-sonnet-4-5", LLM: &event.LLM{In: 5, Out: 7, Stop: "end_turn"}},
		{Kind: event.KindTurnEnd, T: t0 + 6000},
	}
	m, err := Build(evs, Options{Producer: "agentmap test"})
	if err != nil {
		t.Fatal(err)
	}
	if m.Session.DurationMs <= 0 || m.Session.DurationMs > 6000 {
		t.Errorf("duration %d ms, want within the session's 6000", m.Session.DurationMs)
	}
	for _, e := range m.Events { // times from the session's start
		if e.T < 0 || e.T > 6000 {
			t.Errorf("event %s at %d ms, out of the session's 6000", e.Kind, e.T)
		}
	}
	if want := time.UnixMilli(t0).UTC().Format(time.RFC3339Nano); m.Session.StartedAt != want && m.Session.StartedAt != "2026-06-01T10:00:00.000Z" {
		t.Errorf("started at %s, want %s", m.Session.StartedAt, want)
	}
	if evs[3].T != year9999 || evs[0].Session.EndT != year9999 {
		t.Error("Build changed its input")
	}
	same := evs[1:3]
	if got := plausibleTimes(same); &got[0] != &same[0] {
		t.Error("events in bounds were copied")
	}
}
