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

// An id is one word of printable ASCII: three words, which a name may be,
// are a digest as an id, and the same digest wherever the id is given, so
// that what it joins (a session and its key, a call and its result) still
// meets.
func TestIDsAreOneWord(t *testing.T) {
	const words = "my password hunter2"
	got := Scrub([]Event{
		{Kind: KindSession, Session: &Session{NativeID: words, ParentNativeID: "p 1", AgentTool: "copilot", AgentVersion: "1.0 beta"}},
		{Kind: KindCall, Call: &Call{ID: "call one", Tool: "Read File", Kind: "tool"}},
		{Kind: KindResult, Result: &Result{CallID: "call one"}},
	})
	s, c := got[0].Session, got[1].Call
	if s.NativeID != ID(words) || !strings.HasPrefix(s.NativeID, "id-") || s.ParentNativeID != ID("p 1") {
		t.Errorf("session ids %q, %q", s.NativeID, s.ParentNativeID)
	}
	if c.ID != ID("call one") || got[2].Result.CallID != c.ID || c.ID == "call one" {
		t.Errorf("call id %q, result's %q", c.ID, got[2].Result.CallID)
	}
	if s.AgentVersion != "1.0 beta" || c.Tool != "Read File" {
		t.Errorf("names of two words were cleared: %q, %q", s.AgentVersion, c.Tool)
	}
	for s, want := range map[string]bool{"": true, "0190eeee-0000-7000-8000-000000000001": true, "toolu_01|fc:x@y/z": true,
		"a b": false, "tab\there": false, "é": false, strings.Repeat("a", MaxName): true, strings.Repeat("a", MaxName+1): false,
		"abcdefgh\x7f": false, "abcdefghi j": false} {
		if okID(s) != want || (ID(s) == s) != want {
			t.Errorf("okID(%q) = %v, ID gives %q; want an id: %v", s, okID(s), ID(s), want)
		}
	}
}
