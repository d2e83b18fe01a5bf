package codex

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/codex")

// fixtureDir is testdata/codex at the module root.
func fixtureDir(t testing.TB) string {
	t.Helper()
	return filepath.Join("..", "..", "testdata", "codex")
}

// fixtures lists the rollout fixtures, one per form.
func fixtures(t testing.TB) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join(fixtureDir(t), "rollout-*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, p := range paths {
		if !strings.HasSuffix(p, ".golden.json") {
			out = append(out, p)
		}
	}
	if len(out) == 0 {
		t.Fatal("no fixtures")
	}
	return out
}

type golden struct {
	Source  watchers.Source `json:"source"`
	Errors  []string        `json:"errors,omitempty"`
	Unknown map[string]int  `json:"unknown,omitempty"`
	Events  []event.Event   `json:"events"`
}

// TestGolden compares the events of each fixture form (2026 wrapper with
// unified exec, MCP, spawn and resume; 0.55 wrapper with counts before
// items; legacy bare items; single JSON; spawned child with replay) with
// its golden file. Run with -update to rewrite them.
func TestGolden(t *testing.T) {
	for _, path := range fixtures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			res := parseFile(t, path)
			g := golden{Source: res.src, Unknown: res.unknown, Events: res.events}
			for _, err := range res.errs {
				g.Errors = append(g.Errors, err.Error())
			}
			got, err := json.MarshalIndent(g, "", " ")
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, '\n')
			gpath := path + ".golden.json"
			if *update {
				if err := os.WriteFile(gpath, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(gpath)
			if err != nil {
				t.Fatalf("%v (run with -update)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("events differ from %s (run with -update to accept):\n%s", filepath.Base(gpath), firstDiff(got, want))
			}
			if len(res.errs) > 0 || len(res.unknown) > 0 {
				t.Errorf("errors %v, unknown %v", res.errs, res.unknown)
			}
			checkEvents(t, res.events)
		})
	}
}

// firstDiff shows the first differing line of two texts.
func firstDiff(a, b []byte) string {
	al, bl := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return "line " + itoaTest(i+1) + ":\n got: " + al[i] + "\nwant: " + bl[i]
		}
	}
	return "lengths differ"
}

func itoaTest(n int) string { b, _ := json.Marshal(n); return string(b) }
