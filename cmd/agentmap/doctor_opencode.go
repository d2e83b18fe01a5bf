package main

import (
	"path/filepath"

	"github.com/agentmap/agentmap/config"
)

// openCodeDBCheck looks at $OPENCODE_DB, which moves OpenCode's store: a
// store under another name than OpenCode's own (opencode.db,
// opencode-<channel>.db) is not followed, and nothing is recorded of an
// in-memory one. A store of the usual name is followed from its directory
// (a default root), which the root checks cover.
func openCodeDBCheck(env string, enabled bool) (check, bool) {
	const topic = "opencode"
	switch {
	case env == "" || !enabled:
		return check{}, false
	case env == ":memory:":
		return check{levelWarn, topic, "$OPENCODE_DB is :memory:: OpenCode keeps its sessions in memory only, so there is nothing to follow"}, true
	case !config.OpenCodeStoreName(filepath.Base(env)):
		return check{levelWarn, topic, "$OPENCODE_DB names a store called " + filepath.Base(env) +
			": agentmap follows stores named opencode.db or opencode-<channel>.db only; give it one of those names (its directory is then followed)"}, true
	}
	return check{}, false
}
