// Package agents is the registry of the agents agentmap follows: how to
// recognise each one's log files, route them to a session, and parse them.
// The daemon and `agentmap build` both go through it, so a file is read the
// same way whichever reads it.
package agents

import (
	"context"
	"errors"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/claude"
	"github.com/agentmap/agentmap/watchers/codex"
	"github.com/agentmap/agentmap/watchers/copilot"
	"github.com/agentmap/agentmap/watchers/cursor"
	"github.com/agentmap/agentmap/watchers/gemini"
	"github.com/agentmap/agentmap/watchers/opencode"
)

// Agent describes one line-based log format.
type Agent struct {
	// Name is the short name used in flags, paths and the store (claude,
	// codex, cursor).
	Name string
	// Tool is the session.agentTool value of its maps.
	Tool string
	// LooksLike recognises the agent from a file's first line.
	LooksLike func(firstLine []byte) bool
	// Identify routes a file to its session and lane.
	Identify func(path string, firstLine []byte) (watchers.Source, error)
	// New starts a parser at the beginning of a file.
	New func(src watchers.Source) watchers.Parser
	// Restore resumes a parser from its carry-state.
	Restore func(src watchers.Source, state []byte) (watchers.Parser, error)
	// IsDB recognises a database the agent keeps its sessions in, and
	// ReadDB reads one whole, read-only (it is polled when it changes);
	// nil for agents that keep none.
	IsDB   func(path string) bool
	ReadDB func(ctx context.Context, path string) ([]watchers.Conversation, error)
	// Whole marks an agent that also wrote whole-document JSON logs,
	// which ParseWhole reads (Codex's first rollouts, Gemini CLI's older
	// chats).
	Whole bool
	// Companions lists the files that belong to the session of a main
	// log (src.Lane "") beside it, so that a main log given alone to
	// `agentmap build` is read with them: Claude's subagent transcripts,
	// Gemini CLI's subagent chats. nil for agents whose logs stand alone
	// (the daemon finds every file by itself). seen carries what was read
	// for other main logs of the same build (nil: nothing).
	Companions func(mainPath string, src watchers.Source, seen *Beside) []string
	// Version numbers what the agent's parsers make of a log: it is raised
	// with every change that gives other events for lines already read (a
	// field read that was not, a count fixed), so that a daemon of the new
	// build reads again, from its start, every log an earlier build read
	// and that is still on disk, instead of keeping what that build made
	// of it (daemon/reread.go). TestParserVersions fails when the events
	// of the fixtures or the corpus change under the same number.
	Version int
}

// All lists the agents, in the order auto-detection tries them.
var All = []Agent{
	{
		Name: "claude", Tool: "claude-code", Companions: claudeSubagentFiles, Version: 1,
		LooksLike: claude.LooksLike, Identify: unrotated(claude.Identify),
		New: func(s watchers.Source) watchers.Parser { return claude.NewParser(s) },
		Restore: func(s watchers.Source, st []byte) (watchers.Parser, error) {
			return claude.Restore(s, st)
		},
	},
	{
		Name: "codex", Tool: "codex", Whole: true, Version: 1,
		LooksLike: codex.LooksLike, Identify: unrotated(codex.Identify),
		New: func(s watchers.Source) watchers.Parser { return codex.NewParser(s) },
		Restore: func(s watchers.Source, st []byte) (watchers.Parser, error) {
			return codex.Restore(s, st)
		},
	},
	{
		Name: "cursor", Tool: "cursor", Version: 1,
		LooksLike: cursor.LooksLike, Identify: unrotated(cursor.Identify),
		New: func(s watchers.Source) watchers.Parser { return cursor.NewParser(s) },
		Restore: func(s watchers.Source, st []byte) (watchers.Parser, error) {
			return cursor.Restore(s, st)
		},
	},
	dbOnly("opencode", opencode.Tool, 2, opencode.IsStore, opencode.ReadStore),
	{
		Name: "copilot", Tool: copilot.Tool, Version: 1,
		LooksLike: copilot.LooksLike, Identify: unrotated(copilot.Identify),
		New: func(s watchers.Source) watchers.Parser { return copilot.NewParser(s) },
		Restore: func(s watchers.Source, st []byte) (watchers.Parser, error) {
			return copilot.Restore(s, st)
		},
	},
	{
		Name: gemini.Agent, Tool: gemini.Tool, Whole: true, Version: 2,
		Companions: func(p string, s watchers.Source, _ *Beside) []string { return gemini.SubagentFiles(p, s.Session) },
		LooksLike:  gemini.LooksLike, Identify: unrotated(gemini.Identify),
		New: func(s watchers.Source) watchers.Parser { return gemini.NewParser(s) },
		Restore: func(s watchers.Source, st []byte) (watchers.Parser, error) {
			return gemini.Restore(s, st)
		},
	},
}

// unrotated routes a rotated copy (log.1) as the log it was copied from,
// so that both halves of a copy-truncate rotation feed one session.
func unrotated(identify func(string, []byte) (watchers.Source, error)) func(string, []byte) (watchers.Source, error) {
	return func(path string, first []byte) (watchers.Source, error) {
		base, _ := watchers.Rotation(path)
		return identify(base, first)
	}
}

// dbOnly is the entry of an agent whose sessions live in a database only:
// no file of its is a line log.
func dbOnly(name, tool string, version int, is func(string) bool, read func(context.Context, string) ([]watchers.Conversation, error)) Agent {
	return Agent{
		Name: name, Tool: tool, Version: version, IsDB: is, ReadDB: read,
		LooksLike: func([]byte) bool { return false },
		Identify: func(string, []byte) (watchers.Source, error) {
			return watchers.Source{}, errNoLines
		},
		New: func(watchers.Source) watchers.Parser { return noLines{} },
		Restore: func(watchers.Source, []byte) (watchers.Parser, error) {
			return noLines{}, nil
		},
	}
}

var errNoLines = errors.New("this agent keeps its sessions in a database, not in line logs")

// noLines is the parser of a database-only agent: it takes no line.
type noLines struct{}

func (noLines) Line(_ []byte, out []event.Event) ([]event.Event, error) { return out, errNoLines }
func (noLines) State() ([]byte, error)                                  { return nil, nil }

// DBReader returns the agent whose database path is, and its reader.
func DBReader(agentName, path string) (Agent, bool) {
	for _, a := range All {
		if a.ReadDB != nil && (agentName == "auto" || agentName == a.Name) && a.IsDB(path) {
			return a, true
		}
	}
	return Agent{}, false
}

// ByName returns the agent with the given short name.
func ByName(name string) (Agent, bool) {
	for _, a := range All {
		if a.Name == name {
			return a, true
		}
	}
	return Agent{}, false
}

// Detect returns the first agent whose LooksLike accepts the first line.
func Detect(firstLine []byte) (Agent, bool) {
	for _, a := range All {
		if a.LooksLike(firstLine) {
			return a, true
		}
	}
	return Agent{}, false
}

// EnsureSession returns the events of a session with a session record at
// the front when none of them has one: a session known only from its
// subagent files (the main log was deleted or never copied) still gets a
// map under its native id. The daemon and `agentmap build` both call it,
// so their maps agree.
func EnsureSession(agentName, native string, events []event.Event) []event.Event {
	for _, e := range events {
		if e.Kind == event.KindSession && e.Session != nil && e.Session.NativeID != "" {
			return events
		}
	}
	tool := agentName
	if a, ok := ByName(agentName); ok {
		tool = a.Tool
	}
	rec := event.Event{Kind: event.KindSession, Session: &event.Session{NativeID: native, AgentTool: tool}}
	return append([]event.Event{rec}, events...)
}
