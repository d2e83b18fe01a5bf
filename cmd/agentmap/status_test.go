package main

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/daemon"
)

// Every time status prints for people carries its zone, and the rejected
// reload and the sessions with skipped lines are shown with what they
// name.
func TestStatusLinesAndTheirZones(t *testing.T) {
	old := time.Local
	time.Local = time.FixedZone("ZZT", 5*3600+1800)
	defer func() { time.Local = old }()
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	st := daemon.Status{
		PID: 42, Started: at, DataDir: "/d", LastFlush: at,
		CatchUp:     daemon.CatchUp{Finished: at, Done: 1 << 20},
		LastError:   &daemon.LoggedError{At: at, Component: "flush", Message: "cannot write map", Cause: "write /d/maps/x: no space left on device"},
		Uncommitted: 2, RetryAt: at,
		Unreadable:  &daemon.UnreadableLogs{Count: 1, Reason: "permission denied", RetryAt: at},
		State:       &daemon.StateRepair{At: at, Records: 3, Sources: 1},
		Sink:        &daemon.SinkStatus{Sent: 5, DeviceID: "dev", LastOk: at},
		Export:      &daemon.ExportStatus{Exports: 1, Last: at, LastFiles: []string{"e.jsonl"}, LastSessions: 2},
		ConfigError: &daemon.ConfigReloadError{At: at, Path: "/c.toml", Problems: []string{"/c.toml:3: maps.path_mode: want relative, hashed or absolute"}},
		SkippedSessions: []daemon.SkippedSession{
			{Session: "claude/aaa", Agent: "claude", Lines: 7}, {Session: "codex/bbb", Agent: "codex", Lines: 1},
		},
	}
	var b bytes.Buffer
	writeStatus(&b, "running", "running", true, st, false, time.Time{})
	out := b.String()
	for _, want := range []string{
		"config:     reload of /c.toml rejected at 2026-05-01 17:30:00 ZZT; the previous config stays in effect:\n            /c.toml:3: maps.path_mode",
		"skipped:    lines in claude/aaa (7), codex/bbb (1)\n",
		"last flush: 2026-05-01 17:30:00 ZZT\n",
		"last error: 2026-05-01 17:30:00 ZZT flush: cannot write map: write /d/maps/x: no space left on device\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	// Each line with a date has the zone after the time.
	dated := regexp.MustCompile(`\d{4}-\d\d-\d\d \d\d:\d\d(:\d\d)?`)
	n := 0
	for _, line := range strings.Split(out, "\n") {
		for _, loc := range dated.FindAllStringIndex(line, -1) {
			n++
			if !strings.HasPrefix(line[loc[1]:], " ZZT") {
				t.Errorf("a time without its zone: %q", line)
			}
		}
	}
	// started, catch-up, last flush, last error, two retries, state,
	// export (last), sink (last ok), config.
	if n < 10 {
		t.Errorf("%d times in the status, want 10 or more:\n%s", n, out)
	}
}

// list prints a session's start in the local zone, with its name.
func TestListTimesHaveTheirZone(t *testing.T) {
	old := time.Local
	time.Local = time.FixedZone("ZZT", 5*3600+1800)
	defer func() { time.Local = old }()
	var b bytes.Buffer
	writeList(&b, []daemon.Entry{{ID: "s1", Agent: "claude", Start: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), Outcome: "completed"}}, nil)
	if !strings.Contains(b.String(), "  2026-05-01 17:30 ZZT  ") {
		t.Errorf("list:\n%s", b.String())
	}
}

// status --json without a daemon leaves out what only a running daemon
// has, as the text does, rather than a start in year 1 and a zeroed
// catch-up; a running daemon's status keeps them.
func TestStatusJSONWithoutADaemon(t *testing.T) {
	code, stdout, stderr := run(t, "status", "--json", "--no-service", "--data-dir", t.TempDir())
	var got map[string]any
	if err := json.Unmarshal([]byte(stdout), &got); code != exitOK || err != nil {
		t.Fatalf("status --json: exit %d, %v, %q %q", code, err, stdout, stderr)
	}
	for _, key := range []string{"pid", "started", "uptimeNs", "catchUp"} {
		if v, ok := got[key]; ok {
			t.Errorf("status --json without a daemon has %s: %v", key, v)
		}
	}
	if got["running"] != false {
		t.Errorf("status --json without a daemon: running %v", got["running"])
	}
	b, err := json.Marshal(daemon.Status{PID: 42, Started: time.Unix(1e9, 0), Uptime: time.Second, CatchUp: daemon.CatchUp{Running: true, Total: 10}})
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"pid":42`, `"started":"`, `"uptimeNs":1000000000`, `"catchUp":{"running":true,"bytesDone":0,"bytesTotal":10}`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("a running daemon's status lacks %s: %s", key, b)
		}
	}
}

// The counts of status's fault lines agree with their number, and the
// line of maps waiting tells the next try, as the commit line does.
func TestStatusFaultLinesCountInTheSingular(t *testing.T) {
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.Local)
	var b bytes.Buffer
	writeFaultStatus(&b, daemon.Status{
		Uncommitted: 1, RetryAt: at, FlushRetries: 1, FlushRetryAt: at,
		Unreadable: &daemon.UnreadableLogs{Count: 1, Reason: "permission denied", RetryAt: at},
		State:      &daemon.StateRepair{At: at, Records: 1, Sources: 1},
	})
	when := formatTime(at)
	for _, want := range []string{
		"retrying:   the lines of 1 log wait to be committed again (next try " + when + ")\n",
		"retrying:   1 log cannot be read (permission denied; next try " + when + ")\n",
		"retrying:   1 map waits to be written again (next try " + when + ")\n",
		"state:      1 damaged record dropped at " + when + "; 1 log read again from the start\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("status lacks %q:\n%s", want, b.String())
		}
	}
}
