package validate

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "recompute contentHash in testdata/validate")

const fixtures = "../../testdata/validate"

func fixtureNames(t testing.TB) []string {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(fixtures, "*.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no fixtures in %s: %v", fixtures, err)
	}
	return names
}

func decodeDoc(t testing.TB, data []byte) map[string]any {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var doc map[string]any
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

var hashLine = regexp.MustCompile(`"contentHash": "[0-9a-f]*"`)

// TestValidMaps checks that every hand-written map passes, as JSON and as
// gzip. With -update it first rewrites each map's contentHash.
func TestValidMaps(t *testing.T) {
	for _, name := range fixtureNames(t) {
		t.Run(filepath.Base(name), func(t *testing.T) {
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if *update {
				h, err := ContentHash(decodeDoc(t, data))
				if err != nil {
					t.Fatal(err)
				}
				data = hashLine.ReplaceAll(data, []byte(`"contentHash": "`+h+`"`))
				if err := os.WriteFile(name, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, p := range Map(data) {
				t.Errorf("json: %s", p)
			}
			for _, p := range Map(gzipped(t, data)) {
				t.Errorf("gzip: %s", p)
			}
		})
	}
}

func gzipped(t testing.TB, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	if _, err := zw.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// encodeDoc writes a map with its contentHash recomputed, so that a broken
// map fails for its own rule and not for a stale hash.
func encodeDoc(t testing.TB, doc map[string]any) []byte {
	t.Helper()
	raw, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	fresh := decodeDoc(t, raw)
	h, err := ContentHash(fresh)
	if err != nil {
		t.Fatal(err)
	}
	fresh["contentHash"] = h
	raw, err = json.Marshal(fresh)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func loadFull(t testing.TB) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(fixtures, "full.json"))
	if err != nil {
		t.Fatal(err)
	}
	return decodeDoc(t, data)
}

func ev(doc map[string]any, i int) map[string]any {
	return doc["events"].([]any)[i].(map[string]any)
}

func section(doc map[string]any, name string, i int) map[string]any {
	return doc[name].([]any)[i].(map[string]any)
}

// brokenCases break full.json in one way each. rules lists the rules the
// break may raise; the first is the one it must raise.
var brokenCases = []struct {
	name   string
	break_ func(doc map[string]any)
	rules  []string
	rehash bool
}{
	{"schema id", func(d map[string]any) { d["schema"] = "agentplay/v2" }, []string{RuleSchema}, true},
	{"missing session id", func(d map[string]any) { delete(d["session"].(map[string]any), "id") }, []string{RuleSchema}, true},
	{"startedAt not a date", func(d map[string]any) { d["session"].(map[string]any)["startedAt"] = "yesterday" }, []string{RuleSchema}, true},
	{"outcome not in the seven", func(d map[string]any) { d["session"].(map[string]any)["outcome"] = "done" }, []string{RuleSchema}, true},
	{"role", func(d map[string]any) { d["session"].(map[string]any)["role"] = "boss" }, []string{RuleSchema}, true},
	{"pathMode", func(d map[string]any) { d["session"].(map[string]any)["pathMode"] = "absolute" }, []string{RuleSchema}, true},
	{"kind", func(d map[string]any) { ev(d, 16)["kind"] = "tool_call" }, []string{RuleSchema, RuleTotals, RuleUnknownField}, true},
	{"cat", func(d map[string]any) { ev(d, 2)["cat"] = "files" }, []string{RuleSchema}, true},
	{"tool errClass on error event", func(d map[string]any) { ev(d, 17)["errClass"] = "exit_code" }, []string{RuleSchema}, true},
	{"error class on tool event", func(d map[string]any) { ev(d, 5)["errClass"] = "hook_error" }, []string{RuleSchema}, true},
	{"mcp without server", func(d map[string]any) { delete(ev(d, 10), "server") }, []string{RuleSchema}, true},
	{"delay cause", func(d map[string]any) { ev(d, 9)["cause"] = "coffee" }, []string{RuleSchema}, true},
	{"compaction trigger", func(d map[string]any) { ev(d, 18)["trigger"] = "sometimes" }, []string{RuleSchema}, true},
	{"target label", func(d map[string]any) {
		ev(d, 13)["targets"].([]any)[0].(map[string]any)["label"] = "outside"
	}, []string{RuleSchema}, true},
	{"touch", func(d map[string]any) {
		ev(d, 2)["targets"].([]any)[0].(map[string]any)["touch"] = "write"
	}, []string{RuleSchema}, true},
	{"file op", func(d map[string]any) { section(d, "files", 1)["op"] = "update" }, []string{RuleSchema}, true},
	{"vcs provider", func(d map[string]any) { ev(d, 4)["vcs"].(map[string]any)["provider"] = "svn" }, []string{RuleSchema}, true},
	{"task source", func(d map[string]any) { section(d, "tasks", 0)["source"] = "model" }, []string{RuleSchema, RuleIdentifier}, true},
	{"errorsByClass value", func(d map[string]any) {
		d["totals"].(map[string]any)["errorsByClass"].(map[string]any)["exit_code"] = "one"
	}, []string{RuleSchema}, true},
	{"contentHash shape", func(d map[string]any) {}, []string{RuleSchema, RuleContentHash}, false},

	{"unknown top field", func(d map[string]any) { d["notes"] = "x" }, []string{RuleUnknownField}, true},
	{"unknown session field", func(d map[string]any) { d["session"].(map[string]any)["title"] = "x" }, []string{RuleUnknownField}, true},
	{"unknown event field", func(d map[string]any) { ev(d, 0)["prompt"] = "x" }, []string{RuleUnknownField}, true},
	{"field of another kind", func(d map[string]any) { ev(d, 0)["verb"] = "git" }, []string{RuleUnknownField}, true},
	{"unknown target field", func(d map[string]any) {
		ev(d, 2)["targets"].([]any)[0].(map[string]any)["name"] = "x"
	}, []string{RuleUnknownField}, true},
	{"unknown errorsByClass key", func(d map[string]any) {
		d["totals"].(map[string]any)["errorsByClass"].(map[string]any)["oops"] = json.Number("0")
	}, []string{RuleUnknownField}, true},
	{"unknown agent field", func(d map[string]any) { section(d, "agents", 1)["description"] = "x" }, []string{RuleUnknownField}, true},

	{"seq off", func(d map[string]any) { ev(d, 3)["seq"] = json.Number("4") }, []string{RuleSeq}, true},
	{"seq missing", func(d map[string]any) { delete(ev(d, 3), "seq") }, []string{RuleSeq}, true},
	{"t backwards", func(d map[string]any) { ev(d, 3)["t"] = json.Number("10") }, []string{RuleTime}, true},
	{"t negative", func(d map[string]any) { ev(d, 0)["t"] = json.Number("-1") }, []string{RuleTime, RuleSchema}, true},
	{"nested subagent", func(d map[string]any) {
		a := map[string]any{}
		for k, v := range section(d, "agents", 1) {
			a[k] = v
		}
		a["id"], a["parent"] = "sa-2", "sa-ae824d54211f"
		d["agents"] = append(d["agents"].([]any), a)
		d["totals"].(map[string]any)["subagents"] = json.Number("2")
	}, []string{RuleAgentRef}, true},
	{"main with a parent", func(d map[string]any) { section(d, "agents", 0)["parent"] = "main" }, []string{RuleAgentRef}, true},
	{"duration before last event", func(d map[string]any) { d["session"].(map[string]any)["durationMs"] = json.Number("100") }, []string{RuleTime}, true},
	{"agent unknown", func(d map[string]any) { ev(d, 13)["agent"] = "sa-nobody" }, []string{RuleAgentRef}, true},
	{"child unknown", func(d map[string]any) { ev(d, 12)["child"] = "sa-nobody" }, []string{RuleAgentRef}, true},
	{"parent unknown", func(d map[string]any) { section(d, "agents", 1)["parent"] = "sa-x" }, []string{RuleAgentRef}, true},
	{"duplicate agent", func(d map[string]any) { section(d, "agents", 1)["id"] = "main" }, []string{RuleDuplicateID, RuleAgentRef}, true},
	{"duplicate file", func(d map[string]any) { section(d, "files", 1)["id"] = json.Number("0") }, []string{RuleDuplicateID, RuleFileRef}, true},
	{"task unknown", func(d map[string]any) { ev(d, 0)["task"] = json.Number("7") }, []string{RuleTaskRef}, true},
	{"task without tasks", func(d map[string]any) { delete(d, "tasks"); delete(d["totals"].(map[string]any), "tasks") }, []string{RuleTaskRef}, true},
	{"target file unknown", func(d map[string]any) {
		ev(d, 2)["targets"].([]any)[0].(map[string]any)["file"] = json.Number("9")
	}, []string{RuleFileRef}, true},
	{"file repo unknown", func(d map[string]any) { section(d, "files", 0)["repo"] = "r9" }, []string{RuleRepoRef}, true},
	{"commit repo unknown", func(d map[string]any) { ev(d, 23)["repo"] = "r9" }, []string{RuleRepoRef}, true},
	{"launchSeq out of range", func(d map[string]any) { section(d, "agents", 1)["launchSeq"] = json.Number("300") }, []string{RuleSeqRef}, true},
	{"launchSeq not a subagent", func(d map[string]any) { section(d, "agents", 1)["launchSeq"] = json.Number("2") }, []string{RuleSeqRef}, true},
	{"error ref", func(d map[string]any) { ev(d, 17)["ref"] = json.Number("30") }, []string{RuleSeqRef}, true},
	{"delay ref", func(d map[string]any) { ev(d, 9)["ref"] = json.Number("99") }, []string{RuleSeqRef}, true},
	{"retryOf forward", func(d map[string]any) { ev(d, 6)["retryOf"] = json.Number("7") }, []string{RuleSeqRef}, true},
	{"file first", func(d map[string]any) { section(d, "files", 0)["first"] = json.Number("30") }, []string{RuleSeqRef}, true},
	{"task range", func(d map[string]any) { section(d, "tasks", 1)["endSeq"] = json.Number("30") }, []string{RuleSeqRef}, true},
	{"task reversed", func(d map[string]any) { section(d, "tasks", 1)["endSeq"] = json.Number("2") }, []string{RuleSeqRef}, true},
	{"pr seq", func(d map[string]any) { section(d, "prs", 0)["seq"] = json.Number("30") }, []string{RuleSeqRef}, true},

	{"verb with flag", func(d map[string]any) { ev(d, 4)["verb"] = "git -C" }, []string{RuleVerb, RuleSchema}, true},
	{"verb with argument", func(d map[string]any) { ev(d, 4)["verb"] = "git push origin" }, []string{RuleVerb}, true},
	{"verb with path", func(d map[string]any) { ev(d, 4)["verb"] = "ls src/x" }, []string{RuleVerb, RuleSchema}, true},
	{"verb with assignment", func(d map[string]any) { ev(d, 4)["verb"] = "FOO=1 make" }, []string{RuleVerb, RuleSchema}, true},
	{"verb with quote", func(d map[string]any) { ev(d, 4)["verb"] = `echo 'hi'` }, []string{RuleVerb, RuleSchema}, true},
	{"verb with variable", func(d map[string]any) { ev(d, 4)["verb"] = "echo $HOME" }, []string{RuleVerb, RuleSchema}, true},
	{"verb with number", func(d map[string]any) { ev(d, 4)["verb"] = "sleep 30" }, []string{RuleVerb}, true},
	{"verb too long", func(d map[string]any) { ev(d, 4)["verb"] = "aws s3 cp now" }, []string{RuleVerb, RuleSchema}, true},
	{"verb of make target", func(d map[string]any) { ev(d, 4)["verb"] = "make build" }, []string{RuleVerb}, true},

	{"absolute path in a field", func(d map[string]any) { section(d, "repos", 0)["name"] = "/home/ana/api" }, []string{RuleAbsolutePath}, true},
	{"home path in a field", func(d map[string]any) { ev(d, 16)["tool"] = "~/bin/tool" }, []string{RuleAbsolutePath}, true},
	{"windows path", func(d map[string]any) { ev(d, 16)["tool"] = `C:\Users\ana` }, []string{RuleAbsolutePath}, true},
	{"path after a space", func(d map[string]any) { section(d, "agents", 1)["subagentType"] = "see /Users/ana" }, []string{RuleAbsolutePath}, true},
	{"absolute path in an unknown field", func(d map[string]any) { ev(d, 0)["cwd"] = "/home/ana" }, []string{RuleAbsolutePath, RuleUnknownField}, true},
	{"long string", func(d map[string]any) { section(d, "tasks", 0)["id"] = strings.Repeat("a", 201) }, []string{RuleStringLength}, true},
	{"newline in a string", func(d map[string]any) { section(d, "repos", 0)["name"] = "a\nb" }, []string{RuleStringLength}, true},
	{"sentence as a model", func(d map[string]any) { ev(d, 2)["model"] = "please fix the bug" }, []string{RuleIdentifier, RuleTotals}, true},
	{"sentence behind zero-width spaces", func(d map[string]any) { ev(d, 16)["tool"] = "the\u200bsecret\u200bmerger\u200bcloses" }, []string{RuleIdentifier}, true},
	{"turn task named by text", func(d map[string]any) { section(d, "tasks", 0)["name"] = "Fix login" }, []string{RuleIdentifier}, true},
	{"leading slash", func(d map[string]any) { section(d, "files", 0)["path"] = "/src/orders.ts" }, []string{RuleRelativePath, RuleAbsolutePath}, true},
	{"dot dot", func(d map[string]any) { section(d, "files", 0)["path"] = "../other/x.ts" }, []string{RuleRelativePath}, true},
	{"backslash", func(d map[string]any) { section(d, "files", 0)["path"] = `src\orders.ts` }, []string{RuleRelativePath}, true},
	{"dirs_only name", func(d map[string]any) { d["session"].(map[string]any)["pathMode"] = "dirs_only" }, []string{RuleDirsOnly}, true},
	{"hashed segment", func(d map[string]any) { d["session"].(map[string]any)["pathMode"] = "hashed" }, []string{RuleHashed}, true},
	{"remote with host", func(d map[string]any) { section(d, "repos", 0)["remote"] = "github.com/acme" }, []string{RuleRemote}, true},
	{"remote with scheme", func(d map[string]any) { section(d, "repos", 0)["remote"] = "https://github.com/acme/api" }, []string{RuleRemote, RuleSchema}, true},
	{"pr repo", func(d map[string]any) { section(d, "prs", 0)["repo"] = "api" }, []string{RuleRemote, RuleSchema}, true},
	{"host with path", func(d map[string]any) { ev(d, 15)["host"] = "docs.python.org/3/library" }, []string{RuleHost, RuleSchema}, true},
	{"host upper case", func(d map[string]any) { ev(d, 15)["host"] = "Docs.Python.org" }, []string{RuleHost, RuleSchema}, true},
	{"url with credentials", func(d map[string]any) { section(d, "prs", 0)["url"] = "https://ana:pw@github.com/acme/api/pull/142" }, []string{RuleURL}, true},
	{"url not http", func(d map[string]any) { ev(d, 27)["url"] = "ftp://example.com/x" }, []string{RuleURL, RuleSchema}, true},

	{"calls", func(d map[string]any) { d["totals"].(map[string]any)["calls"] = json.Number("3") }, []string{RuleTotals}, true},
	{"requests", func(d map[string]any) { d["totals"].(map[string]any)["requests"] = json.Number("9") }, []string{RuleTotals}, true},
	{"userTurns", func(d map[string]any) { d["totals"].(map[string]any)["userTurns"] = json.Number("1") }, []string{RuleTotals}, true},
	{"errors", func(d map[string]any) { ev(d, 2)["err"] = true }, []string{RuleTotals}, true},
	{"compactions", func(d map[string]any) { d["totals"].(map[string]any)["compactions"] = json.Number("0") }, []string{RuleTotals}, true},
	{"tokens", func(d map[string]any) { ev(d, 1)["out"] = json.Number("301") }, []string{RuleTotals}, true},
	{"models", func(d map[string]any) { d["session"].(map[string]any)["models"] = []any{"claude-opus-4-5"} }, []string{RuleTotals}, true},
	{"content hash stale", func(d map[string]any) { ev(d, 0)["chars"] = json.Number("121") }, []string{RuleContentHash, RuleTotals}, false},
	{"content hash missing", func(d map[string]any) { delete(d, "contentHash") }, []string{RuleContentHash}, false},
}

func TestBrokenMaps(t *testing.T) {
	for _, tc := range brokenCases {
		t.Run(tc.name, func(t *testing.T) {
			doc := loadFull(t)
			if tc.name == "contentHash shape" {
				doc["contentHash"] = "ABC"
			}
			tc.break_(doc)
			var data []byte
			if tc.rehash {
				data = encodeDoc(t, doc)
			} else {
				var err error
				if data, err = json.Marshal(doc); err != nil {
					t.Fatal(err)
				}
			}
			problems := Map(data)
			allowed := map[string]bool{}
			for _, r := range tc.rules {
				allowed[r] = true
			}
			found := false
			for _, p := range problems {
				if p.Rule == tc.rules[0] {
					found = true
				}
				if !allowed[p.Rule] {
					t.Errorf("unexpected problem %s", p)
				}
			}
			if !found {
				t.Errorf("no %s problem; got %v", tc.rules[0], problems)
			}
		})
	}
}

// TestTruncatedSkipsTotals checks that a truncated map's totals are not
// compared with its events, and that the same map untruncated fails.
func TestTruncatedSkipsTotals(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(fixtures, "truncated.json"))
	if err != nil {
		t.Fatal(err)
	}
	if p := Map(data); len(p) != 0 {
		t.Fatalf("truncated map: %v", p)
	}
	doc := decodeDoc(t, data)
	doc["session"].(map[string]any)["truncated"] = false
	if !hasRule(Map(encodeDoc(t, doc)), RuleTotals) {
		t.Error("untruncated copy passes the totals check")
	}
}

func hasRule(ps []Problem, rule string) bool {
	for _, p := range ps {
		if p.Rule == rule {
			return true
		}
	}
	return false
}

func TestInput(t *testing.T) {
	full, err := os.ReadFile(filepath.Join(fixtures, "full.json"))
	if err != nil {
		t.Fatal(err)
	}
	gz := gzipped(t, full)
	for _, tc := range []struct {
		name string
		data []byte
		rule string // "" for valid
	}{
		{"plain", full, ""},
		{"gzip", gz, ""},
		{"empty", nil, RuleJSON},
		{"not json", []byte("hello"), RuleJSON},
		{"array", []byte("[1,2]"), RuleJSON},
		{"trailing data", append(append([]byte{}, full...), []byte(`{"a":1}`)...), RuleJSON},
		{"truncated json", full[:len(full)/2], RuleJSON},
		{"truncated gzip", gz[:len(gz)/2], RuleJSON},
		{"bad gzip header", []byte{0x1f, 0x8b, 0, 0}, RuleJSON},
		{"corrupt gzip body", corrupt(gz), RuleJSON},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ps := Map(tc.data)
			if tc.rule == "" {
				if len(ps) != 0 {
					t.Fatalf("want valid, got %v", ps)
				}
				return
			}
			if len(ps) != 1 || ps[0].Rule != tc.rule {
				t.Fatalf("want one %s problem, got %v", tc.rule, ps)
			}
		})
	}
}

func corrupt(gz []byte) []byte {
	out := append([]byte{}, gz...)
	for i := 12; i < len(out)-8 && i < 40; i++ {
		out[i] ^= 0xff
	}
	return out
}

// TestProblemsNeverQuoteText plants a canary in every place text could hide
// and checks that no problem repeats it.
func TestProblemsNeverQuoteText(t *testing.T) {
	const canary = "CANARYsecret"
	doc := loadFull(t)
	ev(doc, 4)["verb"] = "curl -H " + canary
	ev(doc, 5)["verb"] = "git " + canary + "x"
	ev(doc, 0)["prompt"] = canary
	ev(doc, 0)[canary+" as a key with spaces"] = 1
	ev(doc, 15)["host"] = canary + ".example/x"
	ev(doc, 16)["tool"] = "please " + canary + " now right away"
	ev(doc, 2)["model"] = canary + strings.Repeat("x", 300)
	section(doc, "files", 0)["path"] = "/home/" + canary
	section(doc, "repos", 0)["remote"] = canary
	section(doc, "tasks", 0)["name"] = canary + " text"
	section(doc, "prs", 0)["url"] = "https://u:" + canary + "@x.org/p"
	d := doc["totals"].(map[string]any)["errorsByClass"].(map[string]any)
	d[canary+" key"] = "x"
	doc["session"].(map[string]any)["startedAt"] = canary
	doc["session"].(map[string]any)["outcome"] = canary
	doc["session"].(map[string]any)["id"] = json.Number("12345")
	data := encodeDoc(t, doc)
	ps := Map(data)
	if len(ps) < 10 {
		t.Fatalf("only %d problems: %v", len(ps), ps)
	}
	for _, p := range ps {
		if strings.Contains(strings.ToLower(p.String()), strings.ToLower(canary)) {
			t.Errorf("problem quotes the canary: %s", p)
		}
	}
}

func TestDotted(t *testing.T) {
	for in, want := range map[string]string{
		"":                    "(map)",
		"/events/12/verb":     "events[12].verb",
		"/totals/calls":       "totals.calls",
		"/events/3/targets/0": "events[3].targets[0]",
		"/a~1b":               "a/b",
	} {
		if got := Dotted(in); got != want {
			t.Errorf("Dotted(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestVerbMessage(t *testing.T) {
	doc := loadFull(t)
	ev(doc, 12)["kind"] = "subagent"
	ev(doc, 4)["verb"] = "git push origin"
	for _, p := range Map(encodeDoc(t, doc)) {
		if p.Rule == RuleVerb {
			if want := `events[4].verb: "git push origin" has an argument (verb)`; p.String() != want {
				t.Errorf("got %q, want %q", p.String(), want)
			}
			return
		}
	}
	t.Error("no verb problem")
}

func TestVerbShapes(t *testing.T) {
	for verb, bad := range map[string]bool{
		"git status": false, "gh pr view": false, "npm run": false, "pytest": false,
		"go test": false, "cargo clippy": false, "npx tsc": false, "g++": false, "python3": false,
		"docker compose": false, "terraform plan": false,
		"git push origin": true, "pytest tests": true, "gh pr view 12": true, "git -C": true,
		"./run.sh": true, "make test": true, "a b c d": true, "git  status": true, "sleep 1.5": true,
		"cat x|y": true, "ls *": true,
	} {
		if got := verbProblem(verb) != ""; got != bad {
			t.Errorf("verbProblem(%q) = %q, want bad=%v", verb, verbProblem(verb), bad)
		}
	}
}

func TestAbsolutePath(t *testing.T) {
	for s, bad := range map[string]bool{
		"src/home/page.tsx": false, "app/Users/List.tsx": false, "~": false, "~/Documents": false,
		"/tmp (scratch)": false, "~/.claude/plans": false, "outside-repo": false, "PostToolUse:Bash": false,
		"local:claude-code:abc": false, "2026-03-01T10:00:00Z": false, "claude-opus-4-5": false,
		"/etc/passwd": true, "/tmp": true, "~/code/x": true, `C:\Users\a`: true, "d:/work": true,
		"run /home/a/x": true, "--out=/Users/a": true, `\\server\share`: true, "file:///x": true,
		"~/.claude": false, "~ (home)": false, "~/.claude/a/b": true, "~/.claude/my notes": true,
	} {
		if got := absolutePath(s) != ""; got != bad {
			t.Errorf("absolutePath(%q) = %q, want bad=%v", s, absolutePath(s), bad)
		}
	}
}

func TestFieldsFromSchema(t *testing.T) {
	k, err := fields()
	if err != nil {
		t.Fatal(err)
	}
	for kind, want := range map[string][]string{
		"mcp":        {"seq", "t", "agent", "server", "tool", "outBytes", "errClass"},
		"exec":       {"verb", "targets", "vcs", "retryOf", "attempt", "exitCode"},
		"llm":        {"in", "cw", "cr", "out", "latency", "stop", "textChars"},
		"error":      {"source", "errClass", "hook", "hookEvent", "srcUuid", "ref", "retry"},
		"delay":      {"cause", "ms", "ref"},
		"commit":     {"repo", "sha", "files", "ins", "del"},
		"pr_comment": {"repo", "number", "url"},
	} {
		for _, f := range want {
			if !k.eventKind[kind][f] {
				t.Errorf("%s events lack %s", kind, f)
			}
		}
	}
	if k.eventKind["user"]["verb"] || k.eventKind["llm"]["targets"] {
		t.Error("fields leak across kinds")
	}
	if len(k.eventKind) != 23 {
		t.Errorf("%d kinds, want 23", len(k.eventKind))
	}
	if !k.errClasses["exit_code"] || !k.errClasses["hook_error"] || k.errClasses["nope"] {
		t.Error("errClass union wrong")
	}
}

// TestHugeNumbers checks that numbers the schema library cannot handle
// quickly (or at all) are reported, not validated.
func TestHugeNumbers(t *testing.T) {
	for _, n := range []string{"1e99999999", "1e9999999", "-1E400", "1" + strings.Repeat("0", 50), "1e-99999"} {
		doc := `{"schema":"agentplay/v1","session":{"id":"x","startedAt":"2026-01-01T00:00:00Z"},"totals":{},"events":[{"seq":0,"t":` + n + `,"kind":"user"}]}`
		ps := Map([]byte(doc))
		if len(ps) != 1 || ps[0].Rule != RuleJSON || ps[0].Path != "/events/0/t" {
			t.Errorf("%s: %v", n, ps)
		}
	}
}

// TestRepoRootPath checks that "." (the repo root, listed by a search) is a
// valid path in every mode.
func TestRepoRootPath(t *testing.T) {
	for _, mode := range []string{"relative", "dirs_only", "hashed"} {
		doc := loadFull(t)
		doc["session"].(map[string]any)["pathMode"] = mode
		doc["files"] = doc["files"].([]any)[:1]
		section(doc, "files", 0)["path"] = "."
		ev(doc, 3)["targets"] = ev(doc, 3)["targets"].([]any)[:1]
		ev(doc, 7)["targets"] = []any{}
		for _, p := range Map(encodeDoc(t, doc)) {
			t.Errorf("%s: %s", mode, p)
		}
	}
}

// TestGzipBomb checks that inflating stops at the bound.
func TestGzipBomb(t *testing.T) {
	defer func(n int64) { maxDecompressed = n }(maxDecompressed)
	maxDecompressed = 1 << 10
	bomb := gzipped(t, bytes.Repeat([]byte(" "), 1<<20))
	ps := Map(bomb)
	if len(ps) != 1 || ps[0].Rule != RuleJSON || !strings.Contains(ps[0].Message, "decompressed") {
		t.Fatalf("got %v", ps)
	}
}

// TestProblemOrder checks that problems come out in the same order every
// time (map iteration is random), sorted by path with numeric indexes.
func TestProblemOrder(t *testing.T) {
	doc := loadFull(t)
	for _, i := range []int{2, 10, 11, 3} {
		ev(doc, i)["note"] = "/home/ana/x"
	}
	data := encodeDoc(t, doc)
	first := Map(data)
	if len(first) < 8 {
		t.Fatalf("only %d problems", len(first))
	}
	for range 5 {
		if again := Map(data); !slices.Equal(again, first) {
			t.Fatalf("order changed:\n%v\n%v", first, again)
		}
	}
	for i := 1; i < len(first); i++ {
		if comparePaths(first[i-1].Path, first[i].Path) > 0 {
			t.Errorf("%s before %s", first[i-1].Path, first[i].Path)
		}
	}
	if first[0].Path != "/events/2" {
		t.Errorf("first problem at %s, want /events/2", first[0].Path)
	}
}
