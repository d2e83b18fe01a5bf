package claude

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestHiddenBlanksPartWords: a no-break or zero-width space parts the
// words of a sentence as well as a space does, so a name holding one (a
// subagent type, a skill, a tool, a model, a stop reason) is dropped like
// a name with spaces; a slash command's arguments after a no-break space
// are left out of its name.
func TestHiddenBlanksPartWords(t *testing.T) {
	nb := "CANARY\u00a0subagent\u00a0type\u00a0sentence"
	zw := "CANARY\u200bthe\u200bsecret\u200bmerger"
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	line := func(n int, model, stop string, content ...string) string {
		return `{"parentUuid":null,"isSidechain":false,"type":"assistant","sessionId":"0a1b2c3d-0000-4000-8000-000000000001","requestId":"req_` +
			string(rune('a'+n)) + `","uuid":"u` + string(rune('a'+n)) + `","timestamp":"2026-05-01T10:00:0` + string(rune('0'+n)) +
			`.000Z","message":{"id":"msg_` + string(rune('a'+n)) + `","model":` + q(model) + `,"role":"assistant","stop_reason":` + q(stop) +
			`,"content":[` + strings.Join(content, ",") + `],"usage":{"input_tokens":1,"output_tokens":1}}}`
	}
	use := func(id, name, input string) string {
		return `{"type":"tool_use","id":"` + id + `","name":` + q(name) + `,"input":` + input + `}`
	}
	lines := []string{
		line(1, "claude-opus-4-8", "tool_use", use("t1", "Task", `{"subagent_type":`+q(nb)+`,"prompt":"x"}`)),
		line(2, "claude-opus-4-8", "tool_use", use("t2", "Task", `{"subagent_type":`+q(zw)+`,"prompt":"x"}`)),
		line(3, "claude-opus-4-8", "tool_use", use("t3", "Skill", `{"skill":"review\u200bCANARY\u200bsecret"}`)),
		line(4, "claude-opus-4-8", "tool_use", use("t4", "Skill", `{"skill":"deploy\u00a0CANARY secret args"}`)),
		line(5, "claude-opus-4-8", "tool_use", use("t5", zw, `{}`)),
		line(6, nb, zw, `{"type":"text","text":"x"}`),
	}
	out := parseLines(t, lines)
	skills, calls := []string{}, 0
	for _, e := range out {
		if e.Call != nil {
			calls++
			if e.Call.Kind == "skill" {
				skills = append(skills, e.Call.Skill)
			}
		}
	}
	if calls != 5 {
		t.Errorf("%d calls, want 5", calls)
	}
	if len(skills) != 2 || skills[0] != "review" || skills[1] != "deploy" {
		t.Errorf("skills %q, want review and deploy", skills)
	}
	b, _ := json.Marshal(out)
	if strings.Contains(string(b), "CANARY") {
		t.Errorf("events hold a sentence from a name:\n%s", b)
	}
}
