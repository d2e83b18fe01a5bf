package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/builder/validate"
)

// corpusDir is the shared corpus of real logs, read in place.
func corpusDir(t testing.TB) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "..", "shared", "corpus"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("corpus not available at %s: skipping", dir)
	}
	return dir
}

// corpusLogs lists the log inputs of one agent's corpus folder: everything
// but the JSON row dumps and notes, which are shapes for parser tests.
func corpusLogs(t testing.TB, agent string) []string {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(corpusDir(t), agent))
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, e := range entries {
		n := e.Name()
		if strings.HasSuffix(n, ".dump.json") || strings.HasSuffix(n, ".md") ||
			(agent != "codex" && strings.HasSuffix(n, ".json")) { // Claude's sessions/<pid>.json is a registry record, not a log

			continue
		}
		files = append(files, filepath.Join(corpusDir(t), agent, n))
	}
	sort.Strings(files)
	return files
}

// TestCorpusBuildsValidMaps is the end-to-end check of parsers and builder
// on real logs: every corpus file of every agent yields maps that pass the
// schema and the redaction rules, with the map invariants holding.
func TestCorpusBuildsValidMaps(t *testing.T) {
	for _, agent := range []string{"claude", "codex", "cursor"} {
		t.Run(agent, func(t *testing.T) {
			files := corpusLogs(t, agent)
			var stderr bytes.Buffer
			sessions, failed := collect(context.Background(), files, "auto", &stderr)
			if failed {
				t.Errorf("inputs failed:\n%s", stderr.String())
			}
			if len(sessions) == 0 {
				t.Fatal("no sessions")
			}
			for _, mode := range []redact.Mode{redact.ModeRelative, redact.ModeDirsOnly, redact.ModeHashed} {
				opts := builder.Options{PathMode: mode, HashKey: []byte("0123456789abcdef0123456789abcdef"), Producer: "agentmap test"}
				for _, s := range sessions {
					m, err := buildMap(s, opts)
					if errors.Is(err, builder.ErrEmptySession) {
						continue // a session with no events has no map
					}
					if err != nil {
						t.Fatalf("%s: %v", s.native, err)
					}
					gz, err := m.Gzip()
					if err != nil {
						t.Fatal(err)
					}
					for _, p := range validate.Map(gz) {
						t.Errorf("%s %s (%s): %s: %s: %s", agent, s.native, mode, p.Path, p.Rule, p.Message)
					}
					canon, err := m.Canonical()
					if err != nil {
						t.Fatal(err)
					}
					checkInvariants(t, agent+" "+s.native, canon)
				}
			}
			t.Logf("%s: %d files, %d sessions", agent, len(files), len(sessions))
		})
	}
}

// TestCorpusSubagentLanes checks that every Claude subagent file of the
// corpus shows up as a lane of its parent's map.
func TestCorpusSubagentLanes(t *testing.T) {
	files := corpusLogs(t, "claude")
	laneFile := regexp.MustCompile(`__subagents__agent-([0-9a-zA-Z-]+)\.jsonl$`)
	sessions, _ := collect(context.Background(), files, "auto", io.Discard)
	lanes := map[string]bool{}
	for _, s := range sessions {
		m, err := buildMap(s, builder.Options{Producer: "agentmap test"})
		if errors.Is(err, builder.ErrEmptySession) {
			continue // a session with no events has no map
		}
		if err != nil {
			t.Fatal(err)
		}
		canon, _ := m.Canonical()
		var doc struct {
			Agents []struct{ ID string } `json:"agents"`
		}
		if err := json.Unmarshal(canon, &doc); err != nil {
			t.Fatal(err)
		}
		for _, a := range doc.Agents {
			lanes[a.ID] = true
		}
	}
	n := 0
	for _, f := range files {
		mm := laneFile.FindStringSubmatch(f)
		if mm == nil || strings.HasPrefix(mm[1], "acompact") {
			continue
		}
		n++
		if !lanes["sa-"+mm[1]] {
			t.Errorf("no lane sa-%s for %s", mm[1], filepath.Base(f))
		}
	}
	if n == 0 {
		t.Fatal("the corpus has no subagent files: the test checks nothing")
	}
}

// TestBuildDeterministic builds the whole corpus twice and compares bytes.
func TestBuildDeterministic(t *testing.T) {
	for _, agent := range []string{"claude", "codex", "cursor"} {
		files := corpusLogs(t, agent)
		build := func() map[string][]byte {
			out := map[string][]byte{}
			sessions, _ := collect(context.Background(), files, "auto", io.Discard)
			for _, s := range sessions {
				m, err := buildMap(s, builder.Options{Producer: "agentmap test"})
				if errors.Is(err, builder.ErrEmptySession) {
					continue // a session with no events has no map
				}
				if err != nil {
					t.Fatal(err)
				}
				gz, _ := m.Gzip()
				out[s.native] = gz
			}
			return out
		}
		a, b := build(), build()
		for id, ga := range a {
			if !bytes.Equal(ga, b[id]) {
				t.Errorf("%s %s: two builds differ", agent, id)
			}
		}
	}
}

func checkInvariants(t *testing.T, name string, canon []byte) {
	t.Helper()
	var m struct {
		Session struct {
			Truncated bool `json:"truncated"`
		} `json:"session"`
		Totals map[string]any   `json:"totals"`
		Events []map[string]any `json:"events"`
	}
	if err := json.Unmarshal(canon, &m); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(m.Events) > builder.DefaultEventCap {
		t.Errorf("%s: %d events, over the cap", name, len(m.Events))
	}
	var lastT float64
	var tokens, calls, requests, users, errs float64
	for i, e := range m.Events {
		if seq, _ := e["seq"].(float64); int(seq) != i {
			t.Fatalf("%s: events[%d].seq = %v", name, i, e["seq"])
		}
		tt, _ := e["t"].(float64)
		if tt < lastT {
			t.Fatalf("%s: events[%d].t = %v goes back from %v", name, i, tt, lastT)
		}
		lastT = tt
		if e["err"] == true {
			errs++
		}
		switch k := e["kind"].(string); k {
		case "llm":
			requests++
			for _, f := range []string{"in", "cw", "cr", "out"} {
				v, _ := e[f].(float64)
				tokens += v
			}
		case "user":
			users++
		case "read", "search", "edit", "exec", "verify", "mcp", "skill", "subagent", "web", "tool":
			calls++
		}
	}
	if m.Session.Truncated {
		return
	}
	for field, want := range map[string]float64{"tokens": tokens, "requests": requests, "userTurns": users, "calls": calls, "errors": errs} {
		if got, _ := m.Totals[field].(float64); got != want {
			t.Errorf("%s: totals.%s = %v, events say %v", name, field, got, want)
		}
	}
}
