package claude

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
)

var update = flag.Bool("update", false, "rewrite the golden event streams in testdata/claude")

// fixtureDir is the module's testdata/claude.
func fixtureDir() string { return filepath.Join("..", "..", "testdata", "claude") }

// fixtures lists our own transcripts, subagent files included.
func fixtures(t testing.TB) []string {
	var files []string
	err := filepath.WalkDir(fixtureDir(), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, ".jsonl") {
			files = append(files, path)
		}
		return err
	})
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	return files
}

// parseFixture routes and parses a fixture the way the daemon would,
// meta.json included.
func parseFixture(t testing.TB, path string) ([]event.Event, []error) {
	t.Helper()
	src, err := Identify(path, firstLine(t, path))
	if err != nil {
		t.Fatalf("%s: identify: %v", path, err)
	}
	p := NewParser(src)
	if m, ok := ReadLaneMeta(path); ok {
		p.SetLaneMeta(m)
	}
	var out []event.Event
	var errs []error
	eachLine(t, path, func(line []byte) {
		var err error
		if out, err = p.Line(line, out); err != nil {
			errs = append(errs, err)
		}
	})
	return out, errs
}

// render writes one event per line, so that golden diffs stay readable.
func render(t testing.TB, src any, events []event.Event) []byte {
	var buf bytes.Buffer
	head, _ := json.Marshal(src)
	buf.Write(head)
	buf.WriteByte('\n')
	for _, e := range events {
		b, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}

func TestGolden(t *testing.T) {
	for _, path := range fixtures(t) {
		name, _ := filepath.Rel(fixtureDir(), path)
		t.Run(name, func(t *testing.T) {
			src, err := Identify(path, firstLine(t, path))
			if err != nil {
				t.Fatal(err)
			}
			events, errs := parseFixture(t, path)
			for _, err := range errs {
				t.Errorf("line error: %v", err)
			}
			got := render(t, src, events)
			golden := strings.TrimSuffix(path, ".jsonl") + ".golden"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("events differ from %s (run with -update after checking):\n got: %s\nwant: %s", golden, got, want)
			}
		})
	}
}
