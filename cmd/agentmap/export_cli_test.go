package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/agentmap/agentmap/builder"
	"github.com/agentmap/agentmap/builder/event"
	"github.com/agentmap/agentmap/config"
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
		{Kind: event.KindLLM, T: t0 + 12, Model: "gpt-5.5", LLM: &event.LLM{In: 1200, CR: 800, Out: 90, LatencyMs: -1}},
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
	// Nothing matched: the filters in effect are named, with what to try.
	noneIn := "agentmap export: no session map in " + filepath.Join(data, "maps") + " matched "
	listThem := " (agentmap list shows the sessions there and when each started)\n"
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // a substring of stdout
		stderr string // a substring of stderr
	}{
		{"no format", []string{"--data-dir", data}, exitUsage, "", "--format is required"},
		{"bad format", []string{"--format", "csv", "--data-dir", data}, exitUsage, "", "unknown export format"},
		{"bad path mode", []string{"--format", "jsonl", "--path-mode", "secret", "--data-dir", data}, exitUsage, "", "unknown path mode"},
		{"bad agent", []string{"--format", "jsonl", "--agent", "vim", "--data-dir", data}, exitUsage, "", "unknown agent"},
		{"bad since", []string{"--format", "jsonl", "--since", "soon", "--data-dir", data}, exitUsage, "", "--since"},
		{"agent with files", []string{"--format", "jsonl", "--agent", "codex", file}, exitUsage, "", "--agent"},
		{"store", []string{"--format", "jsonl", "--data-dir", data}, exitOK, `"id":"local:codex:small-1"`, ""},
		{"agent filter", []string{"--format", "jsonl", "--agent", "claude", "--data-dir", data}, exitFailure, "", noneIn + `--agent "claude": change the filter or leave it out` + listThem},
		{"agent by its maps' name", []string{"--format", "jsonl", "--agent", "Claude-Code", "--data-dir", data}, exitFailure, "", noneIn + `--agent "Claude-Code": change the filter or leave it out` + listThem},
		{"agent kept", []string{"--format", "jsonl", "--agent", "codex", "--data-dir", data}, exitOK, `small-1`, ""},
		{"since keeps", []string{"--format", "agentscope", "--since", "2026-03-01", "--data-dir", data}, exitOK, `"schemaVersion":"1.0.0"`, ""},
		{"since drops", []string{"--format", "sentience", "--since", "2026-03-05", "--data-dir", data}, exitFailure, "", noneIn + `--since "2026-03-05": change the filter or leave it out` + listThem},
		{"filters drop", []string{"--format", "attemptdb", "--since", "2026-03-05", "--repo", "api*", "--out", filepath.Join(t.TempDir(), "f"), "--data-dir", data}, exitFailure, "",
			noneIn + `--since "2026-03-05" --repo "api*": change the filters or leave them out` + listThem},
		{"since drops the files given", []string{"--format", "jsonl", "--since", "2026-03-05", file}, exitFailure, "",
			"agentmap export: the map file given did not match --since \"2026-03-05\": change the filter or leave it out\n"},
		{"since drops the files given", []string{"--format", "jsonl", "--until", "2026-03-01", file, file}, exitFailure, "",
			"agentmap export: none of the 2 map files given matched --until \"2026-03-01\": change the filter or leave it out\n"},
		{"files", []string{"--format", "jsonl", "--data-dir", data, file}, exitOK, `small-1`, ""},
		{"a bad file among good", []string{"--format", "jsonl", "--data-dir", data, file, garbage}, exitFailure, `small-1`, "bad.json.gz"},
		{"no store", []string{"--format", "jsonl", "--data-dir", t.TempDir()}, exitFailure, "", "no maps yet (agentmap scan writes them)"},
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

func TestTimeBounds(t *testing.T) {
	now := time.Date(2026, 5, 10, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"2026-05-01":           time.Date(2026, 5, 1, 0, 0, 0, 0, time.Local),
		"2026-05-01T10:00:00Z": time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC),
		"72h":                  now.Add(-72 * time.Hour),
		"7d":                   now.AddDate(0, 0, -7),
		"2w":                   now.AddDate(0, 0, -14),
	} {
		got, err := timeBound("since", in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("timeBound(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"yesterday", "-3d", "-1h"} {
		if _, err := timeBound("until", bad, now); err == nil || !strings.Contains(err.Error(), "--until") {
			t.Errorf("timeBound(%q) accepted or unnamed: %v", bad, err)
		}
	}
	if _, err := parseWindowFlags("2d", "3d", now); err == nil {
		t.Error("--since after --until accepted")
	}
}

// Every command that selects sessions rejects the same bad selectors with
// the same words and exit code 2.
func TestSelectorErrors(t *testing.T) {
	data, _ := smallStore(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"list", "--outcome", "bogus"}, `agentmap list: --outcome: unknown outcome "bogus" (pr_created, interrupted, blocked, verified, unresolved_errors, incomplete or completed)`},
		{[]string{"list", "--agent", "vim"}, `agentmap list: --agent: unknown agent "vim" (` + orList(config.AgentNames) + `)`},
		{[]string{"list", "--repo", "["}, `agentmap list: --repo: malformed glob "["`},
		{[]string{"list", "--since", "soon"}, `agentmap list: --since "soon": want a window such as 7d`},
		{[]string{"list", "--until", "soon"}, `agentmap list: --until "soon": want a window`},
		{[]string{"export", "--format", "jsonl", "--agent", "vim"}, `agentmap export: --agent: unknown agent "vim" (` + orList(config.AgentNames) + `)`},
		{[]string{"export", "--format", "jsonl", "--since", "soon"}, `agentmap export: --since "soon": want a window`},
	} {
		code, _, stderr := run(t, append(tc.args, "--data-dir", data)...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, stderr, tc.want)
		}
	}
	// Every command that picks sessions takes every selector, and rejects
	// a bad one with the same words and exit code.
	report := filepath.Join(t.TempDir(), "r.html")
	for _, cmd := range [][]string{{"list"}, {"export", "--format", "jsonl"}, {"report", "-o", report}, {"usage"}} {
		for flag, bad := range map[string]string{"agent": "vim", "outcome": "bogus", "repo": "[", "since": "soon", "until": "soon"} {
			code, _, stderr := run(t, append(cmd, "--"+flag, bad, "--data-dir", data)...)
			if want := "agentmap " + cmd[0] + ": --" + flag; code != exitUsage || !strings.HasPrefix(stderr, want) {
				t.Errorf("%v --%s %s: exit %d, stderr %q; want 2 and %q", cmd, flag, bad, code, stderr, want)
			}
		}
		if _, err := os.Stat(report); err == nil {
			t.Fatal("report written despite a bad selector")
		}
	}
	// --repo and --outcome select the same sessions in export as in list.
	seen := map[int]bool{}
	for _, sel := range [][]string{{"--outcome", "completed"}, {"--outcome", "incomplete"}, {"--outcome", "verified"}, {"--repo", "*"}, {"--repo", "none*"}} {
		_, listed, _ := run(t, append([]string{"list", "--json", "--data-dir", data}, sel...)...)
		var es []struct{ ID string }
		json.Unmarshal([]byte(listed), &es)
		_, exported, _ := run(t, append([]string{"export", "--format", "jsonl", "--data-dir", data}, sel...)...)
		if n := strings.Count(exported, "\n"); n != len(es) {
			t.Errorf("%v: list has %d sessions, export %d", sel, len(es), n)
		}
		seen[len(es)] = true
	}
	if !seen[0] || !seen[1] {
		t.Errorf("the selections kept %v sessions: want some that keep the session and some that do not", seen)
	}
	// The same window in both: 2w works in export as in list.
	for _, cmd := range [][]string{{"list"}, {"export", "--format", "jsonl"}} {
		if code, _, stderr := run(t, append(cmd, "--since", "2w", "--data-dir", data)...); code == exitUsage {
			t.Errorf("%v --since 2w: %s", cmd, stderr)
		}
	}
}

func TestExportOutputChecks(t *testing.T) {
	data, _ := smallStore(t)
	missing := filepath.Join(t.TempDir(), "no", "such", "out.jsonl")
	code, _, stderr := run(t, "export", "--format", "jsonl", "--data-dir", data, "--out", missing)
	if want := "agentmap export: --out " + missing + ": the directory " + filepath.Dir(missing) + " does not exist (create it first)"; code != exitFailure || !strings.Contains(stderr, want) {
		t.Errorf("missing directory: exit %d %q", code, stderr)
	}
	if _, err := os.Stat(filepath.Dir(missing)); !os.IsNotExist(err) {
		t.Error("export created the directory")
	}
	old := isTerminal
	isTerminal = func(io.Writer) bool { return true }
	defer func() { isTerminal = old }()
	code, stdout, stderr := run(t, "export", "--format", "bundle", "--data-dir", data)
	if code != exitUsage || stdout != "" || !strings.Contains(stderr, "agentmap export: a bundle is binary (a gzipped tar) and stdout is a terminal: give --out FILE.tar.gz, or pipe it (| tar tz)") {
		t.Errorf("bundle to a terminal: exit %d %q", code, stderr)
	}
	// Line formats are text: they may go to a terminal.
	if code, _, stderr := run(t, "export", "--format", "jsonl", "--data-dir", data); code != exitOK {
		t.Errorf("jsonl to a terminal: exit %d %q", code, stderr)
	}
}

func TestBuildOutputChecks(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		out  string
		code int
		want string
	}{
		{filepath.Join(dir, "x.json"), exitUsage, "a map file must end in .json.gz (- prints JSON; a directory ends in /)"},
		{filepath.Join(dir, "maps"), exitFailure, "no such directory (create it, end the name with / to have it created, or name a FILE.json.gz)"},
		{filepath.Join(dir, "none", "one.json.gz"), exitFailure, "the directory " + filepath.Join(dir, "none") + " does not exist (create it first)"},
	} {
		code, _, stderr := run(t, "build", "-o", tc.out, fixture)
		if code != tc.code || !strings.Contains(stderr, "agentmap build: -o "+tc.out) || !strings.Contains(stderr, tc.want) {
			t.Errorf("-o %s: exit %d %q", tc.out, code, stderr)
		}
		if _, err := os.Stat(tc.out); !os.IsNotExist(err) {
			t.Errorf("-o %s was created", tc.out)
		}
	}
	// A regular file that is not a map file is neither replaced nor
	// taken for a directory.
	notes := filepath.Join(dir, "notes.txt")
	os.WriteFile(notes, []byte("mine"), 0o600)
	code, _, stderr := run(t, "build", "-o", notes, fixture)
	if want := "agentmap build: -o " + notes + " is a regular file, and a map file ends in .json.gz: name a FILE.json.gz, a directory, or - for JSON on stdout\n"; code != exitUsage || stderr != want {
		t.Errorf("-o notes.txt: exit %d %q; want %q", code, stderr, want)
	}
	if b, _ := os.ReadFile(notes); string(b) != "mine" {
		t.Errorf("-o notes.txt replaced the file: %q", b)
	}
	// A trailing slash asks for the directory.
	if code, _, stderr := run(t, "build", "-o", filepath.Join(dir, "made")+"/", fixture); code != exitOK {
		t.Errorf("-o made/: exit %d %q", code, stderr)
	}
}

// Before the first scan there is no store: every command reading it sees
// an empty one, as list does, not a file-system error.
func TestMissingStoreIsAnEmptyStore(t *testing.T) {
	for _, name := range []string{"none", "empty"} {
		// The default data directory, not there yet on a machine where
		// nothing ran, or there with an empty store.
		home := t.TempDir()
		t.Setenv("HOME", home)
		t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
		t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
		t.Setenv(config.EnvConfig, "")
		c, err := config.Load("")
		if err != nil {
			t.Fatal(err)
		}
		data := c.DataDir
		if name == "empty" {
			os.MkdirAll(filepath.Join(data, "maps"), 0o700)
		}
		for _, tc := range []struct {
			args []string
			code int
			want string // on stdout and stderr together
		}{
			{[]string{"export", "--format", "jsonl"}, exitFailure,
				"agentmap export: no session map matched: " + filepath.Join(data, "maps") + " holds no maps yet (agentmap scan writes them)"},
			{[]string{"report", "-o", filepath.Join(t.TempDir(), "r.html")}, exitOK, "agentmap report: no sessions in the local map store yet (agentmap scan maps the logs present)"},
			{[]string{"report", "--agent", "codex", "-o", filepath.Join(t.TempDir(), "r.html")}, exitOK, "agentmap report: no session in the local map store matches"},
			{[]string{"report", "-o", ""}, exitUsage, "agentmap report: -o is empty: give the file to write, or - for standard output"},
			{[]string{"report", "-o", "-", "--open"}, exitUsage, "agentmap report: --open needs a file to open: -o - writes to standard output"},
			{[]string{"usage"}, exitOK, "no maps yet: agentmap scan makes them\n"},
			{[]string{"usage", "--since", "7d"}, exitOK, "no maps yet: agentmap scan makes them\n"},
			{[]string{"list"}, exitOK, "no maps yet: agentmap scan makes them\n"},
			{[]string{"list", "--agent", "codex"}, exitOK, "no maps yet: agentmap scan makes them\n"},
			{[]string{"list", "--json"}, exitOK, "[]\n"},
		} {
			code, stdout, stderr := run(t, tc.args...)
			if code != tc.code || !strings.Contains(stdout+stderr, tc.want) || strings.Contains(stderr, "no such file") {
				t.Errorf("%s store: %v: exit %d, %q %q; want %d and %q", name, tc.args, code, stdout, stderr, tc.code, tc.want)
			}
		}
	}
}

// A data directory named by --data-dir that is not there is a mistyped
// name, not an empty store: every command that reads the store says so,
// exit 1, rather than "no sessions" and exit 0.
func TestMissingGivenDataDirIsAnError(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nonexist")
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	for _, tc := range []struct {
		dir, says string
	}{{missing, "no such directory"}, {file, "not a directory"}} {
		for _, args := range [][]string{
			{"list"}, {"list", "--json"}, {"show", "abc"}, {"usage"}, {"usage", "--json"}, {"status"}, {"status", "--json"},
			{"report", "-o", filepath.Join(t.TempDir(), "r.html")}, {"export", "--format", "jsonl"},
		} {
			code, stdout, stderr := run(t, append(args, "--data-dir", tc.dir)...)
			want := fmt.Sprintf("agentmap %s: --data-dir %s: %s\n", args[0], tc.dir, tc.says)
			if code != exitFailure || stderr != want || stdout != "" {
				t.Errorf("%v --data-dir %s: exit %d, %q %q; want 1 and %q", args, tc.dir, code, stdout, stderr, want)
			}
		}
	}
}

// A scan that finds no agent's logs says so, instead of naming a maps
// directory that was never made.
func TestScanOfAHomeWithoutLogs(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	data := filepath.Join(t.TempDir(), "data")
	code, stdout, stderr := run(t, "scan", "--data-dir", data)
	if code != exitOK || !strings.Contains(stdout, "no maps yet: no agent's logs were found (agentmap doctor shows where agentmap looks); maps go in "+filepath.Join(data, "maps")) {
		t.Errorf("scan of an empty home: exit %d, %q %q", code, stdout, stderr)
	}
}

// A scan whose only log holds no session (a stray file named like one,
// every line skipped) says the logs it read held none, not that it found
// no logs; its progress counts in the singular.
func TestScanOfALogWithoutASession(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	dir := filepath.Join(home, ".claude", "projects", "-tmp-x")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	stray := bytes.Repeat([]byte("\x00\x01not json at all\xff\n"), 100)
	if err := os.WriteFile(filepath.Join(dir, "0b0b0b0b-1111-2222-3333-444444444444.jsonl"), stray, 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(t.TempDir(), "data")
	code, stdout, stderr := run(t, "scan", "--data-dir", data)
	want := "no maps yet: 1 log found, holding no session (agentmap status counts their skipped lines); maps go in " + filepath.Join(data, "maps")
	if code != exitOK || !strings.Contains(stdout, want) || !strings.Contains(stderr, "scan: done, 1.9 kB read, 0 sessions (1 more had nothing to map)\n") {
		t.Errorf("scan of a stray log: exit %d, %q %q; want %q", code, stdout, stderr, want)
	}
	// A second scan reads nothing new, and says the same.
	if code, stdout, stderr = run(t, "scan", "--data-dir", data); code != exitOK || !strings.Contains(stdout, want) {
		t.Errorf("second scan of a stray log: exit %d, %q %q; want %q", code, stdout, stderr, want)
	}
}

// What export writes, the commands that read maps read back: a jsonl
// export (gzipped or not, under any name) given to --maps reads as the
// store it came from; another export's lines are refused in one line, and
// the report says no map could be read rather than that none matched.
func TestMapsFromAJSONLinesExport(t *testing.T) {
	data, _ := smallStore(t)
	dir := t.TempDir()
	for _, name := range []string{"maps.jsonl", "maps.jsonl.gz", "maps.txt"} {
		if code, _, stderr := run(t, "export", "--format", "jsonl", "--data-dir", data, "--out", filepath.Join(dir, name)); code != exitOK {
			t.Fatalf("export to %s: exit %d\n%s", name, code, stderr)
		}
	}
	_, want, _ := run(t, "usage", "session", "--data-dir", data)
	if !strings.Contains(want, "small-1") {
		t.Fatalf("usage session of the store:\n%s", want)
	}
	for _, name := range []string{"maps.jsonl", "maps.jsonl.gz", "maps.txt"} {
		code, got, stderr := run(t, "usage", "session", "--maps", filepath.Join(dir, name))
		if code != exitOK || got != want {
			t.Errorf("usage --maps %s: exit %d\n%s%s\nwant\n%s", name, code, got, stderr, want)
		}
	}
	events := filepath.Join(dir, "events.attemptdb.jsonl")
	if code, _, stderr := run(t, "export", "--format", "attemptdb", "--data-dir", data, "--out", events); code != exitOK {
		t.Fatalf("attemptdb export: exit %d\n%s", code, stderr)
	}
	// No page is written of nothing but maps that could not be read: a
	// report there before stays as it was, and none is made.
	page := filepath.Join(dir, "r.html")
	os.WriteFile(page, []byte("the report before"), 0o600)
	code, _, stderr := run(t, "report", "--maps", events, "-o", page)
	if code != exitFailure || strings.Count(stderr, "is not a session map") != 1 ||
		!strings.Contains(stderr, "no map of events.attemptdb.jsonl could be read (skipped above); nothing written\n") ||
		strings.Contains(stderr, "matches") || strings.Contains(stderr, "->") {
		t.Errorf("report of an AttemptDB export: exit %d\n%s", code, stderr)
	}
	if b, _ := os.ReadFile(page); string(b) != "the report before" {
		t.Errorf("a failed report wrote %d bytes over the one there", len(b))
	}
	fresh := filepath.Join(dir, "fresh.html")
	if code, _, stderr := run(t, "report", "--maps", events, "--agent", "codex", "-o", fresh); code != exitFailure ||
		!strings.Contains(stderr, "no session in events.attemptdb.jsonl matches, and 1 map could not be read (skipped above); nothing written\n") || exists(fresh) {
		t.Errorf("report --agent of an AttemptDB export: exit %d, written %v\n%s", code, exists(fresh), stderr)
	}
	// On stdout too: exit 1, and no page.
	if code, stdout, stderr := run(t, "report", "--maps", events, "-o", "-"); code != exitFailure || stdout != "" {
		t.Errorf("report -o - of an AttemptDB export: exit %d, %d bytes\n%s", code, len(stdout), stderr)
	}
}

// `--maps -` on a terminal is refused rather than waited on, and a stream
// that sends nothing (the command feeding it failed) writes no report over
// the one there and fails, as an empty file does.
func TestMapsFromStandardInputOfNothing(t *testing.T) {
	oldIn, oldTerm := mapsStdin, isTerminal
	defer func() { mapsStdin, isTerminal = oldIn, oldTerm }()
	f, err := os.CreateTemp(t.TempDir(), "tty")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	mapsStdin, isTerminal = f, func(io.Writer) bool { return true }
	if code, _, stderr := run(t, "usage", "--maps", "-"); code != exitUsage || !strings.Contains(stderr, "standard input is a terminal") {
		t.Errorf("usage --maps - on a terminal: exit %d, %q", code, stderr)
	}

	isTerminal = oldTerm
	mapsStdin = strings.NewReader("")
	page := filepath.Join(t.TempDir(), "report.html")
	os.WriteFile(page, []byte("the report before"), 0o600)
	code, _, stderr := run(t, "report", "--maps", "-", "-o", page)
	if got, _ := os.ReadFile(page); code != exitFailure || string(got) != "the report before" || !strings.Contains(stderr, "nothing was read") {
		t.Errorf("report --maps - of nothing: exit %d, %q; the page %q", code, stderr, got)
	}
	mapsStdin = strings.NewReader("")
	if code, _, stderr := run(t, "usage", "--maps", "-"); code != exitFailure || !strings.Contains(stderr, "nothing was read") {
		t.Errorf("usage --maps - of nothing: exit %d, %q", code, stderr)
	}
}
