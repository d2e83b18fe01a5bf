package claude

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers"
)

func TestIdentify(t *testing.T) {
	const sid = "0a1b2c3d-0000-4000-8000-000000000001"
	const other = "9f9f9f9f-0000-4000-8000-000000000009"
	main := `{"type":"user","sessionId":"` + other + `"}`
	side := `{"type":"user","isSidechain":true,"agentId":"a1b2c3d","sessionId":"` + sid + `"}`
	snap := `{"type":"file-history-snapshot","messageId":"m"}`
	tests := []struct {
		name, path, first string
		want              watchers.Source
		wantErr           bool
	}{
		{"uuid stem", "/p/-home-dev/" + sid + ".jsonl", main, watchers.Source{Agent: "claude", Session: sid}, false},
		{"uuid stem, no first line", "/p/-home-dev/" + sid + ".jsonl", "", watchers.Source{Agent: "claude", Session: sid}, false},
		{"other stem, id in line", "/p/x/session.jsonl", main, watchers.Source{Agent: "claude", Session: other}, false},
		{"other stem, no id in line", "/p/x/day1-notes.jsonl", snap, watchers.Source{Agent: "claude", Session: "day1-notes"}, false},
		{"archived copy", "/c/proj__" + sid + ".jsonl", snap, watchers.Source{Agent: "claude", Session: sid}, false},
		{"nested subagent", "/p/x/" + sid + "/subagents/agent-a396f02b61f8d3bbf.jsonl", "", watchers.Source{Agent: "claude", Session: sid, Lane: "sa-a396f02b61f8d3bbf"}, false},
		{"deeper subagent", "/p/x/" + sid + "/subagents/w/agent-a1.jsonl", "", watchers.Source{Agent: "claude", Session: sid, Lane: "sa-a1"}, false},
		{"line agent id wins", "/p/x/" + sid + "/subagents/agent-a1.jsonl", side, watchers.Source{Agent: "claude", Session: sid, Lane: "sa-a1b2c3d"}, false},
		{"flat subagent", "/p/x/agent-a1b2c3d.jsonl", side, watchers.Source{Agent: "claude", Session: sid, Lane: "sa-a1b2c3d"}, false},
		{"flat subagent without line", "/p/x/agent-a1b2c3d.jsonl", "", watchers.Source{}, true},
		{"archived subagent", "/c/proj__" + other + "__subagents__agent-zzz.jsonl", side, watchers.Source{Agent: "claude", Session: sid, Lane: "sa-a1b2c3d"}, false},
		{"compaction", "/p/x/" + sid + "/subagents/agent-acompact-946d2b.jsonl", "", watchers.Source{Agent: "claude", Session: sid}, false},
		{"name starting with agent-", "/c/agent-tail__02a4-0__full.jsonl", main, watchers.Source{Agent: "claude", Session: other}, false},
		{"journal beside subagents", "/p/x/" + sid + "/subagents/journal.jsonl", "", watchers.Source{}, true},
		{"garbage first line", "/p/x/" + sid + ".jsonl", "\x00\x01", watchers.Source{Agent: "claude", Session: sid}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Identify(tt.path, []byte(tt.first))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if !tt.wantErr && got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestLooksLike(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		{`{"type":"user","sessionId":"x","message":{"role":"user","content":"hi"}}`, true},
		{`{"type":"file-history-snapshot","messageId":"m","snapshot":{}}`, true},
		{`{"type":"summary","summary":"t","leafUuid":"u"}`, true},
		{`{"type":"queue-operation","operation":"enqueue"}`, true},
		{`{"timestamp":"2026-01-01T00:00:00Z","type":"session_meta","payload":{"id":"x"}}`, false},
		{`{"timestamp":"2026-01-01T00:00:00Z","type":"response_item","payload":{}}`, false},
		{`{"role":"user","message":{"content":[]}}`, false},
		{`{"pid":10932,"sessionId":"a8306e90-e282-4caa-b7de-5af564dabb60","cwd":"e:\\x"}`, false},
		{`not json`, false},
		{``, false},
		// A type that is not a string refuses the line, as encoding/json
		// does, even when a repeated key the walk leaves to it follows.
		{`{"type":5,"type":"user"}`, false},
		{`{"type":5,"Type":"user"}`, false},
		{`{"type":"user","type":"user"}`, true},
	}
	for _, tt := range tests {
		if got := LooksLike([]byte(tt.line)); got != tt.want {
			t.Errorf("LooksLike(%s) = %v, want %v", tt.line, got, tt.want)
		}
	}
}

func TestReadMeta(t *testing.T) {
	dir := t.TempDir()
	jsonl := filepath.Join(dir, "agent-a1.jsonl")
	if _, ok := ReadMeta(jsonl); ok {
		t.Error("meta found where there is none")
	}
	meta := `{"agentType":"Explore","toolUseId":"toolu_01X","model":"claude-haiku-4-5","description":"secret words","spawnDepth":1}`
	if err := os.WriteFile(filepath.Join(dir, "agent-a1.meta.json"), []byte(meta), 0o600); err != nil {
		t.Fatal(err)
	}
	typ, ok := ReadMeta(jsonl)
	if !ok || typ != "Explore" {
		t.Errorf("ReadMeta = %q, %v", typ, ok)
	}
	m, ok := ReadLaneMeta(filepath.Join(dir, "agent-a1.meta.json"))
	if !ok || m != (LaneMeta{SubagentType: "Explore", LaunchCallID: "toolu_01X", Model: "claude-haiku-4-5"}) {
		t.Errorf("ReadLaneMeta = %+v, %v", m, ok)
	}
	if err := os.WriteFile(filepath.Join(dir, "agent-a2.meta.json"), []byte(`{"agentType":"has spaces in it"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if typ, ok := ReadMeta(filepath.Join(dir, "agent-a2.jsonl")); ok {
		t.Errorf("text accepted as a subagent type: %q", typ)
	}
}

// TestSessionIDMajority: a file not named by its session takes the id of
// most of its lines; a file named by a uuid keeps that uuid.
func TestSessionIDMajority(t *testing.T) {
	line := func(id string) []byte {
		return []byte(`{"type":"user","sessionId":"` + id + `","message":{"role":"user","content":"x"}}`)
	}
	last := func(src watchers.Source, ids ...string) string {
		p := NewParser(src)
		var out []event.Event
		for _, id := range ids {
			out, _ = p.Line(line(id), out)
		}
		got := ""
		for _, e := range out {
			if e.Kind == event.KindSession {
				got = e.Session.NativeID
			}
		}
		return got
	}
	named := watchers.Source{Agent: Agent, Session: "day2-notes"}
	if got := last(named, "old", "new", "new"); got != "new" {
		t.Errorf("majority: got %q", got)
	}
	if got := last(named, "main", "main", "stray"); got != "main" {
		t.Errorf("stray line: got %q", got)
	}
	uuid := watchers.Source{Agent: Agent, Session: "0a1b2c3d-0000-4000-8000-000000000001"}
	if got := last(uuid, "old", "old"); got != uuid.Session {
		t.Errorf("uuid file name: got %q", got)
	}
}

// Only a subagent lane whose lane record is not out yet wants its sidecar.
func TestNeedsLaneMeta(t *testing.T) {
	if NewParser(watchers.Source{Agent: "claude", Session: "s"}).NeedsLaneMeta() {
		t.Error("a main transcript asks for a sidecar")
	}
	lane := NewParser(watchers.Source{Agent: "claude", Session: "s", Lane: "sa-abc"})
	if !lane.NeedsLaneMeta() {
		t.Error("a fresh subagent parser does not ask for its sidecar")
	}
	lane.st.LaneSent = true
	if lane.NeedsLaneMeta() {
		t.Error("a subagent parser asks for its sidecar after its lane record")
	}
}
