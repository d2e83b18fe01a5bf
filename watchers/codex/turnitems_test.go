package codex

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
)

// TestFixturesLeak checks the rollout fixtures that carry canaries (the
// 0.171 parent and its spawned child among them): no canary in the events
// or in the carry-state after any line.
func TestFixturesLeak(t *testing.T) {
	n := 0
	for _, path := range fixtures(t) {
		lines := readLines(t, path)
		if !bytes.Contains(bytes.Join(lines, nil), []byte(canary)) {
			continue
		}
		n++
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, _ := Identify(path, lines[0])
			p := NewParser(src)
			var evs []event.Event
			for i, l := range lines {
				evs, _ = p.Line(l, evs)
				st, err := p.State()
				if err != nil {
					t.Fatal(err)
				}
				if bytes.Contains(st, []byte(canary)) {
					t.Errorf("line %d: carry-state leaks", i+1)
				}
			}
			assertNoCanary(t, evs)
		})
	}
	if n < 2 {
		t.Errorf("%d fixtures with canaries", n)
	}
}

const (
	um      = `{"timestamp":"2026-01-01T00:00:%s.000Z","type":"event_msg","payload":{"type":"user_message","message":"%s","images":[]}}`
	umItem  = `{"timestamp":"2026-01-01T00:00:%s.000Z","type":"event_msg","payload":{"type":"item_completed","item":{"type":"UserMessage","id":"u","content":[{"type":"text","text":"%s","text_elements":[]}]}}}`
	userMsg = `{"timestamp":"2026-01-01T00:00:%s.000Z","type":"response_item","payload":{"type":"message","role":"user","content":[{"type":"input_text","text":"%s"}]},"metadata":{"history_sequence":3,"user_input_order":1}}`
	reason  = `{"timestamp":"2026-01-01T00:00:%s.000Z","type":"response_item","payload":{"type":"reasoning","summary":[]}}`
)

// TestPromptSources checks that each prompt is one user turn whichever
// records a build writes for it: user_message (up to 0.16x), the
// UserMessage item (0.17x), or both; the response_item copy never counts,
// and neither does injected context.
func TestPromptSources(t *testing.T) {
	f := fmt.Sprintf
	tests := []struct {
		name  string
		lines []string
		want  string // chars of each turn
	}{
		{"user_message only", []string{f(userMsg, "01", "hello"), f(um, "01", "hello")}, "[5]"},
		{"UserMessage only", []string{f(userMsg, "01", "hello"), f(umItem, "01", "hello")}, "[5]"},
		{"response item only", []string{f(userMsg, "01", "hello")}, "[]"},
		{"item then event", []string{f(umItem, "01", "hello"), f(um, "01", "hello")}, "[5]"},
		{"event then item", []string{f(um, "01", "hello"), f(umItem, "01", "hello")}, "[5]"},
		{"two prompts, both forms", []string{f(um, "01", "one"), f(umItem, "01", "one"), f(reason, "02"), f(um, "03", "three"), f(umItem, "03", "three")}, "[3 5]"},
		{"two queued prompts, both forms", []string{f(um, "01", "one"), f(umItem, "01", "one"), f(um, "02", "three"), f(umItem, "02", "three")}, "[3 5]"},
		{"two prompts, items", []string{f(umItem, "01", "one"), f(reason, "02"), f(umItem, "03", "three")}, "[3 5]"},
		{"injected context", []string{f(umItem, "01", `<environment_context>\n<cwd>/x</cwd>\n</environment_context>`), f(umItem, "02", "# AGENTS.md instructions for /x")}, "[]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var chars []int
			for _, ev := range run(t, append([]string{metaLine}, tt.lines...)...) {
				if ev.Kind == event.KindUser {
					chars = append(chars, ev.User.Chars)
				}
			}
			if got := fmt.Sprint(chars); got != tt.want {
				t.Errorf("turns %s, want %s", got, tt.want)
			}
		})
	}
}

// TestAgentTools checks the multi_agent_v1 namespace: spawn_agent is a
// subagent call whose result names the child lane (from its output, or
// from the CollabAgentToolCall item before it), the other agent tools are
// tools, and none is an MCP call.
func TestAgentTools(t *testing.T) {
	child := "01a19bb3-9adc-7000-8000-0000000000c1"
	fc := `{"timestamp":"2026-01-01T00:00:01.000Z","type":"response_item","payload":{"type":"function_call","name":"%s","namespace":"multi_agent_v1","arguments":"{}","call_id":"%s"}}`
	out := `{"timestamp":"2026-01-01T00:00:02.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"%s","output":"%s"}}`
	collab := `{"timestamp":"2026-01-01T00:00:01.500Z","type":"event_msg","payload":{"type":"item_completed","item":{"type":"CollabAgentToolCall","id":"%s","tool":"spawn_agent","status":"completed","receiver_thread_ids":["` + child + `"],"model":"gpt-5-codex"}}}`
	agentOut := `{\"agent_id\":\"` + child + `\",\"nickname\":\"Feynman\"}`
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{"spawn, output names the child", []string{fmt.Sprintf(fc, "spawn_agent", "s1"), fmt.Sprintf(out, "s1", agentOut)},
			"call:spawn_agent:subagent: lane:sa-0000000000c1: result:sa-0000000000c1"},
		{"spawn, item names the child", []string{fmt.Sprintf(fc, "spawn_agent", "s1"), fmt.Sprintf(collab, "s1"), fmt.Sprintf(out, "s1", "ok")},
			"call:spawn_agent:subagent: lane:sa-0000000000c1:gpt-5-codex result:sa-0000000000c1"},
		{"spawn, item and output", []string{fmt.Sprintf(fc, "spawn_agent", "s1"), fmt.Sprintf(collab, "s1"), fmt.Sprintf(out, "s1", agentOut)},
			"call:spawn_agent:subagent: lane:sa-0000000000c1:gpt-5-codex result:sa-0000000000c1"},
		{"wait_agent", []string{fmt.Sprintf(fc, "wait_agent", "w1"), fmt.Sprintf(out, "w1", "{}")}, "call:wait_agent:tool: result:"},
		{"send_input", []string{fmt.Sprintf(fc, "send_input", "w1")}, "call:send_input:tool:"},
		{"close_agent", []string{fmt.Sprintf(fc, "close_agent", "w1")}, "call:close_agent:tool:"},
		{"resume_agent", []string{fmt.Sprintf(fc, "resume_agent", "w1")}, "call:resume_agent:tool:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, ev := range run(t, append([]string{metaLine}, tt.lines...)...) {
				switch ev.Kind {
				case event.KindCall:
					got = append(got, "call:"+ev.Call.Tool+":"+ev.Call.Kind+":"+ev.Call.Server)
				case event.KindLane:
					got = append(got, "lane:"+ev.Agent+":"+ev.Model)
				case event.KindResult:
					got = append(got, "result:"+ev.Result.Child)
				}
			}
			if s := strings.Join(got, " "); s != tt.want {
				t.Errorf("got  %s\nwant %s", s, tt.want)
			}
		})
	}
}

// TestMCPItem checks the McpToolCall item of 0.17x: a failure before the
// output marks the result, a late one adds no second result, and an item
// alone is the call and its result.
func TestMCPItem(t *testing.T) {
	fc := `{"timestamp":"2026-01-01T00:00:01.000Z","type":"response_item","payload":{"type":"function_call","name":"broken","namespace":"mcp__e2e","arguments":"{}","call_id":"m1"}}`
	out := `{"timestamp":"2026-01-01T00:00:03.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"m1","output":[{"type":"input_text","text":"Wall time: 0.0019 seconds\nOutput:"},{"type":"input_text","text":"no"}]}}`
	item := `{"timestamp":"2026-01-01T00:00:02.000Z","type":"event_msg","payload":{"type":"item_completed","item":{"type":"McpToolCall","id":"m1","server":"e2e","tool":"broken","status":"%s","result":{"content":[],"isError":%s},"duration":{"secs":1,"nanos":0}}}}`
	tests := []struct {
		name  string
		lines []string
		want  string
	}{
		{"failed item, then output", []string{fc, fmt.Sprintf(item, "failed", "true"), out}, "call:mcp__e2e__broken:e2e:broken result:true:other:2"},
		{"isError only", []string{fc, fmt.Sprintf(item, "completed", "true"), out}, "call:mcp__e2e__broken:e2e:broken result:true:other:2"},
		{"completed item", []string{fc, fmt.Sprintf(item, "completed", "false"), out}, "call:mcp__e2e__broken:e2e:broken result:false::2"},
		{"output, then late item", []string{fc, out, fmt.Sprintf(item, "failed", "true")}, "call:mcp__e2e__broken:e2e:broken result:false::2"},
		{"item alone", []string{fmt.Sprintf(item, "failed", "true")}, "call:mcp__e2e__broken:e2e:broken result:true:other:1000"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, ev := range run(t, append([]string{metaLine}, tt.lines...)...) {
				switch ev.Kind {
				case event.KindCall:
					got = append(got, "call:"+ev.Call.Tool+":"+ev.Call.Server+":"+ev.Call.MCPTool)
				case event.KindResult:
					got = append(got, fmt.Sprintf("result:%v:%s:%d", ev.Result.Err, ev.Result.ErrClass, ev.Result.DurMs))
				}
			}
			if s := strings.Join(got, " "); s != tt.want {
				t.Errorf("got  %s\nwant %s", s, tt.want)
			}
		})
	}
}

// TestReplayDetection checks which records of a child or forked rollout
// are copied history: none in a spawned thread that copies nothing (all its
// work in its spawn second still counts), a copy window only for a fork
// (forked_from_id) or after a copied foreign session_meta, ended by the
// thread's own first turn where turn ids exist (however long the copy
// burst), else by the end of the spawn second; and records stamped before
// the thread was born.
func TestReplayDetection(t *testing.T) {
	const (
		parent = "01a19bb3-9500-7000-8000-0000000000f1"
		child  = "01a19bb3-9adc-7000-8000-0000000000c1" // born 10:00:01.500
		oldT   = "01a19bb3-9564-7000-8000-0000000000a1" // a parent turn, 10:00:00.100
		ownT   = "01a19bb3-9ae6-7000-8000-0000000000a2" // the child's turn, 10:00:01.510
	)
	ts := func(s string) string { return "2026-11-02T10:00:" + s + "Z" }
	meta := func(extra string) string {
		return `{"timestamp":"` + ts("01.520") + `","type":"session_meta","payload":{"id":"` + child + `","timestamp":"` + ts("01.500") +
			`","source":{"subagent":{"thread_spawn":{"parent_thread_id":"` + parent + `"}}}` + extra + `}}`
	}
	foreign := `{"timestamp":"` + ts("01.521") + `","type":"session_meta","payload":{"id":"` + parent + `","timestamp":"` + ts("00.000") + `"}}`
	started := func(at, turn string) string {
		return `{"timestamp":"` + ts(at) + `","type":"event_msg","payload":{"type":"task_started","turn_attribution":{"turn_id":"` + turn + `"}}}`
	}
	ctx := func(at, turn string) string {
		return `{"timestamp":"` + ts(at) + `","type":"turn_context","payload":{"turn_id":"` + turn + `","model":"gpt-5-codex"}}`
	}
	count := func(at string, in, out int64) string {
		return `{"timestamp":"` + ts(at) + `","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":` +
			fmt.Sprint(in) + `,"cached_input_tokens":0,"output_tokens":` + fmt.Sprint(out) + `},"last_token_usage":null}}}`
	}
	call := func(at, id string) string {
		return `{"timestamp":"` + ts(at) + `","type":"response_item","payload":{"type":"function_call","name":"update_plan","arguments":"{}","call_id":"` + id + `"}}`
	}
	tests := []struct {
		name  string
		lines []string
		calls string
		usage int64
	}{
		{"spawned, nothing copied, fast", []string{meta(""), started("01.520", ownT), ctx("01.530", ownT), call("01.600", "own1"), count("01.700", 3000, 60), call("01.800", "own2"), count("01.900", 6100, 121)},
			"own1 own2", 6221},
		{"fork, copy burst over two seconds, turn ids", []string{meta(`,"forked_from_id":"` + parent + `"`), started("01.530", oldT), ctx("01.530", oldT), call("01.600", "old1"), count("02.400", 9000, 100), call("03.200", "old2"), count("03.300", 12000, 200),
			started("03.400", ownT), ctx("03.400", ownT), call("03.500", "own1"), count("03.600", 15000, 260)},
			"own1", 3060},
		{"fork, no turn ids: the spawn second", []string{meta(`,"forked_from_id":"` + parent + `"`), call("01.600", "old1"), count("01.700", 9000, 100), call("02.100", "own1"), count("02.200", 12000, 160)},
			"own1", 3060},
		{"copied session_meta opens the copy", []string{meta(""), foreign, started("01.530", oldT), call("01.600", "old1"), count("01.700", 9000, 100), started("01.800", ownT), call("01.900", "own1"), count("01.950", 12000, 160)},
			"own1", 3060},
		{"copy with the parent's own stamps", []string{meta(""), call("00.300", "old1"), count("00.400", 9000, 100), started("01.600", ownT), call("01.700", "own1"), count("01.800", 12000, 160)},
			"own1", 3060},
		{"referenced fork: own turn first", []string{meta(`,"forked_from_id":"` + parent + `"`), started("01.520", ownT), call("01.600", "own1"), count("01.700", 3000, 60)},
			"own1", 3060},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var bl [][]byte
			for _, l := range tt.lines {
				bl = append(bl, []byte(l))
			}
			src, err := Identify("rollout-2026-11-02T10-00-01-"+child+".jsonl", bl[0])
			if err != nil {
				t.Fatal(err)
			}
			evs, errs, p := parseLines(t, src, bl)
			if len(errs) > 0 || len(p.unknown) > 0 {
				t.Fatalf("errors %v, unknown %v", errs, p.unknown)
			}
			var calls []string
			for _, ev := range evs {
				if ev.Kind == event.KindCall {
					calls = append(calls, ev.Call.ID)
				}
			}
			if got := strings.Join(calls, " "); got != tt.calls {
				t.Errorf("calls %q, want %q", got, tt.calls)
			}
			if got := emittedUsage(evs); got != tt.usage {
				t.Errorf("usage %d, want %d", got, tt.usage)
			}
		})
	}
}

func TestUUIDV7Time(t *testing.T) {
	tests := map[string]int64{
		"01a19bb3-9adc-7000-8000-0000000f0002": 0x01a19bb39adc,
		"01A19BB3-9ADC-7000-8000-0000000F0002": 0x01a19bb39adc,
		"ab5bf9fa-f843-4f56-a109-0fc78f090893": -1, // v4
		"not-an-id":                            -1,
		"":                                     -1,
	}
	for id, want := range tests {
		got, ok := uuidV7Time(id)
		if !ok {
			got = -1
		}
		if got != want {
			t.Errorf("%q: %d, want %d", id, got, want)
		}
	}
}
