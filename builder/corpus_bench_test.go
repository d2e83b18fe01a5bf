package builder

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/claude"
	"github.com/agentmap/agentmap/watchers/codex"
	"github.com/agentmap/agentmap/watchers/cursor"
)

// corpusSessions parses the JSONL logs of ../shared/corpus with the real
// parsers and groups their events by session (a subagent file's events
// join its parent's, as in a scan), so that the flush benchmark builds the
// maps a user's logs give rather than a synthetic shape.
func corpusSessions(b testing.TB) [][]event.Event {
	b.Helper()
	_, file, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(file), "..", "..", "shared", "corpus")
	if _, err := os.Stat(dir); err != nil {
		b.Skip("corpus not present (../shared/corpus)")
	}
	type agent struct {
		name     string
		identify func(string, []byte) (watchers.Source, error)
		parser   func(watchers.Source) watchers.Parser
	}
	agents := []agent{
		{"claude", claude.Identify, func(s watchers.Source) watchers.Parser { return claude.NewParser(s) }},
		{"codex", codex.Identify, func(s watchers.Source) watchers.Parser { return codex.NewParser(s) }},
		{"cursor", cursor.Identify, func(s watchers.Source) watchers.Parser { return cursor.NewParser(s) }},
	}
	bySession := map[string][]event.Event{}
	for _, a := range agents {
		files, _ := filepath.Glob(filepath.Join(dir, a.name, "*.jsonl"))
		for _, path := range files {
			data, err := os.ReadFile(path)
			if err != nil {
				b.Fatal(err)
			}
			lines := bytes.Split(data, []byte("\n"))
			src, err := a.identify(path, lines[0])
			if err != nil {
				continue
			}
			p := a.parser(src)
			var evs []event.Event
			for _, line := range lines {
				if len(line) > 0 {
					evs, _ = p.Line(line, evs)
				}
			}
			key := a.name + "/" + src.Session
			bySession[key] = append(bySession[key], evs...)
		}
	}
	keys := make([]string, 0, len(bySession))
	for k := range bySession {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out [][]event.Event
	for _, k := range keys {
		if _, err := Build(bySession[k], Options{}); err == nil {
			out = append(out, bySession[k])
		} else if !errors.Is(err, ErrEmptySession) && !errors.Is(err, ErrNoSession) {
			b.Fatalf("%s: %v", k, err)
		}
	}
	if len(out) == 0 {
		b.Skip("no session of the corpus builds a map")
	}
	return out
}

// reportCPU reports the process's CPU time per op since start: on a
// machine shared with other work a benchmark's wall time swings with the
// load, its CPU time much less.
func reportCPU(b *testing.B, start int64) {
	if now, ok := processCPU(); ok && b.N > 0 {
		b.ReportMetric(float64(now-start)/float64(b.N), "cpu-ns/op")
	}
}

// BenchmarkCorpusFlush is what a scan's flush does for every session of
// the corpus: Build, then the gzipped canonical bytes it stores, then
// Release. It reports maps per second and the MB/s of canonical JSON
// produced.
func BenchmarkCorpusFlush(b *testing.B) {
	sessions := corpusSessions(b)
	var canonBytes int64
	for _, evs := range sessions {
		m, _ := Build(evs, Options{})
		c, _ := m.Canonical()
		canonBytes += int64(len(c))
	}
	b.SetBytes(canonBytes)
	b.ReportAllocs()
	cpu, _ := processCPU()
	for b.Loop() {
		for _, evs := range sessions {
			m, err := Build(evs, Options{})
			if err != nil {
				b.Fatal(err)
			}
			if _, err := m.Gzip(); err != nil {
				b.Fatal(err)
			}
			m.Release() // as the daemon's mapper does
		}
	}
	b.ReportMetric(float64(len(sessions))*float64(b.N)/b.Elapsed().Seconds(), "maps/s")
	reportCPU(b, cpu)
}

// BenchmarkCorpusEventJSON is the JSON half of what the state database
// does with each batch a scan parses (state.EncodeEvents): the names
// checked, the events written as JSON. It reports the MB/s of JSON.
func BenchmarkCorpusEventJSON(b *testing.B) {
	sessions := corpusSessions(b)
	var n int64
	for _, evs := range sessions {
		n += int64(len(event.AppendJSON(nil, evs)))
	}
	b.SetBytes(n)
	b.ReportAllocs()
	var buf []byte
	cpu, _ := processCPU()
	for b.Loop() {
		for _, evs := range sessions {
			buf = event.AppendJSON(buf[:0], event.Scrub(evs))
		}
	}
	reportCPU(b, cpu)
}
