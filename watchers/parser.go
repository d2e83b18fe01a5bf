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
