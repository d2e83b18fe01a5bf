package opencode

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/internal/agenttest"
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
	if len(convs) != 1 {
		t.Fatalf("%d sessions, want the suite's one", len(convs))
	}
	kinds, exits := agenttest.CallKinds(convs[0].Events)
	want := map[string]int{"read:read": 2, "bash:verify": 2, "bash:exec": 2, "write:edit": 1, "edit:edit": 1, "task:subagent": 1,
		"e2e_lookup:mcp": 1, "e2e_broken:mcp": 1, "skill:skill": 1}
	if !maps.Equal(kinds, want) {
		t.Errorf("calls by tool and kind %v, want %v", kinds, want)
	}
	if fmt.Sprint(exits) != "[1 2]" {
		t.Errorf("failed commands' exit codes %v, want the failing npm test (1) and ls (2)", exits)
	}
	// The MCP calls of the suite's server "e2e": lookup works, broken fails.
	m, err := builder.Build(convs[0].Events, builder.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var mcp []string
	for _, e := range m.Events {
		if e.Kind == "mcp" {
			mcp = append(mcp, fmt.Sprintf("%s/%s err=%v", e.Server, e.Tool, e.Err))
		}
	}
	if got := fmt.Sprint(mcp); got != "[e2e/lookup err=false e2e/broken err=true]" || m.Totals.ErrorsBySource.MCP != 1 {
		t.Errorf("MCP calls %s, %d failed", got, m.Totals.ErrorsBySource.MCP)
	}
	for _, e := range m.Events {
		if e.Kind == "skill" && (e.Skill != "e2e-check" || e.Err) {
			t.Errorf("skill event %+v, want the suite's e2e-check, loaded", e)
		}
	}
}

// canary marks spoiled text. It is not "canary": the recorded sessions
// read a file named zqcanary-missing.txt, a path the map rightly shows.
const canary = "LEAKMARK"

// keep are the keys of message and part data whose values a map may show
// or the conversion needs as they are: ids, roles, types, statuses and
// other enums, models, tool, agent and skill names, and paths. Every other
// string gets the canary.
var keep = map[string]bool{
	"id": true, "sessionID": true, "messageID": true, "parentID": true, "callID": true, "sessionId": true,
	"parentSessionId": true, "type": true, "role": true, "status": true, "finish": true, "reason": true,
	"mode": true, "agent": true, "modelID": true, "providerID": true, "tool": true, "name": true,
	"subagent_type": true, "mime": true, "snapshot": true, "hash": true,
	"cwd": true, "root": true, "filePath": true, "filepath": true, "path": true, "file": true, "files": true,
}

// keepColumns are the text columns of the session table that are not
// text: ids, the working directory and OpenCode's version.
var keepColumns = map[string]bool{"id": true, "project_id": true, "workspace_id": true, "parent_id": true,
	"directory": true, "version": true}

// TestLeak puts a canary into every string of every message and part of
// the recorded stores but for the keys in keep, and into every text
// column of their sessions (titles, slugs, summaries, share URLs, …), and
// checks that none reaches the events or an error.
func TestLeak(t *testing.T) {
	kinds := map[event.Kind]int{}
	for _, src := range recorded(t) {
		dst := filepath.Join(t.TempDir(), "opencode.db")
		raw, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(dst, raw, 0o600)
		spoilStore(t, dst)
		convs, err := ReadDB(context.Background(), dst)
		if err != nil {
			if agenttest.Holds([]byte(err.Error()), canary) {
				t.Errorf("error leaks: %v", err)
			}
			t.Fatal(err)
		}
		if len(convs) == 0 {
			t.Fatalf("%s: no session in the spoiled store", src)
		}
		for _, c := range convs {
			b, _ := json.Marshal(c.Events)
			if agenttest.Holds(b, canary) {
				t.Errorf("%s %s: events leak the canary: %s", src, c.NativeID, b)
			}
			for _, e := range c.Events {
				kinds[e.Kind]++
				if e.Kind == event.KindUser && e.User.URLs == 0 {
					t.Errorf("a prompt's URL was not counted")
				}
			}
		}
	}
	for _, k := range []event.Kind{event.KindUser, event.KindLLM, event.KindCall, event.KindResult, event.KindError, event.KindLane} {
		if kinds[k] == 0 {
			t.Errorf("no %s event: the leak test exercises too little", k)
		}
	}
}

// spoilStore spoils a copy of a store in place (see TestLeak), and makes
// the reads fail and the requests error so that error texts are read too.
func spoilStore(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, table := range []string{"message", "part"} {
		rows, err := db.Query("SELECT id, data FROM " + table)
		if err != nil {
			t.Fatal(err)
		}
		spoiled := map[string][]byte{}
		for rows.Next() {
			var id string
			var data []byte
			if err := rows.Scan(&id, &data); err != nil {
				t.Fatal(err)
			}
			spoiled[id] = agenttest.SpoilJSON(data, keep, canary)
		}
		rows.Close()
		for id, data := range spoiled {
			if _, err := db.Exec("UPDATE "+table+" SET data = ? WHERE id = ?", string(data), id); err != nil {
				t.Fatal(err)
			}
		}
	}
	cols, err := db.Query("SELECT name FROM pragma_table_info('session') WHERE lower(type) = 'text'")
	if err != nil {
		t.Fatal(err)
	}
	var text []string
	for cols.Next() {
		var name string
		cols.Scan(&name)
		if !keepColumns[name] {
			text = append(text, name)
		}
	}
	cols.Close()
	if len(text) < 5 {
		t.Fatalf("session text columns %v: the store's schema is not the one recorded", text)
	}
	mark := agenttest.Mark(canary)
	for _, c := range text {
		if _, err := db.Exec("UPDATE session SET `"+c+"` = coalesce(`"+c+"`, '') || ?", mark); err != nil {
			t.Fatal(err)
		}
	}
	c := `'` + canary + ` http://canary.example/` + canary + `'`
	for _, q := range []string{
		`UPDATE part SET data = json_set(data, '$.state.status', 'error', '$.state.error', ` + c + `)
			WHERE json_extract(data, '$.tool') = 'read'`,
		`UPDATE message SET data = json_set(data, '$.error', json_object('name', 'APIError', 'data',
			json_object('message', ` + c + `, 'statusCode', 429)))`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
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
			if _, err := builder.Build(c.Events, builder.Options{}); err != nil && !errors.Is(err, builder.ErrEmptySession) {
				t.Fatalf("build: %v", err)
			}
		}
	})
}

// TestForkCountsOnlyItsOwnRequests reads a store the real OpenCode 1.18.33
// wrote for a prompt, a second one in the same session, and a third in a
// fork of it (run --session ID --fork) against a scripted model server
// that answered 2000, 3000 and 4000 input tokens: the fork begins with a
// copy of its parent's messages, which stay the parent's. Each request
// counts once: the parent's map holds the first two, the fork's the third
// alone, and the fork starts when it was made, not with the copies.
func TestForkCountsOnlyItsOwnRequests(t *testing.T) {
	db := filepath.Join("testdata", "fork", "opencode-1.18.33-fork.db")
	convs, err := ReadDB(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if len(convs) != 2 {
		t.Fatalf("%d conversations, want the session and its fork", len(convs))
	}
	type seen struct {
		requests, turns int
		input           int64
		start, first    int64
	}
	got := map[string]seen{}
	for _, c := range convs {
		var s seen
		for _, e := range c.Events {
			switch e.Kind {
			case event.KindSession:
				s.start = e.T
			case event.KindLLM:
				s.requests++
				s.input += e.LLM.In + e.LLM.CR + e.LLM.CW
			case event.KindUser:
				s.turns++
				if s.first == 0 {
					s.first = e.T
				}
			}
		}
		got[c.Events[0].Session.NativeID] = s
	}
	parent, fork := got["ses_db03d94fcffeEkuumda84LsdFO"], got["ses_db03d72e7ffeHTUaCDt9oSbXPu"]
	if parent.requests != 2 || parent.input != 5000 || parent.turns != 2 {
		t.Errorf("the parent: %+v, want 2 requests of 5000 input tokens in 2 turns", parent)
	}
	if fork.requests != 1 || fork.input != 4000 || fork.turns != 1 || fork.first < fork.start {
		t.Errorf("the fork: %+v, want its own request alone (4000 input tokens), in 1 turn after its start", fork)
	}
}

// A session all of whose messages are older than itself (imported from
// elsewhere with a new creation time) is read whole: only a session with
// messages of its own as well is a fork whose older messages are copies.
func TestSessionOfOlderMessagesAloneIsReadWhole(t *testing.T) {
	s := &sessionRec{ID: "ses_imported", Dir: t.TempDir()}
	s.Time.Created = 5000
	user := func(id string, at int64) messageRec {
		return messageRec{ID: id, Created: at, Data: []byte(fmt.Sprintf(`{"role":"user","time":{"created":%d}}`, at)),
			Parts: [][]byte{[]byte(`{"type":"text","text":"x"}`)}}
	}
	msgs := map[string][]messageRec{s.ID: {user("msg_1", 1000), user("msg_2", 2000)}}
	turns := func() int {
		n := 0
		for _, e := range convert([]*sessionRec{s}, msgs)[0].Events {
			if e.Kind == event.KindUser {
				n++
			}
		}
		return n
	}
	if got := turns(); got != 2 {
		t.Errorf("a session of older messages alone: %d user turns, want 2", got)
	}
	msgs[s.ID] = append(msgs[s.ID], user("msg_3", 6000))
	if got := turns(); got != 1 {
		t.Errorf("a fork with a message of its own: %d user turns, want its own 1", got)
	}
}
