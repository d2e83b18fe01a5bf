package claude

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
)

func TestExitCode(t *testing.T) {
	obj := json.RawMessage(`{"stdout":"","interrupted":false}`)
	tests := []struct {
		name   string
		failed bool
		text   string
		tur    json.RawMessage
		want   int // -1: none
	}{
		{"first line", true, "Exit code 1\nboom", nil, 1},
		{"after output", true, "lots of output\nExit code 127", nil, 127},
		{"tool result string", true, "Error: Exit code 2\nx", nil, 2},
		{"not an exit", true, "<tool_use_error>File does not exist.</tool_use_error>", nil, -1},
		{"not at line start", true, "echo Exit code 5 done", nil, -1},
		{"success", false, "ok", obj, 0},
		{"interrupted", false, "", json.RawMessage(`{"interrupted":true}`), -1},
		{"background", false, "", json.RawMessage(`{"interrupted":false,"backgroundTaskId":"b1"}`), -1},
		{"no structured result", false, "ok", nil, -1},
	}
	for _, tt := range tests {
		var st structured
		if tt.tur != nil {
			if err := json.Unmarshal(tt.tur, &st); err != nil {
				t.Fatal(err)
			}
		}
		got := exitCode(tt.failed, tt.text, st.obj)
		switch {
		case tt.want < 0 && got != nil:
			t.Errorf("%s: exit %d, want none", tt.name, *got)
		case tt.want >= 0 && (got == nil || *got != tt.want):
			t.Errorf("%s: exit %v, want %d", tt.name, got, tt.want)
		}
	}
}

func TestPRAction(t *testing.T) {
	tests := []struct {
		vcs  *event.VCS
		cmd  string
		want string
	}{
		{&event.VCS{Provider: "github", Action: "pr_create"}, "gh pr create --fill", "create"},
		{&event.VCS{Provider: "github", Action: "pr_merge"}, "gh pr merge 12 --squash", "merge"},
		{&event.VCS{Provider: "gitlab", Action: "mr_create"}, "glab mr create", "create"},
		{&event.VCS{Provider: "git", Action: "push"}, "git push && gh pr create --fill", "create"},
		{&event.VCS{Provider: "github", Action: "pr_view"}, "gh pr view 12", ""},
		{nil, "ls", ""},
	}
	for _, tt := range tests {
		if got := prAction(tt.vcs, tt.cmd); got != tt.want {
			t.Errorf("prAction(%v, %q) = %q, want %q", tt.vcs, tt.cmd, got, tt.want)
		}
	}
}

func TestGlobDirAndSkillName(t *testing.T) {
	for pattern, want := range map[string]string{
		"src/**/*.go": "src", "**/*.ts": "", "*.md": "", "a/b/c*.txt": "a/b", "docs/": "", `C:\src\*.cs`: `C:\src`,
	} {
		if got := globDir(pattern); got != want {
			t.Errorf("globDir(%q) = %q, want %q", pattern, got, want)
		}
	}
	for in, want := range map[string]string{
		"review-loop": "review-loop", "/deploy prod now": "deploy", "  /x\ty": "x", "": "", "/": "",
	} {
		if got := skillName(in); got != want {
			t.Errorf("skillName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWriteCreatesOnlyUnseenFiles: a Write is a create unless the file was
// read or edited before.
func TestWriteCreatesOnlyUnseenFiles(t *testing.T) {
	p := NewParser(sourceFor("0a1b2c3d-0000-4000-8000-000000000001"))
	line := func(tool, path string) []byte {
		return []byte(`{"type":"assistant","cwd":"/w/app","message":{"id":"m-` + tool + path + `","model":"x","content":[{"type":"tool_use","id":"t","name":"` + tool + `","input":{"file_path":"` + path + `"}}]}}`)
	}
	var out []event.Event
	for _, l := range [][]byte{
		line("Write", "/w/app/new.go"), line("Write", "/w/app/new.go"),
		line("Read", "/w/app/old.go"), line("Write", "/w/app/old.go"),
	} {
		out, _ = p.Line(l, out)
	}
	var ops []string
	for _, e := range out {
		if e.Kind == event.KindCall && e.Call.Tool == "Write" {
			for _, tg := range e.Call.Targets {
				ops = append(ops, tg.Op)
			}
		}
	}
	if want := []string{"create", "modify", "modify"}; len(ops) != 3 || ops[0] != want[0] || ops[1] != want[1] || ops[2] != want[2] {
		t.Errorf("ops %v, want %v", ops, want)
	}
}

func TestUnranShellClass(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"hook message quoting a linter", "Pre-commit check failed:\n[LINT] module x could not find y", "blocked"},
		{"hook message of its own words", "Policy check failed, commit refused", "blocked"},
		{"the tool's own error stays", "<tool_use_error>Sibling tool call errored</tool_use_error>", "other"},
		{"a refusal stays", "The user doesn't want to proceed with this tool use.", "permission_denied"},
		{"an interrupt stays", "[Request interrupted by user for tool use]", "interrupted"},
	}
	for _, tt := range tests {
		if got := unranClass(errorClass(tt.text), tt.text); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}

// TestBlockedShellResult feeds a Bash call whose result carries a hook's
// message and no exit status: the call was blocked before it ran.
func TestBlockedShellResult(t *testing.T) {
	const sid = "0a1b2c3d-0000-4000-8000-0000000000b1"
	lines := []string{
		`{"type":"assistant","sessionId":"` + sid + `","cwd":"/home/dev/proj","timestamp":"2026-05-01T10:00:01.000Z","uuid":"a1","message":{"id":"msg_1","model":"claude-opus-4-6","role":"assistant","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"git commit -m wip"}}],"usage":{"input_tokens":1,"output_tokens":1}}}`,
		`{"type":"user","sessionId":"` + sid + `","cwd":"/home/dev/proj","timestamp":"2026-05-01T10:00:09.000Z","uuid":"u1","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","is_error":true,"content":"Pre-commit check failed:\n[TYPES] unknown module: could not find Foo.Bar"}]},"toolUseResult":"Error: Pre-commit check failed"}`,
	}
	p := NewParser(sourceFor(sid))
	var evs []event.Event
	for i, l := range lines {
		var err error
		if evs, err = p.Line([]byte(l), evs); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
	}
	for _, e := range evs {
		if e.Kind == event.KindResult {
			if !e.Result.Err || e.Result.ErrClass != "blocked" || e.Result.ExitCode != nil {
				t.Fatalf("result %+v, want a blocked failure without exit code", e.Result)
			}
			return
		}
	}
	t.Fatal("no result record")
}

// TestFetchHTTPStatus: a web fetch whose result reports an HTTP error
// status failed, though Claude Code does not flag the result; a redirect
// and a success did not.
func TestFetchHTTPStatus(t *testing.T) {
	const sid = "0a1b2c3d-0000-4000-8000-0000000000f1"
	call := func(n int) string {
		return fmt.Sprintf(`{"type":"assistant","sessionId":"%s","cwd":"/home/dev/proj","timestamp":"2026-05-01T10:00:0%d.000Z","uuid":"a%d","message":{"id":"msg_%d","model":"claude-opus-4-6","role":"assistant","content":[{"type":"tool_use","id":"toolu_%d","name":"WebFetch","input":{"url":"https://example.com/p","prompt":"summarise"}}],"usage":{"input_tokens":1,"output_tokens":1}}}`, sid, n, n, n, n)
	}
	result := func(n, code int) string {
		return fmt.Sprintf(`{"type":"user","sessionId":"%s","cwd":"/home/dev/proj","timestamp":"2026-05-01T10:00:0%d.500Z","uuid":"u%d","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d","content":"status page"}]},"toolUseResult":{"bytes":0,"code":%d,"codeText":"x","result":"status page","durationMs":120,"url":"https://example.com/p"}}`, sid, n, n, n, code)
	}
	want := map[string]string{"toolu_1": "rate_limit", "toolu_2": "not_found", "toolu_3": "", "toolu_4": ""}
	lines := []string{call(1), result(1, 429), call(2), result(2, 404), call(3), result(3, 301), call(4), result(4, 200)}
	p := NewParser(sourceFor(sid))
	var evs []event.Event
	for i, l := range lines {
		var err error
		if evs, err = p.Line([]byte(l), evs); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
	}
	seen := 0
	for _, e := range evs {
		if e.Kind != event.KindResult {
			continue
		}
		seen++
		w := want[e.Result.CallID]
		if e.Result.Err != (w != "") || e.Result.ErrClass != w {
			t.Errorf("%s: err %v class %q, want class %q", e.Result.CallID, e.Result.Err, e.Result.ErrClass, w)
		}
	}
	if seen != len(want) {
		t.Fatalf("%d results, want %d", seen, len(want))
	}
}

// TestSubagentAskedModel: an Agent call's model input is kept when it is a
// model name or alias, and dropped when it is anything else.
func TestSubagentAskedModel(t *testing.T) {
	const sid = "0a1b2c3d-0000-4000-8000-0000000000a1"
	tests := []struct{ model, want string }{
		{`"haiku"`, "haiku"},
		{`"claude-sonnet-4-5"`, "claude-sonnet-4-5"},
		{`"use the CANARY fast one"`, ""},
		{`42`, ""},
	}
	for i, tt := range tests {
		line := fmt.Sprintf(`{"type":"assistant","sessionId":"%s","cwd":"/home/dev/proj","timestamp":"2026-05-01T10:00:01.000Z","uuid":"a%d","message":{"id":"msg_%d","model":"claude-opus-4-6","role":"assistant","content":[{"type":"tool_use","id":"toolu_%d","name":"Agent","input":{"description":"d","prompt":"p","subagent_type":"Explore","model":%s}}],"usage":{"input_tokens":1,"output_tokens":1}}}`, sid, i, i, i, tt.model)
		evs, err := NewParser(sourceFor(sid)).Line([]byte(line), nil)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, e := range evs {
			if e.Kind == event.KindCall {
				found = true
				if e.Call.SubagentModel != tt.want {
					t.Errorf("model %s: kept %q, want %q", tt.model, e.Call.SubagentModel, tt.want)
				}
			}
		}
		if !found {
			t.Fatalf("model %s: no call", tt.model)
		}
	}
}

// TestAwaitsUser: the tools that wait for the user say so; others do not.
func TestAwaitsUser(t *testing.T) {
	const sid = "0a1b2c3d-0000-4000-8000-0000000000c1"
	for i, tt := range []struct {
		tool string
		want bool
	}{{"AskUserQuestion", true}, {"ExitPlanMode", true}, {"TaskOutput", false}, {"Bash", false}} {
		line := fmt.Sprintf(`{"type":"assistant","sessionId":"%s","cwd":"/home/dev/proj","timestamp":"2026-05-01T10:00:01.000Z","uuid":"a%d","message":{"id":"msg_%d","model":"claude-opus-4-6","role":"assistant","content":[{"type":"tool_use","id":"toolu_%d","name":"%s","input":{}}],"usage":{"input_tokens":1,"output_tokens":1}}}`, sid, i, i, i, tt.tool)
		evs, err := NewParser(sourceFor(sid)).Line([]byte(line), nil)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range evs {
			if e.Kind == event.KindCall {
				n++
				if e.Call.AwaitsUser != tt.want {
					t.Errorf("%s: AwaitsUser %v, want %v", tt.tool, e.Call.AwaitsUser, tt.want)
				}
			}
		}
		if n != 1 {
			t.Fatalf("%s: %d calls", tt.tool, n)
		}
	}
}
