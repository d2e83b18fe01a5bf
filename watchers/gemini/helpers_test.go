package gemini_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/watchers"
	"github.com/agentmap/agentmap/watchers/agents"
	"github.com/agentmap/agentmap/watchers/gemini"
)

// realDir lays the chats the real Gemini CLI wrote in the end-to-end suite
// (testdata/real, see doc.go) out under a temporary ~/.gemini, with the
// project root the client records beside them pointing at a git
// repository, and returns the chats directory.
func realDir(t testing.TB) string {
	t.Helper()
	home := t.TempDir()
	repo := filepath.Join(home, "src", "gemini-demo")
	if err := os.MkdirAll(filepath.Join(repo, ".git"), 0o700); err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(home, ".gemini", "tmp", "gemini-demo")
	chats := filepath.Join(proj, "chats")
	if err := os.MkdirAll(chats, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(proj, ".project_root"), []byte(repo+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join("testdata", "real", "tmp", "gemini-demo", "chats")
	ents, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(chats, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return chats
}

func agent(t testing.TB) agents.Agent {
	a, ok := agents.ByName(gemini.Agent)
	if !ok {
		t.Fatal("gemini is not registered")
	}
	return a
}

// parse reads one chat file the way `agentmap build` does.
func parse(t testing.TB, path string) ([]event.Event, watchers.Source) {
	t.Helper()
	a := agent(t)
	first, err := agents.FirstLine(path)
	if err != nil {
		t.Fatal(err)
	}
	src, err := a.Identify(path, first)
	if err != nil {
		t.Fatal(err)
	}
	evs, st, err := agents.ParseFile(path, a, src, watchers.DefaultMaxLine)
	if err != nil {
		t.Fatal(err)
	}
	if st.Skipped > 0 {
		t.Errorf("%s: %d lines skipped", filepath.Base(path), st.Skipped)
	}
	return evs, src
}

func build(t testing.TB, evs []event.Event) *builder.Map {
	t.Helper()
	m, err := builder.Build(evs, builder.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func canonical(t testing.TB, m *builder.Map) []byte {
	t.Helper()
	b, err := m.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// lines splits a file into its lines without newlines.
func lines(b []byte) [][]byte {
	var out [][]byte
	for _, l := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			out = append(out, l)
		}
	}
	return out
}
