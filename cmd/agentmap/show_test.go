package main

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/state/mapstore"
)

// show takes an agent/id with the agent by any of its names, as list
// --agent does: claude-code, as the maps name it.
func TestFindEntryByTheMapsAgentName(t *testing.T) {
	es := []daemon.Entry{{Key: "claude/abc1", ID: "abc1"}, {Key: "codex/abc2", ID: "abc2"}, {Key: "claude/abd", ID: "abd"}}
	for id, want := range map[string]string{"claude-code/abc1": "abc1", "Claude-Code/abd": "abd", "claude-code/abc": "abc1", "CLAUDE/abc1": "abc1"} {
		if e, err := findEntry(es, id); err != nil || e.ID != want {
			t.Errorf("%s: got %q %v, want %q", id, e.ID, err, want)
		}
	}
	if _, err := findEntry(es, "claude-code/abc2"); err == nil {
		t.Error("claude-code/abc2 found codex's session")
	}
}

func TestShowAgentNamesAndFlags(t *testing.T) {
	data := t.TempDir()
	t0 := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC).UnixMilli()
	m, err := builder.Build([]event.Event{
		{Kind: event.KindSession, T: t0, Session: &event.Session{NativeID: "sess-1", AgentTool: "claude-code"}},
		{Kind: event.KindUser, T: t0, User: &event.User{Chars: 5}},
	}, builder.Options{Producer: "agentmap test"})
	if err != nil {
		t.Fatal(err)
	}
	gz, err := m.Gzip()
	if err != nil {
		t.Fatal(err)
	}
	if err := mapstore.New(filepath.Join(data, "maps")).Write(mapstore.RelPath("claude", "sess-1", time.UnixMilli(t0)), gz); err != nil {
		t.Fatal(err)
	}
	show := func(args ...string) (int, string, string) {
		var stdout, stderr bytes.Buffer
		code := dispatch(context.Background(), append([]string{"show", "--data-dir", data}, args...), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	for _, id := range []string{"sess-1", "claude/sess-1", "claude-code/sess-1", "claude-code/sess"} {
		if code, stdout, stderr := show(id); code != exitOK || !strings.Contains(stdout, "sess-1") {
			t.Errorf("show %s: exit %d, stdout %q, stderr %q", id, code, stdout, stderr)
		}
	}
	// --json and --events are one or the other, not --events with --json dropped.
	code, stdout, stderr := show("--json", "--events", "sess-1")
	if code != exitUsage || stdout != "" || stderr != "agentmap show: --json and --events do not go together: give one\n" {
		t.Errorf("--json --events: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
}
