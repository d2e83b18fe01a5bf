package jsonscan

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// corpusLines reads the lines of the Claude Code and Codex corpus logs
// (../shared/corpus beside the module), for comparing ways of reading
// them; benchmarks skip when it is absent.
func corpusLines(b *testing.B) (lines [][]byte, size int64) {
	_, file, _, _ := runtime.Caller(0)
	root := filepath.Join(filepath.Dir(file), "..", "..", "..", "shared", "corpus")
	for _, agent := range []string{"claude", "codex"} {
		paths, _ := filepath.Glob(filepath.Join(root, agent, "*.jsonl"))
		for _, p := range paths {
			f, err := os.Open(p)
			if err != nil {
				b.Fatal(err)
			}
			r := bufio.NewReaderSize(f, 1<<20)
			for {
				line, err := r.ReadBytes('\n')
				if line = bytes.TrimSpace(line); len(line) > 0 {
					lines = append(lines, line)
					size += int64(len(line))
				}
				if err != nil {
					break
				}
			}
			f.Close()
		}
	}
	if len(lines) == 0 {
		b.Skip("corpus not present")
	}
	return lines, size
}

// The benchmarks below read each corpus line's top-level members the way
// a parser does: validate the line and get the raw value of each member.
// BenchmarkCorpusJSONTokenizer (jsontext_bench_test.go, built with
// GOEXPERIMENT=jsonv2) does the same with encoding/json/v2's tokenizer.

func BenchmarkCorpusWalk(b *testing.B) {
	lines, size := corpusLines(b)
	b.SetBytes(size)
	n := 0
	for b.Loop() {
		for _, l := range lines {
			Object(l, func(k, v []byte) bool { n += len(v); return true })
		}
	}
}

// BenchmarkCorpusEncodingJSON is what the parsers did before: the line
// validated and decoded by encoding/json into raw members.
func BenchmarkCorpusEncodingJSON(b *testing.B) {
	lines, size := corpusLines(b)
	b.SetBytes(size)
	n := 0
	for b.Loop() {
		for _, l := range lines {
			var m map[string]json.RawMessage
			if json.Unmarshal(l, &m) == nil {
				for _, v := range m {
					n += len(v)
				}
			}
		}
	}
}

// BenchmarkCorpusValid is the validation alone: every string scanned for
// its closing quote, escapes and control bytes checked.
func BenchmarkCorpusValid(b *testing.B) {
	lines, size := corpusLines(b)
	b.SetBytes(size)
	for b.Loop() {
		for _, l := range lines {
			if !Valid(l) {
				b.Fatal("invalid corpus line")
			}
		}
	}
}
