// Package watchers holds what every agent follower shares: the Parser
// contract that turns complete log lines into neutral events, discovery of
// agent roots, and the tailer that reads complete lines from a cursor.
package watchers

import "github.com/agentmap/agentmap/builder/event"

// Parser turns the complete lines of one log file into neutral, redacted
// events, one line at a time. Everything a parser remembers between lines
// (the carry-state) is returned by State and restored by the agent package's
// Restore function, so that the daemon can commit it with the file cursor
// and resume mid-file after a restart without re-reading earlier lines.
//
// A parser never stores or returns text from the log: see package event.
type Parser interface {
	// Line parses one complete line (without its newline) and appends the
	// events it yields to out. A line that cannot be used (invalid JSON,
	// wrong shape) returns out unchanged and a non-nil error that names the
	// problem without quoting the line; the caller counts it and goes on.
	Line(line []byte, out []event.Event) ([]event.Event, error)
	// State serialises the carry-state.
	State() ([]byte, error)
}

// Source says where the records of one log file belong. Each agent package
// has an Identify function that derives it from the file's path and first
// line; the daemon and `agentmap build` both use it, so that a file is
// routed the same way whichever reads it.
type Source struct {
	Agent string // claude, codex, cursor
	// Session is the native id of the session whose map the file's records
	// feed. For a Claude subagent file it is the parent session's id.
	Session string
	// Lane is the subagent lane id (as it appears in the map, e.g.
	// "sa-ae824d54211f") for a file that holds one subagent's records; ""
	// for a session's own log.
	Lane string
	// ParentSession is set for a file that is a session of its own and also
	// a lane of a parent session (a Codex child rollout): the parent's
	// native id. The parent's map includes the child's records as lane
	// ChildLane.
	ParentSession string
	ChildLane     string
}

// Conversation is one session read whole from an agent's database (a
// SQLite store polled read-only): its native id, its events, and when it
// last changed (Unix ms).
type Conversation struct {
	NativeID  string
	Events    []event.Event
	UpdatedMs int64
}
