package builder

// This file fixes the API of the package so that the CLI and the daemon can
// be written against it. Every function here is to be implemented for real
// (and this comment removed) by the owner of package builder.

import (
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
)

// DefaultEventCap is the format page's event cap.
const DefaultEventCap = 20000

// Options tune one build.
type Options struct {
	PathMode redact.Mode
	HashKey  []byte // for hashed mode; nil falls back to dirs_only
	EventCap int    // 0 means DefaultEventCap
	// Producer is session.cliVersion, e.g. "agentmap 0.1.0"; excluded from
	// the content hash.
	Producer string
}

// Map is an agentplay/v1 session map. Its fields mirror the format page.
type Map struct{}

// Build turns the events of one session (main lane and subagent lanes, in
// any interleaving that keeps each lane's own order) into a map. The result
// depends only on the events and the options: the same input gives the same
// bytes.
func Build(events []event.Event, opts Options) (*Map, error) { return &Map{}, nil }

// NativeID is the session's native id (the map file's base name).
func (m *Map) NativeID() string { return "" }

// Canonical returns the canonical JSON of the map (map-decisions.md), the
// bytes that are gzipped into the store.
func (m *Map) Canonical() ([]byte, error) { return []byte("{}"), nil }

// Gzip returns the deterministic gzip of the canonical JSON.
func (m *Map) Gzip() ([]byte, error) { return nil, nil }

// AsLane relabels the events of a child session (a Codex child rollout) as
// lane laneID of its parent: session records are dropped, every other event
// gets Agent = laneID.
func AsLane(events []event.Event, laneID string) []event.Event { return events }
