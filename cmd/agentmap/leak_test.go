package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestMapsCarryNoCanary builds maps from the fixtures that carry a canary in
// every text-bearing field of each agent's logs (prompts, replies, thinking,
// tool inputs and outputs, commands, patch bodies, subagent prompts, hook
// output, errors, images, summaries, titles), in all three path modes, and
// checks the gzip-decoded bytes of every map: none may hold the canary.
func TestMapsCarryNoCanary(t *testing.T) {
	td := filepath.Join("..", "..", "testdata")
	// fold: the fixture also writes its canaries in lower case, so the
	// check ignores case (the Claude fixture's lane is an id, "acanary1",
	// which a map rightly keeps).
	inputs := []struct {
		files []string
		fold  bool
	}{
		{[]string{filepath.Join(td, "claude", "canary.jsonl"),
			filepath.Join(td, "claude", "0a1b2c3d-0000-4000-8000-0000000000cc", "subagents", "agent-acanary1.jsonl")}, false},
		{[]string{filepath.Join(td, "codex", "leak.jsonl")}, false},
		{[]string{filepath.Join(td, "codex", "leak-single.json")}, false},
		{[]string{filepath.Join(td, "cursor", "transcript.jsonl"), filepath.Join(td, "cursor", "subagent.jsonl")}, true},
	}
	canary := []byte("CANARY")
	for _, input := range inputs {
		in := input.files
		norm := func(b []byte) []byte { return b }
		if input.fold {
			norm = bytes.ToUpper
		}
		if _, err := os.Stat(in[0]); err != nil {
			t.Errorf("fixture %s: %v", in[0], err)
			continue
		}
		var raw []byte
		for _, p := range in {
			b, _ := os.ReadFile(p)
			raw = append(raw, b...)
		}
		if bytes.Count(norm(raw), canary) < 5 {
			t.Errorf("fixture %s holds too few canaries to prove anything", in[0])
		}
		for _, mode := range []string{"relative", "dirs_only", "hashed"} {
			out := t.TempDir()
			args := append([]string{"build", "--path-mode", mode, "--hash-key-file", filepath.Join(out, "key"), "-o", out}, in...)
			if code, _, stderr := run(t, args...); code != exitOK {
				t.Fatalf("%v: exit %d: %s", in, code, stderr)
			}
			maps, _ := filepath.Glob(filepath.Join(out, "*.json.gz"))
			if len(maps) == 0 {
				t.Fatalf("%v: no map", in)
			}
			for _, m := range maps {
				f, err := os.Open(m)
				if err != nil {
					t.Fatal(err)
				}
				zr, err := gzip.NewReader(f)
				if err != nil {
					t.Fatal(err)
				}
				body, err := io.ReadAll(zr)
				f.Close()
				if err != nil {
					t.Fatal(err)
				}
				if i := bytes.Index(norm(body), canary); i >= 0 {
					lo, hi := max(0, i-60), min(len(body), i+40)
					t.Errorf("%s (%s): canary in the map: …%s…", filepath.Base(in[0]), mode, body[lo:hi])
				}
			}
		}
	}
}
