package builder

import (
	"slices"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/prices"
)

func TestRequestMerge(t *testing.T) {
	rec := func(sec float64, id string, in, cw, cr, out int64, tools, text int, think bool, stop string, lat int64) event.Event {
		return event.Event{Kind: event.KindLLM, T: at(sec), Model: "claude-sonnet-4-5",
			LLM: &event.LLM{MsgID: id, In: in, CW: cw, CR: cr, Out: out, ToolCalls: tools,
				TextChars: text, Thinking: think, Stop: stop, LatencyMs: lat}}
	}
	tests := []struct {
		name string
		evs  []event.Event
		want []Event // only the llm fields compared
	}{
		{
			name: "lines of one response: largest usage, sums, OR, last stop, first time and latency",
			evs: stream(sess("s"),
				rec(1, "m1", 3, 100, 1000, 1, 0, 0, true, "", 1500),
				rec(1.5, "m1", 3, 100, 1000, 1, 0, 120, false, "", 0),
				rec(2, "m1", 3, 100, 1000, 250, 2, 0, false, "tool_use", 0)),
			want: []Event{{T: 0, In: 3, CW: 100, CR: 1000, Out: 250, ToolCalls: 2, TextChars: 120,
				Thinking: true, Stop: "tool_use", Latency: ptr64(1500)}},
		},
		{
			name: "a smaller snapshot after the largest one does not win",
			evs: stream(sess("s"),
				rec(1, "m1", 3, 0, 0, 400, 0, 1, false, "", -1),
				rec(2, "m1", 3, 0, 0, 10, 0, 1, false, "end_turn", -1)),
			want: []Event{{In: 3, Out: 400, TextChars: 2, Stop: "end_turn"}},
		},
		{
			name: "tie: the later record's split wins",
			evs: stream(sess("s"),
				rec(1, "m1", 10, 0, 0, 0, 0, 0, false, "", -1),
				rec(2, "m1", 0, 0, 0, 10, 0, 0, false, "", -1)),
			want: []Event{{Out: 10}},
		},
		{
			name: "empty MsgID: each record is a request",
			evs: stream(sess("s"),
				rec(1, "", 1, 0, 0, 1, 0, 0, false, "", -1),
				rec(2, "", 1, 0, 0, 1, 0, 0, false, "", -1)),
			want: []Event{{In: 1, Out: 1}, {T: 1000, In: 1, Out: 1}},
		},
		{
			// A response id names one response: a second lane's copy
			// replays it and is not counted again.
			name: "same MsgID in two lanes: the main lane's request",
			evs: stream(sess("s"),
				rec(1, "m1", 1, 0, 0, 1, 0, 0, false, "", -1),
				onLane("sa-x", rec(2, "m1", 2, 0, 0, 2, 0, 0, false, "", -1), rec(3, "m2", 4, 0, 0, 4, 0, 0, false, "", -1))),
			want: []Event{{In: 1, Out: 1}, {T: 2000, In: 4, Out: 4}},
		},
		{
			// A side question's subagent replays its parent's messages
			// under their message ids with new request ids.
			name: "a Claude message replayed in a subagent under a new request id: counted once",
			evs: stream(sess("s"),
				rec(1, "msg_01A/req_1", 1, 0, 0, 1, 0, 0, false, "", -1),
				rec(2, "msg_01B/req_2", 3, 0, 0, 3, 0, 0, false, "", -1),
				onLane("aside_question-1",
					rec(3, "msg_01A/req_9", 1, 0, 0, 1, 0, 0, false, "", -1),
					rec(3, "msg_01B/req_9", 3, 0, 0, 3, 0, 0, false, "", -1),
					rec(4, "msg_01C/req_10", 5, 0, 0, 5, 0, 0, false, "", -1))),
			want: []Event{{In: 1, Out: 1}, {T: 1000, In: 3, Out: 3}, {T: 3000, In: 5, Out: 5}},
		},
		{
			name: "same response in two subagents, none in the main lane: the first lane's",
			evs: stream(sess("s"),
				onLane("a-1", rec(1, "msg_01A/req_1", 1, 0, 0, 1, 0, 0, false, "", -1)),
				onLane("a-2", rec(2, "msg_01A/req_2", 1, 0, 0, 1, 0, 0, false, "", -1))),
			want: []Event{{In: 1, Out: 1}},
		},
		{
			// Other agents' ids are compared whole: one prefix is not
			// one response.
			name: "ids of another shape sharing a prefix in two lanes: two requests",
			evs: stream(sess("s"),
				rec(1, "resp_1/a", 1, 0, 0, 1, 0, 0, false, "", -1),
				onLane("sa-x", rec(2, "resp_1/b", 2, 0, 0, 2, 0, 0, false, "", -1))),
			want: []Event{{In: 1, Out: 1}, {T: 1000, In: 2, Out: 2}},
		},
		{
			name: "records of other requests in between",
			evs: stream(sess("s"),
				rec(1, "a", 1, 0, 0, 1, 1, 0, false, "", -1),
				rec(2, "b", 5, 0, 0, 5, 0, 0, false, "", -1),
				rec(3, "a", 1, 0, 0, 9, 1, 0, false, "", -1)),
			want: []Event{{In: 1, Out: 9, ToolCalls: 2}, {T: 1000, In: 5, Out: 5}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustBuild(t, tt.evs, Options{})
			got := find(m, "llm")
			if len(got) != len(tt.want) {
				t.Fatalf("%d requests, want %d", len(got), len(tt.want))
			}
			for i, w := range tt.want {
				g := got[i]
				if g.T != w.T || g.In != w.In || g.CW != w.CW || g.CR != w.CR || g.Out != w.Out ||
					g.ToolCalls != w.ToolCalls || g.TextChars != w.TextChars || g.Thinking != w.Thinking ||
					g.Stop != w.Stop || !eq64(g.Latency, w.Latency) {
					t.Errorf("request %d = %+v\nwant %+v", i, g, w)
				}
			}
			var tokens int64
			for _, w := range tt.want {
				tokens += w.In + w.CW + w.CR + w.Out
			}
			if m.Totals.Tokens != tokens || m.Totals.Requests != len(tt.want) {
				t.Errorf("totals tokens %d requests %d, want %d %d", m.Totals.Tokens, m.Totals.Requests, tokens, len(tt.want))
			}
		})
	}
}

func TestModelSwitch(t *testing.T) {
	model := func(sec float64, m string) event.Event {
		return event.Event{Kind: event.KindModel, T: at(sec), Model: m}
	}
	tests := []struct {
		name   string
		evs    []event.Event
		want   []string // from>to
		models []string
	}{
		{"first model is no switch", stream(sess("s"), model(0, "gpt-5"), llmEv(1, "", "", 1, 1, 0, 1)), nil, []string{"gpt-5"}},
		{"turn context change", stream(sess("s"), model(0, "gpt-5"), llmEv(1, "", "", 1, 1, 0, 1),
			model(2, "gpt-5-codex"), llmEv(3, "", "", 1, 1, 0, 1)), []string{"gpt-5>gpt-5-codex"}, []string{"gpt-5", "gpt-5-codex"}},
		{"same model repeated", stream(sess("s"), model(0, "gpt-5"), model(1, "gpt-5"), llmEv(2, "", "gpt-5", 1, 1, 0, 1)), nil, []string{"gpt-5"}},
		{"request model change", stream(sess("s"), llmEv(1, "", "claude-opus-4-5", 1, 1, 0, 1),
			llmEv(2, "", "claude-sonnet-4-5", 1, 1, 0, 1), llmEv(3, "", "claude-opus-4-5", 1, 1, 0, 1)),
			[]string{"claude-opus-4-5>claude-sonnet-4-5", "claude-sonnet-4-5>claude-opus-4-5"}, []string{"claude-opus-4-5", "claude-sonnet-4-5"}},
		{"lanes have their own model", stream(sess("s"), llmEv(1, "", "claude-opus-4-5", 1, 1, 0, 1),
			onLane("sa-1", llmEv(2, "", "claude-haiku-4-5", 1, 1, 0, 1)), llmEv(3, "", "claude-opus-4-5", 1, 1, 0, 1)),
			nil, []string{"claude-opus-4-5", "claude-haiku-4-5"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := mustBuild(t, tt.evs, Options{})
			var got []string
			for i, e := range m.Events {
				if e.Kind == "model_switch" {
					got = append(got, e.From+">"+e.To)
					// The switch comes right before the request it announces.
					if i+1 >= len(m.Events) || m.Events[i+1].Model != e.To {
						t.Errorf("switch at %d is not followed by a %s event", i, e.To)
					}
				}
			}
			if !slices.Equal(got, tt.want) || m.Totals.ModelSwitches != len(tt.want) {
				t.Errorf("switches %v (total %d), want %v", got, m.Totals.ModelSwitches, tt.want)
			}
			if !slices.Equal(m.Session.Models, tt.models) {
				t.Errorf("models %v, want %v", m.Session.Models, tt.models)
			}
		})
	}
}

func TestRequestWithoutModel(t *testing.T) {
	m := mustBuild(t, stream(sess("s"), llmEv(1, "", "", 1, 1, 0, 1)), Options{})
	if got := find(m, "llm")[0].Model; got != unknownModel {
		t.Errorf("model = %q", got)
	}
}

func TestCost(t *testing.T) {
	tests := []struct {
		model           string
		in, cw, cr, out int64
		want            float64
	}{
		{"claude-sonnet-4-5-20250929", 100_000, 0, 0, 0, 0.3},
		{"claude-sonnet-4-5-20250929", 1_000_000, 0, 0, 0, 6}, // above 200K: the long-context rate
		{"claude-sonnet-4-5-20250929", 100, 200, 1000, 50, 0.0021},
		{"claude-opus-4-1-20250805", 0, 0, 0, 1_000_000, 75},
		{"claude-opus-4-5-20251101", 0, 0, 0, 1_000_000, 25},
		{"claude-haiku-4-5-20251001", 1_000_000, 0, 0, 0, 1},
		{"claude-3-5-haiku-20241022", 1_000_000, 0, 0, 0, 0.8},
		{"us.anthropic.claude-3-7-sonnet-20250219-v1:0", 1_000_000, 0, 0, 0, 3},
		{"gpt-5-codex", 1_000_000, 0, 1_000_000, 0, 1.375},
		{"gpt-5-mini", 0, 0, 0, 1_000_000, 2},
		{"gpt-5.1-codex-mini", 0, 0, 0, 1_000_000, 2},
		{"gpt-4.1-mini", 1_000_000, 0, 0, 0, 0.4},
		{"o4-mini", 1_000_000, 0, 0, 0, 1.1},
		{"openai/o3", 1_000_000, 0, 0, 0, 2},
		{"gemini-2.5-pro", 0, 0, 0, 1_000_000, 10},
		{"gemini-2.5-flash", 0, 0, 0, 1_000_000, 2.5},
		{"my-local-llama", 1_000_000, 0, 0, 1_000_000, 0},
		{"claude-sonnet-4-5", 1, 0, 0, 0, 0.000003},
		{"claude-sonnet-4-5", 1, 0, 0, 1, 0.000018},
	}
	for _, tt := range tests {
		p, _ := PriceFor(tt.model, nil)
		if got := p.Cost(prices.Usage{In: tt.in, CW5m: tt.cw, CR: tt.cr, Out: tt.out}); got != tt.want {
			t.Errorf("%s: cost %v, want %v", tt.model, got, tt.want)
		}
	}
	over := map[string]Price{"my-local": {Input: 1}, "my-local-llama": {Input: 2}, "claude": {Output: 1}}
	if p, ok := PriceFor("my-local-llama-3", over); !ok || p.Input != 2 {
		t.Errorf("longest override prefix not used: %+v", p)
	}
	if p, _ := PriceFor("claude-sonnet-4-5", over); p.Output != 1 {
		t.Errorf("override does not beat the table: %+v", p)
	}
	m := mustBuild(t, stream(sess("s"), llmEv(1, "", "claude-sonnet-4-6", 1_000_000, 0, 0, 1),
		llmEv(2, "", "x", 1_000_000, 0, 0, 1)), Options{Prices: map[string]Price{"x": {Input: 0.5}}})
	if m.Totals.CostUSD != 3.5 || m.Agents[0].Cost != 3.5 {
		t.Errorf("costUsd %v agent cost %v", m.Totals.CostUSD, m.Agents[0].Cost)
	}
}

func ptr64(v int64) *int64 { return &v }

func eq64(a, b *int64) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}

// TestCostByLifetimeAndSpeed prices a request's 1-hour cache writes at
// their own rate and a fast-mode request at the model's multiplier.
func TestCostByLifetimeAndSpeed(t *testing.T) {
	ev := func(id string, cw, cw1h int64, fast bool) event.Event {
		return event.Event{Kind: event.KindLLM, T: at(1), Model: "claude-opus-4-6",
			LLM: &event.LLM{MsgID: id, CW: cw, CW1h: cw1h, Fast: fast, Out: 1000}}
	}
	m := mustBuild(t, []event.Event{sess("s1"), ev("a", 1_000_000, 600_000, false), ev("b", 0, 0, true)}, Options{})
	var costs []float64
	for _, e := range m.Events {
		if e.Kind == "llm" {
			costs = append(costs, e.Cost)
		}
	}
	// a: 400K at $6.25 + 600K at $10 + 1K out at $25; b: 1K out at 6 x $25.
	want := []float64{2.5 + 6 + 0.025, 0.15}
	if !slices.Equal(costs, want) {
		t.Errorf("costs %v, want %v", costs, want)
	}
	if m.Totals.CostUSD != prices.Round(want[0]+want[1]) {
		t.Errorf("costUsd %v", m.Totals.CostUSD)
	}
}

// TestSideRequests counts a compaction's request (written last, as a side
// file is) in requests, tokens and cost, without a model switch and
// without turning an earlier unanswered call into a no_result.
func TestSideRequests(t *testing.T) {
	side := event.Event{Kind: event.KindLLM, T: at(2), Model: "claude-haiku-4-5",
		LLM: &event.LLM{MsgID: "c1", CW: 1000, Out: 10, Side: "compaction"}}
	evs := []event.Event{sess("s1"), llmEv(1, "m1", "claude-opus-4-6", 100, 10, 1, 0),
		callEv(1, "call1", "Bash", "exec"), side}
	m := mustBuild(t, evs, Options{})
	if got := kinds(m); !slices.Equal(got, []string{"llm", "exec", "llm"}) {
		t.Errorf("kinds %v", got)
	}
	if m.Totals.Requests != 2 || m.Totals.Tokens != 1120 || m.Totals.ModelSwitches != 0 {
		t.Errorf("totals %+v", m.Totals)
	}
	if e := m.Events[1]; e.Err {
		t.Errorf("the side request made the call a %s", e.ErrClass)
	}
	if e := m.Events[2]; e.Model != "claude-haiku-4-5" || e.Cost != prices.Round((1000*1.25+10*5)/1e6) {
		t.Errorf("side request %+v", e)
	}
}

// TestClientTotals adds what the client's own total holds beyond the
// transcript as a side request, once, even when a request's line comes
// after a total that already counts it.
func TestClientTotals(t *testing.T) {
	total := func(sec float64, in int64) event.Event {
		return event.Event{Kind: event.KindClientTotal, T: at(sec), Total: &event.ClientTotal{Process: at(0),
			Models: []event.ModelTotal{{Model: "claude-sonnet-4-6", In: in, Out: 0}}}}
	}
	req := func(sec float64, id string, in int64) event.Event {
		return event.Event{Kind: event.KindLLM, T: at(sec), Model: "claude-sonnet-4-6", LLM: &event.LLM{MsgID: id, In: in}}
	}
	evs := []event.Event{sess("s1"), req(1, "a", 100), total(2, 150), req(3, "b", 50), total(4, 170)}
	m := mustBuild(t, evs, Options{})
	if m.Totals.Tokens != 170 || m.Totals.Requests != 3 {
		t.Errorf("tokens %d requests %d, want 170 and 3", m.Totals.Tokens, m.Totals.Requests)
	}
	// A total below the transcript adds nothing.
	m = mustBuild(t, []event.Event{sess("s1"), req(1, "a", 100), total(2, 90)}, Options{})
	if m.Totals.Tokens != 100 || m.Totals.Requests != 1 {
		t.Errorf("tokens %d requests %d, want 100 and 1", m.Totals.Tokens, m.Totals.Requests)
	}
}

// A subagent log that replays its parent's tool calls (a side question's
// copy of the conversation) adds neither calls nor file touches: a call id
// names one call, kept in the first lane that holds it, with its result.
func TestCallReplayedInASubagentCountsOnce(t *testing.T) {
	edit := file("", "/w/app/main.go", "edit", "modify")
	m := mustBuild(t, stream(sess("s"),
		llmEv(1, "msg_01A/req_1", "claude-sonnet-4-5", 1, 1, 1, 0),
		callEv(2, "toolu_1", "Edit", "edit", edit),
		resultEv(3, "toolu_1", true),
		onLane("aside_question-1",
			llmEv(4, "msg_01A/req_9", "claude-sonnet-4-5", 1, 1, 1, 0),
			callEv(4, "toolu_1", "Edit", "edit", edit),
			resultEv(4, "toolu_1", false),
			llmEv(5, "msg_01C/req_10", "claude-sonnet-4-5", 2, 2, 1, 0),
			callEv(6, "toolu_2", "Read", "read", file("", "/w/app/main.go", "read", "")),
			resultEv(7, "toolu_2", false))), Options{})
	edits, reads := find(m, "edit"), find(m, "read")
	if len(edits) != 1 || edits[0].Agent != "main" || !edits[0].Err || len(reads) != 1 || reads[0].Agent != "aside_question-1" {
		t.Fatalf("edits %+v, reads %+v; want the main lane's failed edit once and the subagent's own read", edits, reads)
	}
	if m.Totals.Requests != 2 || m.Totals.Tokens != 6 || m.Totals.Calls != 2 {
		t.Errorf("totals: %d requests, %d tokens, %d calls; want 2, 6, 2", m.Totals.Requests, m.Totals.Tokens, m.Totals.Calls)
	}
}

// Call ids that a provider numbers per conversation (functions.Read:0)
// repeat across lanes: each lane's call is its own, paired with its own
// lane's result, and none is taken for a replay.
func TestCallIDsRepeatedAcrossLanes(t *testing.T) {
	read := file("", "/w/app/main.go", "read", "")
	m := mustBuild(t, stream(sess("s"),
		llmEv(1, "chatcmpl-1", "kimi-k2", 1, 1, 1, 0),
		callEv(2, "functions.Read:0", "Read", "read", read),
		resultEv(3, "functions.Read:0", false),
		onLane("a-1",
			llmEv(4, "chatcmpl-2", "kimi-k2", 2, 2, 1, 0),
			callEv(5, "functions.Read:0", "Read", "read", read),
			resultEv(6, "functions.Read:0", true))), Options{})
	reads := find(m, "read")
	if len(reads) != 2 || reads[0].Agent != "main" || reads[0].Err || reads[1].Agent != "a-1" || !reads[1].Err {
		t.Fatalf("reads %+v; want the main lane's, answered, and the subagent's, failed", reads)
	}
	if m.Totals.Calls != 2 || m.Totals.Errors != 1 {
		t.Errorf("totals: %d calls, %d errors; want 2 and 1", m.Totals.Calls, m.Totals.Errors)
	}
}

// A subagent's response that the parent's log relays (Claude Code's
// agent_progress lines) is a request of the subagent's lane when no log
// holds it itself, and nothing when one does: the map of the parent with
// the subagent's file is the map of the two without the copies, whichever
// log comes first and whatever lane holds the response.
func TestRelayedRequestsCountOnce(t *testing.T) {
	relayed := func(sec float64, msgID string, cw, cr int64) event.Event {
		return event.Event{Kind: event.KindLLM, T: at(sec), Agent: "sa-a1", Model: "claude-haiku-4-5",
			LLM: &event.LLM{MsgID: msgID, CW: cw, CR: cr, Out: 1, Relayed: true}}
	}
	launch := event.Event{Kind: event.KindLane, T: at(2), Agent: "sa-a1", Lane: &event.Lane{LaunchCallID: "toolu_1"}}
	parent := func(copies bool) []event.Event {
		evs := []event.Event{sess("s"), userEv(0, 5), llmEv(1, "msg_01P/req_1", "claude-opus-4-6", 10, 5, 1, 0)}
		c := callEv(1, "toolu_1", "Agent", "subagent")
		c.Call.SubagentType = "Explore"
		evs = append(evs, c)
		if copies {
			// Two lines of one response, then a second response.
			evs = append(evs, launch, relayed(3, "msg_01S/req_2", 500, 0), launch, relayed(3.5, "msg_01S/req_2", 500, 0),
				launch, relayed(5, "msg_01T/req_3", 20, 500))
		}
		r := resultEv(6, "toolu_1", false)
		r.Result.Child = "sa-a1"
		return append(evs, r, llmEv(7, "msg_01Q/req_4", "claude-opus-4-6", 10, 5, 0, 3))
	}
	lane := onLane("sa-a1",
		event.Event{Kind: event.KindLane, T: at(2), Lane: &event.Lane{SubagentType: "Explore"}},
		userEv(2, 3),
		llmEv(2.5, "msg_01S/req_2", "claude-haiku-4-5", 0, 1, 1, 0),
		callEv(2.5, "toolu_9", "Read", "read", file("", "/w/app/a.go", "read", "")),
		resultEv(2.8, "toolu_9", false),
		llmEv(5, "msg_01T/req_3", "claude-haiku-4-5", 0, 1, 0, 12))
	lane[2].LLM.CW, lane[2].LLM.LatencyMs = 500, 400
	lane[5].LLM.CW, lane[5].LLM.CR = 20, 500

	// The parent's log alone: the copies are the lane's requests, once
	// per response, linked to their launch.
	m := mustBuild(t, parent(true), Options{})
	if m.Totals.Requests != 4 || m.Totals.Subagents != 1 || m.Totals.Tokens != 30+501+521 {
		t.Errorf("parent alone: %d requests, %d subagents, %d tokens; want 4, 1, %d",
			m.Totals.Requests, m.Totals.Subagents, m.Totals.Tokens, 30+501+521)
	}
	if len(m.Agents) != 2 || m.Agents[1].Requests != 2 || m.Agents[1].SubagentType != "Explore" || m.Agents[1].LaunchSeq == nil {
		t.Errorf("parent alone: agents %+v", m.Agents)
	}
	if sub := find(m, "subagent"); len(sub) != 1 || sub[0].Child != "sa-a1" || sub[0].Model != "claude-haiku-4-5" {
		t.Errorf("parent alone: launch %+v", sub)
	}

	// With the subagent's own file, in either order, or its responses in
	// another lane: the map without the copies.
	want := mustBuild(t, stream(parent(false), lane), Options{}).ContentHash
	for name, evs := range map[string][]event.Event{
		"parent first": stream(parent(true), lane),
		"file first":   stream(lane, parent(true)),
	} {
		if got := mustBuild(t, evs, Options{}); got.ContentHash != want || got.Totals.Tokens != 30+501+521 {
			t.Errorf("%s: %d tokens, hash %s; want the map without the copies (%s)", name, got.Totals.Tokens, got.ContentHash, want)
		}
	}
	other := onLane("sa-b2", lane...)
	if got := mustBuild(t, stream(parent(true), other), Options{}); got.Totals.Requests != 4 || got.Totals.Tokens != 30+501+521 {
		t.Errorf("file under another lane: %d requests, %d tokens; want 4 and %d", got.Totals.Requests, got.Totals.Tokens, 30+501+521)
	}

	// A file that holds the first response only (being written): the
	// second still counts from its copy.
	m = mustBuild(t, stream(parent(true), lane[:5]), Options{})
	if m.Totals.Requests != 4 || m.Totals.Tokens != 30+501+521 {
		t.Errorf("partial file: %d requests, %d tokens; want 4 and %d", m.Totals.Requests, m.Totals.Tokens, 30+501+521)
	}
}
