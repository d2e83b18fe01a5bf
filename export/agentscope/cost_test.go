package agentscope_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/export"
	"github.com/agentmap/agentmap/export/agentscope"
	"github.com/agentmap/agentmap/export/exportcheck"
	"github.com/agentmap/agentmap/export/mapfile"
)

// A run's cost never reads $0.00 for tokens of a model with no price, or
// of requests whose log recorded no usage: the maps carry 0 for them, as
// the format wants a number. The trace stays valid: AgentScope's cost is a
// string it requires, and does not read.
func TestCostOfUnpricedTokens(t *testing.T) {
	schemas, err := exportcheck.LoadSchemas(filepath.Join("..", "..", "..", "shared", "schemas"))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
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
		// Requests whose log recorded no usage (Cursor's) used tokens too.
		{[]string{"", ""}, "usage not recorded"},
	} {
		evs := []event.Event{{Kind: event.KindSession, T: t0, Session: &event.Session{NativeID: "cost-1", AgentTool: "claude-code", Role: "root"}},
			{Kind: event.KindUser, T: t0 + 10, User: &event.User{Chars: 5}}}
		for i, m := range tc.models {
			e := llm(int64(1000*(i+1)), m)
			if m == "" {
				e.LLM = &event.LLM{}
			}
			evs = append(evs, e)
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
		run := agentscope.Convert(d.Map)
		if got := run.Cost; got != tc.want {
			t.Errorf("%v: cost %q, want %q", tc.models, got, tc.want)
		}
		var trace bytes.Buffer
		w := agentscope.NewWriter(&trace)
		if err := w.Add(d.Map); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := agentscope.Validate(trace.Bytes()); err != nil {
			t.Errorf("%v: agentscope validate: %v", tc.models, err)
		}
		if schemas != nil {
			if p := schemas.Check(export.AgentScope, trace.Bytes(), nil); len(p) > 0 {
				t.Errorf("%v: against the published schema:\n%s", tc.models, strings.Join(p, "\n"))
			}
		}
	}
}
