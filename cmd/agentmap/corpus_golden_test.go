package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/redact"
	"github.com/agentmap/agentmap/daemon"
)

// corpusHashesGolden holds the content hash of every map the corpus gives,
// by `agentmap build` in every path mode and by a daemon's scan of the same
// logs laid out in a home. Work on speed must leave every line as it is;
// a change of what a map says is regenerated with `go test -update`.
var corpusHashesGolden = filepath.Join("..", "..", "testdata", "corpus", "content-hashes.txt")

// goldenHashKey is the fixed key of hashed mode, so that its hashes repeat.
const goldenHashKey = "0123456789abcdef0123456789abcdef"

// goldenFileTime is the modification time given to every log the golden
// maps are made from. Cursor transcripts carry no clock, so their maps take
// their times from the file; the corpus's own times are those of whatever
// put it on the machine and differ from one checkout to the next.
var goldenFileTime = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// fixedTimeCopies copies the logs, under their own names, into a temporary
// directory with goldenFileTime as their time, and returns the copies.
func fixedTimeCopies(t *testing.T, files []string) []string {
	t.Helper()
	dir := t.TempDir()
	var out []string
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, filepath.Base(f))
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, goldenFileTime, goldenFileTime); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func TestCorpusContentHashesGolden(t *testing.T) {
	corpus := corpusDir(t)
	var lines []string
	modes := []redact.Mode{redact.ModeRelative, redact.ModeDirsOnly, redact.ModeHashed}
	for _, agent := range []string{"claude", "codex", "cursor"} {
		sessions, _ := collect(context.Background(), fixedTimeCopies(t, corpusLogs(t, agent)), "auto", io.Discard)
		for _, mode := range modes {
			opts := builder.Options{PathMode: mode, HashKey: []byte(goldenHashKey), Producer: "agentmap test"}
			for _, s := range sessions {
				m, err := buildMap(s, opts)
				if errors.Is(err, builder.ErrEmptySession) {
					continue // a session with no events has no map
				}
				if err != nil {
					t.Fatalf("%s %s: %v", agent, s.native, err)
				}
				if _, err := m.Canonical(); err != nil {
					t.Fatal(err)
				}
				lines = append(lines, fmt.Sprintf("build %s %s/%s %s", mode, agent, s.native, m.ContentHash))
			}
		}
	}

	home := privateHome(t)
	roots := layoutCorpus(t, corpus, home, false)
	filepath.WalkDir(home, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			os.Chtimes(p, goldenFileTime, goldenFileTime)
		}
		return nil
	})
	keyFile := filepath.Join(t.TempDir(), "hash.key")
	conf := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(keyFile, []byte(goldenHashKey), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, fmt.Appendf(nil, "version = 1\n[maps]\nhash_key_file = %q\n", keyFile), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, mode := range modes {
		data := filepath.Join(t.TempDir(), "data")
		args := append([]string{"scan", "--config", conf, "--data-dir", data, "--path-mode", string(mode)}, roots...)
		if code, _, stderr := run(t, args...); code != exitOK {
			t.Fatalf("scan (%s): exit %d\n%s", mode, code, stderr)
		}
		n := 0
		err := filepath.WalkDir(daemon.MapsDir(data), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, _ := filepath.Rel(daemon.MapsDir(data), p)
			lines = append(lines, fmt.Sprintf("scan %s %s %s", mode, filepath.ToSlash(rel), mapContentHash(t, p)))
			n++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 {
			t.Fatalf("scan (%s) wrote no map", mode)
		}
	}
	sort.Strings(lines)
	got := []byte(strings.Join(lines, "\n") + "\n")
	if *update {
		if err := os.MkdirAll(filepath.Dir(corpusHashesGolden), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(corpusHashesGolden, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(corpusHashesGolden)
	if err != nil {
		t.Fatalf("%v (go test -update writes it)", err)
	}
	if !bytes.Equal(got, want) {
		wantSet := map[string]bool{}
		for _, l := range strings.Split(strings.TrimSpace(string(want)), "\n") {
			wantSet[l] = true
		}
		gotSet := map[string]bool{}
		for _, l := range lines {
			gotSet[l] = true
			if !wantSet[l] {
				t.Errorf("new or changed: %s", l)
			}
		}
		for l := range wantSet {
			if !gotSet[l] {
				t.Errorf("gone or changed: %s", l)
			}
		}
		t.Fatalf("corpus maps differ from %s (go test -update rewrites it after an intended change)", corpusHashesGolden)
	}
}

// mapContentHash reads a stored map's contentHash.
func mapContentHash(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	var doc struct {
		ContentHash string `json:"contentHash"`
	}
	if err := json.NewDecoder(zr).Decode(&doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if doc.ContentHash == "" {
		t.Fatalf("%s: no content hash", path)
	}
	return doc.ContentHash
}

// privateHome is a temporary HOME with no agent or agentmap settings from
// the environment, so that a scan sees only what a test lays out there.
func privateHome(t *testing.T) string {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	t.Setenv("XDG_STATE_HOME", filepath.Join(home, ".local", "state"))
	t.Setenv("AGENTMAP_CONFIG", "")
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	t.Setenv("CODEX_HOME", "")
	return home
}
