package claude

import (
	"encoding/json"
	"testing"
)

func TestClassifyText(t *testing.T) {
	tests := []struct {
		text string
		want textKind
	}{
		{"Fix the bug", textPrompt},
		{"[Request interrupted by user]", textInterrupt},
		{"[Request interrupted by user for tool use]", textInterrupt},
		{"[Tool call did not complete: the session ended]", textInterrupt},
		{"<command-name>/clear</command-name>", textCommand},
		{"<command-message>commit</command-message>\n<command-name>/commit</command-name>", textCommand},
		{"<local-command-stdout>ok</local-command-stdout>", textInjected},
		{"<bash-input>ls</bash-input>", textInjected},
		{"<task-notification>x</task-notification>", textInjected},
		{"<teammate-message teammate_id=\"a\">x</teammate-message>", textInjected},
		{"<ide_opened_file>f</ide_opened_file>", textInjected},
		{"  \n<system-reminder>r</system-reminder>", textInjected},
		{"<div>html the user pasted</div>", textPrompt},
		{"\\u escapes: " + string(make([]byte, 100)), textPrompt},
	}
	for _, tt := range tests {
		raw, _ := json.Marshal(tt.text)
		if got := classifyText(raw); got != tt.want {
			t.Errorf("classifyText(%q) = %v, want %v", tt.text, got, tt.want)
		}
	}
}

func TestSlashCommand(t *testing.T) {
	if u := slashCommand("<command-name>/clear</command-name><command-args></command-args>"); u != nil {
		t.Errorf("/clear counted as a prompt: %+v", u)
	}
	u := slashCommand("<command-message>review</command-message><command-name>/review</command-name><command-args>PR 12</command-args>")
	if u == nil || u.Chars != len("/review PR 12") {
		t.Errorf("/review: %+v", u)
	}
}

func TestTextHeadCutsInsideEscapes(t *testing.T) {
	for _, s := range []string{
		"[Request interrupted by user]" + string(make([]byte, 200)),
		`[Request interrupted by user] \\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\\`,
		"[Request interrupted by user] ☃☃☃☃☃☃☃☃☃☃☃☃☃☃☃☃☃☃☃☃☃☃☃☃☃☃☃☃☃☃☃☃☃☃☃☃☃☃☃☃",
		"[Request interrupted by user] \u0001\u0002\u0003\u0004\u0005\u0006\u0007\u0008\u0009\u000a\u000b",
	} {
		raw, _ := json.Marshal(s)
		for n := 30; n < 70; n++ {
			if h := textHead(raw, n); len(h) < 29 || h[:29] != s[:29] {
				t.Errorf("textHead(%q, %d) = %q", s[:40], n, h)
			}
		}
	}
}

func TestStrMatchesDecoder(t *testing.T) {
	for _, raw := range []string{`"plain"`, "\"/0\xfe\"", `"esc\naped"`, `"\ud83d"`, `5`, `null`, `"unterminated`} {
		var want string
		_ = json.Unmarshal([]byte(raw), &want)
		if got := str(json.RawMessage(raw)); got != want {
			t.Errorf("str(%q) = %q, decoder gives %q", raw, got, want)
		}
	}
}
