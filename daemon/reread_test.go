package daemon

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/agents"
)

// fixedParser is the fake parser of a later build: it makes "<kind>-v2" of
// every line, where the earlier one made "<kind>".
type fixedParser struct{ fakeParser }

func (p *fixedParser) Line(line []byte, out []event.Event) ([]event.Event, error) {
	var l fakeLine
	if err := json.Unmarshal(line, &l); err != nil || l.K == "" {
		return out, errors.New("not a fake line")
	}
	return p.fakeParser.Line([]byte(`{"s":"`+l.S+`","k":"`+l.K+`-v2"}`), out)
}

func fakeAgentVersion(v int, fixed bool) agents.Agent {
	a := fakeAgentNamed("claude")
	a.Version = v
	if fixed {
		a.New = func(s watchers.Source) watchers.Parser { return &fixedParser{fakeParser{src: s}} }
		a.Restore = func(s watchers.Source, st []byte) (watchers.Parser, error) {
			p := &fixedParser{fakeParser{src: s}}
			return p, json.Unmarshal(st, p)
		}
	}
	return a
}

func (r *rig) onceWith(a agents.Agent) {
	r.t.Helper()
	o := r.opts(true)
	o.Agents = []agents.Agent{a}
	if err := New(o).Run(t0ctx()); err != nil {
		r.t.Fatalf("run --once: %v", err)
	}
}

func sourcesByName(t *testing.T, r *rig) map[string]*state.Source {
	t.Helper()
	db := openState(t, r)
	defer db.Close()
	srcs, _, err := db.Load()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*state.Source{}
	for _, s := range srcs {
		rel, _ := filepath.Rel(r.proj, s.Path)
		out[rel] = s
	}
	return out
}

// A build whose parser reads the same lines differently reads again every
// log an earlier build read that is still on disk, subagent logs too, and
// only once; a deleted log keeps what the earlier build made of it.
func TestLogsReadByAnEarlierParserAreReadAgain(t *testing.T) {
	r := newRig(t)
	r.append("a.jsonl", line("a", "user"), "not a line of the agent\n", line("a", "llm"))
	r.append("a/subagents/agent-x.jsonl", line("a", "call"))
	r.append("b.jsonl", line("b", "user"))
	r.onceWith(fakeAgentVersion(1, false))
	if got, want := r.mapOf("a"), fakeMap(map[string][]string{"": {"user", "llm"}, "sa-x": {"call"}}); got != want {
		t.Fatalf("a, first build:\n%s\nwant:\n%s", got, want)
	}
	for name, s := range sourcesByName(t, r) {
		if s.Parsed != 1 {
			t.Fatalf("%s: parsed by %d, want 1", name, s.Parsed)
		}
	}
	os.Remove(filepath.Join(r.proj, "b.jsonl"))

	// The same build again: nothing is read again (the session is quiet,
	// let go of on load).
	r.onceWith(fakeAgentVersion(1, false))
	if s := sourcesByName(t, r)["a.jsonl"]; s.Resets != 0 {
		t.Fatalf("read again by the same parser: %+v", s)
	}

	// The next build's parser: version 2.
	r.onceWith(fakeAgentVersion(2, true))
	if got, want := r.mapOf("a"), fakeMap(map[string][]string{"": {"user-v2", "llm-v2"}, "sa-x": {"call-v2"}}); got != want {
		t.Fatalf("a after the upgrade:\n%s\nwant:\n%s", got, want)
	}
	if got, want := r.mapOf("b"), fakeMap(map[string][]string{"": {"user"}}); got != want {
		t.Fatalf("b, deleted before the upgrade, keeps its map:\n%s\nwant:\n%s", got, want)
	}
	srcs := sourcesByName(t, r)
	for _, name := range []string{"a.jsonl", filepath.Join("a", "subagents", "agent-x.jsonl")} {
		if s := srcs[name]; s.Parsed != 2 || s.Resets != 1 {
			t.Fatalf("%s: parsed by %d, %d resets; want 2, 1", name, s.Parsed, s.Resets)
		}
	}
	if s := srcs["a.jsonl"]; s.Lines != 3 || s.Skipped != 1 {
		t.Fatalf("a.jsonl read again counts %d lines, %d skipped; want 3, 1 (not the first read's again)", s.Lines, s.Skipped)
	}
	if s := srcs["b.jsonl"]; s.Parsed != 1 || !s.Missing {
		t.Fatalf("deleted log: %+v", s)
	}

	// Once: a later scan of the same build reads nothing again, and lines
	// appended since are read by the new parser after the others.
	r.append("a.jsonl", line("a", "result"))
	r.onceWith(fakeAgentVersion(2, true))
	if got, want := r.mapOf("a"), fakeMap(map[string][]string{"": {"user-v2", "llm-v2", "result-v2"}, "sa-x": {"call-v2"}}); got != want {
		t.Fatalf("a after an append:\n%s\nwant:\n%s", got, want)
	}
	if s := sourcesByName(t, r)["a.jsonl"]; s.Resets != 1 {
		t.Fatalf("read again twice: %+v", s)
	}

	// A downgrade reads again too: the maps are what the running build
	// makes of the logs.
	r.onceWith(fakeAgentVersion(1, false))
	if got, want := r.mapOf("a"), fakeMap(map[string][]string{"": {"user", "llm", "result"}, "sa-x": {"call"}}); got != want {
		t.Fatalf("a after a downgrade:\n%s\nwant:\n%s", got, want)
	}
}

// A daemon that follows, started by a new build over sessions it would let
// go of on load (quiet, their maps written), reads them again and settles
// with no log left to read again in its status.
func TestFollowingDaemonReadsAgainWhatAnEarlierParserRead(t *testing.T) {
	r := newRig(t)
	r.append("a.jsonl", line("a", "user"), line("a", "llm"))
	r.append("c.jsonl", line("c", "user"))
	// Logs of two hours ago: their sessions are written as soon as read.
	past := time.Now().Add(-2 * time.Hour)
	for _, name := range []string{"a.jsonl", "c.jsonl"} {
		if err := os.Chtimes(filepath.Join(r.proj, name), past, past); err != nil {
			t.Fatal(err)
		}
	}
	r.onceWith(fakeAgentVersion(1, false))

	o := r.opts(false)
	o.Control = true
	o.RetireAfter = time.Nanosecond // every session quiet on load, but for the version
	// The same build lets go of both sessions as it loads them.
	o.Agents = []agents.Agent{fakeAgentVersion(1, false)}
	same := startFollowing(t, r, o)
	same.client()
	same.stop()
	if same.d.retiredOnLoad != 2 {
		t.Fatalf("the same build let go of %d sessions on load, want 2", same.d.retiredOnLoad)
	}
	o.Agents = []agents.Agent{fakeAgentVersion(2, true)}
	f := startFollowing(t, r, o)
	defer f.stop()
	f.waitMap("a", fakeMap(map[string][]string{"": {"user-v2", "llm-v2"}}))
	f.waitMap("c", fakeMap(map[string][]string{"": {"user-v2"}}))
	deadline := time.Now().Add(15 * time.Second)
	for {
		st, err := f.client().Status(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if st.Reread == 0 && len(st.Agents) == 1 && st.Agents[0].Live == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status after the logs were read again: %+v", st)
		}
		time.Sleep(10 * time.Millisecond)
	}
	f.stop()
	if f.d.retiredOnLoad != 0 {
		t.Fatalf("the new build let go of %d sessions on load", f.d.retiredOnLoad)
	}
	for name, s := range sourcesByName(t, r) {
		if s.Parsed != 2 || s.Resets != 1 {
			t.Fatalf("%s: parsed by %d, %d resets after the following daemon; want 2, 1", name, s.Parsed, s.Resets)
		}
	}
}

// status counts, with no daemon running, the logs on disk the next start
// reads again; a deleted one is not counted.
func TestOfflineStatusCountsTheLogsToReadAgain(t *testing.T) {
	r := newRig(t)
	r.append("a.jsonl", line("a", "user"))
	r.append("b.jsonl", line("b", "user"))
	claude, _ := agents.ByName("claude")
	r.onceWith(fakeAgentVersion(claude.Version+1, false))
	os.Remove(filepath.Join(r.proj, "b.jsonl"))
	r.onceWith(fakeAgentVersion(claude.Version+1, false))
	db := openState(t, r)
	defer db.Close()
	st, err := OfflineStatus(db, r.data)
	if err != nil {
		t.Fatal(err)
	}
	if st.Reread != 1 {
		t.Fatalf("offline status counts %d logs to read again, want 1 (the one still on disk)", st.Reread)
	}
}

// status counts the logs to read again that the roots hold: a log under a
// root no longer followed is never visited, and would be counted for ever.
func TestRereadCountsTheLogsTheRootsHold(t *testing.T) {
	r := newRig(t)
	o := r.opts(false)
	o.Agents = []agents.Agent{fakeAgentVersion(2, false)}
	d := New(o)
	followed := &state.Source{ID: 1, Path: filepath.Join(r.proj, "a.jsonl"), Agent: "claude", Form: watchers.FormLines, Parsed: 1}
	elsewhere := &state.Source{ID: 2, Path: filepath.Join(r.home, "old-root", "projects", "-w", "b.jsonl"), Agent: "claude", Form: watchers.FormLines, Parsed: 1}
	current := &state.Source{ID: 3, Path: filepath.Join(r.proj, "c.jsonl"), Agent: "claude", Form: watchers.FormLines, Parsed: 2}
	gone := &state.Source{ID: 4, Path: filepath.Join(r.proj, "d.jsonl"), Agent: "claude", Form: watchers.FormLines, Parsed: 1, Missing: true}
	for _, s := range []*state.Source{followed, elsewhere, current, gone} {
		d.srcs[s.ID] = s
	}
	if n := d.rereadCount(); n != 1 {
		t.Fatalf("%d logs counted to read again, want 1 (the one under a root, read by another version, on disk)", n)
	}
}
