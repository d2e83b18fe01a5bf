package cursor

// This file fixes the package API so that the daemon and the CLI can be
// written against it; it is replaced by the real parser.

import (
	"context"
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers"
)

// Parser is the incremental parser of this agent's log lines.
type Parser struct{ src watchers.Source }

// NewParser returns a parser for a file routed to src.
func NewParser(src watchers.Source) *Parser { return &Parser{src: src} }

// Restore returns a parser with the carry-state from State.
func Restore(src watchers.Source, state []byte) (*Parser, error) { return &Parser{src: src}, nil }

// Identify routes a file from its path and first line.
func Identify(path string, firstLine []byte) (watchers.Source, error) { return watchers.Source{}, nil }

// LooksLike reports whether a first line is this agent's.
func LooksLike(firstLine []byte) bool { return false }

// Line implements watchers.Parser.
func (p *Parser) Line(line []byte, out []event.Event) ([]event.Event, error) { return out, nil }

// State implements watchers.Parser.
func (p *Parser) State() ([]byte, error) { return nil, nil }

// Conversation is one composer of a SQLite store.
type Conversation struct {
	NativeID  string
	Events    []event.Event
	UpdatedMs int64
}

// ReadVSCDB reads every conversation of a state.vscdb, read-only.
func ReadVSCDB(ctx context.Context, path string) ([]Conversation, error) { return nil, nil }

// ReadStoreDB reads a cursor-agent store.db, read-only.
func ReadStoreDB(ctx context.Context, path string) ([]Conversation, error) { return nil, nil }

// IsVSCDB reports whether path looks like a state.vscdb.
func IsVSCDB(path string) bool { return false }

// IsStoreDB reports whether path looks like a cursor-agent store.db.
func IsStoreDB(path string) bool { return false }
