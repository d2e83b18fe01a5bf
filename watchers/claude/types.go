package claude

// Record types of a Claude Code transcript. The conversation types are
// parsed; the rest are bookkeeping lines (titles, modes, snapshots, queue
// operations, links) that hold nothing a map may keep beyond what the
// conversation lines already give, and are skipped on purpose. A type not in
// either list is skipped too (the format drifts), but tests over real logs
// fail on it so that new types get a decision.
var parsedTypes = map[string]bool{
	"user":       true,
	"assistant":  true,
	"system":     true,
	"attachment": true,
	"progress":   true,
}

var ignoredTypes = map[string]bool{
	"summary":               true, // legacy title: text
	"custom-title":          true, // text
	"ai-title":              true, // text
	"last-prompt":           true, // text
	"tag":                   true,
	"agent-name":            true,
	"agent-color":           true,
	"agent-setting":         true,
	"mode":                  true,
	"permission-mode":       true,
	"repl-mode":             true,
	"worktree-state":        true,
	"pr-link":               true, // PRs come from confirming tool results only
	"frame-link":            true,
	"relocated":             true,
	"continued-in":          true,
	"file-history-snapshot": true, // edit backups; the tool calls already name the files
	"queue-operation":       true, // queued prompts: text, and the prompt itself follows as a user line
	"content-replacement":   true,
	"tools-used":            true,
	"atis-latch":            true,
	"history-suppression":   true,
	"data-flow-records":     true,
	"data-flow-incomplete":  true,
	"derived-from":          true,
	"hybrid-organization":   true,
	"session-owner":         true,
}

// knownType reports whether a record type has a decision in this package:
// parsed, or deliberately ignored.
func knownType(t string) bool { return parsedTypes[t] || ignoredTypes[t] }
