package daemon

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

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

// A session whose map could not be written is retried; if its events
// then make no map at all, that settles it, and nothing is left waiting:
// status counted it among the maps to write again for as long as the
// daemon ran (and the retry held the session in memory). The write fails
// here because a file stands where the agent's map directory goes, which
// stops root as well as anyone.
func TestEmptySessionDropsItsRetry(t *testing.T) {
	r := newRig(t)
	if err := os.MkdirAll(MapsDir(r.data), 0o700); err != nil {
		t.Fatal(err)
	}
	blocker := filepath.Join(MapsDir(r.data), "claude")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	opt := r.opts(false)
	opt.Control, opt.Mapper = true, refusingMapper
	stop := follow(t, New(opt))
	defer stop()
	r.append("a.jsonl", line("a", "user"))
	var c *Client
	deadline := time.Now().Add(10 * time.Second)
	for {
		var err error
		if c, err = Connect(r.data); err == nil {
			if res, err := c.Flush(context.Background(), "", true); err == nil && len(res.Failed) == 1 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the blocked map write did not fail: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st, err := c.Status(context.Background()); err != nil || st.FlushRetries != 1 {
		t.Fatalf("status after the failed write: %+v %v", st.FlushRetries, err)
	}
	r.append("a.jsonl", line("a", "void"))
	for {
		res, err := c.Flush(context.Background(), "", true)
		st, serr := c.Status(context.Background())
		if err == nil && serr == nil && len(res.Failed) == 0 && st.Agents[0].Live == 0 {
			if st.FlushRetries != 0 {
				t.Fatalf("a session that makes no map is still waiting to be written: %d", st.FlushRetries)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the session was not settled: %+v %v %v", res, err, serr)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
