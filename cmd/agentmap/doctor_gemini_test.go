package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestGeminiCleanupCheck(t *testing.T) {
	dir := t.TempDir()
	write := func(body string) string {
		p := filepath.Join(dir, "settings.json")
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name, body string
		level      string
		says       string
	}{
		// The default month is worth knowing, not a problem: doctor stays green.
		{"no settings", "", levelInfo, "older than 30d (the default)"},
		{"other keys only", `{"general":{"vimMode":true}}`, levelInfo, "older than 30d (the default)"},
		{"count limit", `{"general":{"sessionRetention":{"maxAge":"90d","maxCount":50}}}`, levelInfo, "older than 90d or beyond the newest 50 (general.sessionRetention in"},
		{"short", `{"general":{"sessionRetention":{"maxAge":"7d"}}}`, levelWarn, "older than 7d (general.sessionRetention in " + filepath.Join(dir, "settings.json") + "): chats from a time agentmap was not running are lost; set general.sessionRetention.maxAge to \"30d\" or more"},
		{"hours", `{"general":{"sessionRetention":{"maxAge":"24h"}}}`, levelWarn, "older than 24h"},
		{"two weeks", `{"general":{"sessionRetention":{"maxAge":"2w","enabled":true}}}`, levelInfo, "older than 2w"},
		{"ten days", `{"general":{"sessionRetention":{"maxAge":"10d","enabled":true}}}`, levelWarn, "older than 10d"},
		{"a year", `{"general":{"sessionRetention":{"maxAge":"400d"}}}`, levelOK, "Gemini CLI keeps chats for 400d"},
		{"unreadable age", `{"general":{"sessionRetention":{"maxAge":"forever"}}}`, levelWarn, `maxAge "forever" in`},
		{"off", `{"general":{"sessionRetention":{"enabled":false}}}`, levelOK, "keeps its chats"},
		{"broken", `{`, levelWarn, "not valid JSON"},
	} {
		p := filepath.Join(dir, "absent.json")
		if tc.body != "" {
			p = write(tc.body)
		}
		got := geminiCleanupCheck(p, true)
		if got.Level != tc.level || !strings.Contains(got.Msg, tc.says) {
			t.Errorf("%s: %s %q, want %s containing %q", tc.name, got.Level, got.Msg, tc.level, tc.says)
		}
	}
	// No Gemini CLI here at all: nothing to rate.
	if got := geminiCleanupCheck(filepath.Join(dir, "none", ".gemini", "settings.json"), true); got.Level != levelInfo ||
		!strings.Contains(got.Msg, "Gemini CLI is not set up here") {
		t.Errorf("no Gemini CLI: %+v", got)
	}
	if got := geminiCleanupCheck(filepath.Join(dir, "x"), false); got.Level != levelInfo {
		t.Errorf("disabled agent: %+v", got)
	}
	if got := geminiSettings("/h", "/g"); got != filepath.Join("/g", ".gemini", "settings.json") {
		t.Errorf("GEMINI_CLI_HOME: %s", got)
	}
}
