package cursor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/watchers"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/cursor")

// canary marks every text field of the fixtures; it must never come out.
const canary = "CANARY"

func fixture(t testing.TB, name string) string {
	return filepath.Join(moduleRoot(t), "testdata", "cursor", name)
}

func readFixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(fixture(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// golden compares v, as indented JSON, with testdata/cursor/<name>, or
// rewrites it with -update.
func golden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	path := fixture(t, name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file (run with -update after checking the change)\ngot:\n%s", name, got)
	}
}

// noCanary fails when the canary occurs in any of the byte slices.
func noCanary(t *testing.T, what string, b []byte) {
	t.Helper()
	if bytes.Contains(bytes.ToUpper(b), []byte(canary)) {
		i := bytes.Index(bytes.ToUpper(b), []byte(canary))
		lo := max(0, i-60)
		t.Errorf("%s leaks fixture text near %q", what, b[lo:min(len(b), i+40)])
	}
}

const (
	fixtureSession   = "0a1b2c3d-0000-4000-8000-00000000abcd"
	fixtureProject   = "home-dev-code-acme-api"
	fixtureStartMs   = 1772359000000
	fixtureEndMs     = 1772359600000
	fixtureSubagent  = "5ab5ab00-1111-4000-8000-000000000001"
	transcriptErrors = 3 // not JSON, content of the wrong type, a JSON array
)

func transcriptPath(sub bool) string {
	base := "/home/dev/.cursor/projects/" + fixtureProject + "/agent-transcripts/" + fixtureSession
	if sub {
		return base + "/subagents/" + fixtureSubagent + ".jsonl"
	}
	return base + "/" + fixtureSession + ".jsonl"
}

// parseFixture parses a fixture transcript as the daemon would, with the
// file's path and times.
func parseFixture(t *testing.T, name string, sub bool) ([]event.Event, []error, *Parser) {
	t.Helper()
	data := readFixture(t, name)
	path := transcriptPath(sub)
	src, err := Identify(path, data[:bytes.IndexByte(data, '\n')])
	if err != nil {
		t.Fatal(err)
	}
	p := NewParser(src)
	p.SetFile(path, fixtureStartMs, fixtureEndMs)
	var evs []event.Event
	var errs []error
	for _, l := range bytes.Split(data, []byte("\n")) {
		var err error
		evs, err = p.Line(l, evs)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return evs, errs, p
}

func TestTranscriptGolden(t *testing.T) {
	evs, errs, p := parseFixture(t, "transcript.jsonl", false)
	if len(errs) != transcriptErrors {
		t.Errorf("%d line errors, want %d: %v", len(errs), transcriptErrors, errs)
	}
	golden(t, "transcript.golden.json", evs)

	k := kinds(evs)
	want := map[event.Kind]int{event.KindSession: 1, event.KindUser: 2, event.KindLLM: 8,
		event.KindCall: 14, event.KindTurnEnd: 2, event.KindError: 1}
	for kind, n := range want {
		if k[kind] != n {
			t.Errorf("%s: %d events, want %d", kind, k[kind], n)
		}
	}
	s := evs[0].Session
	if s == nil || s.NativeID != fixtureSession || s.AgentTool != "cursor" || s.StartT != fixtureStartMs || s.EndT != fixtureEndMs {
		t.Errorf("session event %+v", evs[0])
	}
	byTool := map[string]event.Call{}
	for _, e := range evs {
		if e.Kind == event.KindCall {
			byTool[e.Call.Tool] = *e.Call
		}
		if e.T != 0 {
			t.Errorf("event with a time: %+v", e)
		}
	}
	checks := []struct{ tool, kind string }{
		{"ReadFile", "read"}, {"Grep", "search"}, {"Glob", "search"}, {"ApplyPatch", "edit"},
		{"Write", "edit"}, {"StrReplace", "edit"}, {"Subagent", "subagent"}, {"WebFetch", "web"},
		{"WebSearch", "web"}, {"TodoWrite", "tool"},
	}
	for _, c := range checks {
		if got := byTool[c.tool].Kind; got != c.kind {
			t.Errorf("%s: kind %q, want %q", c.tool, got, c.kind)
		}
	}
	if byTool["Subagent"].SubagentType != "explore" || byTool["WebSearch"].Host != "search" {
		t.Errorf("subagent %+v, web search %+v", byTool["Subagent"], byTool["WebSearch"])
	}
	// The user turn: the typed query only (not the attached context), one
	// image, one URL.
	for _, e := range evs {
		if e.Kind == event.KindUser {
			if e.User.Chars != len("CANARY-prompt fix the flaky test, see https://github.com/acme/api/tree/main/src") || e.User.Images != 1 {
				t.Errorf("first user turn %+v", e.User)
			}
			break
		}
	}
	if !p.st.Root {
		t.Error("workspace root not recognised from the project folder")
	}
}

func TestSubagentTranscript(t *testing.T) {
	evs, errs, _ := parseFixture(t, "subagent.jsonl", true)
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	golden(t, "subagent.golden.json", evs)
	if evs[0].Kind != event.KindLane || evs[0].Agent != "sa-5ab5ab001111" {
		t.Errorf("first event %+v, want the lane declaration", evs[0])
	}
	for _, e := range evs {
		if e.Kind == event.KindSession {
			t.Error("a subagent file must not restate the parent's session")
		}
		if e.Agent != "sa-5ab5ab001111" {
			t.Errorf("event outside the lane: %+v", e)
		}
	}
}

// TestTranscriptNoLeak: no text of the fixture reaches the events, the
// carry-state or an error message.
func TestTranscriptNoLeak(t *testing.T) {
	for _, f := range []struct {
		name string
		sub  bool
	}{{"transcript.jsonl", false}, {"subagent.jsonl", true}} {
		evs, errs, p := parseFixture(t, f.name, f.sub)
		b, err := json.Marshal(evs)
		if err != nil {
			t.Fatal(err)
		}
		noCanary(t, f.name+" events", b)
		st, err := p.State()
		if err != nil {
			t.Fatal(err)
		}
		noCanary(t, f.name+" state", st)
		for _, e := range errs {
			noCanary(t, f.name+" error", []byte(e.Error()))
		}
	}
}

// TestIncremental: parsing line by line, with the parser rebuilt from its
// carry-state before every line, yields the same events and state as one
// pass.
func TestIncremental(t *testing.T) {
	files := []string{fixture(t, "transcript.jsonl"), fixture(t, "subagent.jsonl")}
	if d := filepath.Join(moduleRoot(t), "..", "shared", "corpus", "cursor"); dirExists(d) {
		more, _ := filepath.Glob(filepath.Join(d, "*.jsonl"))
		files = append(files, more...)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			src := watchersSource(f)
			path := transcriptPath(false)
			whole := NewParser(src)
			whole.SetFile(path, fixtureStartMs, fixtureEndMs)
			var want []event.Event
			lines := bytes.Split(data, []byte("\n"))
			for _, l := range lines {
				want, _ = whole.Line(l, want)
			}
			wantState, _ := whole.State()

			var got []event.Event
			var state []byte
			for i, l := range lines {
				p, err := Restore(src, state)
				if err != nil {
					t.Fatal(err)
				}
				if i == 0 {
					p.SetFile(path, fixtureStartMs, fixtureEndMs)
				}
				got, _ = p.Line(l, got)
				if state, err = p.State(); err != nil {
					t.Fatal(err)
				}
			}
			a, _ := json.Marshal(want)
			b, _ := json.Marshal(got)
			if !bytes.Equal(a, b) {
				t.Errorf("events differ: whole %d, incremental %d", len(want), len(got))
			}
			if !bytes.Equal(wantState, state) {
				t.Errorf("final state differs")
			}
		})
	}
}

func dirExists(d string) bool {
	fi, err := os.Stat(d)
	return err == nil && fi.IsDir()
}

// TestSetFileUpdatesSession: new file times are restated once, on the
// next line.
func TestSetFileUpdatesSession(t *testing.T) {
	p := NewParser(watchersSource("x.jsonl"))
	line := []byte(`{"role":"user","message":{"content":"hi"}}`)
	evs, _ := p.Line(line, nil)
	evs, _ = p.Line(line, evs)
	p.SetFile("", 0, 5000)
	evs, _ = p.Line(line, evs)
	evs, _ = p.Line(line, evs)
	var sessions []event.Session
	for _, e := range evs {
		if e.Kind == event.KindSession {
			sessions = append(sessions, *e.Session)
		}
	}
	if len(sessions) != 2 || sessions[0].EndT != 0 || sessions[1].EndT != 5000 {
		t.Errorf("sessions %+v", sessions)
	}
}

// createDB makes an SQLite database at path with the given schema and
// rows, through a separate read-write connection (as Cursor would).
func createDB(t testing.TB, path string, schema []string, rows func(*sql.DB)) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range schema {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	rows(db)
}

var vscdbSchema = []string{
	"CREATE TABLE ItemTable (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)",
	"CREATE TABLE cursorDiskKV (key TEXT UNIQUE ON CONFLICT REPLACE, value BLOB)",
}

// makeVSCDB writes testdata/cursor/vscdb.json into a state.vscdb in dir.
// A JSON null becomes a NULL value; a JSON string is stored as its text
// (a row that is not JSON); anything else as its JSON.
func makeVSCDB(t testing.TB, dir string) string {
	var fx map[string]map[string]json.RawMessage
	if err := json.Unmarshal(readFixture(t, "vscdb.json"), &fx); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "state.vscdb")
	createDB(t, path, vscdbSchema, func(db *sql.DB) {
		for table, rows := range fx {
			for k, v := range rows {
				var val any = []byte(v)
				var s string
				switch {
				case string(v) == "null":
					val = nil
				case json.Unmarshal(v, &s) == nil:
					val = s
				}
				if _, err := db.Exec("INSERT INTO "+table+" (key, value) VALUES (?, ?)", k, val); err != nil {
					t.Fatal(err)
				}
			}
		}
	})
	return path
}

func fileHash(t testing.TB, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}

func TestVSCDBFixture(t *testing.T) {
	dir := t.TempDir()
	path := makeVSCDB(t, dir)
	before := fileHash(t, path)
	if !IsVSCDB(path) || IsStoreDB(path) {
		t.Fatal("auto-detection failed")
	}
	convs, err := ReadVSCDB(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if after := fileHash(t, path); after != before {
		t.Error("reading changed the database file")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("reading left files beside the database: %d entries", len(ents))
	}
	golden(t, "vscdb.golden.json", convs)
	b, _ := json.Marshal(convs)
	noCanary(t, "vscdb conversations", b)

	ids := map[string]Conversation{}
	for _, c := range convs {
		checkConversation(t, c)
		ids[c.NativeID] = c
	}
	// main, subagent, inline (global); inline workspace composer; chat tab.
	if len(convs) != 5 {
		t.Errorf("%d conversations, want 5", len(convs))
	}
	sub := ids["c0ffee00-0000-4000-8000-000000000002"]
	if len(sub.Events) == 0 || sub.Events[0].Session.Role != "subagent" ||
		sub.Events[0].Session.ParentNativeID != "c0ffee00-0000-4000-8000-000000000001" {
		t.Errorf("subagent composer %+v", sub.Events)
	}
	main := ids["c0ffee00-0000-4000-8000-000000000001"]
	checkMainComposer(t, main)
	aborted := ids["c0ffee00-0000-4000-8000-000000000004"].Events
	if n := len(aborted); n == 0 || aborted[n-1].Kind != event.KindError || aborted[n-1].Error.Class != "interrupted" {
		t.Errorf("aborted composer does not end interrupted: %+v", aborted)
	}
}

// checkMainComposer pins the per-bubble rules on the fixture's main
// composer.
func checkMainComposer(t *testing.T, c Conversation) {
	t.Helper()
	results := map[string]event.Result{}
	calls := map[string]event.Call{}
	var llms []event.Event
	var users []event.User
	var models []string
	for _, e := range c.Events {
		switch e.Kind {
		case event.KindResult:
			results[e.Result.CallID] = *e.Result
		case event.KindCall:
			calls[e.Call.ID] = *e.Call
		case event.KindLLM:
			llms = append(llms, e)
		case event.KindUser:
			users = append(users, *e.User)
		case event.KindModel:
			models = append(models, e.Model)
		}
	}
	if c.UpdatedMs != 1772359509000 {
		t.Errorf("UpdatedMs %d", c.UpdatedMs)
	}
	if len(users) != 2 || users[0].Images != 1 || users[1].Images != 2 || users[0].Chars == 0 {
		t.Errorf("users %+v (the stale bubble must not count)", users)
	}
	if strings.Join(models, ",") != "claude-4.5-sonnet,gpt-5" {
		t.Errorf("models %v", models)
	}
	// Responses: [a1 a2 t1 t2] [a3] [t3 … t8] [a4].
	groups := map[string]int{}
	var order []string
	for _, e := range llms {
		if groups[e.LLM.MsgID] == 0 {
			order = append(order, e.LLM.MsgID)
		}
		groups[e.LLM.MsgID]++
	}
	if strings.Join(order, ",") != "a1,a3,t3,a4" || groups["a1"] != 4 || groups["t3"] != 6 {
		t.Errorf("response groups %v %v", order, groups)
	}
	if l := llms[0].LLM; l.LatencyMs != 3500 || !l.Thinking || llms[0].T != 1772359201000 {
		t.Errorf("first response %+v at %d", l, llms[0].T)
	}
	var in, out int64
	for _, e := range llms {
		in += e.LLM.In
		out += e.LLM.Out
	}
	if in != 14400 || out != 1020 {
		t.Errorf("tokens in %d out %d", in, out)
	}
	want := map[string]struct {
		kind, class string
		err         bool
		exit        *int
	}{
		"toolu_01": {kind: "exec"},
		"toolu_02": {kind: "read"},
		"toolu_03": {kind: "edit", err: true},
		"toolu_04": {kind: "exec", err: true, class: "permission_denied"},
		"toolu_06": {kind: "web"},
		"toolu_07": {err: true, class: "exit_code"},
		"toolu_08": {kind: "edit", err: true, class: "interrupted"},
	}
	for id, w := range want {
		r, ok := results[id]
		if !ok {
			t.Errorf("%s: no result", id)
			continue
		}
		if r.Err != w.err || (w.class != "" && r.ErrClass != w.class) || (w.err && r.ErrClass == "") {
			t.Errorf("%s: result %+v, want err %v class %q", id, r, w.err, w.class)
		}
		if w.kind != "" && calls[id].Kind != w.kind {
			t.Errorf("%s: kind %q, want %q", id, calls[id].Kind, w.kind)
		}
	}
	if _, ok := results["toolu_05"]; ok {
		t.Error("a running tool has no result yet")
	}
	hostKnown := redact.Host("https://docs.example.org/") != "" // false while redact is stubbed
	if calls["toolu_05"].SubagentType != "explore" || (hostKnown && calls["toolu_06"].Host != "docs.example.org") {
		t.Errorf("task %+v fetch %+v", calls["toolu_05"], calls["toolu_06"])
	}
	if r := results["toolu_01"]; r.ExitCode == nil || *r.ExitCode != 0 || r.OutBytes == 0 {
		t.Errorf("terminal result %+v", r)
	}
	if r := results["toolu_07"]; r.ExitCode == nil || *r.ExitCode != 1 {
		t.Errorf("failed terminal result %+v", r)
	}
}

// storeFixture is testdata/cursor/storedb.json.
type storeFixture struct {
	Meta      map[string]any    `json:"meta"`
	Workspace string            `json:"workspace"`
	Messages  []json.RawMessage `json:"messages"`
	Stale     []json.RawMessage `json:"stale"`
}

// makeStoreDB builds a cursor-agent store.db: message blobs keyed by their
// SHA-256, a protobuf root listing them (field 1) with the workspace
// (field 9), a blob that is neither, and the hex-encoded meta row.
func makeStoreDB(t testing.TB, dir string) string {
	var fx storeFixture
	if err := json.Unmarshal(readFixture(t, "storedb.json"), &fx); err != nil {
		t.Fatal(err)
	}
	type blob struct {
		id   string
		data []byte
	}
	var blobs []blob
	var root []byte
	add := func(data []byte, listed bool) {
		h := sha256.Sum256(data)
		blobs = append(blobs, blob{hex.EncodeToString(h[:]), data})
		if listed {
			root = append(root, 0x0a, 32)
			root = append(root, h[:]...)
		}
	}
	add(fx.Stale[0], false)
	for _, m := range fx.Messages {
		add(m, true)
	}
	add([]byte{0x0a, 0x03, 0x01, 0x02, 0x03}, false) // another protobuf node
	root = append(root, 0x4a, byte(len(fx.Workspace)))
	root = append(root, fx.Workspace...)
	rh := sha256.Sum256(root)
	rootID := hex.EncodeToString(rh[:])
	blobs = append(blobs, blob{rootID, root})
	fx.Meta["latestRootBlobId"] = rootID
	meta, _ := json.Marshal(fx.Meta)

	chat := filepath.Join(dir, "chats", "0123456789abcdef0123456789abcdef", "c0ffee00-0000-4000-8000-000000000030")
	if err := os.MkdirAll(chat, 0o700); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(chat, "store.db")
	createDB(t, path, []string{
		"CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB)",
		"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)",
	}, func(db *sql.DB) {
		for _, b := range blobs {
			if _, err := db.Exec("INSERT INTO blobs VALUES (?, ?)", b.id, b.data); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := db.Exec("INSERT INTO meta VALUES ('0', ?)", hex.EncodeToString(meta)); err != nil {
			t.Fatal(err)
		}
	})
	return path
}

func TestStoreDBFixture(t *testing.T) {
	path := makeStoreDB(t, t.TempDir())
	before := fileHash(t, path)
	if !IsStoreDB(path) || IsVSCDB(path) {
		t.Fatal("auto-detection failed")
	}
	convs, err := ReadStoreDB(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if fileHash(t, path) != before {
		t.Error("reading changed the database file")
	}
	if len(convs) != 1 {
		t.Fatalf("%d conversations", len(convs))
	}
	// File times vary from run to run: pin them before comparing.
	c := convs[0]
	if c.UpdatedMs == 0 || c.Events[0].Session.EndT != c.UpdatedMs {
		t.Errorf("update time %d, session %+v", c.UpdatedMs, c.Events[0].Session)
	}
	c.UpdatedMs, c.Events[0].Session.EndT = 1, 1
	golden(t, "storedb.golden.json", c)
	b, _ := json.Marshal(c)
	noCanary(t, "store.db conversation", b)

	k := kinds(c.Events)
	if k[event.KindUser] != 1 || k[event.KindLLM] != 2 || k[event.KindCall] != 2 || k[event.KindResult] != 2 {
		t.Errorf("kinds %v (the stale message must be left out)", k)
	}
	for _, e := range c.Events {
		if e.Kind == event.KindResult && e.Result.CallID == "call_1" && !e.Result.Err {
			t.Error("failed tool result not flagged")
		}
		if e.Kind == event.KindUser && (e.User.Images != 1 || e.User.URLs != countURLsWant(t)) {
			t.Errorf("user %+v", e.User)
		}
	}
}

// countURLsWant is what the redact package counts in the fixture's
// prompt (one URL), so that the test follows it while it is stubbed.
func countURLsWant(t *testing.T) int {
	_, urls := promptShape("<user_query>x https://a.example/x</user_query>")
	return urls
}

// TestVSCDBSince: only conversations updated after the given time come
// back, and with the same events as a full read.
func TestVSCDBSince(t *testing.T) {
	path := makeVSCDB(t, t.TempDir())
	all, err := ReadVSCDB(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	const after = 1772359506000 // the subagent composer's update time
	got, err := ReadVSCDBSince(context.Background(), path, after)
	if err != nil {
		t.Fatal(err)
	}
	var want []Conversation
	for _, c := range all {
		if c.UpdatedMs > after {
			want = append(want, c)
		}
	}
	if len(want) != 1 || want[0].NativeID != "c0ffee00-0000-4000-8000-000000000001" {
		t.Fatalf("fixture changed: %d conversations after %d", len(want), after)
	}
	a, _ := json.Marshal(want)
	b, _ := json.Marshal(got)
	if !bytes.Equal(a, b) {
		t.Errorf("ReadVSCDBSince returned %d conversations, want %d", len(got), len(want))
	}
}

// TestGlobalComposerWorkspace: a composer of the global database takes the
// folder of the workspace whose index lists it as its cwd.
func TestGlobalComposerWorkspace(t *testing.T) {
	user := filepath.Join(t.TempDir(), "User")
	global := filepath.Join(user, "globalStorage")
	ws := filepath.Join(user, "workspaceStorage", "0123abcd")
	for _, d := range []string{global, ws} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	path := makeVSCDB(t, global)
	index := `{"allComposers":[{"type":"head","composerId":"c0ffee00-0000-4000-8000-000000000001"}]}`
	createDB(t, filepath.Join(ws, "state.vscdb"), vscdbSchema, func(db *sql.DB) {
		if _, err := db.Exec("INSERT INTO ItemTable VALUES ('composer.composerData', ?)", index); err != nil {
			t.Fatal(err)
		}
	})
	if err := os.WriteFile(filepath.Join(ws, "workspace.json"), []byte(`{"folder":"file:///home/dev/work/other%20ws"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	convs, err := ReadVSCDB(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	repos := map[string][]string{}
	for _, c := range convs {
		for _, e := range c.Events {
			if e.Kind == event.KindRepo {
				repos[c.NativeID] = append(repos[c.NativeID], e.Repo.Name)
			}
		}
	}
	if got := repos["c0ffee00-0000-4000-8000-000000000001"]; len(got) != 1 || got[0] != "other ws" {
		t.Errorf("main composer repos %v, want the workspace folder's", got)
	}
	// The subagent composer is not in the index: its terminal-less cwd
	// stays unknown.
	if got := repos["c0ffee00-0000-4000-8000-000000000002"]; len(got) != 0 {
		t.Errorf("subagent composer repos %v", got)
	}
}

// TestDaemonEquivalence: the map of a transcript read in chunks, with the
// parser restored from its carry-state between chunks and the file's end
// time growing as the daemon would see it, is byte-identical to the map
// of one pass over the complete file (with its subagent lane).
func TestDaemonEquivalence(t *testing.T) {
	main := bytes.Split(readFixture(t, "transcript.jsonl"), []byte("\n"))
	sub := bytes.Split(readFixture(t, "subagent.jsonl"), []byte("\n"))
	mainPath, subPath := transcriptPath(false), transcriptPath(true)
	srcMain, _ := Identify(mainPath, nil)
	srcSub, _ := Identify(subPath, nil)

	whole := func(src watchers.Source, path string, lines [][]byte) []event.Event {
		p := NewParser(src)
		p.SetFile(path, fixtureStartMs, fixtureEndMs)
		var evs []event.Event
		for _, l := range lines {
			evs, _ = p.Line(l, evs)
		}
		return evs
	}
	chunked := func(src watchers.Source, path string, lines [][]byte) []event.Event {
		var evs []event.Event
		var state []byte
		for i := 0; i < len(lines); i += 4 {
			p, err := Restore(src, state)
			if err != nil {
				t.Fatal(err)
			}
			end := fixtureStartMs + int64(i)*1000
			if i+4 >= len(lines) {
				end = fixtureEndMs
			}
			p.SetFile(path, fixtureStartMs, end)
			for _, l := range lines[i:min(i+4, len(lines))] {
				evs, _ = p.Line(l, evs)
			}
			state, _ = p.State()
		}
		return evs
	}
	build := func(evs []event.Event) []byte {
		m, err := builder.Build(evs, builder.Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := m.Canonical()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a := build(append(whole(srcMain, mainPath, main), whole(srcSub, subPath, sub)...))
	b := build(append(chunked(srcSub, subPath, sub), chunked(srcMain, mainPath, main)...))
	if !bytes.Equal(a, b) {
		t.Errorf("maps differ:\n%s\n%s", a, b)
	}
	noCanary(t, "map", a)
	if os.Getenv("CURSOR_SHOW_MAP") != "" {
		t.Logf("%s", a)
	}
	if !bytes.Contains(a, []byte(`"startedAt":"2026-03-01T`)) {
		t.Errorf("map without the file's start time: %.300s", a)
	}
}
