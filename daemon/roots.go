package daemon

import (
	"path/filepath"

	"github.com/agentmap/agentmap/config"
	"github.com/agentmap/agentmap/watchers"
)

// RootsFromConfig turns the agents' settings into the roots the daemon
// follows, leaving out disabled agents. The config's defaults are the one
// list of where each agent keeps its logs; the daemon has none of its own.
func RootsFromConfig(c *config.Config) []watchers.Root {
	a := &c.Agents
	var roots []watchers.Root
	for _, r := range []struct {
		on            bool
		agent, layout string
		dirs          []string
	}{
		{a.Claude.Enabled, "claude", watchers.LayoutClaude, a.Claude.Roots},
		{a.Codex.Enabled, "codex", watchers.LayoutCodex, a.Codex.Roots},
		{a.Cursor.Enabled, "cursor", watchers.LayoutCursor, a.Cursor.Roots},
		{a.Cursor.Enabled, "cursor", watchers.LayoutCursorApp, a.Cursor.AppRoots},
		{a.OpenCode.Enabled, "opencode", watchers.LayoutOpenCode, a.OpenCode.Roots},
		{a.Copilot.Enabled, "copilot", watchers.LayoutCopilot, a.Copilot.Roots},
		{a.Gemini.Enabled, "gemini", watchers.LayoutGemini, a.Gemini.Roots},
	} {
		if !r.on {
			continue
		}
		for _, d := range r.dirs {
			roots = append(roots, watchers.Root{Agent: r.agent, Layout: r.layout, Dir: filepath.Clean(d)})
		}
	}
	return watchers.UniqueRoots(roots)
}
