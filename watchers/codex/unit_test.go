package codex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers"
)

func intp(n int) *int { return &n }

func TestParseOutput(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		exit    *int
		dur     int64
		session string
		body    string
		failed  bool
	}{
		{"json metadata", `{"output":"ok\n","metadata":{"exit_code":0,"duration_seconds":1.25}}`, intp(0), 1250, "", "ok\n", false},
		{"json failure", `{"output":"boom","metadata":{"exit_code":2,"duration_seconds":0}}`, intp(2), 0, "", "boom", true},
		{"freeform", "Exit code: 0\nWall time: 0.5 seconds\nOutput:\nhello", intp(0), 500, "", "hello", false},
		{"freeform total lines", "Exit code: 1\nWall time: 2 seconds\nTotal output lines: 3\nOutput:\na\nb\nc", intp(1), 2000, "", "a\nb\nc", true},
		{"unified exited", "Chunk ID: ab12\nWall time: 1.0017 seconds\nProcess exited with code 0\nOriginal token count: 5\nOutput:\nx", intp(0), 1002, "", "x", false},
		{"unified running", "Chunk ID: ab12\nWall time: 10.0 seconds\nProcess running with session ID 27299\nOriginal token count: 0\nOutput:\n", nil, 10000, "27299", "", false},
		{"mcp wall time", "Wall time: 1.6374 seconds\nOutput:\nAction completed.", nil, 1637, "", "Action completed.", false},
		{"sandbox denial", "failed in sandbox LinuxSeccomp with execution error: denied", nil, 0, "", "failed in sandbox LinuxSeccomp with execution error: denied", true},
		{"patch rejected", "apply_patch verification failed: Failed to find expected lines", nil, 0, "", "apply_patch verification failed: Failed to find expected lines", true},
		{"plain success", "Plan updated", nil, 0, "", "Plan updated", false},
		{"header words in body", "Output: not a header\nExit code: 9", nil, 0, "", "Output: not a header\nExit code: 9", false},
		{"bad json", `{"output":`, nil, 0, "", `{"output":`, false},
		{"empty", "", nil, 0, "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := parseOutput(tt.text)
			if fmt.Sprint(deref(o.exit)) != fmt.Sprint(deref(tt.exit)) || o.durMs != tt.dur || o.session != tt.session || o.body != tt.body || o.failed != tt.failed {
				t.Errorf("got exit=%v dur=%d session=%q body=%q failed=%v", deref(o.exit), o.durMs, o.session, o.body, o.failed)
			}
		})
	}
}

func deref(p *int) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestPatchHeaders(t *testing.T) {
	patch := "*** Begin Patch\r\n*** Add File: a/new.go\r\n+x\n*** Update File: b.go\n@@\n-*** Add File: not-a-header\n*** Update File: c.go\n*** Move to: d.go\n*** Delete File:  e.go \n*** Delete File: \n*** End Patch"
	got := patchHeaders(patch)
	want := []patchHeader{{"a/new.go", "create"}, {"b.go", "modify"}, {"c.go", "rename-from"}, {"d.go", "rename-to"}, {"e.go", "delete"}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestPatchInScript(t *testing.T) {
	tests := []struct {
		script string
		ok     bool
	}{
		{"apply_patch <<'EOF'\n*** Begin Patch\n*** Add File: a\n*** End Patch\nEOF", true},
		{"cd sub && apply_patch <<EOF\n*** Begin Patch\n*** End Patch\nEOF", true},
		{"applypatch<<'P'\n*** Begin Patch\n", true},
		{"cat <<'EOF' > notes.md\n*** Begin Patch\nEOF", false},
		{"echo apply_patch", false},
		{"", false},
	}
	for _, tt := range tests {
		patch, ok := patchInScript(tt.script)
		if ok != tt.ok || (ok && !strings.HasPrefix(patch, "*** Begin Patch")) {
			t.Errorf("%q: got %v %q", tt.script, ok, patch)
		}
	}
}

func TestMCPName(t *testing.T) {
	tests := []struct{ name, ns, srv, tool string }{
		{"mcp__github__create_issue", "", "github", "create_issue"},
		{"linear__list_issues", "", "linear", "list_issues"},
		{"_fetch_pr", "mcp__codex_apps__github", "codex_apps", "github_fetch_pr"},
		{"search", "mcp__docs", "docs", "search"},
		{"shell", "", "", ""},
		{"__init__", "", "", ""},
		{"tool", "dynamic_ns", "", ""},
	}
	for _, tt := range tests {
		srv, tool, ok := mcpName(tt.name, tt.ns)
		if srv != tt.srv || tool != tt.tool || ok != (tt.srv != "") {
			t.Errorf("%s %s: got %q %q %v", tt.ns, tt.name, srv, tool, ok)
		}
	}
}

func TestIdentify(t *testing.T) {
	const id = "019a5b8e-a2f2-7f42-bb90-f248b42e3415"
	const parent = "019a0000-0000-7000-8000-0000000000aa"
	name := "/home/u/.codex/sessions/2025/11/07/rollout-2025-11-07T08-44-25-" + id + ".jsonl"
	tests := []struct {
		name, path, line string
		want             watchers.Source
		err              bool
	}{
		{"wrapper", name, `{"timestamp":"x","type":"session_meta","payload":{"id":"` + id + `","cwd":"/r"}}`,
			watchers.Source{Agent: "codex", Session: id}, false},
		{"session_id only", "x.jsonl", `{"timestamp":"x","type":"session_meta","payload":{"session_id":"` + id + `"}}`,
			watchers.Source{Agent: "codex", Session: id}, false},
		{"spawned child", name, `{"type":"session_meta","payload":{"id":"` + id + `","source":{"subagent":{"thread_spawn":{"parent_thread_id":"` + parent + `","depth":1}}}}}`,
			watchers.Source{Agent: "codex", Session: id, ParentSession: parent, ChildLane: "sa-f248b42e3415"}, false},
		{"review subagent with parent", name, `{"type":"session_meta","payload":{"id":"` + id + `","parent_thread_id":"` + parent + `","source":{"subagent":"review"}}}`,
			watchers.Source{Agent: "codex", Session: id, ParentSession: parent, ChildLane: "sa-f248b42e3415"}, false},
		{"user fork is its own session", name, `{"type":"session_meta","payload":{"id":"` + id + `","forked_from_id":"` + parent + `","source":"cli"}}`,
			watchers.Source{Agent: "codex", Session: id}, false},
		{"legacy header", "rollout-x.jsonl", `{"id":"` + id + `","timestamp":"2025-08-24T14:59:18.114Z","instructions":null}`,
			watchers.Source{Agent: "codex", Session: id}, false},
		{"torn line falls back to the name", name + ".zst", `{"timestamp":"x","type":"session_meta","payload":{"id":"01`,
			watchers.Source{Agent: "codex", Session: id}, false},
		{"line cut in the instructions keeps what came before", "x.jsonl", `{"timestamp":"x","type":"session_meta","payload":{"id":"` + id + `","source":{"subagent":{"thread_spawn":{"parent_thread_id":"` + parent + `"}}},"base_instructions":{"text":"very long`,
			watchers.Source{Agent: "codex", Session: id, ParentSession: parent, ChildLane: "sa-f248b42e3415"}, false},
		{"cut line of another type", "x.jsonl", `{"timestamp":"x","type":"response_item","payload":{"id":"` + id + `","text":"cut`,
			watchers.Source{Agent: "codex"}, true},
		{"single JSON", `C:\Users\u\.codex\sessions\rollout-2025-08-23-` + strings.ToUpper(id) + `.json`, `{`,
			watchers.Source{Agent: "codex", Session: id}, false},
		{"nothing", "notes.jsonl", `{"a":1}`, watchers.Source{Agent: "codex"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Identify(tt.path, []byte(tt.line))
			if (err != nil) != tt.err || got != tt.want {
				t.Errorf("got %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestLooksLike(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		{`{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"x"}}`, true},
		{`{"timestamp":"2026-01-01T00:00:00Z","type":"response_item","payload":{"type":"message"}}`, true},
		{`{"id":"x","timestamp":"2025-08-24T14:59:18.114Z","instructions":"…","git":{}}`, true},
		{`{"id":"x","timestamp":"2025-08-24T14:59:18.114Z"}`, true},
		{`{"session":{"id":"x"},"items":[]}`, true},
		{`{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"x","base_instructions":{"text":"cut here`, true},
		{`{"parentUuid":null,"sessionId":"x","type":"user","timestamp":"2026-01-01T00:00:00Z","uuid":"u"}`, false},
		{`{"type":"summary","summary":"s","leafUuid":"u"}`, false},
		{`{"role":"user","message":{"content":[]}}`, false},
		{`{"type":"assistant","payload":{}}`, false},
		{`{`, false},
		{``, false},
		{`[1]`, false},
	}
	for _, tt := range tests {
		if got := LooksLike([]byte(tt.line)); got != tt.want {
			t.Errorf("%s: got %v", tt.line, got)
		}
	}
}

func TestLaneID(t *testing.T) {
	tests := map[string]string{
		"019ed936-c4f5-7a21-ad41-d1eed95dc4df": "sa-d1eed95dc4df",
		"019ED936-C4F5-7A21-AD41-D1EED95DC4DF": "sa-d1eed95dc4df",
		"abc":                                  "sa-abc",
		"":                                     "",
		"--":                                   "",
	}
	for in, want := range tests {
		if got := LaneID(in); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

func TestAPIErrorClass(t *testing.T) {
	tests := []struct {
		info, msg, want string
	}{
		{`"usage_limit_exceeded"`, "", "usage_limit"},
		{`{"rate_limited":{"http_status_code":429}}`, "", "rate_limit"},
		{`"internal_server_error"`, "", "server_error"},
		{`"context_window_exceeded"`, "", "bad_request"},
		{`{"response_stream_disconnected":{"http_status_code":null}}`, "", "api_error"},
		{`"unauthorized"`, "", "auth"},
	}
	for _, tt := range tests {
		if got := apiErrorClass(json.RawMessage(tt.info), tt.msg); got != tt.want {
			t.Errorf("%s: got %q, want %q", tt.info, got, tt.want)
		}
	}
	if got := apiErrorClass(nil, "anything"); got == "" {
		t.Error("no class without codex_error_info")
	}
}

func TestRetryAttempt(t *testing.T) {
	tests := map[string]int{
		"Reconnecting... 2/5":         2,
		"stream disconnected; 10/10":  10,
		"see https://a/b 3/5":         3,
		"no counter":                  0,
		"1/":                          0,
		"99999999999999999999/5 huge": 0,
	}
	for in, want := range tests {
		if got := retryAttempt(in); got != want {
			t.Errorf("%q: got %d, want %d", in, got, want)
		}
	}
}

// tokenLine builds a token_count line without last_token_usage.
func tokenLine(ts string, in, cached, out int64) string {
	return fmt.Sprintf(`{"timestamp":"%s","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":%d,"cached_input_tokens":%d,"output_tokens":%d},"last_token_usage":null}}}`, ts, in, cached, out)
}

func run(t *testing.T, lines ...string) []event.Event {
	t.Helper()
	var bl [][]byte
	for _, l := range lines {
		bl = append(bl, []byte(l))
	}
	evs, errs, p := parseLines(t, sourceOf("0190cccc-0000-7000-8000-000000000001"), bl)
	if len(errs) > 0 || len(p.unknown) > 0 {
		t.Fatalf("errors %v, unknown %v", errs, p.unknown)
	}
	return evs
}

func llms(evs []event.Event) []event.LLM {
	var out []event.LLM
	for _, ev := range evs {
		if ev.Kind == event.KindLLM {
			out = append(out, *ev.LLM)
		}
	}
	return out
}

const metaLine = `{"timestamp":"2026-01-01T00:00:00.000Z","type":"session_meta","payload":{"id":"0190cccc-0000-7000-8000-000000000001","cli_version":"0.146.0"}}`

func TestTokens(t *testing.T) {
	evs := run(t, metaLine,
		tokenLine("2026-01-01T00:00:01.000Z", 1000, 400, 50),
		tokenLine("2026-01-01T00:00:02.000Z", 1000, 400, 50), // repeat: skipped
		`{"timestamp":"2026-01-01T00:00:02.500Z","type":"event_msg","payload":{"type":"token_count","info":null}}`,
		tokenLine("2026-01-01T00:00:03.000Z", 2500, 1900, 80),
		tokenLine("2026-01-01T00:00:04.000Z", 300, 100, 5), // restart
	)
	got := llms(evs)
	want := []event.LLM{
		{MsgID: "000000000001:1", In: 600, CR: 400, Out: 50, LatencyMs: -1},
		{MsgID: "000000000001:2", In: 0, CR: 1500, Out: 30, LatencyMs: -1},
		{MsgID: "000000000001:3", In: 200, CR: 100, Out: 5, LatencyMs: -1},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// TestTokenCacheWrites takes cache_write_input_tokens (part of
// input_tokens) out of the fresh input into cw.
func TestTokenCacheWrites(t *testing.T) {
	line := func(ts string, in, cached, cw, out int64) string {
		return fmt.Sprintf(`{"timestamp":"%s","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":%d,"cached_input_tokens":%d,"cache_write_input_tokens":%d,"output_tokens":%d},"last_token_usage":null}}}`, ts, in, cached, cw, out)
	}
	evs := run(t, metaLine,
		line("2026-01-01T00:00:01.000Z", 1000, 0, 900, 50),
		line("2026-01-01T00:00:02.000Z", 1000, 0, 900, 50), // repeat
		line("2026-01-01T00:00:03.000Z", 2500, 900, 1200, 80),
	)
	got := llms(evs)
	want := []event.LLM{
		{MsgID: "000000000001:1", In: 100, CW: 900, Out: 50, LatencyMs: -1},
		{MsgID: "000000000001:2", In: 300, CW: 300, CR: 900, Out: 30, LatencyMs: -1},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %+v\nwant %+v", got, want)
	}
}

// TestTokenCounters checks rollouts where a /review thread writes its own
// counter (from zero) before the thread's own resumes, with and without a
// repeat of the thread's last total on its return.
func TestTokenCounters(t *testing.T) {
	ts := func(s int) string { return fmt.Sprintf("2026-01-01T00:00:%02d.000Z", s) }
	for name, tc := range map[string]struct {
		totals [][2]int64
		want   int64
	}{
		"repeat on return":               {[][2]int64{{5000000, 10000}, {3000, 50}, {20000, 90}, {5000000, 10000}, {5030000, 10200}}, 5010000 + 20090 + 30200},
		"no repeat":                      {[][2]int64{{5000000, 10000}, {3000, 50}, {20000, 90}, {5030000, 10200}}, 5010000 + 20090 + 30200},
		"restart":                        {[][2]int64{{100000, 1000}, {3000, 50}, {20000, 90}}, 101000 + 20090},
		"restart passes the old counter": {[][2]int64{{100000, 1000}, {3000, 50}, {95000, 500}, {104000, 600}}, 101000 + 104600},
	} {
		t.Run(name, func(t *testing.T) {
			lines := []string{metaLine}
			for i, tot := range tc.totals {
				lines = append(lines, tokenLine(ts(i+1), tot[0], 0, tot[1]))
			}
			var sum int64
			for _, l := range llms(run(t, lines...)) {
				sum += l.Usage()
			}
			if sum != tc.want {
				t.Errorf("usage %d, want %d", sum, tc.want)
			}
		})
	}
}

// TestReferencedFork checks a fork whose rollout does not copy the parent's
// history: its first total includes the parent's usage, and only the last
// request counts.
func TestReferencedFork(t *testing.T) {
	fork := `{"timestamp":"2026-01-01T00:00:00.000Z","type":"session_meta","payload":{"id":"0190cccc-0000-7000-8000-000000000003","forked_from_id":"0190cccc-0000-7000-8000-000000000001"}}`
	tc := `{"timestamp":"2026-01-01T00:00:0%d.000Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":%d,"cached_input_tokens":0,"output_tokens":%d},"last_token_usage":{"input_tokens":%d,"cached_input_tokens":0,"output_tokens":%d}}}}`
	var sum int64
	for _, l := range llms(run(t, fork, fmt.Sprintf(tc, 5, 900000, 9000, 20000, 100), fmt.Sprintf(tc, 6, 930000, 9200, 30000, 200))) {
		sum += l.Usage()
	}
	if sum != 20100+30200 {
		t.Errorf("usage %d, want %d", sum, 20100+30200)
	}
}

// TestResponseRegimes checks that one response gets one MsgID whether its
// token_count comes before its items, right after them, or after the
// tool outputs.
func TestResponseRegimes(t *testing.T) {
	fc := `{"timestamp":"2026-01-01T00:00:0%d.000Z","type":"response_item","payload":{"type":"function_call","name":"update_plan","arguments":"{}","call_id":"c%d"}}`
	fo := `{"timestamp":"2026-01-01T00:00:0%d.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c%d","output":"Plan updated"}}`
	rs := `{"timestamp":"2026-01-01T00:00:0%d.000Z","type":"response_item","payload":{"type":"reasoning","summary":[]}}`
	user := `{"timestamp":"2026-01-01T00:00:01.000Z","type":"event_msg","payload":{"type":"user_message","message":"go"}}`
	regimes := map[string][]string{
		"count first": {metaLine, user, tokenLine("2026-01-01T00:00:02.000Z", 100, 0, 10), fmt.Sprintf(rs, 2), fmt.Sprintf(fc, 2, 1), fmt.Sprintf(fo, 3, 1),
			tokenLine("2026-01-01T00:00:04.000Z", 300, 0, 20), fmt.Sprintf(rs, 4), fmt.Sprintf(fc, 4, 2), fmt.Sprintf(fo, 5, 2)},
		"count after items": {metaLine, user, fmt.Sprintf(rs, 2), fmt.Sprintf(fc, 2, 1), tokenLine("2026-01-01T00:00:02.000Z", 100, 0, 10), fmt.Sprintf(fo, 3, 1),
			fmt.Sprintf(rs, 4), fmt.Sprintf(fc, 4, 2), tokenLine("2026-01-01T00:00:04.000Z", 300, 0, 20), fmt.Sprintf(fo, 5, 2)},
		"count after outputs": {metaLine, user, fmt.Sprintf(rs, 2), fmt.Sprintf(fc, 2, 1), fmt.Sprintf(fo, 3, 1), tokenLine("2026-01-01T00:00:03.000Z", 100, 0, 10),
			fmt.Sprintf(rs, 4), fmt.Sprintf(fc, 4, 2), fmt.Sprintf(fo, 5, 2), tokenLine("2026-01-01T00:00:05.000Z", 300, 0, 20)},
	}
	for name, lines := range regimes {
		t.Run(name, func(t *testing.T) {
			evs := run(t, lines...)
			usage := map[string]int64{}
			tools := map[string]int{}
			for i, ev := range evs {
				if ev.Kind == event.KindCall && (i == 0 || evs[i-1].Kind != event.KindLLM) {
					t.Errorf("call %s not preceded by its response record", ev.Call.ID)
				}
				if ev.Kind != event.KindLLM {
					continue
				}
				usage[ev.LLM.MsgID] = max(usage[ev.LLM.MsgID], ev.LLM.Usage())
				tools[ev.LLM.MsgID] += ev.LLM.ToolCalls
			}
			want := map[string]int64{"000000000001:1": 110, "000000000001:2": 210}
			if fmt.Sprint(usage) != fmt.Sprint(want) {
				t.Errorf("usage per response %v, want %v", usage, want)
			}
			if tools["000000000001:1"] != 1 || tools["000000000001:2"] != 1 {
				t.Errorf("tool calls per response %v", tools)
			}
		})
	}
}

// TestReplayBaseline checks that a thread's copied history (stamped
// before the spawn, or in the burst of its spawn second) yields no events
// and that its last total is the baseline of the thread's own.
func TestReplayBaseline(t *testing.T) {
	child := `{"timestamp":"2026-01-01T00:00:10.100Z","type":"session_meta","payload":{"id":"0190cccc-0000-7000-8000-000000000002","forked_from_id":"0190cccc-0000-7000-8000-000000000001","source":{"subagent":{"thread_spawn":{"parent_thread_id":"0190cccc-0000-7000-8000-000000000001"}}}}}`
	evs := run(t, child,
		`{"timestamp":"2026-01-01T00:00:07.000Z","type":"event_msg","payload":{"type":"user_message","message":"parent prompt"}}`,
		`{"timestamp":"2026-01-01T00:00:08.000Z","type":"response_item","payload":{"type":"function_call","name":"update_plan","arguments":"{}","call_id":"p1"}}`,
		tokenLine("2026-01-01T00:00:10.200Z", 5000, 1000, 100),
		`{"timestamp":"2026-01-01T00:00:10.300Z","type":"turn_context","payload":{"model":"gpt-5.5-mini"}}`,
		`{"timestamp":"2026-01-01T00:00:12.000Z","type":"event_msg","payload":{"type":"user_message","message":"child task"}}`,
		`{"timestamp":"2026-01-01T00:00:13.000Z","type":"response_item","payload":{"type":"reasoning","summary":[]}}`,
		tokenLine("2026-01-01T00:00:14.000Z", 5600, 1300, 150),
	)
	var kinds []string
	for _, ev := range evs {
		kinds = append(kinds, string(ev.Kind))
	}
	if got := strings.Join(kinds, ","); got != "session,model,llm,llm" {
		t.Fatalf("events %s", got)
	}
	if evs[0].Session.Role != "subagent" || evs[0].Session.ParentNativeID != "0190cccc-0000-7000-8000-000000000001" {
		t.Errorf("session %+v", evs[0].Session)
	}
	if u := evs[3].LLM; u.In != 300 || u.CR != 300 || u.Out != 50 || evs[3].Model != "gpt-5.5-mini" {
		t.Errorf("first own usage %+v (%s)", u, evs[3].Model)
	}
}

// TestReviewTurn checks that /review is one user turn, whatever prompts
// Codex writes for the review, and that prompts count again after it.
func TestReviewTurn(t *testing.T) {
	um := `{"timestamp":"2026-01-01T00:00:0%d.000Z","type":"event_msg","payload":{"type":"user_message","message":"%s"}}`
	evs := run(t, metaLine,
		`{"timestamp":"2026-01-01T00:00:01.000Z","type":"event_msg","payload":{"type":"entered_review_mode","target":{"type":"custom","instructions":"check the cart"},"user_facing_hint":"x"}}`,
		fmt.Sprintf(um, 2, "Review the code changes against the base branch"),
		fmt.Sprintf(um, 2, "Review the code changes against the base branch"),
		`{"timestamp":"2026-01-01T00:00:03.000Z","type":"event_msg","payload":{"type":"exited_review_mode","review_output":null}}`,
		fmt.Sprintf(um, 4, "thanks"),
	)
	var chars []int
	for _, ev := range evs {
		if ev.Kind == event.KindUser {
			chars = append(chars, ev.User.Chars)
		}
	}
	if fmt.Sprint(chars) != "[14 6]" {
		t.Errorf("user turns %v, want [14 6]", chars)
	}
}

func TestCompactionOnce(t *testing.T) {
	comp := `{"timestamp":"2026-01-01T00:00:0%d.000Z","type":"compacted","payload":{"message":"","replacement_history":[]}}`
	ctx := `{"timestamp":"2026-01-01T00:00:0%d.000Z","type":"event_msg","payload":{"type":"context_compacted"}}`
	rs := `{"timestamp":"2026-01-01T00:00:0%d.000Z","type":"response_item","payload":{"type":"reasoning","summary":[]}}`
	tests := []struct {
		name  string
		lines []string
		want  int
	}{
		{"item then event", []string{metaLine, fmt.Sprintf(comp, 1), fmt.Sprintf(ctx, 2)}, 1},
		{"event then item", []string{metaLine, fmt.Sprintf(ctx, 1), fmt.Sprintf(comp, 2)}, 1},
		{"two compactions", []string{metaLine, fmt.Sprintf(comp, 1), fmt.Sprintf(ctx, 2), fmt.Sprintf(rs, 3), fmt.Sprintf(comp, 4), fmt.Sprintf(ctx, 5)}, 2},
		{"two items", []string{metaLine, fmt.Sprintf(comp, 1), fmt.Sprintf(comp, 2)}, 2},
	}
	for _, tt := range tests {
		n := 0
		for _, ev := range run(t, tt.lines...) {
			if ev.Kind == event.KindCompaction {
				n++
			}
		}
		if n != tt.want {
			t.Errorf("%s: %d compactions, want %d", tt.name, n, tt.want)
		}
	}
}

// TestEndEvents checks the pairing of *_end events with calls: enrichment
// before the output, no second result after it, and the end event as the
// only source.
func TestEndEvents(t *testing.T) {
	evs := run(t, metaLine,
		`{"timestamp":"2026-01-01T00:00:01.000Z","type":"response_item","payload":{"type":"custom_tool_call","name":"apply_patch","input":"*** Begin Patch\n*** Delete File: x\n*** End Patch","call_id":"p"}}`,
		`{"timestamp":"2026-01-01T00:00:02.000Z","type":"event_msg","payload":{"type":"patch_apply_end","call_id":"p","success":false,"changes":{}}}`,
		`{"timestamp":"2026-01-01T00:00:03.000Z","type":"response_item","payload":{"type":"custom_tool_call_output","call_id":"p","output":"Exit code: 0\nWall time: 0 seconds\nOutput:\n"}}`,
		`{"timestamp":"2026-01-01T00:00:04.000Z","type":"event_msg","payload":{"type":"patch_apply_end","call_id":"p","success":false,"changes":{}}}`,
		`{"timestamp":"2026-01-01T00:00:05.000Z","type":"event_msg","payload":{"type":"mcp_tool_call_end","call_id":"m","invocation":{"server":"docs","tool":"search"},"duration":{"secs":2,"nanos":0},"result":{"Err":"down"}}}`,
		`{"timestamp":"2026-01-01T00:00:06.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"nobody","output":"x"}}`,
	)
	var got []string
	for _, ev := range evs {
		switch ev.Kind {
		case event.KindCall:
			got = append(got, "call:"+ev.Call.ID+":"+ev.Call.Kind+":"+ev.Call.Server)
		case event.KindResult:
			got = append(got, fmt.Sprintf("result:%s:%v:%s:%d", ev.Result.CallID, ev.Result.Err, ev.Result.ErrClass, ev.Result.DurMs))
		}
	}
	want := "call:p:edit: result:p:true:patch_failed:0 call:m:mcp:docs result:m:true:other:2000"
	if strings.Join(got, " ") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
}

// TestOpenCallsBounded checks that calls without output do not grow the
// carry-state without end, and that the newest stay open.
func TestOpenCallsBounded(t *testing.T) {
	lines := []string{metaLine}
	for i := 0; i < maxOpen+50; i++ {
		lines = append(lines, fmt.Sprintf(`{"timestamp":"2026-01-01T00:%02d:%02d.000Z","type":"response_item","payload":{"type":"function_call","name":"update_plan","arguments":"{}","call_id":"c%d"}}`, i/60, i%60, i))
	}
	var bl [][]byte
	for _, l := range lines {
		bl = append(bl, []byte(l))
	}
	_, _, p := parseLines(t, sourceOf("x"), bl)
	if n := len(p.st.Calls); n != maxOpen {
		t.Errorf("%d open calls", n)
	}
	if p.st.Calls["c0"] != nil || p.st.Calls[fmt.Sprintf("c%d", maxOpen+49)] == nil {
		t.Error("pruned the wrong calls")
	}
}

// TestSpawnLane checks that the child lane is declared from the spawn
// output when it comes first, and completed by the later spawn event.
func TestSpawnLane(t *testing.T) {
	evs := run(t, metaLine,
		`{"timestamp":"2026-01-01T00:00:01.000Z","type":"response_item","payload":{"type":"function_call","name":"spawn_agent","arguments":"{\"message\":\"x\",\"agent_type\":\"worker\"}","call_id":"s1"}}`,
		`{"timestamp":"2026-01-01T00:00:02.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"s1","output":"{\"agent_id\":\"0190cccc-0000-7000-8000-0000000000b1\"}"}}`,
		`{"timestamp":"2026-01-01T00:00:03.000Z","type":"event_msg","payload":{"type":"collab_agent_spawn_end","call_id":"s1","new_thread_id":"0190cccc-0000-7000-8000-0000000000b1","model":"gpt-5.5-mini"}}`,
		`{"timestamp":"2026-01-01T00:00:04.000Z","type":"event_msg","payload":{"type":"collab_agent_spawn_end","call_id":"s1","new_thread_id":"0190cccc-0000-7000-8000-0000000000b1","model":"gpt-5.5-mini"}}`,
	)
	var got []string
	for _, ev := range evs {
		switch ev.Kind {
		case event.KindLane:
			got = append(got, "lane:"+ev.Agent+":"+ev.Lane.SubagentType+":"+ev.Model+":"+ev.Lane.LaunchCallID)
		case event.KindResult:
			got = append(got, "result:"+ev.Result.Child)
		}
	}
	want := "lane:sa-0000000000b1:worker::s1 result:sa-0000000000b1 lane:sa-0000000000b1:worker:gpt-5.5-mini:s1"
	if strings.Join(got, " ") != want {
		t.Errorf("got  %s\nwant %s", strings.Join(got, " "), want)
	}
}

// TestPolledConfirmation checks that a PR URL printed while a unified-exec
// process is polled with write_stdin is confirmed on the poll's result, and
// that the poll continues the call that started the process.
func TestPolledConfirmation(t *testing.T) {
	evs := run(t, metaLine,
		`{"timestamp":"2026-01-01T00:00:01.000Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\"cmd\":\"gh pr create --fill\"}","call_id":"e1"}}`,
		`{"timestamp":"2026-01-01T00:00:02.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"e1","output":"Chunk ID: a\nWall time: 1 seconds\nProcess running with session ID 7\nOriginal token count: 0\nOutput:\n"}}`,
		`{"timestamp":"2026-01-01T00:00:03.000Z","type":"response_item","payload":{"type":"function_call","name":"write_stdin","arguments":"{\"session_id\":7,\"chars\":\"\"}","call_id":"w1"}}`,
		`{"timestamp":"2026-01-01T00:00:09.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"w1","output":"Chunk ID: b\nWall time: 6 seconds\nProcess exited with code 0\nOriginal token count: 9\nOutput:\nhttps://github.com/acme/shop/pull/9\n"}}`,
		`{"timestamp":"2026-01-01T00:00:10.000Z","type":"response_item","payload":{"type":"function_call","name":"write_stdin","arguments":"{\"session_id\":7,\"chars\":\"\"}","call_id":"w2"}}`,
	)
	var cont []string
	var pr *event.PR
	for _, ev := range evs {
		if ev.Kind == event.KindCall && ev.Call.Tool == "write_stdin" {
			cont = append(cont, ev.Call.Continues)
		}
		if ev.Kind == event.KindResult && ev.Result.CallID == "w1" {
			pr = ev.Result.PR
		}
	}
	if fmt.Sprint(cont) != "[e1 ]" {
		t.Errorf("continues %v, want [e1 ] (the process exited before the second poll)", cont)
	}
	if pr == nil || pr.Number != 9 || pr.Repo != "acme/shop" {
		t.Errorf("PR %+v", pr)
	}
}

func TestRestoreRejectsBadState(t *testing.T) {
	src := sourceOf("x")
	if _, err := Restore(src, []byte("{")); err == nil {
		t.Error("truncated state accepted")
	}
	if _, err := Restore(src, []byte(`{"v":99}`)); err == nil {
		t.Error("future state version accepted")
	}
	p, err := Restore(src, nil)
	if err != nil || p == nil {
		t.Errorf("empty state: %v", err)
	}
}

func TestOpenMaybeZstd(t *testing.T) {
	dir := t.TempDir()
	body := []byte(metaLine + "\n" + tokenLine("2026-01-01T00:00:01.000Z", 10, 0, 1) + "\n")
	var buf bytes.Buffer
	enc, _ := zstd.NewWriter(&buf)
	enc.Write(body)
	enc.Close()
	plain := filepath.Join(dir, "rollout-a.jsonl")
	if err := os.WriteFile(plain+".zst", buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "renamed.jsonl"), buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plain.jsonl"), body, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{plain + ".zst", plain, filepath.Join(dir, "renamed.jsonl"), filepath.Join(dir, "plain.jsonl")} {
		r, err := OpenMaybeZstd(p)
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(p), err)
		}
		var got bytes.Buffer
		_, err = got.ReadFrom(r)
		r.Close()
		if err != nil || !bytes.Equal(got.Bytes(), body) {
			t.Errorf("%s: read %d bytes, %v", filepath.Base(p), got.Len(), err)
		}
	}
	if _, err := OpenMaybeZstd(filepath.Join(dir, "missing.jsonl")); err == nil {
		t.Error("missing file opened")
	}
}

// TestCommitAfterAnotherWrite: a commit that follows another git write in
// the same command line is still confirmed from its output.
func TestCommitAfterAnotherWrite(t *testing.T) {
	evs := run(t, metaLine,
		`{"timestamp":"2026-01-01T00:00:01.000Z","type":"response_item","payload":{"type":"function_call","name":"shell","arguments":"{\"command\":[\"bash\",\"-lc\",\"git restore --staged notes.txt && git commit -m wip\"]}","call_id":"c1"}}`,
		`{"timestamp":"2026-01-01T00:00:02.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"{\"output\":\"[main 1a2b3c4] wip\\n 2 files changed, 5 insertions(+), 1 deletion(-)\\n\",\"metadata\":{\"exit_code\":0,\"duration_seconds\":0.1}}"}}`,
	)
	for _, ev := range evs {
		if ev.Kind == event.KindResult && ev.Result.CallID == "c1" {
			if c := ev.Result.Commit; c == nil || c.SHA != "1a2b3c4" || c.Files != 2 || c.Ins != 5 || c.Del != 1 {
				t.Fatalf("commit %+v", c)
			}
			return
		}
	}
	t.Fatal("no result for the call")
}

// TestUserCommandOutput: a command the user ran from the TUI is only an
// exec_command_end, whose aggregated output is measured as it decodes
// (escapes and non-ASCII bytes counted as their decoded bytes) and read
// for its failure class only when it failed.
func TestUserCommandOutput(t *testing.T) {
	evs := run(t, metaLine,
		`{"timestamp":"2026-01-01T00:00:01.000Z","type":"event_msg","payload":{"type":"exec_command_end","call_id":"u1","command":["ls"],"exit_code":0,"aggregated_output":"caf\u00e9 \"x\"\n`+"é"+`"}}`,
		`{"timestamp":"2026-01-01T00:00:02.000Z","type":"event_msg","payload":{"type":"exec_command_end","call_id":"u2","command":["cat","f"],"exit_code":1,"aggregated_output":"cat: f: No such file or directory\n"}}`,
		`{"timestamp":"2026-01-01T00:00:03.000Z","type":"event_msg","payload":{"type":"exec_command_end","call_id":"u3","command":["true"],"exit_code":0,"aggregated_output":null}}`,
	)
	var got []string
	for _, ev := range evs {
		if r := ev.Result; r != nil {
			got = append(got, fmt.Sprintf("%s %d %v %s", r.CallID, r.OutBytes, r.Err, r.ErrClass))
		}
	}
	want := []string{"u1 12 false ", "u2 34 true not_found", "u3 0 false "}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got  %q\nwant %q", got, want)
	}
}
