package main

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run calls a command in process and returns its exit code and output.
func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := dispatch(context.Background(), args, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

const fixture = "../../testdata/claude/basic.jsonl"

func TestBuildInputErrors(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.jsonl")
	os.WriteFile(empty, nil, 0o600)
	text := filepath.Join(dir, "notes.txt")
	os.WriteFile(text, []byte("just some notes\nnot a log\n"), 0o600)
	dump := filepath.Join(dir, "state.dump.json")
	os.WriteFile(dump, []byte("{\n \"composerData:1\": {\"text\": \"just some notes\"}\n}\n"), 0o600)
	noLogs := filepath.Join(t.TempDir(), "notes")
	os.MkdirAll(noLogs, 0o700)
	os.WriteFile(filepath.Join(noLogs, "notes.txt"), []byte("just some notes\nnot a log\n"), 0o600)
	tests := []struct {
		name, path, want string
	}{
		{"missing", filepath.Join(dir, "nope.jsonl"), "no such file"},
		{"a JSON document of another tool", dump, "not a log of Claude Code, Codex, Cursor, OpenCode, Copilot CLI or Gemini CLI"},
		{"empty", empty, "file is empty"},
		{"directory without logs", noLogs, "is a directory with no log of any agent in it"},
		{"not a log", text, "not a log of Claude Code, Codex, Cursor, OpenCode, Copilot CLI or Gemini CLI"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := run(t, "build", "-o", t.TempDir(), tc.path)
			if code != exitFailure {
				t.Errorf("exit %d, want %d", code, exitFailure)
			}
			if !strings.Contains(stderr, tc.path) || !strings.Contains(stderr, tc.want) {
				t.Errorf("stderr %q does not name the file and %q", stderr, tc.want)
			}
			if strings.Contains(stderr, "not a log\n") || strings.Contains(stderr, "just some notes") {
				t.Errorf("stderr quotes the file's content: %q", stderr)
			}
		})
	}
}

func TestBuildUnreadable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root: file permissions do not stop reads")
	}
	p := filepath.Join(t.TempDir(), "locked.jsonl")
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(p, data, 0o000)
	code, _, stderr := run(t, "build", "-o", t.TempDir(), p)
	if code != exitFailure || !strings.Contains(stderr, "permission denied") {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
}

// A good input still builds when another input is bad.
func TestBuildGoodBesideBad(t *testing.T) {
	out := t.TempDir()
	code, _, stderr := run(t, "build", "-o", out, fixture, filepath.Join(out, "missing.jsonl"))
	if code != exitFailure {
		t.Fatalf("exit %d", code)
	}
	maps, _ := filepath.Glob(filepath.Join(out, "*.json.gz"))
	if len(maps) != 1 {
		t.Fatalf("maps written: %v (stderr %s)", maps, stderr)
	}
}

func TestBuildOutputs(t *testing.T) {
	// -o - prints pretty JSON that is the same map as the file output.
	code, stdout, stderr := run(t, "build", "-o", "-", fixture)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var pretty map[string]any
	if err := json.Unmarshal([]byte(stdout), &pretty); err != nil {
		t.Fatalf("stdout is not JSON: %v", err)
	}
	out := filepath.Join(t.TempDir(), "one.json.gz")
	if code, _, stderr := run(t, "build", "-o", out, fixture); code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(zr)
	var stored map[string]any
	if err := json.Unmarshal(raw, &stored); err != nil {
		t.Fatal(err)
	}
	if pretty["contentHash"] != stored["contentHash"] || pretty["contentHash"] == nil {
		t.Errorf("stdout hash %v, file hash %v", pretty["contentHash"], stored["contentHash"])
	}
	// The stored file validates; a corrupted copy does not.
	if code, _, _ := run(t, "validate", "-q", out); code != exitOK {
		t.Errorf("validate of a built map: exit %d", code)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	broken := strings.Replace(string(raw), `"schema":"agentplay/v1"`, `"schema":"agentplay/v9"`, 1)
	os.WriteFile(bad, []byte(broken), 0o600)
	if code, stdout, _ := run(t, "validate", bad); code != exitFailure || !strings.Contains(stdout, "/schema") {
		t.Errorf("validate of a broken map: exit %d, %q", code, stdout)
	}
	// A directory is every map file in it and below, as build -o DIR and
	// the store keep them; other files are not maps, and not read.
	dir := t.TempDir()
	sub := filepath.Join(dir, "codex", "2026", "03")
	os.MkdirAll(sub, 0o700)
	good, _ := os.ReadFile(out)
	os.WriteFile(filepath.Join(sub, "a.json.gz"), good, 0o600)
	os.WriteFile(filepath.Join(dir, "b.json"), raw, 0o600)
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("not a map"), 0o600)
	code, stdout, stderr = run(t, "validate", dir)
	if code != exitOK || strings.Count(stdout, ": ok\n") != 2 || strings.Contains(stdout+stderr, "notes.txt") {
		t.Errorf("validate of a directory of maps: exit %d, %q %q", code, stdout, stderr)
	}
	os.WriteFile(filepath.Join(sub, "c.json"), []byte(broken), 0o600)
	if code, stdout, stderr := run(t, "validate", "-q", dir); code != exitFailure || !strings.Contains(stdout, "c.json: /schema") ||
		!strings.Contains(stderr, "agentmap validate: 1 of 3 files failed") {
		t.Errorf("validate of a directory with a broken map: exit %d, %q %q", code, stdout, stderr)
	}
}

// A directory with no map file in it (empty, or other files only) is no
// file that failed: validate says there was nothing to check there, and
// exits 1, beside other files checked too.
func TestValidateOfADirectoryWithNoMap(t *testing.T) {
	empty, notes := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(notes, "notes.txt"), []byte("not a map"), 0o600)
	for _, dir := range []string{empty, notes} {
		code, stdout, stderr := run(t, "validate", dir)
		if want := "agentmap validate: " + dir + ": no map file in it or below (.json.gz or .json): nothing checked there\n"; code != exitFailure || stdout != "" || stderr != want {
			t.Errorf("validate of a directory with no map: exit %d, %q %q; want %q", code, stdout, stderr, want)
		}
	}
	// Beside a map that passes: its line, the directory's, exit 1, and no
	// count of failed files, as none failed.
	mapFile := filepath.Join(t.TempDir(), "m.json.gz")
	if code, _, stderr := run(t, "build", "-o", mapFile, fixture); code != exitOK {
		t.Fatalf("build: exit %d %s", code, stderr)
	}
	code, stdout, stderr := run(t, "validate", mapFile, empty)
	if code != exitFailure || stdout != mapFile+": ok\n" || strings.Contains(stderr, "failed") || !strings.Contains(stderr, empty+": no map file") {
		t.Errorf("validate of a map and an empty directory: exit %d, %q %q", code, stdout, stderr)
	}
}

func TestBuildFlags(t *testing.T) {
	for _, args := range [][]string{
		{"build"},
		{"build", "--path-mode", "secret", fixture},
		{"build", "--agent", "aider", fixture},
	} {
		if code, _, _ := run(t, args...); code != exitUsage {
			t.Errorf("%v: exit %d, want %d", args, code, exitUsage)
		}
	}
	if code, _, stderr := run(t, "build", "--session", "no-such-session", "-o", t.TempDir(), fixture); code != exitFailure || !strings.Contains(stderr, "no-such-session") {
		t.Errorf("unknown --session: exit %d, %q", code, stderr)
	}
	// Hashed mode creates its key on first use, 0600, in a directory that
	// is there: a typo in its path makes no directory.
	key := filepath.Join(t.TempDir(), "keys", "hash.key")
	if code, _, stderr := run(t, "build", "--path-mode", "hashed", "--hash-key-file", key, "-o", "-", fixture); code != exitFailure || !strings.Contains(stderr, "does not exist (create it first)") {
		t.Errorf("hashed with a key in a missing directory: exit %d: %s", code, stderr)
	}
	os.Mkdir(filepath.Dir(key), 0o700)
	code, stdout, stderr := run(t, "build", "--path-mode", "hashed", "--hash-key-file", key, "-o", "-", fixture)
	if code != exitOK {
		t.Fatalf("hashed: exit %d: %s", code, stderr)
	}
	if fi, err := os.Stat(key); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("key file: %v %v", fi, err)
	}
	if !strings.Contains(stdout, `"pathMode": "hashed"`) {
		t.Errorf("map is not in hashed mode")
	}
	if strings.Contains(stderr, "needs a key") {
		t.Errorf("hashed with a key warned: %q", stderr)
	}
	// Without a key the map says dirs_only, and so does the command.
	code, stdout, stderr = run(t, "build", "--path-mode", "hashed", "-o", "-", fixture)
	if code != exitOK || !strings.Contains(stdout, `"pathMode": "dirs_only"`) || !strings.Contains(stderr, "--path-mode hashed needs a key") {
		t.Errorf("hashed without a key: exit %d, stderr %q, dirs_only in the map: %v", code, stderr, strings.Contains(stdout, `"pathMode": "dirs_only"`))
	}
	if code, stdout, _ := run(t, "version"); code != exitOK || !strings.HasPrefix(stdout, "agentmap ") {
		t.Errorf("version: %d %q", code, stdout)
	}
}

// build --config takes the map options of the file (as the daemon does),
// and flags given on the command line override it.
func TestBuildConfigOptions(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.toml")
	key := filepath.Join(dir, "hash.key")
	body := "version = 1\n[maps]\npath_mode = \"hashed\"\nhash_key_file = \"" + filepath.ToSlash(key) + "\"\n" +
		"[prices.\"claude-\"]\ninput = 1000.0\ncache_write = 0.0\ncache_read = 0.0\noutput = 0.0\n"
	if err := os.WriteFile(cfg, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := run(t, "build", "--config", cfg, "-o", "-", fixture)
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, `"pathMode": "hashed"`) {
		t.Errorf("config's path mode not applied")
	}
	if _, err := os.Stat(key); err != nil {
		t.Errorf("config's hash key not created: %v", err)
	}
	var withPrices, plain struct {
		Totals struct {
			CostUSD float64 `json:"costUsd"`
		} `json:"totals"`
	}
	json.Unmarshal([]byte(stdout), &withPrices)
	_, out2, _ := run(t, "build", "-o", "-", fixture)
	json.Unmarshal([]byte(out2), &plain)
	if withPrices.Totals.CostUSD <= plain.Totals.CostUSD {
		t.Errorf("config's prices not applied: cost %v with them, %v without", withPrices.Totals.CostUSD, plain.Totals.CostUSD)
	}
	code, stdout, _ = run(t, "build", "--config", cfg, "--path-mode", "dirs_only", "-o", "-", fixture)
	if code != exitOK || !strings.Contains(stdout, `"pathMode": "dirs_only"`) {
		t.Errorf("--path-mode does not override the config")
	}
	bad := filepath.Join(dir, "bad.toml")
	os.WriteFile(bad, []byte("version = 1\n[maps]\npath_mode = \"sideways\"\n"), 0o600)
	if code, _, stderr := run(t, "build", "--config", bad, "-o", "-", fixture); code != exitFailure || !strings.Contains(stderr, "maps.path_mode") {
		t.Errorf("bad config: exit %d, %q", code, stderr)
	}
}

// A log copied under another file name lists under its map's own session
// id (the one inside the log), so `show` finds what `list` prints.
func TestListShowsTheMapsSessionID(t *testing.T) {
	home := t.TempDir()
	proj := filepath.Join(home, "projects", "-w-api")
	os.MkdirAll(proj, 0o700)
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(proj, "copied-log.jsonl"), data, 0o600)
	dataDir := filepath.Join(home, "data")
	if code, _, stderr := run(t, "scan", "--data-dir", dataDir, "--root", "claude="+home); code != exitOK {
		t.Fatalf("scan: exit %d: %s", code, stderr)
	}
	code, stdout, stderr := run(t, "list", "--json", "--data-dir", dataDir)
	if code != exitOK {
		t.Fatalf("list: exit %d: %s", code, stderr)
	}
	var entries []struct{ ID string }
	if err := json.Unmarshal([]byte(stdout), &entries); err != nil || len(entries) != 1 {
		t.Fatalf("list --json: %v %q", err, stdout)
	}
	_, built, _ := run(t, "build", "-o", "-", fixture)
	var m struct {
		Session struct{ ID string } `json:"session"`
	}
	json.Unmarshal([]byte(built), &m)
	if want := strings.TrimPrefix(m.Session.ID, "local:claude-code:"); entries[0].ID != want || want == "" {
		t.Fatalf("list id %q, map's session %q", entries[0].ID, want)
	}
	if code, _, stderr := run(t, "show", "--data-dir", dataDir, entries[0].ID[:8]); code != exitOK {
		t.Fatalf("show by prefix: exit %d: %s", code, stderr)
	}
}

// build --config keeps out the logs the config's privacy.exclude covers,
// each judged alone by the directory its first records name, as the daemon
// judges them: a session whose main log is covered keeps the subagent logs
// that are not (the map is the one of those logs given alone), and a
// session all of whose logs are covered has no map.
func TestBuildConfigExclude(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "claude")
	logs := filepath.Join(root, "projects", "-w-app")
	const sub = "0a1b2c3d-0000-4000-8000-000000000002"
	copyWith := func(from, to, oldCWD, newCWD string) {
		t.Helper()
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if oldCWD != "" {
			if !bytes.Contains(b, []byte(oldCWD)) {
				t.Fatalf("%s names no %s", from, oldCWD)
			}
			b = bytes.ReplaceAll(b, []byte(oldCWD), []byte(newCWD))
		}
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	copyWith("../../testdata/claude/basic.jsonl", filepath.Join(logs, "0a1b2c3d-0000-4000-8000-000000000001.jsonl"), `"cwd":"/home/dev/proj"`, `"cwd":"/secret/b"`)
	copyWith("../../testdata/claude/subagents.jsonl", filepath.Join(logs, sub+".jsonl"), `"cwd":"C:\\Users\\dev\\proj"`, `"cwd":"/secret/s"`)
	var subagents []string
	for _, name := range []string{"agent-a1b2c3d4e5f6a7b8c.jsonl", "agent-acompact-1a2b3c.jsonl"} {
		to := filepath.Join(logs, sub, "subagents", name)
		copyWith(filepath.Join("../../testdata/claude", sub, "subagents", name), to, "", "")
		subagents = append(subagents, to)
	}
	cfg := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfg, []byte("version = 1\n[privacy]\nexclude = [\"/secret/**\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, given := range [][]string{{logs}, {filepath.Join(logs, sub+".jsonl"), filepath.Join(logs, "0a1b2c3d-0000-4000-8000-000000000001.jsonl")}} {
		out := filepath.Join(dir, "out") + string(filepath.Separator)
		os.RemoveAll(out)
		code, _, stderr := run(t, append([]string{"build", "--config", cfg, "-o", out}, given...)...)
		if code != exitOK || !strings.Contains(stderr, "2 logs kept out by the config's privacy.exclude") {
			t.Fatalf("build %v: exit %d, %s", given, code, stderr)
		}
		got, err := os.ReadFile(filepath.Join(out, sub+".json.gz"))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(filepath.Join(out, "0a1b2c3d-0000-4000-8000-000000000001.json.gz")); err == nil {
			t.Fatalf("build %v: a map of the session all of whose logs are covered", given)
		}
		alone := filepath.Join(dir, "alone.json.gz")
		if code, _, stderr := run(t, append([]string{"build", "-o", alone}, subagents...)...); code != exitOK {
			t.Fatalf("subagent logs alone: exit %d, %s", code, stderr)
		}
		want, _ := os.ReadFile(alone)
		if !bytes.Equal(got, want) {
			t.Fatalf("build %v: the map of the session whose main log is covered is not that of its subagent logs alone", given)
		}
	}
	// The map of a scan with the same config is the same.
	privateHome(t) // the scan sees no agent's logs but those here
	data := filepath.Join(dir, "data")
	if code, _, stderr := run(t, "scan", "--config", cfg, "--data-dir", data, "--root", "claude="+root); code != exitOK {
		t.Fatalf("scan: exit %d, %s", code, stderr)
	}
	var scanned []string
	filepath.WalkDir(data, func(p string, e os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".json.gz") {
			scanned = append(scanned, p)
		}
		return err
	})
	if len(scanned) != 1 || filepath.Base(scanned[0]) != sub+".json.gz" {
		t.Fatalf("scan with the config wrote %v, want the map of %s alone", scanned, sub)
	}
	if got, want := mapContentHash(t, scanned[0]), mapContentHash(t, filepath.Join(dir, "out", sub+".json.gz")); got != want {
		t.Fatalf("scan's map %s, build's %s", got, want)
	}
	// Without the config, all is built.
	out := filepath.Join(dir, "all") + string(filepath.Separator)
	if code, _, stderr := run(t, "build", "-o", out, logs); code != exitOK || strings.Contains(stderr, "kept out") {
		t.Fatalf("build without the config: exit %d, %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "0a1b2c3d-0000-4000-8000-000000000001.json.gz")); err != nil {
		t.Fatal(err)
	}
}
