package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/state/mapstore"
)

// smallStore writes one small Codex map into a store and returns the data
// dir and the map file.
func smallStore(t *testing.T) (string, string) {
	t.Helper()
	t0 := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC).UnixMilli()
	m, err := builder.Build([]event.Event{
		{Kind: event.KindSession, T: t0, Session: &event.Session{NativeID: "small-1", AgentTool: "codex"}},
		{Kind: event.KindUser, T: t0, User: &event.User{Chars: 5}},
		{Kind: event.KindCall, T: t0 + 5, Call: &event.Call{ID: "c", Tool: "shell", Kind: "exec", Cat: "shell", Verb: "ls"}},
		{Kind: event.KindResult, T: t0 + 9, Result: &event.Result{CallID: "c", OutBytes: 3}},
	}, builder.Options{Producer: "agentmap test"})
	if err != nil {
		t.Fatal(err)
	}
	gz, err := m.Gzip()
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	rel := mapstore.RelPath("codex", "small-1", time.UnixMilli(t0))
	if err := mapstore.New(filepath.Join(data, "maps")).Write(rel, gz); err != nil {
		t.Fatal(err)
	}
	return data, filepath.Join(data, "maps", rel)
}

func TestExportCommand(t *testing.T) {
	data, file := smallStore(t)
	garbage := filepath.Join(t.TempDir(), "bad.json.gz")
	os.WriteFile(garbage, []byte("SECRET not a map"), 0o600)
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // a substring of stdout
		stderr string // a substring of stderr
	}{
		{"no format", []string{"--data-dir", data}, exitUsage, "", "unknown export format"},
		{"bad format", []string{"--format", "csv", "--data-dir", data}, exitUsage, "", "unknown export format"},
		{"bad path mode", []string{"--format", "jsonl", "--path-mode", "secret", "--data-dir", data}, exitUsage, "", "unknown path mode"},
		{"bad agent", []string{"--format", "jsonl", "--agent", "vim", "--data-dir", data}, exitUsage, "", "unknown agent"},
		{"bad since", []string{"--format", "jsonl", "--since", "soon", "--data-dir", data}, exitUsage, "", "--since"},
		{"agent with files", []string{"--format", "jsonl", "--agent", "codex", file}, exitUsage, "", "--agent"},
		{"store", []string{"--format", "jsonl", "--data-dir", data}, exitOK, `"id":"local:codex:small-1"`, ""},
		{"agent filter", []string{"--format", "jsonl", "--agent", "claude", "--data-dir", data}, exitFailure, "", "no session map matched"},
		{"since keeps", []string{"--format", "agentscope", "--since", "2026-03-01", "--data-dir", data}, exitOK, `"schemaVersion":"1.0.0"`, ""},
		{"since drops", []string{"--format", "sentience", "--since", "2026-03-05", "--data-dir", data}, exitFailure, "", "no session map matched"},
		{"files", []string{"--format", "jsonl", "--data-dir", data, file}, exitOK, `small-1`, ""},
		{"a bad file among good", []string{"--format", "jsonl", "--data-dir", data, file, garbage}, exitFailure, `small-1`, "bad.json.gz"},
		{"no store", []string{"--format", "jsonl", "--data-dir", t.TempDir()}, exitFailure, "", "read store"},
		{"dirs_only", []string{"--format", "jsonl", "--path-mode", "dirs_only", "--data-dir", data}, exitOK, `"pathMode":"dirs_only"`, ""},
	}
	for _, tt := range tests {
		var stdout, stderr bytes.Buffer
		code := cmdExport(context.Background(), tt.args, &stdout, &stderr)
		if code != tt.code || !strings.Contains(stdout.String(), tt.stdout) || !strings.Contains(stderr.String(), tt.stderr) {
			t.Errorf("%s: exit %d, stdout %.100q, stderr %q", tt.name, code, stdout.String(), stderr.String())
		}
		if strings.Contains(stderr.String(), "SECRET") {
			t.Errorf("%s: stderr quotes a file's content", tt.name)
		}
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"2026-05-01":           time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC),
		"2026-05-01T10:00:00Z": time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC),
		"72h":                  now.Add(-72 * time.Hour),
		"7d":                   now.AddDate(0, 0, -7),
	} {
		got, err := parseSince(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "yesterday", "-3d", "-1h"} {
		if _, err := parseSince(bad, now); err == nil {
			t.Errorf("parseSince(%q) accepted", bad)
		}
	}
}
