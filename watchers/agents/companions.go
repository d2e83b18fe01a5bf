package agents

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/claude"
)

// claudeSubagentFiles finds the subagent logs that belong to a main Claude
// session file: <dir>/<stem>/subagents/agent-*.jsonl (current layout) and
// flat <dir>/agent-*.jsonl (older layout; routed by the session id inside,
// so files of other sessions are read and dropped by Identify's routing).
func claudeSubagentFiles(mainPath string, _ watchers.Source) []string {
	mainPath, _ = watchers.Rotation(mainPath) // a rotated copy: the log's own lanes
	dir := filepath.Dir(mainPath)
	stem := strings.TrimSuffix(filepath.Base(mainPath), ".jsonl")
	var found []string
	nested, _ := filepath.Glob(filepath.Join(dir, stem, "subagents", "agent-*.jsonl"))
	found = append(found, nested...)
	flat, _ := filepath.Glob(filepath.Join(dir, "agent-*.jsonl"))
	identify := unrotated(claude.Identify)
	mainFirst, _ := FirstLine(mainPath)
	mainSrc, _ := identify(mainPath, mainFirst)
	for _, f := range flat {
		first, err := FirstLine(f)
		if err != nil {
			continue
		}
		if src, err := identify(f, first); err == nil && src.Session == mainSrc.Session {
			found = append(found, f)
		}
	}
	sort.Strings(found)
	return found
}
