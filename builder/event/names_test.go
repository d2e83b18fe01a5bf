package event

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestName(t *testing.T) {
	for _, s := range []string{"Bash", "mcp__github__create_pull_request", "claude-opus-4-8", "gpt-5.6-sol",
		"PostToolUse:Bash", "Claude Sonnet 4", "api.github.com", "日本語スキル", "a", strings.Repeat("x", MaxName)} {
		if Name(s) != s {
			t.Errorf("Name(%q) refused a name", s)
		}
	}
	for _, s := range []string{
		"four words are text",            // a sentence
		" lead", "trail ", "two  spaces", // words of nothing
		"line\nbreak", "tab\there", "bell\a", // controls
		"no\u00a0break\u00a0space",              // a blank that is not ASCII's
		"zero\u200bwidth\u200bspace\u200bwords", // a format character
		"word\u2060joiner", "bidi\u202eoverride", "bom\ufeff",
		"\u3164", "hangul\u3164filler", "braille\u2800blank",
		"bad\xffutf8", strings.Repeat("x", MaxName+1),
	} {
		if Name(s) != "" {
			t.Errorf("Name(%q) kept what could be text", s)
		}
	}
}

const sentence = "CANARY\u200bthe\u200bsecret\u200bmerger"

// TestScrub: a clean batch is returned as it is; a dirty one as a copy
// whose names that fail are gone and whose ids that fail are digests that
// still join, the input untouched.
func TestScrub(t *testing.T) {
	clean := []Event{
		{Kind: KindCall, Call: &Call{ID: "toolu_1", Tool: "Bash", Kind: "exec", Verb: "go"}},
		{Kind: KindResult, Result: &Result{CallID: "toolu_1"}},
	}
	if got := Scrub(clean); &got[0] != &clean[0] {
		t.Error("a clean batch was copied")
	}
	id := "call_1\nfc_" + sentence
	dirty := []Event{
		{Kind: KindSession, Session: &Session{NativeID: "s1", AgentTool: "cursor", AgentVersion: sentence}},
		{Kind: KindLLM, Model: sentence, LLM: &LLM{MsgID: "m1", Stop: sentence}},
		{Kind: KindCall, Agent: sentence, Call: &Call{ID: id, Tool: sentence, Kind: "subagent", SubagentType: sentence,
			Skill: sentence, Server: sentence, MCPTool: sentence, Host: sentence, Verb: sentence,
			VCS: &VCS{Provider: "git", Action: sentence}}},
		{Kind: KindResult, Result: &Result{CallID: id, ErrClass: sentence, Child: sentence,
			Ticket: &Ticket{Tracker: sentence, Action: "create", ID: sentence}}},
		{Kind: KindError, Error: &Error{Source: "hook", Class: "hook_error", Hook: sentence, HookEvent: sentence, SrcUUID: sentence}},
		{Kind: KindLane, Agent: "a1", Lane: &Lane{SubagentType: sentence, LaunchCallID: id}},
		{Kind: KindClientTotal, Total: &ClientTotal{Models: []ModelTotal{{Model: sentence, In: 1}}}},
	}
	before, _ := json.Marshal(dirty)
	got := Scrub(dirty)
	after, _ := json.Marshal(dirty)
	if string(before) != string(after) {
		t.Error("Scrub changed its input")
	}
	out, _ := json.Marshal(got)
	if strings.Contains(string(out), "CANARY") {
		t.Errorf("scrubbed events hold the sentence: %s", out)
	}
	call, res, lane := got[2].Call, got[3].Result, got[5].Lane
	if call.ID == "" || call.ID != res.CallID || call.ID != lane.LaunchCallID {
		t.Errorf("ids no longer join: call %q, result %q, lane launch %q", call.ID, res.CallID, lane.LaunchCallID)
	}
	if got[2].Agent == "" || got[2].Agent != res.Child {
		t.Errorf("a lane id and the child that names it differ: %q, %q", got[2].Agent, res.Child)
	}
	if call.Tool != "" || call.Kind != "subagent" || got[1].Model != "" || got[0].Session.AgentTool != "cursor" {
		t.Errorf("names: tool %q kind %q model %q agent tool %q", call.Tool, call.Kind, got[1].Model, got[0].Session.AgentTool)
	}
	if again := Scrub(got); &again[0] != &got[0] {
		t.Error("a scrubbed batch is not clean")
	}
}

// TestOK: the eight-bytes-at-a-time reading agrees with Name, byte by
// byte, at every position in a word.
func TestOK(t *testing.T) {
	for n := 0; n <= 24; n++ {
		for pos := 0; pos < n; pos++ {
			for c := 0; c < 256; c++ {
				b := []byte(strings.Repeat("a", n))
				b[pos] = byte(c)
				s := string(b)
				if want := s == "" || Name(s) != ""; ok(s) != want {
					t.Fatalf("ok(%q) = %v, Name says %v", s, !want, want)
				}
			}
		}
	}
}
