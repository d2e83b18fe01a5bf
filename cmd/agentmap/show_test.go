package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/daemon"
	"github.com/agentmap/agentmap/export/mapfile"
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

// A map file damaged on disk after a scan wrote it: show says so, and how
// to write it again (a flush asked for by name compares the file), which
// works without a daemon, as the hint says.
func TestShowOfADamagedMap(t *testing.T) {
	home, data := t.TempDir(), t.TempDir()
	proj := filepath.Join(home, ".claude", "projects", "-w-app")
	if err := os.MkdirAll(proj, 0o700); err != nil {
		t.Fatal(err)
	}
	log := `{"type":"user","sessionId":"0a1b2c3d-0000-4000-8000-00000000d001","uuid":"u1","timestamp":"2026-05-01T10:00:00.000Z","cwd":"/w/app","message":{"role":"user","content":"hi"}}
{"type":"assistant","sessionId":"0a1b2c3d-0000-4000-8000-00000000d001","uuid":"a1","parentUuid":"u1","timestamp":"2026-05-01T10:00:02.000Z","requestId":"req_1","message":{"id":"msg_1","model":"claude-opus-4-8","role":"assistant","content":[{"type":"text","text":"ok"}],"stop_reason":"end_turn","usage":{"input_tokens":5,"output_tokens":2}}}
`
	if err := os.WriteFile(filepath.Join(proj, "0a1b2c3d-0000-4000-8000-00000000d001.jsonl"), []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	t.Setenv("CLAUDE_CONFIG_DIR", "")
	var stdout, stderr bytes.Buffer
	if code := dispatch(context.Background(), []string{"scan", "--data-dir", data}, &stdout, &stderr); code != exitOK {
		t.Fatalf("scan: exit %d: %s", code, stderr.String())
	}
	maps, _ := filepath.Glob(filepath.Join(data, "maps", "claude", "*", "*", "*.json.gz"))
	if len(maps) != 1 {
		t.Fatalf("maps: %v", maps)
	}
	if err := os.WriteFile(maps[0], []byte("damaged"), 0o600); err != nil {
		t.Fatal(err)
	}
	stderr.Reset()
	code := dispatch(context.Background(), []string{"show", "--data-dir", data, "0a1b2c3d"}, &stdout, &stderr)
	want := "agentmap show: the map file is damaged; agentmap flush claude/0a1b2c3d-0000-4000-8000-00000000d001 writes it again (a daemon running or not)\n"
	if runtime.GOOS == "windows" {
		// Without a daemon, flush ID is a catch-up there, which trusts
		// the record of what it wrote.
		want = "agentmap show: the map file is damaged; agentmap flush claude/0a1b2c3d-0000-4000-8000-00000000d001, with the daemon running (agentmap start, or agentmap run), writes it again\n"
	}
	if code != exitFailure || !strings.HasSuffix(stderr.String(), want) {
		t.Errorf("show of a damaged map: exit %d, stderr %q; want %q", code, stderr.String(), want)
	}
	if runtime.GOOS == "windows" {
		return
	}
	stderr.Reset()
	if code := dispatch(context.Background(), []string{"flush", "--data-dir", data, "claude/0a1b2c3d-0000-4000-8000-00000000d001"}, &stdout, &stderr); code != exitOK {
		t.Fatalf("flush without a daemon: exit %d: %s", code, stderr.String())
	}
	stderr.Reset()
	if code := dispatch(context.Background(), []string{"show", "--data-dir", data, "0a1b2c3d"}, &stdout, &stderr); code != exitOK {
		t.Errorf("show after the flush: exit %d, stderr %q", code, stderr.String())
	}
}

// A lane with no model request (a Cursor subagent's, whose requests the
// log does not record) shows no tokens, as it shows no cost, not 0 beside
// "-"; one whose requests recorded no usage says so.
func TestShowLaneWithoutRequests(t *testing.T) {
	var b strings.Builder
	writeSummary(&b, summary{ID: "x", Lanes: []showLane{
		{Agent: mapfile.Agent{ID: "main", Requests: 3, Tokens: 1200, Cost: 0.01}},
		{Agent: mapfile.Agent{ID: "sa-1", Kind: "subagent", Calls: 2}},
		{Agent: mapfile.Agent{ID: "sa-2", Kind: "subagent", Requests: 1}},
	}, laneNoUsage: map[string]int{"sa-2": 1}})
	seen := 0
	for _, l := range strings.Split(b.String(), "\n") {
		f := strings.Fields(l)
		switch {
		case len(f) == 9 && f[0] == "sa-1":
			seen++
			if f[6] != "-" || f[7] != "-" { // TOKENS, COST
				t.Errorf("a lane with no request: %q", l)
			}
		case len(f) > 0 && f[0] == "sa-2":
			seen++
			if !strings.Contains(l, "not recorded") {
				t.Errorf("a lane whose request recorded no usage: %q", l)
			}
		}
	}
	if seen != 2 {
		t.Errorf("lanes not found:\n%s", b.String())
	}
}

// A lane some of whose requests recorded no usage shows the figures of
// those that did, marked, and a line under the table says how many did
// not, as the totals say it of the session: not the lane's whole.
func TestShowMarksALanePartlyWithoutUsage(t *testing.T) {
	var b strings.Builder
	writeSummary(&b, summary{ID: "x", Lanes: []showLane{
		{Agent: mapfile.Agent{ID: "main", Requests: 3, Tokens: 1200, Cost: 0.01}},
		{Agent: mapfile.Agent{ID: "sa-1", Kind: "subagent", Requests: 5, Tokens: 800, Cost: 0.02}},
	}, laneNoUsage: map[string]int{"sa-1": 2}})
	var main, sa1 []string
	for _, l := range strings.Split(b.String(), "\n") {
		switch f := strings.Fields(l); {
		case len(f) == 9 && f[0] == "main":
			main = f
		case len(f) == 9 && f[0] == "sa-1":
			sa1 = f
		}
	}
	if main == nil || main[6] != "1.2k" || main[7] != "$0.01" {
		t.Errorf("a lane whose requests all recorded usage: %q\n%s", main, b.String())
	}
	if sa1 == nil || sa1[6] != "800*" || sa1[7] != "$0.02*" {
		t.Errorf("a lane partly without usage, unmarked: %q\n%s", sa1, b.String())
	}
	if want := "\n  * sa-1: 2 of its 5 model requests recorded no usage, which its tokens and cost leave out\n"; !strings.Contains(b.String(), want) {
		t.Errorf("no line under the lanes says it:\n%s\nwant %q", b.String(), want)
	}
}
