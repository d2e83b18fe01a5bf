package cursor

import (
	"context"

	"github.com/agentmap/agentmap/builder/event"
)

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
