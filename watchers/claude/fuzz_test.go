package claude

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
)

// FuzzParse feeds arbitrary input, split into lines, through a parser
// (with a state round trip half-way) and through Identify and LooksLike.
// Nothing may panic, and a restored parser must still accept lines.
func FuzzParse(f *testing.F) {
	for _, path := range fixtures(f) {
		eachLine(f, path, func(line []byte) { f.Add(bytes.Clone(line)) })
	}
	if dir := corpusDirIfPresent(); dir != "" {
		files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
		for _, path := range files {
			n := 0
			eachLine(f, path, func(line []byte) {
				// A sample of each file keeps the seed corpus small.
				if n++; n%25 == 1 && len(line) < 64<<10 {
					f.Add(bytes.Clone(line))
				}
			})
		}
	}
	f.Add([]byte(`{"type":"assistant","message":{"content":[{"type":"tool_use","id":"t","name":"Bash","input":{"command":"git commit -m x"}}]}}` + "\n" +
		`{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"[main abc1234] x","is_error":false}]},"toolUseResult":{"gitOperation":{"commit":{"sha":"abc1234"}}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		LooksLike(data)
		src, err := Identify("/p/x/"+string(bytes.ToValidUTF8(data[:min(len(data), 40)], nil))+".jsonl", data)
		if err != nil {
			src = sourceFor("0a1b2c3d-0000-4000-8000-000000000001")
		}
		p := NewParser(src)
		var out []event.Event
		lines := bytes.Split(data, []byte("\n"))
		for i, line := range lines {
			out, _ = p.Line(line, out)
			if i == len(lines)/2 {
				st, err := p.State()
				if err != nil {
					t.Fatalf("state: %v", err)
				}
				if p, err = Restore(src, st); err != nil {
					t.Fatalf("restore own state: %v", err)
				}
			}
		}
		for i, e := range out {
			if !inFileLane(out, i, src) {
				t.Fatalf("event in lane %q, file in lane %q", e.Agent, src.Lane)
			}
		}
		Restore(src, data) // arbitrary state: error or parser, never a panic
	})
}

// BenchmarkParse measures single-threaded throughput over the real logs.
func BenchmarkParse(b *testing.B) {
	dir := corpusDirIfPresent()
	if dir == "" {
		b.Skip("corpus not present")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	var all [][][]byte
	var total int64
	for _, path := range files {
		data, err := os.ReadFile(path)
		if err != nil {
			b.Fatal(err)
		}
		total += int64(len(data))
		all = append(all, bytes.Split(data, []byte("\n")))
	}
	b.SetBytes(total)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		for i, lines := range all {
			src, _ := Identify(files[i], lines[0])
			p := NewParser(src)
			out := make([]event.Event, 0, 1024)
			for _, line := range lines {
				out, _ = p.Line(line, out[:0])
			}
		}
	}
}
