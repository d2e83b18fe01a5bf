package codex

// This file fixes the package API so that the daemon and the CLI can be
// written against it; it is replaced by the real parser.

import (
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers"
	"io"
	"os"
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

// ParseWhole parses the oldest single-JSON form.
func ParseWhole(r io.Reader) ([]event.Event, watchers.Source, error) {
	return nil, watchers.Source{}, nil
}

// OpenMaybeZstd opens a rollout, decompressing .zst.
func OpenMaybeZstd(path string) (io.ReadCloser, error) { return os.Open(path) }
