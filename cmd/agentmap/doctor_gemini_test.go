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
		{"no settings", "", levelWarn, "older than 30d (the default)"},
		{"other keys only", `{"general":{"vimMode":true}}`, levelWarn, "older than 30d (the default)"},
		{"max age", `{"general":{"sessionRetention":{"maxAge":"7d","maxCount":50}}}`, levelWarn, "older than 7d or beyond the newest 50 (general.sessionRetention in"},
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
	if got := geminiCleanupCheck(filepath.Join(dir, "x"), false); got.Level != levelInfo {
		t.Errorf("disabled agent: %+v", got)
	}
	if got := geminiSettings("/h", "/g"); got != filepath.Join("/g", ".gemini", "settings.json") {
		t.Errorf("GEMINI_CLI_HOME: %s", got)
	}
}
