package schema

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func TestCompiles(t *testing.T) {
	if _, err := Compiled(); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(AgentplayV1, &doc); err != nil {
		t.Fatal(err)
	}
	if doc["$schema"] != "https://json-schema.org/draft/2020-12/schema" || doc["$id"] != ID {
		t.Errorf("$schema %v, $id %v", doc["$schema"], doc["$id"])
	}
}

func decode(t *testing.T, s string) any {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(s))
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return doc
}

// envelope is the least a map must carry; fragments are spliced into it.
const envelope = `"schema": "agentplay/v1",
  "session": {"id": "local:claude-code:abc", "startedAt": "2026-03-01T10:00:00.000Z"},
  "totals": {}`

// formatPageFragments are the examples of the format page, as printed
// there, each completed into a map by the envelope.
var formatPageFragments = map[string]string{
	"repos and files": `"repos": [{ "id": "r0", "name": "api", "remote": "acme/api" }],
"files": [{ "id": 0, "repo": "r0", "path": "src/orders.ts", "reads": 2, "edits": 2, "hits": 1, "first": 17, "op": "modify" }],
"events": []`,
	"agents": `"agents": [
  { "id": "main", "parent": null, "kind": "main", "start": 0, "end": 250000,
    "calls": 20, "requests": 16, "tokens": 900000, "cost": 1.61, "outcome": "pr_created" },
  { "id": "sa-ae824d54211f", "parent": "main", "kind": "subagent", "subagentType": "Explore",
    "model": "claude-haiku-4-5", "launchSeq": 14, "start": 31000, "end": 70000, "…": "same counters" }
], "events": []`,
	"tasks": `"tasks": [{ "n": 1, "id": "t1", "name": "Explore the request pipeline", "source": "segments",
            "startSeq": 0, "endSeq": 12, "startT": 0, "endT": 70000, "firstTurn": 0, "lastTurn": 1 }],
"events": []`,
	"prs": `"prs": [{ "provider": "github", "repo": "acme/api", "number": 142, "url": "https://github.com/acme/api/pull/142", "seq": 51, "state": "open" }],
"events": []`,
	"targets": `"events": [{"seq": 0, "t": 0, "kind": "edit", "agent": "main", "tool": "Edit",
"targets": [{ "file": 0, "touch": "edit", "op": "modify" }, { "scope": "outside", "label": "/tmp (scratch)", "touch": "read" }]}]`,
	"earlier schema name": `"events": []`,
}

func TestFormatPageFragments(t *testing.T) {
	for name, frag := range formatPageFragments {
		env := envelope
		if name == "earlier schema name" {
			env = strings.Replace(env, "agentplay/v1", "entelligence.session-map/v1", 1)
		}
		if err := Validate(decode(t, "{"+env+",\n"+frag+"}")); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// event is a valid event of every kind, the starting point of the
// violation table.
var validEvents = []string{
	`{"seq":0,"t":0,"kind":"read","tool":"Read","targets":[{"file":0,"touch":"read"}],"outBytes":10,"dur":3}`,
	`{"seq":1,"t":1,"kind":"search","tool":"Grep","targets":[{"file":0,"touch":"hit"}]}`,
	`{"seq":2,"t":2,"kind":"edit","tool":"Edit","targets":[{"file":0,"touch":"edit","op":"create"}]}`,
	`{"seq":3,"t":3,"kind":"exec","tool":"Bash","verb":"git status","cat":"vcs","vcs":{"provider":"git","action":"status"}}`,
	`{"seq":4,"t":4,"kind":"verify","tool":"Bash","verb":"pytest","cat":"test","err":true,"errClass":"exit_code","exitCode":2}`,
	`{"seq":5,"t":5,"kind":"mcp","server":"github","tool":"get_issue","cat":"mcp"}`,
	`{"seq":6,"t":6,"kind":"skill","skill":"pdf"}`,
	`{"seq":7,"t":7,"kind":"subagent","subagentType":"Explore","model":"claude-haiku-4-5","child":"sa-1"}`,
	`{"seq":8,"t":8,"kind":"web","host":"search"}`,
	`{"seq":9,"t":9,"kind":"tool","tool":"AskUserQuestion"}`,
	`{"seq":10,"t":10,"kind":"llm","model":"gpt-5","in":1,"cw":0,"cr":0,"out":2,"latency":null,"stop":null,"thinking":false,"toolCalls":0,"textChars":0}`,
	`{"seq":11,"t":11,"kind":"user","chars":5,"images":0,"urls":1}`,
	`{"seq":12,"t":12,"kind":"error","source":null,"errClass":"overloaded"}`,
	`{"seq":13,"t":13,"kind":"delay","cause":"stall","ms":120000}`,
	`{"seq":14,"t":14,"kind":"compaction","trigger":"manual","preTokens":10,"postTokens":2,"ms":100}`,
	`{"seq":15,"t":15,"kind":"commit","repo":"r0","sha":"0123abc","files":1,"ins":1,"del":0}`,
	`{"seq":16,"t":16,"kind":"pr_merge","repo":"acme/api","number":1}`,
	`{"seq":17,"t":17,"kind":"pr_close","repo":"acme/api","number":1,"url":"https://github.com/acme/api/pull/1"}`,
	`{"seq":18,"t":18,"kind":"pr_comment","repo":"acme/api","number":1}`,
	`{"seq":19,"t":19,"kind":"ticket","tracker":"jira","action":"update","id":"ENG-1"}`,
	`{"seq":20,"t":20,"kind":"artifact","url":"https://example.com/a","title":"x","version":"1"}`,
	`{"seq":21,"t":21,"kind":"skill_write","name":"notes","action":"update"}`,
	`{"seq":22,"t":22,"kind":"model_switch","from":"a","to":"b"}`,
}

func mapWith(events ...string) string {
	return "{" + envelope + `, "events": [` + strings.Join(events, ",") + "]}"
}

func TestEveryKindValid(t *testing.T) {
	if err := Validate(decode(t, mapWith(validEvents...))); err != nil {
		t.Fatal(err)
	}
}

func TestViolations(t *testing.T) {
	for _, tc := range []struct {
		name, doc, path, keyword string
	}{
		{"no events", "{" + envelope + "}", "", "required"},
		{"bad schema id", strings.Replace(mapWith(), "agentplay/v1", "agentplay/v2", 1), "/schema", "enum"},
		{"bad hash", strings.Replace(mapWith(), `"totals": {}`, `"totals": {}, "contentHash": "abc"`, 1), "/contentHash", "pattern"},
		{"startedAt", strings.Replace(mapWith(), "2026-03-01T10:00:00.000Z", "2026-03-01 10:00", 1), "/session/startedAt", "format"},
		{"startedAt not UTC", strings.Replace(mapWith(), "10:00:00.000Z", "10:00:00+02:00", 1), "/session/startedAt", "pattern"},
		{"unknown kind", mapWith(`{"t":0,"kind":"think"}`), "/events/0/kind", "enum"},
		{"no t", mapWith(`{"kind":"user","chars":1}`), "/events/0", "required"},
		{"negative t", mapWith(`{"t":-1,"kind":"user","chars":1}`), "/events/0/t", "minimum"},
		{"mcp server", mapWith(`{"t":0,"kind":"mcp","tool":"x"}`), "/events/0", "required"},
		{"tool class on error", mapWith(`{"t":0,"kind":"error","errClass":"exit_code"}`), "/events/0/errClass", "enum"},
		{"error class on tool", mapWith(`{"t":0,"kind":"tool","tool":"x","errClass":"overloaded"}`), "/events/0/errClass", "enum"},
		{"attempt 1", mapWith(`{"t":0,"kind":"tool","tool":"x","attempt":1}`), "/events/0/attempt", "minimum"},
		{"verb flag", mapWith(`{"t":0,"kind":"exec","tool":"Bash","verb":"rm -rf"}`), "/events/0/verb", "pattern"},
		{"verb words", mapWith(`{"t":0,"kind":"exec","tool":"Bash","verb":"a b c d"}`), "/events/0/verb", "pattern"},
		{"outside label", mapWith(`{"t":0,"kind":"read","tool":"Read","targets":[{"scope":"outside","label":"/etc","touch":"read"}]}`), "/events/0/targets/0/label", "enum"},
		{"home label", mapWith(`{"t":0,"kind":"read","tool":"Read","targets":[{"scope":"outside","label":"~/code","touch":"read"}]}`), "/events/0/targets/0/label", "enum"},
		{"claude area", mapWith(`{"t":0,"kind":"read","tool":"Read","targets":[{"scope":"outside","label":"~/.claude/a/b","touch":"read"}]}`), "/events/0/targets/0/label", "enum"},
		{"file target", mapWith(`{"t":0,"kind":"read","tool":"Read","targets":[{"touch":"read"}]}`), "/events/0/targets/0", "required"},
		{"touch", mapWith(`{"t":0,"kind":"read","tool":"Read","targets":[{"file":0,"touch":"see"}]}`), "/events/0/targets/0/touch", "enum"},
		{"delay cause", mapWith(`{"t":0,"kind":"delay","cause":"lunch","ms":1}`), "/events/0/cause", "enum"},
		{"trigger", mapWith(`{"t":0,"kind":"compaction","trigger":"often"}`), "/events/0/trigger", "enum"},
		{"sha", mapWith(`{"t":0,"kind":"commit","sha":"xyz"}`), "/events/0/sha", "pattern"},
		{"vcs", mapWith(`{"t":0,"kind":"exec","tool":"Bash","vcs":{"provider":"hg","action":"log"}}`), "/events/0/vcs/provider", "enum"},
		{"cat", mapWith(`{"t":0,"kind":"tool","tool":"x","cat":"misc"}`), "/events/0/cat", "enum"},
		{"role", strings.Replace(mapWith(), `"id": "local`, `"role": "child", "id": "local`, 1), "/session/role", "enum"},
		{"errorsBySource", strings.Replace(mapWith(), `"totals": {}`, `"totals": {"errorsBySource": {"hook": -1}}`, 1), "/totals/errorsBySource/hook", "minimum"},
		{"errorsByClass", strings.Replace(mapWith(), `"totals": {}`, `"totals": {"errorsByClass": {"timeout": 1.5}}`, 1), "/totals/errorsByClass/timeout", "type"},
		{"pr without url", strings.Replace(mapWith(), `"totals": {}`, `"totals": {}, "prs": [{"provider":"github","repo":"a/b","number":1}]`, 1), "/prs/0", "required"},
		{"task source", strings.Replace(mapWith(), `"totals": {}`, `"totals": {}, "tasks": [{"n":1,"startSeq":0,"endSeq":0,"source":"llm"}]`, 1), "/tasks/0/source", "enum"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := Validate(decode(t, tc.doc))
			var serr *Error
			if err == nil {
				t.Fatal("valid")
			}
			serr, ok := err.(*Error)
			if !ok {
				t.Fatalf("not a schema error: %v", err)
			}
			for _, v := range serr.Violations {
				if v.Path == tc.path && v.Keyword == tc.keyword {
					return
				}
			}
			t.Errorf("want %s at %q, got %v", tc.keyword, tc.path, serr)
		})
	}
}

// TestMessagesNeverQuoteValues checks that a violation describes a bad
// value without repeating it.
func TestMessagesNeverQuoteValues(t *testing.T) {
	const canary = "canarysecret"
	doc := mapWith(
		`{"t":0,"kind":"exec","tool":"Bash","verb":"echo `+canary+` --x"}`,
		`{"t":1,"kind":"`+canary+`"}`,
		`{"t":2,"kind":"web","host":"`+canary+`/path"}`,
		`{"t":3,"kind":"compaction","trigger":"`+canary+`"}`,
		`{"t":4,"kind":"ticket","tracker":"x","action":"create","id":"`+canary+` text"}`,
	)
	doc = strings.Replace(doc, "2026-03-01T10:00:00.000Z", canary, 1)
	doc = strings.Replace(doc, `"totals": {}`, `"totals": {"errorsByClass": {"`+canary+` key": "x"}}`, 1)
	err := Validate(decode(t, doc))
	if err == nil {
		t.Fatal("valid")
	}
	if n := len(err.(*Error).Violations); n < 6 {
		t.Errorf("only %d violations: %v", n, err)
	}
	if strings.Contains(err.Error(), canary) {
		t.Errorf("message quotes a value: %v", err)
	}
}

func TestPointer(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{nil, ""},
		{[]string{"events", "3", "verb"}, "/events/3/verb"},
		{[]string{"a/b", "c~d"}, "/<key of 3 bytes>/<key of 3 bytes>"},
		{[]string{"errorsByClass", "two words"}, "/errorsByClass/<key of 9 bytes>"},
		{[]string{"totals", "llmLatencyP95", "exit_code"}, "/totals/llmLatencyP95/exit_code"},
		{[]string{"sk-abc123", "ghp1234567", "x.y"}, "/<key of 9 bytes>/<key of 10 bytes>/<key of 3 bytes>"},
		{[]string{"events", "19999"}, "/events/19999"},
	} {
		if got := Pointer(tc.in); got != tc.want {
			t.Errorf("Pointer(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestUnrepresentableNumber checks that a number the library cannot turn
// into a rational is an error, not a panic.
func TestUnrepresentableNumber(t *testing.T) {
	doc := decode(t, mapWith(`{"t":1e99999999,"kind":"user","chars":1}`))
	if err := Validate(doc); err == nil {
		t.Fatal("valid")
	}
}
