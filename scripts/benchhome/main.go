// Command benchhome lays out a HOME for catch-up benchmarks, in a
// temporary directory (never the repository):
//
//	benchhome -corpus ../shared/corpus -copies K -o HOME
//
// puts K copies of the corpus's Claude, Codex and Cursor JSONL logs where
// the agents keep them, every UUID in a copy replaced by one of its own
// (the same replacement in every file of that copy, so that subagent lanes
// still name their parent), so that K copies are K times the sessions;
//
//	benchhome -sessions N -o HOME
//
// writes N small synthetic Claude sessions (a prompt, a shell call and its
// result, an answer, with token usage), a hundred to a project directory.
// Files get a fixed old modification time: every session is quiet.
package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

var (
	uuidRE = regexp.MustCompile(`[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)
	old    = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
)

func main() {
	corpus := flag.String("corpus", "", "the shared corpus directory (with -copies)")
	copies := flag.Int("copies", 1, "copies of the corpus")
	sessions := flag.Int("sessions", 0, "synthetic Claude sessions instead of the corpus")
	out := flag.String("o", "", "the HOME to fill")
	flag.Parse()
	if *out == "" || (*sessions == 0 && *corpus == "") {
		fmt.Fprintln(os.Stderr, "usage: benchhome (-corpus DIR [-copies K] | -sessions N) -o HOME")
		os.Exit(2)
	}
	var files, bytes int64
	var err error
	if *sessions > 0 {
		files, bytes, err = synthetic(*out, *sessions)
	} else {
		files, bytes, err = corpusCopies(*corpus, *out, *copies)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchhome:", err)
		os.Exit(1)
	}
	fmt.Printf("%d %d\n", files, bytes)
}

func put(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return err
	}
	return os.Chtimes(path, old, old)
}

// renamer gives every UUID of one copy its own replacement.
type renamer struct{ salt string }

func (r renamer) id(u string) string {
	sum := sha256.Sum256([]byte(r.salt + strings.ToLower(u)))
	h := fmt.Sprintf("%x", sum[:16])
	return h[:8] + "-" + h[8:12] + "-4" + h[13:16] + "-8" + h[17:20] + "-" + h[20:32]
}

func (r renamer) all(b []byte) []byte {
	return uuidRE.ReplaceAllFunc(b, func(u []byte) []byte { return []byte(r.id(string(u))) })
}

// firstSessionID is the first "sessionId" a Claude log names.
func firstSessionID(b []byte) string {
	for _, line := range bytes.Split(b, []byte("\n")) {
		var rec struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(line, &rec) == nil && rec.SessionID != "" {
			return rec.SessionID
		}
	}
	return ""
}

func corpusCopies(corpus, home string, copies int) (files, size int64, err error) {
	logs := func(agent string) []string {
		var out []string
		for _, ext := range []string{"*.jsonl", "*.json"} {
			m, _ := filepath.Glob(filepath.Join(corpus, agent, ext))
			for _, p := range m {
				n := filepath.Base(p)
				if strings.HasSuffix(n, ".dump.json") || (agent != "codex" && strings.HasSuffix(n, ".json")) {
					continue // row dumps and registry records, not logs
				}
				out = append(out, p)
			}
		}
		return out
	}
	for c := 0; c < copies; c++ {
		r := renamer{salt: fmt.Sprintf("copy %d ", c)}
		write := func(rel string, b []byte) error {
			files++
			size += int64(len(b))
			return put(filepath.Join(home, filepath.FromSlash(rel)), b)
		}
		proj := fmt.Sprintf(".claude/projects/-w-app%03d/", c)
		for i, f := range logs("claude") {
			b, err := os.ReadFile(f)
			if err != nil {
				return files, size, err
			}
			b = r.all(b)
			sid := firstSessionID(b)
			base := filepath.Base(f)
			rel := proj + sid + ".jsonl"
			if _, lane, ok := strings.Cut(base, "__subagents__"); ok && sid != "" {
				rel = proj + sid + "/subagents/" + lane
			} else if sid == "" || exists(filepath.Join(home, filepath.FromSlash(rel))) {
				rel = fmt.Sprintf("%sf%02d.jsonl", proj, i)
			}
			if err := write(rel, b); err != nil {
				return files, size, err
			}
		}
		for i, f := range logs("codex") {
			b, err := os.ReadFile(f)
			if err != nil {
				return files, size, err
			}
			id := uuidRE.FindString(filepath.Base(f))
			if id == "" {
				id = fmt.Sprintf("%08d-0000-4000-8000-000000000000", i)
			}
			ext := filepath.Ext(f)
			rel := fmt.Sprintf(".codex/sessions/2026/01/02/rollout-2026-01-02T00-00-%02d-%s%s", i%60, r.id(id), ext)
			if err := write(rel, r.all(b)); err != nil {
				return files, size, err
			}
		}
		for i, f := range logs("cursor") {
			b, err := os.ReadFile(f)
			if err != nil {
				return files, size, err
			}
			u := r.id(fmt.Sprintf("%08d-1111-4111-8111-111111111111", i))
			rel := fmt.Sprintf(".cursor/projects/w-app%03d/agent-transcripts/%s/%s.jsonl", c, u, u)
			if err := write(rel, r.all(b)); err != nil {
				return files, size, err
			}
		}
	}
	return files, size, nil
}

func exists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// synthetic writes n small Claude sessions.
func synthetic(home string, n int) (files, size int64, err error) {
	base := time.Date(2025, 6, 1, 9, 0, 0, 0, time.UTC)
	var b []byte
	for i := 0; i < n; i++ {
		sid := fmt.Sprintf("5e55%04x-%04x-4000-8000-%012x", i>>16, i&0xffff, i)
		t := base.Add(time.Duration(i) * time.Minute)
		ts := func(s int) string { return t.Add(time.Duration(s) * time.Second).Format("2006-01-02T15:04:05.000Z") }
		env := fmt.Sprintf(`"sessionId":%q,"cwd":"/home/dev/projects/app%d","version":"2.1.170","isSidechain":false`, sid, i%20)
		b = b[:0]
		b = fmt.Appendf(b, `{"type":"user",%s,"uuid":"u%d-1","timestamp":%q,"message":{"role":"user","content":"run the tests and fix what fails"}}`+"\n", env, i, ts(0))
		b = fmt.Appendf(b, `{"type":"assistant",%s,"uuid":"u%d-2","timestamp":%q,"requestId":"req_%d_1","message":{"id":"msg_%d_1","model":"claude-sonnet-4-5","role":"assistant","stop_reason":"tool_use","content":[{"type":"tool_use","id":"toolu_%d_1","name":"Bash","input":{"command":"go test ./..."}}],"usage":{"input_tokens":12,"cache_creation_input_tokens":900,"cache_read_input_tokens":15000,"output_tokens":80}}}`+"\n", env, i, ts(2), i, i, i)
		b = fmt.Appendf(b, `{"type":"user",%s,"uuid":"u%d-3","timestamp":%q,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d_1","content":"ok  \tapp\t0.31s\nFAIL\tapp/api\t0.12s","is_error":false}]}}`+"\n", env, i, ts(5), i)
		b = fmt.Appendf(b, `{"type":"assistant",%s,"uuid":"u%d-4","timestamp":%q,"requestId":"req_%d_2","message":{"id":"msg_%d_2","model":"claude-sonnet-4-5","role":"assistant","stop_reason":"tool_use","content":[{"type":"tool_use","id":"toolu_%d_2","name":"Read","input":{"file_path":"/home/dev/projects/app%d/api/handler.go"}}],"usage":{"input_tokens":8,"cache_creation_input_tokens":300,"cache_read_input_tokens":15900,"output_tokens":60}}}`+"\n", env, i, ts(7), i, i, i, i%20)
		b = fmt.Appendf(b, `{"type":"user",%s,"uuid":"u%d-5","timestamp":%q,"message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_%d_2","content":"package api\n\nfunc Handle() {}\n"}]}}`+"\n", env, i, ts(8), i)
		b = fmt.Appendf(b, `{"type":"assistant",%s,"uuid":"u%d-6","timestamp":%q,"requestId":"req_%d_3","message":{"id":"msg_%d_3","model":"claude-sonnet-4-5","role":"assistant","stop_reason":"end_turn","content":[{"type":"text","text":"The handler is fixed."}],"usage":{"input_tokens":5,"cache_creation_input_tokens":200,"cache_read_input_tokens":16200,"output_tokens":40}}}`+"\n", env, i, ts(12), i, i)
		p := filepath.Join(home, ".claude", "projects", fmt.Sprintf("-home-dev-projects-app%05d", i/100), sid+".jsonl")
		if err := put(p, b); err != nil {
			return files, size, err
		}
		files++
		size += int64(len(b))
	}
	return files, size, nil
}
