package builder

import (
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/validate"
)

// TestNamesThatCouldBeTextReachNoMap feeds the builder events whose names
// are sentences (words parted by a zero-width space, a no-break space, a
// line break), as a parser without a filter would emit them: the map holds
// none of them, names the skill and the MCP server "unknown", and still pairs a call with its
// result through an id that is no name. The gate is the builder's own
// (event.Scrub), behind every parser's filter.
func TestNamesThatCouldBeTextReachNoMap(t *testing.T) {
	const s = "CANARY\u200bthe\u200bsecret\u200bmerger"
	const nb = "CANARY\u00a0pasted\u00a0prompt\u00a0text"
	badID := "call_1\nfc_CANARY"
	evs := stream(
		sess("s1"),
		userEv(1, 10),
		llmEv(2, "m1", nb, 100, 10, 3, 0),
		event.Event{Kind: event.KindCall, T: at(3), Call: &event.Call{ID: badID, Tool: s, Kind: "subagent", Cat: "subagent", SubagentType: nb}},
		event.Event{Kind: event.KindCall, T: at(4), Call: &event.Call{ID: "c2", Tool: "Skill", Kind: "skill", Cat: "skill", Skill: s}},
		event.Event{Kind: event.KindCall, T: at(5), Call: &event.Call{ID: "c3", Tool: "mcp__x__y", Kind: "mcp", Cat: "mcp", Server: nb, MCPTool: s}},
		event.Event{Kind: event.KindResult, T: at(6), Result: &event.Result{CallID: badID, OutBytes: 1234}},
		event.Event{Kind: event.KindResult, T: at(6), Result: &event.Result{CallID: "c2"}},
		event.Event{Kind: event.KindResult, T: at(6), Result: &event.Result{CallID: "c3"}},
		event.Event{Kind: event.KindError, T: at(7), Error: &event.Error{Source: "hook", Class: "hook_error", Hook: s, HookEvent: nb}},
	)
	m := mustBuild(t, evs, Options{})
	canon, err := m.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(canon), "CANARY") {
		t.Fatalf("the map holds a sentence from a name:\n%s", canon)
	}
	sub := find(m, "subagent")
	if len(sub) != 1 || sub[0].SubagentType != "" || sub[0].OutBytes == nil || *sub[0].OutBytes != 1234 {
		t.Errorf("subagent call: %+v (want no type, paired with its result's 1234 bytes)", sub)
	}
	if sk := find(m, "skill"); len(sk) != 1 || sk[0].Skill != "unknown" {
		t.Errorf("skill call: %+v (want skill unknown)", sk)
	}
	if mcp := find(m, "mcp"); len(mcp) != 1 || mcp[0].Server != "unknown" || mcp[0].Tool != "mcp__x__y" {
		t.Errorf("MCP call: %+v (want server unknown, the tool by its full name)", mcp)
	}
	if problems := validate.Map(canon); len(problems) > 0 {
		t.Errorf("the map fails validation: %v", problems)
	}
}
