package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/state/mapstore"
)

// treeWriter returns put, which writes a file at a path below dir
// (making its directories) and returns the path, and read, which reads a
// file whole; both fail the test on an error.
func treeWriter(t *testing.T, dir string) (put func(rel string, data []byte) string, read func(string) []byte) {
	put = func(rel string, data []byte) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, data, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	read = func(p string) []byte {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	return put, read
}

// streamInputs lays out logs whose sessions span several files: a Claude
// log with nested subagent files, a Claude log cut in two by a
// copy-truncate rotation (given live file first), a Codex rollout with a
// spawned child rollout, and the corpus when it is there.
func streamInputs(t *testing.T) []string {
	t.Helper()
	files := spanningLogs(t, t.TempDir(), "claude/", "rot/", "codex/")
	if _, err := os.Stat(filepath.Join("..", "..", "..", "shared", "corpus")); err == nil {
		for _, agent := range []string{"claude", "codex", "cursor"} {
			files = append(files, corpusLogs(t, agent)...)
		}
	}
	return files
}

// spanningLogs writes the logs of sessions that span several files below
// dir, in the directories named (claude: a main log and its subagent
// files; rotated: the two halves of a rotation; codex: a child rollout and
// its parent), and returns the logs one gives for them: the main log, the
// live half then the older one, the child then its parent.
func spanningLogs(t *testing.T, dir, claude, rotated, codex string) []string {
	put, read := treeWriter(t, dir)
	// Subagents: the main log only; its lanes are found beside it.
	const main = "0a1b2c3d-0000-4000-8000-000000000002"
	files := []string{put(claude+main+".jsonl", read("../../testdata/claude/subagents.jsonl"))}
	subs, _ := filepath.Glob("../../testdata/claude/" + main + "/subagents/*")
	for _, s := range subs {
		put(claude+main+"/subagents/"+filepath.Base(s), read(s))
	}
	// A rotation: the older half in .1, given after the live half.
	lines := strings.SplitAfter(string(read(fixture)), "\n")
	half := len(lines) / 2
	const log = "11111111-0000-4000-8000-000000000001.jsonl"
	live := put(rotated+log, []byte(strings.Join(lines[half:], "")))
	old := put(rotated+log+".1", []byte(strings.Join(lines[:half], "")))
	files = append(files, live, old)
	// A Codex child rollout, given before its parent.
	parentFile := "../../testdata/codex/rollout-2025-11-07T09-00-00-019a5baa-0000-7000-8000-00000000c003.jsonl"
	plines := strings.SplitAfter(string(read(parentFile)), "\n")
	const child = "019a5baa-0000-7000-8000-0000000000c9"
	meta := `{"timestamp":"2025-11-07T00:00:00.000Z","type":"session_meta","payload":{"id":"` + child +
		`","timestamp":"2025-11-07T00:00:00.000Z","cwd":"/Users/dev/lotto","source":{"subagent":{"thread_spawn":{"parent_thread_id":"019a5baa-0000-7000-8000-00000000c003","depth":1}}}}}` + "\n"
	files = append(files, put(codex+"rollout-2025-11-07T09-01-00-"+child+".jsonl", []byte(meta+strings.Join(plines[1:], ""))))
	return append(files, put(codex+filepath.Base(parentFile), read(parentFile)))
}

// The streamed build (a pool of workers, maps written in batches) writes
// the same maps, in the same order, as reading every session first and
// building them one by one: grouping of lanes, rotations and children
// included.
func TestBuildStreamsAsCollected(t *testing.T) {
	files := streamInputs(t)
	sessions, failed := collect(context.Background(), files, "auto", &bytes.Buffer{})
	if failed {
		t.Fatal("the inputs failed to read")
	}
	opts := builder.Options{PathMode: "relative", EventCap: builder.DefaultEventCap, Producer: producer()}
	want := map[string][]byte{} // file name -> gzipped map, the later session of a name winning
	var order []string          // content hashes, in session order
	lanes := map[string]int{}
	for _, s := range sessions {
		m, err := buildMap(s, opts)
		if errors.Is(err, builder.ErrEmptySession) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		gz, err := m.Gzip()
		if err != nil {
			t.Fatal(err)
		}
		want[mapstore.FileName(m.NativeID())] = gz
		order = append(order, m.ContentHash)
		lanes[m.NativeID()] = len(m.Agents)
	}
	if lanes["0a1b2c3d-0000-4000-8000-000000000002"] < 2 || lanes["019a5baa-0000-7000-8000-00000000c003"] < 2 {
		t.Fatalf("the subagent files or the child rollout did not become lanes: %v", lanes)
	}

	out := t.TempDir()
	code, _, stderr := run(t, append([]string{"build", "-o", out}, files...)...)
	if code != exitOK && code != exitFailure {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got, _ := filepath.Glob(filepath.Join(out, "*.json.gz"))
	if len(got) != len(want) {
		t.Errorf("%d maps written, %d expected", len(got), len(want))
	}
	for name, gz := range want {
		b, err := os.ReadFile(filepath.Join(out, name))
		if err != nil || !bytes.Equal(b, gz) {
			t.Errorf("%s: the streamed map differs from the collected one (%v)", name, err)
		}
	}

	code, stdout, _ := run(t, append([]string{"build", "-o", "-"}, files...)...)
	if code != exitOK && code != exitFailure {
		t.Fatalf("exit %d", code)
	}
	dec := json.NewDecoder(strings.NewReader(stdout))
	var printed []string
	for dec.More() {
		var m struct {
			ContentHash string `json:"contentHash"`
		}
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		printed = append(printed, m.ContentHash)
	}
	if strings.Join(printed, " ") != strings.Join(order, " ") {
		t.Errorf("-o - printed %d maps out of session order (want %d)", len(printed), len(order))
	}
}
