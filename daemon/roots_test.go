package daemon

import (
	"path/filepath"
	"reflect"
	"testing"

	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/watchers"
)

// homeRoots are the roots of the defaults for a home directory, with no
// variable set: where the tests lay out logs.
func homeRoots(goos, home string) []watchers.Root {
	return RootsFromConfig(config.DefaultFor(goos, home, nil))
}

func TestRootsFromConfig(t *testing.T) {
	dirs := func(rs []watchers.Root) []string {
		var out []string
		for _, r := range rs {
			out = append(out, r.Agent+":"+r.Layout+"="+filepath.ToSlash(r.Dir))
		}
		return out
	}
	if got, want := dirs(homeRoots("linux", "/h")), []string{
		"claude:claude=/h/.claude", "claude:claude=/h/.config/claude", "codex:codex=/h/.codex", "cursor:cursor=/h/.cursor",
		"cursor:cursor-app=/h/.config/Cursor/User", "opencode:opencode=/h/.local/share/opencode", "copilot:copilot=/h/.copilot",
		"gemini:gemini=/h/.gemini"}; !reflect.DeepEqual(got, want) {
		t.Errorf("linux defaults:\n got %q\nwant %q", got, want)
	}
	c := config.DefaultFor("linux", "/h", nil)
	c.Agents.Claude.Enabled = false
	c.Agents.Cursor.Enabled = false
	c.Agents.OpenCode.Enabled = false
	c.Agents.Copilot.Enabled = false
	c.Agents.Gemini.Enabled = false
	if got := dirs(RootsFromConfig(c)); !reflect.DeepEqual(got, []string{"codex:codex=/h/.codex"}) {
		t.Errorf("only codex enabled: %q", got)
	}
	// CLAUDE_CONFIG_DIR with a trailing slash names a default directory
	// again: it is followed once.
	c = config.DefaultFor("linux", "/h", func(k string) string {
		if k == "CLAUDE_CONFIG_DIR" {
			return "/h/.claude/,/h/.claude"
		}
		return ""
	})
	var claude []string
	for _, r := range RootsFromConfig(c) {
		if r.Agent == "claude" {
			claude = append(claude, filepath.ToSlash(r.Dir))
		}
	}
	if want := []string{"/h/.claude", "/h/.config/claude"}; !reflect.DeepEqual(claude, want) {
		t.Errorf("CLAUDE_CONFIG_DIR=/h/.claude/,/h/.claude: claude roots %q, want %q", claude, want)
	}
}
