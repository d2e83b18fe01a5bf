package cursor

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
)

// kinds counts events by kind.
func kinds(evs []event.Event) map[event.Kind]int {
	m := map[event.Kind]int{}
	for _, e := range evs {
		m[e.Kind]++
	}
	return m
}

// TestCorpusTranscripts parses every real transcript of the corpus: no line
// fails, the shape is what the file holds, and no text of the file reaches
// the events.
func TestCorpusTranscripts(t *testing.T) {
	dir := corpusDir(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if len(files) == 0 {
		t.Skip("no transcripts in the corpus")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			first := data
			if i := strings.IndexByte(string(data), '\n'); i >= 0 {
				first = data[:i]
			}
			if !LooksLike(first) {
				t.Fatal("LooksLike refused the first line")
			}
			src, err := Identify(f, first)
			if err != nil {
				t.Fatal(err)
			}
			evs, errs, _ := parseAll(t, src, data)
			if errs != 0 {
				t.Errorf("%d lines failed", errs)
			}
			k := kinds(evs)
			t.Logf("%d events: %v", len(evs), k)
			if k[event.KindSession] != 1 || k[event.KindUser] == 0 || k[event.KindLLM] == 0 {
				t.Errorf("want one session, users and responses, got %v", k)
			}
			wantUsers, wantCalls := countTranscript(t, data)
			if k[event.KindUser] != wantUsers || k[event.KindCall] != wantCalls {
				t.Errorf("users %d calls %d, want %d and %d", k[event.KindUser], k[event.KindCall], wantUsers, wantCalls)
			}
			for _, e := range evs {
				if e.T != 0 {
					t.Fatalf("transcript event with a time: a %s event at %d", e.Kind, e.T)
				}
			}
			assertNoText(t, evs, transcriptTexts(t, data))
		})
	}
}

// countTranscript counts user lines and tool_use blocks independently of
// the parser.
func countTranscript(t *testing.T, data []byte) (users, calls int) {
	for _, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var v struct {
			Role    string
			Message struct {
				Content []struct{ Type string }
			}
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatal(err)
		}
		if v.Role == "user" {
			users++
		}
		for _, b := range v.Message.Content {
			if b.Type == "tool_use" {
				calls++
			}
		}
	}
	return users, calls
}

// transcriptTexts collects the free text of a transcript: text blocks and
// the values of tool inputs that are not paths.
func transcriptTexts(t *testing.T, data []byte) []string {
	var out []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.TrimSpace(l) == "" {
			continue
		}
		var v struct {
			Message struct {
				Content []struct {
					Text  string
					Input json.RawMessage
				}
			}
		}
		if err := json.Unmarshal([]byte(l), &v); err != nil {
			t.Fatal(err)
		}
		for _, b := range v.Message.Content {
			out = append(out, b.Text)
			var in map[string]any
			if json.Unmarshal(b.Input, &in) == nil {
				for k, val := range in {
					if s, ok := val.(string); ok && !isPathKey(k) && !identifierKeys[k] {
						out = append(out, s)
					}
				}
			} else {
				var s string
				if json.Unmarshal(b.Input, &s) == nil {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// identifierKeys are input keys whose values a map may keep.
var identifierKeys = map[string]bool{"working_directory": true, "subagent_type": true, "model": true}

func isPathKey(k string) bool {
	for _, p := range pathKeys {
		if p == k {
			return true
		}
	}
	return false
}

// assertNoText fails when any of texts (longer than a short identifier)
// appears in the marshalled events.
func assertNoText(t *testing.T, evs []event.Event, texts []string) {
	t.Helper()
	b, err := json.Marshal(evs)
	if err != nil {
		t.Fatal(err)
	}
	js := string(b)
	n := 0
	for _, s := range texts {
		s = strings.TrimSpace(s)
		if len(s) < 16 {
			continue
		}
		n++
		q, _ := json.Marshal(s)
		inner := string(q[1 : len(q)-1])
		if strings.Contains(js, inner) {
			t.Errorf("text of the log reached the events (%d bytes)", len(s))
		}
	}
	if n == 0 {
		t.Error("no text to check against")
	}
}

// vscdbWant is what each corpus database holds, counted from its rows.
var vscdbWant = map[string]int{
	"CursorSync__globalStorage_state.vscdb":                                   2,
	"xyzprtk-dotfiles__Cursor_User_globalStorage_state.vscdb":                 1,
	"Th7bo-dotconfig__Cursor_User_globalStorage_state.vscdb":                  1,
	"cursor-history__state.vscdb":                                             31, // 26 inline composers + 5 chat tabs
	"Oifunding__state.vscdb":                                                  0,  // headers only
	"chatrxiv__workspaceStorage_10770782bbd95d5ae0035836c987047a_state.vscdb": 0,
	"chatrxiv__workspaceStorage_1742529077861_state.vscdb":                    0,
}

// TestCorpusVSCDB reads every state.vscdb of the corpus.
func TestCorpusVSCDB(t *testing.T) {
	dir := corpusDir(t)
	files, _ := filepath.Glob(filepath.Join(dir, "*.vscdb"))
	if len(files) == 0 {
		t.Skip("no state.vscdb in the corpus")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			if !IsVSCDB(f) || IsStoreDB(f) {
				t.Fatal("auto-detection failed")
			}
			convs, err := ReadVSCDB(context.Background(), f)
			if err != nil {
				t.Fatal(err)
			}
			total := map[event.Kind]int{}
			for _, c := range convs {
				if c.NativeID == "" || len(c.Events) == 0 || c.Events[0].Kind != event.KindSession {
					t.Errorf("conversation without id or session event: %q", c.NativeID)
				}
				checkConversation(t, c)
				for k, n := range kinds(c.Events) {
					total[k] += n
				}
			}
			t.Logf("%d conversations, events %v", len(convs), total)
			if want, ok := vscdbWant[filepath.Base(f)]; ok && len(convs) != want {
				t.Errorf("%d conversations, want %d", len(convs), want)
			}
		})
	}
}

// checkConversation asserts the invariants of one conversation: times
// never go backwards, every result pairs with an earlier call, ids unique.
func checkConversation(t *testing.T, c Conversation) {
	t.Helper()
	var last int64
	calls := map[string]bool{}
	for _, e := range c.Events {
		if e.T < last {
			t.Errorf("%s: time goes backwards", c.NativeID)
			return
		}
		last = e.T
		switch e.Kind {
		case event.KindCall:
			if e.Call.ID != "" && calls[e.Call.ID] {
				t.Errorf("%s: duplicate call id", c.NativeID)
			}
			calls[e.Call.ID] = true
		case event.KindResult:
			if !calls[e.Result.CallID] {
				t.Errorf("%s: result without call", c.NativeID)
			}
		}
	}
}

// TestCorpusCursorSyncShape pins what the 2025 split-storage database
// yields: responses grouped per model request, tool calls with their
// statuses, the tokens Cursor reported.
func TestCorpusCursorSyncShape(t *testing.T) {
	f := filepath.Join(corpusDir(t), "CursorSync__globalStorage_state.vscdb")
	convs, err := ReadVSCDB(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	var calls, errs, results, tokens int64
	tools := map[string]int{}
	for _, c := range convs {
		for _, e := range c.Events {
			switch e.Kind {
			case event.KindCall:
				calls++
				tools[e.Call.Tool+"/"+e.Call.Kind]++
			case event.KindResult:
				results++
				if e.Result.Err {
					errs++
				}
			case event.KindLLM:
				tokens += e.LLM.In + e.LLM.Out
			}
		}
	}
	t.Logf("calls %d results %d errors %d tokens %d tools %v", calls, results, errs, tokens, tools)
	// 29 tool bubbles are referenced by the two composers' headers.
	if calls == 0 || results == 0 || errs == 0 || tokens == 0 {
		t.Errorf("calls %d results %d errors %d tokens %d", calls, results, errs, tokens)
	}
	for _, k := range []string{"edit_file/edit", "read_file/read", "list_dir/search", "web_search/web"} {
		if tools[k] == 0 {
			t.Errorf("no %s call", k)
		}
	}
}

// TestCorpusDumps decodes the JSON dumps of composer and bubble rows
// through the same row decoders as the databases, and checks that a dump
// yields exactly what its database yields.
func TestCorpusDumps(t *testing.T) {
	dir := corpusDir(t)
	globals := map[string]string{
		"CursorSync__globalStorage_state.vscdb__cursorDiskKV_composer_bubbles.dump.json":                   "CursorSync__globalStorage_state.vscdb",
		"xyzprtk-dotfiles__Cursor_User_globalStorage_state.vscdb__cursorDiskKV_composer_bubbles.dump.json": "xyzprtk-dotfiles__Cursor_User_globalStorage_state.vscdb",
		"Th7bo-dotconfig__Cursor_User_globalStorage_state.vscdb__cursorDiskKV_composer_bubbles.dump.json":  "Th7bo-dotconfig__Cursor_User_globalStorage_state.vscdb",
	}
	for dump, dbName := range globals {
		t.Run(dump, func(t *testing.T) {
			got := fromGlobalDump(t, filepath.Join(dir, dump))
			want, err := ReadVSCDB(context.Background(), filepath.Join(dir, dbName))
			if err != nil {
				t.Fatal(err)
			}
			sortConvs(got)
			sortConvs(want)
			if !reflect.DeepEqual(got, want) {
				t.Errorf("dump yields %d conversations, database %d; or their events differ", len(got), len(want))
			}
			t.Logf("%d conversations", len(got))
		})
	}

	// Workspace ItemTable values, extracted byte-exact.
	items := []struct {
		file  string
		chat  bool
		want  int
		texts bool
	}{
		{"cursor-history__state.vscdb__ItemTable__composer.composerData.json", false, 26, true},
		{"cursor-history__state.vscdb__ItemTable__workbench.panel.aichat.view.aichat.chatdata.json", true, 5, true},
		{"gait__cursorReader_knowledge.md__composer.composerData.extracted.json", false, 1, true},
		{"Oifunding__state.vscdb__ItemTable__composer.composerData.json", false, 0, false},
	}
	for _, it := range items {
		t.Run(it.file, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join(dir, it.file))
			if err != nil {
				t.Skip(err)
			}
			var cvs []convo
			if it.chat {
				cvs = chatConvos(raw, "")
			} else {
				cvs = workspaceComposers(raw, "")
			}
			var convs []Conversation
			for _, cv := range cvs {
				if c := cv.build(); c.NativeID != "" {
					checkConversation(t, c)
					convs = append(convs, c)
				}
			}
			if len(convs) != it.want {
				t.Errorf("%d conversations, want %d", len(convs), it.want)
			}
			if it.texts {
				var evs []event.Event
				for _, c := range convs {
					evs = append(evs, c.Events...)
				}
				assertNoText(t, evs, jsonStrings(raw, 24))
			}
		})
	}

	// Re-serialised workspace dumps: header-only composers.
	for _, f := range []string{
		"chatrxiv__workspaceStorage_10770782bbd95d5ae0035836c987047a__ItemTable-composer-keys.dump.json",
		"chatrxiv__workspaceStorage_1742529077861__ItemTable-composer-keys.dump.json",
	} {
		raw, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			continue
		}
		var d map[string]json.RawMessage
		if err := json.Unmarshal(raw, &d); err != nil {
			t.Fatal(err)
		}
		if n := len(workspaceComposers(d["composer.composerData"], "")); n != 0 {
			t.Errorf("%s: %d conversations from header-only composers", f, n)
		}
	}
}

// fromGlobalDump rebuilds the conversations of a cursorDiskKV dump
// ({key: value}) with the database's row decoders.
func fromGlobalDump(t *testing.T, path string) []Conversation {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Skip(err)
	}
	var rows map[string]json.RawMessage
	if err := json.Unmarshal(raw, &rows); err != nil {
		t.Fatal(err)
	}
	var out []Conversation
	seen := map[string]bool{}
	for key, v := range rows {
		if !strings.HasPrefix(key, "composerData:") || string(v) == "null" {
			continue
		}
		c, err := decodeComposer(v)
		if err != nil {
			t.Fatalf("%s: %v", key, err)
		}
		if c.ComposerID == "" {
			c.ComposerID = strings.TrimPrefix(key, "composerData:")
		}
		var bubbles []*bubble
		if len(c.Conversation) > 0 {
			bubbles = inlineBubbles(c)
		} else {
			bubbles = headerBubbles(c, func(id string) []byte {
				b := rows["bubbleId:"+c.ComposerID+":"+id]
				if string(b) == "null" {
					return nil
				}
				return b
			})
		}
		if conv := composerConvo(c, bubbles, "").build(); conv.NativeID != "" && !seen[conv.NativeID] {
			seen[conv.NativeID] = true
			out = append(out, conv)
		}
	}
	var evs []event.Event
	for _, c := range out {
		evs = append(evs, c.Events...)
	}
	assertNoText(t, evs, jsonStrings(raw, 24))
	return out
}

func sortConvs(c []Conversation) {
	sort.Slice(c, func(i, j int) bool { return c[i].NativeID < c[j].NativeID })
}

// jsonStrings returns the string values (at any depth, JSON inside strings
// included) at least min bytes long that are not ids, paths or URIs: the
// free text of a row.
func jsonStrings(raw []byte, min int) []string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return nil
	}
	var out []string
	var walk func(any, int)
	walk = func(v any, depth int) {
		switch x := v.(type) {
		case map[string]any:
			for _, e := range x {
				walk(e, depth)
			}
		case []any:
			for _, e := range x {
				walk(e, depth)
			}
		case string:
			if depth < 3 && strings.HasPrefix(strings.TrimSpace(x), "{") {
				var inner any
				if json.Unmarshal([]byte(x), &inner) == nil {
					walk(inner, depth+1)
					return
				}
			}
			if len(x) >= min && strings.ContainsAny(x, " \n") && !strings.Contains(x, "://") {
				out = append(out, x)
			}
		}
	}
	walk(v, 0)
	return out
}

// TestCorpusStoreDB reads the synthetic cursor-agent store of the corpus.
func TestCorpusStoreDB(t *testing.T) {
	f := filepath.Join(corpusDir(t), "agent-sessions__Fixtures_Cursor_test-store.db")
	if _, err := os.Stat(f); err != nil {
		t.Skip(err)
	}
	if !IsStoreDB(f) || IsVSCDB(f) {
		t.Fatal("auto-detection failed")
	}
	convs, err := ReadStoreDB(context.Background(), f)
	if err != nil {
		t.Fatal(err)
	}
	if len(convs) != 1 {
		t.Fatalf("%d conversations, want 1", len(convs))
	}
	c := convs[0]
	s := c.Events[0].Session
	if c.NativeID != "a1b2c3d4-e5f6-7890-abcd-ef1234567890" || s == nil || s.StartT != 1775522590321 {
		t.Errorf("session %+v", c.Events[0])
	}
	if len(c.Events) < 2 || c.Events[1].Kind != event.KindModel || c.Events[1].Model != "claude-4-sonnet" {
		t.Errorf("model event missing: %+v", c.Events)
	}
}

// TestCorpusWorkspaceRoot: with the transcript's project folder known, the
// workspace root is recognised from the first absolute path under it, so
// the reads made before the first shell call (the only record of a cwd)
// are repo-relative too.
func TestCorpusWorkspaceRoot(t *testing.T) {
	f := filepath.Join(corpusDir(t), "agent-tail__0cc7e0c68068-0__full.jsonl")
	data, err := os.ReadFile(f)
	if err != nil {
		t.Skip(err)
	}
	count := func(project string) (inRepo, outside int, repos map[string]string) {
		p := NewParser(watchersSource(f))
		if project != "" {
			p.SetFile("/Users/pc035860/.cursor/projects/"+project+"/agent-transcripts/x/x.jsonl", 0, 0)
		}
		repos = map[string]string{}
		var evs []event.Event
		for _, l := range strings.Split(string(data), "\n") {
			evs, _ = p.Line([]byte(l), evs)
		}
		for _, e := range evs {
			if e.Kind == event.KindRepo {
				repos[e.Repo.Key] = e.Repo.Name
			}
			if e.Kind != event.KindCall || e.Call.Tool != "ReadFile" {
				continue
			}
			for _, tg := range e.Call.Targets {
				if tg.Repo != "" {
					inRepo++
				} else {
					outside++
				}
			}
		}
		return inRepo, outside, repos
	}
	in0, out0, _ := count("")
	in1, out1, repos := count("Users-pc035860-code-agent-tail")
	t.Logf("reads without the project: %d in the repo, %d outside; with it: %d, %d; repos %v", in0, out0, in1, out1, repos)
	if in1 <= in0 || len(repos) != 1 {
		t.Errorf("the project folder did not recover the workspace root (%d <= %d, repos %v)", in1, in0, repos)
	}
	for _, name := range repos {
		if name != "agent-tail" {
			t.Errorf("repo name %q, want agent-tail", name)
		}
	}
}

// TestCorpusEveryJSON runs every JSON file of the corpus (row dumps and
// extracted ItemTable values, including the ones that hold no
// conversation, such as aiService.prompts) through every row decoder:
// nothing panics and no text comes out.
func TestCorpusEveryJSON(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(corpusDir(t), "*.json"))
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var evs []event.Event
		var n int
		collect := func(cvs []convo) {
			for _, cv := range cvs {
				if c := cv.build(); c.NativeID != "" {
					n++
					evs = append(evs, c.Events...)
				}
			}
		}
		collect(workspaceComposers(raw, ""))
		collect(chatConvos(raw, ""))
		if c, err := decodeComposer(raw); err == nil {
			collect([]convo{composerConvo(c, inlineBubbles(c), "")})
		}
		_, _ = decodeBubble(raw)
		// Dumps keyed by row: every value through every decoder.
		var rows map[string]json.RawMessage
		if json.Unmarshal(raw, &rows) == nil {
			for _, v := range rows {
				_, _ = decodeBubble(v)
				if c, err := decodeComposer(v); err == nil {
					collect([]convo{composerConvo(c, inlineBubbles(c), "")})
				}
				collect(workspaceComposers(v, ""))
				collect(chatConvos(v, ""))
			}
		}
		t.Logf("%s: %d conversations, %d events", filepath.Base(f), n, len(evs))
		if len(evs) > 0 {
			assertNoText(t, evs, jsonStrings(raw, 24))
		}
	}
}

// TestCorpusOtherAgents: no line of a Claude Code or Codex log of the
// corpus is taken for a Cursor transcript line.
func TestCorpusOtherAgents(t *testing.T) {
	root := filepath.Dir(corpusDir(t))
	n := 0
	for _, agent := range []string{"claude", "codex"} {
		files, _ := filepath.Glob(filepath.Join(root, agent, "*"))
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil || strings.HasSuffix(f, ".zst") {
				continue
			}
			for i, l := range strings.Split(string(data), "\n") {
				if i >= 200 {
					break
				}
				n++
				if LooksLike([]byte(l)) {
					t.Errorf("%s line %d taken for a Cursor line", filepath.Base(f), i+1)
				}
			}
		}
	}
	t.Logf("%d lines of other agents checked", n)
}
