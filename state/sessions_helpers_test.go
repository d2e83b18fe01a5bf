package state

import (
	"fmt"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
)

// commitSessions commits n sessions of one source and 40 events each, in
// transactions of up to 500.
func commitSessions(t *testing.T, d *DB, n int) {
	t.Helper()
	for from := 0; from < n; from += 500 {
		commitSessionRange(t, d, from, min(from+500, n))
	}
}

func commitSessionRange(t *testing.T, d *DB, from, to int) {
	t.Helper()
	var batches []Batch
	for i := from; i < to; i++ {
		src := &Source{ID: uint64(i + 1), Path: fmt.Sprintf("/logs/%d.jsonl", i), Agent: "claude", Session: fmt.Sprintf("claude/s%d", i)}
		evs := make([]event.Event, 40)
		for j := range evs {
			evs[j] = event.Event{Kind: event.KindUser, T: int64(j), User: &event.User{Chars: j}}
		}
		batches = append(batches, Batch{Source: src, Events: evs, Sessions: []*Session{{Key: src.Session, Agent: "claude", NativeID: fmt.Sprint(i)}}})
	}
	if err := d.CommitAll(batches); err != nil {
		t.Fatal(err)
	}
}
