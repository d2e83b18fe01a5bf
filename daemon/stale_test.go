package daemon

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
)

// refusingMapper is fakeMapper for sessions the builder maps, and the
// builder's refusal of a session whose events hold a "void" line: the
// session no longer makes a map.
func refusingMapper(events []event.Event) (Built, error) {
	for _, e := range events {
		if e.Kind == "void" {
			return Built{}, builder.ErrEmptySession
		}
	}
	return fakeMapper(events)
}

func (r *rig) onceRefusing() {
	r.t.Helper()
	o := r.opts(true)
	o.Mapper = refusingMapper
	if err := New(o).Run(context.Background()); err != nil {
		r.t.Fatalf("run --once: %v", err)
	}
}

// A map exists exactly when the session's events make one: a session
// that stops mapping loses the map written before, as `agentmap build`
// would write none.
func TestMapOfASessionThatStopsMappingIsRemoved(t *testing.T) {
	r := newRig(t)
	r.append("a.jsonl", line("a", "user"))
	r.append("b.jsonl", line("b", "user"))
	r.onceRefusing()
	if r.mapOf("a") == "" || r.mapOf("b") == "" {
		t.Fatal("no maps to begin with")
	}
	r.append("a.jsonl", line("a", "void"))
	r.onceRefusing()
	if r.mapOf("a") != "" {
		t.Error("the map of a session that no longer maps is still there")
	}
	if r.mapOf("b") == "" {
		t.Error("the map of an unchanged session is gone")
	}
}

// After the state database is lost, the maps in the store are matched to
// their sessions by name: a session read again that no longer maps loses
// its map; one whose log is gone keeps it; the rest are rewritten alike.
func TestMapsFoundAfterARebuild(t *testing.T) {
	r := newRig(t)
	r.append("a.jsonl", line("a", "user"))
	r.append("b.jsonl", line("b", "user"))
	r.append("c.jsonl", line("c", "user"), line("c", "llm"))
	r.onceRefusing()
	wantC := r.mapOf("c")
	if r.mapOf("a") == "" || r.mapOf("b") == "" || wantC == "" {
		t.Fatal("no maps to begin with")
	}
	if err := os.WriteFile(StatePath(r.data), []byte("not a bbolt file"), 0o600); err != nil {
		t.Fatal(err)
	}
	r.append("a.jsonl", line("a", "void"))
	if err := os.Remove(filepath.Join(r.proj, "b.jsonl")); err != nil {
		t.Fatal(err)
	}
	r.onceRefusing()
	if asides, _ := filepath.Glob(StatePath(r.data) + ".corrupt-*"); len(asides) != 1 {
		t.Fatalf("the state was not moved aside: %v", asides)
	}
	if r.mapOf("a") != "" {
		t.Error("the map of a session that no longer maps survived the rebuild")
	}
	if r.mapOf("b") == "" {
		t.Error("the map of a session whose log is gone was removed")
	}
	if got := r.mapOf("c"); got != wantC {
		t.Errorf("c rebuilt differently:\n%s\nwant:\n%s", got, wantC)
	}
}
