package cursor

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers"
)

// moduleRoot walks up from the package directory to go.mod.
func moduleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		up := filepath.Dir(dir)
		if up == dir {
			t.Fatal("go.mod not found")
		}
		dir = up
	}
}

// corpusDir is ../shared/corpus/cursor next to the module; tests that read
// the real-world corpus skip when it is absent.
func corpusDir(t testing.TB) string {
	t.Helper()
	d := filepath.Join(moduleRoot(t), "..", "shared", "corpus", "cursor")
	if _, err := os.Stat(d); err != nil {
		t.Skip("corpus not present:", d)
	}
	return d
}

// parseAll runs a parser over every line of data in one go.
func parseAll(t testing.TB, src watchers.Source, data []byte) (events []event.Event, errs int, p *Parser) {
	t.Helper()
	p = NewParser(src)
	_, err := watchers.ReadLines(bytes.NewReader(data), 0, true, func(line []byte) error {
		var err error
		events, err = p.Line(line, events)
		if err != nil {
			errs++
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return events, errs, p
}

// watchersSource routes a test file to a main session named by its stem.
func watchersSource(path string) watchers.Source {
	return watchers.Source{Agent: "cursor", Session: strings.TrimSuffix(filepath.Base(path), ".jsonl")}
}

// corpusPathIfAny is the corpus directory, or "" when absent.
func corpusPathIfAny(t testing.TB) string {
	d := filepath.Join(moduleRoot(t), "..", "shared", "corpus", "cursor")
	if _, err := os.Stat(d); err != nil {
		return ""
	}
	return d
}

func readIfExists(dir, name string) ([]byte, error) {
	return os.ReadFile(filepath.Join(dir, name))
}
