package agents

import (
	"path/filepath"
	"sort"
	"strings"

	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/claude"
)

// Beside remembers, across the main logs of one `agentmap build`, what
// finding their companions read: the flat subagent logs of a directory
// and the session each of them names. A project directory holds
// thousands of main logs; listing it and reading every flat subagent
// log's first line again for each of them made the plan quadratic in the
// logs of a directory. The zero value is ready; a nil *Beside reads
// afresh each time.
type Beside struct {
	flat     map[string][]string // directory → its agent-*.jsonl files
	sessions map[string]string   // flat subagent log → the session it names ("" when unreadable)
}

// flatLogs lists dir's agent-*.jsonl files (the older flat layout).
func (b *Beside) flatLogs(dir string) []string {
	if b == nil {
		files, _ := filepath.Glob(filepath.Join(dir, "agent-*.jsonl"))
		return files
	}
	if files, ok := b.flat[dir]; ok {
		return files
	}
	files, _ := filepath.Glob(filepath.Join(dir, "agent-*.jsonl"))
	if b.flat == nil {
		b.flat = map[string][]string{}
	}
	b.flat[dir] = files
	return files
}

// sessionOf is the session a flat subagent log's first line names, "" when
// it cannot be read or routed.
func (b *Beside) sessionOf(path string) string {
	if b != nil {
		if s, ok := b.sessions[path]; ok {
			return s
		}
	}
	session := ""
	if first, err := FirstLine(path); err == nil {
		if src, err := unrotated(claude.Identify)(path, first); err == nil {
			session = src.Session
		}
	}
	if b != nil {
		if b.sessions == nil {
			b.sessions = map[string]string{}
		}
		b.sessions[path] = session
	}
	return session
}

// claudeSubagentFiles finds the subagent logs that belong to a main Claude
// session file: <dir>/<stem>/subagents/agent-*.jsonl (current layout) and
// flat <dir>/agent-*.jsonl (older layout; routed by the session id inside,
// so files of other sessions are read and dropped by Identify's routing).
func claudeSubagentFiles(mainPath string, _ watchers.Source, seen *Beside) []string {
	mainPath, _ = watchers.Rotation(mainPath) // a rotated copy: the log's own lanes
	dir := filepath.Dir(mainPath)
	stem := strings.TrimSuffix(filepath.Base(mainPath), ".jsonl")
	var found []string
	nested, _ := filepath.Glob(filepath.Join(dir, stem, "subagents", "agent-*.jsonl"))
	found = append(found, nested...)
	if flat := seen.flatLogs(dir); len(flat) > 0 {
		mainFirst, _ := FirstLine(mainPath)
		mainSrc, _ := unrotated(claude.Identify)(mainPath, mainFirst)
		for _, f := range flat {
			if s := seen.sessionOf(f); s != "" && s == mainSrc.Session {
				found = append(found, f)
			}
		}
	}
	sort.Strings(found)
	return found
}
