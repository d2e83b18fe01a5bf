package claude

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
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

// TestUTCMillisAgreesWithTimeParse holds the in-place reading of line
// timestamps to time.Parse on the forms it reads and on near misses.
func TestUTCMillisAgreesWithTimeParse(t *testing.T) {
	for _, ts := range []string{
		"2025-11-03T12:34:56.789Z", "2025-11-03T12:34:56Z", "2025-11-03T12:34:56.7Z", "2025-11-03T12:34:56.123456789Z",
		"2025-11-03T12:34:56.1234567891Z", "2025-11-03T12:34:56.Z", "2024-02-29T00:00:00.000Z", "2025-02-29T00:00:00.000Z",
		"2025-04-31T00:00:00Z", "2025-13-01T00:00:00Z", "2025-00-01T00:00:00Z", "2025-01-00T00:00:00Z", "2025-01-01T24:00:00Z",
		"2025-01-01T23:60:00Z", "2025-01-01T23:59:60Z", "2025-01-01t23:59:59Z", "2025-01-01T23:59:59z", "2025-01-01T23:59:59+01:00",
		"0000-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "2025-1-01T00:00:00Z", "2025-01-01T00:00:00.12a4Z", "+025-01-01T00:00:00Z",
		"2025-01-01 00:00:00Z", "", "x",
	} {
		want := int64(0)
		if tm, err := time.Parse(time.RFC3339Nano, ts); err == nil {
			want = tm.UnixMilli()
		}
		if got := millis([]byte(`"` + ts + `"`)); got != want {
			t.Errorf("millis(%q) = %d, time.Parse gives %d", ts, got, want)
		}
	}
}

func FuzzUTCMillis(f *testing.F) {
	f.Add("2025-11-03T12:34:56.789Z")
	f.Add("2024-02-29T23:59:59Z")
	f.Fuzz(func(t *testing.T, ts string) {
		ms, ok := utcMillis([]byte(ts))
		if !ok {
			return
		}
		tm, err := time.Parse(time.RFC3339Nano, ts)
		if err != nil || tm.UnixMilli() != ms {
			t.Fatalf("utcMillis(%q) = %d, time.Parse gives %v, %v", ts, ms, tm, err)
		}
	})
}

func TestHasPrefixAgreesWithDecoding(t *testing.T) {
	for _, raw := range []string{`"acompact-1"`, `"acompact"`, `"acompac"`, `"\u0061compact-2"`, `"acomp\u0061ct"`,
		`"xacompact"`, `""`, `null`, `5`, ` "acompact-3" `, "\"acomp\xffct\"", "\"acompact\xff\"", `"a\"compact"`} {
		want := strings.HasPrefix(str(json.RawMessage(raw)), "acompact")
		if got := hasPrefix(json.RawMessage(raw), "acompact"); got != want {
			t.Errorf("hasPrefix(%s) = %v, want %v", raw, got, want)
		}
	}
}
