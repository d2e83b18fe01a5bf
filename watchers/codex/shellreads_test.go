package codex

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
)

// TestShellReadsInMap builds the parsed_cmd fixtures into maps: every file
// a shell command read is in files[] with its reads counted, the listed and
// searched directory is a hit, two failed reads of different files are not
// retries of each other, a repeat of the same read is, and cache writes
// are cw, not fresh input. The same session is written twice: with
// exec_command_end (older builds), and as 0.171 writes unified exec, with
// no exec_command_end, parsed_cmd in the CommandExecution item before the
// output and its cwd a file:// URI; there one more command's item comes
// only after its output and adds nothing.
func TestShellReadsInMap(t *testing.T) {
	for _, c := range []struct {
		file  string
		execs int
	}{
		{"rollout-2026-11-20T09-00-00-0190dddd-0000-7000-8000-00000000d011.jsonl", 5},
		{"rollout-2026-11-20T09-00-00-0190dddd-0000-7000-8000-00000000d012.jsonl", 6},
	} {
		t.Run(c.file, func(t *testing.T) { shellReads(t, c.file, c.execs) })
	}
}

func shellReads(t *testing.T, file string, wantExecs int) {
	res := parseFile(t, filepath.Join(fixtureDir(t), file))
	m, err := builder.Build(res.events, builder.Options{})
	if err != nil {
		t.Fatal(err)
	}
	raw, err := m.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Files []struct {
			Path  string `json:"path"`
			Reads int    `json:"reads"`
			Hits  int    `json:"hits"`
		} `json:"files"`
		Events []struct {
			Kind    string `json:"kind"`
			Seq     int    `json:"seq"`
			RetryOf *int   `json:"retryOf"`
			Targets []struct {
				File  *int   `json:"file"`
				Touch string `json:"touch"`
			} `json:"targets"`
			In int64 `json:"in"`
			CW int64 `json:"cw"`
			CR int64 `json:"cr"`
		} `json:"events"`
		Totals struct {
			Retries int     `json:"retries"`
			Cost    float64 `json:"costUsd"`
		} `json:"totals"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	files := map[string][2]int{}
	for _, f := range doc.Files {
		files[f.Path] = [2]int{f.Reads, f.Hits}
	}
	want := map[string][2]int{"src/a.go": {1, 0}, "src/b.go": {2, 0}, "src": {0, 2}}
	for p, w := range want {
		if files[p] != w {
			t.Errorf("files[%s] = reads/hits %v, want %v (files %+v)", p, files[p], w, doc.Files)
		}
	}
	if len(files) != len(want) {
		t.Errorf("files %+v, want only %v", doc.Files, want)
	}
	var execs, retries []int
	var in, cw, cr int64
	for _, e := range doc.Events {
		switch e.Kind {
		case "exec":
			execs = append(execs, e.Seq)
			if e.RetryOf != nil {
				retries = append(retries, *e.RetryOf)
			}
		case "llm":
			in, cw, cr = in+e.In, cw+e.CW, cr+e.CR
		}
	}
	// The third command (cat src/b.go again) repeats the second, not the
	// first (cat src/a.go).
	if len(execs) != wantExecs || len(retries) != 1 || retries[0] != execs[1] || doc.Totals.Retries != 1 {
		t.Errorf("execs %v, retryOf %v, totals.retries %d", execs, retries, doc.Totals.Retries)
	}
	if in != 2000 || cw != 12300 || cr != 35000 {
		t.Errorf("tokens in/cw/cr = %d/%d/%d, want 2000/12300/35000", in, cw, cr)
	}
	// gpt-5.5 at $5 in, $5 cache write, $0.50 read, $30 out.
	if want := (2000*5.0 + 12300*5 + 35000*0.5 + 870*30) / 1e6; doc.Totals.Cost < want-1e-6 || doc.Totals.Cost > want+1e-6 {
		t.Errorf("cost %v, want %v", doc.Totals.Cost, want)
	}
}

// TestQuietCommit: a git commit -q names no commit; the next git rev-parse
// HEAD prints its sha and confirms it, for the commit's own call.
func TestQuietCommit(t *testing.T) {
	exec := func(ts, id, cmd, out string) []string {
		args, _ := json.Marshal(map[string]string{"cmd": cmd})
		res, _ := json.Marshal(map[string]any{"output": out, "metadata": map[string]any{"exit_code": 0, "duration_seconds": 0.1}})
		call, _ := json.Marshal(map[string]any{"timestamp": ts, "type": "response_item", "payload": map[string]any{
			"type": "function_call", "name": "exec_command", "arguments": string(args), "call_id": id}})
		output, _ := json.Marshal(map[string]any{"timestamp": ts, "type": "response_item", "payload": map[string]any{
			"type": "function_call_output", "call_id": id, "output": string(res)}})
		return []string{string(call), string(output)}
	}
	lines := []string{metaLine}
	lines = append(lines, exec("2026-01-01T00:00:01.000Z", "call_c", "git commit -qam 'CANARY-msg'", "")...)
	lines = append(lines, exec("2026-01-01T00:00:02.000Z", "call_h", "git rev-parse HEAD", "0123456789abcdef0123456789abcdef01234567\n")...)
	var got []string
	for _, e := range run(t, lines...) {
		if e.Kind == event.KindResult && e.Result.Commit != nil {
			got = append(got, e.Result.CallID+" "+e.Result.Commit.Of+" "+e.Result.Commit.SHA)
		}
	}
	if want := "call_h call_c 0123456789abcdef0123456789abcdef01234567"; len(got) != 1 || got[0] != want {
		t.Errorf("commits %q, want %q", got, want)
	}
}
