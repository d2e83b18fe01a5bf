// Package agentscope converts agentplay/v1 maps into an AgentScope trace
// (schemaVersion 1.0.0): one run per session, each tool call an action of
// one of AgentScope's six types. Actions never carry a command, an output
// or a diff: the map has none, and AgentScope's fields for them stay unset.
package agentscope

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/agentmap/agentmap/builder/prices"
	"github.com/agentmap/agentmap/export/mapfile"
)

// SchemaVersion is the trace schema this package writes.
const SchemaVersion = "1.0.0"

// Run is one AgentScope run.
type Run struct {
	ID           string   `json:"id"`
	Title        string   `json:"title"`
	Agent        string   `json:"agent"`
	Branch       string   `json:"branch"`
	Status       string   `json:"status"`
	TrustScore   int      `json:"trustScore"`
	StartedAt    string   `json:"startedAt"`
	Duration     string   `json:"duration"`
	Cost         string   `json:"cost"`
	FilesChanged int      `json:"filesChanged"`
	Commands     int      `json:"commands"`
	Actions      []Action `json:"actions"`
}

// Action is one timeline action.
type Action struct {
	ID        string   `json:"id"`
	Type      string   `json:"type"`
	Title     string   `json:"title"`
	Timestamp string   `json:"timestamp"`
	Duration  string   `json:"duration"`
	Risk      string   `json:"risk"`
	Summary   string   `json:"summary"`
	Details   []string `json:"details"`
	File      string   `json:"file,omitempty"`
}

// unknownBranch fills run.branch, which AgentScope requires and a map does
// not record.
const unknownBranch = "unknown"

// Writer streams one trace document: {"schemaVersion", "runs": [...]}.
type Writer struct {
	bw   *bufio.Writer
	runs int
	err  error
}

// NewWriter starts a trace on w.
func NewWriter(w io.Writer) *Writer { return &Writer{bw: bufio.NewWriterSize(w, 64<<10)} }

// Add writes the run of one map.
func (w *Writer) Add(m *mapfile.Map) error {
	if w.err != nil {
		return w.err
	}
	b, err := json.Marshal(Convert(m))
	if err != nil {
		return fmt.Errorf("agentscope: session %s: %w", m.Session.ID, err)
	}
	if w.runs == 0 {
		w.write([]byte(`{"schemaVersion":"` + SchemaVersion + `","runs":[` + "\n"))
	} else {
		w.write([]byte(",\n"))
	}
	w.write(b)
	w.runs++
	return w.err
}

func (w *Writer) write(b []byte) {
	if w.err == nil {
		_, w.err = w.bw.Write(b)
	}
}

// ErrNoRuns means the trace would have no run, which AgentScope refuses.
var ErrNoRuns = errors.New("agentscope: no session to export (a trace needs at least one run)")

// Close ends the document.
func (w *Writer) Close() error {
	if w.err != nil {
		return w.err
	}
	if w.runs == 0 {
		return ErrNoRuns
	}
	w.write([]byte("\n]}\n"))
	if w.err != nil {
		return w.err
	}
	return w.bw.Flush()
}

// Convert maps one session onto a run.
func Convert(m *mapfile.Map) Run {
	s := m.Session
	run := Run{
		ID:        s.ID,
		Title:     title(m),
		Agent:     agentName(s.AgentTool, s.Models),
		Branch:    unknownBranch,
		StartedAt: s.StartedAt,
		Duration:  duration(s.DurationMs),
		Cost:      cost(m),
		Actions:   []Action{},
	}
	if run.StartedAt == "" {
		run.StartedAt = "unknown"
	}
	start, dated := m.Start()
	edited := map[int]bool{}
	for i := range m.Events {
		e := &m.Events[i]
		a, ok := action(m, e)
		if !ok {
			continue
		}
		a.ID = fmt.Sprintf("a%d", len(run.Actions)+1)
		a.Timestamp = "+" + duration(e.T)
		if dated {
			a.Timestamp = start.Add(time.Duration(e.T) * time.Millisecond).Format("15:04:05")
		}
		switch a.Type {
		case "edit_file":
			for _, t := range e.Targets {
				if t.File != nil {
					edited[*t.File] = true
				}
			}
		case "run_command", "test_passed", "test_failed":
			run.Commands++
		}
		run.Actions = append(run.Actions, a)
	}
	run.FilesChanged = len(edited)
	run.Status, run.TrustScore = status(s.Outcome, run.Actions)
	return run
}

// cost is the run's cost as AgentScope shows it, a free string: never
// "$0.00" for tokens that were used, whether their model has no price
// ("unpriced") or their log recorded no usage for any of the session's
// requests ("usage not recorded", Cursor's sessions): the format has no way
// to leave a run's cost out.
func cost(m *mapfile.Map) string {
	if m.Totals.Tokens == 0 && m.Totals.CostUSD == 0 {
		for i := range m.Events {
			if m.Events[i].Kind == "llm" {
				return "usage not recorded"
			}
		}
	}
	return prices.CostText(m.Totals.CostUSD, m.UnpricedModels(""), "$0.00")
}

func title(m *mapfile.Map) string {
	name := "session"
	if len(m.Repos) > 0 && m.Repos[0].Name != "" {
		name = m.Repos[0].Name + " session"
	}
	return fmt.Sprintf("%s %s: %d turn(s), %d tool call(s)", agentName(m.Session.AgentTool, nil), name,
		m.Totals.UserTurns, m.Totals.Calls)
}

func agentName(tool string, models []string) string {
	name := tool
	switch tool {
	case "claude-code":
		name = "Claude Code"
	case "codex":
		name = "Codex"
	case "cursor":
		name = "Cursor"
	case "opencode":
		name = "OpenCode"
	case "copilot":
		name = "GitHub Copilot CLI"
	case "":
		name = "unknown agent"
	}
	if len(models) > 0 {
		name += " (" + strings.Join(models, ", ") + ")"
	}
	return name
}

// status follows the map's outcome; the score follows AgentScope's own
// JSONL importer (85 passed, 60 warning, 35 failed).
func status(outcome string, actions []Action) (string, int) {
	lastTest := ""
	for _, a := range actions {
		if a.Type == "test_passed" || a.Type == "test_failed" {
			lastTest = a.Type
		}
	}
	switch {
	case outcome == "unresolved_errors" || outcome == "blocked" || lastTest == "test_failed":
		return "failed", 35
	case outcome == "verified" || outcome == "pr_created" || outcome == "completed" && lastTest == "test_passed":
		return "passed", 85
	}
	return "warning", 60
}

// duration renders ms the way AgentScope shows it: "0s", "24s", "1m 16s",
// "2h 5m".
func duration(ms int64) string {
	if ms < 0 {
		ms = 0
	}
	s := ms / 1000
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		if s%60 == 0 {
			return fmt.Sprintf("%dm", s/60)
		}
		return fmt.Sprintf("%dm %ds", s/60, s%60)
	}
	if (s%3600)/60 == 0 {
		return fmt.Sprintf("%dh", s/3600)
	}
	return fmt.Sprintf("%dh %dm", s/3600, (s%3600)/60)
}
