package main

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"index/suffixarray"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	_ "modernc.org/sqlite"
)

// The privacy audit's needles: distinctive pieces of the text the redaction
// contract keeps out of every output (prompts, replies, thinking, tool
// inputs and outputs, subagent prompts, summaries, titles, hook output,
// errors, Cursor bubbles), taken from the raw corpus logs.
//
// A needle is a phrase (three or more words of one line, at least
// minPhrase bytes), a word of at least minToken bytes that holds a
// character no identifier has (punctuation, quotes, operators, non-ASCII),
// or an identifier-like word of at least minWord bytes that is no id,
// number or file name. Nothing with a path separator is a needle, since a
// map keeps repo-relative paths. A candidate is dropped when it also
// occurs in the vocabulary: the strings outside the text fields of every
// agent's logs (tool, MCP, skill, model and subagent names, ids, working
// directories), the paths the text mentions, three-word shell verbs, the
// schemas' keys and enums and the exporters' own words, because a map or
// an export may show those.
const (
	minPhrase = 16
	minToken  = 12
	minWord   = 12
)

// origin says where a needle came from, for failure messages: the corpus
// file and the field (a path of schema keys, never of content).
type origin struct{ file, field string }

// needles collects one agent's needles and vocabulary.
type needles struct {
	agent  string
	text   map[string]origin
	vocab  bytes.Buffer
	fields map[string]int    // candidates per field, for the report
	repos  map[string]bool   // base names of the working directories
	dirs   map[string]string // absolute working directories, by the file naming them
}

func newNeedles(agent string) *needles {
	return &needles{agent: agent, text: map[string]origin{}, fields: map[string]int{}, repos: map[string]bool{}, dirs: map[string]string{}}
}

// textKeys are the fields whose whole value is text the contract forbids.
// Everything under them is text too, except the metadata keys below.
var textKeys = map[string]bool{
	"text": true, "thinking": true, "content": true, "input": true, "arguments": true,
	"output": true, "result": true, "toolUseResult": true, "stdout": true, "stderr": true,
	"summary": true, "title": true, "aiTitle": true, "description": true, "prompt": true,
	"instructions": true, "user_instructions": true, "developer_instructions": true,
	"base_instructions": true, "query": true, "queries": true, "reason": true,
	"aggregated_output": true, "formatted_output": true, "fullOutput": true,
	"last_agent_message": true, "lastPrompt": true, "planContent": true, "plan": true,
	"patch": true, "unified_diff": true, "diff": true, "replacement_history": true,
	"snippet": true, "addedLines": true, "addedBlocks": true, "richText": true,
	"rawText": true, "initText": true, "textDescription": true, "codeBlocks": true,
	"intermediateChunks": true, "humanChanges": true, "rawArgs": true, "params": true,
	"error": true, "errors": true, "changes": true, "explanation": true, "justification": true,
}

// codexTextKeys are text only in Codex logs: there `command` is an exec's
// argv; in Claude logs a `command` outside a tool input is a hook's
// command line, which names the hook.
var codexTextKeys = map[string]bool{"command": true, "cmd": true, "message": true}

// metaKeys are metadata even inside text: paths, models, subagent types,
// skills, servers, ids (and, by idKey, every key naming an id or a model).
var metaKeys = map[string]bool{
	"cwd": true, "workdir": true, "file_path": true, "filePath": true, "notebook_path": true,
	"path": true, "paths": true, "fsPath": true, "uri": true, "url": true, "external": true,
	"relativeWorkspacePath": true, "model": true, "modelName": true, "modelType": true, "subagent_type": true,
	"skill": true, "server": true, "server_name": true, "tool": true, "tool_name": true,
	"type": true, "role": true, "agent_type": true, "agentType": true, "id": true, "uuid": true,
	"call_id": true, "tool_use_id": true,
}

var idKey = regexp.MustCompile(`(?i)(^|_)id$|Id$|uuid$|model`)

// walk visits a decoded JSON value. field is the key path so far; text is
// true under a text field.
func (n *needles) walk(file string, v any, field string, text bool, codex bool) {
	switch v := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		// A "name" is metadata in a tool call (the tool's name, which a
		// map keeps) and text elsewhere (a Cursor conversation's name is
		// its title).
		call := false
		for _, k := range []string{"type", "input", "arguments", "params", "rawArgs", "toolCallId", "tool"} {
			if _, ok := v[k]; ok {
				call = true
			}
		}
		for _, k := range keys {
			child := v[k]
			if k == "name" && call {
				n.walk(file, child, field+".name", false, codex)
				continue
			}
			name := k
			if text && !textKeys[k] && !metaKeys[k] && !codexTextKeys[k] && !idKey.MatchString(k) {
				// A key inside text may itself be text (the questions
				// of an answers object): it is a needle source, and
				// the field path shows a placeholder.
				n.addText(file, field, k)
				name = "*"
			}
			path := field + "." + name
			switch {
			case metaKeys[k] || idKey.MatchString(k):
				if cwd, ok := child.(string); ok && (k == "cwd" || k == "workdir") {
					n.repos[filepath.Base(filepath.FromSlash(strings.ReplaceAll(cwd, `\`, "/")))] = true
					n.dirs[cwd] = file
				}
				n.walk(file, child, path, false, codex)
			case textKeys[k] || (codex && codexTextKeys[k]):
				if _, isObj := child.(map[string]any); k == "message" && isObj {
					n.walk(file, child, path, text, codex)
					continue
				}
				n.walk(file, child, path, true, codex)
			default:
				n.walk(file, child, path, text, codex)
			}
		}
	case []any:
		for _, c := range v {
			n.walk(file, c, field+"[]", text, codex)
		}
	case string:
		if t := strings.TrimSpace(v); len(t) > 1 && (t[0] == '{' || t[0] == '[') {
			var inner any
			if json.Unmarshal([]byte(t), &inner) == nil {
				n.walk(file, inner, field+"<json>", text, codex)
				return
			}
		}
		if text {
			n.addText(file, field, v)
		} else {
			n.vocab.WriteString(v)
			n.vocab.WriteByte(0)
		}
	}
}

// addText splits text into candidate needles.
func (n *needles) addText(file, field, s string) {
	for line := range strings.SplitSeq(s, "\n") {
		words := wordSpans(line)
		for _, w := range words {
			tok := line[w[0]:w[1]]
			if strings.ContainsAny(tok, `/\`) {
				// Paths a text mentions are vocabulary: a map may show
				// their repo-relative form.
				n.vocab.WriteString(tok)
				n.vocab.WriteByte(0)
				continue
			}
			// Punctuation at a word's edges is prose ("files:",
			// "(see", "done)."): only what is left is judged.
			if core := strings.TrimFunc(tok, edgePunct); distinctiveToken(core) || distinctiveWord(core) {
				n.candidate(core, file, field)
			}
		}
		if commandField(field) {
			n.verbs(line, words)
		}
		for i := 0; i < len(words); {
			j := i
			for j+1 < len(words) && words[j+1][0] == words[j][1]+1 && line[words[j][1]] == ' ' &&
				(j-i+1 < 3 || words[j][1]-words[i][0] < minPhrase) {
				j++
			}
			if j-i+1 >= 3 && words[j][1]-words[i][0] >= minPhrase {
				n.candidate(line[words[i][0]:words[j][1]], file, field)
			}
			i = j + 1
		}
	}
}

func (n *needles) candidate(s, file, field string) {
	if !utf8.ValidString(s) || distinctRunes(s) < 5 {
		return
	}
	if _, ok := n.text[s]; !ok {
		n.text[s] = origin{file, field}
		n.fields[field]++
	}
}

func edgePunct(r rune) bool { return strings.ContainsRune("()[]{}<>,.;:!?'\"`*", r) }

// commandField: a field that may hold a command line (a shell tool's
// input, an exec's command, a custom tool's input).
func commandField(field string) bool {
	return strings.Contains(field, "command") || strings.Contains(field, "cmd") ||
		strings.Contains(field, "input") || strings.Contains(field, "arguments") || strings.Contains(field, "Args")
}

// verbs adds to the vocabulary the three-word shell verbs a command line
// may hold: gh and glab "<noun> <verb>" and docker's management commands
// (gh pr view, docker compose up), which a map keeps. Other verbs have two
// words at most, and a phrase needle has three.
func (n *needles) verbs(line string, words [][2]int) {
	start := true
	for i, w := range words {
		tok := line[w[0]:w[1]]
		if start {
			n.vocab.WriteString(tok)
			if i+1 < len(words) {
				n.vocab.WriteString(" " + line[words[i+1][0]:words[i+1][1]])
			}
			n.vocab.WriteByte(0)
		}
		if start && i+2 < len(words) && (tok == "gh" || tok == "glab" || tok == "docker") {
			n.vocab.WriteString(tok + " " + line[words[i+1][0]:words[i+1][1]] + " " + line[words[i+2][0]:words[i+2][1]])
			n.vocab.WriteByte(0)
		}
		start = i == 0 || tok == "&&" || tok == "||" || tok == "|" || tok == ";" || tok == "&" ||
			strings.HasSuffix(tok, ";") || tok == "then" || tok == "do" || tok == "sudo" || tok == "exec"
	}
}

// wordSpans returns the byte spans of the whitespace-separated words.
func wordSpans(line string) [][2]int {
	var spans [][2]int
	start := -1
	for i, r := range line {
		if unicode.IsSpace(r) {
			if start >= 0 {
				spans = append(spans, [2]int{start, i})
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		spans = append(spans, [2]int{start, len(line)})
	}
	return spans
}

// distinctiveToken: long, and holding a character no identifier, name,
// version or id has.
func distinctiveToken(tok string) bool {
	if len(tok) < minToken || strings.Contains(tok, "://") {
		return false
	}
	for _, r := range tok {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		case strings.ContainsRune("_.-:@+", r):
		default:
			return true
		}
	}
	return false
}

// distinctiveWord: a long identifier-like word (a function name, a branch,
// a script) that is no id, number, version or file name; a map may keep
// such a word only as a name that the log's metadata holds too, which the
// vocabulary then drops.
func distinctiveWord(tok string) bool {
	if len(tok) < minWord || fileName.MatchString(tok) || hexish.MatchString(tok) {
		return false
	}
	digits := 0
	for _, r := range tok {
		if r >= '0' && r <= '9' {
			digits++
		}
	}
	return digits*4 < len(tok)
}

var (
	fileName = regexp.MustCompile(`\.[A-Za-z][A-Za-z0-9]{0,7}$`)
	hexish   = regexp.MustCompile(`^[0-9a-fA-F_:.-]+$`)
)

func distinctRunes(s string) int {
	seen := map[rune]bool{}
	for _, r := range s {
		seen[r] = true
	}
	return len(seen)
}

// final drops the candidates the vocabulary holds and returns the needles.
// extra is vocabulary that holds for every agent: the exporters' own
// words, and the other agents' vocabularies (a Codex prompt may name a
// Claude model that a Claude map rightly shows).
func (n *needles) final(extra []byte) map[string]origin {
	n.vocab.Write(extra)
	// Exports title a session "<agent> <repo> session" (AgentScope): names
	// only, but a prompt may well say "Claude Code session" too.
	for _, agent := range []string{"Claude Code", "Codex", "Cursor"} {
		n.vocab.WriteString(agent + " session\x00")
		for repo := range n.repos {
			n.vocab.WriteString(agent + " " + repo + " session\x00")
		}
	}
	idx := suffixarray.New(n.vocab.Bytes())
	out := map[string]origin{}
	for s, o := range n.text {
		if len(idx.Lookup([]byte(s), 1)) == 0 {
			out[s] = o
		}
	}
	return out
}

var drive = regexp.MustCompile(`^[A-Za-z]:[/\\]`)

// homes are the user's home directories in absolute paths.
var homes = regexp.MustCompile(`^(/Users/[^/]+|/home/[^/]+|[A-Za-z]:[/\\]Users[/\\][^/\\]+)`)

// absolute returns the needles of the working directories: a map holds
// repo-relative paths and buckets, never an absolute path, so neither a
// working directory nor the home directory it names (a user name) may
// reach an output. The parsers' carry-state keeps them (documented), and
// the audit leaves that out.
func (n *needles) absolute() map[string]origin {
	out := map[string]origin{}
	for dir, file := range n.dirs {
		if !strings.HasPrefix(dir, "/") && !drive.MatchString(dir) {
			continue
		}
		for _, s := range []string{dir, homes.FindString(dir)} {
			if len(s) >= minToken {
				out[s] = origin{file, "cwd"}
			}
		}
	}
	return out
}

// readLog feeds one corpus log to the needles: JSONL line by line, a whole
// JSON document, or a Cursor SQLite database.
func (n *needles) readLog(t *testing.T, path string) {
	t.Helper()
	base := filepath.Base(path)
	codex := n.agent == "codex"
	if strings.HasSuffix(path, ".vscdb") || strings.HasSuffix(path, ".db") {
		n.readSQLite(t, path)
		return
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if strings.HasSuffix(path, ".json") && json.Unmarshal(raw, &doc) == nil {
		n.walk(base, doc, "", false, codex)
		return
	}
	sc := bufio.NewScanner(bytes.NewReader(raw))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var rec any
		if json.Unmarshal(sc.Bytes(), &rec) == nil {
			n.walk(base, rec, "", false, codex)
		}
	}
}

// chatItem picks the ItemTable rows that hold conversations; the others
// (themes, editor state, model lists) are Cursor's settings, not logs.
var chatItem = regexp.MustCompile(`(?i)composer|aichat|aiService|chat`)

// readSQLite walks the conversation rows of a Cursor database: every value
// there is text but for its metadata keys.
func (n *needles) readSQLite(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&immutable=1")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	base := filepath.Base(path)
	ctx := context.Background()
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type='table'`)
	if err != nil {
		t.Fatalf("%s: %v", base, err)
	}
	var tables []string
	for rows.Next() {
		var name string
		rows.Scan(&name)
		tables = append(tables, name)
	}
	rows.Close()
	for _, table := range tables {
		var q string
		switch table {
		case "ItemTable", "cursorDiskKV":
			q = `SELECT key, value FROM ` + table
		case "meta":
			q = `SELECT key, value FROM meta`
		case "blobs":
			q = `SELECT id, data FROM blobs`
		default:
			continue
		}
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			t.Fatalf("%s %s: %v", base, table, err)
		}
		for rows.Next() {
			var key string
			var val []byte
			if rows.Scan(&key, &val) != nil {
				continue
			}
			if table == "ItemTable" && !chatItem.MatchString(key) {
				continue
			}
			if dec, err := hex.DecodeString(string(val)); err == nil && json.Valid(dec) {
				val = dec
			}
			prefix, _, _ := strings.Cut(key, ":")
			if table == "ItemTable" {
				prefix = key
			}
			var doc any
			if json.Unmarshal(val, &doc) == nil {
				n.walk(base, doc, table+" "+prefix, true, false)
			} else if utf8.Valid(val) {
				n.addText(base, table+" "+prefix, string(val))
			}
		}
		rows.Close()
	}
}
