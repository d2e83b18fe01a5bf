package codex

import (
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
)

// BenchmarkParse measures parsing throughput (MB/s) over the line-based
// corpus rollouts, the lines already in memory.
func BenchmarkParse(b *testing.B) {
	type file struct {
		lines [][]byte
	}
	var files []file
	var size int64
	for _, p := range corpusFiles(b) {
		if strings.HasSuffix(p, ".json") {
			continue
		}
		f := file{lines: readLines(b, p)}
		for _, l := range f.lines {
			size += int64(len(l)) + 1
		}
		files = append(files, f)
	}
	b.SetBytes(size)
	b.ReportAllocs()
	b.ResetTimer()
	var evs []event.Event
	for b.Loop() {
		for _, f := range files {
			p := NewParser(sourceOf("0190eeee-0000-7000-8000-000000000001"))
			evs = evs[:0]
			for _, l := range f.lines {
				evs, _ = p.Line(l, evs)
			}
		}
	}
}

// BenchmarkState measures the carry-state round trip the daemon does once
// per batch, on the state left by the largest corpus rollout.
func BenchmarkState(b *testing.B) {
	var lines [][]byte
	for _, p := range corpusFiles(b) {
		if l := readLines(b, p); len(l) > len(lines) {
			lines = l
		}
	}
	p := NewParser(sourceOf("0190eeee-0000-7000-8000-000000000001"))
	for _, l := range lines {
		p.Line(l, nil)
	}
	st, _ := p.State()
	b.SetBytes(int64(len(st)))
	b.ReportAllocs()
	for b.Loop() {
		q, err := Restore(p.src, st)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := q.State(); err != nil {
			b.Fatal(err)
		}
	}
}
