// Package agents is the registry of the agents agentmap follows: how to
// recognise each one's log files, route them to a session, and parse them.
// The daemon and `agentmap build` both go through it, so a file is read the
// same way whichever reads it.
package agents

import (
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/claude"
	"github.com/agentmap/agentmap/watchers/codex"
	"github.com/agentmap/agentmap/watchers/cursor"
	"github.com/agentmap/agentmap/watchers/gemini"
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
}

// All lists the agents, in the order auto-detection tries them.
var All = []Agent{
	{
		Name: "claude", Tool: "claude-code",
		LooksLike: claude.LooksLike, Identify: claude.Identify,
		New: func(s watchers.Source) watchers.Parser { return claude.NewParser(s) },
		Restore: func(s watchers.Source, st []byte) (watchers.Parser, error) {
			return claude.Restore(s, st)
		},
	},
	{
		Name: "codex", Tool: "codex",
		LooksLike: codex.LooksLike, Identify: codex.Identify,
		New: func(s watchers.Source) watchers.Parser { return codex.NewParser(s) },
		Restore: func(s watchers.Source, st []byte) (watchers.Parser, error) {
			return codex.Restore(s, st)
		},
	},
	{
		Name: "cursor", Tool: "cursor",
		LooksLike: cursor.LooksLike, Identify: cursor.Identify,
		New: func(s watchers.Source) watchers.Parser { return cursor.NewParser(s) },
		Restore: func(s watchers.Source, st []byte) (watchers.Parser, error) {
			return cursor.Restore(s, st)
		},
	},
	{Name: gemini.Agent, Tool: gemini.Tool, LooksLike: gemini.LooksLike, Identify: gemini.Identify, New: func(s watchers.Source) watchers.Parser { return gemini.NewParser(s) }, Restore: func(s watchers.Source, st []byte) (watchers.Parser, error) { return gemini.Restore(s, st) }},
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
