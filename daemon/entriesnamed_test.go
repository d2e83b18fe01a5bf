package daemon

import (
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/state"
	"github.com/agentmap/agentmap/state/mapstore"
)

// EntriesNamed gives, for every id typed, exactly the entries of the whole
// listing that the id names, in the same order: show and flush pick among
// them as they would among every entry.
func TestEntriesNamedIsTheListingNarrowed(t *testing.T) {
	dir := t.TempDir()
	db, err := state.Open(filepath.Join(dir, "state.db"), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	store := mapstore.New(filepath.Join(dir, "maps"))
	writeMap := func(rel, id, tool string) {
		t.Helper()
		t0 := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC).UnixMilli()
		m, err := builder.Build([]event.Event{
			{Kind: event.KindSession, T: t0, Session: &event.Session{NativeID: id, AgentTool: tool, Role: "root"}},
			{Kind: event.KindLLM, T: t0 + 100, Model: "claude-sonnet-4-5", LLM: &event.LLM{In: 5, Out: 7, Stop: "end_turn"}},
		}, builder.Options{Producer: "agentmap test"})
		if err != nil {
			t.Fatal(err)
		}
		gz, err := m.Gzip()
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(store.Root, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o700)
		if err := os.WriteFile(p, gz, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	records := []struct{ key, file, start string }{
		{"claude/abc1", "abc1", "2026-05-01T10:00:00Z"},
		{"codex/abc1", "abc1", "2026-05-02T10:00:00Z"}, // one id, two agents
		{"claude/abc2", "abc2", "2026-05-03T10:00:00Z"},
		{"codex/abc3", "abc3", "2026-05-01T10:00:00Z"},
		{"claude/xyz", "abc4", "2026-05-04T10:00:00Z"}, // a copied log: its key and its map's id differ
		{"claude/q<1", "q<1", "2026-05-05T10:00:00Z"},  // an id JSON writes escaped
		{"claude/old", "old", ""},                      // a record older than the summary's start: its map is read
		{"claude/gone", "gone", ""},                    // … and one whose map is gone
		{"claude/repo", "zz9", "2026-05-06T10:00:00Z"}, // names another id in its repos
	}
	var sessions []*state.Session
	for i, r := range records {
		agent, _, _ := strings.Cut(r.key, "/")
		rel := agent + "/2026/05/" + r.file + ".json.gz"
		s := &state.Session{Key: r.key, Agent: agent, Gen: 1,
			Flush: &state.Flush{Path: rel, Gen: 1, AtMs: int64(i), Sum: state.Summary{StartedAt: r.start, Calls: i}}}
		if r.key == "claude/repo" {
			s.Flush.Sum.Repos = []string{"abc1-tools"}
		}
		sessions = append(sessions, s)
		if r.key != "claude/gone" {
			writeMap(rel, r.file, map[string]string{"claude": "claude-code", "codex": "codex"}[agent])
		}
	}
	if err := db.PutSessions(sessions...); err != nil {
		t.Fatal(err)
	}
	writeMap("codex/2026/03/abc5.json.gz", "abc5", "codex") // no record names it
	writeMap("claude/2026/03/xyz9.json.gz", "xyz9", "claude-code")

	all, err := Entries(db, store)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 10 { // the nine records but the one whose map is gone, and the two maps no record names
		t.Fatalf("the whole listing has %d entries, want 10: %+v", len(all), all)
	}
	for _, n := range []Named{
		{"abc1", "abc1"}, {"abc", "abc"}, {"a", "a"}, {"abc4", "abc4"}, {"xyz", "xyz"}, {"abc5", "abc5"},
		{"claude/abc", "claude/abc"}, {"claude/", "claude/"}, {"codex/abc1", "codex/abc1"}, {"claude/xyz", "claude/xyz"},
		{"claude-code/abc", "claude/abc"}, {"codex/abc5", "codex/abc5"}, {"q<", "q<"}, {"q<1", "q<1"},
		{"old", "old"}, {"gone", "gone"}, {"zz", "zz"}, {"c", "c"}, {"nothing", "nothing"}, {"", ""},
	} {
		var want []Entry
		for _, e := range all {
			if n.Matches(e) {
				want = append(want, e)
			}
		}
		got, err := EntriesNamed(db, store, n)
		if err != nil {
			t.Fatal(err)
		}
		if len(got)+len(want) > 0 && !reflect.DeepEqual(got, want) {
			t.Errorf("%+v: got\n%+v\nwant\n%+v", n, got, want)
		}
	}
}

// The records an id cannot name are passed over undecoded.
func TestNamedPassesOverRecords(t *testing.T) {
	stored := []byte(`{"flush":{"path":"claude/2026/05/abc4.json.gz"}}`)
	for _, c := range []struct {
		n    Named
		key  string
		want bool
	}{
		{Named{"abc", "abc"}, "claude/xyz", true},
		{Named{"abd", "abd"}, "claude/xyz", false},
		{Named{"claude/xy", "claude/xy"}, "claude/xyz", true},
		{Named{"codex/xy", "codex/xy"}, "claude/xyz", false},
		{Named{"claude-code/abc4", "claude/abc4"}, "claude/xyz", true}, // its map's name is the id after the agent
		{Named{"a<", "a<"}, "claude/xyz", false},                       // a map file spells it a%3C, which this path does not hold
		{Named{"aé", "aé"}, "claude/xyz", true},                        // not ASCII: looked at whole
	} {
		if got := c.n.mayBe([]byte(c.key), stored); got != c.want {
			t.Errorf("%+v on %s: %v, want %v", c.n, c.key, got, c.want)
		}
	}
}
