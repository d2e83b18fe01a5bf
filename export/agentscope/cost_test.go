package agentscope

import (
	"testing"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/export/mapfile"
)

// A run's cost never reads $0.00 for tokens of a model with no price: the
// maps carry 0 for them, as the format wants a number.
func TestCostOfUnpricedTokens(t *testing.T) {
	const t0 = int64(1767225600000)
	llm := func(at int64, model string) event.Event {
		return event.Event{Kind: event.KindLLM, T: t0 + at, Model: model, LLM: &event.LLM{In: 1000, Out: 500}}
	}
	for _, tc := range []struct {
		models []string
		want   string
	}{
		{[]string{"claude-sonnet-4-5"}, "$0.01"},
		{[]string{"mimo-unknown-9"}, "unpriced"},
		{[]string{"claude-sonnet-4-5", "mimo-unknown-9"}, "$0.01+unpriced"},
		{nil, "$0.00"},
	} {
		evs := []event.Event{{Kind: event.KindSession, T: t0, Session: &event.Session{NativeID: "cost-1", AgentTool: "claude-code", Role: "root"}},
			{Kind: event.KindUser, T: t0 + 10, User: &event.User{Chars: 5}}}
		for i, m := range tc.models {
			evs = append(evs, llm(int64(1000*(i+1)), m))
		}
		evs = append(evs, event.Event{Kind: event.KindEnd, T: t0 + 9000})
		m, err := builder.Build(evs, builder.Options{Producer: "agentmap test"})
		if err != nil {
			t.Fatal(err)
		}
		raw, err := m.Canonical()
		if err != nil {
			t.Fatal(err)
		}
		d, err := mapfile.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := Convert(d.Map).Cost; got != tc.want {
			t.Errorf("%v: cost %q, want %q", tc.models, got, tc.want)
		}
	}
}
