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

// corpusStrings collects the string literals of the corpus lines, values
// and keys at every depth, quotes included: the texts the string loops
// step over, measure and decode.
func corpusStrings(b *testing.B) (strs [][]byte, size int64) {
	lines, _ := corpusLines(b)
	var walk func(v []byte)
	walk = func(v []byte) {
		switch v[0] {
		case '"':
			strs = append(strs, v)
			size += int64(len(v))
		case '{':
			ObjectValid(v, func(k, v []byte) bool { walk(v); return true })
		case '[':
			ArrayValid(v, func(e []byte) bool { walk(e); return true })
		}
	}
	for _, l := range lines {
		if Valid(l) {
			walk(l)
		}
	}
	return strs, size
}

// benchCorpusStrings runs read over every corpus string literal (quotes
// included), failing on one it refuses.
func benchCorpusStrings(b *testing.B, read func(s []byte) bool) {
	strs, size := corpusStrings(b)
	b.SetBytes(size)
	for b.Loop() {
		for _, s := range strs {
			if !read(s) {
				b.Fatal("invalid corpus string")
			}
		}
	}
}

// BenchmarkCorpusStr validates each corpus string as a walk does.
func BenchmarkCorpusStr(b *testing.B) {
	benchCorpusStrings(b, func(s []byte) bool { _, ok := str(s, 1); return ok })
}

// BenchmarkCorpusMeasuredStr validates and measures each corpus string,
// as a Measured member is read.
func BenchmarkCorpusMeasuredStr(b *testing.B) {
	benchCorpusStrings(b, func(s []byte) bool { _, _, ok := measuredStr(s, 1); return ok })
}

// BenchmarkCorpusStringLen measures each corpus string already validated.
func BenchmarkCorpusStringLen(b *testing.B) {
	benchCorpusStrings(b, func(s []byte) bool { _, _, ok := StringLen(s); return ok })
}

// BenchmarkCorpusValidString decodes each corpus string already validated.
func BenchmarkCorpusValidString(b *testing.B) {
	benchCorpusStrings(b, func(s []byte) bool { _, ok := ValidString(s); return ok })
}

// BenchmarkCorpusAppendString decodes each corpus string whole into one
// reused buffer, as the Codex parser decodes call arguments and outputs.
func BenchmarkCorpusAppendString(b *testing.B) {
	var buf []byte
	benchCorpusStrings(b, func(s []byte) bool {
		var ok bool
		buf, ok = AppendString(buf[:0], s, -1)
		return ok
	})
}
