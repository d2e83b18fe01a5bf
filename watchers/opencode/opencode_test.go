package opencode

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers"
)

// recorded are the stores the real OpenCode 1.18.33 wrote against the
// project's scripted model server (the e2e suite and its first runs).
func recorded(t testing.TB) []string {
	t.Helper()
	dbs, _ := filepath.Glob(filepath.Join("testdata", "*.db"))
	if len(dbs) == 0 {
		t.Fatal("no recorded OpenCode stores in testdata")
	}
	return dbs
}

// TestRecordedStores reads the stores OpenCode wrote: every root session
// is a map, every child session a lane of it with its launching call, and
// the tokens of each lane equal the session's own totals as OpenCode keeps
// them in its session row.
func TestRecordedStores(t *testing.T) {
	ctx := context.Background()
	for _, db := range recorded(t) {
		if !IsDB(db) {
			t.Fatalf("%s: not recognised as an OpenCode store", db)
		}
		convs, err := ReadDB(ctx, db)
		if err != nil {
			t.Fatalf("%s: %v", db, err)
		}
		own, err := SessionTokens(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		if len(convs) == 0 {
			t.Fatalf("%s: no session", db)
		}
		lanes := 0
		for _, c := range convs {
			byLane := map[string]int64{}
			launched := map[string]string{}
			var calls, results int
			for _, e := range c.Events {
				switch e.Kind {
				case event.KindLLM:
					byLane[e.Agent] += e.LLM.Usage()
				case event.KindCall:
					calls++
				case event.KindResult:
					results++
				case event.KindLane:
					launched[e.Agent] = e.Lane.LaunchCallID
				}
			}
			if calls == 0 || results != calls {
				t.Errorf("%s %s: %d calls, %d results", db, c.NativeID, calls, results)
			}
			if byLane[""] != own[c.NativeID] {
				t.Errorf("%s %s: main lane %d tokens, OpenCode counts %d", db, c.NativeID, byLane[""], own[c.NativeID])
			}
			for id, n := range own {
				if lane := watchers.LaneID(id); byLane[lane] != 0 || launched[lane] != "" {
					lanes++
					if byLane[lane] != n {
						t.Errorf("%s: lane %s: %d tokens, OpenCode counts %d for its session", db, lane, byLane[lane], n)
					}
					if launched[lane] == "" {
						t.Errorf("%s: lane %s has no launching call", db, lane)
					}
				}
			}
			m, err := builder.Build(c.Events, builder.Options{})
			if err != nil {
				t.Fatalf("%s %s: build: %v", db, c.NativeID, err)
			}
			if _, err := m.Canonical(); err != nil {
				t.Fatal(err)
			}
		}
		if lanes == 0 {
			t.Errorf("%s: no child session became a lane", db)
		}
	}
}

// TestToolKinds checks the map kinds of what the recorded sessions did.
func TestToolKinds(t *testing.T) {
	convs, err := ReadDB(context.Background(), filepath.Join("testdata", "opencode-1.18.33-e2e.db"))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	var exits []int
	for _, c := range convs {
		for _, e := range c.Events {
			if e.Kind == event.KindCall {
				kinds[e.Call.Tool+":"+e.Call.Kind]++
			}
			if e.Kind == event.KindResult && e.Result.Err && e.Result.ExitCode != nil {
				exits = append(exits, *e.Result.ExitCode)
			}
		}
	}
	want := map[string]int{"read:read": 2, "bash:verify": 2, "bash:exec": 2, "write:edit": 1, "edit:edit": 1, "task:subagent": 1}
	for k, n := range want {
		if kinds[k] != n {
			t.Errorf("%s: %d calls, want %d (all: %v)", k, kinds[k], n, kinds)
		}
	}
	if len(exits) != 2 {
		t.Errorf("failed commands' exit codes %v, want the failing npm test and ls", exits)
	}
}

const canary = "CANARY"

// TestLeak puts a canary into every text-bearing field of a recorded store
// (prompts, replies, reasoning, titles, tool inputs and outputs, errors,
// summaries) and checks that none reaches the events or an error.
func TestLeak(t *testing.T) {
	dst := filepath.Join(t.TempDir(), "opencode.db")
	raw, err := os.ReadFile(filepath.Join("testdata", "opencode-1.18.33-e2e.db"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(dst, raw, 0o600)
	db, err := sql.Open("sqlite", "file:"+dst)
	if err != nil {
		t.Fatal(err)
	}
	c := `'` + canary + ` http://canary.example/` + canary + `'`
	for _, q := range []string{
		`UPDATE session SET title = ` + c + `, slug = ` + c + `, summary_diffs = ` + c,
		`UPDATE part SET data = json_set(data, '$.text', ` + c + `) WHERE json_extract(data, '$.type') IN ('text', 'reasoning')`,
		`UPDATE part SET data = json_set(data, '$.state.input.command', 'echo ' || ` + c + `,
			'$.state.input.description', ` + c + `, '$.state.input.prompt', ` + c + `,
			'$.state.input.content', ` + c + `, '$.state.input.oldString', ` + c + `, '$.state.input.newString', ` + c + `,
			'$.state.output', ` + c + `, '$.state.title', ` + c + `, '$.state.metadata.output', ` + c + `,
			'$.state.metadata.preview', ` + c + `) WHERE json_extract(data, '$.type') = 'tool'`,
		`UPDATE part SET data = json_set(data, '$.state.status', 'error', '$.state.error', ` + c + `)
			WHERE json_extract(data, '$.tool') = 'read'`,
		`UPDATE message SET data = json_set(data, '$.error', json_object('name', 'APIError', 'data',
			json_object('message', ` + c + `, 'statusCode', 429)), '$.summary', json_object('title', ` + c + `))`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()
	convs, err := ReadDB(context.Background(), dst)
	if err != nil {
		if strings.Contains(err.Error(), canary) {
			t.Errorf("error leaks: %v", err)
		}
		t.Fatal(err)
	}
	kinds := map[event.Kind]int{}
	for _, c := range convs {
		b, _ := json.Marshal(c.Events)
		if bytes.Contains(b, []byte(canary)) || bytes.Contains(b, []byte("canary.example")) {
			t.Errorf("%s: events leak the canary: %s", c.NativeID, b)
		}
		for _, e := range c.Events {
			kinds[e.Kind]++
			if e.Kind == event.KindUser && e.User.URLs == 0 {
				t.Errorf("a prompt's URL was not counted")
			}
		}
	}
	for _, k := range []event.Kind{event.KindUser, event.KindLLM, event.KindCall, event.KindResult, event.KindError, event.KindLane} {
		if kinds[k] == 0 {
			t.Errorf("no %s event: the leak test exercises too little", k)
		}
	}
}

// FuzzParse feeds arbitrary message and part JSON through the conversion:
// no input may fault it.
func FuzzParse(f *testing.F) {
	f.Add([]byte(`{"role":"assistant","time":{"created":1,"completed":2},"modelID":"m","tokens":{"input":1}}`),
		[]byte(`{"type":"tool","tool":"bash","callID":"c","state":{"status":"completed","input":{"command":"ls"},"metadata":{"exit":2}}}`))
	f.Add([]byte(`{"role":"user"}`), []byte(`{"type":"text","text":"x"}`))
	f.Add([]byte(`{"role":"assistant","error":{"name":"MessageAbortedError"}}`), []byte(`{"type":"step-finish","tokens":null}`))
	f.Add([]byte(`{"role":"assistant"}`), []byte(`{"type":"tool","tool":"task","state":{"status":"error","metadata":{"sessionId":"s"}}}`))
	f.Fuzz(func(t *testing.T, msg, part []byte) {
		sessions := []*sessionRec{{ID: "s"}, {ID: "c", Parent: "s"}, {ID: "x", Parent: "x"}}
		msgs := map[string][]messageRec{
			"s": {{ID: "m1", Data: msg, Parts: [][]byte{part, part}}, {ID: "m2", Data: msg, Parts: [][]byte{part}}},
			"c": {{ID: "m3", Data: msg, Parts: [][]byte{part}}},
		}
		convs := convert(sessions, msgs)
		for _, c := range convs {
			for _, e := range c.Events {
				if e.Kind == "" {
					t.Fatal("event without kind")
				}
			}
			if _, err := builder.Build(c.Events, builder.Options{}); err != nil {
				t.Fatalf("build: %v", err)
			}
		}
	})
}
