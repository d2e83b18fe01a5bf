package codex

import (
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/internal/cite"
	"github.com/agentmap/agentmap/watchers"
)

// corpusDir returns ../shared/corpus/codex relative to the module root, or
// skips the test when the corpus is absent.
func corpusDir(t testing.TB) string {
	t.Helper()
	c, why := corpusPath()
	if why != "" {
		t.Skip(why)
	}
	return c
}

// corpusPath is corpusDir without the skip: why says what is missing.
func corpusPath() (dir, why string) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err.Error()
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", "module root not found"
		}
		dir = parent
	}
	c := filepath.Join(dir, "..", "shared", "corpus", "codex")
	if _, err := os.Stat(c); err != nil {
		return "", "corpus absent: " + c
	}
	return c, ""
}

// corpusFiles lists the corpus rollouts.
func corpusFiles(t testing.TB) []string {
	dir := corpusDir(t)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range ents {
		n := e.Name()
		if strings.HasSuffix(n, ".jsonl") || strings.HasSuffix(n, ".json") || strings.HasSuffix(n, ".zst") {
			files = append(files, filepath.Join(dir, n))
		}
	}
	sort.Strings(files)
	return files
}

// fixturesAndCorpus lists the fixtures and, when present, the corpus logs.
func fixturesAndCorpus(t *testing.T) []string {
	paths := fixtures(t)
	if _, why := corpusPath(); why == "" {
		paths = append(paths, corpusFiles(t)...)
	} else {
		t.Log("fixtures only:", why)
	}
	return paths
}

// parsed is the outcome of parsing one file.
type parsed struct {
	src     watchers.Source
	events  []event.Event
	errs    []error
	unknown map[string]int
	parser  *Parser
}

// parseFile parses a rollout the way `agentmap build` does: the line form
// through Line, the single-JSON form through ParseWhole.
func parseFile(t testing.TB, path string) parsed {
	t.Helper()
	f, err := OpenMaybeZstd(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if strings.HasSuffix(path, ".json") {
		evs, src, err := ParseWhole(f)
		var errs []error
		if err != nil {
			errs = append(errs, err)
		}
		return parsed{src: src, events: evs, errs: errs}
	}
	var res parsed
	var p *Parser
	_, err = watchers.ReadLines(f, 0, true, func(line []byte) error {
		if len(bytes.TrimSpace(line)) == 0 {
			return nil
		}
		if p == nil {
			src, err := Identify(path, line)
			if err != nil {
				res.errs = append(res.errs, err)
			}
			res.src = src
			p = NewParser(src)
		}
		var err error
		res.events, err = p.Line(line, res.events)
		if err != nil {
			res.errs = append(res.errs, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if p != nil {
		res.unknown = p.unknown
		res.parser = p
	}
	return res
}

// parseLines runs a fresh parser over lines.
func parseLines(t testing.TB, src watchers.Source, lines [][]byte) ([]event.Event, []error, *Parser) {
	t.Helper()
	p := NewParser(src)
	var evs []event.Event
	var errs []error
	for _, l := range lines {
		var err error
		evs, err = p.Line(l, evs)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return evs, errs, p
}

// readLines splits a file into its non-blank lines.
func readLines(t testing.TB, path string) [][]byte {
	t.Helper()
	var lines [][]byte
	for _, l := range citedLines(t, path) {
		lines = append(lines, l.B)
	}
	return lines
}

// citedLines is readLines with where each line is, for failure messages
// that name a line without quoting it.
func citedLines(t testing.TB, path string) []cite.Line {
	t.Helper()
	f, err := OpenMaybeZstd(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []cite.Line
	n, off := 0, int64(0)
	_, err = watchers.ReadLines(f, 0, true, func(line []byte) error {
		n++
		if len(bytes.TrimSpace(line)) > 0 {
			lines = append(lines, cite.At(path, n, off, bytes.Clone(line)))
		}
		off += int64(len(line)) + 1
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

func sourceOf(id string) watchers.Source { return watchers.Source{Agent: Agent, Session: id} }
